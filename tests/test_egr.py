"""Properties and cross-checks of the EGR chapter (nbs/30_egr.ipynb, Gherbi et al. 2023).

Every check compares against an independent computation: the printed double sum, brute force over tie
orders, scikit-learn, scipy, or an enumeration of all binary lists."""
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy import ndimage
from scipy.stats import entropy
from sklearn.metrics import homogeneity_completeness_v_measure

from retrieval_lit.ranking import hypergeometric_weights
from retrieval_lit import egr as E
from retrieval_lit import egr_companions as EC
from retrieval_lit.dcg import rbp_at
from retrieval_lit.labs import egr_tables as T
from retrieval_lit.metrics import Conventions, parse_metric
from retrieval_lit.ranking import ordered_top, summarize
from retrieval_lit.relevance import relevance_from_labels
from retrieval_lit.validate import RetrievalInputError

grade_lists = st.lists(st.integers(0, 3), min_size=1, max_size=40)
readings = st.sampled_from(E.READINGS)


def runs_by_groupby(lst):
    return [len(list(g)) for k, g in itertools.groupby(x > 0 for x in lst) if k]


# --- the formula --------------------------------------------------------------------------------------

@given(grade_lists, readings)
def test_closed_form_equals_direct_sum_over_partitions(lst, reading):
    assert math.isclose(E.egr(lst, reading), E.egr_direct(lst, reading), rel_tol=1e-12, abs_tol=1e-14)


@given(grade_lists)
def test_runs_and_groups(lst):
    assert E.relevant_runs(lst).tolist() == runs_by_groupby(lst)
    assert math.isclose(E.egr_from_groups(runs_by_groupby(lst), len(lst)), E.egr(lst), rel_tol=1e-12, abs_tol=1e-15)


@given(grade_lists, readings)
def test_exact_value_matches_float(lst, reading):
    exact = E.egr_exact(runs_by_groupby(lst), len(lst), reading)
    assert math.isclose(float(exact), E.egr(lst, reading), rel_tol=1e-12, abs_tol=1e-15)


@given(grade_lists)
def test_range_and_worst_case(lst):
    n = len(lst)
    v = E.egr(lst)
    assert math.log10(n) / n - 1e-15 <= v <= math.log10(n) + 1e-15
    if sum(x > 0 for x in lst) <= 1:
        assert math.isclose(v, math.log10(n), abs_tol=1e-15)


@given(st.lists(st.lists(st.integers(0, 2), min_size=9, max_size=9), min_size=1, max_size=6), readings)
def test_rows_match_list_level(rows, reading):
    np.testing.assert_allclose(E.egr_rows(rows, reading), [E.egr(r, reading) for r in rows], rtol=1e-12, atol=1e-15)


def test_table4_truncated():
    for n, printed in E.TABLE4.items():
        assert E.truncate(E.egr([1] * n)) == printed
    assert [round(math.log10(n) / n, 3) for n in (18, 11, 5)] == [0.070, 0.095, 0.140]   # rounding would not match


def test_exact_tie_in_enumeration():
    assert E.egr_exact((4, 1, 1, 1, 1), 12) == E.egr_exact((2, 2, 2, 2), 12)
    assert E.egr_exact((4, 1, 1, 1, 1), 12, "R") == E.egr_exact((2, 2, 2, 2), 12, "R")
    assert E.egr_exact((3,), 12) < E.egr_exact((2, 1), 12)


# --- expected EGR over tie orders ----------------------------------------------------------------------

tie_structures = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=1, max_size=4).filter(
    lambda gs: sum(a + b for a, b in gs) > 0 and math.prod(math.comb(a + b, a) for a, b in gs) <= 3000)


