"""The declared grade scale (issue 36) reaches the TREC path, the torch path and the Dask grades= path.

ERR@k reads the scale: R(g) = (2^g - 1) / 2^max_grade. Inferred, the scale is the largest grade of the batch, so a
topic lacking the top grade changes value with the topics beside it; declared (`max_grade=`), it does not. Expected
values come from `err_by_hand`, a plain loop over the ranked grades (Chapelle et al. 2009), not from the library."""
import subprocess
import sys

import numpy as np
import pytest

from retrieval_lit import evaluate
from retrieval_lit.trec import evaluate_run
from retrieval_lit.validate import RetrievalInputError


def err_by_hand(grades, k, scale):
    "ERR@k of grades in rank order: sum over r of R(g_r) / r times the chance no earlier item satisfied."
    total, not_yet = 0.0, 1.0
    for r, g in enumerate(grades[:k], start=1):
        p = (2 ** g - 1) / 2 ** scale
        total += not_yet * p / r
        not_yet *= 1 - p
    return total


# topic a: grades 0..2 only; topic b holds grade 3. Scores distinct: no tie, the order is the scores'.
QRELS_A = {"a": {"d1": 2, "d2": 0, "d3": 1, "d4": 2, "d5": 0}}
QRELS_AB = {**QRELS_A, "b": {"e1": 3, "e2": 1}}
RUN = {"a": {"d1": 0.2, "d2": 0.9, "d3": 0.7, "d4": 0.4, "d5": 0.1, "x9": 0.8},   # x9 unjudged: grade 0
       "b": {"e1": 0.5, "e2": 0.6}}
A_IN_RANK_ORDER = [0, 0, 1, 2, 2, 0]          # d2, x9, d3, d4, d1, d5


def test_evaluate_run_err_of_a_topic_is_the_same_alone_and_beside_when_max_grade_is_declared():
    alone = evaluate_run(QRELS_A, RUN, ["err_cut_5"], max_grade=3)
    beside = evaluate_run(QRELS_AB, RUN, ["err_cut_5"], max_grade=3)
    assert alone.qids == ["a"] and beside.qids == ["a", "b"]
    want = err_by_hand(A_IN_RANK_ORDER, 5, 3)
    assert alone.per_query["err_cut_5"][0] == pytest.approx(want, abs=1e-15)
    assert beside.per_query["err_cut_5"][0] == alone.per_query["err_cut_5"][0]        # bit for bit
    assert beside.per_query["err_cut_5"][1] == pytest.approx(err_by_hand([1, 3], 5, 3), abs=1e-15)
    # inferred: alone the scale is 2 (topic a's largest grade), beside b it is 3
    assert evaluate_run(QRELS_A, RUN, ["err_cut_5"]).per_query["err_cut_5"][0] == pytest.approx(
        err_by_hand(A_IN_RANK_ORDER, 5, 2), abs=1e-15)
    assert evaluate_run(QRELS_AB, RUN, ["err_cut_5"]).per_query["err_cut_5"][0] == pytest.approx(want, abs=1e-15)


def test_evaluate_run_refuses_a_qrels_grade_above_the_declared_scale():
    with pytest.raises(RetrievalInputError, match=r"^`max_grade` is 2, below the grade 3 the qrels hold"):
        evaluate_run(QRELS_AB, RUN, ["err_cut_5"], max_grade=2)
    for bad in (0, 256, 2.5, "3"):
        with pytest.raises(RetrievalInputError, match=r"^`max_grade` "):
            evaluate_run(QRELS_A, RUN, ["err_cut_5"], max_grade=bad)


def write_trec(tmp_path, qrels, name):
    path = tmp_path / name
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    return str(path)


def cli(*argv):
    "The installed command's entry point in a fresh process: (exit code, stdout, stderr)."
    entry = "import sys; from retrieval_lit.cli import main; sys.exit(main())"
    p = subprocess.run([sys.executable, "-c", entry, *argv], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr.strip()


def topic_value(stdout, measure, topic):
    "The value trec-eval -q prints for one topic's line."
    for line in stdout.splitlines():
        name, where, value = line.split("\t")[:3]
        if name.strip() == measure and where == topic:
            return float(value)
    raise AssertionError(f"no {measure} line for {topic}: {stdout!r}")


def test_trec_eval_command_line_max_grade(tmp_path):
    qa, qab = write_trec(tmp_path, QRELS_A, "qa.txt"), write_trec(tmp_path, QRELS_AB, "qab.txt")
    run = tmp_path / "run.txt"
    run.write_text("".join(f"{q} Q0 {d} 0 {s} r\n" for q, docs in RUN.items() for d, s in docs.items()))
    values = []
    for qrels in (qa, qab):
        code, out, err = cli("trec-eval", qrels, str(run), "-q", "-m", "err_cut_5", "--max-grade", "3")
        assert code == 0, err
        values.append(topic_value(out, "err_cut_5", "a"))
    assert values[0] == values[1] == round(err_by_hand(A_IN_RANK_ORDER, 5, 3), 4)
    code, out, err = cli("trec-eval", qa, str(run), "-q", "-m", "err_cut_5")           # inferred: scale 2
    assert code == 0 and topic_value(out, "err_cut_5", "a") == round(err_by_hand(A_IN_RANK_ORDER, 5, 2), 4)
    for bad, says in (("2", "`max_grade` is 2, below the grade 3 the qrels hold"), ("0", "`max_grade` must be"),
                      ("three", "--max-grade: invalid int value")):
        code, out, err = cli("trec-eval", qab, str(run), "-m", "err_cut_5", "--max-grade", bad)
        assert code == 2 and err.count("\n") == 0 and says in err and "Traceback" not in err, (bad, code, err)


def graded_case(seed=36):
    "Scores with ties and grades 0..3 where query 0 lacks grade 3 (grades 0..2)."
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 6, (5, 40)).astype(np.float64)      # integer scores: many ties
    grades = rng.integers(0, 4, (5, 40))
    grades[0] = np.minimum(grades[0], 2)
    return scores, grades


