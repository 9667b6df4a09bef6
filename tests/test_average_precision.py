"""AP@p / mAP@p (notebook 11) against independent computations.

* trec_eval (through pytrec_eval): `map` and `map_cut.p` divide by all relevant items (checked below), on rankings
  without ties and with ties broken the same way on both sides (trec_eval breaks ties by docno, descending);
* a per-query loop in the style of the hashing papers' evaluation code (+-1 codes, 0.5 (K - b.b^T), stable
  argsort, AP over the relevant items of the top p) against ties="index";
* exact rational arithmetic over every order of the tied items against "expected", "optimistic", "pessimistic",
  for every denominator and empty-query policy.
"""
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_lit.average_precision import ap_expected, ap_from_summary, average_precision, harmonic_gap
from retrieval_lit.ranking import hypergeometric_weights, list_summary
from retrieval_lit.metrics import Conventions, parse_metric
from retrieval_lit.ranking import summarize
from retrieval_lit.relevance import relevance_from_labels
from retrieval_lit.testing import papers_loop_ap, tie_orders
from retrieval_lit.validate import RetrievalInputError

pytrec_eval = pytest.importorskip("pytrec_eval")

TOL = 1e-12
MANY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
DENOMINATORS = ("retrieved", "all", "min")
POLICIES = ("zero", "skip", "error")
TIES = ("expected", "optimistic", "pessimistic", "index")


# ---------------------------------------------------------------- independent references

def exact_ap(rel, p, denominator):
    "AP@p of one fixed 0/1 order, as a Fraction; None where the denominator is 0."
    t, s, hits = min(p, len(rel)), Fraction(0), 0
    for m in range(t):
        if rel[m]:
            hits += 1
            s += Fraction(hits, m + 1)
    den = {"retrieved": hits, "all": sum(rel), "min": min(sum(rel), p)}[denominator]
    return None if den == 0 else s / den


def brute_force(rel, sizes, p, ties, denominator, empty):
    "Exact value (Fraction), None for NaN, or 'error'."
    if ties == "expected":
        values = [exact_ap(o, p, denominator) for o in tie_orders(rel, sizes)]
    else:
        order, start = [], 0
        for size in sizes:
            block = rel[start:start + size]
            order += {"index": block, "optimistic": sorted(block, reverse=True), "pessimistic": sorted(block)}[ties]
            start += size
        values = [exact_ap(order, p, denominator)]
    defined = [v for v in values if v is not None]
    if empty == "error" and len(defined) < len(values):
        return "error"
    if empty == "skip":
        return sum(defined) / len(defined) if defined else None
    return sum(defined) / len(values)


def trec_eval(scores, rel, cutoffs):
    """pytrec_eval's map and map_cut_<p> for each query: scores (Q, N) (higher first), rel (Q, N) 0/1.
    Docnos are chosen so that trec_eval's tie-break (docno descending) is gallery index ascending."""
    n = scores.shape[1]
    docs = [f"d{n - j:07d}" for j in range(n)]
    qrel = {f"q{i}": {docs[j]: int(rel[i, j]) for j in range(n)} for i in range(len(scores))}
    run = {f"q{i}": {docs[j]: float(scores[i, j]) for j in range(n)} for i in range(len(scores))}
    measures = {"map", "map_cut." + ",".join(str(c) for c in sorted(set(cutoffs)))}
    res = pytrec_eval.RelevanceEvaluator(qrel, measures).evaluate(run)
    return res


# ---------------------------------------------------------------- strategies

@st.composite
def tied_lists(draw, max_groups=6, max_size=6, max_orders=3000):
    sizes = draw(st.lists(st.integers(0, max_size), min_size=1, max_size=max_groups).filter(lambda s: sum(s) > 0))
    grades = draw(st.lists(st.integers(0, 2), min_size=sum(sizes), max_size=sum(sizes)))
    rel = [int(g > 0) for g in grades]
    orders, start = 1, 0
    for size in sizes:
        orders *= math.comb(size, sum(rel[start:start + size]))
        start += size
    if orders > max_orders:
        sizes = [1] * sum(sizes)   # keep enumeration small: fall back to no ties
    p = draw(st.integers(1, sum(sizes) + 2))
    return grades, sizes, p


@st.composite
def code_problems(draw, max_bits=6, max_q=5, max_n=40, multilabel=False):
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    k = draw(st.integers(1, max_bits))
    nq, ng = draw(st.integers(1, max_q)), draw(st.integers(1, max_n))
    qc, gc = rng.integers(0, 2, (nq, k)), rng.integers(0, 2, (ng, k))
    if multilabel:
        ql, gl = rng.integers(0, 2, (nq, 3)), rng.integers(0, 2, (ng, 3))
    else:
        c = draw(st.integers(1, 4))
        ql, gl = rng.integers(0, c, nq), rng.integers(0, c, ng)
    p = draw(st.integers(1, ng + 3))
    return qc, gc, ql, gl, p


