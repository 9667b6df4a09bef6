"""The model test of a relevance source (DEVELOPING's checklist "A new relevance source"): every source in `SOURCES`
answers the contract (`block`, `rows`, `columns`, `grades_at`, `grade_counts`) exactly as its grades held dense do,
narrowed anywhere (`columns(a, b)` with a > 0 included), and gives bit for bit the reports of its dense grades in
every engine, tie mode, bound, removed item, and on Dask (codes and embeddings, the gallery in shards: a shard that
starts past item 0 reads `columns(a, b)` with a > 0). A new source adds one entry to `SOURCES`.

Issue 21: the scipy.sparse source was added that way. Issue 42: a deliberate offset bug in `columns(a, b)` with
a > 0 passed the earlier version of this file; the contract test and the sharded embeddings now catch it."""
import numpy as np
import pytest
import scipy.sparse as sp

from retrieval_lit import evaluate
from retrieval_lit.relevance import (GradeMatrix, LabelRelevance, SparseGrades, make_ignore, make_relevance,
                                     relevance_from_sparse)
from retrieval_lit.validate import RetrievalInputError

METRICS = ["map", "map@7", "p@5", "ndcg@10", "ndcg", "rprec", "mrr", "mlgap@1", "egr@6", "recall@4", "p@r1"]


def case(seed, n_q=9, n_g=40, bits=6, density=0.2, max_grade=3):
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 2, (n_q, bits))
    g = rng.integers(0, 2, (n_g, bits))
    grades = (rng.random((n_q, n_g)) < density) * rng.integers(1, max_grade + 1, (n_q, n_g))
    return q, g, grades


# ---- the sources: name -> make(seed, n_q, n_g) -> (evaluate's keywords for it, its grades held dense (Q, N) uint8)
def _class_ids(seed, n_q, n_g):
    rng = np.random.default_rng(seed)
    ql, gl = rng.integers(0, 4, n_q), rng.integers(0, 4, n_g)
    return dict(query_labels=ql, gallery_labels=gl), (ql[:, None] == gl[None, :]).astype(np.uint8)


def _multi_hot(seed, n_q, n_g):
    rng = np.random.default_rng(seed)
    ql, gl = rng.integers(0, 2, (n_q, 3)), rng.integers(0, 2, (n_g, 3))
    return dict(query_labels=ql, gallery_labels=gl), (ql @ gl.T).astype(np.uint8)


def _matrix(seed, n_q, n_g):
    grades = case(seed, n_q, n_g)[2].astype(np.uint8)
    return dict(relevance=grades), grades


def _sparse(seed, n_q, n_g):
    grades = case(seed, n_q, n_g)[2].astype(np.uint8)
    return dict(relevance=sp.csr_array(grades)), grades


def _relation_types(seed, n_q, n_g):
    types = np.random.default_rng(seed).integers(1, 4, (n_q, n_g))
    return dict(relation_types=types), np.select([types == 1, types == 2], [2, 1], 0).astype(np.uint8)


SOURCES = {"class ids": _class_ids, "multi-hot": _multi_hot, "matrix": _matrix, "sparse": _sparse,
           "relation types": _relation_types}


def source(name, seed=0, n_q=9, n_g=40):
    "(the Relevance, evaluate's keywords, the dense grades) of a source."
    kw, dense = SOURCES[name](seed, n_q, n_g)
    return make_relevance(n_q, n_g, **kw), kw, dense


def same_report(a, b):
    assert a.means.keys() == b.means.keys()
    for name in a.per_query:
        assert np.array_equal(a.per_query[name], b.per_query[name], equal_nan=True), name
        assert a.bounds.get(name) == b.bounds.get(name), name
        for x, y in zip(a.per_query_bounds.get(name, ()), b.per_query_bounds.get(name, ())):
            assert np.array_equal(x, y, equal_nan=True), name


def test_every_kind_of_source_is_modelled():
    "Each Relevance class of chapter 02 has a source here (a new class without one fails this)."
    import retrieval_lit.relevance as relevance
    classes = {c for c in vars(relevance).values() if isinstance(c, type) and issubclass(c, relevance.Relevance)
               and c is not relevance.Relevance}
    modelled = {type(source(name)[0]) for name in SOURCES}
    assert classes <= modelled, classes - modelled
    assert {LabelRelevance, GradeMatrix, SparseGrades} <= modelled


@pytest.mark.parametrize("name", list(SOURCES))
def test_the_contract_narrowed_anywhere(name):
    """`block`, `grades_at`, `grade_counts`, `rows` and `columns` equal the dense grades sliced the same way, for
    every narrowing: columns(a, b) with a > 0, rows then columns, columns then rows, and items within a shard."""
    rel, _, dense = source(name, seed=3, n_q=7, n_g=23)
    assert rel.max_grade >= dense.max()
    assert np.array_equal(rel.block(0, 7), dense) and rel.block(0, 7).dtype == np.uint8
    assert np.array_equal(rel.block(2, 6, (5, 17)), dense[2:6, 5:17])
    cols = np.random.default_rng(1).integers(0, 23, (4, 6))
    assert np.array_equal(rel.grades_at(1, 5, cols), np.take_along_axis(dense[1:5], cols, axis=1))
    counts = lambda g: np.stack([np.bincount(r, minlength=rel.max_grade + 1) for r in g])
    assert np.array_equal(rel.grade_counts(1, 6), counts(dense[1:6]))
    for a, b in ((0, 23), (0, 9), (9, 23), (4, 5), (22, 23)):
        shard = rel.columns(a, b)
        assert (shard.n_queries, shard.n_gallery) == (7, b - a)
        assert np.array_equal(shard.block(0, 7), dense[:, a:b]), (a, b)
        assert np.array_equal(shard.block(1, 4), dense[1:4, a:b]), (a, b)
        assert np.array_equal(shard.grade_counts(0, 7), counts(dense[:, a:b])), (a, b)
        if b - a > 2:
            assert np.array_equal(shard.block(0, 7, (1, b - a - 1)), dense[:, a + 1:b - 1]), (a, b)
            c = np.minimum(cols[:, :3], b - a - 1)
            assert np.array_equal(shard.grades_at(2, 6, c), np.take_along_axis(dense[2:6, a:b], c, axis=1)), (a, b)
        assert np.array_equal(shard.rows(2, 5).block(0, 3), dense[2:5, a:b]), (a, b)
        assert np.array_equal(rel.rows(2, 5).columns(a, b).block(0, 3), dense[2:5, a:b]), (a, b)
        if not rel.per_pair:
            q, g = shard.labels()
            assert len(g) == b - a and len(q) == 7
    ig = make_ignore(7, 23, [[0, 5, 9], [], [22], [10, 11, 12], [], [3], [15, 21]])
    for a, b in ((0, 23), (9, 23), (4, 12)):
        assert np.array_equal(ig.columns(a, b).mask(), ig.mask()[:, a:b]), (a, b)


