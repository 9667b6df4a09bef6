"""The public entry point driven with generated hostile and edge-case inputs (hypothesis).

Every call must end in one of two ways: a `RetrievalInputError` whose message starts with the backticked name of an
argument of `evaluate`, or per-query values equal to an independent oracle: a direct loop that computes Hamming
distances bit by bit, sorts stably, and evaluates each metric on the ranked grades, averaging over every order of
the tied items for `ties="expected"` (the galleries are kept tiny so that the enumeration stays small)."""
import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_lit import RetrievalInputError, evaluate

ARGUMENTS = {"query_codes", "gallery_codes", "query_labels", "gallery_labels", "relevance", "relation_types", "metrics",
             "ties", "ap_denominator", "empty", "gain", "rbp_persistence", "bounds", "engine", "max_block_bytes",
             "progress", "words", "nbits"}
METRICS = ["p@1", "p@3", "p@9", "recall@2", "map", "map@2", "map@7", "ndcg", "ndcg@3", "P@02", "MAP@0003"]
SETTINGS = settings(max_examples=250, deadline=None, suppress_health_check=list(HealthCheck))


HOSTILE = ["codes", "shape", "labels", "metrics", "convention", "bounds"]


def _codes(draw, shape, bad):
    "A code array: valid {0,1}/{-1,+1} in some dtype, or (bad) one hostile variant."
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    bits = rng.integers(0, 2, shape)
    if not bad:
        kind = draw(st.sampled_from(["u8", "i64", "f32", "pm1", "bool"]))
        return {"u8": bits.astype(np.uint8), "i64": bits, "f32": bits.astype(np.float32), "pm1": bits * 2 - 1,
                "bool": bits.astype(bool)}[kind]
    kind = draw(st.sampled_from(["nan", "two", "mixed", "str", "empty", "flat"]))
    if kind == "empty":
        return bits[:0]
    if kind == "flat":
        return bits.ravel()
    if kind == "str":
        return bits.astype(str)
    a = bits.astype(float) if kind == "nan" else (bits * 2 - 1 if kind == "mixed" else bits.copy())
    a.flat[0] = {"nan": np.nan, "two": 2, "mixed": 0}[kind]
    return a


@st.composite
def problems(draw):
    nq, n, k = draw(st.integers(1, 3)), draw(st.integers(1, 6)), draw(st.integers(1, 9))
    bad = draw(st.sampled_from([None, None, None] + HOSTILE))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    q = _codes(draw, (nq, k), bad == "codes" and draw(st.booleans()))
    g = _codes(draw, (n, k + (bad == "shape")), bad == "codes" and q.ndim == 2 and q.dtype.kind != "U")
    kw = {}
    label_kind = draw(st.sampled_from(["ids", "huge", "floatids", "multihot", "matrix"] +
                                      (["frac", "short", "wide"] if bad == "labels" else [])))
    if label_kind == "ids":
        kw.update(query_labels=rng.integers(0, 3, nq), gallery_labels=rng.integers(0, 3, n))
    elif label_kind == "huge":           # uint64 ids beyond int64 against int64 ids: never equal
        kw.update(query_labels=np.full(nq, 2**64 - 1, dtype=np.uint64), gallery_labels=rng.choice(np.array([-1, 5]), n))
    elif label_kind == "floatids":       # floats beyond int64: 1e19 and 2e19 must stay distinct
        kw.update(query_labels=rng.choice([1e19, 2e19], nq), gallery_labels=rng.choice([1e19, 2e19], n))
    elif label_kind == "multihot":
        kw.update(query_labels=rng.integers(0, 2, (nq, 3)), gallery_labels=rng.integers(0, 2, (n, 3)))
    elif label_kind == "matrix":
        kw.update(relevance=rng.integers(0, draw(st.sampled_from([2, 3, 200])), (nq, n)))
    elif label_kind == "frac":
        kw.update(query_labels=rng.random(nq) + 0.5, gallery_labels=rng.integers(0, 3, n))
    elif label_kind == "short":
        kw.update(query_labels=rng.integers(0, 3, nq + 1), gallery_labels=rng.integers(0, 3, n))
    else:
        kw.update(relevance=rng.integers(0, 2, (nq, n + 1)))
    if bad == "metrics":
        metrics = draw(st.sampled_from([None, 5, [], ["map@0"], ["p@-1"], ["p@9223372036854775808"], ["foo@3"],
                                        ["ndcg@x"], [3]]))
    else:
        metrics = draw(st.lists(st.sampled_from(METRICS), min_size=1, max_size=3))
    kw.update(ties=draw(st.sampled_from(["expected", "index"])), ap_denominator=draw(st.sampled_from(["retrieved", "all", "min"])),
              empty=draw(st.sampled_from(["zero", "skip", "error"])), gain=draw(st.sampled_from(["exp2", "linear"])),
              bounds=draw(st.booleans()), engine=draw(st.sampled_from(["numpy", "numba"])))
    if bad == "convention":
        key = draw(st.sampled_from(["ties", "ap_denominator", "empty", "gain", "engine", "rbp_persistence"]))
        kw[key] = draw(st.sampled_from(["random", "R", 1.5, None]))
    if bad == "bounds":
        kw["bounds"] = draw(st.sampled_from(["no", 1, None]))
    return q, g, metrics, kw


