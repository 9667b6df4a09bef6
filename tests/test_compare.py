"""Comparing systems (chapter 53): every test against scipy.stats as the oracle, the corrections against Holm's
procedure, compare's bad-input table, the tie verdicts against brute force over tie orders, and the command line on
files the tests write."""
import io
import itertools
import json
import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, example, given, settings, strategies as st

stats = pytest.importorskip("scipy.stats")

from retrieval_lit import evaluate
from retrieval_lit.cli import main
from retrieval_lit.compare import (Comparison, bonferroni, bootstrap_interval, compare, difference_under_ties,
                                   effect_size, holm, paired_t_test, randomization_test, sign_test, tie_robustness,
                                   wilcoxon_test, wins_ties_losses)
from retrieval_lit.testing import tie_orders
from retrieval_lit.trec import evaluate_run, write_qrels, write_run
from retrieval_lit.validate import RetrievalInputError

# per-query values as metrics produce them: in [0, 1], often on a coarse grid (P@10), so zeros and ties are common
values = st.lists(st.one_of(st.floats(0, 1), st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0])), min_size=2, max_size=60)


def pair(draw_values):
    n = len(draw_values) // 2
    return np.array(draw_values[:n]), np.array(draw_values[n:2 * n])


def close(ours, theirs, rel=1e-12):
    return math.isclose(ours, theirs, rel_tol=rel, abs_tol=1e-300)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=4, max_size=400))
@example([0.0, 0.25, 0.25, 1e-12])          # t = -2e-12 on one degree of freedom: p = 1 - 1.27e-12, scipy says 1.0
def test_t_test_is_scipys(v):
    a, b = pair(v)
    d = a - b
    if np.std(d, ddof=1) <= 1e-13 * np.max(np.abs(d)):           # constant differences: defined separately
        return
    ref = stats.ttest_rel(a, b)
    r = paired_t_test(a, b)
    assert close(r.statistic, ref.statistic)
    # scipy's p-value rounds 1 - 1e-12 to 1.0 where |t| is tiny (its t distribution's tail near the centre): there
    # the p-value is held to the closed form on one degree of freedom, 1 - 2 atan|t| / pi, and to scipy within 1e-11
    if len(a) == 2:
        assert math.isclose(r.p_value, 1 - 2 * math.atan(abs(r.statistic)) / math.pi, rel_tol=1e-13)
    assert close(r.p_value, ref.pvalue) or (abs(r.statistic) < 1e-6 and abs(r.p_value - ref.pvalue) < 1e-11)
    assert close(effect_size(a, b), ref.statistic / math.sqrt(len(a)))


def test_t_test_degenerate_cases():
    assert paired_t_test([0.2, 0.4], [0.2, 0.4]).p_value == 1.0                   # scipy: NaN
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert paired_t_test([1, 2, 3], [0, 1, 2]).p_value == stats.ttest_rel([1, 2, 3], [0, 1, 2]).pvalue == 0.0
    assert effect_size([1, 2, 3], [0, 1, 2]) == math.inf and effect_size([1, 2], [1, 2]) == 0.0


@settings(max_examples=60, deadline=None)
@given(values.filter(lambda v: 4 <= len(v) <= 28))
def test_exact_randomization_is_scipys(v):
    a, b = pair(v)
    ref = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                                 vectorized=True, n_resamples=np.inf)
    r = randomization_test(a, b)
    assert r.exact and r.mc_error == 0 and r.p_value == ref.pvalue


@pytest.mark.parametrize("n, shift", [(30, 0.0), (30, 0.1), (80, 0.04), (300, 0.02)])
def test_monte_carlo_randomization_within_its_error(n, shift):
    rng = np.random.default_rng(n)
    a, b = rng.uniform(0, 1, n) + shift, rng.uniform(0, 1, n)
    r = randomization_test(a, b, n_resamples=10_000, seed=1)
    ref = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
                                 vectorized=True, n_resamples=10_000, rng=np.random.default_rng(2))
    assert not r.exact and r.mc_error <= 0.01                      # sqrt(p (2 - p) / B) is at most 1 / sqrt(B)
    assert r.mc_error == math.sqrt(r.p_value * (2 - r.p_value) / 10_000)
    assert abs(r.p_value - ref.pvalue) <= 4 * math.sqrt(2) * max(r.mc_error, 1 / 10_001)
    assert randomization_test(a, b, n_resamples=500, seed=3) == randomization_test(a, b, n_resamples=500, seed=3)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=4, max_size=200), st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_bootstrap_interval_is_scipys_on_the_same_resamples(v, confidence):
    a, b = pair(v)
    ours = bootstrap_interval(a, b, confidence, n_resamples=999, seed=7, batch=333)
    ref = stats.bootstrap((a - b,), np.mean, confidence_level=confidence, n_resamples=999, batch=333,
                          method="percentile", rng=np.random.default_rng(7)).confidence_interval
    assert ours == pytest.approx((ref.low, ref.high), rel=1e-12, abs=1e-15)