def summary_of(qc, gc, ql, gl):
    relevance = relevance_from_labels(ql, gl, len(qc), len(gc))
    summ = summarize(qc, gc, relevance, stable_ranks=-1)
    rel = np.vstack([relevance.block(i, i + 1) for i in range(len(qc))]) > 0
    return summ, rel


# ---------------------------------------------------------------- trec_eval

def test_trec_eval_map_cut_divides_by_all_relevant():
    # three relevant documents, one retrieved in the top 2 at rank 2: map_cut_2 = (1/2) / 3, not (1/2) / 1
    res = trec_eval(np.array([[0.9, 0.5, 0.1, 0.05]]), np.array([[0, 1, 1, 1]]), [2])
    assert abs(res["q0"]["map_cut_2"] - 0.5 / 3) < 1e-15
    assert abs(average_precision([0, 1, 1, 1], 2, ap_denominator="all") - 0.5 / 3) < 1e-15


@MANY
@given(st.lists(st.integers(0, 1), min_size=1, max_size=60), st.data())
def test_trec_eval_without_ties(rel, data):
    n = len(rel)
    cut = data.draw(st.integers(1, n + 5))
    scores = -np.arange(n, dtype=np.float64)[None, :]          # distinct scores: the given order
    res = trec_eval(scores, np.array([rel]), [cut])["q0"]
    for ties in TIES:                                        # no ties: every mode is the same order
        assert abs(average_precision(rel, None, ties=ties, ap_denominator="all") - res["map"]) < TOL
        assert abs(average_precision(rel, cut, ties=ties, ap_denominator="all") - res[f"map_cut_{cut}"]) < TOL


@MANY
@given(code_problems())
def test_trec_eval_with_ties_broken_alike(problem):
    qc, gc, ql, gl, p = problem
    summ, rel = summary_of(qc, gc, ql, gl)
    dist = (qc[:, None, :] != gc[None, :, :]).sum(-1)
    res = trec_eval(-dist.astype(np.float64), rel, [p])
    c = Conventions.make(ties="index", ap_denominator="all")
    whole, at_p = ap_from_summary(summ, None, c), ap_from_summary(summ, p, c)
    for i in range(len(qc)):
        assert abs(whole[i] - res[f"q{i}"]["map"]) < TOL
        assert abs(at_p[i] - res[f"q{i}"][f"map_cut_{p}"]) < TOL


# ---------------------------------------------------------------- the hashing papers' loop

@MANY
@given(st.one_of(code_problems(), code_problems(max_bits=12, max_n=60, multilabel=True)))
def test_papers_loop_matches_index_order(problem):
    qc, gc, ql, gl, p = problem
    summ, rel = summary_of(qc, gc, ql, gl)
    ref = papers_loop_ap(2.0 * qc - 1, 2.0 * gc - 1, rel, p)
    got = ap_from_summary(summ, p, Conventions.make(ties="index", ap_denominator="retrieved", empty="zero"))
    np.testing.assert_allclose(got, ref, rtol=0, atol=TOL)


# ---------------------------------------------------------------- every tie order, exactly

@MANY
@given(tied_lists(), st.sampled_from(DENOMINATORS), st.sampled_from(POLICIES))
def test_brute_force_every_mode(case, denominator, empty):
    grades, sizes, p = case
    rel = [int(g > 0) for g in grades]
    for ties in TIES:
        ref = brute_force(rel, sizes, p, ties, denominator, empty)
        if ref == "error":
            with pytest.raises(RetrievalInputError, match="`empty` is 'error'"):
                average_precision(grades, p, sizes, ties=ties, ap_denominator=denominator, empty=empty)
            continue
        got = average_precision(grades, p, sizes, ties=ties, ap_denominator=denominator, empty=empty)
        if ref is None:
            assert np.isnan(got)
        else:
            assert abs(got - float(ref)) < TOL, (ties, got, float(ref))


@MANY
@given(code_problems(max_bits=4, max_q=3, max_n=14), st.sampled_from(DENOMINATORS))
def test_summary_expected_is_mean_over_tie_orders(problem, denominator):
    "From real codes: the summary-level expected AP equals the exact mean over every order of each query's ties."
    qc, gc, ql, gl, p = problem
    summ, rel = summary_of(qc, gc, ql, gl)
    got = ap_from_summary(summ, p, Conventions.make(ap_denominator=denominator, empty="zero"))
    dist = (qc[:, None, :] != gc[None, :, :]).sum(-1)
    for i in range(len(qc)):
        order = np.argsort(dist[i], kind="stable")
        sizes = [int(s) for s in np.bincount(dist[i], minlength=qc.shape[1] + 1)]
        ranked = [int(x) for x in rel[i][order]]
        orders = list(tie_orders(ranked, sizes))
        if len(orders) > 5000:
            continue
        ref = sum((exact_ap(o, p, denominator) or Fraction(0)) for o in orders) / len(orders)
        assert abs(got[i] - float(ref)) < TOL