def brute_expected(groups, n, reading):
    "Mean of the printed double sum over every distinct order inside every tie group (independent of the module's DP)."
    per_group = []
    for a, b in groups:
        per_group.append([[1 if i in pos else 0 for i in range(a + b)]
                          for pos in map(set, itertools.combinations(range(a + b), a))])
    pad = [0] * max(0, n - sum(a + b for a, b in groups))           # beyond the items: irrelevant padding up to n
    values = [E.egr_direct((list(itertools.chain(*parts)) + pad)[:n], reading)
              for parts in itertools.product(*per_group)]
    return sum(values) / len(values)


@settings(max_examples=150, deadline=None)
@given(tie_structures, st.data(), readings)
def test_expected_egr_equals_brute_force_over_tie_orders(groups, data, reading):
    total = sum(a + b for a, b in groups)
    n = data.draw(st.integers(1, total + 3))                          # beyond the items too: padded to n
    rel, irr = [a for a, _ in groups], [b for _, b in groups]
    assert math.isclose(E.expected_egr(rel, irr, n, reading), brute_expected(groups, n, reading),
                        rel_tol=1e-11, abs_tol=1e-13)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_egr_at_against_brute_force_on_summaries(seed):
    rng = np.random.default_rng(seed)
    qc, gc = rng.integers(0, 2, (3, 3)), rng.integers(0, 2, (10, 3))
    s = summarize(qc, gc, relevance_from_labels(rng.integers(0, 2, 3), rng.integers(0, 2, 10), 3, 10), stable_ranks=-1)
    n = int(rng.integers(1, 11))
    rel = s.relevant_hist
    irr = s.group_sizes - rel
    want = [brute_expected(list(zip(rel[i].tolist(), irr[i].tolist())), n, "class") for i in range(3)]
    np.testing.assert_allclose(E.egr_at(s, n), want, rtol=1e-11, atol=1e-13)
    for ties in ("index", "optimistic", "pessimistic"):
        got = E.egr_at(s, n, Conventions.make(ties=ties))
        np.testing.assert_allclose(got, [E.egr_direct(row) for row in ordered_top(s, n, ties)], rtol=1e-12, atol=1e-15)


def test_egr_tied_modes():
    g = [1, 0, 1, 1, 0, 0, 1, 0, 1]
    assert math.isclose(E.egr_tied(g, [2, 3, 4], 7), brute_expected([(1, 1), (2, 1), (2, 2)], 7, "class"), rel_tol=1e-12)
    assert E.egr_tied(g, [2, 3, 4], 7, "index") == E.egr(g[:7])


@given(st.integers(0, 400), st.integers(0, 400), st.data())
def test_hypergeometric_weights_exact_for_egr_cut_groups(big_a, big_b, data):
    if big_a + big_b == 0:
        return
    m = data.draw(st.integers(1, big_a + big_b))
    lo, w = hypergeometric_weights([big_a + big_b], [big_a], [m])
    r, w = lo[0] + np.arange(w.shape[1]), w[0]
    total = math.comb(big_a + big_b, m)
    exact = np.array([float(Fraction(math.comb(big_a, k) * math.comb(big_b, m - k), total)) for k in r])
    np.testing.assert_allclose(w, exact, rtol=1e-12, atol=1e-300)
    assert r[0] == max(0, m - big_b) and r[-1] == min(big_a, m)


def test_large_cut_group_is_a_distribution():
    # one big tie group cut at n: the mean lies inside the range of values, R is random
    v = E.expected_egr([300], [500], 100)
    assert math.log10(100) / 100 < v < math.log10(100)
    assert math.isclose(E.expected_egr([5], [5], 4), brute_expected([(5, 5)], 4, "class"), rel_tol=1e-12)


# --- companions ---------------------------------------------------------------------------------------

@given(st.lists(st.integers(0, 1), min_size=1, max_size=30),
       st.fractions(min_value=Fraction(1, 100), max_value=Fraction(99, 100), max_denominator=100))
