"""TREC runs and qrels (module `trec`, notebook 52) and the `trec-eval` command.

Checked against: trec_eval 10.0's own test output (tests/data/trec_eval, line for line), pytrec_eval (trec_eval's C
code) on hundreds of random runs and qrels, and, for the tie modes and bounds, pytrec_eval over every order of the
tied documents (each order written as distinct scores)."""
import itertools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit.cli import main
from retrieval_lit.trec import (TrecFileError, TrecMeasure, check_run, evaluate_run,
                                interpolated_precision, measure_values, parse_measures, rank_run, read_qrels, read_run,
                                recall_cut, trec_order, write_qrels, write_run)
from retrieval_lit.validate import RetrievalInputError

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (a dev dependency) is the oracle here")
DATA = Path(__file__).parent / "data" / "trec_eval"
TOLERANCE = 1e-12


# ---------------------------------------------------------------- random cases
def random_case(rng, n_topics=8, n_docs=60, max_ret=40, score_values=4, max_grade=3):
    """Qrels with grades 0..max_grade and negative (unjudged) entries, runs with few distinct scores (ties
    everywhere), documents retrieved but not judged, relevant documents never retrieved, a topic only in the run
    and one only in the qrels."""
    qrels, run = {}, {}
    for t in range(n_topics):
        pool = [f"D{i:03d}" for i in rng.choice(n_docs, size=n_docs // 2, replace=False)]
        if t != 0:
            grades = [-1, 0, 0, 0] + list(range(1, max_grade + 1))
            judged = {d: int(rng.choice(grades)) for d in pool[: int(rng.integers(1, len(pool)))]}
            if max(judged.values()) < 0:                        # trec_eval refuses such a topic, pytrec_eval hangs
                judged[pool[0]] = 0
            qrels[f"{t}"] = judged
        if t != 1:
            retrieved = rng.choice(n_docs, size=int(rng.integers(1, max_ret)), replace=False)
            run[f"{t}"] = {f"D{i:03d}": float(rng.integers(0, score_values)) * 0.25 for i in retrieved}
    return qrels, run


def pytrec(qrels, run):
    return pytrec_eval.RelevanceEvaluator(qrels, pytrec_eval.supported_measures).evaluate(run)


def assert_same(ours: dict, theirs: dict):
    "Every per-topic measure pytrec_eval gives is ours, to 1e-12 (relstring: text here, 0 in pytrec_eval)."
    assert sorted(ours) == sorted(theirs)
    for q in ours:
        assert sorted(ours[q]) == sorted(set(theirs[q]) - {"runid", "num_q", "gm_map", "gm_bpref"}), q
        for name, value in ours[q].items():
            if name != "relstring":
                assert abs(value - theirs[q][name]) <= TOLERANCE, (q, name, value, theirs[q][name])


# ---------------------------------------------------------------- trec_eval itself
def test_trec_eval_10_test_output_line_for_line():
    qrels, (run, tag) = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test", with_tag=True)
    ours = evaluate_run(qrels, run, "all_trec", trec_version="10", runid=tag).lines(per_query=True)
    names = {l.split("\t")[0] for l in ours}
    theirs = [l.rstrip("\n") for l in open(DATA / "out.test.aq") if l.split("\t")[0] in names]
    assert ours == theirs
    assert len(ours) == 367                                      # all but trec_eval 10's rbp, rbp_resid, unj


def test_trec_eval_test_files_against_pytrec_eval():
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    assert_same(evaluate_run(qrels, run, "all_trec").to_dict(), pytrec(qrels, run))


# ---------------------------------------------------------------- pytrec_eval on random runs
@pytest.mark.parametrize("seed", range(6))
def test_every_measure_equals_pytrec_eval_on_random_runs(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):                                         # 300 random runs in all
        qrels, run = random_case(rng)
        assert_same(evaluate_run(qrels, run, "all_trec").to_dict(), pytrec(qrels, run))


def test_long_runs_reach_every_cutoff():
    rng = np.random.default_rng(11)
    qrels, run = random_case(rng, n_topics=6, n_docs=3000, max_ret=1500, score_values=50, max_grade=4)
    assert max(len(d) for d in run.values()) > 1000
    assert_same(evaluate_run(qrels, run, "all_trec").to_dict(), pytrec(qrels, run))


def test_summary_is_the_mean_of_the_topics_and_gm_map_the_geometric_mean():
    rng = np.random.default_rng(3)
    qrels, run = random_case(rng)
    r = evaluate_run(qrels, run, ["map", "gm_map", "num_q", "num_rel", "P_10"])
    per = pytrec(qrels, run)
    assert r.summary["num_q"] == len(per)
    assert r.summary["num_rel"] == sum(int(v["num_rel"]) for v in per.values())
    assert abs(r.summary["map"] - np.mean([v["map"] for v in per.values()])) < 1e-12
    assert abs(r.summary["gm_map"] - np.exp(np.mean([v["gm_map"] for v in per.values()]))) < 1e-12


# ---------------------------------------------------------------- tie modes and bounds over every tie order
def every_tie_order(run_topic: dict):
    "Each order of the documents inside every run of equal scores, written as strictly decreasing scores."
    ranked = trec_order(run_topic)
    groups = [list(g) for _, g in itertools.groupby(ranked, key=lambda item: item[1])]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        docs = [d for group in combo for d, _ in group]
        yield {d: float(len(docs) - i) for i, d in enumerate(docs)}


@pytest.mark.parametrize("seed", range(4))
def test_expected_and_bounds_over_every_tie_order(seed):
    rng = np.random.default_rng(100 + seed)
    measures = ["map", "Rprec", "recip_rank", "P_5", "recall_5", "ndcg", "ndcg_cut_5", "map_cut_5", "success_1",
                "bpref", "iprec_at_recall_0.50"]
    for _ in range(15):
        qrels, run = random_case(rng, n_topics=3, n_docs=12, max_ret=7, score_values=2)
        qrels, run = {q: v for q, v in qrels.items() if q in run}, {q: v for q, v in run.items() if q in qrels}
        if not qrels:
            continue
        expected = evaluate_run(qrels, run, [m for m in measures if m not in ("bpref", "iprec_at_recall_0.50")],
                                ties="expected")
        bounded = evaluate_run(qrels, run, measures, ties="trec_eval", bounds=True)
        for i, q in enumerate(bounded.qids):
            values = {m: [] for m in measures}
            for order in every_tie_order(run[q]):
                got = pytrec_eval.RelevanceEvaluator({q: qrels[q]}, pytrec_eval.supported_measures).evaluate({q: order})[q]
                for m in measures:
                    values[m].append(got[m])
            for m in measures:
                lo, hi = bounded.bounds[m][0][i], bounded.bounds[m][1][i]
                assert abs(lo - min(values[m])) <= TOLERANCE and abs(hi - max(values[m])) <= TOLERANCE, (q, m)
                if m in expected.per_query:
                    assert abs(expected.per_query[m][i] - np.mean(values[m])) <= 1e-10, (q, m)


def test_optimistic_and_pessimistic_are_the_bounds_for_these_measures():
    rng = np.random.default_rng(9)
    qrels, run = random_case(rng, score_values=2)
    b = evaluate_run(qrels, run, "all_trec", bounds=True, skip_unsupported=True)   # infAP, G: no range here
    for ties, side in (("pessimistic", 0), ("optimistic", 1)):
        r = evaluate_run(qrels, run, "all_trec", ties=ties)
        for name, values in r.per_query.items():
            if name not in ("gm_map", "infAP", "G"):
                np.testing.assert_allclose(values, b.bounds[name][side], rtol=0, atol=TOLERANCE, err_msg=name)


def test_expected_refuses_fixed_order_measures_by_name():
    qrels, run = {"q": {"a": 1}}, {"q": {"a": 1.0, "b": 1.0}}
    with pytest.raises(RetrievalInputError, match="`ties` is 'expected', but bpref has no closed form"):
        evaluate_run(qrels, run, ["map", "bpref"], ties="expected")
    r = evaluate_run(qrels, run, "official", ties="expected", skip_unsupported=True)
    assert "bpref" not in r.summary and "map" in r.summary and r.summary["map"] == 0.75


# ---------------------------------------------------------------- files and dictionaries
def test_round_trip_keeps_every_score_and_the_order(tmp_path):
    rng = np.random.default_rng(5)
    qrels, run = random_case(rng)
    run = {q: {d: s / 3 for d, s in docs.items()} for q, docs in run.items()}   # scores that need 17 digits
    write_run(run, tmp_path / "run.txt", tag="mine")
    write_qrels(qrels, tmp_path / "qrels.txt")
    assert read_run(tmp_path / "run.txt", with_tag=True) == (run, "mine")
    assert read_qrels(tmp_path / "qrels.txt") == qrels


@pytest.mark.parametrize("text, message", [
    ("1 Q0 a 1 0.5 r\n\n", "line 2: is empty"),
    ("1 Q0 a 1 0.5\n", "line 1: has 5 columns, expected 6"),
    ("1 Q0 a 1 0.5 r extra\n", "line 1: has 7 columns, expected 6"),
    ("1 Q0 a 1 x r\n", "line 1: the score 'x' is not a number"),
    ("1 Q0 a 1 inf r\n", "line 1: the score 'inf' is not finite"),
    ("1 Q0 a one 0.5 r\n", "line 1: the rank 'one' is not a whole number"),
    ("1 Q0 a 1 0.5 r\n1 Q0 b 2 0.4 r\n1 Q0 a 3 0.3 r\n", "line 3: repeats (qid 1, docid a) of line 1"),
    ("", "holds no run line"),
])
def test_bad_run_files_name_the_file_and_line(tmp_path, text, message):
    (tmp_path / "run.txt").write_text(text)
    with pytest.raises(TrecFileError, match="run.txt"):
        read_run(tmp_path / "run.txt")
    with pytest.raises(TrecFileError) as e:
        read_run(tmp_path / "run.txt")
    assert message in str(e.value)


@pytest.mark.parametrize("text, message", [
    ("1 0 a\n", "line 1: has 3 columns, expected 4"),
    ("1 0 a 1.5\n", "line 1: the relevance '1.5' is not a whole number"),
    ("1 0 a 300\n", "line 1: the relevance 300 is above 255"),
    ("1 0 a 1\n1 0 a 0\n", "line 2: repeats (qid 1, docid a) of line 1"),
])
def test_bad_qrels_files_name_the_file_and_line(tmp_path, text, message):
    (tmp_path / "qrels.txt").write_text(text)
    with pytest.raises(TrecFileError) as e:
        read_qrels(tmp_path / "qrels.txt")
    assert str(e.value).startswith(str(tmp_path / "qrels.txt")) and message in str(e.value)


@pytest.mark.parametrize("run, message", [
    ([("q", "d", 1.0)], "`run` must be a dictionary"),
    ({"q": [1.0]}, "`run['q']` must be a dictionary"),
    ({"q": {"d": float("nan")}}, "`run['q']['d']` must be a finite score"),
    ({"q": {"d": True}}, "`run['q']['d']` must be a number"),
    ({"q x": {"d": 1.0}}, "TREC ids are non-empty words without spaces"),
    ({1: {"d": 1.0}, "1": {"d": 1.0}}, "query id '1' twice"),
    ({}, "`run` is empty"),
])
def test_bad_run_dictionaries(run, message):
    with pytest.raises(RetrievalInputError) as e:
        check_run(run)
    assert message in str(e.value)


def test_dictionaries_are_copied_never_modified():
    run, qrels = {"q": {"a": 1, "b": 2}}, {"q": {"a": 1}}
    before = repr((run, qrels))
    evaluate_run(qrels, run, "all_trec", bounds=True, skip_unsupported=True)
    evaluate_run(qrels, run, "all_trec", ties="expected", skip_unsupported=True)
    assert repr((run, qrels)) == before


def test_objects_with_to_dict_are_read_as_ranx_runs():
    class RanxLike:
        def __init__(self, d):
            self.d = d

        def to_dict(self):
            return self.d

    qrels, run = {"q": {"a": 1}}, {"q": {"a": 0.3, "b": 0.9}}
    assert evaluate_run(RanxLike(qrels), RanxLike(run), ["map"]).summary == evaluate_run(qrels, run, ["map"]).summary


def test_topics_only_in_the_run_are_dropped_and_named():
    r = evaluate_run({"1": {"a": 1}}, {"1": {"a": 1.0}, "2": {"a": 1.0}}, ["map"])
    assert r.qids == ["1"] and r.dropped == ["2"]
    with pytest.raises(RetrievalInputError, match="shares no topic with the qrels"):
        evaluate_run({"1": {"a": 1}}, {"2": {"a": 1.0}}, ["map"])


def test_a_topic_judged_only_unjudged_scores_as_one_without_relevant_documents():
    r = evaluate_run({"1": {"a": -1, "b": -1}, "2": {"a": 1}}, {"1": {"a": 1.0}, "2": {"a": 1.0}},
                     ["map", "num_rel", "bpref", "ndcg"])
    assert r.per_query["map"].tolist() == [0.0, 1.0] and r.per_query["num_rel"].tolist() == [0, 1]


def test_complete_scores_missing_topics_as_empty_rankings():
    qrels = {"1": {"a": 1}, "2": {"b": 1}}
    r = evaluate_run(qrels, {"1": {"a": 1.0}}, ["map", "num_q", "num_ret", "P_5"], complete=True)
    assert r.summary["num_q"] == 2 and r.summary["map"] == 0.5 and r.summary["num_ret"] == 1
    assert r.per_query["P_5"].tolist() == [0.2, 0.0]


def test_measure_names():
    assert [m.name for m in parse_measures(["P.10,5", "recall_7"])] == ["P_5", "P_10", "recall_7"]
    for bad, message in (("P.x", "'x' is not a cutoff"), ("nope", "unknown measure 'nope'"), ([], "is empty")):
        with pytest.raises(RetrievalInputError, match=message):
            parse_measures(bad)



TIED = rank_run({"q": {"a": 1, "b": 0}}, {"q": {"a": 0.5, "b": 0.5}})


@pytest.mark.parametrize("call, message", [
    (lambda: measure_values(parse_measures("runid")[0], TIED),
     "`m` must be a measure with a value per topic, got 'runid', which exists only over all topics"),
    (lambda: measure_values(parse_measures("num_q")[0], TIED),
     "`m` must be a measure with a value per topic, got 'num_q'"),
    (lambda: measure_values("map", TIED), "`m` must be a TrecMeasure (from parse_measures), got 'map' (str)"),
    (lambda: measure_values(TrecMeasure("nope", "nope"), TIED), "`m` must be a measure parse_measures knows, got the family 'nope'"),
    (lambda: measure_values(parse_measures("map")[0], TIED, ties="index"),
     "`ties` must be one of 'trec_eval', 'expected', 'optimistic', 'pessimistic'; got 'index'"),
    (lambda: measure_values(parse_measures("bpref")[0], TIED, ties="random"), "`ties` must be one of 'trec_eval'"),
    (lambda: measure_values(parse_measures("map")[0], TIED, bounds="yes"), "`bounds` must be True or False"),
    (lambda: measure_values(parse_measures("iprec_at_recall_0.4")[0], TIED, trec_version="11"),
     "`trec_version` must be one of '9', '10'; got '11'"),
    (lambda: measure_values(parse_measures("map")[0], {"q": {"a": 0.5}}),
     "`ranking` must be a TrecRanking (from rank_run), got a dict (a run or qrels: rank it with rank_run(qrels, run))"),
    (lambda: measure_values(parse_measures("map")[0], None), "`ranking` must be a TrecRanking (from rank_run), got None"),
    (lambda: measure_values(parse_measures("num_ret")[0], "run.txt"),
     "`ranking` must be a TrecRanking (from rank_run), got 'run.txt' (str)"),
    (lambda: recall_cut(0.4, 3, "11"), "`trec_version` must be one of '9', '10'; got '11'"),
    (lambda: recall_cut(0.4, 3, 10), "`trec_version` must be one of '9', '10'; got 10"),
    (lambda: interpolated_precision([1, 0, 1], 2, [0.4], trec_version=9), "`trec_version` must be one of '9', '10'; got 9"),
])
def test_bad_measure_values_arguments_are_named(call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value), str(e.value)


def test_trec_eval_order_is_the_one_fixed_order_name_for_every_measure():
    "'index' is refused: it meant trec_eval's order for map but relevant-last for bpref; 'trec_eval' means one thing."
    tr = rank_run({"q": {"a": 0, "b": 1}}, {"q": {"a": 0.5, "b": 0.5}})       # the tie: b (relevant) first
    for spec in ("bpref", "map", "P_1"):
        m = parse_measures(spec)[0]
        assert measure_values(m, tr)[0].tolist() == [1.0], spec
        assert measure_values(m, tr, ties="pessimistic")[0].tolist() == [0.0 if spec != "map" else 0.5], spec


def test_module_docstring_is_the_whole_description():
    import retrieval_lit.trec as trec
    assert trec.__doc__.rstrip().endswith("then what its tie order hides."), trec.__doc__

# ---------------------------------------------------------------- the command line
def cli(*argv):
    entry = "import sys; from retrieval_lit.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", entry, *argv], capture_output=True, text=True)


