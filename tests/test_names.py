"""The names other tools use (module `names`, notebook 08): ir_measures' spellings through `evaluate`,
`trec.evaluate_run` and the `trec-eval` command.

Checked against: pytrec_eval (trec_eval's C code) on random tie-heavy qrels and runs, with its relevance_level for
rel=L; evaluate under the explicit conventions each name implies; AP@k by a brute-force loop; the README's table."""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit import evaluate
from retrieval_lit.metrics import parse_metric
from retrieval_lit.names import (IR_FAMILIES, at_relevance_level, did_you_mean, name_metric, names_table, read_name,
                                 trec_spec)
from retrieval_lit.score_ranking import summarize_lists
from retrieval_lit.trec import evaluate_run, parse_measures, write_qrels, write_run
from retrieval_lit.validate import RetrievalInputError

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (a dev dependency) is the oracle here")
ROOT = Path(__file__).resolve().parent.parent


def random_case(seed, n_topics=6, n_docs=40):
    rng = np.random.default_rng(seed)
    qrels = {f"q{t}": {f"d{j:02d}": int(rng.integers(0, 4)) for j in rng.choice(n_docs, 25, replace=False)}
             for t in range(n_topics)}
    for t, docs in qrels.items():
        docs.setdefault("d99", 3)                                   # every topic has a relevant document
    run = {f"q{t}": {f"d{j:02d}": float(rng.integers(0, 5)) for j in rng.choice(n_docs, 30, replace=False)}
           for t in range(n_topics)}                                # 5 score values: ties everywhere
    return qrels, run


# name -> (pytrec_eval measure, its output key, relevance_level)
TREC_EQUIVALENTS = {
    "AP": ("map", "map", 1), "AP@10": ("map_cut.10", "map_cut_10", 1), "nDCG": ("ndcg", "ndcg", 1),
    "nDCG@10": ("ndcg_cut.10", "ndcg_cut_10", 1), "P@5": ("P.5", "P_5", 1), "R@20": ("recall.20", "recall_20", 1),
    "RR": ("recip_rank", "recip_rank", 1), "Rprec": ("Rprec", "Rprec", 1), "Success@5": ("success.5", "success_5", 1),
    "P(rel=2)@5": ("P.5", "P_5", 2), "AP(rel=3)": ("map", "map", 3), "R(rel=2)@20": ("recall.20", "recall_20", 2),
    "RR(rel=2)": ("recip_rank", "recip_rank", 2), "Rprec(rel=2)": ("Rprec", "Rprec", 2),
    "nDCG(gains={0:0,1:1,2:2,3:3})@10": ("ndcg_cut.10", "ndcg_cut_10", 1), "Bpref": ("bpref", "bpref", 1),
    "NumRelRet": ("num_rel_ret", "num_rel_ret", 1), "IPrec@0.5": ("iprec_at_recall", "iprec_at_recall_0.50", 1),
    "MAP@10": ("map_cut.10", "map_cut_10", 1), "NDCG@10": ("ndcg_cut.10", "ndcg_cut_10", 1),
    "MRR": ("recip_rank", "recip_rank", 1), "nDCG(dcg=log2)@10": ("ndcg_cut.10", "ndcg_cut_10", 1),
}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", sorted(TREC_EQUIVALENTS))
def test_evaluate_run_matches_pytrec_eval(name, seed):
    qrels, run = random_case(seed)
    measure, key, level = TREC_EQUIVALENTS[name]
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {measure}, relevance_level=level).evaluate(run)
    report = evaluate_run(qrels, run, [name])
    (m,) = report.measures
    ours = report.to_dict()
    for q in qrels:
        assert abs(ours[q][m.name] - theirs[q][key]) <= 1e-12, (q, name, ours[q][m.name], theirs[q][key])


def test_printed_names_are_trec_evals_and_levels_keep_their_spelling():
    assert [m.name for m in parse_measures(["nDCG@10", "AP@100", "P@5", "map", "P(rel=2)@5"])] == \
        ["map", "P_5", "ndcg_cut_10", "map_cut_100", "P(rel=2)@5"]
    assert [m.rel_level for m in parse_measures(["P(rel=2)@5", "P@5"])] == [1, 2]
    assert [m.name for m in parse_measures(["AP", "map"])] == ["map"]          # the same measure, listed once


def cli(*argv):
    entry = "import sys; from retrieval_lit.cli import main; sys.exit(main())"
    return subprocess.run([sys.executable, "-c", entry, *argv], capture_output=True, text=True)


