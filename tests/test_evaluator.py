"""`Evaluator` (chapter 55): the report of batches collected one by one is the report of one `evaluate` call on their
concatenation, bit for bit, for codes and embeddings, every relevance kind and every convention; tensors are moved
once per batch; bad batches are refused and not kept."""
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_lit import PackedCodes, RetrievalInputError, evaluate, pack_codes
from retrieval_lit.evaluator import Evaluator

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))


def assert_same_report(a, b):
    "Every field equal: means, per-query values (np.array_equal, NaN = NaN), bounds, orders, counts, conventions."
    assert list(a.means) == list(b.means)
    for k in a.means:
        assert np.array_equal(a.means[k], b.means[k], equal_nan=True), k
        assert np.array_equal(a.per_query[k], b.per_query[k], equal_nan=True), k
    assert a.skipped == b.skipped and a.conventions == b.conventions
    assert (a.n_queries, a.n_gallery, a.nbits, a.lower_is_better) == (b.n_queries, b.n_gallery, b.nbits, b.lower_is_better)
    assert a.bounds.keys() == b.bounds.keys() and a.orders.keys() == b.orders.keys()
    for k in a.bounds:
        assert np.array_equal(a.bounds[k], b.bounds[k], equal_nan=True)
        assert np.array_equal(a.orders[k], b.orders[k], equal_nan=True)
        for x, y in zip(a.per_query_bounds[k], b.per_query_bounds[k]):
            assert np.array_equal(x, y, equal_nan=True)


def splits(rng, n: int) -> list:
    "Random batch boundaries covering 0..n (batches of 1 to n items)."
    cuts = sorted(set(rng.integers(1, n, int(rng.integers(0, min(n, 6)))).tolist())) if n > 1 else []
    return list(zip([0] + cuts, cuts + [n]))


CONVENTIONS = st.fixed_dictionaries({}, optional={
    "ties": st.sampled_from(["expected", "optimistic", "pessimistic", "index"]),
    "ap_denominator": st.sampled_from(["retrieved", "all", "min"]),
    "empty": st.sampled_from(["zero", "skip"]),
    "gain": st.sampled_from(["exp2", "linear"])})


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), conventions=CONVENTIONS, plus_minus=st.booleans(), multi_hot=st.booleans(),
       bounds=st.booleans(), as_list=st.booleans())
def test_codes_in_batches_give_evaluates_report(seed, conventions, plus_minus, multi_hot, bounds, as_list):
    rng = np.random.default_rng(seed)
    q, n, k = int(rng.integers(1, 40)), int(rng.integers(1, 60)), int(rng.integers(1, 70))
    qc, gc = rng.integers(0, 2, (q, k)), rng.integers(0, 2, (n, k))
    if plus_minus:
        qc = (2 * qc - 1).astype(np.float32)
    if multi_hot:
        ql, gl = rng.integers(0, 2, (q, 3)), rng.integers(0, 2, (n, 3))
    else:
        ql, gl = rng.integers(0, 4, q), rng.integers(0, 4, n)
    metrics = ["map", "map@5", "p@3", "ndcg@10", "mrr", "p@r1", "map@r"]
    ev = Evaluator(metrics, **conventions)
    for a, b in splits(rng, q):
        ev.update(qc[a:b].tolist() if as_list else qc[a:b], ql[a:b].tolist() if as_list else ql[a:b])
    assert len(ev) == q
    assert_same_report(ev.compute(gc, gl, bounds=bounds),
                       evaluate(qc, gc, ql, gl, metrics, bounds=bounds, **conventions))
    # the queries against themselves: evaluate(Q, Q, ..., self_index=arange(Q))
    assert_same_report(ev.compute(bounds=bounds),
                       evaluate(qc, qc, ql, ql, metrics, self_index=np.arange(q), bounds=bounds, **conventions))


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), conventions=CONVENTIONS, similarity=st.sampled_from(["cosine", "dot", "l2"]),
       dtype=st.sampled_from([np.float32, np.float64]))
