"""The lean path of a typical TREC run (issue 41; module `trec`, notebook 52): what `rank_run` builds from the tables,
and what the small-file reader reads, against references written independently.

Checked against: a ranking written topic by topic in plain Python (trec_eval's order by `trec_order`, each document's
judgement looked up in the checked dictionaries, the summary by `score_ranking.summarize_lists`, the counts by loops):
the same `TrecRanking`, array for array, and the same values of every measure family under every tie mode, with and
without bounds, bit for bit; Python's own `float()` and `int()` on every number text the small-file reader meets; and
the values of a run whatever the order of its dictionaries."""
import numpy as np
import pytest

import retrieval_lit.trec as trec_module
from retrieval_lit.score_ranking import summarize_lists
from retrieval_lit.trec import (MAX_TREC_GRADE, TrecRanking, TrecReport, check_qrels, check_run, evaluate_run,
                                parse_measures, rank_run, read_qrels, read_run, trec_order, unsupported)

IDS = ["d1", "d10", "d2", "D7", "é", "ée", "z", "文書", "a" * 17, "doc-9_x", "0", "Z9", "x" * 8, "y" * 9]
MEASURES = ["all_trec", "judged_5", "err_cut_10", "recip_rank_cut_3"]
TIES = ("trec_eval", "expected", "optimistic", "pessimistic")


def random_dicts(rng, n_topics=9, one_size=False):
    """Qrels with grades 0..4 and negative (pooled, unjudged) entries, runs with few distinct scores (ties everywhere),
    unicode and long ids, topics only in the run or only in the qrels, an empty topic in each; one_size=True: every
    run topic retrieves the same number of documents (the matrix path)."""
    qrels, run = {}, {}
    size = int(rng.integers(1, 25))
    for t in range(n_topics):
        pool = [f"{IDS[i % len(IDS)]}{i // len(IDS) or ''}" for i in rng.choice(80, 40, replace=False)]
        qid = f"q{t}" if t % 3 else f"{t}é"
        if t != 1:
            qrels[qid] = {d: int(rng.choice([-2, -1, 0, 0, 0, 1, 2, 4])) for d in pool[:int(rng.integers(0, 30))]}
        if t != 2:
            n = size if one_size else int(rng.integers(0, 40))
            run[qid] = {d: float(rng.integers(0, 4)) * 0.5 - 0.5 for d in rng.permutation(pool)[:n].tolist()}
    if not one_size:
        run["zz"], qrels["zz"] = {}, {}
    return qrels, run


def reference(qrels: dict, run: dict, complete: bool) -> TrecRanking:
    "The TrecRanking written topic by topic in plain Python, from the checked dictionaries."
    qrels, run = check_qrels(qrels), check_run(run)
    qids = sorted(qrels) if complete else sorted(q for q in qrels if q in run)
    scores, judged, pooled, unranked = [], [], [], np.zeros((len(qids), MAX_TREC_GRADE + 1), dtype=np.int64)
    for i, q in enumerate(qids):
        order = trec_order(run.get(q, {}))
        scores.append(np.array([s for _, s in order], dtype=np.float64))
        judged.append(np.array([max(qrels[q].get(d, -1), -1) for d, _ in order], dtype=np.int64))
        pooled.append(np.array([qrels[q].get(d, 0) < 0 for d, _ in order], dtype=bool))
        for d, rel in qrels[q].items():
            if rel >= 0 and d not in run.get(q, {}):
                unranked[i, rel] += 1
    grades = [int(j.max(initial=0)) for j in judged] + [int(g) for g in np.flatnonzero(unranked.any(axis=0))]
    summary = summarize_lists(scores, [np.maximum(j, 0) for j in judged], stable_ranks=-1,
                              unranked=unranked[:, :max(grades, default=0) + 1])
    n_nonrel = np.array([sum(v == 0 for v in qrels[q].values()) for q in qids], dtype=np.int64)
    dropped = [q for q in sorted(run) if q not in qrels]
    return TrecRanking(qids, summary, scores, judged, n_nonrel, dropped,
                       pooled if any(p.any() for p in pooled) else [])


