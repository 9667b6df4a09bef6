"""The torch path (chapter 62): `evaluate(device=...)` and tensor inputs give the numpy path's numbers for every
metric, tie mode, bound, removed item and relevance kind (float64 to 1e-12); bad devices and dtypes are refused by
name; a block too big for the device is split; Evaluator keeps tensor batches on their device and, under
torch.distributed (gloo, two processes), gives every rank the single-process report. Runs on torch's CPU build."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from retrieval_lit import RetrievalInputError, evaluate  # noqa: E402
from retrieval_lit import torch_engine  # noqa: E402
from retrieval_lit.average_precision import expected_ap_sums  # noqa: E402
from retrieval_lit.evaluator import Evaluator  # noqa: E402

METRICS = ["map", "map@5", "map@r", "ndcg@10", "ndcg", "p@3", "recall@4", "mrr", "success@2", "rprec", "rbp@5"]
CUT = ["map@3", "p@2", "ndcg@4", "recall@3", "success@1"]      # all at a cutoff: the top-k path


def close(a, b):
    "Two reports' means, per-query values and bounds agree to 1e-12."
    assert list(a.means) == list(b.means)
    for k in a.means:
        np.testing.assert_allclose(b.per_query[k], a.per_query[k], rtol=0, atol=1e-12, err_msg=k)
        assert a.skipped[k] == b.skipped[k]
        for x, y in zip(a.per_query_bounds.get(k, ()), b.per_query_bounds.get(k, ())):
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-12, err_msg=k)
        for x, y in zip(a.orders.get(k, ()), b.orders.get(k, ())):
            np.testing.assert_allclose(y, x, rtol=0, atol=1e-12, err_msg=k)


def relevance_kwargs(rng, kind, q, n):
    if kind == "class":
        return dict(query_labels=rng.integers(0, 3, q), gallery_labels=rng.integers(0, 3, n))
    if kind == "multihot":
        return dict(query_labels=rng.integers(0, 2, (q, 3)), gallery_labels=rng.integers(0, 2, (n, 3)))
    return dict(relevance=rng.integers(0, 4, (q, n)))


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic", "index"])
@pytest.mark.parametrize("kind", ["class", "multihot", "given"])
@pytest.mark.parametrize("metrics", [METRICS, CUT])
def test_scores_on_device_equal_numpy(ties, kind, metrics):
    rng = np.random.default_rng(len(ties) * 7 + len(kind) + len(metrics))
    for trial in range(6):
        q, n = int(rng.integers(1, 10)), int(rng.integers(1, 25))
        s = np.round(rng.random((q, n)), trial % 3)                  # 0, 1, 2 decimals: many ties
        kw = relevance_kwargs(rng, kind, q, n)
        if trial % 2:
            kw["ignore"] = rng.random((q, n)) < 0.25
        if trial % 3 == 0:
            kw["self_index"] = rng.integers(-1, n, q)
        conv = dict(ties=ties, ap_denominator=["retrieved", "all", "min"][trial % 3], empty=["zero", "skip"][trial % 2])
        bounds = trial % 2 == 0
        a = evaluate(scores=s, metrics=metrics, bounds=bounds, **conv, **kw)
        b = evaluate(scores=torch.tensor(s), metrics=metrics, bounds=bounds, max_block_bytes=int(rng.integers(1, 4000)),
                     **conv, **kw)
        c = evaluate(scores=s, metrics=metrics, bounds=bounds, device="cpu", **conv, **kw)
        close(a, b)
        close(a, c)


ON_DEVICE = [["map"], ["map", "map@5", "p@3", "recall@4", "ndcg@6", "mrr@4", "success@2"],
             ["map@3", "p@2", "recall@7", "map@40", "p@40", "ndcg@3", "success@5", "mrr@40"],
             ["ndcg", "mrr", "ndcg@50"], ["ranx:ndcg_burges@4", "AP@3", "ranx:mrr", "nDCG@5", "ranx:recall@3"]]


@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic", "index"])
@pytest.mark.parametrize("kind", ["class", "multihot", "given"])
@pytest.mark.parametrize("metrics", ON_DEVICE)
def test_device_finish_equals_the_host_finish(ties, kind, metrics, monkeypatch):
    """The metrics the device finishes (whole map, ndcg, mrr; at a cutoff map, ndcg, mrr, p, recall, success: the
    top-k path when no whole-ranking metric is asked)
    equal the numpy path's to 1e-12, and no tie group goes to the host for them (`summary` is never called)."""
    rng = np.random.default_rng(len(ties) * 11 + len(kind) + 3 * len(metrics))

    def no_summary(*a):
        raise AssertionError("the groups went to the host")
    for trial in range(8):
        q, n = int(rng.integers(1, 12)), int(rng.integers(1, 30))
        s = np.round(rng.random((q, n)), trial % 3)                  # 0, 1, 2 decimals: many ties
        kw = relevance_kwargs(rng, kind, q, n)
        if trial % 2:
            kw["ignore"] = rng.random((q, n)) < 0.3
        if trial % 4 == 0:
            kw["self_index"] = rng.integers(-1, n, q)
        conv = dict(ties=ties, ap_denominator=["retrieved", "all", "min"][trial % 3], empty=["zero", "skip"][trial % 2],
                    gain=["exp2", "linear"][trial % 2])
        a = evaluate(scores=s, metrics=metrics, **conv, **kw)
        with monkeypatch.context() as mp:
            mp.setattr(torch_engine._DeviceJob, "summary", no_summary)
            b = evaluate(scores=torch.tensor(s), metrics=metrics, max_block_bytes=int(rng.integers(1, 4000)),
                         **conv, **kw)
            c = evaluate(scores=s.astype(np.float32), metrics=metrics, device="cpu", precision="float32", **conv, **kw)
        close(a, b)
        close(evaluate(scores=s.astype(np.float32), metrics=metrics, precision="float32", **conv, **kw), c)


