"""Rankings by scores and embeddings, junk and self-exclusion, against independent computations.

* a brute-force per-query loop: delete the removed items, sort by descending score (ties by gallery index, Python's
  stable `sorted`), and evaluate each metric on the ranked grades; for ties="expected" the mean over every order of
  the tied items (integer scores in a small range force many ties);
* ignore sets on Hamming codes against deleting the columns and ranking what is left;
* pytrec_eval (trec_eval) for the measures both define, on rankings without ties.
"""
import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_lit import RetrievalInputError, evaluate

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
NAMES = ["map", "map@3", "map@r", "p@1", "p@4", "recall@3", "rprec", "ndcg", "ndcg@3", "rbp@5", "egr@4"]


def _ap(order, p, den, interpolation):
    t = min(p, len(order)) if p else len(order)
    pos = [m for m in range(t) if order[m] > 0]
    R = sum(1 for x in order if x > 0)
    d = {"retrieved": len(pos), "all": R, "min": min(R, p or len(order))}[den]
    if interpolation == "step":
        s = sum((i + 1) / (m + 1) for i, m in enumerate(pos))
    else:
        s = sum(((1.0 if m == 0 else i / m) + (i + 1) / (m + 1)) / 2 for i, m in enumerate(pos))
    return None if d == 0 else s / d


def _dcg(order, t, gain):
    g = (lambda x: 2.0 ** x - 1) if gain == "exp2" else float
    return sum(g(x) / math.log2(m + 2) for m, x in enumerate(order[:t]))


def _egr(rel, n):
    "EGR (Gherbi et al.) of a 0/1 list padded to n, by its closed form over runs of relevant items."
    rel = list(rel[:n]) + [0] * max(0, n - len(rel))
    runs = [len(list(gr)) for k, gr in itertools.groupby(rel) if k]
    R = sum(runs)
    if R == 0:
        return math.log10(n)
    h = -sum((c / R) * math.log10(c / R) for c in runs)
    return ((n - R + 1) * math.log10(n) + h) / n


def metric_on_order(name, order, conv):
    "One metric on one fixed ranked list of grades (None: undefined)."
    base, _, p = name.partition("@")
    n = len(order)
    rel = [x > 0 for x in order]
    R = sum(rel)
    if name == "map@r":
        return None if R == 0 else _ap(order, R, "all", conv["ap_interpolation"])
    if base == "map":
        return _ap(order, int(p) if p else None, conv["ap_denominator"], conv["ap_interpolation"])
    if base == "p":
        return sum(rel[: int(p)]) / int(p)
    if base == "recall":
        return None if R == 0 else sum(rel[: int(p)]) / R
    if name == "rprec":
        return None if R == 0 else sum(rel[:R]) / R
    if base == "ndcg":
        t = int(p) if p else n
        ideal = _dcg(sorted(order, reverse=True), t, conv["gain"])
        return None if ideal == 0 else _dcg(order, t, conv["gain"]) / ideal
    if base == "rbp":
        q = conv["rbp_persistence"]
        return (1 - q) * sum(q ** m for m in range(min(int(p), n)) if rel[m])
    if base == "egr":
        return _egr(rel, int(p))
    raise KeyError(name)


def brute_force(scores, grades, removed, names, conv):
    out = {n: [] for n in names}
    for i in range(scores.shape[0]):
        items = sorted((j for j in range(scores.shape[1]) if not removed[i, j]), key=lambda j: (-scores[i, j], j))
        ranked = [int(grades[i, j]) for j in items]
        if conv["ties"] == "index":
            orders = [ranked]
        else:
            groups = [[int(grades[i, j]) for j in grp] for _, grp in itertools.groupby(items, key=lambda j: scores[i, j])]
            orders = [sum(map(list, combo), []) for combo in itertools.product(*[set(itertools.permutations(g)) for g in groups])]
            # each distinct arrangement of a group is equally likely: count multiplicities
            weights = []
            for combo in itertools.product(*[list(itertools.permutations(g)) for g in groups]):
                weights.append(sum(map(list, combo), []))
            orders = weights
        for name in names:
            values = [metric_on_order(name, o, conv) for o in orders]
            defined = [v for v in values if v is not None]
            if conv["empty"] == "skip" and name not in ("rbp@5", "egr@4", "p@1", "p@4"):
                out[name].append(sum(defined) / len(defined) if defined else float("nan"))
            else:
                out[name].append(sum(v or 0.0 for v in values) / len(values))
    return {n: np.array(v) for n, v in out.items()}


