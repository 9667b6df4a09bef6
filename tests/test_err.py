"""ERR@k (chapter 15) and the declared grade scale (issue 36, chapter 02's max_grade=).

Every value is checked against an independent computation: Chapelle et al.'s Algorithm 1 written as a plain loop over
each order of the tied items (retrieval_lit.testing.tie_orders), with the query's ranking rebuilt here from its scores or
Hamming distances."""
import numpy as np
import pytest
import scipy.sparse as sp

from retrieval_lit import evaluate
from retrieval_lit.err import err, err_at, satisfaction
from retrieval_lit.metrics import Conventions, parse_metric
from retrieval_lit.ranking import summarize
from retrieval_lit.score_ranking import summarize_scores
from retrieval_lit.relevance import relevance_from_labels, relevance_from_matrix, relevance_from_sparse
from retrieval_lit.testing import tie_orders
from retrieval_lit.validate import RetrievalInputError


def paper_err(grades, g_max, k):
    "Algorithm 1 of Chapelle, Metzler, Zhang and Grinspan (CIKM 2009), cut at rank k."
    p, total = 1.0, 0.0
    for rank, g in enumerate(list(grades)[:k], start=1):
        r = (2 ** int(g) - 1) / 2 ** g_max
        total += p * r / rank
        p *= 1 - r
    return total


def ranked_groups(keys, grades, nearer_first):
    "A query's grades in tie groups (equal keys), best first: (grades in stable order, group sizes)."
    order = np.argsort(keys if nearer_first else -np.asarray(keys), kind="stable")
    k = np.asarray(keys)[order]
    sizes = np.diff(np.flatnonzero(np.r_[True, k[1:] != k[:-1], True]))
    return np.asarray(grades)[order].tolist(), sizes.tolist()


def by_orders(grades, sizes, g_max, k):
    values = [paper_err(o, g_max, k) for o in tie_orders(grades, sizes)]
    return np.mean(values), min(values), max(values)