def test_cli_prints_trec_eval_lines_and_notes_dropped_topics(tmp_path):
    write_qrels({"1": {"a": 1, "b": 0}}, tmp_path / "q.txt")
    write_run({"1": {"a": 1.0, "b": 1.0}, "7": {"a": 1.0}}, tmp_path / "r.txt", tag="sys")
    p = cli("trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "map", "-m", "runid", "-q")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["map                   \t1\t0.5000", "runid                 \tall\tsys",
                                     "map                   \tall\t0.5000"]
    assert "1 topic(s) of the run are not in the qrels" in p.stderr and ": 7" in p.stderr
    p = cli("trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "map", "--ties", "expected", "--bounds")
    assert p.stdout.splitlines() == ["map                   \tall\t0.7500\t0.5000\t1.0000"]


@pytest.mark.parametrize("content", [b"\x89PNG\r\n\x1a\n\x00\x00", b"1 Q0 a 1 0.5 r\n2 Q0 b\n"])
def test_cli_bad_files_are_one_line_errors(tmp_path, content):
    write_qrels({"1": {"a": 1}}, tmp_path / "q.txt")
    (tmp_path / "r.txt").write_bytes(content)
    p = cli("trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"))
    assert p.returncode == 2 and "Traceback" not in p.stderr and p.stderr.count("\n") == 1
    assert "r.txt, line" in p.stderr