@settings(max_examples=80, deadline=None)
@given(values.filter(lambda v: len(v) >= 4),
       st.sampled_from(["wilcox", "pratt", "zsplit"]), st.booleans())
def test_wilcoxon_is_scipys(v, zero_method, correction):
    a, b = pair(v)
    if not np.any(a != b):
        assert wilcoxon_test(a, b, zero_method, correction).p_value == 1.0
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = stats.wilcoxon(a, b, zero_method=zero_method, correction=correction)
    r = wilcoxon_test(a, b, zero_method, correction)
    assert close(r.statistic, ref.statistic) and close(r.p_value, ref.pvalue)


@settings(max_examples=150, deadline=None)
@given(values)
def test_sign_test_is_binomtest(v):
    a, b = pair(v)
    w, t, l = wins_ties_losses(a, b)
    r = sign_test(a, b)
    assert (r.statistic, r.n) == (w, w + l) and w + t + l == len(a)
    assert r.p_value == 1.0 if w + l == 0 else close(r.p_value, stats.binomtest(w, w + l).pvalue)


def holm_procedure(p, alpha):
    order, m, out = np.argsort(p, kind="stable"), len(p), set()
    for k, i in enumerate(order):
        if (m - k) * p[i] > alpha:
            break
        out.add(int(i))
    return out


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.001, 0.01, 0.02, 0.03, 0.04, 0.2, 0.5, 1.0]) | st.floats(0, 1),
                min_size=1, max_size=12))
def test_holm_rejects_what_holms_procedure_rejects(p):
    p = np.array(p)
    adj = holm(p)
    for alpha in {a for a in adj.tolist() if a < 1} | {0.05, 0.01}:      # alpha = 1: the cap at 1 rejects everything
        assert holm_procedure(p, alpha) == set(np.flatnonzero(adj <= alpha).tolist())
    assert np.all(adj >= p) and np.all(adj <= bonferroni(p)) and np.all(adj <= 1)


def test_corrections_refuse_bad_p_values():
    for bad in ([], [0.2, 1.5], [np.nan], [[0.1]]):
        with pytest.raises(RetrievalInputError, match="^`p_values`"):
            holm(bad)


def test_compare_rows_are_the_chapter_functions():
    rng = np.random.default_rng(0)
    base = rng.uniform(0, 1, 50)
    systems = {"base": base, "b": base + 0.05 + rng.normal(0, 0.1, 50), "c": base + rng.normal(0, 0.1, 50)}
    for test, fn in [("t", paired_t_test), ("wilcoxon", wilcoxon_test), ("sign", sign_test)]:
        c = compare(systems, test=test, correction="bonferroni", n_resamples=500)
        for name in ("b", "c"):
            r = c.row(name)
            assert r["p_value"] == fn(systems[name], base).p_value
            assert r["p_adjusted"] == min(1.0, 2 * r["p_value"])
            assert (r["ci_low"], r["ci_high"]) == bootstrap_interval(systems[name], base, n_resamples=500)
    frame = compare(systems, baseline="all", test="t").to_frame()
    assert {"mean", "delta", "ci_low", "ci_high", "p_value", "p_adjusted"} <= set(frame.columns)
    assert len(frame) == 3


def test_tables_mark_direction_and_best():
    a = np.linspace(0.2, 0.8, 30)
    c = compare({"base": {"map": a, "egr@10": 1 - a}, "up": {"map": a + 0.1, "egr@10": 0.9 - a}}, test="t")
    md = c.to_markdown()
    assert "| up | **0.6000**† | **0.4000**† |" in md and "† / ‡" in md
    tex = c.to_latex()
    assert r"\textbf{0.6000}$^{\dagger}$" in tex and tex.startswith(r"\begin{tabular}{lrr}")
    assert "<table" in c._repr_html_() and "<b>0.6000</b>†" in c._repr_html_()
    assert [line.split()[:2] for line in c.table().splitlines()[1:3]] == [["map", "up"], ["egr@10", "up"]]