@st.composite
def score_problems(draw):
    nq, n = draw(st.integers(1, 3)), draw(st.integers(1, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scores = rng.integers(0, draw(st.integers(1, 4)), (nq, n)).astype(draw(st.sampled_from([float, np.int32])))
    grades = rng.integers(0, draw(st.sampled_from([2, 3])), (nq, n))
    kind = draw(st.sampled_from(["none", "mask", "lists", "self"]))
    kw = {}
    if kind == "mask":
        kw["ignore"] = rng.random((nq, n)) < 0.3
    elif kind == "lists":
        kw["ignore"] = [rng.choice(n, int(rng.integers(0, n)), replace=False) for _ in range(nq)]
    elif kind == "self":
        kw["self_index"] = rng.integers(-1, n, nq)
    conv = dict(ties=draw(st.sampled_from(["expected", "index"])), ap_denominator=draw(st.sampled_from(["retrieved", "all", "min"])),
                empty=draw(st.sampled_from(["zero", "skip"])), gain=draw(st.sampled_from(["exp2", "linear"])),
                ap_interpolation=draw(st.sampled_from(["step", "trapezoid"])), rbp_persistence=0.8)
    return scores, grades, kw, conv


def _removed(nq, n, kw):
    m = np.zeros((nq, n), dtype=bool)
    if isinstance(kw.get("ignore"), np.ndarray):
        m |= kw["ignore"]
    elif "ignore" in kw:
        for i, items in enumerate(kw["ignore"]):
            m[i, items] = True
    if "self_index" in kw:
        for i, j in enumerate(kw["self_index"]):
            if j >= 0:
                m[i, j] = True
    return m


@SETTINGS
@given(score_problems())
def test_scores_equal_the_brute_force_loop(problem):
    scores, grades, kw, conv = problem
    r = evaluate(scores=scores, relevance=grades, metrics=NAMES, **kw, **conv)
    want = brute_force(scores.astype(float), grades, _removed(*scores.shape, kw), NAMES, conv)
    for name in NAMES:
        np.testing.assert_allclose(r.per_query[name], want[name], rtol=0, atol=1e-12, err_msg=name)


@SETTINGS
@given(score_problems())
def test_bounds_on_scores_hold_the_value(problem):
    scores, grades, kw, conv = problem
    conv["ties"] = "expected"
    r = evaluate(scores=scores, relevance=grades, metrics=["map@3", "ndcg@3", "p@4", "map@r"], bounds=True, **kw, **conv)
    for name, (lo, hi) in r.per_query_bounds.items():
        v = r.per_query[name]
        ok = np.isnan(v) | ((lo - 1e-12 <= v) & (v <= hi + 1e-12))
        assert ok.all(), name


def test_ignore_on_hamming_codes_equals_deleting_the_columns():
    rng = np.random.default_rng(5)
    q, g = rng.integers(0, 2, (6, 10)), rng.integers(0, 2, (40, 10))
    ql, gl = rng.integers(0, 3, 6), rng.integers(0, 3, 40)
    junk = [rng.choice(40, int(rng.integers(0, 8)), replace=False) for _ in range(6)]
    names = ["map", "map@5", "p@3", "ndcg@10", "rprec", "mlgap@2", "p@r2", "egr@6"]
    for ties in ("expected", "index", "optimistic"):
        for engine in ("numpy", "numba"):
            r = evaluate(q, g, ql, gl, names, ignore=junk, ties=ties, engine=engine)
            for i in range(6):
                keep = np.setdiff1d(np.arange(40), junk[i])
                one = evaluate(q[i:i + 1], g[keep], ql[i:i + 1], gl[keep], names, ties=ties, engine="numpy")
                for n in names:
                    assert r.per_query[n][i] == pytest.approx(one.per_query[n][0], abs=1e-12), (ties, engine, n, i)


def test_self_index_leaves_one_out_on_codes_and_scores():
    rng = np.random.default_rng(6)
    x = rng.integers(0, 2, (30, 12))
    labels = rng.integers(0, 4, 30)
    a = evaluate(x, x, labels, labels, ["map", "map@r", "p@1"], self_index=np.arange(30), ties="index",
                 engine="numpy")
    streamed = evaluate(x, x, labels, labels, ["map", "map@r", "p@1"], self_index=np.arange(30), ties="index",
                        engine="numba")   # whole-ranking AP from the engine's correctly rounded sums: the last bit may move
    sims = -(x[:, None, :] != x[None, :, :]).sum(-1).astype(float)          # higher = nearer: minus the distance
    b = evaluate(scores=sims, query_labels=labels, gallery_labels=labels, metrics=["map", "map@r", "p@1"],
                 self_index=np.arange(30), ties="index")
    for n in a:   # whole-ranking map on scores also comes from streamed, correctly rounded sums (chapter 09)
        if n == "map":
            np.testing.assert_allclose(a.per_query[n], b.per_query[n], rtol=1e-15, atol=0)
        else:
            np.testing.assert_array_equal(a.per_query[n], b.per_query[n])
        np.testing.assert_allclose(streamed.per_query[n], b.per_query[n], rtol=1e-15, atol=0)


def test_embeddings_equal_their_score_matrix():
    rng = np.random.default_rng(7)
    qe, ge = rng.normal(size=(5, 8)), rng.normal(size=(50, 8))
    ql, gl = rng.integers(0, 3, 5), rng.integers(0, 3, 50)
    qn, gn = qe / np.linalg.norm(qe, axis=1, keepdims=True), ge / np.linalg.norm(ge, axis=1, keepdims=True)
    for sim, s in [("cosine", qn @ gn.T), ("dot", qe @ ge.T), ("l2", -((qe[:, None] - ge[None]) ** 2).sum(-1))]:
        a = evaluate(query_embeddings=qe, gallery_embeddings=ge, similarity=sim, query_labels=ql, gallery_labels=gl,
                     metrics=["map", "ndcg@10"], ties="index")
        b = evaluate(scores=s, query_labels=ql, gallery_labels=gl, metrics=["map", "ndcg@10"], ties="index")
        for n in a:
            np.testing.assert_allclose(a.per_query[n], b.per_query[n], atol=1e-12)


def test_pytrec_eval_agrees_on_rankings_without_ties():
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = np.random.default_rng(9)
    for _ in range(40):
        n = int(rng.integers(2, 30))
        scores = rng.permutation(n).astype(float)[None, :]               # distinct: no ties
        grades = rng.integers(0, 3, (1, n))
        if grades.sum() == 0:
            grades[0, 0] = 1
        run = {"q": {f"d{j}": float(scores[0, j]) for j in range(n)}}
        qrel = {"q": {f"d{j}": int(grades[0, j]) for j in range(n)}}
        ev = pytrec_eval.RelevanceEvaluator(qrel, {"map", "P_5", "recall_5", "ndcg", "Rprec", "map_cut_5"})
        te = ev.evaluate(run)["q"]
        r = evaluate(scores=scores, relevance=grades, metrics=["map", "p@5", "recall@5", "ndcg", "rprec", "map@5"],
                     ap_denominator="all", gain="linear", ties="index")
        for ours, theirs in [("map", "map"), ("p@5", "P_5"), ("recall@5", "recall_5"), ("ndcg", "ndcg"),
                             ("rprec", "Rprec"), ("map@5", "map_cut_5")]:
            assert r[ours] == pytest.approx(te[theirs], abs=1e-4), (ours, r[ours], te[theirs])


@pytest.mark.parametrize("kwargs, message", [
    (dict(scores=[[0.1, np.nan]], relevance=[[1, 0]]), "`scores` contains nan"),
    (dict(scores=[[0.1, np.inf]], relevance=[[1, 0]]), "`scores` contains inf"),
    (dict(scores=[0.1, 0.2], relevance=[[1, 0]]), "`scores` must be a 2-D array"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0, 1]]), "`relevance` must have shape (1, 2)"),
    (dict(scores=[[0.1, 0.2]], query_codes=[[0, 1]], gallery_codes=[[0, 1], [1, 1]], relevance=[[1, 0]]),
     "`scores` needs exactly one ranking source"),
    (dict(relevance=[[1, 0]]), "`scores` needs exactly one ranking source"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], ignore=[[2]]), "`ignore[0]` holds id 2 at index 0, but the gallery has 2 items (ids run from 0 to 1)"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], ignore=np.ones((1, 3), bool)), "`ignore` must be a 1 x 2 boolean array"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], self_index=[5]), "`self_index` entry 0 is 5, outside -1..1"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], metrics=["p@r2"]), "`metrics` 'p@r2' reads Hamming distances"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], metrics=["mlgap@1"]), "`metrics` 'mlgap@1' reads Hamming distances"),
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], ap_interpolation="linear"), "`ap_interpolation` must be one of"),
    (dict(query_embeddings=[[1.0, 0.0]], relevance=[[1, 0]]), "`gallery_embeddings` is required"),
    (dict(query_embeddings=[[0.0, 0.0]], gallery_embeddings=[[1.0, 0.0], [0.0, 1.0]], relevance=[[1, 0]]),
     "`query_embeddings` has a zero vector at row 0"),
    (dict(query_embeddings=[[1.0, 0.0]], gallery_embeddings=[[1.0, 0.0], [0.0, 1.0]], relevance=[[1, 0]],
          similarity="jaccard"), "`similarity` must be one of"),
    # the precision: unknown names, NaN / inf in either precision, overflow of float32
    (dict(scores=[[0.1, 0.2]], relevance=[[1, 0]], precision="float16"), "`precision` must be one of"),
    (dict(query_codes=[[0, 1]], gallery_codes=[[0, 1], [1, 1]], relevance=[[1, 0]], precision="double"),
     "`precision` must be one of"),
    (dict(scores=[[0.1, np.nan]], relevance=[[1, 0]], precision="float32"), "`scores` contains nan"),
    (dict(scores=np.array([[0.1, np.inf]], dtype=np.float32), relevance=[[1, 0]], precision="float32"),
     "`scores` contains inf"),
    (dict(scores=[[1e39, 0.0]], relevance=[[1, 0]], precision="float32"), "`scores` overflows float32"),
    (dict(query_embeddings=[[np.nan, 0.0]], gallery_embeddings=[[1.0, 0.0], [0.0, 1.0]], relevance=[[1, 0]],
          precision="float32"), "`query_embeddings` contains nan"),
    (dict(query_embeddings=[[1.0, 0.0]], gallery_embeddings=[[np.inf, 0.0], [0.0, 1.0]], relevance=[[1, 0]]),
     "`gallery_embeddings` contains inf"),
    (dict(query_embeddings=[[1e39, 0.0]], gallery_embeddings=[[1.0, 0.0], [0.0, 1.0]], relevance=[[1, 0]],
          similarity="dot", precision="float32"), "`query_embeddings` overflows float32"),
    (dict(query_embeddings=[[1e20, 0.0]], gallery_embeddings=[[1e20, 0.0], [0.0, 1.0]], relevance=[[1, 0]],
          similarity="dot", precision="float32"), "`query_embeddings` row 0: its dot similarities overflow float32"),
    (dict(query_embeddings=[[1e200, 0.0]], gallery_embeddings=[[-1e200, 0.0], [0.0, 1.0]], relevance=[[1, 0]],
          similarity="l2"), "`query_embeddings` row 0: its l2 similarities overflow float64"),
])
def test_bad_scores_input(kwargs, message):
    kwargs.setdefault("metrics", ["map"])
    with pytest.raises(RetrievalInputError) as e:
        evaluate(**kwargs)
    assert message in str(e.value), str(e.value)