def test_cli_missing_file_and_directory(tmp_path):
    for target in (tmp_path / "missing.txt", tmp_path):
        p = cli("trec-eval", str(target), str(target))
        assert p.returncode == 2 and "cannot be read" in p.stderr and "Traceback" not in p.stderr


def test_cli_official_under_expected_leaves_out_fixed_order_measures():
    out = []

    class Sink:
        def write(self, s):
            out.append(s)

    assert main(["trec-eval", str(DATA / "qrels.test"), str(DATA / "results.test"), "--ties", "expected"],
                out=Sink()) == 0
    text = "".join(out)
    assert "map " in text and "bpref" not in text and "iprec_at_recall" not in text


# ---------------------------------------------------------------- the compiled reader and TrecTable (issue 22)
from retrieval_lit import trec as trec_module  # noqa: E402
from retrieval_lit.trec import TrecTable, _fast_fields, _sorted_table  # noqa: E402


def careful(monkeypatch, reader, path, **kw):
    "What the careful reader alone gives (the compiled one and the small files' one switched off)."
    with monkeypatch.context() as m:
        m.setattr(trec_module, "_fast_fields", lambda *a, **k: None)
        m.setattr(trec_module, "_small_fields", lambda *a, **k: None)
        return reader(path, **kw)


def compiled(monkeypatch, reader, path, **kw):
    "What the compiled reader gives (a small file read as a large one)."
    with monkeypatch.context() as m:
        m.setattr(trec_module, "SMALL_FILE_BYTES", 0)
        return reader(path, **kw)


