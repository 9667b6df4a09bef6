"""Issue 46 (TREC part): every pytrec_eval measure in `evaluate_run` and `trec-eval`, ranx's names on runs, Judged@k's
completeness, the raw errors; checked against the installed pytrec_eval 0.5.11, ranx 0.3.21 (in a process of its own)
and ir_measures, and every order of the tied documents."""
import io
import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from retrieval_lit import trec as trec_module
from retrieval_lit.cli import main
from retrieval_lit.trec import evaluate_run, parse_measures, rank_run, trec_order, write_qrels, write_run
from retrieval_lit.validate import RetrievalInputError

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (a dev dependency) is the oracle here")
from test_trec import random_case  # noqa: E402

# the 17 families issue 46 names, as pytrec_eval prints them with their default parameters
NEW = ["infAP", "gm_bpref", "utility", "11pt_avg", "binG", "G", "ndcg_rel", "Rndcg", "set_P", "set_relative_P",
       "set_recall", "set_map", "set_F", "num_nonrel_judged_ret"] + \
      [f"Rprec_mult_{x:3.2f}" for x in trec_module.RPREC_MULTIPLES] + [f"relative_P_{k}" for k in trec_module.CUTOFFS]
PER_TOPIC_NEW = [n for n in NEW if n != "gm_bpref"]


def pytrec(qrels, run, measures=None):
    return pytrec_eval.RelevanceEvaluator(qrels, measures or pytrec_eval.supported_measures).evaluate(run)


# ---------------------------------------------------------------- every new measure, bit for bit
@pytest.mark.parametrize("seed", range(4))
def test_new_measures_equal_pytrec_eval_bit_for_bit(seed):
    "Random runs with ties, graded and negative judgements, a judged topic the run lacks, a run topic the qrels lack."
    rng = np.random.default_rng(4600 + seed)
    for _ in range(40):
        qrels, run = random_case(rng)
        assert "0" in run and "0" not in qrels and "1" in qrels and "1" not in run
        ours, theirs = evaluate_run(qrels, run, "all_trec").to_dict(), pytrec(qrels, run)
        assert sorted(ours) == sorted(theirs)
        for q in ours:
            for name in PER_TOPIC_NEW:
                assert ours[q][name] == theirs[q][name], (q, name, ours[q][name], theirs[q][name])
        log = evaluate_run(qrels, run, ["gm_bpref"]).per_query["gm_bpref"]
        assert log.tolist() == [theirs[p]["gm_bpref"] for p in sorted(theirs)]   # the logs pytrec_eval gives


def test_new_measures_on_trec_evals_test_files():
    from test_trec import DATA
    qrels, run = trec_module.read_qrels(DATA / "qrels.test"), trec_module.read_run(DATA / "results.test")
    ours, theirs = evaluate_run(qrels, run, "all_trec").to_dict(), pytrec(qrels, run)
    for q in ours:
        assert {n: ours[q][n] for n in PER_TOPIC_NEW} == {n: theirs[q][n] for n in PER_TOPIC_NEW}, q
    lines = {l.split("\t")[1]: l.rstrip("\n").split("\t")[2] for l in open(DATA / "out.test.aq")
             if l.startswith("relstring")}
    assert {q: f"'{t}'" for q, t in zip(sorted(ours), (ours[q]["relstring"] for q in sorted(ours)))} == lines


@pytest.mark.parametrize("ours_name, theirs_spec, theirs_names", [
    ("set_F.0.5", "set_F.0.5", {"set_F_0.5": "set_F"}),
    ("11pt_avg.0.2,0.5,0.8", "11pt_avg.0.2,0.5,0.8", {"11pt_avg_0.2,0.5,0.8": "11pt_avg"}),
    ("Rprec_mult.0.5,1.5", "Rprec_mult.0.5,1.5",
     {"Rprec_mult_0.50": "Rprec_mult_0.50", "Rprec_mult_1.50": "Rprec_mult_1.50"}),
    ("relative_P.3,7", "relative_P.3,7", {"relative_P_3": "relative_P_3", "relative_P_7": "relative_P_7"}),
])
def test_parameters_as_pytrec_eval_reads_them(ours_name, theirs_spec, theirs_names):
    rng = np.random.default_rng(46)
    for _ in range(20):
        qrels, run = random_case(rng)
        ours, theirs = evaluate_run(qrels, run, [ours_name]).to_dict(), pytrec(qrels, run, {theirs_spec})
        for q in ours:
            assert {n: ours[q][n] for n in theirs_names} == {n: theirs[q][t] for n, t in theirs_names.items()}


