"""Hostile input to `compare` and `retrieval-lit compare` (issues 33 and 34): work that cannot finish, differences that
overflow, report files that are not reports, a `metrics` of the wrong type; the direction of a significance mark
(it follows the test's own statistic, checked by hypothesis against statistics computed here); and the randomization
test's Monte Carlo error, checked by simulation."""
import copy
import io
import json
import math
import time
from contextlib import redirect_stderr
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

stats = pytest.importorskip("scipy.stats")

from retrieval_lit import evaluate
from retrieval_lit.cli import main
from retrieval_lit.compare import (MAX_RESAMPLED_VALUES, MAX_RESAMPLES, bootstrap_interval, check_resamples, compare,
                                   paired_t_test, randomization_test, run_test, sign_test, wilcoxon_test)
from retrieval_lit.evaluation import Report
from retrieval_lit.validate import RetrievalInputError

TESTS = ("randomization", "t", "wilcoxon", "sign")


# --- A: work that cannot finish is refused at once, naming n_resamples (--resamples) and the limit

@pytest.mark.parametrize("call", [
    lambda: compare({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.2]}, n_resamples=10 ** 12),
    lambda: compare({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.2]}, n_resamples=2 ** 63 - 1),
    lambda: bootstrap_interval([0.1, 0.2, 0.3], [0.2, 0.2, 0.2], n_resamples=2 ** 63 - 1),
    lambda: randomization_test(np.linspace(0, 1, 30), np.zeros(30), n_resamples=10 ** 12),
])
def test_too_many_resamples_refused_at_once(call):
    start = time.perf_counter()
    with pytest.raises(RetrievalInputError, match=r"^`n_resamples` must be at most 10,000,000 \(MAX_RESAMPLES"):
        call()
    assert time.perf_counter() - start < 1.0
    assert MAX_RESAMPLES == 10 ** 7


def test_resamples_times_queries_refused():
    n = 2_000                                                   # 10^7 x 2000 = 2e10 > 1e9
    systems = {"a": np.linspace(0, 1, n), "b": np.linspace(0, 1, n)[::-1].copy()}
    start = time.perf_counter()
    with pytest.raises(RetrievalInputError, match=r"^`n_resamples` x queries must be at most 1,000,000,000 .*"
                                                  r"10,000,000 x 2,000; at most 500,000 resamples"):
        compare(systems, n_resamples=MAX_RESAMPLES)
    with pytest.raises(RetrievalInputError, match="^`n_resamples` x queries"):
        bootstrap_interval(systems["a"], systems["b"], n_resamples=MAX_RESAMPLES)
    assert time.perf_counter() - start < 1.0
    assert check_resamples(500_000, 2_000) == 500_000 and 500_000 * 2_000 == MAX_RESAMPLED_VALUES
    # the exact randomization test (at most 20 queries) draws nothing: only the cap on the number applies
    assert randomization_test([0.5, 0.6, 0.7], [0.4, 0.4, 0.4], n_resamples=MAX_RESAMPLES).p_value == 0.25


def test_bootstrap_batch_memory_refused():
    with pytest.raises(RetrievalInputError, match="^`batch` x queries must be at most 134,217,728"):
        bootstrap_interval(np.linspace(0, 1, 30), np.zeros(30), n_resamples=10 ** 7, batch=10 ** 7)


# --- B: differences that overflow are refused, naming systems (and the query)

def test_overflowing_differences_refused():
    systems = {"b": [-1e308, 1e308, -1e308], "a": [1e308, -1e308, 1e308]}
    for test in TESTS:
        with pytest.raises(RetrievalInputError, match=r"^`systems` 'a' and 'b' differ on 'value' by more than float64 "
                                                      r"can sum .* a - b = inf at query 0"):
            compare(systems, test=test)
    # finite differences whose sum over the queries overflows: 3 x 1e308
    with pytest.raises(RetrievalInputError, match=r"^`systems` .* at query 1"):
        compare({"b": [0.0, -5e307, 0.0], "a": [0.0, 5e307, 1.0]})
    # the query is named as the user numbers it, NaN queries (left out) counted
    with pytest.raises(RetrievalInputError, match="at query 3"):
        compare({"b": [np.nan, 0.1, 0.2, -1e308], "a": [0.3, 0.1, 0.2, 1e308]})
    for f in (paired_t_test, randomization_test, wilcoxon_test, sign_test, bootstrap_interval):
        with pytest.raises(RetrievalInputError, match="^`a` and `b` differ by more than float64 can sum"):
            f(systems["a"], systems["b"])