def same_floats(a: dict, b: dict):
    assert a.keys() == b.keys()
    for q in a:
        assert a[q].keys() == b[q].keys()
        for d in a[q]:
            x, y = a[q][d], b[q][d]
            assert type(x) is type(y) and (x == y) and np.copysign(1, x) == np.copysign(1, y), (q, d, x, y)


SCORE_TEXTS = ["0.978", "-0", "-0.0", "+.5e-3", "5.", "1e22", "1E-22", "123456789012345", "1234567890123456789",
               "0.1000000000000000055511151231257827", "1_000.25", "2.5e-308", "17", "-3.25e+2", "0000.5"]


@pytest.mark.parametrize("seed", range(12))
def test_compiled_reader_reads_what_the_careful_one_reads(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    lines, seen = [], set()
    for _ in range(int(rng.integers(1, 400))):
        q, d = f"q{rng.integers(0, 7)}", f"doc-{rng.integers(0, 10 ** int(rng.integers(1, 12)))}"
        if (q, d) in seen:
            continue
        seen.add((q, d))
        score = str(rng.choice(SCORE_TEXTS)) if rng.random() < 0.3 else repr(float(rng.normal() * 10.0 ** rng.integers(-5, 5)))
        sep = str(rng.choice([" ", "\t", "  ", " \x0b"]))
        lines.append(sep.join([q, "Q0", d, str(rng.integers(-3, 2000)), score, "tag"]))
    text = "\n".join(lines) + str(rng.choice(["\n", "", "\r\n"]))
    (tmp_path / "run.txt").write_text(text)
    fast = read_run(tmp_path / "run.txt", with_tag=True)                # a small file: the numba-free reader
    slow = careful(monkeypatch, read_run, tmp_path / "run.txt", with_tag=True)
    big = compiled(monkeypatch, read_run, tmp_path / "run.txt", with_tag=True)
    same_floats(fast[0], slow[0])
    same_floats(big[0], slow[0])
    assert fast[1] == slow[1] == big[1]
    kinds = ("id", "skip", "id", "check", "float", "skip")
    small = trec_module._small_fields(tmp_path / "run.txt", trec_module.RUN_COLUMNS, kinds)
    whole = trec_module._fast_fields(tmp_path / "run.txt", trec_module.RUN_COLUMNS, kinds)
    assert small is not None                                          # a valid file: read without numba
    if whole is not None:                                             # (the compiled one leaves > 64 hard numbers)
        assert all((a == b).all() for a, b in zip(small[0] + small[1], whole[0] + whole[1]))
    small = trec_module._fast_fields(tmp_path / "run.txt", trec_module.RUN_COLUMNS,
                                     ("id", "skip", "id", "check", "float", "skip"), chunk_bytes=97)
    whole = trec_module._fast_fields(tmp_path / "run.txt", trec_module.RUN_COLUMNS,
                                     ("id", "skip", "id", "check", "float", "skip"))
    if whole is not None:                                         # pieces of whole lines read the same
        assert all((a == b).all() for a, b in zip(small[0] + small[1], whole[0] + whole[1]))


@pytest.mark.parametrize("small", [True, False])                      # the numba-free reader, then the compiled one
def test_a_bad_line_deep_inside_a_large_run_is_named(tmp_path, monkeypatch, small):
    if not small:
        monkeypatch.setattr(trec_module, "SMALL_FILE_BYTES", 0)
    good = "".join(f"q{i // 1000} Q0 d{i} {i % 1000 + 1} {i % 997 / 1000} r\n" for i in range(150_000))
    for bad, message in [("q1 Q0 dx 1 0.5\n", "line 120001: has 5 columns, expected 6"),
                         ("q1 Q0 dx 1 high r\n", "line 120001: the score 'high' is not a number"),
                         ("q1 Q0 dx 1 inf r\n", "line 120001: the score 'inf' is not finite"),
                         ("q1 Q0 dx 1 1e999 r\n", "line 120001: the score '1e999' is not finite"),
                         ("q1 Q0 dx 1.5 0.5 r\n", "line 120001: the rank '1.5' is not a whole number"),
                         ("q120 Q0 d120000 1 0.5 r\n", "line 120001: repeats (qid q120, docid d120000) of line 120001"
                          .replace("of line 120001", "of line 120001"))]:
        lines = good.splitlines(keepends=True)
        path = tmp_path / "big.txt"
        path.write_text("".join(lines[:120_000]) + bad + "".join(lines[120_000:]))
        with pytest.raises(TrecFileError) as e:
            read_run(path)
        if "repeats" in message:
            assert "line 120002: repeats (qid q120, docid d120000) of line 120001" in str(e.value)
        else:
            assert f"big.txt, {message}" in str(e.value), str(e.value)
    path.write_bytes(good.encode()[:500_000] + b"\x00" + good.encode()[500_000:])
    with pytest.raises(TrecFileError, match="holds a NUL byte"):
        read_run(path)


def test_qrels_compiled_and_careful(tmp_path, monkeypatch):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 -1\nq2 0 d1 0\nq1 0 d3 +2\nq2 0 d9 007\n")
    same = read_qrels(tmp_path / "q.txt")
    assert same == compiled(monkeypatch, read_qrels, tmp_path / "q.txt")
    assert same == careful(monkeypatch, read_qrels, tmp_path / "q.txt") == {
        "q1": {"d1": 1, "d2": -1, "d3": 2}, "q2": {"d1": 0, "d9": 7}}
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n" * 0 + "q1 0 d1 1\nq1 0 d2 256\n")
    with pytest.raises(TrecFileError, match="line 2: the relevance 256 is above 255"):
        read_qrels(tmp_path / "q.txt")


@pytest.mark.parametrize("seed", range(6))
def test_tables_rank_as_dictionaries(seed, monkeypatch):
    rng = np.random.default_rng(seed)
    qrels, run = random_case(rng, n_topics=10, n_docs=300, max_ret=200)
    a = rank_run(qrels, run)
    for threshold in (1 << 16, 0):                                # the dictionary join and the compiled merge
        monkeypatch.setattr(trec_module, "_COMPILED_JOIN_ROWS", threshold)
        b = rank_run(trec_module._as_table(qrels, "qrels"), trec_module._as_table(run, "run"), complete=seed % 2 == 1)
        c = rank_run(qrels, run, complete=seed % 2 == 1)
        assert b.qids == c.qids and b.dropped == c.dropped
        assert all((x == y).all() for x, y in zip(b.judged, c.judged))
        assert all((x == y).all() for x, y in zip(b.scores, c.scores))
        assert (b.summary.hist == c.summary.hist).all() and (b.summary.top_grades == c.summary.top_grades).all()
        assert (b.summary.unranked == c.summary.unranked).all() and (b.n_nonrel == c.n_nonrel).all()
    for q, judged in zip(a.qids, a.judged):                        # trec_eval's order, written independently
        order = trec_order(run[q])
        assert judged.tolist() == [qrels[q][d] if d in qrels[q] and qrels[q][d] >= 0 else -1 for d, _ in order]


def test_fixed_order_measures_over_all_topics_equal_the_list_functions():
    rng = np.random.default_rng(5)
    qrels, run = random_case(rng, n_topics=12, n_docs=80, max_ret=60)
    tr = rank_run(qrels, run)
    for ties in ("trec_eval", "optimistic", "pessimistic"):
        lists = trec_module._fixed_order(tr, ties)
        got = measure_values(parse_measures("bpref")[0], tr, ties)[0]
        want = [trec_module.bpref(j, int(r), int(n)) for j, r, n in zip(lists, tr.summary.n_relevant, tr.n_nonrel)]
        assert got.tolist() == want                                 # bit for bit
        for version in ("9", "10"):
            for m in parse_measures("iprec_at_recall"):
                got = measure_values(m, tr, ties, trec_version=version)[0]
                want = [interpolated_precision(j, int(r), [m.param], version)[0] for j, r in zip(lists, tr.summary.n_relevant)]
                assert got.tolist() == want


def test_topics_summarised_at_once_equal_summarize_lists():
    "`_summarize_topics` (rows in rank order, a block of topics at a time) equals `summarize_lists`, array for array."
    from retrieval_lit.score_ranking import summarize_lists
    rng = np.random.default_rng(52)
    for trial in range(20):
        sizes = [int(rng.integers(0, 40)) * (rng.random() < 0.8) for _ in range(int(rng.integers(1, 23)))]
        scores = [np.round(rng.normal(size=n), 1) for n in sizes]            # rounded: ties inside lists
        judged = [rng.integers(-1, 4, n) * (rng.random(n) < 0.7) for n in sizes]
        orders = [np.lexsort((np.arange(len(s)), -s)) for s in scores]       # rank order: descending, stable
        scores, judged = [s[o] for s, o in zip(scores, orders)], [j[o] for j, o in zip(judged, orders)]
        unranked = rng.integers(0, 3, (len(sizes), 4)) * (rng.random((len(sizes), 4)) < 0.5)
        ref = summarize_lists(scores, [np.maximum(j, 0) for j in judged], stable_ranks=-1, unranked=unranked)
        for block_rows in (1, 40, 1 << 18):                                 # a topic at a time, a few, all
            got = trec_module._summarize_topics(np.array(sizes, dtype=np.int64), np.concatenate(scores),
                                                np.maximum(np.concatenate(judged), 0), ref.unranked, block_rows)
            for name in ("hist", "top_grades", "unranked"):
                a, b = getattr(got, name), getattr(ref, name)
                assert a.shape == b.shape and a.dtype == b.dtype and (a == b).all(), (trial, block_rows, name)
            assert got.n_ranks == ref.n_ranks and got.kind == ref.kind