def test_report_nbits_is_none_for_scores_and_typed_so():
    import typing
    from retrieval_lit.evaluation import Report
    r = evaluate(scores=[[0.9, 0.5, 0.1]], relevance=[[1, 0, 1]], metrics=["map"])
    assert r.nbits is None and r["map"] == pytest.approx((1 + 2 / 3) / 2, abs=1e-15)
    assert typing.get_type_hints(Report)["nbits"] == (int | None)


# ---- the counts summary (chapter 09) against the sorting reference, metric by metric -------------------------------

from retrieval_lit.metrics import Conventions, parse_metric, tie_range
from retrieval_lit.relevance import make_ignore, relevance_from_matrix
from retrieval_lit.score_ranking import similarity_rows, summarize_scores

ALL_SCORE_METRICS = NAMES + ["map@r", "mrr", "success@2", "ndcg@2", "rbp@3", "p@2", "recall@1", "egr@2"]


@st.composite
def summary_problems(draw):
    nq, n = draw(st.integers(1, 4)), draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dtype = draw(st.sampled_from([np.float32, np.float64]))
    scores = (rng.integers(0, draw(st.integers(1, 6)), (nq, n)) / 4).astype(dtype)
    grades = rng.integers(0, draw(st.sampled_from([2, 3, 4])), (nq, n)) * (rng.random((nq, n)) < draw(st.floats(0, 1)))
    removed = rng.random((nq, n)) < draw(st.sampled_from([0.0, 0.3]))
    conv = Conventions.make(ties=draw(st.sampled_from(["expected", "optimistic", "pessimistic", "index"])),
                            ap_denominator=draw(st.sampled_from(["retrieved", "all", "min"])),
                            empty=draw(st.sampled_from(["zero", "skip"])), gain=draw(st.sampled_from(["exp2", "linear"])),
                            ap_interpolation=draw(st.sampled_from(["step", "trapezoid"])))
    return scores, grades, removed, conv


