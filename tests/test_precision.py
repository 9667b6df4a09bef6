"""P@K, recall@K, R-precision, P@d_H<=r and the PR curves (module `precision`, notebook 10).

Checked against: brute force over every order of the tied items (exact fractions), trec_eval (pytrec_eval) on
rankings whose ties are broken the same way on both sides, the foundation's `ordered_top`, and properties."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tie_orders import all_orders, tied_lists
from retrieval_lit.ranking import list_summary
from retrieval_lit.evaluation import evaluate
from retrieval_lit.metrics import Conventions, parse_metric
from retrieval_lit.precision import (hits_in_top, pr_curve_by_radius, pr_curve_by_rank, precision_at_k,
                                     precision_from_summary, precision_within_radius, r_precision,
                                     radius_precision_from_summary, radius_recall_from_summary, recall_at_k,
                                     recall_from_summary, rprec_from_summary)
from retrieval_lit.ranking import RankSummary, ordered_top, summarize
from retrieval_lit.relevance import relevance_from_labels, relevance_from_matrix
from retrieval_lit.validate import RetrievalInputError

TIES = ("expected", "optimistic", "pessimistic", "index")


# ---------------------------------------------------------------- strategies and references
def over_orders(grades, sizes, metric):
    "(mean, max, min) of an exact-fraction metric over every tie order."
    values = [metric(o) for o in all_orders(tuple(grades), sizes)]
    return sum(values, Fraction(0)) / len(values), max(values), min(values)


def hits(order, k):
    return sum(g > 0 for g in order[:k])


def as_modes(fn):
    return [fn(t) for t in ("expected", "optimistic", "pessimistic")]


# ---------------------------------------------------------------- brute force over all tie orders
@settings(max_examples=150, deadline=None)
@given(tied_lists(), st.integers(1, 10))
def test_precision_at_k_equals_brute_force_exactly(case, k):
    grades, sizes = case
    want = over_orders(grades, sizes, lambda o: Fraction(hits(o, k), k))
    got = as_modes(lambda t: precision_at_k(grades, k, sizes, ties=t))
    assert got == [float(w) for w in want]            # the correctly rounded exact value, not "close"


@settings(max_examples=150, deadline=None)
@given(tied_lists(), st.integers(1, 10))
def test_recall_at_k_equals_brute_force_exactly(case, k):
    grades, sizes = case
    total = sum(g > 0 for g in grades)
    if total == 0:
        assert as_modes(lambda t: recall_at_k(grades, k, sizes, ties=t)) == [0.0] * 3
        return
    want = over_orders(grades, sizes, lambda o: Fraction(hits(o, k), total))
    assert as_modes(lambda t: recall_at_k(grades, k, sizes, ties=t)) == [float(w) for w in want]


@settings(max_examples=150, deadline=None)
@given(tied_lists())
def test_r_precision_equals_brute_force_exactly(case):
    grades, sizes = case
    total = sum(g > 0 for g in grades)
    if total == 0:
        assert np.isnan(r_precision(grades, sizes, empty="skip"))
        return
    want = over_orders(grades, sizes, lambda o: Fraction(hits(o, total), total))
    assert as_modes(lambda t: r_precision(grades, sizes, ties=t)) == [float(w) for w in want]


@settings(max_examples=100, deadline=None)
@given(tied_lists(), st.integers(0, 5))
def test_radius_precision_is_the_same_for_every_order(case, r):
    grades, sizes = case
    inside = sum(sizes[: r + 1])
    values = {Fraction(hits(o, inside), inside) if inside else None for o in all_orders(tuple(grades), sizes)}
    assert len(values) == 1
    (value,) = values
    got = precision_within_radius(grades, r, sizes, empty="skip")
    assert np.isnan(got) if value is None else got == float(value)


# ---------------------------------------------------------------- properties
@settings(max_examples=100, deadline=None)
@given(tied_lists(max_items=30, max_grade=3))
def test_modes_are_ordered_and_recall_grows(case):
    grades, sizes = case
    n = len(grades)
    s = list_summary(grades, sizes)
    ks = np.arange(1, n + 3)
    curves = {t: pr_curve_by_rank(s, Conventions(ties=t), ks) for t in TIES}
    lo, mid, hi, idx = (curves[t].precision[0] for t in ("pessimistic", "expected", "optimistic", "index"))
    assert np.all(lo <= mid + 1e-15) and np.all(mid <= hi + 1e-15)
    assert np.all(lo <= idx) and np.all(idx <= hi)
    for t in TIES:
        rec = curves[t].recall[0]
        assert np.all(np.diff(rec) >= -1e-15)
        if any(grades):
            assert rec[n - 1] == 1.0
        assert np.all((curves[t].precision >= 0) & (curves[t].precision <= 1))


@settings(max_examples=60, deadline=None)
@given(tied_lists(max_items=25, max_grade=3), st.integers(1, 30))
def test_optimistic_and_pessimistic_agree_with_ordered_top(case, k):
    "The closed forms on the counts against counting in the foundation's optimistic/pessimistic order."
    grades, sizes = case
    s = list_summary(grades, sizes)
    for t in ("optimistic", "pessimistic"):
        top = ordered_top(s, min(k, len(grades)), t)
        assert hits_in_top(s, k, t)[0][0, 0] == int((top > 0).sum())


def test_summary_level_matches_list_level_per_query():
    rng = np.random.default_rng(3)
    q, g = rng.integers(0, 2, (25, 6)), rng.integers(0, 2, (60, 6))
    grades = rng.integers(0, 3, (25, 60)) * (rng.random((25, 60)) < 0.4)
    grades[3] = 0                                          # a query with nothing relevant
    s = summarize(q, g, relevance_from_matrix(grades, 25, 60), stable_ranks=-1)
    dist = (q[:, None, :] != g[None, :, :]).sum(-1)
    for ties in TIES:
        c = Conventions(ties=ties, empty="skip")
        p10, r7, rp = (precision_from_summary(s, 10, c), recall_from_summary(s, 7, c), rprec_from_summary(s, c))
        for i in range(25):
            order = np.argsort(dist[i], kind="stable")
            sizes = np.bincount(dist[i], minlength=7)
            lst = grades[i][order]
            assert p10[i] == precision_at_k(lst, 10, sizes, ties=ties)
            np.testing.assert_equal(r7[i], recall_at_k(lst, 7, sizes, ties=ties, empty="skip"))
            np.testing.assert_equal(rp[i], r_precision(lst, sizes, ties=ties, empty="skip"))
    for r in range(7):
        c = Conventions(empty="skip")
        got = radius_precision_from_summary(s, r, c)
        for i in range(25):
            sizes = np.bincount(dist[i], minlength=7)
            np.testing.assert_equal(got[i], precision_within_radius(grades[i][np.argsort(dist[i], kind="stable")],
                                                                     r, sizes, empty="skip"))


def test_cutoffs_beyond_the_gallery_on_many_queries():
    "K > N divides by K; rows of a multi-query summary must not see each other's counts."
    rng = np.random.default_rng(5)
    q, g = rng.integers(0, 2, (12, 4)), rng.integers(0, 2, (9, 4))
    grades = rng.integers(0, 2, (12, 9))
    s = summarize(q, g, relevance_from_matrix(grades, 12, 9), stable_ranks=-1)
    for ties in TIES:
        c = Conventions(ties=ties)
        for k in (9, 10, 25):
            np.testing.assert_array_equal(precision_from_summary(s, k, c), grades.sum(1) / k)
        curve = pr_curve_by_rank(s, c, ks=[1, 9, 50])
        np.testing.assert_array_equal(curve.precision[:, 1:], np.stack([grades.sum(1) / 9, grades.sum(1) / 50], 1))


def test_pr_curves_pass_through_the_ball_sizes():
    "At K = size of the ball of radius r, every tie mode's P@K and recall@K equal the ball's."
    rng = np.random.default_rng(8)
    q, g = rng.integers(0, 2, (20, 5)), rng.integers(0, 2, (80, 5))
    grades = rng.integers(0, 2, (20, 80))
    s = summarize(q, g, relevance_from_matrix(grades, 20, 80), stable_ranks=-1)
    radius = pr_curve_by_radius(s, Conventions(empty="skip"))
    sizes = np.cumsum(s.group_sizes, axis=1)
    for ties in TIES:
        for i in range(20):
            for r in range(6):
                if sizes[i, r] == 0:
                    assert np.isnan(radius.precision[i, r])
                    continue
                c = Conventions(ties=ties)
                k = int(sizes[i, r])
                assert precision_from_summary(s, k, c)[i] == radius.precision[i, r]
                assert recall_from_summary(s, k, c)[i] == radius.recall[i, r]
    np.testing.assert_array_equal(radius.recall, np.stack([radius_recall_from_summary(s, r, Conventions())
                                                           for r in range(6)], axis=1))


def test_curve_means_skip_nan():
    "Query 0: three items, one relevant, at distance 2 (balls of radius 0, 1 empty); query 1: grades 0, 1, 0 at 0, 1, 2."
    hist = np.array([[[0, 0], [0, 0], [2, 1]], [[1, 0], [0, 1], [1, 0]]])
    s = RankSummary(n_ranks=3, hist=hist)
    curve = pr_curve_by_radius(s, Conventions(empty="skip"))
    np.testing.assert_array_equal(curve.precision, [[np.nan, np.nan, 1 / 3], [0, 1 / 2, 1 / 3]])
    np.testing.assert_array_equal(curve.mean_precision, [0, 1 / 2, 1 / 3])
    np.testing.assert_array_equal(curve.mean_recall, [0, 1 / 2, 1])
    zero = pr_curve_by_radius(s, Conventions())
    np.testing.assert_array_equal(zero.mean_precision, [0, 1 / 4, 1 / 3])


# ---------------------------------------------------------------- trec_eval
def _trec_case(rng, n, n_groups):
    "A ranked list with ties, and a trec_eval run whose tie order (docno descending) is the list order."
    dist = np.sort(rng.integers(0, n_groups, n))
    grades = rng.integers(0, 3, n) * (rng.random(n) < 0.5)
    if not grades.any():
        grades[rng.integers(n)] = 1
    docs = [f"d{n - i:05d}" for i in range(n)]             # descending docnos = list order inside a tie
    qrel = {"q": {d: int(x) for d, x in zip(docs, grades)}}
    run = {"q": {d: float(-x) for d, x in zip(docs, dist)}}
    return grades, np.bincount(dist, minlength=n_groups), qrel, run


def test_against_trec_eval():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(2024)
    ks = (1, 3, 5, 10, 20, 50)
    measures = {"P." + ",".join(map(str, ks)), "recall." + ",".join(map(str, ks)), "Rprec"}
    for _ in range(200):
        grades, sizes, qrel, run = _trec_case(rng, int(rng.integers(1, 40)), int(rng.integers(1, 8)))
        ref = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)["q"]
        for k in ks:
            assert precision_at_k(grades, k, sizes, ties="index") == pytest.approx(ref[f"P_{k}"], abs=1e-15)
            assert recall_at_k(grades, k, sizes, ties="index") == pytest.approx(ref[f"recall_{k}"], abs=1e-15)
            # a list without ties is the same under every mode
            for t in TIES:
                assert precision_at_k(grades, k, None, ties=t) == precision_at_k(grades, k, ties="index")
        assert r_precision(grades, sizes, ties="index") == pytest.approx(ref["Rprec"], abs=1e-15)


# ---------------------------------------------------------------- registry, evaluate, bad input
def test_registered_names_through_evaluate():
    rng = np.random.default_rng(1)
    q, g = rng.integers(0, 2, (30, 8)), rng.integers(0, 2, (200, 8))
    ql, gl = rng.integers(0, 4, 30), rng.integers(0, 4, 200)
    names = ["p@10", "recall@50", "rprec", "p@r2", "p@r0"]
    for ties in TIES:
        rep = evaluate(q, g, ql, gl, metrics=names, ties=ties, empty="skip")
        s = summarize(q, g, relevance_from_labels(ql, gl, 30, 200), stable_ranks=-1)
        c = Conventions(ties=ties, empty="skip")
        want = {"p@10": precision_from_summary(s, 10, c), "recall@50": recall_from_summary(s, 50, c),
                "rprec": rprec_from_summary(s, c), "p@r2": radius_precision_from_summary(s, 2, c),
                "p@r0": radius_precision_from_summary(s, 0, c)}
        for name in names:
            np.testing.assert_array_equal(rep.per_query[name], want[name])
    assert parse_metric("P@R3").name == "p@r3"


@pytest.mark.parametrize("call, message", [
    (lambda: precision_at_k([1, 0], 0), "`k` must be at least 1"),
    (lambda: precision_at_k([1, 0], 1.5), "`k` must be a whole number"),
    (lambda: precision_at_k([1, 0], 1, ties="mean"), "`ties` must be one of"),
    (lambda: precision_at_k([[1, 0]], 1), "`grades` must be a 1-D array"),
    (lambda: precision_at_k([1, 0], 1, [3]), "`tie_sizes` adds up to 3"),
    (lambda: recall_at_k([1, 0], 1, empty="drop"), "`empty` must be one of"),
    (lambda: recall_at_k([0, 0], 1, empty="error"), "`empty` is 'error'"),
    (lambda: r_precision([0, 0], empty="error"), "no R-precision"),
    (lambda: precision_within_radius([1, 0], 0, None), "`tie_sizes` is required"),
    (lambda: precision_within_radius([1, 0], -1, [2]), "`r` must be at least 0"),
    (lambda: precision_within_radius([1, 0], 0, [0, 2], empty="error"), "within Hamming radius 0"),
    (lambda: pr_curve_by_rank(list_summary([1, 0]), Conventions(), ks=[0, 1]), "`ks` must hold whole numbers from 1; found 0"),
    (lambda: parse_metric("p@0"), "must be at least 1"),
    (lambda: parse_metric("recall@0"), "must be at least 1"),
])
def test_bad_input(call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value)


def test_inputs_are_not_modified():
    grades, sizes = np.array([2, 0, 1, 0]), np.array([1, 3])
    before = grades.copy(), sizes.copy()
    precision_at_k(grades, 2, sizes)
    r_precision(grades, sizes)
    precision_within_radius(grades, 0, sizes)
    np.testing.assert_array_equal(grades, before[0])
    np.testing.assert_array_equal(sizes, before[1])