def test_large_but_summable_differences_are_tested():
    "Differences near 1e300 sum without overflow; the t statistic is scale-free, so it equals that of the scaled values."
    a, b = np.array([3e300, 5e300, 4e300, 6e300]), np.zeros(4)
    ref = stats.ttest_rel(a / 1e300, b)
    r = paired_t_test(a, b)
    assert math.isclose(r.statistic, ref.statistic, rel_tol=1e-12) and math.isclose(r.p_value, ref.pvalue, rel_tol=1e-12)
    row = compare({"b": b, "a": a}, test="t").row("a")
    assert math.isclose(row["delta"], 4.5e300, rel_tol=1e-15) and row["p_value"] == r.p_value


# --- D: metrics of the wrong type

@pytest.mark.parametrize("metrics", [5, 5.0, None.__class__, [5], [], ["value", "value"]])
def test_metrics_of_the_wrong_type(metrics):
    with pytest.raises(RetrievalInputError, match="^`metrics` "):
        compare({"a": [0.1, 0.2, 0.3], "b": [0.2, 0.2, 0.2]}, metrics=metrics)


# --- C: report files that are not reports: one line, exit 2, the file, the system, the query

def _reports(tmp_path):
    rng = np.random.default_rng(0)
    rel = (rng.uniform(size=(6, 8)) < 0.4).astype(int)
    rel[:, 0] = 1
    one = evaluate(scores=rng.uniform(size=(6, 8)), relevance=rel, metrics=["map", "p@2"], bounds=True)
    two = evaluate(scores=rng.uniform(size=(6, 8)), relevance=rel, metrics=["map", "p@2"], bounds=True)
    (tmp_path / "one.json").write_text(json.dumps(one.to_dict(per_query=True)))
    return one, two.to_dict(per_query=True)


def _run(*argv):
    err, out = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        code = main(list(argv), out=out)
    return code, err.getvalue()


def _set(path, value):
    def mutate(d):
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return mutate


HOSTILE = [  # (name, change to the second report's dict or its JSON text, what the message must hold)
    ("short", lambda d: d["per_query"]["map"].pop(), "['per_query']['map'] holds 5 values for the report's 6 queries"),
    ("dict", _set(["per_query", "map"], {"q": 1}), "['per_query']['map'] must be a list of 6 per-query values"),
    ("nested", _set(["per_query", "map", 2], [0.5]), "['per_query']['map'][2] (query 2) must be a number or null"),
    ("string", _set(["per_query"], "map"), "['per_query'] must be a dictionary"),
    ("text", _set(["per_query", "map", 3], "0.5"), "['per_query']['map'][3] (query 3) must be a number or null, got '0.5'"),
    ("boolean", _set(["per_query", "p@2", 1], True), "['per_query']['p@2'][1] (query 1) must be a number or null, got True"),
    ("mean", _set(["metrics", "map"], "high"), "['metrics']['map'] must be a number or null, got 'high'"),
    ("mean_list", _set(["metrics", "map"], [0.5]), "['metrics']['map'] must be a number or null, got a list"),
    ("count", _set(["n_queries"], "6"), "['n_queries'] must be a whole number >= 0, got '6'"),
    ("count_float", _set(["n_queries"], 6.5), "['n_queries'] must be a whole number >= 0, got 6.5"),
    ("bounds", lambda d: d["per_query_bounds"]["map"]["max"].pop(), "['per_query_bounds']['map']['max'] holds 5 values"),
    ("conventions", _set(["conventions", "ties"], "sometimes"), "['conventions'] are not conventions: `ties`"),
    ("unknown", _set(["metrics", "zzz"], 0.5), "['metrics'] names 'zzz', which is not a metric name"),
    ("no_metrics", lambda d: d.pop("metrics"), "holds no 'metrics'"),
    ("infinity", lambda d: "INF4", "['per_query']['map'][4] (query 4) must be a finite number or null"),
    ("deep", lambda d: "DEEP", "nested too deeply"),
    ("digits", lambda d: "DIGITS", "not a JSON file written by `evaluate --json`"),
    ("array", lambda d: "ARRAY", "holds a JSON list, not an object"),
]