@pytest.mark.parametrize("method", ["compiled", "counts"])
@SETTINGS
@given(summary_problems())
def test_counts_summary_gives_every_metric_of_the_sorted_one_bit_for_bit(method, problem):
    """The counts methods (chapter 58's compiled passes, chapter 09's numpy form) merge irrelevant-only runs of tie
    groups: every metric, under every tie mode and convention, and every bound, is the same float as from the
    reference that sorts every row."""
    scores, grades, removed, conv = problem
    nq, n = scores.shape
    rel = relevance_from_matrix(grades.astype(np.uint8), nq, n)
    ig = make_ignore(nq, n, ignore=removed)
    ref = summarize_scores(scores, rel, stable_ranks=-1, ignore=ig, method="sort")
    got = summarize_scores(scores, rel, stable_ranks=-1, ignore=ig, threads=int(nq > 1) + 1, method=method)
    assert got.n_groups <= ref.n_groups
    for name in ALL_SCORE_METRICS:
        m = parse_metric(name)
        np.testing.assert_array_equal(m.compute(got, conv), m.compute(ref, conv), err_msg=f"{name} {conv}")
        if m.tie_bounds:
            for a, b in zip(tie_range(m, got, conv), tie_range(m, ref, conv)):
                np.testing.assert_array_equal(a, b, err_msg=f"bounds of {name} {conv}")