def test_companions_exact(lst, p):
    ranks = [i + 1 for i, x in enumerate(lst) if x]
    r = len(ranks)
    assert E.paper_precision(lst, True) == Fraction(r, len(lst))
    assert E.paper_map(lst, True) == (sum(Fraction(i, k) for i, k in enumerate(ranks, 1)) / r if r else 0)
    assert E.paper_rprecision(lst, True) == (Fraction(r, ranks[-1]) if r else 0)
    p_float = float(p)
    want = (1 - p_float) * sum(p_float ** (k - 1) for k in ranks)
    assert math.isclose(E.rbp(lst, p_float), want, rel_tol=1e-12, abs_tol=1e-15)


@given(st.lists(st.integers(0, 2), min_size=1, max_size=25))
def test_paper_map_is_the_library_ap_with_retrieved_denominator(lst):
    ap = pytest.importorskip("retrieval_lit.average_precision")
    got = ap.average_precision(lst, ties="index", ap_denominator="retrieved", empty="zero")
    assert math.isclose(E.paper_map(lst), got, rel_tol=1e-12, abs_tol=1e-15)


@given(st.integers(1, 60), st.integers(1, 60), st.integers(1, 60))
def test_extended_precision_inequality(n_i, r_i_raw, scale):
    r_i = min(r_i_raw, n_i)
    n_j, r_j = n_i * (scale + 1), r_i * (scale + 1)      # same precision, R_j > R_i
    p_j = Fraction(r_j, n_j)
    p_new = EC.extended_precision(r_i, n_i, r_j)
    assert (p_new > p_j) == (p_j < 1)
    assert (p_new == p_j) == (p_j == 1)


def test_error_rates():
    assert EC.error_rates(3, 12) == {"R_ERR": Fraction(2, 12), "N_ERR": Fraction(1, 12), "P_ERR": Fraction(1, 12)}
    assert EC.error_rates(1, 12)["P_ERR"] == 0


# --- clustering measures ------------------------------------------------------------------------------

label_pairs = st.integers(1, 40).flatmap(lambda n: st.tuples(st.lists(st.integers(0, 4), min_size=n, max_size=n),
                                                             st.lists(st.integers(0, 4), min_size=n, max_size=n)))


def contingency(clusters, classes):
    k, c = max(clusters) + 1, max(classes) + 1
    t = np.zeros((k, c), dtype=np.int64)
    np.add.at(t, (clusters, classes), 1)
    return t


@given(label_pairs, st.floats(0.1, 5.0))
def test_v_measure_equals_scikit_learn(pair, beta):
    classes, clusters = pair
    got = EC.v_measure(contingency(clusters, classes), beta)
    want = homogeneity_completeness_v_measure(classes, clusters, beta=beta)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@given(label_pairs)
def test_entropy_and_purity_against_definitions(pair):
    classes, clusters = pair
    t = contingency(clusters, classes)
    n = t.sum()
    want_purity = sum(row.max() for row in t) / n
    c = t.shape[1]
    want_entropy = 0.0 if c < 2 else sum(row.sum() / n * entropy(row[row > 0]) / math.log(c) for row in t if row.sum())
    assert math.isclose(EC.purity(t), want_purity, rel_tol=1e-12)
    assert math.isclose(EC.clustering_entropy(t), want_entropy, rel_tol=1e-10, abs_tol=1e-12)


# --- the enumeration ----------------------------------------------------------------------------------

def run_multisets_of_all_lists(n):
    "Every distinct multiset of relevant-run lengths over all 2^n binary lists with at least one hit."
    out = set()
    for bits in itertools.product((0, 1), repeat=n):
        runs = runs_by_groupby(bits)
        if runs:
            out.add(tuple(sorted(runs, reverse=True)))
    return out


def partitions_at_most(r, k):
    "Number of partitions of r into at most k parts (standard recurrence)."
    table = [[0] * (k + 1) for _ in range(r + 1)]
    for j in range(k + 1):
        table[0][j] = 1
    for i in range(1, r + 1):
        for j in range(1, k + 1):
            table[i][j] = table[i][j - 1] + (table[i - j][j] if i >= j else 0)
    return table[r][k]