def test_cli_trec_eval_prints_trec_evals_values_for_ir_measures_names(tmp_path):
    qrels, run = random_case(7)
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt")
    p = cli("trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "nDCG@10", "-m", "AP@100")
    assert p.returncode == 0, p.stderr
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "map_cut.100"}).evaluate(run)
    mean = lambda key: sum(theirs[q][key] for q in theirs) / len(theirs)
    assert p.stdout.splitlines() == [f"{'ndcg_cut_10':<22}\tall\t{mean('ndcg_cut_10'):6.4f}",
                                     f"{'map_cut_100':<22}\tall\t{mean('map_cut_100'):6.4f}"]


def test_cli_unknown_measure_suggests(tmp_path):
    write_qrels({"1": {"a": 1}}, tmp_path / "q.txt")
    write_run({"1": {"a": 1.0}}, tmp_path / "r.txt")
    p = cli("trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "nDGC@10")
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "unknown measure 'nDGC@10'" in p.stderr and "did you mean" in p.stderr and "'nDCG@10'" in p.stderr
    p = cli("trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "nDCG(dcg=exp-log2)@10")
    assert p.returncode == 2 and "has no trec_eval measure" in p.stderr and "ndcg@10" in p.stderr


def test_cli_trec_eval_computes_rr_at_k(tmp_path):
    "RR@k, which trec_eval lacks, is printed as recip_rank_cut_k: 1/rank of the first relevant document in the top k."
    write_qrels({"1": {"a": 1, "b": 0}, "2": {"c": 1}}, tmp_path / "q.txt")
    write_run({"1": {"b": 2.0, "a": 1.0}, "2": {"x": 3.0, "y": 2.0, "c": 1.0}}, tmp_path / "r.txt")
    p = cli("trec-eval", str(tmp_path / "q.txt"), str(tmp_path / "r.txt"), "-m", "RR@2", "-m", "MRR@3")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"{'recip_rank_cut_2':<22}\tall\t{(1 / 2 + 0) / 2:6.4f}",   # c is at rank 3
                                     f"{'recip_rank_cut_3':<22}\tall\t{(1 / 2 + 1 / 3) / 2:6.4f}"]


# ---------------------------------------------------------------- evaluate
@pytest.fixture(scope="module")
def digits():
    from retrieval_lit.data import load_digits_codes
    d = load_digits_codes(16, n_queries=40, seed=2)
    return dict(query_codes=d.query_codes, gallery_codes=d.gallery_codes, query_labels=d.query_labels,
                gallery_labels=d.gallery_labels)


@pytest.mark.parametrize("ties", ["expected", "index", "optimistic"])
def test_names_carry_their_conventions(digits, ties):
    names = ["AP@100", "AP", "nDCG@10", "nDCG(gains={0:0,1:1})@10", "nDCG(gains={0:0,1:3,2:9})@10"]
    r = evaluate(**digits, metrics=names + ["map@100"], ties=ties, bounds=True)
    ref_all = evaluate(**digits, metrics=["map@100", "map"], ties=ties, ap_denominator="all", bounds=True)
    ref_lin = evaluate(**digits, metrics=["ndcg@10"], ties=ties, gain="linear", bounds=True)
    ref_exp = evaluate(**digits, metrics=["ndcg@10"], ties=ties, gain="exp2", bounds=True)
    for ours, ref, key in (("AP@100", ref_all, "map@100"), ("AP", ref_all, "map"), ("nDCG@10", ref_lin, "ndcg@10"),
                           ("nDCG(gains={0:0,1:1})@10", ref_lin, "ndcg@10"),
                           ("nDCG(gains={0:0,1:3,2:9})@10", ref_exp, "ndcg@10")):
        assert r[ours] == ref[key], ours
        assert r.bounds[ours] == ref.bounds[key], ours
        assert np.array_equal(r.per_query[ours], ref.per_query[key])
    assert r["AP@100"] != r["map@100"]                              # two numbers, each under its name
    assert r.conventions.ap_denominator == "retrieved"              # the call's conventions are unchanged


def test_convention_free_names_are_library_metrics(digits):
    r = evaluate(**digits, metrics=["P@5", "R@100", "RR", "RR@10", "Success@10", "Rprec", "ml_recall@10"])
    assert list(r) == ["p@5", "recall@100", "mrr", "mrr@10", "success@10", "rprec"]
    assert r["R@100"] == r["recall@100"] and r["ml_recall@10"] == r["Success@10"]


def test_relevance_level_in_evaluate_against_a_thresholded_matrix():
    rng = np.random.default_rng(0)
    grades = rng.integers(0, 4, size=(6, 30))
    scores = rng.integers(0, 6, size=(6, 30)).astype(float)
    for name, lib, level in (("P(rel=2)@5", "p@5", 2), ("AP(rel=3)", "map", 3), ("R(rel=2)@10", "recall@10", 2)):
        ours = evaluate(scores=scores, relevance=grades, metrics=[name], bounds=True)
        ref = evaluate(scores=scores, relevance=(grades >= level).astype(int), metrics=[lib], bounds=True,
                       ap_denominator="all" if name.startswith("AP") else "retrieved")
        assert ours[name] == pytest.approx(ref[lib], abs=1e-15) and ours.bounds[name] == pytest.approx(ref.bounds[lib])


def brute_ap_all(grades, k):
    "AP@k of a fixed list, the sum of precisions at relevant ranks in the top k divided by all relevant items."
    hits, total = 0, 0.0
    for i, g in enumerate(grades[:k], 1):
        if g > 0:
            hits += 1
            total += hits / i
    r = sum(1 for g in grades if g > 0)
    return total / r if r else 0.0


def test_ap_at_k_by_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(30):
        grades = rng.integers(0, 2, size=25)
        s = summarize_lists([np.arange(25, 0, -1.0)], [grades], stable_ranks=-1)
        from retrieval_lit.metrics import Conventions
        for k in (1, 5, 10, 40):
            got = name_metric(read_name(f"AP@{k}")).compute(s, Conventions(ties="index"))[0]
            assert got == pytest.approx(brute_ap_all(list(grades), k), abs=1e-15)


def test_at_relevance_level_leaves_the_callers_summary():
    s = summarize_lists([np.array([2.0, 1.0, 1.0])], [np.array([1, 3, 2])], stable_ranks=-1)
    before = (s.hist.copy(), s.top_grades.copy())
    low = at_relevance_level(s, 3)
    assert low.n_relevant.tolist() == [1] and low.top_grades.tolist() == [[0, 3, 0]]
    assert np.array_equal(s.hist, before[0]) and np.array_equal(s.top_grades, before[1])


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize("name, message", [
    ("P(rel=x)@5", "rel must be a whole number >= 1"),
    ("P(rel=)@5", "rel must be a whole number >= 1"),
    ("P(rel=2.5)@5", "rel must be a whole number >= 1"),
    ("P(rel=0)@5", "rel must be a whole number >= 1"),
    ("P(rel=2@5", "balanced parentheses"),
    ("P(rel=2))@5", "balanced parentheses"),
    ("P(level=2)@5", "P takes rel here, not 'level'"),
    ("nDCG(rel=2)@10", "nDCG takes gains or dcg here, not 'rel'"),
    ("nDCG(gains={0:0,1:1,2:5})@10", "neither proportional to rel"),
    ("nDCG(gains={0:0,1:a})@10", "a gain map entry reads grade:gain"),
    ("nDCG(gains={})@10", "gains must read {grade:gain,...}"),
    ("P", "P needs a cutoff, e.g. P@10"),
    ("P@0", "`metrics` must be at least 1"),
    ("P@x", "unknown metric name 'P@x'"),
    ("Rprec@5", "Rprec takes no cutoff"),
    ("IPrec@1.5", "recall level in [0, 1]"),
    ("Bpref", "compute it with trec.evaluate_run"),
    ("nDCG(dcg=exp)@10", "dcg is one of 'log2', 'exp-log2'"),
    ("nDCG(dcg=log2,gains={0:0,1:1})@10", "give gains or dcg, not both"),
])
def test_bad_names_in_evaluate(name, message):
    with pytest.raises(RetrievalInputError, match="^`metrics`") as e:
        evaluate(scores=[[0.5, 0.2]], relevance=[[1, 0]], metrics=[name])
    assert message in str(e.value)


@pytest.mark.parametrize("name, near", [("ndgc@10", "ndcg@10"), ("mapp@100", "map@100"), ("Sucess@10", "Success@10"),
                                        ("nDGC@10", "nDCG@10"), ("ap@100", "AP@100")])
def test_unknown_names_suggest_the_nearest(name, near):
    with pytest.raises(RetrievalInputError) as e:
        parse_metric(name)
    assert f"unknown metric name {name!r}" in str(e.value) and "did you mean" in str(e.value)
    assert repr(near) in str(e.value).split("did you mean")[1], str(e.value)
    assert near in did_you_mean(name)


def test_unknown_trec_measure_suggests():
    with pytest.raises(RetrievalInputError, match="unknown measure 'ndcg_cut10'.*did you mean.*'ndcg_cut'"):
        parse_measures(["ndcg_cut10"])


def test_trec_refusals():
    with pytest.raises(RetrievalInputError, match="no trec_eval measure.*mrr@10"):
        trec_spec("RR@10")
    with pytest.raises(RetrievalInputError, match="no trec_eval measure"):
        parse_measures(["nDCG(gains={0:0,1:1,2:3})@10"])


def test_ir_measures_aliases():
    # MAP and NDCG keep the library's meaning under evaluate (the call's conventions); trec_eval reads them as AP, nDCG
    assert parse_metric("MAP@100").name == "map@100" and parse_metric("NDCG@10").name == "ndcg@10"
    assert parse_metric("MRR").name == "mrr"
    assert trec_spec("MAP@100") == ("map_cut_100", 1) and trec_spec("NDCG") == ("ndcg", 1)
    assert trec_spec("MAP(rel=2)@5") == ("map_cut_5", 2)
    assert parse_metric("nDCG(dcg=exp-log2)@10").name == "nDCG(dcg=exp-log2)@10"
    with pytest.raises(RetrievalInputError, match="no trec_eval measure"):
        trec_spec("nDCG(dcg=exp-log2)@10")
    for alias in ("`MAP`", "`NDCG`", "`MRR`"):
        assert alias in names_table()


def test_names_are_case_sensitive_library_names_are_not():
    assert read_name("ndcg@10") is None and read_name("NDCG@10") is None and read_name("ap") is None
    assert parse_metric("NDCG@10").name == "ndcg@10" and parse_metric("nDCG@10").name == "nDCG@10"


# ---------------------------------------------------------------- the README
def test_readme_holds_the_generated_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert names_table() in readme
    for fam in IR_FAMILIES:
        assert f"| `{fam}" in names_table()


@pytest.mark.parametrize("engine", ["numpy", "numba"])
@pytest.mark.parametrize("ties", ["index", "expected"])
def test_names_on_codes_with_either_engine(engine, ties):
    pytest.importorskip("numba") if engine == "numba" else None
    rng = np.random.default_rng(11)
    q, g = rng.integers(0, 2, size=(12, 10)), rng.integers(0, 2, size=(80, 10))
    grades = rng.integers(0, 4, size=(12, 80))
    common = dict(engine=engine, ties=ties, bounds=True)
    r = evaluate(q, g, relevance=grades, metrics=["AP", "AP(rel=2)", "P(rel=3)@10", "nDCG@20"], **common)
    for name, lib, level, conv in (("AP", "map", 1, {"ap_denominator": "all"}),
                                   ("AP(rel=2)", "map", 2, {"ap_denominator": "all"}),
                                   ("P(rel=3)@10", "p@10", 3, {}), ("nDCG@20", "ndcg@20", 1, {"gain": "linear"})):
        rel = grades if name.startswith("nDCG") else (grades >= level).astype(np.uint8)
        ref = evaluate(q, g, relevance=rel, metrics=[lib], **common, **conv)
        assert r[name] == pytest.approx(ref[lib], abs=1e-15), name
        assert r.bounds[name] == pytest.approx(ref.bounds[lib], abs=1e-15), name


@pytest.mark.parametrize("name, first", [("P@5.5", "P@5"), ("map@2.5", "map@2"), ("nDCG@0.5", "nDCG@1")])
def test_a_fractional_cutoff_suggests_a_whole_one_never_itself(name, first):
    near = did_you_mean(name)
    assert near[0] == first and name not in near, near
    with pytest.raises(RetrievalInputError) as e:
        parse_metric(name)
    assert repr(name) not in str(e.value).split("did you mean")[1], str(e.value)


@pytest.mark.parametrize("name", ["P(rel=2, rel=3)@5", "P(rel=2,rel=2)@5", "nDCG(dcg=log2, dcg=exp-log2)@10",
                                  "nDCG(gains={0:0,1:1}, gains={0:0,1:2})@10"])
def test_a_repeated_parameter_is_refused(name):
    with pytest.raises(RetrievalInputError, match="^`metrics` .*is given twice.*give it once"):
        read_name(name)
    with pytest.raises(RetrievalInputError, match="given twice"):
        evaluate(scores=[[0.5, 0.2]], relevance=[[1, 0]], metrics=[name])


def test_read_name_refuses_a_run_of_too_many_digits_before_reading_it():
    with pytest.raises(RetrievalInputError, match="^`metrics` .*holds a number of 5000 digits"):
        read_name("P@" + "9" * 5000)
