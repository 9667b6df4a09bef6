"""Issue 36 ("Rooms"): imports between retrieval_lit's modules go only downwards (no circle), read from the source by
ast; and issue 33: ranx's spellings (`ranx:ndcg_burges@10`, ...) against the installed ranx."""
import ast
import pathlib

import retrieval_lit

PACKAGE = pathlib.Path(retrieval_lit.__file__).parent

# No circle is left: chapter 62 registers its device path with chapter 50 instead of being imported by it.
KNOWN_CIRCLES: set = set()


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict:
    "Each module of the package -> the package's modules it imports anywhere in its source (top level or inside)."
    paths = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - node.level + 1]
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module
                found |= {module} | {f"{module}.{a.name}" for a in node.names}   # `from pkg import module`
        # the package itself (its __init__) is where every import starts, not a room: left out of the graph
        graph[name] = {m for m in found if m in paths and m not in (name, "retrieval_lit")}
    return graph


def circles(graph: dict) -> list:
    "Every strongly connected set of two or more modules (Tarjan), as frozensets."
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_graph_reader_sees_imports():
    g = import_graph()
    assert "retrieval_lit.metrics" in g["retrieval_lit.names"]          # names builds on metrics
    assert "retrieval_lit.ranking" in g["retrieval_lit.metrics"]
    assert "retrieval_lit.evaluation" in g["retrieval_lit.torch_engine"]


def test_circles_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_metrics_does_not_import_names():
    g = import_graph()
    assert "retrieval_lit.names" not in g["retrieval_lit.metrics"]


def test_no_circle_among_modules():
    found = set(circles(import_graph()))
    assert found <= KNOWN_CIRCLES, sorted(map(sorted, found - KNOWN_CIRCLES))
    assert "retrieval_lit.torch_engine" not in import_graph()["retrieval_lit.evaluation"]   # the device path registers
    assert not any("retrieval_lit.metrics" in c or "retrieval_lit.names" in c for c in found)


def test_parse_metric_reads_foreign_names_in_a_fresh_process():
    import subprocess
    import sys
    code = "from retrieval_lit.metrics import parse_metric; print(parse_metric('AP@100').name)"   # names not imported by hand
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "AP@100"


# ------------------------------------------------------------------------ issue 33: ranx's spellings, against ranx
import numpy as np
import pytest

from retrieval_lit import evaluate
from retrieval_lit.metrics import parse_metric
from retrieval_lit.names import did_you_mean, ranx_families, ranx_table, read_name, trec_spec
from retrieval_lit.validate import RetrievalInputError

RANX_SPELLINGS = ["ndcg@5", "ndcg", "ndcg_burges@5", "ndcg_burges@20", "ndcg_burges", "map@5", "map", "mrr@3", "mrr",
                  "precision@4", "precision@20", "recall@4", "r-precision", "hit_rate@2", "map@5-l2", "ndcg@5-l2",
                  "ndcg_burges@5-l2", "recall@6-l2", "mrr-l2"]


RANX_SCRIPT = """
import json, sys
from ranx import Qrels, Run, evaluate
out = []
for grades, scores, spellings in json.load(sys.stdin):
    q, n = len(grades), len(grades[0])
    qrels = Qrels({f"q{i}": {f"d{j}": grades[i][j] for j in range(n)} for i in range(q)})
    run = Run({f"q{i}": {f"d{j}": scores[i][j] for j in range(n)} for i in range(q)})
    evaluate(qrels, run, spellings, make_comparable=True)            # per query into run.scores
    out.append({s: [float(run.scores[s][f"q{i}"]) for i in range(q)] for s in spellings})
json.dump(out, sys.stdout)
"""


def ranx_means(cases):
    """ranx.evaluate's per-query values for each (grades, scores, spellings), the whole gallery as the run (every
    document judged, grade 0 included), computed in a process of its own: importing ranx leaves numba on its
    workqueue threading layer, which aborts a later test of this process whose threads run compiled parallel loops."""
    import importlib.util
    import json
    import subprocess
    import sys
    if importlib.util.find_spec("ranx") is None:
        pytest.skip("ranx is not installed")
    text = json.dumps([(np.asarray(g).tolist(), np.asarray(s).tolist(), list(n)) for g, s, n in cases])
    done = subprocess.run([sys.executable, "-c", RANX_SCRIPT], input=text, capture_output=True, text=True, check=True)
    return [{s: np.array(v, dtype=np.float64) for s, v in out.items()} for out in json.loads(done.stdout)]


def graded_run(seed, ties):
    rng = np.random.default_rng(seed)
    grades = rng.integers(0, 4, (6, 12)).astype(np.uint8)
    grades[5] = 0                                                   # a query without a relevant item: 0 in ranx
    grades[4, :] = np.minimum(grades[4], 1)                         # a binary one
    if ties:
        scores = rng.integers(0, 4, (6, 12)).astype(np.float64)     # few values: ties everywhere
    else:
        scores = rng.permuted(np.tile(np.arange(12.0), (6, 1)), axis=1)
    return grades, scores


def dcg(gains):
    return float(np.sum(np.asarray(gains, dtype=np.float64) / np.log2(np.arange(2, len(gains) + 2))))