@pytest.mark.parametrize("name, change, expected", HOSTILE, ids=[h[0] for h in HOSTILE])
def test_cli_compare_hostile_report_files(tmp_path, name, change, expected):
    _, two = _reports(tmp_path)
    d = copy.deepcopy(two)
    kind = change(d)
    text = json.dumps(d)
    if kind == "INF4":                                     # the JSON literal Infinity (Python's json reads it)
        d["per_query"]["map"][4] = float("inf")
        text = json.dumps(d)
        assert "Infinity" in text
    elif kind == "DEEP":
        text = "[" * 200_000 + "]" * 200_000
    elif kind == "DIGITS":
        text = json.dumps(d).replace('"n_queries": 6', '"n_queries": ' + "9" * 5000)
    elif kind == "ARRAY":
        text = "[1, 2]"
    path = tmp_path / f"{name}.json"
    path.write_text(text)
    code, err = _run("compare", str(tmp_path / "one.json"), str(path))
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith("retrieval-lit: error: `reports` ") and str(path) in lines[0], err
    assert expected in lines[0], err
    if name not in ("deep", "digits", "array", "no_metrics"):
        assert f"(system '{name}')" in lines[0], err


def test_cli_compare_files_with_names(tmp_path):
    _, two = _reports(tmp_path)
    two["per_query"]["map"][5] = "x"
    (tmp_path / "two.json").write_text(json.dumps(two))
    code, err = _run("compare", str(tmp_path / "one.json"), str(tmp_path / "two.json"), "--names", "base", "new")
    assert code == 2 and "(system 'new')" in err and "['per_query']['map'][5] (query 5)" in err


def test_report_from_dict_refuses_with_d():
    with pytest.raises(RetrievalInputError, match=r"^`d` is not a report's dictionary .*\['per_query'\]\['m'\]"):
        Report.from_dict({"metrics": {"map": 0.5}, "conventions": {}, "n_queries": 2, "n_gallery": 3,
                          "per_query": {"m": [0.5]}})
    with pytest.raises(RetrievalInputError, match=r"^`d` is not a report's dictionary .*it lacks 'n_gallery'"):
        Report.from_dict({"metrics": {"map": 0.5}, "conventions": {}, "n_queries": 2})
    with pytest.raises(RetrievalInputError, match=r"^`d` is not a report's dictionary .*must be a dictionary, got str"):
        Report.from_dict("report")


def test_report_round_trip_keeps_precision():
    r = evaluate(scores=np.array([[0.5, 0.2, 0.1]]), relevance=np.array([[1, 0, 1]]), metrics=["map"],
                 precision="float32")
    back = Report.from_dict(json.loads(json.dumps(r.to_dict(per_query=True))))
    assert back.precision == "float32" and back.means == r.means


def test_cli_resamples_named(tmp_path):
    one, two = _reports(tmp_path)
    (tmp_path / "two.json").write_text(json.dumps(two))
    start = time.perf_counter()
    code, err = _run("compare", str(tmp_path / "one.json"), str(tmp_path / "two.json"), "--resamples", "1000000000000")
    assert code == 2 and err.startswith("retrieval-lit: error: `--resamples` must be at most 10,000,000")
    assert time.perf_counter() - start < 2
    # resamples x queries: 200 queries x 10^7 resamples
    rng = np.random.default_rng(1)
    big = {}
    for name in ("x", "y"):
        r = Report({"map": 0.5}, {"map": rng.uniform(size=200)}, {}, one.conventions, 200, 10, None)
        big[name] = tmp_path / f"{name}.json"
        big[name].write_text(json.dumps(r.to_dict(per_query=True)))
    code, err = _run("compare", str(big["x"]), str(big["y"]), "--resamples", str(MAX_RESAMPLES))
    assert code == 2 and err.startswith("retrieval-lit: error: `--resamples` x queries must be at most 1,000,000,000")


def test_report_inf_in_memory_named_by_position():
    "An in-memory report's infinity is named by its position, though another system's NaN leaves query 0 out."
    conv = evaluate(scores=np.array([[0.5, 0.2]]), relevance=np.array([[1, 0]]), metrics=["map"]).conventions
    a = Report({"map": 0.5}, {"map": np.array([np.nan, 0.2, np.inf, 0.1])}, {}, conv, 4, 10, None)
    b = Report({"map": 0.5}, {"map": np.array([0.3, 0.2, 0.1, 0.1])}, {}, conv, 4, 10, None)
    with pytest.raises(RetrievalInputError, match=r"^`systems` \['a'\] holds an infinite value at query 2"):
        compare({"a": a, "b": b})
    short = replace(b, per_query={"map": np.array([0.3, 0.2, 0.1])})
    with pytest.raises(RetrievalInputError, match=r"^`systems` \['b'\] holds 3 values of 'map' for its 4 queries"):
        compare({"a": replace(a, per_query={"map": np.array([0.1, 0.2, 0.3, 0.4])}), "b": short})


