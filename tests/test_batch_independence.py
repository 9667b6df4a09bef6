"""A query's value does not depend on which other queries share its block, nor on the block size: bit for bit.

Under ties="expected" the cut-group terms of map@p pad the hypergeometric weights to the widest row of the block,
and numpy's pairwise `sum` regroups additions with the width; graded DCG went through BLAS products. Both now add
left to right (`ranking.row_sums`). Checked with `==` on the digits, graded relevance, every engine and tie mode."""
import numpy as np
import pytest

from retrieval_lit import evaluate
from retrieval_lit.data import load_digits_codes
from metric_names import names

NAMES = sorted(set(names(10) + names(100) + ["egr@12", "mlgap@2", "p@r2", "err@10", "err@100"])
               - {"mlgap@10", "mlgap@100", "p@r10", "p@r100"})   # radii up to the 8 bits; err until FAMILIES has it


@pytest.fixture(scope="module")
def digits():
    d = load_digits_codes(8)
    rng = np.random.default_rng(0)
    same = d.query_labels[:, None] == d.gallery_labels[None, :]
    grades = (same * rng.integers(1, 4, same.shape)).astype(np.uint8)
    return d, grades


@pytest.mark.parametrize("engine", ["numpy", "numba"])
@pytest.mark.parametrize("ties", ["expected", "index"])
def test_one_query_alone_equals_it_in_any_batch(digits, engine, ties):
    d, grades = digits
    run = lambda qs, **kw: evaluate(d.query_codes[qs], d.gallery_codes, metrics=NAMES, relevance=grades[qs],
                                    ties=ties, engine=engine, bounds=True, max_grade=3, **kw)   # grades 0..3 declared:
                                    # a query alone may lack grade 3, and ERR reads the scale (issue 36)
    full = run(slice(None))
    for kw in ({"max_block_bytes": 1}, {"max_block_bytes": 5000}):
        part = run(slice(None), **kw)
        for n in NAMES:
            assert np.array_equal(full.per_query[n], part.per_query[n], equal_nan=True), (n, kw)
            if n in full.per_query_bounds:
                for a, b in zip(full.per_query_bounds[n], part.per_query_bounds[n]):
                    assert np.array_equal(a, b, equal_nan=True), (n, kw)
    for qi in (0, 17, 101):
        one = run(slice(qi, qi + 1))
        for n in NAMES:
            assert np.array_equal(full.per_query[n][qi:qi + 1], one.per_query[n], equal_nan=True), (n, qi)


@pytest.mark.parametrize("ties", ["expected", "index"])
def test_values_do_not_depend_on_the_cpus(monkeypatch, ties):
    """The summary's blocks and the finishing's runs of queries go to the usable CPUs (threads side by side); one CPU
    or two, the per-query values and bounds are the same bits (embeddings: the compiled whole ranking, its buffers,
    the candidates through a cutoff, and the compiled expected AP)."""
    import retrieval_lit.evaluation as ev
    import retrieval_lit.score_ranking as sr
    rng = np.random.default_rng(5)
    q, g = rng.normal(size=(40, 6)), rng.normal(size=(3000, 6))
    ql, gl = rng.integers(0, 4, 40), rng.integers(0, 4, 3000)
    run = lambda metrics: evaluate(query_embeddings=q, gallery_embeddings=g, query_labels=ql, gallery_labels=gl,
                                   metrics=metrics, ties=ties, bounds=True, max_block_bytes=200_000, progress=False)
    for metrics in (["map", "map@50", "ndcg@20", "p@10"], ["map@50", "ndcg@20", "p@10"]):   # whole; a cutoff only
        reports = []
        for cpus in (1, 2, 3):
            monkeypatch.setattr(ev, "usable_cpus", lambda c=cpus: c)
            monkeypatch.setattr(sr, "usable_cpus", lambda c=cpus: c)
            reports.append(run(metrics))
        for r in reports[1:]:
            for n, v in reports[0].per_query.items():
                assert np.array_equal(v, r.per_query[n], equal_nan=True), n
            for n, (lo, hi) in reports[0].per_query_bounds.items():
                assert np.array_equal(lo, r.per_query_bounds[n][0]) and np.array_equal(hi, r.per_query_bounds[n][1]), n


@pytest.mark.parametrize("ties", ["expected", "index"])
def test_a_declared_grade_scale_keeps_err_of_a_query_lacking_the_top_grade(ties):
    """Issue 36: query 0 holds grades 1 only; beside a query holding grade 3 the inferred scale is 0..3 (its ERR@4 is
    1/8 + (7/8)(1/8)/3 = 0.161), alone 0..1 (1/2 + (1/2)(1/2)/3 = 0.583). With max_grade=3 declared it is 0.161 in
    both batches, bit for bit, on scores and on Hamming codes."""
    grades = np.array([[1, 0, 1, 0], [3, 0, 1, 2]])
    scores = np.array([[4.0, 3.0, 2.0, 1.0]] * 2)
    qc, gc = [[0, 0], [0, 0]], [[0, 0], [0, 1], [1, 1], [1, 1]]     # distances 0, 1, 2, 2: a tie at the end
    for source in (dict(scores=scores), dict(query_codes=qc, gallery_codes=gc)):
        def err4(n, **kw):
            src = {k: np.asarray(v)[:n] if k in ("scores", "query_codes") else v for k, v in source.items()}
            return evaluate(**src, relevance=grades[:n], metrics="err@4", ties=ties, **kw).per_query["err@4"][0]
        assert err4(2) != err4(1)                                      # inferred: the scale follows the batch
        assert err4(2, max_grade=3) == err4(1, max_grade=3)
    alone = evaluate(scores=scores[:1], relevance=grades[:1], metrics="err@4", ties=ties, max_grade=3)
    assert alone["err@4"] == pytest.approx(1 / 8 + (7 / 8) * (1 / 8) / 3, rel=1e-15)


@pytest.mark.parametrize("ties", ["expected", "index"])
def test_a_query_has_the_same_bits_whichever_method_its_batch_took(ties):
    """evaluate summarises a ranking by chapter 09's numpy counts up to SMALL_PAIRS (query, item) pairs and by chapter
    58's compiled kernels above (issue 41): the same queries, alone (numpy) or among enough others (compiled), give
    the same per-query bits, the index-order sums included (both add them alike)."""
    from retrieval_lit.score_ranking import SMALL_PAIRS, summary_method
    rng = np.random.default_rng(41)
    q, g = rng.integers(-3, 4, (900, 8)).astype(float), rng.integers(-3, 4, (5000, 8)).astype(float)
    ql, gl = rng.integers(0, 7, 900), rng.integers(0, 7, 5000)       # whole-number dot products: many ties
    assert summary_method(900, 5000) == "compiled" and summary_method(30, 5000) == "counts" and 900 * 5000 > SMALL_PAIRS
    names = ["map", "map@100", "ndcg", "ndcg@10", "rprec", "p@10", "mrr", "recall@50"]
    run = lambda n: evaluate(query_embeddings=q[:n], gallery_embeddings=g, query_labels=ql[:n], gallery_labels=gl,
                             metrics=names, ties=ties, bounds=True, similarity="dot", progress=False)
    large, small = run(900), run(30)
    for n in names:
        assert np.array_equal(large.per_query[n][:30], small.per_query[n], equal_nan=True), n
        for a, b in zip(large.per_query_bounds.get(n, ()), small.per_query_bounds.get(n, ())):
            assert np.array_equal(a[:30], b, equal_nan=True), n