# ---------------------------------------------------------------- the oracle
def _grades(q, g, kw):
    "Grades of every (query, item) pair, computed directly from the labels or the matrix."
    if "relevance" in kw:
        return np.asarray(kw["relevance"], dtype=np.int64)
    ql, gl = kw["query_labels"], kw["gallery_labels"]
    if np.ndim(ql) == 2:
        return (np.asarray(ql)[:, None, :] * np.asarray(gl)[None, :, :]).sum(-1)
    return np.array([[int(a) == int(b) if isinstance(a, (int, np.integer)) and isinstance(b, (int, np.integer)) else a == b
                      for b in gl.tolist()] for a in ql.tolist()], dtype=np.int64)


def _metric_on_list(name, grades, kw):
    "One metric on one fixed ranked list of grades: a float, or None where undefined."
    base, _, p = name.lower().partition("@")
    n = len(grades)
    rel = [x > 0 for x in grades]
    R = sum(rel)
    t = n if not p else min(int(p), n)
    if base == "p":
        return sum(rel[: t]) / int(p)
    if base == "recall":
        return None if R == 0 else sum(rel[:t]) / R
    if base == "map":
        hits, s = 0, 0.0
        for m in range(t):
            if rel[m]:
                hits += 1
                s += hits / (m + 1)
        den = {"retrieved": hits, "all": R, "min": min(R, int(p) if p else n)}[kw["ap_denominator"]]
        return None if den == 0 else s / den
    gain = (lambda x: 2.0 ** x - 1) if kw["gain"] == "exp2" else float
    dcg = sum(gain(x) / math.log2(m + 2) for m, x in enumerate(grades[:t]))
    ideal = sorted(grades, reverse=True)
    idcg = sum(gain(x) / math.log2(m + 2) for m, x in enumerate(ideal[:t]))
    return None if idcg == 0 else dcg / idcg


def oracle(q, g, names, kw):
    "Per-query values of each metric, or the string 'error' where the empty policy must raise."
    qb, gb = ((np.asarray(x, dtype=float) > 0).astype(int) for x in (q, g))
    grades = _grades(q, g, kw)
    out = {}
    for name in names:
        vals = []
        for i in range(len(qb)):
            d = [int((qb[i] != gb[j]).sum()) for j in range(len(gb))]
            order = sorted(range(len(gb)), key=lambda j: (d[j], j))
            ranked = [int(grades[i, j]) for j in order]
            if kw["ties"] == "index":
                lists = [ranked]
            else:
                dist = [d[j] for j in order]
                groups = [list(grp) for _, grp in itertools.groupby(range(len(ranked)), key=lambda m: dist[m])]
                lists = [sum(combo, []) for combo in itertools.product(
                    *[[list(p) for p in itertools.permutations([ranked[m] for m in grp])] for grp in groups])]
            values = [_metric_on_list(name, lst, kw) for lst in lists]
            defined = [v for v in values if v is not None]
            if len(defined) < len(values) and kw["empty"] == "error":
                return "error"
            if kw["empty"] == "skip":
                vals.append(sum(defined) / len(defined) if defined else float("nan"))
            else:
                vals.append(sum(defined) / len(values))
        out[name] = np.array(vals)
    return out


@SETTINGS
@given(problems())
def test_hostile_inputs_raise_named_errors_or_give_the_oracles_numbers(problem):
    q, g, metrics, kw = problem
    try:
        report = evaluate(q, g, metrics=metrics, **kw)
    except RetrievalInputError as e:
        msg = str(e)
        assert msg.startswith("`"), msg
        assert msg[1:].split("`")[0] in ARGUMENTS, msg
        return
    # the call succeeded: the inputs were valid, and every value must be the oracle's
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    want = oracle(q, g, [n for n in names], kw)
    assert want != "error", "the empty policy 'error' should have raised"
    for name in names:
        got = report.per_query[report._key(name)]
        np.testing.assert_allclose(got, want[name], rtol=0, atol=1e-12, err_msg=name)
