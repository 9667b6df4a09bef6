"""Hostile tensors of issue 46 (the torch path's inputs, and `Evaluator`): every tensor is either evaluated as the
numpy path reads the same values, or refused with one RetrievalInputError that names the argument and its dtype or
layout and says what to pass; never a raw error from inside torch or numpy.

- every dtype (unsigned integers of every width, bfloat16, float8, bool, complex) as scores, embeddings, labels,
  relevance and self_index, through `evaluate` with tensors, with `device="cpu"` and with `device="cpu:0"`;
- sparse (every layout), nested, quantized and meta-device tensors in every role;
- devices compared as torch reads them: `"cpu:0"`, `torch.device("cpu", 0)` and `"cpu:1"` are the CPU;
- `Evaluator.update` / `compute`: tensor batches of another width refused at `update`, sparse and meta batches,
  every dtype; `kind="auto"` on tanh outputs warns once."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from retrieval_lit import Evaluator, RetrievalInputError, evaluate  # noqa: E402

CPU = torch.device("cpu")
RNG = np.random.default_rng(46)
SCORES = RNG.integers(0, 6, (5, 9))                          # small integers: many ties, exact in every dtype
Q_LABELS, G_LABELS = RNG.integers(0, 3, 5), RNG.integers(0, 3, 9)
GRADES = RNG.integers(0, 3, (5, 9))
Q_EMB, G_EMB = RNG.integers(1, 4, (5, 3)), RNG.integers(1, 4, (9, 3))   # no zero vector: cosine is defined
METRICS = ["map", "ndcg@5", "p@3", "mrr", "err@5"]

UNSIGNED = [torch.uint8, torch.uint16, torch.uint32, torch.uint64]
SIGNED = [torch.int8, torch.int16, torch.int32, torch.int64]
WIDE_FLOATS = [torch.float32, torch.float64]
NARROW_FLOATS = [torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2]
OTHER = [torch.bool, torch.complex64]
ALL = UNSIGNED + SIGNED + WIDE_FLOATS + NARROW_FLOATS + OTHER
DEVICES = [None, "cpu", "cpu:0"]


def values(report) -> dict:
    return {m: report[m] for m in METRICS}


def tensor(a, dtype):
    return torch.tensor(np.asarray(a)).to(dtype)


def refused(call, name: str, *says: str) -> str:
    "The message of the one RetrievalInputError `call` raises: it starts with `name` and holds every `says`."
    with pytest.raises(RetrievalInputError) as e:
        call()
    msg = str(e.value)
    assert msg.startswith(f"`{name}` "), msg
    for s in says:
        assert s in msg, (s, msg)
    return msg


# ----------------------------------------------------------------------------- every dtype in every role

REFERENCE = values(evaluate(scores=SCORES.astype(float), query_labels=Q_LABELS, gallery_labels=G_LABELS,
                            metrics=METRICS))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_scores_of_every_dtype(dtype, device):
    call = lambda: evaluate(scores=tensor(SCORES, dtype), query_labels=Q_LABELS, gallery_labels=G_LABELS,
                            metrics=METRICS, device=device)
    if dtype in UNSIGNED + SIGNED + WIDE_FLOATS:
        assert values(call()) == REFERENCE                   # the numpy path's numbers, bit for bit
    elif dtype in NARROW_FLOATS:
        refused(call, "scores", f"is a {dtype} tensor: a float type under 32 bits", ".float() or .double()")
    else:
        refused(call, "scores", f"must hold real numbers, got a {dtype} tensor", "float32, float64 or integers")


@pytest.mark.parametrize("similarity", ["cosine", "dot", "l2"])
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_embeddings_of_every_dtype(dtype, similarity):
    reference = values(evaluate(query_embeddings=Q_EMB, gallery_embeddings=G_EMB, query_labels=Q_LABELS,
                                gallery_labels=G_LABELS, metrics=METRICS, similarity=similarity))
    call = lambda: evaluate(query_embeddings=tensor(Q_EMB, dtype), gallery_embeddings=tensor(G_EMB, dtype),
                            query_labels=Q_LABELS, gallery_labels=G_LABELS, metrics=METRICS, similarity=similarity)
    if dtype in UNSIGNED + SIGNED + WIDE_FLOATS:
        got = values(call())
        assert got == pytest.approx(reference, abs=1e-12), (got, reference)
    elif dtype in NARROW_FLOATS:
        refused(call, "query_embeddings", f"is a {dtype} tensor: a float type under 32 bits")
    else:
        refused(call, "query_embeddings", f"must hold real numbers, got a {dtype} tensor")


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_labels_of_every_dtype(dtype, device):
    "Class ids as tensors: every number type holding the ids is read as those ids (bfloat16, float8 widened)."
    scores = torch.tensor(SCORES, dtype=torch.float64)
    call = lambda: evaluate(scores=scores, query_labels=tensor(Q_LABELS, dtype), gallery_labels=tensor(G_LABELS, dtype),
                            metrics=METRICS, device=device)
    if dtype == torch.bool:
        refused(call, "query_labels", "class ids must be integers, got dtype bool")
    elif dtype == torch.complex64:
        refused(call, "query_labels", "must hold real numbers")
    else:
        assert values(call()) == REFERENCE


@pytest.mark.parametrize("on_host", [False, True], ids=["tensor scores", "numpy scores"])
@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_relevance_of_every_dtype(dtype, on_host):
    "A grade matrix as a tensor, on the torch path and on the numpy path: the grades it holds."
    scores = SCORES.astype(float) if on_host else torch.tensor(SCORES, dtype=torch.float64)
    grades = GRADES > 0 if dtype == torch.bool else GRADES
    reference = values(evaluate(scores=SCORES.astype(float), relevance=grades, metrics=METRICS))
    call = lambda: evaluate(scores=scores, relevance=tensor(grades, dtype), metrics=METRICS)
    if dtype == torch.complex64:
        refused(call, "relevance", "must hold real numbers")
    else:
        assert values(call()) == reference


@pytest.mark.parametrize("dtype", UNSIGNED + SIGNED + WIDE_FLOATS + [torch.bfloat16], ids=str)
def test_self_index_of_every_dtype(dtype):
    own = np.array([0, 2, 4, 6, 8])
    reference = values(evaluate(scores=SCORES.astype(float), query_labels=Q_LABELS, gallery_labels=G_LABELS,
                                self_index=own, metrics=METRICS))
    call = lambda: evaluate(scores=torch.tensor(SCORES, dtype=torch.float64), query_labels=Q_LABELS,
                            gallery_labels=G_LABELS, self_index=tensor(own, dtype), metrics=METRICS)
    if dtype in UNSIGNED + SIGNED:
        assert values(call()) == reference
    else:                                                    # as on the numpy path: indices are integers
        on_host = lambda: evaluate(scores=SCORES.astype(float), query_labels=Q_LABELS, gallery_labels=G_LABELS,
                                   self_index=own.astype(np.float32), metrics=METRICS)
        for c in (on_host, call):
            refused(c, "self_index", "must be 5 integer gallery indices", "got dtype float")


@pytest.mark.parametrize("dtype", [torch.uint16, torch.uint32, torch.uint64, torch.int64])
def test_integer_scores_beyond_2_53_are_refused_on_both_paths(dtype):
    big = np.zeros((2, 3), dtype=np.uint64)
    big[0, 0] = 2**53 + 1 if dtype in (torch.uint64, torch.int64) else np.iinfo(str(dtype)[6:]).max
    kw = dict(query_labels=[0, 1], gallery_labels=[0, 1, 0], metrics=["map"])
    if dtype in (torch.uint16, torch.uint32):                # all their values are exact: evaluated
        assert evaluate(scores=tensor(big, dtype), **kw)["map"] == evaluate(scores=big, **kw)["map"]
        return
    for s in (tensor(big, dtype), big):
        refused(lambda: evaluate(scores=s, **kw), "scores", "holds integers beyond 2**53")
    top = torch.tensor([[2**64 - 1, 0, 1], [0, 1, 2]], dtype=torch.uint64)    # wraps to -1 as int64: still refused
    refused(lambda: evaluate(scores=top, **kw), "scores", "holds integers beyond 2**53")
    low = torch.tensor([[-2**63, 0, 1], [0, 1, 2]])                          # |int64 min| overflows abs()
    refused(lambda: evaluate(scores=low, **kw), "scores", "holds integers beyond 2**53")


# ----------------------------------------------------------------------------- layouts whose values cannot be read

def _layouts(a: np.ndarray, dtype=torch.float64) -> dict:
    "The same values in every layout torch makes of them (a layout torch cannot make of this shape is left out)."
    t = torch.tensor(a).to(dtype)
    makers = {"sparse_coo": lambda: t.to_sparse(), "sparse_csr": lambda: t.to_sparse_csr(),
              "sparse_csc": lambda: t.to_sparse_csc(), "sparse_bsr": lambda: t.to_sparse_bsr((1, 1)),
              "sparse_bsc": lambda: t.to_sparse_bsc((1, 1)), "meta": lambda: t.to("meta"),
              "quantized": lambda: torch.quantize_per_tensor(t.float(), 0.5, 0, torch.quint8),
              "mkldnn": lambda: t.float().to_mkldnn(),
              "nested": lambda: torch.nested.nested_tensor(list(t)),
              "nested_jagged": lambda: torch.nested.nested_tensor(list(t), layout=torch.jagged)}
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                      # beta / deprecation notes of the layouts themselves
        for name, make in makers.items():
            try:
                out[name] = make()
            except (RuntimeError, IndexError, TypeError, ValueError):
                pass
    return out


LAYOUT_SAYS = {"sparse_coo": "is a tensor of sparse_coo layout", "sparse_csr": "is a tensor of sparse_csr layout",
               "sparse_csc": "is a tensor of sparse_csc layout", "sparse_bsr": "is a tensor of sparse_bsr layout",
               "sparse_bsc": "is a tensor of sparse_bsc layout", "meta": "is a tensor on the meta device",
               "quantized": "is a quantized tensor (torch.quint8)", "mkldnn": "is a tensor of mkldnn layout",
               "nested": "is a nested (ragged) tensor", "nested_jagged": "is a nested (ragged) tensor"}
LAYOUT_WHAT = {"sparse_coo": ".to_dense()", "sparse_csr": ".to_dense()", "sparse_csc": ".to_dense()",
               "sparse_bsr": ".to_dense()", "sparse_bsc": ".to_dense()", "meta": "give a tensor with its values",
               "quantized": ".dequantize()", "mkldnn": ".to_dense()", "nested": "give a dense tensor",
               "nested_jagged": "give a dense tensor"}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("layout", list(LAYOUT_SAYS))
@pytest.mark.parametrize("role", ["scores", "query_embeddings", "gallery_embeddings", "query_labels", "relevance",
                                  "self_index"])
def test_every_layout_in_every_role_is_refused_naming_it(role, layout, device):
    dense = {"scores": torch.tensor(SCORES, dtype=torch.float64)}
    kw = dict(query_labels=Q_LABELS, gallery_labels=G_LABELS)
    if role in ("query_embeddings", "gallery_embeddings"):
        dense = {"query_embeddings": torch.tensor(Q_EMB, dtype=torch.float64),
                 "gallery_embeddings": torch.tensor(G_EMB, dtype=torch.float64)}
    given = {"scores": SCORES, "query_embeddings": Q_EMB, "gallery_embeddings": G_EMB, "query_labels": Q_LABELS,
             "relevance": GRADES, "self_index": np.arange(5)}[role]
    bad = _layouts(np.asarray(given, dtype=float if role not in ("query_labels", "self_index") else np.int64),
                   torch.float64 if role not in ("query_labels", "self_index") else torch.int64).get(layout)
    if bad is None:
        pytest.skip(f"torch makes no {layout} tensor of {role}'s dtype or shape")
    if role == "relevance":
        kw = {}
    call = lambda: evaluate(**{**dense, **kw, role: bad}, metrics=["map"], device=device)
    refused(call, role, LAYOUT_SAYS[layout], LAYOUT_WHAT[layout])


def test_the_refusals_name_the_dtype_or_layout():
    msg = refused(lambda: evaluate(scores=torch.zeros((2, 2)).to_sparse(), query_labels=[0, 1], gallery_labels=[0, 1]),
                  "scores")
    assert "sparse_coo" in msg and "torch.float32" in msg


# ----------------------------------------------------------------------------- devices as torch reads them

@pytest.mark.parametrize("device", ["cpu", "cpu:0", "cpu:1", torch.device("cpu", 0), torch.device("cpu")], ids=str)
def test_every_name_of_the_cpu_is_the_tensors_device(device):
    got = evaluate(scores=torch.tensor(SCORES, dtype=torch.float64), query_labels=torch.tensor(Q_LABELS),
                   gallery_labels=G_LABELS, metrics=METRICS, device=device)
    assert values(got) == REFERENCE


def test_another_device_is_still_refused():
    refused(lambda: evaluate(scores=torch.zeros((2, 2)), query_labels=[0, 1], gallery_labels=[0, 1], device="meta"),
            "device", "is meta; the torch path runs on 'cpu' or 'cuda' devices")
    if not torch.cuda.is_available():
        refused(lambda: evaluate(scores=torch.zeros((2, 2)), query_labels=[0, 1], gallery_labels=[0, 1],
                                 device="cuda:0"), "device", "sees no CUDA GPU")


# ----------------------------------------------------------------------------- Evaluator

def _tanh_outputs(rng, n, d=16, scale=4.0):
    "A hashing layer's outputs before sign: tanh of scale x standard normal (scale 4: about 81% have |x| >= 0.75)."
    return torch.tanh(scale * torch.tensor(rng.normal(size=(n, d)), dtype=torch.float32))


def test_tensor_batches_of_another_width_are_refused_at_update():
    ev = Evaluator(["map"])
    ev.update(torch.rand(4, 8, dtype=torch.float64), [0, 1, 0, 1])
    refused(lambda: ev.update(torch.rand(3, 9, dtype=torch.float64), [0, 1, 0]), "queries",
            "batch 2 has 9 dimensions per item, but earlier batches have 8")
    refused(lambda: ev.update(torch.rand(3, 8, dtype=torch.float32), [0, 1, 0]), "queries",
            "batch 2 has dtype torch.float32, but earlier batches have torch.float64")
    assert len(ev) == 4                                     # the refused batches were not kept
    ev.update(torch.rand(2, 8, dtype=torch.float64), [1, 0])
    assert ev.compute().n_queries == 6                      # compute still works on what was kept


@pytest.mark.parametrize("layout", list(LAYOUT_SAYS))
@pytest.mark.parametrize("kind", ["auto", "codes", "embeddings"])
def test_unreadable_batches_are_refused_at_update(layout, kind):
    ev = Evaluator(["map"], kind=kind)
    batch = np.sign(RNG.normal(size=(4, 8))) if kind == "codes" else RNG.normal(size=(4, 8))
    bad = _layouts(batch)[layout]
    refused(lambda: ev.update(bad, [0, 1, 0, 1]), "queries", LAYOUT_SAYS[layout])
    assert len(ev) == 0


@pytest.mark.parametrize("layout", ["sparse_coo", "meta", "quantized"])
def test_unreadable_labels_and_galleries_are_refused(layout):
    ev = Evaluator(["map"])
    labels = _layouts(np.array([[0.0, 1.0, 0.0, 1.0]]))[layout][0] if layout == "nested" else \
        _layouts(np.array([0.0, 1.0, 0.0, 1.0]))[layout]
    refused(lambda: ev.update(torch.rand(4, 8, dtype=torch.float64), labels), "labels", LAYOUT_SAYS[layout])
    ev.update(torch.rand(4, 8, dtype=torch.float64), [0, 1, 0, 1])
    gallery = _layouts(RNG.normal(size=(5, 8)))[layout]
    refused(lambda: ev.compute(gallery, [0, 1, 0, 1, 0]), "gallery_embeddings", LAYOUT_SAYS[layout])
    on_host = Evaluator(["map"])
    on_host.update(RNG.normal(size=(4, 8)), [0, 1, 0, 1])
    refused(lambda: on_host.compute(gallery, [0, 1, 0, 1, 0]), "gallery", LAYOUT_SAYS[layout])


@pytest.mark.parametrize("dtype", ALL, ids=str)
def test_evaluator_batches_of_every_dtype(dtype):
    "Codes (+-1) in any number type are packed as the numpy path packs them; embeddings must be float32 / float64."
    codes = np.sign(RNG.normal(size=(6, 10)))
    gallery = np.sign(RNG.normal(size=(7, 10)))
    labels, g_labels = [0, 1, 2, 0, 1, 2], [0, 1, 2, 0, 1, 2, 0]
    if dtype in UNSIGNED + [torch.bool]:
        codes, gallery = (codes > 0).astype(int), (gallery > 0).astype(int)   # {0,1}: unsigned types hold no -1
    reference = evaluate(codes, gallery, labels, g_labels, metrics=["map", "p@3"]).means
    ev = Evaluator(["map", "p@3"])
    if dtype == torch.complex64:
        refused(lambda: ev.update(tensor(codes, dtype), labels), "queries", "must hold real numbers")
        return
    ev.update(tensor(codes[:4], dtype), tensor(labels[:4], torch.bfloat16))
    ev.update(tensor(codes[4:], dtype), tensor(labels[4:], torch.bfloat16))
    assert ev.compute(tensor(gallery, dtype), g_labels).means == reference
    emb = RNG.normal(size=(4, 5)) + 3                      # no entry near +-1 in every dtype: no warning
    evf = Evaluator(["map"], kind="embeddings")
    if dtype in WIDE_FLOATS:
        evf.update(tensor(emb, dtype), [0, 1, 0, 1])
        assert evf.compute().n_queries == 4
    else:
        refused(lambda: evf.update(tensor(emb, dtype), [0, 1, 0, 1]), "queries", f"batch 1 is a {dtype} tensor",
                "give embeddings as float32 or float64")


def test_auto_warns_once_on_tanh_outputs():
    rng = np.random.default_rng(3)
    ev = Evaluator(["map"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ev.update(_tanh_outputs(rng, 6), [0, 1, 2, 0, 1, 2])
        ev.update(_tanh_outputs(rng, 6), [0, 1, 2, 0, 1, 2])
        ev.reset()
        ev.update(_tanh_outputs(rng, 6), [0, 1, 2, 0, 1, 2])    # a new epoch: warned already
    ours = [w for w in caught if "not yet binarised" in str(w.message)]
    assert len(ours) == 1 and ours[0].category is UserWarning and ours[0].filename == __file__
    msg = str(ours[0].message)
    assert msg.startswith("`kind` is 'auto', and batch 1 looks like codes not yet binarised")
    assert "kind='codes'" in msg and "torch.sign" in msg and "kind='embeddings'" in msg


def test_the_warning_follows_the_rule():
    """Every entry in [-1, 1], at least 75% of them within 0.25 of +-1, not all exactly: warned. Just under 75%, an
    entry beyond 1, exact codes, kind="embeddings" or unit vectors: not."""
    def warned(batch, **kw):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            Evaluator(["map"], **kw).update(batch, list(range(len(batch))))
        return any("not yet binarised" in str(w.message) for w in caught)
    near = torch.full((10, 10), -0.8)
    assert warned(near)
    edge = near.clone()
    edge.view(-1)[:25] = 0.5                                 # 75 of 100 entries near +-1: warned
    assert warned(edge)
    under = near.clone()
    under.view(-1)[:26] = 0.5                                # 74 of 100: not warned
    assert not warned(under)
    beyond = near.clone()
    beyond[0, 0] = 1.01                                      # outside tanh's range: not warned
    assert not warned(beyond)
    assert not warned(torch.ones((10, 10)))                  # exact codes (all 1s)
    assert not warned(near, kind="embeddings")               # said outright: silent
    unit = torch.tensor(np.random.default_rng(0).normal(size=(10, 2)), dtype=torch.float32)
    assert not warned(unit / unit.norm(dim=1, keepdim=True))  # unit vectors of 2 dimensions: at most half


def test_sign_with_kind_codes_is_the_hamming_evaluation():
    rng = np.random.default_rng(5)
    h = _tanh_outputs(rng, 8)
    g = _tanh_outputs(rng, 9)
    labels, g_labels = list(rng.integers(0, 3, 8)), list(rng.integers(0, 3, 9))
    ev = Evaluator(["map", "p@3"], kind="codes")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ev.update(torch.sign(h), labels)
    got = ev.compute(torch.sign(g), g_labels)
    assert got.means == evaluate(torch.sign(h).numpy(), torch.sign(g).numpy(), labels, g_labels,
                                   metrics=["map", "p@3"]).means
    refused(lambda: Evaluator(["map"], kind="codes").update(h, labels), "queries", "must hold only {0,1} or {-1,+1}")