# --- E: the mark follows the test's own statistic

def test_sign_test_mark_follows_wins():
    "15 wins of 0.01 and one loss of 1: the mean says worse, the sign test says better (p = 2 * 17 / 2^16)."
    c = compare({"base": [0.0] * 16, "new": [0.01] * 15 + [-1.0]}, test="sign")
    r = c.row("new")
    assert (r["wins"], r["losses"]) == (15, 1) and r["delta"] < 0
    assert r["p_value"] == stats.binomtest(15, 16).pvalue == 2 * 17 / 2 ** 16
    assert r["direction"] == 1 and c._mark(r) == "†"
    assert "| new | -0.0531† |" in c.to_markdown() and "‡" not in c.to_markdown().splitlines()[3]
    t = compare({"base": [0.0] * 16, "new": [0.01] * 15 + [-1.0]}, test="t").row("new")
    assert t["direction"] == -1                          # the t-test reads the mean: B's way (not significant here)


def _independent_direction(test, a, b):
    "The sign of each test's own statistic, computed here: wins - losses, R+ - R-, the mean difference."
    d = np.asarray(a, float) - np.asarray(b, float)
    if test == "sign":
        return np.sign((d > 0).sum() - (d < 0).sum())
    if test == "wilcoxon":
        nz = d[d != 0]
        if not len(nz):
            return 0
        ranks = stats.rankdata(np.abs(nz))
        return np.sign(ranks[nz > 0].sum() - ranks[nz < 0].sum())
    return np.sign(np.mean(d))


grid = st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0])
samples = st.integers(4, 30).flatmap(lambda n: st.tuples(
    st.lists(st.one_of(grid, st.floats(0, 1)), min_size=n, max_size=n),
    st.lists(st.one_of(grid, st.floats(0, 1)), min_size=n, max_size=n),
    st.lists(st.one_of(grid, st.floats(0, 1)), min_size=n, max_size=n)))


@settings(max_examples=60, deadline=None)
@given(samples, st.sampled_from(TESTS), st.sampled_from(["map", "egr@10"]), st.floats(-0.3, 0.3))
def test_every_mark_agrees_with_its_tests_statistic(v, test, metric, shift):
    base, x, y = (np.array(s) for s in v)
    x = np.clip(x + shift, 0, 1)
    systems = {"base": {metric: base}, "x": {metric: x}, "y": {metric: y}}
    c = compare(systems, test=test, confidence=0.6, n_resamples=200, correction="none")   # alpha 0.4: many marks
    higher = metric == "map"
    for r in c.rows:
        a, b = systems[r["system"]][metric], systems[r["baseline"]][metric]
        way = _independent_direction(test, a, b) * (1 if higher else -1)
        assert r["direction"] == way
        assert r["direction"] == run_test(test, a, b, 200).direction * (1 if higher else -1)
        mark = c._mark(r)
        if r["p_adjusted"] > c.alpha:
            assert mark == ""
        else:
            assert mark == {1: "†", -1: "‡", 0: ""}[way]


# --- F: the randomization test's Monte Carlo error is sqrt(p (2 - p) / B)

def test_monte_carlo_error_matches_simulation():
    "Over 400 seeds, the SD of the Monte Carlo p-values matches sqrt(p (2 - p) / B) at the exact p, not sqrt(p (1 - p) / B)."
    rng = np.random.default_rng(2)
    for n_, shift in [(40, 0.0), (40, 0.08), (100, 0.03), (297, 0.02)]:
        rng.uniform(0, 1, n_), rng.uniform(0, 1, n_)                  # the chapter's draws before its 20-query case
    a, b = rng.uniform(0, 1, 20) + 0.2, rng.uniform(0, 1, 20)
    exact = randomization_test(a, b).p_value
    B = 2_000
    ps = np.array([randomization_test(a, b, n_resamples=B, seed=s, exact_up_to=0).p_value for s in range(400)])
    sd, new, old = ps.std(ddof=1), math.sqrt(exact * (2 - exact) / B), math.sqrt(exact * (1 - exact) / B)
    # the SD of 400 draws is within 4 of its standard errors (about sd / sqrt(800)) of the truth
    assert abs(sd - new) <= 4 * new / math.sqrt(2 * 399), (sd, new, old)
    assert abs(sd - old) > 4 * old / math.sqrt(2 * 399)
    assert abs(ps.mean() - exact) <= 4 * new / math.sqrt(400)
    r = randomization_test(a, b, n_resamples=B, seed=0, exact_up_to=0)
    assert r.mc_error == math.sqrt(r.p_value * (2 - r.p_value) / B)


