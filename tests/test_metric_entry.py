"""Issue 42: a metric's entry is its one home. What the registry holds for each family (the summary finish, the list
function, the device finish, other tools' names) is read by everything else: a metric registered at run time (F1@k,
scripted here in a fresh process) is listed, evaluated on the host and on the torch device path, and read under
ranx's name, with no other file edited; every entry's list function and device finish agree with its summary
finish; chapter 62 holds no list of metrics."""
import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit.metrics import Conventions, _REGISTRY, known_metrics, parse_metric
from retrieval_lit.ranking import list_summary

ROOT = Path(__file__).resolve().parents[1]

F1_SCRIPT = r'''
import json, sys
import numpy as np
from retrieval_lit import evaluate, torch_engine
from retrieval_lit.metrics import DeviceFinish, Metric, PeerName, known_metrics, parse_cutoff, parse_metric, register_metric
from retrieval_lit.names import ranx_table, read_name
from retrieval_lit.precision import device_hits, hits_in_top
from retrieval_lit.ranking import list_summary

# ---- what an outside maintainer writes in the F1 chapter, and nothing else
def f1_from_summary(summary, k, conventions):
    "(Q,) F1@k = 2 H / (k + R): linear in the hits H, so its mean over tie orders is 2 E[H] / (k + R)."
    num, den = hits_in_top(summary, k, conventions.ties)
    return 2 * num[:, 0] / (den[:, 0] * (k + summary.n_relevant))

def f1_finish(k):
    return DeviceFinish(k, lambda ranking, c: device_hits(ranking, k, c.ties) + (ranking.relevant_totals(),),
                        lambda sums, c, n: 2 * sums[0] / (sums[1] * (k + sums[2])))

def build_f1(match):
    k = parse_cutoff(match["k"], match.group(0))
    return Metric(f"f1@{k}", lambda s, c: f1_from_summary(s, k, c), cutoff=k, device=f1_finish(k),
                  on_list=lambda g, t, c: float(f1_from_summary(list_summary(g, t), k, c)[0]))

register_metric(r"f1@(?P<k>[0-9]+)", build_f1, "f1@10", "F1 of the top k: 2 P R / (P + R); see ties",
                peers=(PeerName("ranx", "f1", metric_at="f1@{k}", conventions=(("empty", "zero"),)),))
# ---- the checks
out = {"listed": "f1@10" in [e for e, _ in known_metrics()], "ir_spelling": parse_metric("F1@3").name,
       "ranx_name": parse_metric("ranx:f1@3").name, "ranx_row": "`ranx:f1@k`" in ranx_table(),
       "ranx_refused_row": [l for l in ranx_table().splitlines() if "refused" in l][0],
       "read_as_ranx": read_name("ranx:f1@3").metric}
rng = np.random.default_rng(4)
distinct = rng.permuted(np.tile(np.arange(30.0), (12, 1)), axis=1)
grades = (rng.random((12, 30)) < 0.3).astype(int)
grades[3] = 0
host = evaluate(scores=distinct, relevance=grades, metrics=["f1@5", "p@5", "recall@5", "ranx:f1@5"], ties="index")
out["host"] = host.per_query["f1@5"].tolist()
out["p"], out["r"] = host.per_query["p@5"].tolist(), host.per_query["recall@5"].tolist()
out["ranx_host"] = host.per_query["ranx:f1@5"].tolist()
calls = []
real = torch_engine.TorchRanking.relevant_totals
torch_engine.TorchRanking.relevant_totals = lambda self: calls.append(1) or real(self)
torch_engine._DeviceJob.summary = lambda *a: (_ for _ in ()).throw(AssertionError("the groups went to the host"))
tied = np.round(rng.random((12, 30)), 1)
out["device"] = {}
for ties in ("expected", "optimistic", "pessimistic", "index"):
    a = evaluate(scores=tied, relevance=grades, metrics=["f1@4", "f1@40"], ties=ties)
    b = evaluate(scores=tied, relevance=grades, metrics=["f1@4", "f1@40"], ties=ties, device="cpu", max_block_bytes=3000)
    out["device"][ties] = max(float(np.abs(a.per_query[m] - b.per_query[m]).max()) for m in ("f1@4", "f1@40"))
out["device_part_ran"] = len(calls) > 0
try:
    from ranx import Qrels, Run, evaluate as ranx_evaluate
    qrels = Qrels({f"q{i}": {f"d{j}": int(grades[i, j]) for j in range(30)} for i in range(12)})
    run = Run({f"q{i}": {f"d{j}": float(distinct[i, j]) for j in range(30)} for i in range(12)})
    ranx_evaluate(qrels, run, ["f1@5"], make_comparable=True)
    out["ranx"] = [float(run.scores["f1@5"][f"q{i}"]) for i in range(12)]
except ImportError:
    out["ranx"] = None
json.dump(out, sys.stdout)
'''