@pytest.mark.parametrize("name", list(SOURCES))
@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_codes_every_engine_and_tie_mode(name, engine):
    q, g, _ = case(1)
    _, kw, dense = source(name, seed=1)
    for ties in ("expected", "optimistic", "pessimistic", "index"):
        common = dict(metrics=METRICS, ties=ties, engine=engine, bounds=True, self_index=np.arange(9) * 3,
                      ignore=[[0, 5], [], [7], [], [], [1, 2, 3], [], [], [39]])
        same_report(evaluate(q, g, relevance=dense, **common), evaluate(q, g, **kw, **common))


@pytest.mark.parametrize("name", list(SOURCES))
def test_scores_and_embeddings(name):
    rng = np.random.default_rng(2)
    _, kw, dense = source(name, seed=2)
    scores = rng.integers(0, 5, dense.shape).astype(float)          # many ties
    common = dict(metrics=["map", "map@5", "ndcg@5", "p@3", "map@r"], bounds=True, ties="expected",
                  ignore=rng.random(dense.shape) < 0.1)
    same_report(evaluate(scores=scores, relevance=dense, **common), evaluate(scores=scores, **kw, **common))
    qe, ge = rng.integers(-2, 3, (9, 4)).astype(float), rng.integers(-2, 3, (40, 4)).astype(float)
    common.update(similarity="dot", metrics=["map", "map@9", "ndcg@10", "p@5"])
    same_report(evaluate(query_embeddings=qe, gallery_embeddings=ge, relevance=dense, **common),
                evaluate(query_embeddings=qe, gallery_embeddings=ge, **kw, **common))


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.mark.parametrize("name", list(SOURCES))
def test_dask_codes_and_embeddings_equal_dense(client, name):
    """On a cluster of two workers the gallery goes in two shards: the second reads `columns(a, b)` with a > 0 (the
    embeddings' shards hold their columns of the relevance and of the removed items)."""
    q, g, _ = case(3, n_q=12, n_g=60)
    _, kw, dense = source(name, seed=3, n_q=12, n_g=60)
    rng = np.random.default_rng(3)
    qe, ge = rng.integers(-2, 3, (12, 4)).astype(float), rng.integers(-2, 3, (60, 4)).astype(float)
    ignore = rng.random((12, 60)) < 0.1
    for ties in ("expected", "index"):
        common = dict(metrics=["map", "map@9", "ndcg@10", "p@5"], ties=ties, bounds=True)
        alone = evaluate(q, g, relevance=dense, metrics=common["metrics"] + ["mlgap@1"], ties=ties, bounds=True)
        same_report(alone, evaluate(q, g, **kw, client=client, metrics=common["metrics"] + ["mlgap@1"], ties=ties,
                                    bounds=True))
        emb = dict(query_embeddings=qe, gallery_embeddings=ge, similarity="dot", ignore=ignore, **common)
        same_report(evaluate(relevance=dense, **emb), evaluate(**kw, client=client, **emb))


@pytest.mark.parametrize("bad, message", [
    (sp.csr_array(np.array([[0.5, 0.0]])), "must hold whole numbers"),
    (sp.csr_array(np.array([[256, 0]])), "must hold whole numbers from 0 to 255"),
    (sp.csr_array(np.array([[-1, 0]])), "must hold whole numbers from 0"),
    (sp.csr_array(np.array([[1, 0, 0]])), "must have shape (1, 2)"),
])
def test_bad_sparse_grades(bad, message):
    with pytest.raises(RetrievalInputError, match=r"`relevance`"):
        relevance_from_sparse(bad, 1, 2)
    with pytest.raises(RetrievalInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        relevance_from_sparse(bad, 1, 2)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_array, sp.coo_array])
def test_any_sparse_format(fmt):
    _, _, grades = case(2)
    rel = make_relevance(*grades.shape, relevance=fmt(grades))
    assert isinstance(rel, SparseGrades) and rel.per_pair and rel.matrix.nnz == np.count_nonzero(grades)
    assert np.array_equal(rel.block(2, 5, (3, 17)), grades[2:5, 3:17])


def test_caller_matrix_untouched():
    _, _, grades = case(4)
    m = sp.csr_array(grades)
    before = (m.data.copy(), m.indices.copy(), m.indptr.copy())
    relevance_from_sparse(m, *grades.shape)
    assert all(np.array_equal(x, y) for x, y in zip(before, (m.data, m.indices, m.indptr)))