def test_device_finish_on_embeddings_and_the_empty_policy():
    rng = np.random.default_rng(21)
    q, g = rng.integers(-2, 3, (40, 4)).astype(np.float64), rng.integers(-2, 3, (300, 4)).astype(np.float64)
    ql, gl = rng.integers(0, 6, 40), rng.integers(0, 5, 300)           # class 5: queries with no relevant item
    for ties in ("expected", "index"):
        for metrics in (["map", "p@10", "mrr"], ["map@100", "recall@50", "p@7", "ndcg@20", "success@3"]):
            kw = dict(query_labels=ql, gallery_labels=gl, metrics=metrics, similarity="dot", ties=ties, empty="skip",
                      self_index=np.arange(40))
            a = evaluate(query_embeddings=q, gallery_embeddings=g, **kw)
            b = evaluate(query_embeddings=torch.tensor(q), gallery_embeddings=torch.tensor(g), **kw)
            close(a, b)
            assert b.skipped[metrics[0]] == (ql == 5).sum() > 0
    with pytest.raises(RetrievalInputError, match="^`empty`"):
        evaluate(query_embeddings=torch.tensor(q), gallery_embeddings=torch.tensor(g), query_labels=ql,
                 gallery_labels=gl, metrics="map", empty="error")


def test_device_finish_covers_only_what_it_can():
    "The device finishes a run when every metric's entry declares a device finish serving the conventions, no bounds."
    from retrieval_lit.evaluation import RankingSource, parse_metrics
    from retrieval_lit.metrics import Conventions
    parsed = lambda names: parse_metrics(names, RankingSource("scores", 1, 10))
    reads = lambda names, conv=Conventions(): {n: f.reads for n, f in torch_engine.device_finishes(parsed(names), conv,
                                                                                                  False).items()}
    assert reads(["map", "MAP@100", "p@10", "recall@20"]) == {"map": -1, "map@100": 100, "p@10": 10, "recall@20": 20}
    assert reads(["ndcg", "ndcg@5", "mrr", "mrr@3", "success@2"]) == {"ndcg": -1, "ndcg@5": 5, "mrr": -1, "mrr@3": 3,
                                                                      "success@2": 2}
    assert reads(["ranx:ndcg_burges@4", "AP@3"]) == {"ranx:ndcg_burges@4": 4, "AP@3": 3}   # other tools' names too
    assert reads(["p@10"], Conventions(ap_interpolation="trapezoid")) == {"p@10": 10}       # trapezoid: AP's concern
    for names, bounds, conv in ((["map", "rbp@10"], False, Conventions()), ("map@r", False, Conventions()),
                                ("rprec", False, Conventions()), ("map", True, Conventions()),
                                ("map", False, Conventions(ap_interpolation="trapezoid")), ("P(rel=2)@3", False,
                                                                                           Conventions())):
        assert torch_engine.device_finishes(parsed(names), conv, bounds) is None, names