def test_embeddings_in_batches_give_evaluates_report(seed, conventions, similarity, dtype):
    rng = np.random.default_rng(seed)
    q, n, dim = int(rng.integers(1, 30)), int(rng.integers(1, 50)), int(rng.integers(1, 9))
    qe = rng.integers(-3, 4, (q, dim)).astype(dtype) + 0.5               # small values: many exact ties
    ge = rng.integers(-3, 4, (n, dim)).astype(dtype) + 0.5
    ql, gl = rng.choice(["cat", "dog", "cow"], q), rng.choice(["cat", "dog", "cow"], n)
    metrics = ["map", "p@1", "map@r", "ndcg"]
    ev = Evaluator(metrics, similarity=similarity, **conventions)
    for a, b in splits(rng, q):
        ev.update(qe[a:b], ql[a:b])
    assert_same_report(ev.compute(ge, gl, bounds=True),
                       evaluate(query_embeddings=qe, gallery_embeddings=ge, query_labels=ql, gallery_labels=gl,
                                metrics=metrics, similarity=similarity, bounds=True, **conventions))


def test_packed_codes_batches():
    rng = np.random.default_rng(1)
    qc, gc = rng.integers(0, 2, (20, 70)), rng.integers(0, 2, (30, 70))
    ql, gl = rng.integers(0, 3, 20), rng.integers(0, 3, 30)
    ev = Evaluator(["map", "p@5"])
    ev.update(pack_codes(qc[:8]), ql[:8])
    ev.update(qc[8:], ql[8:])
    assert_same_report(ev.compute(pack_codes(gc), gl), evaluate(qc, gc, ql, gl, ["map", "p@5"]))
    assert ev.nbytes == 20 * 2 * 8 + 20 * 8                    # 70 bits: two words per code; int64 labels


class FakeTensor:
    "What validate.to_numpy sees of a torch tensor on a GPU (its type's module is 'torch')."
    moves = 0

    def __init__(self, array, device="cuda:0"):
        self.array, self.device = array, device

    def detach(self):
        return self

    def cpu(self):
        FakeTensor.moves += 1
        return FakeTensor(self.array, "cpu")

    def numpy(self):
        if self.device != "cpu":
            raise TypeError("can't convert cuda:0 device type tensor to numpy")
        return self.array                                    # shares memory, as torch's does


FakeTensor.__module__ = "torch"


@pytest.mark.parametrize("kind", ["codes", "embeddings"])
def test_tensors_move_once_per_batch_and_their_buffer_may_be_reused(kind):
    rng = np.random.default_rng(2)
    if kind == "codes":
        qx = np.sign(rng.standard_normal((50, 16))).astype(np.float32)
        gx = rng.integers(0, 2, (40, 16))
    else:
        qx, gx = rng.standard_normal((50, 5)).astype(np.float32), rng.standard_normal((40, 5)).astype(np.float32)
    ql, gl = rng.integers(0, 5, 50), rng.integers(0, 5, 40)
    ev = Evaluator(["map", "p@10"])
    buffer, labels_buffer = np.empty((16, qx.shape[1]), np.float32), np.empty(16, np.int64)
    FakeTensor.moves = 0
    for a in range(0, 50, 16):
        b = min(a + 16, 50)
        buffer[: b - a], labels_buffer[: b - a] = qx[a:b], ql[a:b]
        ev.update(FakeTensor(buffer[: b - a]), FakeTensor(labels_buffer[: b - a]))
    assert FakeTensor.moves == 2 * 4
    buffer[:], labels_buffer[:] = 7, 7                        # the loop reuses its buffers
    gallery = FakeTensor(gx)
    report = ev.compute(gallery, FakeTensor(gl))
    if kind == "codes":
        ref = evaluate(qx, gx, ql, gl, ["map", "p@10"])
    else:
        ref = evaluate(query_embeddings=qx, gallery_embeddings=gx, query_labels=ql, gallery_labels=gl,
                       metrics=["map", "p@10"])
    assert_same_report(report, ref)