@MANY
@given(tied_lists(max_orders=10**9), st.sampled_from(("all", "min")))
def test_optimistic_and_pessimistic_bound_expected(case, denominator):
    grades, sizes, p = case
    v = {t: average_precision(grades, p, sizes, ties=t, ap_denominator=denominator) for t in TIES}
    assert v["pessimistic"] - TOL <= v["expected"] <= v["optimistic"] + TOL
    assert v["pessimistic"] - TOL <= v["index"] <= v["optimistic"] + TOL


@MANY
@given(tied_lists(max_orders=10**9))
def test_whole_ranking_denominators_agree(case):
    grades, sizes, _ = case
    for ties in TIES:
        v = [average_precision(grades, None, sizes, ties=ties, ap_denominator=d) for d in DENOMINATORS]
        assert max(v) - min(v) < TOL


# ---------------------------------------------------------------- the pieces, and accuracy at scale

@settings(max_examples=300, deadline=None)
@given(st.integers(0, 10**7), st.integers(0, 300))
def test_harmonic_gap_relative_error(start, count):
    exact = math.fsum(1.0 / m for m in range(start + 1, start + count + 1))   # correctly rounded sum of 1/m
    got = float(harmonic_gap(start, count))
    assert abs(got - exact) <= 4e-16 * exact


def test_harmonic_gap_exact_small():
    for s in range(0, 130):
        for c in (1, 2, 9, 64, 65, 140):
            exact = sum(Fraction(1, m) for m in range(s + 1, s + c + 1))
            assert abs(Fraction(float(harmonic_gap(s, c))) - exact) <= Fraction(3, 10**16) * exact


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 400), st.data())
def test_hypergeometric_weights(n, data):
    r = data.draw(st.integers(0, n))
    j = data.draw(st.integers(0, n))
    lo, w = hypergeometric_weights([n], [r], [j])
    total = math.comb(n, j)
    for k in range(w.shape[1]):
        h = lo[0] + k
        exact = Fraction(math.comb(r, h) * math.comb(n - r, j - h), total) if h <= min(j, r) else Fraction(0)
        assert abs(Fraction(float(w[0, k])) - exact) <= Fraction(1, 10**13) * exact + Fraction(1, 10**300)


def test_large_tie_group_to_the_last_digits():
    "A million-item ranking with big tie groups: the closed form against slot-by-slot exact-rounded sums."
    n = np.array([3, 400_000, 17, 600_000, 5])
    r = np.array([2, 150_000, 0, 20_000, 5])
    ref_terms, nb, rb = [], 0, 0
    for ng, rg in zip(n, r):
        q, s = rg / ng, (rg - 1) / (ng - 1) if ng > 1 else 0.0
        ref_terms += [q * (rb + 1 + s * (i - 1)) / (nb + i) for i in range(1, ng + 1)]
        nb, rb = nb + ng, rb + rg
    ref = math.fsum(ref_terms) / r.sum()
    got = ap_expected(n[None, :], r[None, :], int(n.sum()), "all").value[0]
    assert abs(got - ref) < 1e-14


def test_cutoff_inside_a_large_group_retrieved():
    "The papers' denominator, cutoff deep inside a big group: the sum over h against direct exact-rational sums."
    n, r = np.array([40, 3000]), np.array([10, 900])
    q1, s1 = Fraction(10, 40), Fraction(9, 39)
    a = sum(q1 * (1 + s1 * (i - 1)) / i for i in range(1, 41))          # the first group, slot by slot
    for t in (41, 42, 45, 140, 1000):
        j = t - 40
        a0 = sum(Fraction(1, 40 + i) for i in range(1, j + 1))
        a1 = sum(Fraction(i - 1, 40 + i) for i in range(1, j + 1))
        ref = Fraction(0)
        for h in range(0, min(j, 900) + 1):
            w = Fraction(math.comb(900, h) * math.comb(2100, j - h), math.comb(3000, j))
            sh = Fraction(h - 1, j - 1) if j > 1 else Fraction(0)
            sc = Fraction(h, j) * (11 * a0 + sh * a1)                       # slots 1..j given h relevant
            ref += w * (a + sc) / (10 + h)
        got = ap_expected(n[None, :], r[None, :], t, "retrieved").value[0]
        assert abs(got - float(ref)) < 1e-14, (t, got, float(ref))