def same_ranking(a: TrecRanking, b: TrecRanking):
    assert a.qids == b.qids and a.dropped == b.dropped
    for name in ("hist", "top_grades", "unranked"):
        x, y = getattr(a.summary, name), getattr(b.summary, name)
        assert x.shape == y.shape and x.dtype == y.dtype and (x == y).all(), name
    assert a.summary.n_ranks == b.summary.n_ranks and a.summary.kind == b.summary.kind
    assert a.n_nonrel.tolist() == b.n_nonrel.tolist() and a.n_nonrel.dtype == b.n_nonrel.dtype
    for x, y in ((a.scores, b.scores), (a.judged, b.judged), (a.pooled, b.pooled)):
        assert len(x) == len(y) and all(u.dtype == v.dtype and u.tobytes() == v.tobytes() for u, v in zip(x, y))


def report_bytes(report: TrecReport):
    return ({m: v.tobytes() for m, v in report.per_query.items()}, report.summary, report.texts,
            {m: tuple(x.tobytes() for x in v) for m, v in report.bounds.items()}, report.summary_bounds)


@pytest.mark.parametrize("seed", range(10))
def test_rank_run_is_the_ranking_written_topic_by_topic(seed, monkeypatch):
    "From dictionaries and from tables, every topic size and subset: the plain-Python ranking, array for array."
    rng = np.random.default_rng(4100 + seed)
    qrels, run = random_dicts(rng, one_size=seed % 3 == 0)
    tables = trec_module._as_table(qrels, "qrels"), trec_module._as_table(run, "run")
    for complete in (False, True):
        want = reference(qrels, run, complete)
        same_ranking(rank_run(qrels, run, complete), want)
        same_ranking(rank_run(*tables, complete), want)
        with monkeypatch.context() as m:                         # a topic at a time, and the compiled merge
            m.setattr(trec_module, "_COMPILED_JOIN_ROWS", 0)
            m.setattr(trec_module, "_summarize_topics", lambda *a: summarize_topics(*a, block_rows=7))
            same_ranking(rank_run(*tables, complete), want)


summarize_topics = trec_module._summarize_topics


@pytest.mark.parametrize("seed", range(6))
def test_every_measure_under_every_tie_mode_is_the_references(seed):
    "Every family (all_trec, Judged@k, ERR@k, RR@k), every tie mode, bounds or not: the reference's values exactly."
    rng = np.random.default_rng(4200 + seed)
    qrels, run = random_dicts(rng, one_size=seed % 2 == 0)
    for complete in (False, True):
        want_ranking = reference(qrels, run, complete)
        for ties in TIES:
            for bounds in (False, True):
                got = evaluate_run(qrels, run, MEASURES, ties=ties, bounds=bounds, complete=complete,
                                   skip_unsupported=True)
                measures = [m for m in parse_measures(MEASURES) if unsupported(m, ties, bounds) is None]
                want = trec_module._fill_report(TrecReport(want_ranking.qids, measures, {}, {}, ties, "run",
                                                           want_ranking.dropped), want_ranking, bounds, "9")
                assert report_bytes(got) == report_bytes(want), (complete, ties, bounds)


def test_topics_of_one_size_are_summarised_as_lists():
    "The matrix path of `_summarize_topics` and `_trec_rows` (every topic the same size): summarize_lists' arrays."
    rng = np.random.default_rng(41)
    scores = np.round(rng.normal(size=(6, 9)), 1)
    order = np.lexsort((np.arange(9)[None, :].repeat(6, 0), -scores), axis=1)
    scores = np.take_along_axis(scores, order, axis=1)
    grades = rng.integers(0, 3, (6, 9))
    unranked = rng.integers(0, 2, (6, 3))
    got = summarize_topics(np.full(6, 9), scores.ravel(), grades.ravel(), unranked)
    want = summarize_lists(list(scores), list(grades), stable_ranks=-1, unranked=unranked)
    for name in ("hist", "top_grades", "unranked"):
        a, b = getattr(got, name), getattr(want, name)
        assert a.shape == b.shape and a.dtype == b.dtype and (a == b).all(), name


@pytest.mark.parametrize("seed", range(4))
def test_values_do_not_depend_on_the_order_of_the_dictionaries(seed):
    rng = np.random.default_rng(4300 + seed)
    qrels, run = random_dicts(rng)
    shuffle = lambda d: {q: dict(sorted(docs.items(), key=lambda _: rng.random()))
                         for q, docs in sorted(d.items(), key=lambda _: rng.random())}
    a = evaluate_run(qrels, run, MEASURES, skip_unsupported=True)
    b = evaluate_run(shuffle(qrels), shuffle(run), MEASURES, skip_unsupported=True)
    assert report_bytes(a) == report_bytes(b)