@pytest.mark.parametrize("seed", range(6))
def test_scores_every_tie_mode_against_every_order(seed):
    rng = np.random.default_rng(seed)
    q, n = 4, 7
    scores = rng.integers(0, 3, (q, n)).astype(float)              # many ties
    grades = rng.integers(0, 4, (q, n)) * (rng.random((q, n)) < 0.5)
    g_max = 4                                                      # declared above every grade present
    for k in (1, 3, 7, 9):
        r = evaluate(scores=scores, relevance=grades, metrics=f"err@{k}", bounds=True, max_grade=g_max)
        idx = evaluate(scores=scores, relevance=grades, metrics=f"err@{k}", ties="index", max_grade=g_max)
        for i in range(q):
            g, sizes = ranked_groups(scores[i], grades[i], nearer_first=False)
            mean, low, high = by_orders(g, sizes, g_max, k)
            assert r.per_query[f"err@{k}"][i] == pytest.approx(mean, rel=1e-12, abs=1e-15)
            assert r.per_query_bounds[f"err@{k}"][0][i] == pytest.approx(low, rel=1e-12, abs=1e-15)
            assert r.per_query_bounds[f"err@{k}"][1][i] == pytest.approx(high, rel=1e-12, abs=1e-15)
            assert idx.per_query[f"err@{k}"][i] == pytest.approx(paper_err(g, g_max, k), rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("engine", ["numpy", "numba"])
def test_hamming_codes_against_every_order_and_engines_agree(engine):
    rng = np.random.default_rng(33)
    qc, gc = rng.integers(0, 2, (5, 3)), rng.integers(0, 2, (8, 3))   # 3 bits: distances 0..3, big ties
    grades = rng.integers(0, 3, (5, 8))
    r = evaluate(qc, gc, relevance=grades, metrics=["err@5", "err@8"], engine=engine, bounds=True, max_grade=3)
    dist = (qc[:, None, :] != gc[None, :, :]).sum(axis=2)
    for i in range(5):
        g, sizes = ranked_groups(dist[i], grades[i], nearer_first=True)
        for k in (5, 8):
            mean, low, high = by_orders(g, sizes, 3, k)
            assert r.per_query[f"err@{k}"][i] == pytest.approx(mean, rel=1e-12, abs=1e-15)
            assert r.per_query_bounds[f"err@{k}"][0][i] == pytest.approx(low, rel=1e-12, abs=1e-15)
            assert r.per_query_bounds[f"err@{k}"][1][i] == pytest.approx(high, rel=1e-12, abs=1e-15)
    other = evaluate(qc, gc, relevance=grades, metrics=["err@5", "err@8"], engine="numpy", bounds=True, max_grade=3)
    for name in ("err@5", "err@8"):
        assert np.array_equal(r.per_query[name], other.per_query[name])


def test_a_large_tie_group_is_exact_and_finite():
    # one group of 2,000 items, 30 of each relevant grade: the mean over orders from the symmetric means stays in
    # [low, high], and equals the mean of many random orders within their sampling error
    rng = np.random.default_rng(7)
    grades = np.zeros(2000, dtype=int)
    grades[:30], grades[30:60], grades[60:90] = 1, 2, 3
    s = summarize_scores(np.zeros((1, 2000)), relevance_from_matrix(grades[None, :], 1, 2000))
    exp = err_at(s, 50, Conventions.make(ties="expected"))[0]
    low = err_at(s, 50, Conventions.make(ties="pessimistic"))[0]
    high = err_at(s, 50, Conventions.make(ties="optimistic"))[0]
    samples = [paper_err(rng.permutation(grades), 3, 50) for _ in range(4000)]
    assert low <= exp <= high and np.isfinite(exp)
    assert abs(exp - np.mean(samples)) < 5 * np.std(samples) / np.sqrt(len(samples))


def test_the_papers_hand_example_and_the_scale():
    # R = 7/8, 3/8, 0, 1/8 on the scale 0..3
    assert err([3, 2, 0, 1], 4, max_grade=3) == 7 / 8 + (1 / 8) * (3 / 8) / 2 + (1 / 8) * (5 / 8) * (1 / 8) / 4
    assert satisfaction(4)[0].tolist() == [(2 ** g - 1) / 16 for g in range(5)]
    assert err([0, 0, 0], 3, max_grade=3) == 0.0
    assert err([4], 1, max_grade=4) == 15 / 16


def test_the_declared_scale_sizes_the_summary():
    m = np.array([[0, 1, 0, 1]])
    codes_q, codes_g = [[0, 0]], [[0, 0], [0, 1], [1, 0], [1, 1]]
    for rel in (relevance_from_matrix(m, 1, 4, max_grade=5), relevance_from_sparse(sp.csr_array(m), 1, 4, max_grade=5)):
        assert summarize(codes_q, codes_g, rel).hist.shape[2] == 6
        assert summarize_scores(np.array([[4.0, 3, 2, 1]]), rel).hist.shape[2] == 6
    assert relevance_from_labels([1], [1, 2, 1, 2], 1, 4, max_grade=3).max_grade == 3
    assert relevance_from_matrix(m, 1, 4).max_grade == 1                     # the default: inferred, as before


def test_query_lacking_the_top_grade_is_batch_independent_when_declared():
    scores = np.array([[4.0, 3.0, 2.0, 1.0], [4.0, 3.0, 2.0, 1.0]])
    grades = np.array([[1, 0, 1, 0], [3, 0, 1, 2]])
    run = lambda n, **kw: evaluate(scores=scores[:n], relevance=grades[:n], metrics="err@4", **kw).per_query["err@4"][0]
    assert run(2) == pytest.approx(1 / 8 + (7 / 8) * (1 / 8) / 3, rel=1e-15)   # inferred 0..3 beside query 1: 0.161
    assert run(1) == pytest.approx(1 / 2 + (1 / 2) * (1 / 2) / 3, rel=1e-15)   # inferred 0..1 alone: 0.583
    assert run(1, max_grade=3) == run(2, max_grade=3) == pytest.approx(0.16145833333333334, rel=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda: parse_metric("err@0"), "the cutoff must be at least 1"),
    (lambda: parse_metric("err@" + "9" * 30), "at most 2**53"),
    (lambda: parse_metric("err"), "`metrics`"),
    (lambda: err([3, 1], 2, max_grade=2), "`max_grade` is 2, below the grade 3 the list holds"),
    (lambda: err([1, 1], 2, max_grade=2.5), "`max_grade`"),
    (lambda: err([1, 1], 2, max_grade=True), "`max_grade`"),
    (lambda: err([1, 1], 2, max_grade=256), "`max_grade` must be at most 255"),
    (lambda: err([1, -1], 2), "`grades`"),
    (lambda: err([], 2), "`grades`"),
    (lambda: err([1, 0], 0), "`k` must be at least 1"),
    (lambda: err([1, 0], 2, ties="random"), "`ties`"),
    (lambda: err([1, 0, 1], 2, tie_sizes=[2, 2]), "tie"),
    (lambda: evaluate(scores=[[1.0, 0.0]], relevance=[[2, 1]], metrics="err@2", max_grade=1), "`max_grade` is 1, below the grade 2"),
    (lambda: evaluate(scores=[[1.0, 0.0]], relevance=[[2, 1]], metrics="err@2", max_grade=0), "`max_grade` must be at least 1"),
    (lambda: evaluate(scores=[[1.0, 0.0]], relevance=[[2, 1]], metrics="err@2", max_grade="3"), "`max_grade`"),
    (lambda: evaluate([[0]], [[0], [1]], [[1, 1, 0]], [[1, 1, 0], [0, 1, 1]], "err@2", max_grade=1),
     "`max_grade` is 1, below the grade 3 that 3 multi-hot label columns can give"),
])
def test_bad_input_is_one_clear_error(call, message):
    with pytest.raises(RetrievalInputError, match=None) as e:
        call()
    assert message in str(e.value), str(e.value)


def test_callers_arrays_are_not_modified():
    grades = np.array([[2, 0, 1, 0]])
    scores = np.array([[1.0, 1.0, 0.5, 0.5]])
    g0, s0 = grades.copy(), scores.copy()
    evaluate(scores=scores, relevance=grades, metrics="err@3", max_grade=3, bounds=True)
    assert np.array_equal(grades, g0) and np.array_equal(scores, s0)