# ---------------------------------------------------------------- policies, names, bad input

def test_empty_policies():
    assert average_precision([0, 0]) == 0.0
    assert np.isnan(average_precision([0, 0], empty="skip"))
    with pytest.raises(RetrievalInputError, match="no relevant item"):
        average_precision([0, 0], empty="error")
    # relevant only below the cutoff: undefined for the papers' denominator, 0 for "all" whatever the policy
    assert np.isnan(average_precision([0, 1], 1, empty="skip"))
    assert average_precision([0, 1], 1, ap_denominator="all", empty="error") == 0.0
    # a tie the cutoff splits: defined in one order of two
    assert abs(average_precision([1, 0], 1, [2], empty="zero") - 0.5) < 1e-15
    assert average_precision([1, 0], 1, [2], empty="skip") == 1.0
    with pytest.raises(RetrievalInputError, match="in some order of their ties"):
        average_precision([1, 0], 1, [2], empty="error")
    assert average_precision([1, 0], 1, [2], ties="index", empty="error") == 1.0


def test_registered_names():
    m = parse_metric("map@25")
    assert (m.name, m.cutoff) == ("map@25", 25)
    assert parse_metric("map").cutoff == -1
    summ = list_summary([1, 0, 2, 0, 1], [2, 3])
    c = Conventions.make(ties="pessimistic", ap_denominator="min")
    assert abs(m.compute(summ, c)[0] - average_precision([1, 0, 2, 0, 1], 25, [2, 3], ties="pessimistic",
                                                         ap_denominator="min")) < 1e-15
    with pytest.raises(RetrievalInputError, match="at least 1"):
        parse_metric("map@0")


def test_index_order_needs_the_top():
    qc, gc = np.array([[0, 1]]), np.array([[0, 1], [1, 1], [0, 0]])
    summ = summarize(qc, gc, relevance_from_labels([0], [0, 1, 0], 1, 3), stable_ranks=1)
    with pytest.raises(RetrievalInputError, match="`ties` 'index' needs the grades of the first 3"):
        ap_from_summary(summ, None, Conventions.make(ties="index"))
    assert ap_from_summary(summ, 1, Conventions.make(ties="index"))[0] == 1.0


BAD = [
    (dict(grades=[[1, 0]]), "`grades` must be a 1-D array"),
    (dict(grades=[]), "`grades` is empty"),
    (dict(grades=[1, 0.5]), "`grades` must hold whole numbers from 0 to 255; found 0.5"),
    (dict(grades=[1, 300]), "`grades` must hold whole numbers from 0 to 255; found 300"),
    (dict(grades=["a"]), "`grades` must hold numbers"),
    (dict(grades=[1, np.nan]), "`grades` contains nan"),
    (dict(grades=[1, 0], k=0), "`k` must be at least 1"),
    (dict(grades=[1, 0], k=2.0), "`k` must be a whole number"),
    (dict(grades=[1, 0], k=True), "`k` must be a whole number"),
    (dict(grades=[1, 0], tie_sizes=[1]), "`tie_sizes` adds up to 1"),
    (dict(grades=[1, 0], tie_sizes=[]), "`tie_sizes` must be a non-empty list"),
    (dict(grades=[1, 0], tie_sizes=[1.5, 0.5]), "`tie_sizes` must hold whole numbers from 0; found 1.5"),
    (dict(grades=[1, 0], tie_sizes=[[2]]), "`tie_sizes` must be a 1-D array"),
    (dict(grades=[1, 0], ties="random"), "`ties` must be one of"),
    (dict(grades=[1, 0], ap_denominator="R"), "`ap_denominator` must be one of"),
    (dict(grades=[1, 0], empty="nan"), "`empty` must be one of"),
]


@pytest.mark.parametrize("kwargs, message", BAD)
def test_bad_input(kwargs, message):
    with pytest.raises(RetrievalInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        average_precision(**kwargs)


def test_inputs_untouched():
    grades, sizes = np.array([1, 0, 2, 0]), np.array([2, 2])
    g0, s0 = grades.copy(), sizes.copy()
    for t in TIES:
        average_precision(grades, 3, sizes, ties=t)
    assert np.array_equal(grades, g0) and np.array_equal(sizes, s0)
    qc, gc = np.array([[0, 1], [1, 1]]), np.array([[0, 1], [1, 1], [0, 0], [1, 0]])
    summ = summarize(qc, gc, relevance_from_labels([0, 1], [0, 1, 0, 1], 2, 4), stable_ranks=-1)
    hist, top = summ.hist.copy(), summ.top_grades.copy()
    for t in TIES:
        ap_from_summary(summ, 3, Conventions.make(ties=t))
    assert np.array_equal(summ.hist, hist) and np.array_equal(summ.top_grades, top)
