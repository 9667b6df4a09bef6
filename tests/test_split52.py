"""RR@k through trec.evaluate_run and the `trec-eval` command (issue 33): trec_eval has no cut-off reciprocal rank, so
the chapter computes ir_measures' RR@k as the library's mrr@k, printed `recip_rank_cut_k`.

Checked against: ir_measures' RR@k (MS MARCO's script, which breaks ties by ascending id) on the run rewritten with
distinct scores in trec_eval's order; pytrec_eval's recip_rank of the run cut after rank k; a plain loop over the run
sorted by hand (descending score, then descending id bytes); brute force over every order of the tied documents."""
import io
from itertools import groupby

import numpy as np
import pytest

import retrieval_lit.trec as trec_module
from retrieval_lit.trec import evaluate_run, parse_measures, rank_run, write_qrels, write_run
from retrieval_lit.validate import RetrievalInputError


def random_case(rng, n_topics=12, distinct=False, levels=3):
    "Qrels (grades 0..levels-1, a few topics without a relevant document) and a run of 1..30 documents per topic."
    qrels, run = {}, {}
    for t in range(n_topics):
        pool = [f"d{i}" for i in rng.choice(80, 40, replace=False)]
        qrels[f"q{t}"] = {d: int(rng.integers(0, levels)) for d in pool[: int(rng.integers(1, 30))]}
        docs = rng.choice(80, int(rng.integers(1, 30)), replace=False)
        scores = rng.permutation(len(docs)) if distinct else rng.integers(0, 4, len(docs))
        run[f"q{t}"] = {f"d{d}": float(s) for d, s in zip(docs, scores)}
    return qrels, run


def hand_order(docs):
    "trec_eval's order written out here: descending score, ties by descending id bytes (C's strcmp)."
    return [d for d, _ in sorted(docs.items(), key=lambda x: (x[1], x[0].encode("utf-8")), reverse=True)]


def loop_rr(qrels, docs, k, level=1):
    "1 / rank of the first document with rel >= level among the first k of trec_eval's order, else 0."
    for r, d in enumerate(hand_order(docs)[:k], 1):
        if qrels.get(d, 0) >= level:
            return 1 / r
    return 0.0


def ir_rr(qrels, run, k, rel=1):
    ir_measures = pytest.importorskip("ir_measures")
    measure = ir_measures.RR(rel=rel) @ k if rel != 1 else ir_measures.RR @ k
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}


@pytest.mark.parametrize("seed", range(6))
def test_rr_at_k_is_ir_measures_on_the_run_in_trec_evals_order(seed):
    "The tied run under ties='trec_eval' is ir_measures' RR@k of the run rewritten with distinct scores in that order."
    qrels, run = random_case(np.random.default_rng(5200 + seed))
    rewritten = {q: {d: float(len(docs) - i) for i, d in enumerate(hand_order(docs))} for q, docs in run.items()}
    for k in (1, 2, 3, 10, 100):
        for rel in (1, 2):
            name = f"RR@{k}" if rel == 1 else f"RR(rel={rel})@{k}"
            report = evaluate_run(qrels, run, [name])
            key = report.measures[0].name
            theirs = ir_rr(qrels, rewritten, k, rel)
            assert report.qids == sorted(qrels)                         # an ir_measures name: every qrels topic
            for q, v in zip(report.qids, report.per_query[key].tolist()):
                assert v == theirs.get(q, 0.0), (k, rel, q)             # MS MARCO's script omits topics it scores 0
                assert v == loop_rr(qrels[q], run.get(q, {}), k, rel), (k, rel, q)


@pytest.mark.parametrize("seed", range(4))
def test_rr_at_k_without_ties_is_ir_measures_under_every_tie_mode(seed):
    qrels, run = random_case(np.random.default_rng(5300 + seed), distinct=True)
    for k in (1, 5, 10):
        theirs = ir_rr(qrels, run, k)
        for ties in ("trec_eval", "expected", "optimistic", "pessimistic"):
            report = evaluate_run(qrels, run, [f"RR@{k}"], ties=ties, bounds=True)
            got = report.per_query[f"recip_rank_cut_{k}"].tolist()
            assert got == [theirs.get(q, 0.0) for q in report.qids], (k, ties)
            low, high = report.bounds[f"recip_rank_cut_{k}"]
            assert low.tolist() == got == high.tolist()                 # one order: an empty range


@pytest.mark.parametrize("seed", range(4))
def test_rr_at_k_is_pytrec_eval_recip_rank_of_the_run_cut_at_k(seed):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = random_case(np.random.default_rng(5400 + seed))
    for k in (1, 3, 10):
        cut = {q: {d: float(k - i) for i, d in enumerate(hand_order(docs)[:k])} for q, docs in run.items()}
        theirs = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
        ours = evaluate_run(qrels, run, [f"recip_rank_cut_{k}"]).to_dict()   # trec_eval's name: the run's topics
        assert ours == {q: {f"recip_rank_cut_{k}": v["recip_rank"]} for q, v in theirs.items()}