@pytest.mark.parametrize("method", ["compiled", "counts"])
@SETTINGS
@given(summary_problems())
def test_streamed_index_sums_equal_the_index_order_to_1e_12(method, problem):
    """Whole-ranking map, ndcg and rprec under ties="index" from the streamed sums (added in extended precision,
    or with Neumaier's compensation by the compiled method)
    against the reference's ordered grades (added left to right): the sums' order differs, so 1e-12, not bits."""
    scores, grades, removed, conv = problem
    conv = conv.with_ties("index")
    nq, n = scores.shape
    rel = relevance_from_matrix(grades.astype(np.uint8), nq, n)
    ig = make_ignore(nq, n, ignore=removed)
    ref = summarize_scores(scores, rel, stable_ranks=-1, ignore=ig, method="sort")
    got = summarize_scores(scores, rel, ignore=ig, index_sums=True, method=method)
    assert got.top_grades is None and got.index_sums is not None
    for name in ("map", "ndcg", "rprec"):
        if name == "map" and conv.ap_interpolation != "step":
            continue
        m = parse_metric(name)
        np.testing.assert_allclose(m.compute(got, conv), m.compute(ref, conv), rtol=0, atol=1e-12, err_msg=name)


@SETTINGS
@given(score_problems(), st.sampled_from(["optimistic", "pessimistic"]))
def test_fixed_tie_orders_equal_the_brute_force_loop(problem, ties):
    scores, grades, kw, conv = problem
    conv["ties"] = ties
    names = ["map", "map@3", "ndcg", "p@4", "rprec"]
    r = evaluate(scores=scores, relevance=grades, metrics=names, **kw, **conv)
    removed = _removed(*scores.shape, kw)
    for i in range(scores.shape[0]):       # one order: every tie group's grades sorted (high first if optimistic)
        items = [j for j in range(scores.shape[1]) if not removed[i, j]]
        key = (lambda j: (-scores[i, j], -grades[i, j])) if ties == "optimistic" else (lambda j: (-scores[i, j], grades[i, j]))
        order = [int(grades[i, j]) for j in sorted(items, key=key)]
        for name in names:
            v = metric_on_order(name, order, conv)
            if v is None:
                v = float("nan") if conv["empty"] == "skip" and name not in ("p@4",) else 0.0
            np.testing.assert_allclose(r.per_query[name][i], v, rtol=0, atol=1e-12, err_msg=name)