# --- G (issue 46): the paper's tables keep the tie verdict, and take a caption, a label, decimals, p-values, intervals

def _tied_case():
    "Chapter 53's constructed case: A beats B on every query's exact mean, but B's three all-tied queries flip it."
    relevance = np.tile([1, 1, 0, 0, 0, 0], (10, 1))
    scores_a = np.tile([6.0, 4, 5, 3, 2, 1], (10, 1))
    scores_b = np.tile([5.0, 3, 6, 4, 2, 1], (10, 1))
    scores_b[7:] = 1.0
    ra, rb = (evaluate(scores=s, relevance=relevance, metrics=["map", "p@2"], bounds=True)
              for s in (scores_a, scores_b))
    return compare({"B": rb, "A": ra}, test="sign")


def test_the_tie_verdict_reaches_latex_and_markdown():
    c = _tied_case()
    r = c.row("A", "map")
    assert r["under_ties"] == "some" and r["p_adjusted"] <= c.alpha
    assert "0.0020†§" in c.table()
    assert "| A | **0.8333**†§ | **0.5000** |" in c.to_markdown()
    tex = c.to_latex()
    assert r"A & \textbf{0.8333}$^{\dagger\S}$ & \textbf{0.5000} \\" in tex
    for legend in (c.to_markdown().splitlines()[-1], c.legend()):
        assert "§: better than the baseline B at alpha = 0.05 under some tie orders but not under all" in legend
    assert r"\S{}: better than the baseline B at alpha = 0.05 under some tie orders but not under all" in tex
    assert "<b>0.8333</b>†§" in c._repr_html_()
    pairs = compare({"B": c.values["map"]["B"], "A": c.values["map"]["A"]}, test="sign", baseline="all")
    assert "§" not in pairs.to_markdown()                 # per-query arrays: no tie ranges, no verdict, no §


def test_a_tie_mark_alone_and_no_mark():
    "A row not significant on the exact means but significant at one extreme tie order: § alone; 'every': none."
    c = _tied_case()
    row = dict(c.row("A", "map"), p_adjusted=0.3, p_value=0.3)
    alone = replace(c, rows=[row if r["metric"] == "map" else r for r in c.rows])
    assert "| A | **0.8333**§ | **0.5000** |" in alone.to_markdown()
    assert r"\textbf{0.8333}$^{\S}$ &" in alone.to_latex()
    every = replace(c, rows=[dict(r, under_ties="every") for r in c.rows])
    assert "§" not in every.to_markdown() and r"\S" not in every.to_latex()


def test_table_options_in_both_markups():
    c = _tied_case()
    tex = c.to_latex(caption="Mean AP and P@2 of $A$ against $B$.", label="tab:ties", decimals=2, p_values=True,
                     intervals=True)
    lines = tex.splitlines()
    assert lines[:4] == [r"\begin{table}[t]", r"\centering", r"\caption{Mean AP and P@2 of $A$ against $B$.}",
                         r"\label{tab:ties}"]
    assert lines[-1] == r"\end{table}" and lines[-3] == r"\par\smallskip"
    r = c.row("A", "map")
    assert (rf"A & \textbf{{0.83}}$^{{\dagger\S}}$ {{\scriptsize (p = 0.0020)}} "
            rf"{{\scriptsize [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]}}") in tex
    assert r"p: the Holm-adjusted p-value; [ ]: the 95\% paired bootstrap interval of the difference\par}" in tex
    md = c.to_markdown(caption="Mean AP.", label="tbl:ties", decimals=3, intervals=True).splitlines()
    assert md[:3] == ["Table: Mean AP. {#tbl:ties}", "", "| system | map | p@2 |"]
    assert md[5].startswith(f"| A | **0.833**†§ [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}] |")
    assert c.to_latex(decimals=4) == c.to_latex() and c.to_markdown(p_values=False) == c.to_markdown()
    every = compare({"x": [0.1, 0.5, 0.2, 0.9], "y": [0.2, 0.4, 0.4, 0.5], "z_1": [0.3, 0.1, 0.2, 0.2]},
                    baseline="all", test="t")
    head = every.to_markdown().splitlines()[0]
    assert head == "| metric | system | vs | delta | 95% CI | p adj |"          # all pairs: both columns by default
    assert every.to_markdown(p_values=False, intervals=False).splitlines()[0] == "| metric | system | vs | delta |"
    assert r"value & x & z\_1 & " in every.to_latex(decimals=2, p_values=False, intervals=False)