def test_utility_coefficients_and_relstring_length_by_hand():
    "pytrec_eval reads neither (its utility refuses four coefficients, relstring is 0): the definitions by hand."
    qrels = {"q": {"a": 1, "b": 0, "c": 1, "d": 2, "e": -1}}
    run = {"q": {"a": 5.0, "b": 4.0, "x": 3.0, "e": 2.0, "c": 1.0}}   # retrieved 5, relevant a, c (R = 3)
    r = evaluate_run(qrels, run, ["utility.2,-1,0.5,0", "relstring.3", "relstring", "utility"], ties="trec_eval")
    assert r.summary["utility_2,-1,0.5,0"] == 2 * 2 - 1 * 3 + 0.5 * 1
    assert r.summary["utility"] == 2 - 3
    assert r.texts == {"relstring_3": ["10-"], "relstring": ["10-.1"]}
    assert "relstring_3" not in r.summary and r.lines(per_query=True)[0] == f"{'relstring_3':<22}\tq\t'10-'"


# ---------------------------------------------------------------- under ties
def every_order(run_topic: dict):
    ranked = trec_order(run_topic)
    groups = [list(g) for _, g in itertools.groupby(ranked, key=lambda item: item[1])]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        docs = [d for group in combo for d, _ in group]
        yield {d: float(len(docs) - i) for i, d in enumerate(docs)}


EXACT = ["Rprec_mult_0.60", "Rprec_mult_1.00", "Rprec_mult_1.40", "relative_P_5", "binG", "Rndcg", "set_P", "set_F",
         "set_map", "utility", "num_nonrel_judged_ret"]
RANGE_ONLY = ["11pt_avg", "gm_bpref", "ndcg_rel"]


@pytest.mark.parametrize("seed", range(4))
def test_expected_and_bounds_over_every_tie_order(seed):
    "The mean and the range over every order of the tied documents, each order scored by pytrec_eval."
    rng = np.random.default_rng(4650 + seed)
    for _ in range(12):
        qrels, run = random_case(rng, n_topics=3, n_docs=12, max_ret=7, score_values=2)
        qrels, run = {q: v for q, v in qrels.items() if q in run}, {q: v for q, v in run.items() if q in qrels}
        if not qrels:
            continue
        expected = evaluate_run(qrels, run, EXACT, ties="expected")
        bounded = evaluate_run(qrels, run, EXACT + RANGE_ONLY, bounds=True)
        for i, q in enumerate(bounded.qids):
            every = [pytrec(qrels, {q: order})[q] for order in every_order(run[q])]
            for m in EXACT + RANGE_ONLY:
                values = [v[m] for v in every]
                assert bounded.bounds[m][0][i] == pytest.approx(min(values), abs=1e-12), (q, m)
                assert bounded.bounds[m][1][i] == pytest.approx(max(values), abs=1e-12), (q, m)
                if m in EXACT:
                    assert expected.per_query[m][i] == pytest.approx(np.mean(values), abs=1e-12), (q, m)


def rewritten(run_topic: dict, qrels_topic: dict, ties: str) -> dict:
    "The topic's run with distinct scores in the order `ties` names: inside a tie, higher grades first (optimistic)."
    ranked = trec_order(run_topic)
    grade = lambda d: max(qrels_topic.get(d, 0), 0)
    order = []
    for _, g in itertools.groupby(ranked, key=lambda item: item[1]):
        docs = [d for d, _ in g]
        order += sorted(docs, key=grade, reverse=ties == "optimistic") if ties != "trec_eval" else docs
    return {d: float(len(order) - i) for i, d in enumerate(order)}