@pytest.mark.parametrize("seed", range(8))
def test_rr_at_k_expected_and_bounds_over_every_tie_order(seed):
    from retrieval_lit.testing import tie_orders
    qrels, run = random_case(np.random.default_rng(5500 + seed), n_topics=6)
    run = {q: dict(list(docs.items())[:9]) for q, docs in run.items()}   # small: every order enumerable
    ranking = rank_run(qrels, run)
    for k in (1, 2, 4, 9):
        m = parse_measures(f"RR@{k}")[0]
        expected = trec_module.measure_values(m, ranking, ties="expected")[0]
        values, (low, high) = trec_module.measure_values(m, ranking, bounds=True)
        best = trec_module.measure_values(m, ranking, ties="optimistic")[0]
        worst = trec_module.measure_values(m, ranking, ties="pessimistic")[0]
        for i, (scores, codes) in enumerate(zip(ranking.scores, ranking.judged)):
            sizes = [len(list(g)) for _, g in groupby(scores.tolist())]
            every = [next((1 / (r + 1) for r, x in enumerate(order[:k]) if x > 0), 0.0)
                     for order in tie_orders(codes.tolist(), sizes)]
            assert low[i] == min(every) == worst[i] and high[i] == max(every) == best[i]
            assert values[i] in every
            assert abs(expected[i] - sum(every) / len(every)) <= 1e-15, (k, i)


def test_rr_at_k_names_and_reading():
    P = parse_measures
    assert P("RR@10") == P("MRR@10") == P("recip_rank_cut_10") == P("recip_rank_cut.10")
    assert P("RR@10")[0] == trec_module.TrecMeasure("recip_rank_cut_10", "recip_rank_cut", 10)
    assert P("RR") == P("MRR") == P("recip_rank")                      # no cut-off: trec_eval's own
    assert [m.name for m in P("recip_rank_cut")] == [f"recip_rank_cut_{k}" for k in trec_module.CUTOFFS]
    assert not any(m.family == "recip_rank_cut" for m in P("all_trec") + P("official"))
    leveled = [(m.name, m.family, m.param, m.rel_level) for m in P(["RR(rel=2)@5", "MRR(rel=2)@5", "MAP(rel=2)@5"])]
    assert leveled == [("RR(rel=2)@5", "recip_rank_cut", 5, 2), ("MRR(rel=2)@5", "recip_rank_cut", 5, 2),
                       ("MAP(rel=2)@5", "map_cut", 5, 2)]           # an alias is printed as typed (it crashed before)
    with pytest.raises(RetrievalInputError, match="cutoffs are whole numbers from 1"):
        P("recip_rank_cut_0")
    with pytest.raises(RetrievalInputError, match="has no trec_eval measure"):
        P("nDCG(dcg=exp-log2)@10")
    with pytest.raises(RetrievalInputError, match="did you mean 'RR@10'"):
        P("RRR@10")
    missing = ({"a": {"x": 1}, "b": {"y": 1}}, {"a": {"z": 2.0, "x": 1.0}})   # topic b: judged, not in the run
    assert evaluate_run(*missing, ["RR@5"]).summary["recip_rank_cut_5"] == 0.25           # ir_measures: b scores 0
    assert evaluate_run(*missing, ["recip_rank_cut_5"]).summary["recip_rank_cut_5"] == 0.5  # trec_eval's reading


def test_rr_at_k_on_the_command_line(tmp_path):
    from retrieval_lit.cli import main
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 2}, "q3": {"e": 1}}
    run = {"q1": {"a": 1.0, "b": 1.0, "x": 0.5}, "q2": {"x": 3.0, "y": 2.0, "c": 1.0}, "q3": {"x": 1.0}}
    write_qrels(qrels, tmp_path / "qrels.txt")
    write_run(run, tmp_path / "run.txt")
    args = ["trec-eval", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "-m", "RR@1", "-m", "RR@3"]
    out = io.StringIO()
    assert main(args + ["-q", "--bounds"], out=out) == 0
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    rr1 = [loop_rr(qrels[q], run[q], 1) for q in ("q1", "q2", "q3")]   # q1: b before a (descending id): 0
    rr3 = [loop_rr(qrels[q], run[q], 3) for q in ("q1", "q2", "q3")]
    assert rr1 == [0.0, 0.0, 0.0] and rr3 == [1 / 2, 1 / 3, 0.0]
    assert [x[0].strip() for x in lines] == ["recip_rank_cut_1", "recip_rank_cut_3"] * 3 + ["recip_rank_cut_1", "recip_rank_cut_3"]
    assert lines[0][1:] == ["q1", f"{0.0:6.4f}", f"{0.0:6.4f}", f"{1.0:6.4f}"]   # the tie a, b: 0 or 1
    assert lines[-2][1:] == ["all", f"{sum(rr1) / 3:6.4f}", f"{0.0:6.4f}", f"{1 / 3:6.4f}"]
    assert lines[-1][1:3] == ["all", f"{sum(rr3) / 3:6.4f}"]