def test_a_new_metric_needs_only_its_entry():
    """F1@k registered at run time, in a fresh process: listed; evaluated on the host (= 2 P R / (P + R)); on the
    torch path's CPU device by its device finish (no groups to the host), equal to the host to 1e-12 in every tie
    mode; read under ranx's name `ranx:f1@k` (which was refused before), equal to ranx's own f1 on a ranking without
    ties. No file but the script is edited."""
    pytest.importorskip("torch")
    done = subprocess.run([sys.executable, "-c", F1_SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    assert out["listed"] and out["ir_spelling"] == "f1@3" and out["read_as_ranx"] == "f1@3"
    assert out["ranx_name"] == "ranx:f1@3" and out["ranx_row"] and "`f1`" not in out["ranx_refused_row"]
    p, r, f1 = (np.array(out[k]) for k in ("p", "r", "host"))
    np.testing.assert_allclose(f1, np.divide(2 * p * r, p + r, out=np.zeros_like(p), where=p + r > 0), rtol=0,
                               atol=1e-15)
    assert out["ranx_host"] == out["host"]
    assert out["device_part_ran"] and all(d <= 1e-12 for d in out["device"].values()), out["device"]
    if out["ranx"] is not None:
        np.testing.assert_allclose(f1, out["ranx"], rtol=0, atol=1e-12)


def family_names(k: int = 3) -> list:
    "One name per registered family at cutoff (or radius) k, and the whole-ranking form where the pattern has one."
    out = []
    for e in list(_REGISTRY):
        example = e.example
        stem = example.split("@")[0]
        named = example if "@" not in example else (f"{stem}@r" if example.endswith("@r") else
                                                   f"{stem}@r{k}" if example[len(stem) + 1:].startswith("r") else
                                                   f"{stem}@{k}")
        out.append(named)
        if "@" in example and e.pattern.fullmatch(stem):
            out.append(stem)
    return list(dict.fromkeys(out))


def test_every_list_function_agrees_with_its_summary_finish():
    "An entry's `on_list` (its chapter's list function) and `compute` on that list's summary agree, every tie mode."
    known_metrics()
    rng = np.random.default_rng(42)
    names = [n for n in family_names() if parse_metric(n).on_list is not None]
    assert {"p@3", "recall@3", "rprec", "map@3", "map", "ndcg@3", "ndcg", "err@3", "p@r3"} <= set(names)
    for _ in range(40):
        sizes = [int(x) for x in rng.integers(1, 4, int(rng.integers(1, 5)))]
        grades = [int(x) for x in rng.integers(0, 3, sum(sizes))]
        for name in names:
            m = parse_metric(name)
            for ties in ("expected", "optimistic", "pessimistic", "index"):
                c = Conventions(ties=ties)
                want = m.compute(list_summary(grades, sizes), c)[0]
                assert np.isclose(m.on_list(grades, sizes, c), want, rtol=0, atol=1e-12, equal_nan=True), (name, ties)


def test_every_device_finish_agrees_with_its_summary_finish():
    "Every entry that declares a device finish gives the host's values on the torch path's CPU device (ties, R = 0)."
    pytest.importorskip("torch")
    from retrieval_lit import evaluate
    known_metrics()
    names = [n for n in family_names(4) if parse_metric(n).device is not None]
    assert {"p@4", "recall@4", "mrr@4", "mrr", "success@4", "map@4", "map", "ndcg@4", "ndcg"} <= set(names)
    rng = np.random.default_rng(7)
    s, grades = np.round(rng.random((9, 25)), 1), rng.integers(0, 3, (9, 25))
    grades[2] = 0
    for ties in ("expected", "index"):
        a = evaluate(scores=s, relevance=grades, metrics=names, ties=ties, empty="skip")
        b = evaluate(scores=s, relevance=grades, metrics=names, ties=ties, empty="skip", device="cpu")
        for n in names:
            np.testing.assert_allclose(b.per_query[n], a.per_query[n], rtol=0, atol=1e-12, err_msg=n)


def test_chapter_62_holds_no_list_of_metrics():
    """No string of the torch path's code (docstrings and evaluate's default `metrics=("map",)` apart) is a metric
    name: which metrics finish there is theirs to say."""
    known_metrics()
    tree = ast.parse((ROOT / "retrieval_lit" / "torch_engine.py").read_text(encoding="utf-8"))
    skip = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and ast.get_docstring(n)}
    for f in ast.walk(tree):
        if isinstance(f, ast.FunctionDef):
            skip |= {id(c) for d in f.args.defaults + [d for d in f.args.kw_defaults if d] for c in ast.walk(d)}
    strings = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
               and id(n) not in skip]
    named = [s for s in strings if any(e.pattern.fullmatch(s.lower()) or s.startswith(e.example.split("@")[0] + "|")
                                       for e in _REGISTRY)]
    assert named == [] and "_ON_DEVICE" not in (ROOT / "retrieval_lit" / "torch_engine.py").read_text()