def test_torch_is_never_imported():
    code = "import sys, retrieval_lit, retrieval_lit.evaluator, retrieval_lit.loaders; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.fixture
def started():
    ev = Evaluator(["map"])
    ev.update(np.array([[0, 1, 1], [1, 0, 0]], dtype=np.uint8), np.array([3, 4]))
    return ev


@pytest.mark.parametrize("queries, labels, message", [
    ([[0, 1], [1, 0]], [3, 4], "`queries` batch 2 has 2 bits per item, but earlier batches have 3"),
    ([[0, 1, 1, 0]], [3], "batch 2 has 4 bits per item"),
    ([[-1, 1, 1]], [3], "`queries` batch 2 is in the alphabet {-1,+1}, but earlier batches are in {0,1}"),
    ([[-1, 0, 1]], [3], "mixes the alphabets {0,1} and {-1,+1}"),
    ([[0.5, 1, 1]], [3], "must hold only {0,1} or {-1,+1} values"),
    ([[0, 1, 1]], [3, 4], "`labels` has 2 rows but `queries` has 1 items"),
    ([[0, 1, 1], [1, 1, 1]], [3], "`labels` has 1 rows but `queries` has 2 items"),
    ([[0, 1, 1]], ["x"], "`labels` of batch 2 are class ids held as strings, but earlier batches' are class ids of dtype int64"),
    ([[0, 1, 1]], np.array([3], dtype=np.int32), "are class ids of dtype int32, but earlier batches' are class ids of dtype int64"),
    ([[0, 1, 1]], [[0, 1, 1]], "`labels` of batch 2 are multi-hot rows of 3 labels"),
    ([[0, 1, 1]], [None], "`labels` holds a missing id"),
    ([0, 1, 1], [3], "`queries` must be a 2-D array"),
    (np.zeros((0, 3)), [], "`queries` is empty"),
    (PackedCodes(np.zeros((1, 1), np.uint64), 5), [3], "batch 2 has 5 bits per item"),
])
def test_bad_batches_are_refused_and_not_kept(started, queries, labels, message):
    with pytest.raises(RetrievalInputError) as err:
        started.update(queries, labels)
    assert message in str(err.value)
    assert len(started) == 2 and started.nbytes == 2 * 8 + 2 * 8
    started.update([[1, 1, 1]], [5])                          # only 1s: either alphabet; the evaluator still works
    assert started.compute([[0, 1, 1], [1, 1, 1]], [3, 5]).n_queries == 3


def test_embedding_batches_checked():
    ev = Evaluator(["map"])
    ev.update(np.array([[0.5, 1.0], [2.0, 0.1]], dtype=np.float32), [0, 1])
    with pytest.raises(RetrievalInputError, match="`queries` batch 2 has dtype float64, but earlier batches have float32"):
        ev.update(np.array([[0.5, 1.0]]), [0])
    with pytest.raises(RetrievalInputError, match="batch 2 has 3 dimensions per item, but earlier batches have 2"):
        ev.update(np.ones((1, 3), np.float32), [0])
    with pytest.raises(RetrievalInputError, match="`queries` batch 2 is PackedCodes, but earlier batches are embeddings"):
        ev.update(pack_codes([[0, 1]]), [0])
    with pytest.raises(RetrievalInputError, match="`gallery` has 3 dimensions but the batches have 2"):
        ev.compute(np.ones((2, 3)), [0, 1])
    ev.update(np.array([[1.0, 1.0]], dtype=np.float32), [1])  # kind fixed by the first batch: embeddings, not codes
    assert ev.compute().n_queries == 3