@pytest.mark.parametrize("similarity", ["cosine", "dot", "l2"])
@pytest.mark.parametrize("precision", ["float64", "float32"])
def test_embeddings_on_device_equal_numpy(similarity, precision):
    rng = np.random.default_rng(3)
    if similarity == "cosine":
        q, g = rng.normal(size=(15, 6)), rng.normal(size=(200, 6))
    else:                          # small integers: both products exact in float32 too, so the ties are the same
        q, g = rng.integers(-3, 4, (15, 6)).astype(np.float64), rng.integers(-3, 4, (200, 6)).astype(np.float64)
    ql, gl = rng.integers(0, 4, 15), rng.integers(0, 4, 200)
    for ties in ("expected", "index"):
        kw = dict(query_labels=ql, gallery_labels=gl, metrics=METRICS, similarity=similarity, precision=precision,
                  ties=ties, bounds=True)
        a = evaluate(query_embeddings=q, gallery_embeddings=g, **kw)
        b = evaluate(query_embeddings=torch.tensor(q), gallery_embeddings=torch.tensor(g), max_block_bytes=50_000, **kw)
        assert a.precision == b.precision == precision
        close(a, b)


def test_expected_ap_closed_form_equals_evaluate():
    rng = np.random.default_rng(5)
    for decimals in (1, 2):
        s, rel = np.round(rng.random((30, 40)), decimals), rng.integers(0, 2, (30, 40))
        cpu = evaluate(scores=s, relevance=rel, metrics="map", empty="skip").per_query["map"]
        vals, idx, valid = torch_engine.sorted_block(torch.tensor(s), None, None)
        groups = torch_engine.tie_groups(vals, idx, valid, torch.tensor(rel, dtype=torch.uint8), 2)
        r = rel.sum(axis=1)
        closed = expected_ap_sums(*groups, 30).numpy() / np.where(r > 0, r, np.nan)
        np.testing.assert_allclose(closed, cpu, rtol=0, atol=1e-12)


@pytest.mark.parametrize("metrics", [["map", "p@5"], ["map", "rbp@5"]])   # finished on the device; on the host
def test_a_block_the_device_cannot_hold_is_split(monkeypatch, metrics):
    rng = np.random.default_rng(9)
    s, rel = np.round(rng.random((23, 30)), 1), rng.integers(0, 2, (23, 30))
    method = "finish" if metrics == ["map", "p@5"] else "summary"
    real, sizes = getattr(torch_engine._DeviceJob, method), []

    def run(self, start, stop, *args):
        sizes.append(stop - start)
        if stop - start > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (simulated)")
        return real(self, start, stop, *args)
    monkeypatch.setattr(torch_engine._DeviceJob, method, run)
    b = evaluate(scores=s, relevance=rel, metrics=metrics, device="cpu")
    assert max(sizes) > 3 and sizes[-1] <= 3
    close(evaluate(scores=s, relevance=rel, metrics=metrics), b)


def test_bad_devices_and_dtypes_are_named():
    s = np.zeros((2, 3))
    cases = [(dict(scores=s, device="gpu7"), "`device`"),
             (dict(scores=s, device=3.5), "`device`"),
             (dict(scores=torch.zeros((2, 3), dtype=torch.float16)), "`scores`"),
             (dict(query_embeddings=torch.zeros((2, 3), dtype=torch.bfloat16), gallery_embeddings=torch.ones((2, 3),
                   dtype=torch.bfloat16)), "`query_embeddings`"),
             (dict(scores=torch.zeros((2, 3), device="meta"), device="cpu"), "`scores`"),
             (dict(query_embeddings=torch.ones((2, 3)), gallery_embeddings=torch.ones((2, 3), device="meta")),
              "`gallery_embeddings`"),
             (dict(scores=torch.tensor([[float("nan"), 1.0, 0.0]])), "`scores`"),
             (dict(query_codes=[[0, 1]], gallery_codes=[[0, 1]], device="cpu"), "`query_codes`"),
             (dict(query_embeddings=torch.ones((2, 3))), "`gallery_embeddings`")]
    if not torch.cuda.is_available():
        cases.append((dict(scores=s, device="cuda"), "`device`"))
    for kw, name in cases:
        kw.setdefault("relevance", np.ones((2, 3), dtype=int) if "scores" in kw else None)
        if kw["relevance"] is None:
            kw.pop("relevance")
            kw.update(query_labels=[0, 1], gallery_labels=[0, 1])
        with pytest.raises(RetrievalInputError) as e:
            evaluate(**kw)
        assert str(e.value).startswith(name), (kw, str(e.value))


