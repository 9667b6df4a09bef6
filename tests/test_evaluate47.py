"""Issue 47's evaluate-level and GPU-finish items, on torch's CPU build: one thread pool per `evaluate` call (not one
per summary); class labels without removed items give R from the gallery's class sizes (no (block, N) grade matrix is
made on the device) and a cutoff is found by one top-k pass; the device finish gives the numpy path's values (float64,
to 1e-12; the tie groups themselves are the same)."""
import numpy as np
import pytest

import retrieval_lit.evaluation as ev
from retrieval_lit import evaluate


class CountingPool(ev.ThreadPoolExecutor):
    made = 0

    def __init__(self, *args, **kwargs):
        CountingPool.made += 1
        super().__init__(*args, **kwargs)


@pytest.mark.parametrize("source", ["codes", "embeddings"])
def test_one_thread_pool_per_evaluate_call(monkeypatch, source):
    """Many blocks, each finished in several runs of queries on two threads (runs of one query: FINISH_BYTES made
    small): one pool for the whole call, not one per block, and the same values as on one thread."""
    monkeypatch.setattr(ev, "ThreadPoolExecutor", CountingPool)
    monkeypatch.setattr(ev, "FINISH_BYTES", 1)
    rng = np.random.default_rng(47)
    if source == "codes":
        kw = dict(query_codes=rng.integers(0, 2, (40, 12)), gallery_codes=rng.integers(0, 2, (300, 12)),
                  engine="numpy")
    else:
        kw = dict(query_embeddings=rng.normal(size=(40, 6)), gallery_embeddings=rng.normal(size=(300, 6)))
    kw.update(query_labels=rng.integers(0, 4, 40), gallery_labels=rng.integers(0, 4, 300), metrics=["map", "p@10"],
              bounds=True)
    one = evaluate(max_block_bytes=1 << 28, threads=1, **kw)
    CountingPool.made = 0
    many = evaluate(max_block_bytes=20_000, threads=2, **kw)     # blocks of a few queries, runs of one
    assert CountingPool.made == 1
    for name in one.per_query:
        assert np.array_equal(one.per_query[name], many.per_query[name]), name


def finish_ops(monkeypatch, run) -> list:
    """(op, dtype, shape) of every tensor an op made while the device finished the blocks (`_DeviceJob.finish`: the
    ranking and the metrics' parts, not the one-time checks of the inputs), as torch dispatches them: what a GPU
    would launch and allocate."""
    torch = pytest.importorskip("torch")
    from torch.utils._python_dispatch import TorchDispatchMode
    from retrieval_lit import torch_engine
    made = []

    class Record(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in (out if isinstance(out, (tuple, list)) else (out,)):
                if isinstance(t, torch.Tensor):
                    made.append((str(func), t.dtype, tuple(t.shape)))
            return out
    real = torch_engine._DeviceJob.finish

    def recorded(self, *args):
        with Record():
            return real(self, *args)
    monkeypatch.setattr(torch_engine._DeviceJob, "finish", recorded)
    return made, run()


@pytest.mark.parametrize("metrics", [["map@100"], ["map@100", "p@10", "recall@50", "ndcg@20", "success@5"]])
def test_class_labels_make_no_grade_matrix_on_the_device(monkeypatch, metrics):
    """Class labels, no removed item, a cutoff: R comes from the gallery's class sizes and the labels are compared at
    the ranked positions only, so no (block, N) grade matrix or mask is made; the one pass over a (block, N) block is
    the top-k of the scores (k + 1 of them: no second pass when no tie runs past the cutoff)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(8)
    q, n = 30, 4000
    s = torch.tensor(rng.random((q, n)))                       # distinct scores: no tie at any cutoff
    ql, gl = rng.integers(0, 10, q), rng.integers(0, 10, n)
    made, report = finish_ops(monkeypatch, lambda: evaluate(scores=s, query_labels=ql, gallery_labels=gl,
                                                            metrics=metrics))
    wide = [(f, d) for f, d, shape in made if len(shape) == 2 and shape[1] == n and not d.is_floating_point]
    assert made and wide == [], wide
    assert sum("topk" in f and d.is_floating_point for f, d, _ in made) == 1      # one call (values, indices)
    host = evaluate(scores=s.numpy(), query_labels=ql, gallery_labels=gl, metrics=metrics)
    for name in metrics:
        np.testing.assert_allclose(report.per_query[name], host.per_query[name], rtol=0, atol=1e-12)


def test_a_tie_at_the_cutoff_is_taken_whole():
    "A row whose tie group runs past the cutoff: its items are counted (one more pass) and taken whole; same values."
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(9)
    s = np.round(rng.random((20, 500)), 2)                     # ties everywhere
    ql, gl = rng.integers(0, 5, 20), rng.integers(0, 5, 500)
    for ties in ("expected", "optimistic", "pessimistic", "index"):
        kw = dict(query_labels=ql, gallery_labels=gl, metrics=["map@30", "p@30", "ndcg@7"], ties=ties)
        a, b = evaluate(scores=s, **kw), evaluate(scores=torch.tensor(s), **kw)
        for name in a.per_query:
            np.testing.assert_allclose(b.per_query[name], a.per_query[name], rtol=0, atol=1e-12, err_msg=name)