@pytest.mark.parametrize("systems, kwargs, match", [
    ({"A": [0.5, 0.6]}, {}, "^`systems` must name at least two"),
    ([0.5, 0.6], {}, "^`systems` must map"),
    ({"A": [0.5, 0.6], "B": [0.4]}, {}, "^`systems` must hold one value per query"),
    ({"A": [0.5], "B": [0.4]}, {}, "^`systems` hold 1 paired queries"),
    ({"A": [0.5, np.nan], "B": [0.4, 0.3]}, {}, "^`systems` hold 1 paired queries"),
    ({"A": [0.5, np.inf], "B": [0.4, 0.3]}, {}, "^`systems`.*infinite"),
    ({"A": [[0.5, 0.6]], "B": [[0.4, 0.3]]}, {}, "^`systems`.*1-D"),
    ({"A": {"map": [0.5, 0.6]}, "B": {"p@10": [0.4, 0.3]}}, {}, "^`metrics` names 'map'"),
    ({"A": [0.5, 0.6], "B": [0.4, 0.3]}, {"metrics": ["map", "p@10"]}, "^`metrics` must name one metric"),
    ({"A": [0.5, 0.6], "B": [0.4, 0.3]}, {"baseline": "C"}, "^`baseline`"),
    ({"A": [0.5, 0.6], "B": [0.4, 0.3]}, {"test": "anova"}, "^`test`"),
    ({"A": [0.5, 0.6], "B": [0.4, 0.3]}, {"correction": "fdr"}, "^`correction`"),
    ({"A": [0.5, 0.6], "B": [0.4, 0.3]}, {"confidence": 1.0}, "^`confidence`"),
    ({"A": [0.5, 0.6], "B": [0.4, 0.3]}, {"n_resamples": 0}, "^`n_resamples`"),
])
def test_compare_bad_input(systems, kwargs, match):
    with pytest.raises(RetrievalInputError, match=match):
        compare(systems, **kwargs)


def test_compare_reports_checks_queries_conventions_metrics():
    scores = np.array([[3.0, 2, 1, 1], [1, 1, 2, 3], [2, 2, 2, 1]])
    rel = np.array([[1, 0, 1, 0], [0, 1, 1, 0], [1, 0, 0, 1]])
    ra = evaluate(scores=scores, relevance=rel, metrics=["map", "p@2"], bounds=True)
    rb = evaluate(scores=scores[:, ::-1], relevance=rel, metrics=["map", "p@2"], bounds=True)
    with pytest.raises(RetrievalInputError, match="same queries"):
        compare({"a": ra, "b": evaluate(scores=scores[:2], relevance=rel[:2], metrics=["map"])})
    with pytest.raises(RetrievalInputError, match="conventions.*ap_denominator"):
        compare({"a": ra, "b": evaluate(scores=scores, relevance=rel, metrics=["map", "p@2"], ap_denominator="all")})
    with pytest.raises(RetrievalInputError, match="^`metrics` names 'ndcg'"):
        compare({"a": ra, "b": rb}, metrics=["ndcg"])
    with pytest.raises(RetrievalInputError, match="one kind"):
        compare({"a": ra, "b": [0.1, 0.2, 0.3]})
    c = compare({"a": ra, "b": rb}, test="sign")
    r = c.row("b", "map")
    assert r["delta"] == pytest.approx(rb["map"] - ra["map"], abs=1e-15)
    assert r["delta_min"] == pytest.approx(rb.bounds["map"][0] - ra.bounds["map"][1], abs=1e-12)
    assert r["delta_max"] == pytest.approx(rb.bounds["map"][1] - ra.bounds["map"][0], abs=1e-12)


def test_all_differences_zero_is_defined():
    for test in ("randomization", "t", "wilcoxon", "sign"):
        r = compare({"A": [0.3, 0.5, 0.1], "B": [0.3, 0.5, 0.1]}, test=test).row("B")
        assert (r["delta"], r["ci_low"], r["ci_high"], r["p_value"], r["effect_size"]) == (0, 0, 0, 1.0, 0.0)
        assert (r["wins"], r["ties"], r["losses"]) == (0, 3, 0)


def ap(grades):
    hits = np.flatnonzero(np.asarray(grades) > 0)
    return float(np.mean((np.arange(len(hits)) + 1) / (hits + 1))) if len(hits) else 0.0


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 1), min_size=5, max_size=5),
                          st.lists(st.integers(0, 1), min_size=5, max_size=5), st.integers(2, 5), st.integers(2, 5)),
                min_size=3, max_size=4), st.sampled_from([0.25, 0.5]))