def test_torch_is_imported_only_when_asked():
    code = ("import sys, retrieval_lit; retrieval_lit.evaluate(scores=[[1.0, 2.0]], relevance=[[0, 1]]); "
            "import retrieval_lit.evaluator; assert 'torch' not in sys.modules")
    env = dict(os.environ)
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_evaluator_keeps_tensor_batches_on_their_device():
    rng = np.random.default_rng(11)
    x, y = rng.normal(size=(40, 5)), rng.integers(0, 3, 40)
    ev = Evaluator(["map", "p@3"], ties="index")
    buf = torch.tensor(x)
    for a in range(0, 40, 16):
        ev.update(buf[a:a + 16], y[a:a + 16])
    buf.zero_()                                                  # the loop's buffer changes: the batches are copies
    assert all(isinstance(q, torch.Tensor) for q in ev._queries)
    close(evaluate(query_embeddings=x, gallery_embeddings=x, query_labels=y, gallery_labels=y, metrics=["map", "p@3"],
                   ties="index", self_index=np.arange(40)), ev.compute())
    with pytest.raises(RetrievalInputError, match="^`queries`"):
        ev.update(x[:2], y[:2])                                  # a host batch after device batches


WORKER = textwrap.dedent("""
    import json, sys
    import numpy as np, torch, torch.distributed as dist
    from retrieval_lit.evaluator import Evaluator
    rank, world, init, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    dist.init_process_group("gloo", init_method=init, rank=rank, world_size=world)
    rng = np.random.default_rng(0)
    x, y = np.round(rng.normal(size=(30, 4)), 1), rng.integers(0, 3, 30)
    g, gl = np.round(rng.normal(size=(50, 4)), 1), rng.integers(0, 3, 50)
    ev = Evaluator(["map", "map@5", "ndcg@10", "mrr"], similarity="dot")
    mine = [(0, 7), (7, 12)] if rank == 0 else [(12, 20), (20, 30)]
    for a, b in mine:
        ev.update(torch.tensor(x[a:b]), y[a:b])
    report = ev.compute(torch.tensor(g), gl, bounds=True)
    json.dump(report.to_dict(per_query=True), open(out, "w"))
    dist.destroy_process_group()
""")


def test_distributed_compute_gives_every_rank_the_single_process_report(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    init = f"file://{tmp_path / 'rendezvous'}"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, str(script), str(r), "2", init, str(tmp_path / f"r{r}.json")], env=env)
             for r in range(2)]
    assert [p.wait(timeout=240) for p in procs] == [0, 0]
    rng = np.random.default_rng(0)
    x, y = np.round(rng.normal(size=(30, 4)), 1), rng.integers(0, 3, 30)
    g, gl = np.round(rng.normal(size=(50, 4)), 1), rng.integers(0, 3, 50)
    one = evaluate(query_embeddings=x, gallery_embeddings=g, query_labels=y, gallery_labels=gl,
                   metrics=["map", "map@5", "ndcg@10", "mrr"], similarity="dot", bounds=True)
    for r in range(2):
        d = json.loads((tmp_path / f"r{r}.json").read_text())
        assert d["n_queries"] == 30
        for k, v in one.per_query.items():
            np.testing.assert_allclose(np.array(d["per_query"][k], dtype=float), v, rtol=0, atol=1e-12)
            assert abs(d["metrics"][k] - one.means[k]) < 1e-12
            assert abs(d["bounds"][k]["min"] - one.bounds[k][0]) < 1e-12
