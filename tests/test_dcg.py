"""DCG@p and nDCG@p with graded relevance (module `dcg`, notebook 12).

Checked against: scikit-learn's ndcg_score (tie-averaged, linear gain) for `expected`, trec_eval (pytrec_eval,
ndcg_cut, linear gain) on rankings whose ties are broken the same way on both sides, brute force over every
order of the tied items, math.fsum for the discount table, and properties."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tie_orders import all_orders, tied_lists
from retrieval_lit.dcg import (dcg, dcg_from_summary, discount_prefix, discount_sum, gain_values, idcg_from_summary,
                               ndcg, ndcg_from_summary)
from retrieval_lit.evaluation import evaluate
from retrieval_lit.metrics import Conventions, parse_metric
from retrieval_lit.ranking import summarize
from retrieval_lit.relevance import relevance_from_labels, relevance_from_matrix, relevance_from_types
from retrieval_lit.validate import RetrievalInputError

TIES = ("expected", "optimistic", "pessimistic", "index")


def textbook_dcg(order, p, gain):
    g = (lambda r: 2.0 ** r - 1) if gain == "exp2" else float
    return math.fsum(g(r) / math.log2(m + 2) for m, r in enumerate(order[:p]))


# ---------------------------------------------------------------- brute force over all tie orders
@settings(max_examples=200, deadline=None)
@given(tied_lists(max_grade=3), st.integers(1, 10), st.sampled_from(["exp2", "linear"]))
def test_dcg_and_ndcg_equal_brute_force(case, p, gain):
    grades, sizes = case
    values = [textbook_dcg(o, p, gain) for o in all_orders(tuple(grades), sizes)]
    want = [math.fsum(values) / len(values), max(values), min(values)]
    got = [dcg(grades, p, sizes, ties=t, gain=gain) for t in ("expected", "optimistic", "pessimistic")]
    assert got == pytest.approx(want, rel=1e-14, abs=1e-14)
    ideal = textbook_dcg(sorted(grades, reverse=True), p, gain)
    if ideal == 0:
        assert np.isnan(ndcg(grades, p, sizes, gain=gain, empty="skip"))
        return
    nd = [v / ideal for v in values]
    want = [math.fsum(nd) / len(nd), max(nd), min(nd)]
    got = [ndcg(grades, p, sizes, ties=t, gain=gain) for t in ("expected", "optimistic", "pessimistic")]
    assert got == pytest.approx(want, rel=1e-14, abs=1e-14)
    assert ndcg(grades, p, sizes, ties="index", gain=gain) == pytest.approx(textbook_dcg(grades, p, gain) / ideal,
                                                                            rel=1e-14, abs=1e-14)


# ---------------------------------------------------------------- scikit-learn: tie-averaged, linear gain
def test_expected_ndcg_equals_sklearn_ndcg_score():
    from sklearn.metrics import ndcg_score
    rng = np.random.default_rng(0)
    worst, cases = 0.0, 0
    for _ in range(400):
        n = int(rng.integers(2, 60))
        levels = int(rng.integers(1, 12))
        dist = rng.integers(0, levels, n)
        grades = rng.integers(0, int(rng.integers(1, 5)) + 1, n) * (rng.random(n) < rng.random())
        if not grades.any():
            grades[rng.integers(n)] = 1
        k = int(rng.integers(1, n + 3))
        theirs = ndcg_score(grades[None, :], -dist[None, :].astype(float), k=k)
        order = np.argsort(dist, kind="stable")
        sizes = np.bincount(dist, minlength=levels)
        ours = ndcg(grades[order], k, sizes, gain="linear")
        worst = max(worst, abs(theirs - ours))
        # exponential gain = linear gain on the relevance 2^g - 1
        theirs_exp = ndcg_score((2.0 ** grades - 1)[None, :], -dist[None, :].astype(float), k=k)
        worst = max(worst, abs(theirs_exp - ndcg(grades[order], k, sizes)))
        cases += 1
    assert cases == 400 and worst < 1e-12


def test_expected_ndcg_from_summary_equals_sklearn_on_hash_codes():
    from sklearn.metrics import ndcg_score
    rng = np.random.default_rng(1)
    q, g = rng.integers(0, 2, (50, 10)), rng.integers(0, 2, (300, 10))
    grades = rng.integers(0, 4, (50, 300)) * (rng.random((50, 300)) < 0.3)
    grades[:, 0] = np.maximum(grades[:, 0], 1)
    s = summarize(q, g, relevance_from_matrix(grades, 50, 300))
    dist = (q[:, None, :] != g[None, :, :]).sum(-1)
    for p in (1, 10, 100, None):
        ours = ndcg_from_summary(s, p, Conventions(gain="linear"))
        theirs = [ndcg_score(grades[i:i + 1], -dist[i:i + 1].astype(float), k=p) for i in range(50)]
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)


# ---------------------------------------------------------------- trec_eval: ndcg_cut, linear gain
def test_against_trec_eval_ndcg_cut():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(7)
    cuts = (1, 3, 5, 10, 20, 100)
    measures = {"ndcg_cut." + ",".join(map(str, cuts)), "ndcg"}
    for _ in range(200):
        n, levels = int(rng.integers(1, 50)), int(rng.integers(1, 8))
        dist = np.sort(rng.integers(0, levels, n))
        grades = rng.integers(0, 4, n) * (rng.random(n) < 0.5)
        if not grades.any():
            grades[rng.integers(n)] = 2
        docs = [f"d{n - i:05d}" for i in range(n)]         # trec_eval breaks ties by docno, descending
        qrel = {"q": {d: int(x) for d, x in zip(docs, grades)}}
        run = {"q": {d: float(-x) for d, x in zip(docs, dist)}}
        ref = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)["q"]
        sizes = np.bincount(dist, minlength=levels)
        for p in cuts:
            assert ndcg(grades, p, sizes, ties="index", gain="linear") == pytest.approx(ref[f"ndcg_cut_{p}"],
                                                                                       rel=1e-12, abs=1e-12)
        assert ndcg(grades, None, sizes, ties="index", gain="linear") == pytest.approx(ref["ndcg"], rel=1e-12)


# ---------------------------------------------------------------- the discount table
def test_discount_prefix_against_fsum():
    n = 300_000
    table = discount_prefix(n)
    x = 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))
    rng = np.random.default_rng(4)
    for _ in range(50):
        a = int(rng.integers(0, n))
        c = int(rng.integers(0, n - a + 1))
        want = math.fsum(x[a:a + c])
        assert abs(discount_sum(a, c, n, table) - want) <= 4 * np.spacing(max(want, 1e-300))
    assert discount_sum(10, 5, 12, table) == pytest.approx(math.fsum(x[10:12]), rel=1e-15)
    assert discount_sum(20, 5, 12, table) == 0.0
    assert not table[0].flags.writeable


def test_gain_values():
    np.testing.assert_array_equal(gain_values(4, "exp2"), [0, 1, 3, 7])
    np.testing.assert_array_equal(gain_values(4, "linear"), [0, 1, 2, 3])


# ---------------------------------------------------------------- properties
@settings(max_examples=100, deadline=None)
@given(tied_lists(max_items=30, max_grade=4), st.integers(1, 35), st.sampled_from(["exp2", "linear"]))
def test_ndcg_bounds_and_mode_order(case, p, gain):
    grades, sizes = case
    vals = {t: ndcg(grades, p, sizes, ties=t, gain=gain, empty="skip") for t in TIES}
    if not any(grades):
        assert all(np.isnan(v) for v in vals.values())
        return
    eps = 1e-14
    assert -eps <= vals["pessimistic"] <= vals["expected"] + eps <= vals["optimistic"] + 2 * eps <= 1 + 3 * eps
    assert vals["pessimistic"] - eps <= vals["index"] <= vals["optimistic"] + eps
    ideal_order = sorted(grades, reverse=True)
    assert ndcg(ideal_order, p, gain=gain) == pytest.approx(1.0, rel=1e-15)


def test_summary_level_matches_list_level_and_sources():
    rng = np.random.default_rng(11)
    q, g = rng.integers(0, 2, (15, 6)), rng.integers(0, 2, (40, 6))
    dist = (q[:, None, :] != g[None, :, :]).sum(-1)
    types = rng.integers(1, 4, (15, 40))
    attrs_q, attrs_g = rng.integers(0, 2, (15, 3)), rng.integers(0, 2, (40, 3))
    sources = {
        "types": (relevance_from_types(types, 15, 40), np.array([0, 2, 1, 0])[types]),
        "attributes": (relevance_from_labels(attrs_q, attrs_g, 15, 40), attrs_q @ attrs_g.T),
        "matrix": (relevance_from_matrix(np.minimum(types, 2), 15, 40), np.minimum(types, 2)),
    }
    for rel, grades in sources.values():
        s = summarize(q, g, rel, stable_ranks=-1)
        for ties in TIES:
            for gain in ("exp2", "linear"):
                c = Conventions(ties=ties, gain=gain, empty="skip")
                for p in (1, 5, None):
                    got = ndcg_from_summary(s, p, c)
                    for i in range(15):
                        order = np.argsort(dist[i], kind="stable")
                        want = ndcg(grades[i][order], p, np.bincount(dist[i], minlength=7), ties=ties, gain=gain,
                                    empty="skip")
                        np.testing.assert_equal(got[i], want)


def test_type_grades_follow_seed_000():
    "type 1 -> 2, type 2 -> 1, type 3 -> 0: one item of each type, nearest first."
    q, g = np.zeros((1, 2), int), np.array([[0, 0], [1, 0], [1, 1]])
    s = summarize(q, g, relevance_from_types(np.array([[2, 1, 3]]), 1, 3))
    want = (1 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))
    assert ndcg_from_summary(s, None, Conventions())[0] == pytest.approx(want, rel=1e-15)
    assert idcg_from_summary(s, 2, Conventions())[0] == pytest.approx(3 + 1 / math.log2(3), rel=1e-15)
    assert dcg_from_summary(s, 1, Conventions())[0] == 1.0


def test_registered_names_through_evaluate():
    rng = np.random.default_rng(2)
    q, g = rng.integers(0, 2, (20, 8)), rng.integers(0, 2, (150, 8))
    ql, gl = rng.integers(0, 2, (20, 4)), rng.integers(0, 2, (150, 4))      # multi-hot: V = shared labels
    for ties in TIES:
        for gain in ("exp2", "linear"):
            rep = evaluate(q, g, ql, gl, metrics=["ndcg@10", "ndcg"], ties=ties, gain=gain, empty="skip", engine="numpy")
            s = summarize(q, g, relevance_from_labels(ql, gl, 20, 150), stable_ranks=-1)
            c = Conventions(ties=ties, gain=gain, empty="skip")
            np.testing.assert_array_equal(rep.per_query["ndcg@10"], ndcg_from_summary(s, 10, c))
            np.testing.assert_array_equal(rep.per_query["ndcg"], ndcg_from_summary(s, None, c))
    m = parse_metric("NDCG@25")
    assert (m.name, m.cutoff) == ("ndcg@25", 25)


@pytest.mark.parametrize("call, message", [
    (lambda: ndcg([1, 0], 0), "`k` must be at least 1"),
    (lambda: ndcg([1, 0], 2.0), "`k` must be a whole number"),
    (lambda: ndcg([1, 0], gain="exp"), "`gain` must be one of"),
    (lambda: ndcg([1, 0], ties="avg"), "`ties` must be one of"),
    (lambda: ndcg([1, 0], empty="nan"), "`empty` must be one of"),
    (lambda: ndcg([0, 0], empty="error"), "iDCG = 0"),
    (lambda: ndcg([1, -2]), "`grades`"),
    (lambda: ndcg([1, 0, 1], tie_sizes=[1, 1]), "`tie_sizes` adds up to 2"),
    (lambda: dcg([[1, 0]]), "`grades` must be a 1-D array"),
    (lambda: parse_metric("ndcg@0"), "must be at least 1"),
])
def test_bad_input(call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value)


def test_inputs_are_not_modified():
    grades, sizes = np.array([2, 0, 1, 3]), np.array([2, 2])
    before = grades.copy(), sizes.copy()
    for t in TIES:
        ndcg(grades, 3, sizes, ties=t)
    np.testing.assert_array_equal(grades, before[0])
    np.testing.assert_array_equal(sizes, before[1])