@pytest.mark.parametrize("ties", ["optimistic", "pessimistic"])
def test_fixed_orders_are_pytrec_eval_on_those_orders(ties):
    "infAP, G and relstring have no mean or range here, but each fixed order is pytrec_eval's on the run so ordered."
    rng = np.random.default_rng(4660)
    for _ in range(30):
        qrels, run = random_case(rng, score_values=2)
        ours = evaluate_run(qrels, run, ["infAP", "G", "binG", "Rndcg", "ndcg_rel", "relstring"], ties=ties)
        for i, q in enumerate(ours.qids):
            theirs = pytrec(qrels, {q: rewritten(run[q], qrels[q], ties)})[q]
            for m in ("infAP", "G", "binG", "Rndcg", "ndcg_rel"):
                assert ours.per_query[m][i] == theirs[m], (q, m)
            code = lambda d: "-" if d not in qrels[q] else "." if qrels[q][d] < 0 else str(qrels[q][d])
            assert ours.texts["relstring"][i] == "".join(code(d) for d in list(rewritten(run[q], qrels[q], ties))[:10])


def test_infap_extremes_are_not_at_the_fixed_orders():
    "Why infAP's range is refused: a relevant document above a tied pooled-unjudged one can score lower."
    qrels = {"q": {"r": 1, "p": -1}}                             # p: in the pool, not judged
    run = {"q": {f"n{i}": 2.0 for i in range(9)} | {"r": 1.0, "p": 1.0}}   # nine outside the pool; r, p tie at 10-11
    values = [pytrec(qrels, {"q": order})["q"]["infAP"] for order in every_order(run["q"])]
    optimistic = evaluate_run(qrels, run, ["infAP"], ties="optimistic").summary["infAP"]
    assert optimistic == pytest.approx(min(values)) and max(values) > optimistic + 0.03   # relevant first: the minimum
    with pytest.raises(RetrievalInputError, match="`bounds` is True, but infAP has no exact range here"):
        evaluate_run(qrels, run, ["infAP"], bounds=True)


@pytest.mark.parametrize("name, ties, bounds, message", [
    ("infAP", "expected", False, "`ties` is 'expected', but infAP has no closed form"),
    ("G", "expected", False, "`ties` is 'expected', but G has no closed form"),
    ("ndcg_rel", "expected", False, "`ties` is 'expected', but ndcg_rel has no closed form"),
    ("11pt_avg", "expected", False, "`ties` is 'expected', but 11pt_avg has no closed form"),
    ("gm_bpref", "expected", False, "`ties` is 'expected', but gm_bpref has no closed form"),
    ("relstring", "expected", False, "`ties` is 'expected', but relstring: it is text, which has no mean"),
    ("G", "trec_eval", True, "`bounds` is True, but G has no exact range here"),
    ("relstring", "optimistic", True, "`bounds` is True, but relstring has no exact range here"),
])
def test_refusals_name_the_measure(name, ties, bounds, message):
    qrels, run = {"q": {"a": 1, "b": 0}}, {"q": {"a": 1.0, "b": 1.0}}
    with pytest.raises(RetrievalInputError) as e:
        evaluate_run(qrels, run, [name, "map"], ties=ties, bounds=bounds)
    assert message in str(e.value)
    left = evaluate_run(qrels, run, [name, "map"], ties=ties, bounds=bounds, skip_unsupported=True)
    assert name not in left.summary and name not in left.texts and "map" in left.summary


def test_order_free_measures_are_one_value_under_every_tie_mode():
    qrels, run = {"q": {"a": 1, "b": 0, "c": 2}}, {"q": {"a": 1.0, "b": 1.0, "d": 1.0, "c": 0.5}}
    names = ["set_P", "set_recall", "set_relative_P", "set_map", "set_F", "utility", "num_nonrel_judged_ret"]
    reports = [evaluate_run(qrels, run, names, ties=t, bounds=True) for t in trec_module.TREC_TIES]
    for r in reports:
        assert r.summary == reports[0].summary and all(r.summary_bounds[n] == (r.summary[n],) * 2 for n in names)


