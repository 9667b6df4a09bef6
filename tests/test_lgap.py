"""LGAP (Ding, Li & Li 2018): φ's properties, LGAP against brute force from explicit codes, the summary path,
`evaluate`'s `mlgap@r`, code usage, and the Proposition 1 helpers."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from retrieval_lit.evaluation import evaluate
from retrieval_lit.lgap import (shell_counts, ball_size, code_usage, code_value, lgap, lgap_terms, mlgap,
                                orthodrome, perfect_map_layout, phi, utilisation)
from retrieval_lit.metrics import Conventions, parse_metric
from retrieval_lit.ranking import summarize
from retrieval_lit.relevance import relevance_from_labels, relevance_from_matrix
from retrieval_lit.validate import RetrievalInputError


# ---------- brute-force references (share no code with the module) ----------
def ball_codes(query, k):
    "Every code within Hamming distance k of `query` (a tuple of bits), by enumeration."
    return [c for c in itertools.product((0, 1), repeat=len(query)) if sum(a != b for a, b in zip(c, query)) <= k]


def lgap_brute(query, codes, grades, r):
    "Eq. 10 as printed, P@(d<=k) times φ(S_k), in exact fractions; None if S_r is empty."
    items = [(tuple(int(x) for x in c), int(g)) for c, g in zip(codes, grades)]
    if not any(sum(a != b for a, b in zip(c, query)) <= r for c, _ in items):
        return None
    total = Fraction(0)
    for k in range(r + 1):
        ball = set(ball_codes(query, k))
        bars = {c: 0 for c in ball}
        rel = 0
        for c, g in items:
            if c in ball:
                bars[c] += 1
                rel += g > 0
        n = sum(bars.values())
        if n:
            total += Fraction(rel, n) * Fraction(n, max(bars.values()) * len(ball))
    return total / (r + 1)


@st.composite
def small_problems(draw):
    K = draw(st.integers(1, 6))
    N = draw(st.integers(1, 25))
    n_codes = draw(st.integers(1, 2 ** K))        # few distinct codes -> collisions are common
    pool = draw(arrays(np.uint8, (n_codes, K), elements=st.integers(0, 1)))
    pick = draw(arrays(np.int64, N, elements=st.integers(0, n_codes - 1)))
    grades = draw(arrays(np.uint8, N, elements=st.integers(0, 2)))
    query = draw(arrays(np.uint8, K, elements=st.integers(0, 1)))
    r = draw(st.integers(0, K + 2))
    return query, pool[pick], grades, r


# ---------- φ ----------
@given(st.lists(st.integers(0, 50), min_size=1, max_size=40), st.integers(0, 20))
@settings(max_examples=300, deadline=None)
def test_phi_in_unit_interval_and_one_iff_uniform_on_whole_ball(bars, extra_codes):
    assume(sum(bars) > 0)
    n_codes = len(bars) + extra_codes
    p = phi(bars, n_codes)
    assert 0 < p <= 1
    assert p >= 1 / n_codes - 1e-15
    uniform_whole_ball = extra_codes == 0 and min(bars) == max(bars) > 0
    assert (p == 1.0) == uniform_whole_ball
    assert p == pytest.approx(sum(bars) / (max(bars) * n_codes), rel=1e-15)


def test_phi_values_and_empty_ball():
    assert phi([3, 3, 3], 3) == 1.0
    assert phi([4], 11) == 1 / 11
    assert phi([2, 1, 1, 1, 1], 5) == 0.6          # the paper's φ(S_1)
    assert math.isnan(phi([], 5)) and math.isnan(phi([0, 0], 5))


@pytest.mark.parametrize("args, message", [
    (([1, -1], 3), "`counts` must hold whole numbers from 0; found -1"),
    (([1.5], 3), "`counts` must hold whole numbers from 0; found 1.5"),
    (([1, 1, 1, 1], 3), "`counts` has 4 bars but the ball has only `n_codes` = 3 codes"),
    (([[1]], 3), "`counts` must be a 1-D array"),
    (([1], 0), "`n_codes` must be at least 1, got 0"),
    (([np.nan], 2), "`counts` contains nan"),
])
def test_phi_bad_input(args, message):
    with pytest.raises(RetrievalInputError, match=message.replace("[", r"\[").replace("(", r"\(")):
        phi(*args)


# ---------- ball sizes ----------
@given(st.integers(1, 8), st.integers(0, 10))
def test_ball_size_counts_the_ball(K, k):
    assert ball_size(K, k) == len(ball_codes((0,) * K, k))


def test_ball_size_exact_for_long_codes():
    assert ball_size(64, 32) == sum(math.comb(64, i) for i in range(33))   # > 2^63: exact Python int
    assert ball_size(4096, 4096) == 2 ** 4096
    t = lgap_terms([1] + [0] * 4096, [1] + [0] * 4096, 4096, 3)
    assert t[0] == 1.0 and t[1] == 1 / 4097 and np.isfinite(t).all()


# ---------- LGAP ----------
def test_worked_example_fig6():
    fig6 = {"0000": [1], "1000": [1, 1], "0100": [1], "0010": [0], "0001": [0], "1100": [1, 0], "1010": [0], "0011": [0]}
    codes = np.array([[int(ch) for ch in c] for c, gs in fig6.items() for _ in gs])
    grades = np.array([g for gs in fig6.values() for g in gs])
    v = lgap([0, 0, 0, 0], codes, grades, 2)
    assert round(v, 4) == 0.5424
    assert lgap_brute((0, 0, 0, 0), codes, grades, 2) == Fraction(179, 330)
    assert v == pytest.approx(179 / 330, rel=1e-15)


@given(small_problems())
@settings(max_examples=300, deadline=None)
def test_lgap_equals_brute_force(prob):
    query, codes, grades, r = prob
    q0, c0, g0 = query.copy(), codes.copy(), grades.copy()
    got = lgap(query, codes, grades, r)
    want = lgap_brute(tuple(int(x) for x in query), codes, grades, r)
    if want is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(float(want), rel=1e-13, abs=1e-300)
    assert np.array_equal(query, q0) and np.array_equal(codes, c0) and np.array_equal(grades, g0)


@given(small_problems())
@settings(max_examples=200, deadline=None)
def test_lgap_is_tie_free_and_invariant_to_gallery_order(prob):
    query, codes, grades, r = prob
    perm = np.random.default_rng(0).permutation(len(codes))
    a, b = lgap(query, codes, grades, r), lgap(query, codes[perm], grades[perm], r)
    assert (math.isnan(a) and math.isnan(b)) or a == b


@given(small_problems())
@settings(max_examples=200, deadline=None)
def test_lgap_accepts_pm1_codes(prob):
    query, codes, grades, r = prob
    a = lgap(query, codes, grades, r)
    b = lgap(query.astype(int) * 2 - 1, codes.astype(int) * 2 - 1, grades, r)
    assert (math.isnan(a) and math.isnan(b)) or a == b


def test_radius_beyond_code_length_is_the_whole_cube():
    codes = np.array([[0, 0], [0, 1], [1, 1], [1, 1]])
    grades = np.array([1, 0, 1, 1])
    v2, v5 = lgap([0, 0], codes, grades, 2), lgap([0, 0], codes, grades, 5)
    t = lgap_terms(*shell_counts([0, 0], codes, grades)[1:], 2, 2)
    assert v5 == pytest.approx((t.sum() + 3 * t[-1]) / 6, rel=1e-15)
    assert float(lgap_brute((0, 0), codes, grades, 5)) == pytest.approx(v5, rel=1e-14)
    assert v2 != v5


def test_lgap_bad_input():
    codes = np.array([[0, 1], [1, 1]])
    with pytest.raises(RetrievalInputError, match="`query_code` must be a 1-D array"):
        lgap([[0, 1]], codes, [1, 0], 1)
    with pytest.raises(RetrievalInputError, match="`gallery_codes` has 2-bit codes but `query_code` has 3 bits"):
        lgap([0, 1, 1], codes, [1, 0], 1)
    with pytest.raises(RetrievalInputError, match="`grades` has 1 entries"):
        lgap([0, 1], codes, [1], 1)
    with pytest.raises(RetrievalInputError, match="`r` must be at least 0"):
        lgap([0, 1], codes, [1, 0], -1)
    with pytest.raises(RetrievalInputError, match="`r` must be a whole number"):
        lgap([0, 1], codes, [1, 0], 1.0)
    with pytest.raises(RetrievalInputError, match="`query_code` must hold only"):
        lgap([0, 2], codes, [1, 0], 1)
    with pytest.raises(RetrievalInputError, match="`grades` must hold whole numbers from 0"):
        lgap([0, 1], codes, [1, -1], 1)


# ---------- the summary path and evaluate ----------
@st.composite
def batch_problems(draw):
    K = draw(st.integers(1, 7))
    nq, N = draw(st.integers(1, 5)), draw(st.integers(1, 30))
    pool = draw(arrays(np.uint8, (draw(st.integers(1, 8)), K), elements=st.integers(0, 1)))
    gallery = pool[draw(arrays(np.int64, N, elements=st.integers(0, len(pool) - 1)))]
    queries = draw(arrays(np.uint8, (nq, K), elements=st.integers(0, 1)))
    grades = draw(arrays(np.uint8, (nq, N), elements=st.integers(0, 2)))
    return queries, gallery, grades, draw(st.integers(0, K + 1))


@given(batch_problems(), st.sampled_from(["zero", "skip"]))
@settings(max_examples=200, deadline=None)
def test_summary_mlgap_equals_brute_force(prob, empty):
    queries, gallery, grades, r = prob
    s = summarize(queries, gallery, relevance_from_matrix(grades, *grades.shape), code_max=True)
    got = mlgap(s, r, Conventions(empty=empty))
    for i, q in enumerate(queries):
        want = lgap_brute(tuple(int(x) for x in q), gallery, grades[i], r)
        if want is None:
            assert (got[i] == 0.0) if empty == "zero" else math.isnan(got[i])
        else:
            assert got[i] == pytest.approx(float(want), rel=1e-13)


@given(batch_problems(), st.sampled_from(["expected", "optimistic", "pessimistic"]))
@settings(max_examples=100, deadline=None)
def test_evaluate_mlgap_matches_summary_for_every_tie_mode(prob, ties):
    queries, gallery, grades, r = prob
    rep = evaluate(queries, gallery, relevance=grades, metrics=[f"mlgap@{r}"], ties=ties)
    s = summarize(queries, gallery, relevance_from_matrix(grades, *grades.shape), code_max=True)
    assert np.array_equal(rep.per_query[f"mlgap@{r}"], mlgap(s, r))


def test_metric_registration():
    m = parse_metric("MLGAP@3")
    assert m.name == "mlgap@3" and m.code_max and m.cutoff == 0
    assert parse_metric("mlgap@0").name == "mlgap@0"
    for bad in ("mlgap", "mlgap@", "mlgap@-1", "mlgap@1.5"):
        with pytest.raises(RetrievalInputError, match="`metrics` has an unknown metric name"):
            parse_metric(bad)


def test_summary_without_code_max_and_empty_error():
    s = summarize([[0, 0]], [[1, 1]], relevance_from_labels([0], [0], 1, 1))
    with pytest.raises(RetrievalInputError, match="`summary` has no `code_max`"):
        mlgap(s, 1)
    s = summarize([[0, 0]], [[1, 1]], relevance_from_labels([0], [0], 1, 1), code_max=True)
    assert mlgap(s, 1).tolist() == [0.0]
    assert np.isnan(mlgap(s, 1, Conventions(empty="skip"))).all()
    with pytest.raises(RetrievalInputError, match="`empty` is 'error' and 1 query"):
        mlgap(s, 1, Conventions(empty="error"))
    assert mlgap(s, 2).tolist() == [pytest.approx((0 + 0 + 1 / 4) / 3)]   # the far item enters at k = 2


def test_evaluate_on_digits_against_codes():
    from retrieval_lit.data import load_digits_codes
    d = load_digits_codes(nbits=16)
    rep = evaluate(d.query_codes, d.gallery_codes, d.query_labels, d.gallery_labels, metrics="mlgap@2")
    by_codes = [lgap(q, d.gallery_codes, d.gallery_labels == c, 2) for q, c in zip(d.query_codes, d.query_labels)]
    assert np.allclose(rep.per_query["mlgap@2"], np.nan_to_num(by_codes), rtol=1e-14, atol=0)
    assert 0 < rep["mlgap@2"] < 1


# ---------- code usage ----------
@given(arrays(np.uint8, st.tuples(st.integers(1, 40), st.integers(1, 8)), elements=st.integers(0, 1)))
@settings(max_examples=200, deadline=None)
def test_code_usage_against_counter(codes):
    from collections import Counter
    counts = Counter(map(tuple, codes.tolist()))
    u = code_usage(codes)
    p = np.array(list(counts.values())) / len(codes)
    assert (u.n_items, u.n_used, u.largest) == (len(codes), len(counts), max(counts.values()))
    assert u.share_used == len(counts) / 2 ** codes.shape[1]
    assert u.entropy == pytest.approx(float(-(p * np.log2(p)).sum()), abs=1e-12)
    assert 0 <= u.entropy_ratio <= 1 + 1e-12
    assert code_value(codes).tolist() == [sum(int(b) << j for j, b in enumerate(row)) for row in codes]


# ---------- Proposition 1 helpers ----------
def test_orthodrome_of_eq9():
    p = orthodrome([0, 0, 0, 0], [1, 3, 0, 2])
    assert p.tolist() == [[0, 0, 0, 0], [0, 1, 0, 0], [0, 1, 0, 1], [1, 1, 0, 1],
                          [1, 1, 1, 1], [1, 0, 1, 1], [1, 0, 1, 0], [0, 0, 1, 0]]
    with pytest.raises(RetrievalInputError, match="`order` must be a permutation"):
        orthodrome([0, 0, 0], [0, 1, 1])


def _pairs_layout(K):
    "Pairs {x0, x1} (bit 0 free) over the even-weight words x of the other K-1 bits: utilisation 1/2."
    lab = -np.ones(2 ** K, dtype=int)
    for code in range(2 ** K):
        rest = code >> 1
        if bin(rest).count("1") % 2 == 0:
            lab[code] = rest
    return lab


@pytest.mark.parametrize("K", [3, 4, 5, 6, 7])
def test_pairs_construction_reaches_one_half(K):
    lab = _pairs_layout(K)
    assert utilisation(lab) == 0.5 and perfect_map_layout(lab)
    bits = ((np.flatnonzero(lab >= 0)[:, None] >> np.arange(K)) & 1).astype(np.uint8)
    cls = lab[lab >= 0]
    rep = evaluate(bits, bits, cls, cls, metrics="map", ties="pessimistic")
    assert rep["map"] == 1.0


def test_perfect_map_layout_strict_vs_optimistic():
    touching = np.array([0, 0, 1, 1])          # K = 2: {00, 10} and {01, 11}: distance 1 = diameter
    assert not perfect_map_layout(touching) and perfect_map_layout(touching, strict=False)
    with pytest.raises(RetrievalInputError, match="`layout` must have 2\\^K entries"):
        perfect_map_layout([0, 1, 1])
    with pytest.raises(RetrievalInputError, match="`layout` must hold whole numbers from -1"):
        perfect_map_layout([0, -2, 1, 1])


def test_exact_search_small_K():
    pytest.importorskip("scipy")
    from retrieval_lit.labs.proposition1 import max_perfect_map_utilisation
    u2, lay2, proven2 = max_perfect_map_utilisation(2)
    assert math.isnan(u2) and lay2 is None and proven2
    u3, lay3, proven3 = max_perfect_map_utilisation(3)
    assert u3 == 0.5 and proven3 and perfect_map_layout(lay3)
    assert max_perfect_map_utilisation(3, strict=False)[0] == 1.0