def test_precision_float32_is_the_scores_rounded_to_float32():
    rng = np.random.default_rng(11)
    s = rng.normal(size=(6, 300)) * 1e-7 + rng.integers(0, 3, (6, 300))   # float64 scores that tie in float32
    rel = rng.integers(0, 2, (6, 300))
    names = ["map", "map@10", "ndcg", "p@5"]
    for ties in ("expected", "index"):
        a = evaluate(scores=s, relevance=rel, metrics=names, ties=ties, precision="float32")
        b = evaluate(scores=s.astype(np.float32), relevance=rel, metrics=names, ties=ties)
        c = evaluate(scores=s, relevance=rel, metrics=names, ties=ties)
        for n in names:
            np.testing.assert_array_equal(a.per_query[n], b.per_query[n])
        assert a.precision == "float32" and c.precision == "float64" and a["map"] != c["map"]
        assert "scores, float32" in repr(a) and a.to_dict()["precision"] == "float32"


def test_embeddings_in_float32_equal_their_float32_score_matrix():
    rng = np.random.default_rng(12)
    qe, ge = rng.normal(size=(7, 16)).astype(np.float32), rng.normal(size=(400, 16)).astype(np.float32)
    ql, gl = rng.integers(0, 3, 7), rng.integers(0, 3, 400)
    for sim in ("cosine", "dot", "l2"):
        _, _, rows = similarity_rows(qe, ge, sim, "float32")
        s = rows(0, 7)
        assert s.dtype == np.float32
        for ties in ("expected", "index"):
            a = evaluate(query_embeddings=qe, gallery_embeddings=ge, similarity=sim, precision="float32", query_labels=ql,
                         gallery_labels=gl, metrics=["map", "map@20", "ndcg@10"], ties=ties)
            b = evaluate(scores=s, query_labels=ql, gallery_labels=gl, metrics=["map", "map@20", "ndcg@10"], ties=ties)
            for n in a:
                np.testing.assert_array_equal(a.per_query[n], b.per_query[n])


def test_code_rankings_report_no_precision():
    r = evaluate([[0, 1]], [[0, 1], [1, 1]], [0], [0, 1])
    assert r.precision is None and r.to_dict()["precision"] is None


def test_wide_summaries_are_finished_in_chunks_with_the_same_values():
    rng = np.random.default_rng(13)
    s, rel = rng.normal(size=(20, 500)), rng.integers(0, 3, (20, 500))
    names = ["map", "map@50", "ndcg", "map@r"]
    for ties in ("expected", "index"):
        big = evaluate(scores=s, relevance=rel, metrics=names, ties=ties, bounds=True)
        small = evaluate(scores=s, relevance=rel, metrics=names, ties=ties, bounds=True, max_block_bytes=20_000)
        for n in names:
            np.testing.assert_array_equal(big.per_query[n], small.per_query[n])
            np.testing.assert_array_equal(big.per_query_bounds[n][0], small.per_query_bounds[n][0])