def test_sign_verdict_matches_every_tie_order(queries, alpha):
    """The sign test's verdict from the two corners equals the enumeration over every tie order of both systems
    (each query: a ranking of 5 items whose first `size` items tie)."""
    diffs, gains_exp, lows, highs = [], [], [], []
    a_vals, b_vals, a_b, b_b = [], [], ([], []), ([], [])
    for ga, gb, sa, sb in queries:
        va = [ap(o) for o in tie_orders(ga, [sa, 5 - sa] if sa < 5 else [5])]
        vb = [ap(o) for o in tie_orders(gb, [sb, 5 - sb] if sb < 5 else [5])]
        diffs.append(sorted({x - y for x in va for y in vb}))
        a_vals.append(np.mean(va)); b_vals.append(np.mean(vb))
        a_b[0].append(min(va)); a_b[1].append(max(va)); b_b[0].append(min(vb)); b_b[1].append(max(vb))
    assume(math.prod(len(d) for d in diffs) <= 20_000)                   # keep the enumeration small
    g, lo, hi = difference_under_ties(a_vals, b_vals, a_b, b_b)
    assert np.allclose(lo, [d[0] for d in diffs]) and np.allclose(hi, [d[-1] for d in diffs])
    verdict = tie_robustness(g, lo, hi, "sign", alpha).verdict
    G = np.array(list(itertools.product(*diffs)))
    p_of = {(w, l): stats.binomtest(w, w + l).pvalue if w + l else 1.0
            for w in range(len(queries) + 1) for l in range(len(queries) + 1 - w)}
    held = {w > l and p_of[w, l] <= alpha for w, l in set(zip((G > 0).sum(1).tolist(), (G < 0).sum(1).tolist()))}
    assert verdict == ("every" if held == {True} else "none" if held == {False} else "some")


def test_cli_compare_on_reports_and_trec_runs(tmp_path):
    rng = np.random.default_rng(3)
    q, g = rng.integers(0, 2, (30, 16)), rng.integers(0, 2, (200, 16))
    ql, gl = rng.integers(0, 4, 30), rng.integers(0, 4, 200)
    for name, arr in [("q", q), ("g", g), ("q2", q ^ (rng.uniform(size=q.shape) < 0.1)), ("ql", ql), ("gl", gl)]:
        np.save(tmp_path / f"{name}.npy", arr)
    for name, codes in [("one", "q"), ("two", "q2")]:
        assert main(["evaluate", "--query-codes", str(tmp_path / f"{codes}.npy"), "--gallery-codes",
                     str(tmp_path / "g.npy"), "--query-labels", str(tmp_path / "ql.npy"), "--gallery-labels",
                     str(tmp_path / "gl.npy"), "--metrics", "map", "p@10", "--bounds", "--json",
                     str(tmp_path / f"{name}.json")], out=io.StringIO()) == 0
    buf = io.StringIO()
    assert main(["compare", str(tmp_path / "one.json"), str(tmp_path / "two.json"), "--test", "t", "--latex"],
                out=buf) == 0
    r1 = evaluate(q, g, ql, gl, ["map", "p@10"], bounds=True)
    r2 = evaluate(q ^ (np.load(tmp_path / "q2.npy") != q), g, ql, gl, ["map", "p@10"], bounds=True)
    assert buf.getvalue().strip() == compare({"one": r1, "two": r2}, test="t").to_latex()
    # trec-eval with several runs
    qrels = {f"t{i}": {f"d{j}": int(j % 3 == 0) for j in range(8)} for i in range(12)}
    runs = [{t: {f"d{j}": float(rng.integers(0, 4)) for j in range(8)} for t in qrels} for _ in range(2)]
    write_qrels(qrels, tmp_path / "qrels.txt")
    for i, run in enumerate(runs):
        write_run(run, tmp_path / f"run{i}.txt", tag=f"r{i}")
    buf = io.StringIO()
    assert main(["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run0.txt"), str(tmp_path / "run1.txt"),
                 "--compare", "-m", "map", "--test", "sign", "--ties", "expected", "--bounds", "--markdown"],
                out=buf) == 0
    ev = [evaluate_run(qrels, run, ["map"], ties="expected", bounds=True) for run in runs]
    assert buf.getvalue().strip() == compare({"r0": ev[0], "r1": ev[1]}, test="sign").to_markdown()
    assert main(["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run0.txt"), str(tmp_path / "run1.txt")],
                out=io.StringIO()) == 2                                        # several runs need --compare
    (tmp_path / "old.json").write_text(json.dumps(r1.to_dict()))
    assert main(["compare", str(tmp_path / "one.json"), str(tmp_path / "old.json")], out=io.StringIO()) == 2