def test_compute_and_construction_errors():
    with pytest.raises(RetrievalInputError, match="`queries` have not been given: call update"):
        Evaluator().compute([[0, 1]], [0])
    with pytest.raises(RetrievalInputError, match="`kind` must be one of"):
        Evaluator(kind="bits")
    with pytest.raises(RetrievalInputError, match="`similarity` must be one of"):
        Evaluator(similarity="euclid")
    with pytest.raises(RetrievalInputError, match="`empty` must be one of"):
        Evaluator(empty="nan")
    with pytest.raises(RetrievalInputError, match="`metrics` is empty"):
        Evaluator([])
    with pytest.raises(RetrievalInputError, match="'p@r2' read Hamming distances"):
        Evaluator(["map", "p@r2"], kind="embeddings")
    ev = Evaluator(["p@r2"])
    with pytest.raises(RetrievalInputError, match="'p@r2' read Hamming distances"):
        ev.update([[0.3, 0.2]], [1])                          # the first batch makes it an embeddings evaluator
    ev = Evaluator(["map"])
    ev.update([[0, 1]], [0])
    with pytest.raises(RetrievalInputError, match="`gallery_labels` is required with the other"):
        ev.compute([[0, 1]])
    with pytest.raises(RetrievalInputError, match="`gallery` is required with the other"):
        ev.compute(gallery_labels=[0])
    with pytest.raises(RetrievalInputError, match="`gallery` has 3-bit codes but the batches have 2-bit codes"):
        ev.compute([[0, 1, 1]], [0])
    with pytest.raises(RetrievalInputError, match="`gallery` must hold only"):
        ev.compute([[0.2, 0.7]], [0])


def test_reset_starts_a_new_epoch():
    ev = Evaluator(["map"], ties="index")
    ev.update([[0, 1]], [0])
    ev.reset()
    assert len(ev) == 0 and ev.nbytes == 0
    ev.update([[0.25, 0.5]], ["a"])                           # a new epoch may even change kind
    assert ev.compute([[0.5, 1.0], [1.0, -1.0]], ["a", "b"])["map"] == 1.0


def test_the_readme_loop_runs_as_written(capsys):
    "README's PyTorch loop, run as printed, with stand-ins for torch, the model and the loaders (torch is not needed)."
    import contextlib
    import re
    import types
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "Evaluator(" in b)

    class T(FakeTensor):
        def cuda(self):
            return T(self.array, "cuda:0")
    T.__module__ = "torch"
    torch = types.SimpleNamespace(sign=lambda t: T(np.sign(t.array), t.device), no_grad=contextlib.nullcontext,
                                  cat=lambda ts: T(np.concatenate([t.array for t in ts]), ts[0].device))
    rng = np.random.default_rng(7)
    w = rng.standard_normal((6, 24))
    qx, gx = rng.standard_normal((45, 6)) + 0.01, rng.standard_normal((70, 6)) + 0.01
    ql, gl = rng.integers(0, 4, 45), rng.integers(0, 4, 70)
    model_fn = lambda x: T(x.array @ w, x.device)
    batches = lambda x, y: [(T(x[a:a + 16], "cpu"), T(y[a:a + 16], "cpu")) for a in range(0, len(x), 16)]
    names = {"torch": torch, "epochs": 2, "train_one_epoch": lambda m, l: None, "train_loader": None,
             "query_loader": batches(qx, ql), "gallery_loader": batches(gx, gl), "gallery_labels": gl}

    class Model:
        eval = staticmethod(lambda: None)
        __call__ = staticmethod(model_fn)
    names["model"] = Model()
    exec(block, names)
    printed = capsys.readouterr().out.split()
    ref = evaluate(np.sign(qx @ w), np.sign(gx @ w), ql, gl, ["map@1000", "p@10"])
    assert printed == ["0", repr(ref["map@1000"]), repr(ref["p@10"]), "1", repr(ref["map@1000"]), repr(ref["p@10"])]