FLOAT_TEXTS = ["0.978", "-0", "-0.0", "+.5e-3", "5.", ".5", "1e22", "1E-22", "123456789012345", "1234567890123456789",
               "0.1000000000000000055511151231257827", "1_000.25", "2.5e-308", "4.9e-324", "17", "-3.25e+2",
               "0000.5", "1.7976931348623157e308", "9007199254740993", "0.30000000000000004"]
BAD_FLOATS = ["inf", "-Infinity", "nan", "1e999", "1e", ".", "1__0", "0x1p3", "1.0f", "--1", "_1", "1_"]
INT_TEXTS = ["0", "7", "-1", "+2", "007", "1_0", "-0", "255", "-9223372036854775808"]
BAD_INTS = ["1.5", "1e3", "x", "-", "9223372036854775808", "0x10", "1__0"]


@pytest.mark.parametrize("seed", range(6))
def test_the_small_reader_reads_numbers_as_python_does(tmp_path, seed):
    "Each score text as float() reads it and each relevance as int() reads it, bit for bit; a bad one stops the file."
    rng = np.random.default_rng(4400 + seed)
    spread = rng.normal(size=20) * 10.0 ** rng.integers(-9, 9, 20)
    scores = rng.choice(FLOAT_TEXTS, 40).tolist() + [repr(x) for x in spread.tolist()]
    ranks = rng.choice(["1", "-3", "+4", "0012", "1_000"] if seed % 2 else ["1", "0012", "99999999999999999999999"],
                       len(scores)).tolist()                   # digits only: any size is a whole number
    lines = [f"q{i % 3} Q0 d{i} {r} {s} tag" for i, (r, s) in enumerate(zip(ranks, scores))]
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    got = read_run(tmp_path / "run.txt")
    want = {}
    for i, s in enumerate(scores):
        want.setdefault(f"q{i % 3}", {})[f"d{i}"] = float(s)
    assert got.keys() == want.keys()
    for q in want:
        assert np.array(list(dict(sorted(got[q].items())).values())).tobytes() == \
               np.array(list(dict(sorted(want[q].items())).values())).tobytes()
    rels = rng.choice(INT_TEXTS, 30).tolist()
    rels = [r for r in rels if int(r) <= MAX_TREC_GRADE]
    (tmp_path / "qrels.txt").write_text("".join(f"q 0 d{i} {r}\n" for i, r in enumerate(rels)))
    assert read_qrels(tmp_path / "qrels.txt") == {"q": {f"d{i}": int(r) for i, r in enumerate(rels)}}
    kinds = ("id", "skip", "id", "check", "float", "skip")
    assert trec_module._small_fields(tmp_path / "run.txt", trec_module.RUN_COLUMNS, kinds) is not None


@pytest.mark.parametrize("text", BAD_FLOATS)
def test_a_score_python_refuses_is_a_doubt_and_the_careful_reader_names_it(tmp_path, text):
    (tmp_path / "run.txt").write_text(f"q Q0 a 1 0.5 t\nq Q0 b 2 {text} t\n")
    kinds = ("id", "skip", "id", "check", "float", "skip")
    assert trec_module._small_fields(tmp_path / "run.txt", trec_module.RUN_COLUMNS, kinds) is None
    with pytest.raises(trec_module.TrecFileError, match=r"run.txt, line 2: the score .* is not"):
        read_run(tmp_path / "run.txt")


@pytest.mark.parametrize("text", BAD_INTS)
def test_a_relevance_or_rank_python_refuses_is_named(tmp_path, text):
    (tmp_path / "qrels.txt").write_text(f"q 0 a 1\nq 0 b {text}\n")
    assert trec_module._small_fields(tmp_path / "qrels.txt", trec_module.QRELS_COLUMNS,
                                     ("id", "skip", "id", "int")) is None
    with pytest.raises(trec_module.TrecFileError, match=r"qrels.txt, line 2: the relevance"):
        read_qrels(tmp_path / "qrels.txt")
    if text != "9223372036854775808":                            # a rank of any size is a whole number
        (tmp_path / "run.txt").write_text(f"q Q0 a 1 0.5 t\nq Q0 b {text} 0.5 t\n")
        with pytest.raises(trec_module.TrecFileError, match=r"run.txt, line 2: the rank"):
            read_run(tmp_path / "run.txt")