# ---------------------------------------------------------------- names and errors
@pytest.mark.parametrize("spec, message", [
    ("utility.1,-1,0,1", "give p4 = 0"),
    ("utility.1,-1", "utility takes four coefficients p1,p2,p3,p4, got 2"),
    ("set_F.-1", "set_F takes one weight beta >= 0"),
    ("relstring.0", "relstring takes one length from 1"),
    ("relative_P.0", "cutoffs are whole numbers from 1"),
    ("Rprec_mult.0", "multiples of R are positive"),
    ("11pt_avg.0.5,0.2", "give the recall levels ascending"),
    ("G.1=3,2=9", "trec_eval's gain parameters ('rel=gain') are not read here"),
    ("Rndcg.1=2", "trec_eval's gain parameters"),
    ("ranx:f1@10", "`measures` 'ranx:f1@10': ranx's f1"),
    ("judged_" + "9" * 200, "`measures` 'judged_9"),
])
def test_bad_parameters_are_refused_by_name(spec, message):
    with pytest.raises(RetrievalInputError) as e:
        parse_measures(spec)
    assert message in str(e.value) and str(e.value).startswith("`measures` ")


def test_infap_is_known_and_all_trec_is_trec_evals():
    assert [m.name for m in parse_measures("infAP")] == ["infAP"]
    families = {m.family for m in parse_measures("all_trec")}
    assert families == set(trec_module.MEASURE_ORDER) - set(trec_module.NOT_TREC_EVAL)
    py = {n.split(".")[0] for n in pytrec_eval.supported_measures}
    assert families == py                                               # every pytrec_eval family, no other


@pytest.mark.parametrize("measures, message", [
    (None, "`measures` must be a measure name or a list of names"),
    (7, "`measures` must be a measure name or a list of names"),
    ({"map": 1}, "`measures` must be a measure name or a list of names"),
])
def test_measures_that_are_not_names_are_refused(measures, message):
    with pytest.raises(RetrievalInputError, match=message):
        evaluate_run({"q": {"a": 1}}, {"q": {"a": 1.0}}, measures)


def cli_error(*argv):
    err = io.StringIO()
    from contextlib import redirect_stderr
    with redirect_stderr(err):
        code = main(list(argv), out=io.StringIO())
    return code, err.getvalue()


def test_trec_eval_m_errors_name_the_option(tmp_path):
    write_qrels({"q": {"a": 1}}, tmp_path / "q.txt")
    write_run({"q": {"a": 1.0}}, tmp_path / "r.txt")
    files = [str(tmp_path / "q.txt"), str(tmp_path / "r.txt")]
    for spec, text in (("judged_" + "9" * 200, "holds a number of 200 digits"), ("mAP", "unknown measure 'mAP'"),
                       ("utility.1,1,1,1", "give p4 = 0")):
        code, err = cli_error("trec-eval", *files, "-m", spec)
        assert code == 2 and err.startswith("retrieval-lit: error: `-m` ") and text in err, err


def test_new_measures_on_the_command_line(tmp_path):
    write_qrels({"q": {"a": 1, "b": 0, "c": -1}}, tmp_path / "q.txt")
    write_run({"q": {"a": 1.0, "b": 2.0, "c": 0.5, "d": 0.1}}, tmp_path / "r.txt")
    out = io.StringIO()
    assert main(["trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "infAP", "-m", "relstring",
                 "-m", "set_F.0.5", "-q"], out=out) == 0
    assert out.getvalue().splitlines() == ["relstring             \tq\t'01.-'",
                                           f"infAP                 \tq\t{0.5:6.4f}",
                                           f"set_F_0.5             \tq\t{1.5 * 0.25 / (0.5 * 0.25 + 1):6.4f}",
                                           f"infAP                 \tall\t{0.5:6.4f}",
                                           f"set_F_0.5             \tall\t{1.5 * 0.25 / (0.5 * 0.25 + 1):6.4f}"]