def test_enumeration_counts():
    every, paper = T.arrangements(12), T.arrangements(12, paper=True)
    assert len(every) == 100 == len(set(every))
    assert len(paper) == 95
    assert set(every) - set(paper) == set(T.PAPER_LEFT_OUT)
    assert sum(sum(g) >= 8 for g in paper) == 52
    assert set(every) == run_multisets_of_all_lists(12)
    for r in range(1, 13):
        assert sum(sum(g) == r for g in every) == partitions_at_most(r, 12 - r + 1)


@pytest.mark.parametrize("n", range(1, 12))
def test_enumeration_is_every_run_multiset(n):
    assert set(T.arrangements(n)) == run_multisets_of_all_lists(n)


def test_layout_realises_the_groups():
    for g in T.arrangements(12):
        lst = T.layout(g, 12)
        assert tuple(runs_by_groupby(lst)) == g and len(lst) == 12


def test_paper_tables_egr_and_p():
    arrs = T.arrangements(12, paper=True)
    vals = T.measure_values(arrs)
    egr_groups = T.tie_groups(arrs, vals["EGR"], False)
    names = lambda groups, ks: [[T.arrangement_name(g) for g in groups[k][1]] for k in ks]
    assert names(egr_groups, range(5)) == [["12"], ["11"], ["(10,1)"], ["10"], ["(9,1)"]]
    assert names(egr_groups, range(-1, -6, -1)) == [["1"], ["(1,1)"], ["2"], ["(1,1,1)"], ["(2,1)"]]
    p_groups = T.tie_groups(arrs, vals["P"], True)
    assert sum(len(m) for _, m in p_groups[:5]) == 52
    assert [rank for rank, _ in p_groups[:5]] == [1, 2, 4, 17, 35]      # competition ranks


def test_competition_ranks_match_a_float_sort_without_ties():
    arrs = T.arrangements(12)
    vals = T.measure_values(arrs)["RBP"]
    ranks = T.competition_ranks(vals, True)
    floats = np.array([float(v) for v in vals])
    want = 1 + (floats[None, :] > floats[:, None]).sum(1)
    assert ranks.tolist() == want.tolist()


# --- the 2-D case -------------------------------------------------------------------------------------

@settings(max_examples=120, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.floats(0, 1), st.integers(0, 2**32 - 1), st.sampled_from([4, 8]))
def test_grid_components_equal_scipy(rows, cols, density, seed, conn):
    mask = np.random.default_rng(seed).random((rows, cols)) < density
    labels, k = E.grid_components(mask, conn)
    ref, ref_k = ndimage.label(mask, structure=ndimage.generate_binary_structure(2, 1 if conn == 4 else 2))
    assert k == ref_k and np.array_equal(labels, ref)