@SETTINGS
@given(st.integers(0, 2**32 - 1), st.sampled_from(["expected", "index"]), st.sampled_from([1, 2, 3, 5]))
def test_cutoff_metrics_alone_take_the_partial_path_exactly(seed, ties, p):
    """Only metrics at a cutoff: the summary holds the groups reaching rank p (the k-th largest score found from
    chunk maxima, no partition of whole rows); equal to the brute-force loop over tie orders."""
    rng = np.random.default_rng(seed)
    nq, n = int(rng.integers(1, 3)), int(rng.integers(p, 9))
    scores = rng.integers(0, int(rng.integers(1, 5)), (nq, n)).astype(np.float32)
    grades = rng.integers(0, 3, (nq, n))
    removed = rng.random((nq, n)) < 0.2
    names = [f"map@{p}", f"ndcg@{p}", f"p@{p}"]
    conv = dict(ties=ties, ap_denominator="retrieved", empty="zero", gain="exp2", ap_interpolation="step",
                rbp_persistence=0.8)
    r = evaluate(scores=scores, relevance=grades, metrics=names, ignore=removed, **conv)
    want = brute_force(scores.astype(float), grades, removed, names, conv)
    for name in names:
        np.testing.assert_allclose(r.per_query[name], want[name], rtol=0, atol=1e-12, err_msg=name)


# ---- issue 46: integer embeddings whose similarities pass 2**53 ------------------------------------------------------

def test_integer_embeddings_beyond_exact_float64_are_refused_not_merged_into_ties():
    """Integer embeddings are compared exactly, as integer scores are: their dot products are whole numbers, exact in
    float64 up to 2**53. Near 2**62 the two similarities 2**124 + 1 and 2**124 round to one float, a tie (mrr 0.75 or
    0.5 where the truth is 1): refused, naming both arguments. Within the bound they stay distinct, on every path."""
    kw = dict(query_labels=[0], gallery_labels=[1, 0], metrics=["mrr"], similarity="dot")
    with pytest.raises(RetrievalInputError, match="`query_embeddings` holds integers beyond 2\\*\\*53"):
        evaluate(query_embeddings=np.array([[2**62, 1]]), gallery_embeddings=np.array([[2**62, 0], [2**62, 1]]), **kw)
    big_q, big_g = np.array([[2**30, 1]]), np.array([[2**30, 0], [2**30, 1]])     # dots 2**60 and 2**60 + 1
    assert float(big_q[0] @ big_g[0]) == float(big_q[0] @ big_g[1])             # what float64 would make of them
    for sim in ("dot", "l2"):
        with pytest.raises(RetrievalInputError, match="`query_embeddings` and `gallery_embeddings` are integers"):
            evaluate(query_embeddings=big_q, gallery_embeddings=big_g, **dict(kw, similarity=sim))
    exact_q, exact_g = np.array([[2**25, 1]]), np.array([[2**25, 0], [2**25, 1]])   # 2**50 and 2**50 + 1: exact
    for sim in ("dot", "l2"):
        r = evaluate(query_embeddings=exact_q, gallery_embeddings=exact_g, **dict(kw, similarity=sim))
        assert r["mrr"] == 1.0                                                  # item 1 nearer: the relevant one first
    r = evaluate(query_embeddings=big_q.astype(float), gallery_embeddings=big_g.astype(float), **kw)
    assert r["mrr"] == 0.75                                                     # floats: their rounding, a tie, kept


# ------------------------------------------------------------------ scores near the float64 limits, every method
def test_scores_near_the_float64_limits_rank_alike():
    """Rows whose differences overflow float64 (scores at +-1e308 beside 0.5): the compiled counts equal the numpy
    counts (the same summary: items below every relevant score in one trailing group), and every method gives the
    stable order the sort gives. The compiled bucket map once sent an item whose x - lo overflowed, where all the
    relevant scores are one (c = 0), to the top bucket: counted above the relevant item, a wrong rank."""
    scores = np.array([[1e308, -1e308, 0.5], [-1e308, 1e308, 1e308], [0.5, -1e308, 1e308]])
    grades = np.array([[1, 0, 0], [1, 0, 1], [0, 1, 1]])
    rel = relevance_from_matrix(grades, 3, 3)
    by = {m: summarize_scores(scores, rel, stable_ranks=-1, method=m) for m in ("sort", "counts", "compiled")}
    np.testing.assert_array_equal(by["compiled"].hist, by["counts"].hist)
    for m in by:
        assert by[m].top_grades.tolist() == [[1, 0, 0],    # by hand: 1e308 (relevant) > 0.5 > -1e308
                                             [0, 1, 1],    # the two 1e308 tie (index order), then -1e308
                                             [1, 0, 1]], m # 1e308, 0.5, -1e308
    assert by["compiled"].hist[0].tolist() == [[0, 1], [2, 0], [0, 0]]   # the relevant item first, none above it