@pytest.mark.parametrize("kwargs, name, says", [
    (dict(caption=3), "caption", "must be a string (one line of text), got int"),
    (dict(caption=""), "caption", "must be one non-empty line of text, got a blank one"),
    (dict(caption="one\ntwo"), "caption", "got 2 lines"),
    (dict(label="tab:x"), "label", "needs a `caption`"),
    (dict(caption="c", label="tab x"), "label", "must be letters, digits and : . _ -"),
    (dict(caption="c", label=["tab:x"]), "label", "must be letters, digits and : . _ -"),
    (dict(decimals=0), "decimals", "must be at least 1, got 0"),
    (dict(decimals=99), "decimals", "must be at most 10, got 99"),
    (dict(decimals="3"), "decimals", "must be a whole number"),
    (dict(decimals=True), "decimals", "must be a whole number"),
    (dict(p_values="no"), "p_values", "must be True or False or None"),
    (dict(intervals=0), "intervals", "must be True or False or None"),
])
@pytest.mark.parametrize("method", ["to_latex", "to_markdown"])
def test_bad_table_options_are_refused_naming_them(method, kwargs, name, says):
    c = _tied_case()
    with pytest.raises(RetrievalInputError) as e:
        getattr(c, method)(**kwargs)
    assert str(e.value).startswith(f"`{name}` ") and says in str(e.value), str(e.value)


def test_names_are_escaped_in_each_markup():
    c = compare({"base_1": [0.1, 0.2, 0.3, 0.4], "a|b 50%&#": [0.2, 0.3, 0.4, 0.6]}, test="t")
    assert r"| a\|b 50%&# |" in c.to_markdown()
    tex = c.to_latex(caption="c")
    assert r"a|b 50\%\&\# & " in tex and r"base\_1 & " in tex and "baseline base\\_1" in tex


def test_the_command_line_passes_the_table_options(tmp_path, capsys):
    from retrieval_lit.trec import evaluate_run, write_qrels, write_run
    rng = np.random.default_rng(46)
    qrels = {f"t{i}": {f"d{j}": int(j % 3 == 0) for j in range(8)} for i in range(12)}
    runs = [{t: {f"d{j}": float(rng.integers(0, 4)) for j in range(8)} for t in qrels} for _ in range(2)]
    write_qrels(qrels, tmp_path / "qrels.txt")
    for i, run in enumerate(runs):
        write_run(run, tmp_path / f"run{i}.txt", tag=f"r{i}")
    base = ["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run0.txt"), str(tmp_path / "run1.txt"),
            "--compare", "-m", "map", "--test", "sign", "--ties", "expected", "--bounds"]
    ev = [evaluate_run(qrels, run, ["map"], ties="expected", bounds=True) for run in runs]
    c = compare({"r0": ev[0], "r1": ev[1]}, test="sign")
    for fmt, method in (("--latex", c.to_latex), ("--markdown", c.to_markdown)):
        buf = io.StringIO()
        assert main(base + [fmt, "--caption", "MAP of two runs.", "--label", "tab:runs", "--decimals", "3",
                            "--p-values", "--intervals"], out=buf) == 0
        assert buf.getvalue().strip() == method(caption="MAP of two runs.", label="tab:runs", decimals=3,
                                                p_values=True, intervals=True)
    for extra, says in [(["--caption", "x"], "`--caption` shapes the --latex and --markdown tables"),
                        (["--latex", "--decimals", "0"], "`--decimals` must be at least 1, got 0"),
                        (["--markdown", "--label", "tab:x"], "`--label` needs a --caption"),
                        (["--latex", "--caption", "a", "--label", "a b"], "`--label` must be letters")]:
        buf = io.StringIO()
        assert main(base + extra, out=buf) == 2 and buf.getvalue() == ""
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