@given(grade_lists, st.sampled_from([4, 8]))
def test_one_row_grid_is_the_list(lst, conn):
    assert math.isclose(E.egr_grid(lst, len(lst), conn), E.egr(lst), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(E.egr_grid(lst, len(lst) + 3, conn), E.egr(lst), rel_tol=1e-12, abs_tol=1e-15)


# --- rbp@N --------------------------------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.05, 0.95))
def test_rbp_expected_equals_brute_force(seed, p):
    rng = np.random.default_rng(seed)
    s = summarize(rng.integers(0, 2, (2, 3)), rng.integers(0, 2, (9, 3)),
                  relevance_from_labels(rng.integers(0, 2, 2), rng.integers(0, 2, 9), 2, 9), stable_ranks=-1)
    n = int(rng.integers(1, 10))
    rel, size = s.relevant_hist, s.group_sizes
    want = []
    for i in range(2):
        per_group = [[[1 if j in pos else 0 for j in range(a + b)] for pos in map(set, itertools.combinations(range(a + b), a))]
                     for a, b in zip(rel[i].tolist(), (size[i] - rel[i]).tolist()) if a + b]
        vals = [E.rbp(list(itertools.chain(*parts))[:n], p) for parts in itertools.product(*per_group)]
        want.append(sum(vals) / len(vals))
    np.testing.assert_allclose(rbp_at(s, n, Conventions.make(rbp_persistence=p)), want, rtol=1e-10, atol=1e-14)


# --- registration and bad input -----------------------------------------------------------------------

def test_names_through_evaluate():
    from retrieval_lit.evaluation import evaluate
    rng = np.random.default_rng(5)
    qc, gc, ql, gl = rng.integers(0, 2, (4, 6)), rng.integers(0, 2, (40, 6)), rng.integers(0, 3, 4), rng.integers(0, 3, 40)
    for ties in ("expected", "index", "optimistic", "pessimistic"):
        rep = evaluate(qc, gc, ql, gl, ["egr@12", "rbp@10"], ties=ties)
        s = summarize(qc, gc, relevance_from_labels(ql, gl, 4, 40), stable_ranks=12)
        c = Conventions.make(ties=ties)
        np.testing.assert_allclose(rep.per_query["egr@12"], E.egr_at(s, 12, c), rtol=1e-12)
        np.testing.assert_allclose(rep.per_query["rbp@10"], rbp_at(s, 10, c), rtol=1e-12)
    assert parse_metric("EGR@5").name == "egr@5" and parse_metric("rbp").name == "rbp"


@pytest.mark.parametrize("call, message", [
    (lambda: E.egr([[1, 0]]), "`rel` must be a 1-D array"),
    (lambda: E.egr([]), "`rel` is empty"),
    (lambda: E.egr([1, 0.5]), "`rel` must hold whole numbers from 0; found 0.5"),
    (lambda: E.egr([1, np.nan]), "`rel` contains nan"),
    (lambda: E.egr(["a"]), "`rel` must hold numbers"),
    (lambda: E.egr([1, 0], reading="ln"), "`reading` must be one of"),
    (lambda: E.egr_from_groups([3, 3], 6), "`groups` [3, 3] needs 7 positions"),
    (lambda: E.egr_from_groups([0, 2], 6), "`groups` must hold whole numbers from 1; found 0"),
    (lambda: E.egr_from_groups([2], 0), "`n` must be at least 1"),
    (lambda: E.expected_egr([1], [1, 2], 2), "`irrelevant` has 2 tie groups"),
    (lambda: E.expected_egr([-1], [2], 2), "`relevant` must hold whole numbers from 0; found -1"),
    (lambda: E.egr_tied([1, 0, 1], [1, 1]), "`tie_sizes` adds up to 2 but `grades` has 3 items"),
    (lambda: E.egr_tied([1, 0, 1], ties="random"), "`ties` must be one of"),
    (lambda: E.rbp([1, 0], 1.5), "`persistence` must lie in (0, 1)"),
    (lambda: EC.v_measure([[1, 2]], beta=0), "`beta` must be a positive real number"),
    (lambda: EC.purity([[0, 0]]), "`table` holds no item: every count is 0"),
    (lambda: E.grid_components(np.ones(3), 4), "`mask` must be a 2-D array"),
    (lambda: E.egr_grid([1, 0], 2, connectivity=6), "`connectivity` must be 4"),
    (lambda: T.arrangements(10, paper=True), "`n` the paper's set of arrangements is defined for n = 12 only"),
    (lambda: EC.extended_precision(3, 2, 4), "`n_rel_i` must be at most 2"),
    (lambda: parse_metric("egr@0"), "`metrics` 'egr@0': the list size N must be at least 1"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(RetrievalInputError, match=None) as info:
        call()
    assert message in str(info.value), str(info.value)


def test_inputs_not_modified():
    a = np.array([3, 0, 1, 1, 0], dtype=np.int64)
    before = a.copy()
    E.egr(a), E.egr_direct(a), E.egr_tied(a, [2, 3], 4, "optimistic"), E.egr_grid(a, 2), E.paper_map(a)
    assert np.array_equal(a, before)