# ---------------------------------------------------------------- Judged@k carries ir_measures' completeness
def test_judged_scores_a_judged_topic_the_run_lacks_as_ir_measures_does():
    ir_measures = pytest.importorskip("ir_measures")
    qrels = {"a": {"d1": 1, "d2": 0}, "b": {"d3": 1}}
    run = {"a": {"d1": 1.0, "d9": 0.5}}
    theirs = ir_measures.calc_aggregate([ir_measures.Judged @ 2], qrels, run)[ir_measures.Judged @ 2]
    ours = evaluate_run(qrels, run, ["Judged@2"])
    assert ours.qids == ["a", "b"] and ours.summary["judged_2"] == theirs == 0.25
    assert evaluate_run(qrels, run, ["judged_2"]).summary["judged_2"] == 0.5   # trec_eval's spelling: b left out
    rng = np.random.default_rng(461)
    for _ in range(10):
        qrels, run = random_case(rng)
        qrels = {q: {d: max(v, 0) for d, v in docs.items()} for q, docs in qrels.items()}   # ir_measures: -1 is judged
        run = {q: {d: s + i * 1e-3 for i, (d, s) in enumerate(docs.items())} for q, docs in run.items()}   # no ties
        for k in (1, 5, 20):
            got = evaluate_run(qrels, run, [f"Judged@{k}"]).summary[f"judged_{k}"]
            theirs = ir_measures.calc_aggregate([ir_measures.Judged @ k], qrels, run)[ir_measures.Judged @ k]
            assert got == pytest.approx(theirs, abs=1e-12)


# ---------------------------------------------------------------- ranx's names on runs
RANX_RUN_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
out = []
for qrels, run, names in json.load(sys.stdin):
    r = Run(run)
    evaluate(Qrels(qrels), r, names, make_comparable=True)
    out.append({n: {q: float(v) for q, v in r.scores[n].items()} for n in names})
json.dump(out, sys.stdout)
"""
RANX_NAMES = ["map@100", "map", "ndcg@10", "ndcg_burges@5", "mrr@3", "precision@5", "recall@10", "r-precision",
              "hit_rate@2", "map@5-l2", "ndcg@5-l2"]


def ranx_values(cases):
    "ranx.evaluate's per-query values, in a process of its own (ranx's numba threading layer stays out of this one)."
    import importlib.util
    if importlib.util.find_spec("ranx") is None:
        pytest.skip("ranx is not installed")
    done = subprocess.run([sys.executable, "-c", RANX_RUN_SCRIPT], input=json.dumps(cases), capture_output=True,
                          text=True, check=True)
    return json.loads(done.stdout)


def ranx_case(rng, ties):
    qrels, run = {}, {}
    for t in range(6):
        docs = [f"d{i}" for i in rng.choice(40, 25, replace=False)]
        qrels[f"q{t}"] = {d: int(rng.integers(0, 4)) for d in docs[:12]}
        scores = rng.integers(0, 3, 15) if ties else rng.permutation(15)
        if t != 5:                                               # q5: judged, not in the run
            run[f"q{t}"] = {d: float(s) for d, s in zip(docs[5:20], scores)}
    run["q9"] = {"d1": 1.0}                                      # a topic the qrels lack
    return qrels, run


def test_ranx_names_on_runs_equal_ranx():
    rng = np.random.default_rng(4670)
    cases = [ranx_case(rng, ties=False) for _ in range(3)] + [ranx_case(rng, ties=True) for _ in range(3)]
    theirs = ranx_values([(q, r, RANX_NAMES) for q, r in cases])
    names = [f"ranx:{n}" for n in RANX_NAMES]
    for (qrels, run), values, ties in zip(cases, theirs, [False] * 3 + [True] * 3):
        ours = evaluate_run(qrels, run, names, bounds=True)
        assert ours.qids == sorted(qrels) and ours.dropped == ["q9"]   # ranx's make_comparable: q5 scores 0
        for n, spelled in zip(RANX_NAMES, names):
            want = np.array([values[n][q] for q in ours.qids])
            if not ties:
                np.testing.assert_allclose(ours.per_query[spelled], want, rtol=0, atol=1e-12, err_msg=n)
            else:                                                # ranx breaks ties its own way: inside the range
                low, high = ours.bounds[spelled]
                assert np.all(low - 1e-12 <= want) and np.all(want <= high + 1e-12), n


def test_ranx_names_on_the_command_line(tmp_path):
    write_qrels({"a": {"d1": 1, "d2": 0}, "b": {"d3": 1}}, tmp_path / "q.txt")
    write_run({"a": {"d1": 0.5, "d9": 0.7}}, tmp_path / "r.txt")
    out = io.StringIO()
    assert main(["trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "ranx:map@100", "-q"],
                out=out) == 0
    assert out.getvalue().split() == ["ranx:map@100", "a", "0.5000", "ranx:map@100", "b", "0.0000",
                                      "ranx:map@100", "all", "0.2500"]     # ranx's 0.25: b, judged, scores 0