def test_ranx_compare_agrees_where_ranx_imports():
    "ranx's paired t-test (scipy's ttest_rel) and its Monte Carlo Fisher test, on ranx's own evaluation of TREC runs."
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(0)
    qrels = {f"t{i}": {f"d{j}": int(j == 0 or rng.uniform() < 0.3) for j in range(20)} for i in range(25)}
    runs = {name: {t: {f"d{j}": float(rng.normal() + (0.5 * qrels[t][f"d{j}"] if name == "b" else 0))
                       for j in range(20)} for t in qrels} for name in "ab"}
    ours = {n: evaluate_run(qrels, runs[n], ["map"]) for n in "ab"}
    theirs = {}
    for test, stat_test in [("t", "student"), ("randomization", "fisher")]:
        rep = ranx.compare(ranx.Qrels(qrels), [ranx.Run(runs[n], name=n) for n in "ab"], ["map"], stat_test=stat_test,
                           n_permutations=20_000)
        theirs[test] = float(rep.comparisons[frozenset({"a", "b"})]["map"]["p_value"])
        assert rep.results["b"]["map"] == pytest.approx(ours["b"].summary["map"], abs=1e-12)
    c = compare(ours, test="t")
    assert close(c.row("b")["p_value"], theirs["t"], rel=1e-12)
    r = compare(ours, n_resamples=20_000).row("b")                    # both Monte Carlo: within 4 standard errors
    assert abs(r["p_value"] - theirs["randomization"]) <= 4 * math.sqrt(2) * max(r["mc_error"], 1 / 20_001)


def test_ranx_tukey_hsd_is_unpaired():
    """ranx's third test, Tukey's HSD, is scipy's tukey_hsd on the per-query values as independent samples (issue 44):
    equal to it to 1e-12, and blind to which query is which: one system's values moved to other queries leave its
    p-value as it was, while the paired t-test's changes."""
    ranx = pytest.importorskip("ranx")
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(44)
    qrels = {f"t{i}": {f"d{j}": int(j == 0 or rng.uniform() < 0.3) for j in range(20)} for i in range(25)}
    runs = {name: {t: {f"d{j}": float(rng.normal() + (shift * qrels[t][f"d{j}"])) for j in range(20)} for t in qrels}
            for name, shift in (("a", 0.0), ("b", 0.6), ("c", 1.2))}
    ours = {n: evaluate_run(qrels, runs[n], ["map"]) for n in "abc"}
    rep = ranx.compare(ranx.Qrels(qrels), [ranx.Run(runs[n], name=n) for n in "abc"], ["map"], stat_test="tukey")
    per_query = [np.array([ours[n].per_query["map"][i] for i in range(25)]) for n in "abc"]
    expected = stats.tukey_hsd(*per_query).pvalue
    for i, x in enumerate("abc"):
        for j, y in enumerate("abc"):
            if x != y:
                got = float(rep.comparisons[frozenset({x, y})]["map"]["p_value"])
                assert got == pytest.approx(expected[i, j], rel=1e-12, abs=1e-15), (x, y, got, expected[i, j])
    same = {t: qrels["t0"] for t in qrels}                    # one judgement list for every topic: a run moved to
    qrels, topics = same, list(same)                          # another topic keeps its value, so moving b's runs
    ours = {n: evaluate_run(qrels, runs[n], ["map"]) for n in "ab"}  # permutes its per-query values
    moved = {new: runs["b"][old] for old, new in zip(topics, topics[1:] + topics[:1])}
    both = ranx.compare(ranx.Qrels(qrels), [ranx.Run(runs["a"], name="a"), ranx.Run(moved, name="b")], ["map"],
                        stat_test="tukey")
    unpaired = ranx.compare(ranx.Qrels(qrels), [ranx.Run(runs["a"], name="a"), ranx.Run(runs["b"], name="b")],
                            ["map"], stat_test="tukey")
    p_moved, p_kept = (float(r.comparisons[frozenset({"a", "b"})]["map"]["p_value"]) for r in (both, unpaired))
    assert p_moved == pytest.approx(p_kept, rel=1e-12)        # Tukey's HSD does not see which query is which
    moved_ours = evaluate_run(qrels, moved, ["map"])
    assert sorted(moved_ours.per_query["map"]) == sorted(ours["b"].per_query["map"])
    t_kept = compare({"a": ours["a"], "b": ours["b"]}, test="t").row("b")["p_value"]
    t_moved = compare({"a": ours["a"], "b": moved_ours}, test="t").row("b")["p_value"]
    assert abs(t_kept - t_moved) > 1e-3                       # the paired test does
