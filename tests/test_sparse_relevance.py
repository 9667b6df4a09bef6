"""A scipy.sparse grade matrix is a relevance source like any other: every engine, tie mode, bound, junk set and the
Dask run give bit for bit the report of the same grades held dense (issue 21: a new source touches one chapter)."""
import numpy as np
import pytest
import scipy.sparse as sp

from retrieval_lit import evaluate
from retrieval_lit.relevance import GradeMatrix, SparseGrades, make_relevance, relevance_from_sparse
from retrieval_lit.validate import RetrievalInputError

METRICS = ["map", "map@7", "p@5", "ndcg@10", "ndcg", "rprec", "mrr", "mlgap@1", "egr@6", "recall@4", "p@r1"]


def case(seed, n_q=9, n_g=40, bits=6, density=0.2, max_grade=3):
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 2, (n_q, bits))
    g = rng.integers(0, 2, (n_g, bits))
    grades = (rng.random((n_q, n_g)) < density) * rng.integers(1, max_grade + 1, (n_q, n_g))
    return q, g, grades


def same_report(a, b):
    assert a.means.keys() == b.means.keys()
    for name in a.per_query:
        assert np.array_equal(a.per_query[name], b.per_query[name], equal_nan=True), name
        assert a.bounds.get(name) == b.bounds.get(name), name
        for x, y in zip(a.per_query_bounds.get(name, ()), b.per_query_bounds.get(name, ())):
            assert np.array_equal(x, y, equal_nan=True), name


def test_the_sparse_source_is_sparse():
    _, _, grades = case(0)
    rel = make_relevance(*grades.shape, relevance=sp.csr_array(grades))
    assert isinstance(rel, SparseGrades) and rel.per_pair and rel.matrix.nnz == np.count_nonzero(grades)
    assert isinstance(make_relevance(*grades.shape, relevance=grades), GradeMatrix)
    assert np.array_equal(rel.block(2, 5, (3, 17)), grades[2:5, 3:17])


@pytest.mark.parametrize("engine", ["numpy", "numba"])
@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic", "index"])
def test_codes_every_engine_and_tie_mode(engine, ties):
    q, g, grades = case(1)
    kw = dict(metrics=METRICS, ties=ties, engine=engine, bounds=True, self_index=np.arange(9) * 3,
              ignore=[[0, 5], [], [7], [], [], [1, 2, 3], [], [], [39]])
    dense = evaluate(q, g, relevance=grades, **kw)
    sparse = evaluate(q, g, relevance=sp.csr_array(grades), **kw)
    same_report(dense, sparse)


@pytest.mark.parametrize("fmt", [sp.csr_matrix, sp.csc_array, sp.coo_array])
def test_scores_and_any_sparse_format(fmt):
    rng = np.random.default_rng(2)
    _, _, grades = case(2)
    scores = rng.integers(0, 5, grades.shape).astype(float)          # many ties
    kw = dict(metrics=["map", "map@5", "ndcg@5", "p@3", "map@r"], bounds=True, ties="expected")
    same_report(evaluate(scores=scores, relevance=grades, **kw), evaluate(scores=scores, relevance=fmt(grades), **kw))


def test_dask_run_equals_dense():
    distributed = pytest.importorskip("distributed")
    q, g, grades = case(3, n_q=12, n_g=60)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        for ties in ("expected", "index"):
            kw = dict(metrics=["map", "map@9", "ndcg@10", "p@5", "mlgap@1"], ties=ties, bounds=True)
            dense = evaluate(q, g, relevance=grades, **kw)
            same_report(dense, evaluate(q, g, relevance=sp.csr_array(grades), client=client, **kw))
            same_report(dense, evaluate(q, g, relevance=grades, client=client, **kw))
    finally:
        client.close()
        cluster.close()


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


def test_caller_matrix_untouched():
    _, _, grades = case(4)
    m = sp.csr_array(grades)
    before = (m.data.copy(), m.indices.copy(), m.indptr.copy())
    relevance_from_sparse(m, *grades.shape)
    assert all(np.array_equal(x, y) for x, y in zip(before, (m.data, m.indices, m.indptr)))