NAMES = ["err@5", "err@40", "ndcg@10", "map"]


def test_evaluate_on_torch_cpu_with_max_grade_equals_numpy():
    torch = pytest.importorskip("torch")
    from retrieval_lit.torch_engine import evaluate_on_device
    scores, grades = graded_case()
    ref = evaluate(scores=scores, relevance=grades, metrics=NAMES, max_grade=3, bounds=True)
    for on in (evaluate_on_device("cpu", scores=torch.from_numpy(scores), relevance=grades, metrics=NAMES,
                                  max_grade=3, bounds=True),
               evaluate_on_device("cpu", scores=torch.from_numpy(scores[:1]), relevance=grades[:1],
                                  metrics=NAMES, max_grade=3, bounds=True)):     # query 0 alone: the same value
        n = len(on.per_query["err@5"])
        for name in NAMES:
            assert np.array_equal(on.per_query[name], ref.per_query[name][:n]), name
            for a, b in zip(on.per_query_bounds[name], ref.per_query_bounds[name]):
                assert np.array_equal(a, b[:n]), name


def test_evaluate_device_cpu_with_max_grade_equals_numpy():
    torch = pytest.importorskip("torch")
    scores, grades = graded_case()
    ref = evaluate(scores=scores, relevance=grades, metrics=NAMES, max_grade=3)
    on = evaluate(scores=torch.from_numpy(scores), relevance=torch.from_numpy(grades), metrics=NAMES, max_grade=3,
                  device="cpu")
    for name in NAMES:
        assert np.array_equal(on.per_query[name], ref.per_query[name]), name
    # query 0 lacks grade 3: on the declared scale its err@5 is the same alone
    alone = evaluate(scores=torch.from_numpy(scores[:1]), relevance=grades[:1], metrics=["err@5"], max_grade=3,
                     device="cpu")
    assert alone.per_query["err@5"][0] == ref.per_query["err@5"][0]


@pytest.fixture(scope="module")
def client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def test_dask_grades_path_with_max_grade_equals_one_process(client):
    from retrieval_lit import engine
    from retrieval_lit.metrics import Conventions, parse_metric
    from retrieval_lit.relevance import relevance_from_matrix
    from retrieval_lit.sharded import sharded_scan
    rng = np.random.default_rng(7)
    nq, ng, nbits = 6, 300, 16
    qb, gb = rng.integers(0, 2, (nq, nbits)), rng.integers(0, 2, (ng, nbits))
    gb[rng.integers(0, ng, 80)] = gb[0]                            # repeated codes: big tie groups
    m = rng.integers(0, 3, (nq, ng))                               # grades 0..2: no block holds grade 3
    blocks = [[m[:2, :100], m[:2, 100:]], [m[2:, :100], m[2:, 100:]]]
    got = sharded_scan([qb[:2], qb[2:]], [gb[:100], gb[100:]], relevance=blocks, stable_ranks=-1, index_sums=True,
                       max_grade=3, client=client)
    ref = engine.scan(qb, gb, relevance_from_matrix(m, nq, ng, max_grade=3), stable_ranks=-1, index_sums=True)
    assert got.summary.max_grade == ref.summary.max_grade == 3
    assert np.array_equal(got.summary.hist, ref.summary.hist)
    assert np.array_equal(got.summary.top_grades, ref.summary.top_grades)
    for f in ("precision_sum", "discount_sum", "r_hits"):
        assert np.array_equal(getattr(got.sums, f), getattr(ref.sums, f)), f
    err = parse_metric("err@20")
    conv = Conventions.make(ties="expected")
    assert np.array_equal(err.compute(got.summary, conv), evaluate(qb, gb, relevance=m, metrics="err@20",
                                                                   max_grade=3).per_query["err@20"])
    # None: inferred from the blocks as before (grades 0..2), and a scale below a block's grade refused
    inferred = sharded_scan([qb[:2], qb[2:]], [gb[:100], gb[100:]], relevance=blocks, client=client)
    assert inferred.summary.max_grade == 2
    with pytest.raises(RetrievalInputError, match=r"^`max_grade` is 1, below the grade 2"):
        sharded_scan([qb[:2], qb[2:]], [gb[:100], gb[100:]], relevance=blocks, max_grade=1, client=client)