def test_ndcg_burges_by_hand():
    "ndcg_burges@3 of one list written out: gains 2^g - 1 over the ideal order of all judged grades."
    grades, scores = np.array([[1, 3, 0, 2]], dtype=np.uint8), np.array([[4.0, 3.0, 2.0, 1.0]])
    hand = dcg([1, 7, 0]) / dcg([7, 3, 1])
    rep = evaluate(metrics=["ranx:ndcg_burges@3", "ranx:ndcg@3"], scores=scores, relevance=grades, gain="linear")
    assert rep["ranx:ndcg_burges@3"] == pytest.approx(hand, abs=1e-15)
    assert rep["ranx:ndcg@3"] == pytest.approx(dcg([1, 3, 0]) / dcg([3, 2, 1]), abs=1e-15)
    assert ranx_means([(grades, scores, ["ndcg_burges@3"])])[0]["ndcg_burges@3"][0] == pytest.approx(hand, abs=1e-15)


@pytest.fixture(scope="module")
def ranx_runs():
    "{(seed, ties): (grades, scores, ranx's values)} for seeds 0, 1, 2, with and without ties (one ranx process)."
    runs = {(seed, ties): graded_run(seed, ties) for seed in (0, 1, 2) for ties in (False, True)}
    values = ranx_means([(g, s, RANX_SPELLINGS) for g, s in runs.values()])
    return {key: (g, s, v) for (key, (g, s)), v in zip(runs.items(), values)}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranx_without_ties_equal(ranx_runs, seed):
    """Distinct scores: every spelling equals ranx per query, under the call's opposite conventions (gain, AP
    denominator, empty policy: the names fix ranx's)."""
    grades, scores, theirs = ranx_runs[seed, False]
    for conv in ({}, {"gain": "linear", "ap_denominator": "retrieved", "empty": "skip"}):
        rep = evaluate(metrics=[f"ranx:{s}" for s in RANX_SPELLINGS], scores=scores, relevance=grades, **conv)
        for s in RANX_SPELLINGS:
            key = parse_metric(f"ranx:{s}").name
            np.testing.assert_allclose(rep.per_query[key], theirs[s], rtol=0, atol=1e-12, err_msg=s)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ranx_with_ties_within_bounds(ranx_runs, seed):
    "Tied scores: ranx's order is one of the orders inside the ties, so its value lies in the library's range."
    grades, scores, theirs = ranx_runs[seed, True]
    rep = evaluate(metrics=[f"ranx:{s}" for s in RANX_SPELLINGS], scores=scores, relevance=grades, bounds=True)
    assert any(np.any(np.diff(rep.per_query_bounds[k], axis=0) > 1e-6) for k in rep.per_query_bounds)  # ties matter
    for s in RANX_SPELLINGS:
        key = parse_metric(f"ranx:{s}").name
        low, high = rep.per_query_bounds[key]
        assert np.all(low - 1e-12 <= theirs[s]) and np.all(theirs[s] <= high + 1e-12), s
        assert np.mean(low) <= np.mean(theirs[s]) + 1e-12 and np.mean(theirs[s]) <= np.mean(high) + 1e-12


def test_ranx_names_do_not_change_library_names():
    "The prefix keeps ranx's lower-case names apart: ndcg@10 and map@10 stay the library's, under the call's."
    assert parse_metric("ndcg@10").name == "ndcg@10" and parse_metric("map@10").name == "map@10"
    assert [read_name(n) for n in ("ndcg@10", "map@10", "mrr", "ndcg_burges@10")] == [None] * 4
    assert parse_metric("ranx:precision@5").name == "p@5"                  # fixes nothing: the library's metric
    assert did_you_mean("ndcg_burges@10")[0] == "ranx:ndcg_burges@10"


@pytest.mark.parametrize("name, message", [
    ("ranx:f1@10", "ranx's f1 (the harmonic mean of precision@k and recall@k) is not computed here"),
    ("ranx:rbp.95", "ranx's rbp"),
    ("ranx:NDCG@10", "ranx has no measure 'NDCG'"),
    ("ranx:precision", "needs a cutoff here"),
    ("ranx:r-precision@3", "takes no cutoff"),
    ("ranx:map@1.5", "a whole number after '@'"),
    ("ranx:map-lx", "-lL is a whole number L >= 1"),
    ("ranx:map@10@3", "cannot read it"),
    ("ranx:", "cannot read it"),
    ("ranx:map@" + "9" * 101, "holds a number of 101 digits"),
])
def test_ranx_bad_spellings(name, message):
    with pytest.raises(RetrievalInputError, match="^`metrics` ") as e:
        parse_metric(name)
    assert message in str(e.value)


def test_ranx_spelling_is_not_a_trec_measure():
    with pytest.raises(RetrievalInputError, match="is ranx's spelling"):
        trec_spec("ranx:map@10")


def test_ranx_table_lists_every_family():
    table = ranx_table()
    for fam, f in ranx_families().items():
        assert (f"`ranx:{fam}" if f.metric or f.metric_at else f"`{fam}`") in table, fam    # read, or refused by name
