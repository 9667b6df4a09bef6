"""The peers of chapter 75, run for real: each peer's own call on the same data as the library's mapped call.

The data: the embedded digits (chapter 05) hashed to 12 and 64 bits (Hamming rankings, tie-heavy at 12 bits), their
pixels' PCA embeddings (nearly tie-free), and a small TREC run with ties, graded qrels, a judged topic the run lacks
and a run topic the qrels lack. Each check asserts equality, or, where the peer breaks ties by an order of its own,
that its value lies inside the library's range over every tie order (`report.bounds`) together with the tie-broken
equality: the library under the order the peer used (ties="index", trec_eval's order) equals the peer exactly, the
peer given scores that carry that order itself.

A peer that is not installed skips its tests (pytest.importorskip); CI installs them all (the `peers` extra).
torchmetrics and pytorch-metric-learning import torch, which is slow: it is imported once, by this module.
"""
import numpy as np
import pytest

from retrieval_lit import evaluate
from retrieval_lit.data import load_digits_codes
from retrieval_lit.hamming import hamming_distances
from retrieval_lit.metric_learning import accuracy_dictionary
from retrieval_lit.trec import evaluate_run, trec_order
from retrieval_lit.validate import RetrievalInputError

N_TM_QUERIES = 40                      # torchmetrics loops over queries in Python: 40 queries keep it fast


# ------------------------------------------------------------------------------------------------------------ the data
@pytest.fixture(scope="module", params=[12, 64])
def codes(request):
    "The digits' codes at 12 or 64 bits, their Hamming distances and class relevance (three queries without any)."
    d = load_digits_codes(request.param, seed=0)
    dist = hamming_distances(d.query_codes, d.gallery_codes)
    ql = d.query_labels.copy()
    ql[:3] = 10                                                   # a class the gallery lacks: R = 0
    rel = (ql[:, None] == d.gallery_labels[None, :]).astype(np.uint8)
    return d, dist, ql, rel


@pytest.fixture(scope="module")
def pca():
    "The digits' pixels projected on 16 principal components (fitted on the gallery), unit length, float32."
    from sklearn.decomposition import PCA
    d = load_digits_codes(12, seed=0)
    p = PCA(16, random_state=0).fit(d.gallery_features)
    q, g = p.transform(d.query_features), p.transform(d.gallery_features)
    q, g = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (q, g))
    return q.astype(np.float32), g.astype(np.float32), d.query_labels, d.gallery_labels


def trec_data():
    "Graded qrels (0..3) and a run with ties (six score values), topic q19 judged but not run, x1 run but not judged."
    rng = np.random.default_rng(33)
    qrels = {f"q{i:02d}": {f"d{j:03d}": int(rng.integers(0, 4)) for j in range(40)} for i in range(20)}
    run = {q: {f"d{j:03d}": float(rng.integers(1, 7)) for j in rng.choice(60, 30, replace=False)}
           for q in list(qrels)[:-1]}
    run["x1"] = {"d000": 1.0}
    return qrels, run


def trec_broken(run):
    "The run with its ties broken in trec_eval's order (descending document id): distinct scores, the same order."
    out = {}
    for q, docs in run.items():
        ordered = trec_order(docs)
        out[q] = {d: float(len(ordered) - i) for i, (d, _) in enumerate(ordered)}
    return out


# ---------------------------------------------------------------------------------------------------------- torchmetrics
@pytest.fixture(scope="module")
def tm():
    torch = pytest.importorskip("torch")
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    return torch, retrieval


def tm_value(tm, cls, preds, target, **kw):
    "A torchmetrics retrieval metric over flat (query, item) pairs, as its users call it."
    torch, _ = tm
    indexes = torch.arange(preds.shape[0]).repeat_interleave(preds.shape[1])
    return float(cls(**kw)(torch.tensor(preds.ravel()), torch.tensor(target.ravel()), indexes=indexes))


TM_METRICS = [("RetrievalMAP", "map@{k}"), ("RetrievalMRR", "mrr@{k}"), ("RetrievalPrecision", "p@{k}"),
              ("RetrievalRecall", "recall@{k}")]


@pytest.mark.parametrize("k", [1, 10])
def test_torchmetrics_on_positive_scores(tm, codes, k):
    """The recipe that works: scores > 0 (torchmetrics >= 1 drops a relevant item scored <= 0), here K + 1 - distance.
    Tied: inside the library's range; ties broken by gallery index in the scores: equal to ties="index"."""
    d, dist, ql, rel = codes
    dist, rel = dist[:N_TM_QUERIES], rel[:N_TM_QUERIES]
    preds = (d.nbits + 1 - dist).astype(np.float64)               # 1 .. K + 1: every score positive
    broken = preds - np.arange(dist.shape[1]) / (2 * dist.shape[1])   # ties broken by index, still positive
    target = rel.astype(bool)
    for cls_name, pattern in TM_METRICS:
        cls, name = getattr(tm[1], cls_name), pattern.format(k=k)
        theirs = tm_value(tm, cls, preds, target, top_k=k)
        r = evaluate(scores=preds, relevance=rel, metrics=[name], bounds=True)
        low, high = r.bounds[name]
        assert low - 1e-6 <= theirs <= high + 1e-6, (name, theirs, low, high)
        ours = evaluate(scores=preds, relevance=rel, metrics=[name], ties="index")[name]
        assert tm_value(tm, cls, broken, target, top_k=k) == pytest.approx(ours, abs=1e-6), name   # float32 inside
    theirs = tm_value(tm, tm[1].RetrievalNormalizedDCG, preds, target, top_k=k)   # ties: the gain averaged
    ours = evaluate(scores=preds, relevance=rel, metrics=[f"ndcg@{k}"], gain="linear", ties="expected")
    assert theirs == pytest.approx(ours[f"ndcg@{k}"], abs=1e-6)


def test_torchmetrics_empty_target_actions(tm, codes):
    "neg = empty='zero'; skip = the mean over R > 0 (not the library's skip); pos = 1 where R = 0."
    d, dist, ql, rel = codes
    dist, rel = dist[:N_TM_QUERIES], rel[:N_TM_QUERIES]
    preds = (d.nbits + 1 - dist) - np.arange(dist.shape[1]) / (2 * dist.shape[1])
    per_query = evaluate(scores=preds, relevance=rel, metrics=["map@10"]).per_query["map@10"]
    has, rel = rel.any(1), rel.astype(bool)
    cls = tm[1].RetrievalMAP
    assert tm_value(tm, cls, preds, rel, top_k=10, empty_target_action="neg") == pytest.approx(per_query.mean(), abs=1e-6)
    assert tm_value(tm, cls, preds, rel, top_k=10, empty_target_action="skip") == pytest.approx(
        per_query[has].mean(), abs=1e-6)
    assert tm_value(tm, cls, preds, rel, top_k=10, empty_target_action="pos") == pytest.approx(
        np.where(has, per_query, 1.0).mean(), abs=1e-6)


def test_torchmetrics_graded_ndcg(tm):
    "Graded targets and tie-heavy positive scores: RetrievalNormalizedDCG is the library's linear nDCG, exact mean."
    rng = np.random.default_rng(5)
    preds = rng.integers(1, 5, size=(30, 40)).astype(float)
    grades = rng.integers(0, 4, size=(30, 40))
    for k in (1, 5, 40):
        ours = evaluate(scores=preds, relevance=grades, metrics=[f"ndcg@{k}"], gain="linear", ties="expected")
        assert tm_value(tm, tm[1].RetrievalNormalizedDCG, preds, grades, top_k=k) == pytest.approx(
            ours[f"ndcg@{k}"], abs=1e-6)


def test_torchmetrics_negative_scores_lose_relevant_items(tm):
    "The trap of preds = -distance: torchmetrics >= 1 counts a relevant item scored <= 0 as not relevant."
    preds, target = np.array([[-1.0, -2.0, -3.0]]), np.array([[0, 1, 1]])
    ours = evaluate(scores=preds, relevance=target, metrics=["map"])["map"]
    assert ours == pytest.approx((1 / 2 + 2 / 3) / 2, abs=1e-15)            # 0.5833
    assert tm_value(tm, tm[1].RetrievalMAP, preds, target.astype(bool)) == 0.0
    assert tm_value(tm, tm[1].RetrievalMAP, preds + 4, target.astype(bool)) == pytest.approx(ours, abs=1e-6)


def test_torchmetrics_error_is_not_the_librarys_error(tm):
    "empty_target_action='error' refuses only R = 0; the library's empty='error' also refuses an empty top k."
    preds, target = np.array([[3.0, 2.0, 1.0]]), np.array([[0, 0, 1]])
    assert tm_value(tm, tm[1].RetrievalMAP, preds, target.astype(bool), top_k=1, empty_target_action="error") == 0.0
    assert evaluate(scores=preds, relevance=target, metrics=["map@1"])["map@1"] == 0.0
    with pytest.raises(RetrievalInputError, match="^`empty`"):
        evaluate(scores=preds, relevance=target, metrics=["map@1"], empty="error")
    with pytest.raises(ValueError, match="no positive target"):
        tm_value(tm, tm[1].RetrievalMAP, preds, np.zeros((1, 3), bool), empty_target_action="error")


# ---------------------------------------------------------------------------------------------- pytorch-metric-learning
PML_TO_LIBRARY = {"precision_at_1": "p@1", "r_precision": "rprec", "mean_average_precision_at_r": "map@r",
                  "mean_average_precision": "map", "mean_reciprocal_rank": "mrr"}


@pytest.fixture(scope="module")
def pml():
    pytest.importorskip("torch")
    return pytest.importorskip("pytorch_metric_learning.utils.accuracy_calculator").AccuracyCalculator(
        k=None, exclude=("NMI", "AMI"))


def pml_check(calc, q, ql, g=None, gl=None, tol=1e-12):
    """AccuracyCalculator 2.x (faiss' exact L2 search, ties in index order; with the reference = the queries, the
    query removed by its index) against accuracy_dictionary(ties="index") and the range over every tie order. faiss
    computes distances in float32 (|x|^2 + |y|^2 - 2 x.y): on real embeddings two distances a float32 rounding apart
    may swap, hence `tol` there; on codes the distances are whole numbers, exact in float32."""
    same = g is None
    acc = calc.get_accuracy(q, ql) if same else calc.get_accuracy(q, ql, g, gl, ref_includes_query=False)
    g, gl = (q, ql) if same else (g, gl)
    ours = accuracy_dictionary(q.astype(np.float64), g.astype(np.float64), ql, gl, same, ties="index")
    r = evaluate(query_embeddings=q.astype(np.float64), gallery_embeddings=g.astype(np.float64), query_labels=ql,
                 gallery_labels=gl, similarity="l2", self_index=np.arange(len(q)) if same else None,
                 ap_denominator="all", metrics=list(PML_TO_LIBRARY.values()), bounds=True)
    for key, name in PML_TO_LIBRARY.items():
        t = max(tol, 1e-6) if key == "mean_reciprocal_rank" else tol    # the tool averages reciprocal ranks in float32
        assert acc[key] == pytest.approx(ours[key], abs=t), key
        low, high = r.bounds[name]
        assert low - t <= acc[key] <= high + t, key
    return acc


@pytest.mark.parametrize("same", [True, False])
def test_pml_accuracy_calculator_on_codes(pml, codes, same):
    "Binary codes as embeddings: squared L2 = Hamming distance, ties everywhere at 12 bits."
    d = codes[0]
    q, g = d.query_codes.astype(np.float32), d.gallery_codes.astype(np.float32)
    acc = pml_check(pml, q, d.query_labels, *(() if same else (g, d.gallery_labels)))
    if same and d.nbits == 12:
        # 2.x removes the query by its index; "drop the first neighbour" (1.x's reading) would keep a query whose
        # duplicate code ranks first, and count it as its own hit
        d2 = ((q[:, None] - q[None]) ** 2).sum(-1)
        order = np.argsort(d2, axis=1, kind="stable")
        first_dropped = (d.query_labels[order[:, 1]] == d.query_labels).mean()
        assert acc["precision_at_1"] < first_dropped


def test_pml_accuracy_calculator_on_pca_embeddings(pml, pca):
    q, g, ql, gl = pca
    pml_check(pml, q, ql, tol=1e-6)
    pml_check(pml, q, ql, g, gl, tol=1e-6)


def test_pml_1x_call_is_gone(pml, pca):
    "The 1.x call chapters 75 and 56 once documented (reference second, a same-source flag) is refused by 2.x."
    q, g, ql, gl = pca
    with pytest.raises(TypeError):
        pml.get_accuracy(q, g, ql, gl, embeddings_come_from_same_source=False)


# ---------------------------------------------------------------------------------------------------------- scikit-learn
def test_sklearn_on_pca_embeddings(pca):
    "No ties: average_precision_score is map, label_ranking_average_precision_score its mean, ndcg_score ndcg@k."
    sk = pytest.importorskip("sklearn.metrics")
    q, g, ql, gl = pca
    scores = q.astype(np.float64) @ g.astype(np.float64).T
    rel = (ql[:, None] == gl[None, :]).astype(np.uint8)
    r = evaluate(scores=scores, relevance=rel, metrics=["map", "ndcg@10"], gain="linear")
    theirs = np.array([sk.average_precision_score(rel[i], scores[i]) for i in range(len(rel))])
    np.testing.assert_allclose(r.per_query["map"], theirs, atol=1e-12)
    assert sk.label_ranking_average_precision_score(rel, scores) == pytest.approx(r["map"], abs=1e-12)
    assert sk.ndcg_score(rel, scores, k=10) == pytest.approx(r["ndcg@10"], abs=1e-12)


def test_sklearn_on_hamming_rankings(codes):
    """Ties: ndcg_score is the exact mean over tie orders; average_precision_score (each tied relevant item at the
    precision of its group's end) and label_ranking_average_precision_score lie inside the range on these rankings
    (not on every ranking: they may exceed it, Exercise 75.2), and equal the library's ties="index" when the ties are
    broken by index in the scores."""
    sk = pytest.importorskip("sklearn.metrics")
    d, dist, ql, rel = codes
    keep = rel.any(1)                                             # scikit-learn's AP needs a positive
    dist, rel = dist[keep], rel[keep]
    scores = -dist.astype(np.float64)
    broken = scores - np.arange(dist.shape[1]) / (2 * dist.shape[1])
    r = evaluate(scores=scores, relevance=rel, metrics=["map", "ndcg@10"], gain="linear", bounds=True)
    assert sk.ndcg_score(rel, scores, k=10) == pytest.approx(r["ndcg@10"], abs=1e-12)
    theirs = np.array([sk.average_precision_score(rel[i], scores[i]) for i in range(len(rel))])
    low, high = r.per_query_bounds["map"]
    assert np.all(low - 1e-12 <= theirs) and np.all(theirs <= high + 1e-12)
    assert sk.label_ranking_average_precision_score(rel, scores) == pytest.approx(theirs.mean(), abs=1e-12)
    ours = evaluate(scores=scores, relevance=rel, metrics=["map"], ties="index").per_query["map"]
    np.testing.assert_allclose([sk.average_precision_score(rel[i], broken[i]) for i in range(len(rel))], ours,
                               atol=1e-12)


# ----------------------------------------------------------------------------------------------------------------- faiss
def ap_at_k(hits):
    "AP of each row of a (Q, k) hit matrix, divided by the hits it holds (0 without one)."
    prec = np.cumsum(hits, axis=1) / np.arange(1, hits.shape[1] + 1)
    n = hits.sum(1)
    return np.where(n > 0, (prec * hits).sum(1) / np.maximum(n, 1), 0.0)


@pytest.mark.parametrize("k", [10, 100])
def test_faiss_binary_flat_top_k(codes, k):
    "IndexBinaryFlat's top k (ties in index order), then AP: the library's map@k under ties='index'."
    faiss = pytest.importorskip("faiss")
    d, dist, ql, rel = codes
    width = -(-d.nbits // 8) * 8
    pack = lambda c: np.packbits(np.pad(c.astype(np.uint8), ((0, 0), (0, width - d.nbits))), axis=1,
                                 bitorder="little")
    index = faiss.IndexBinaryFlat(width)
    index.add(pack(d.gallery_codes))
    found_d, found = index.search(pack(d.query_codes), k)
    np.testing.assert_array_equal(found_d, np.take_along_axis(dist, found, axis=1))
    theirs = ap_at_k(np.take_along_axis(rel, found, axis=1).astype(float))
    r = evaluate(d.query_codes, d.gallery_codes, ql, d.gallery_labels, metrics=[f"map@{k}"], bounds=True)
    ours = evaluate(d.query_codes, d.gallery_codes, ql, d.gallery_labels, metrics=[f"map@{k}"], ties="index")
    np.testing.assert_allclose(ours.per_query[f"map@{k}"], theirs, atol=1e-12)
    low, high = r.bounds[f"map@{k}"]
    assert low <= theirs.mean() <= high


def test_faiss_flat_ip_top_k(pca):
    "IndexFlatIP on unit PCA embeddings (cosine), top 100, then AP: map@100 with similarity='dot'."
    faiss = pytest.importorskip("faiss")
    q, g, ql, gl = pca
    index = faiss.IndexFlatIP(q.shape[1])
    index.add(g)
    _, found = index.search(q, 100)
    rel = (ql[:, None] == gl[None, :])
    theirs = ap_at_k(np.take_along_axis(rel, found, axis=1).astype(float))
    ours = evaluate(query_embeddings=q.astype(np.float64), gallery_embeddings=g.astype(np.float64), query_labels=ql,
                    gallery_labels=gl, similarity="dot", metrics=["map@100"], ties="index")
    np.testing.assert_allclose(ours.per_query["map@100"], theirs, atol=1e-12)


# --------------------------------------------------------------------------------------- pytrec_eval, ir_measures, ranx
TREC_NAMES = ["map", "map_cut_100", "ndcg_cut_10", "P_5", "recall_10", "recip_rank", "Rprec", "success_10"]


def test_pytrec_eval_per_topic():
    "trec_eval's own code: every topic equal under trec_eval's tie order, at relevance levels 1 and 2."
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = trec_data()
    theirs = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut.100", "ndcg_cut.10", "P.5", "recall.10",
                                                    "recip_rank", "Rprec", "success.10"}).evaluate(run)
    ours = evaluate_run(qrels, run, TREC_NAMES).to_dict()
    assert set(theirs) == set(ours)                               # the run's judged topics: q19 and x1 are not there
    for q in ours:
        for m in TREC_NAMES:
            assert ours[q][m] == pytest.approx(theirs[q][m], abs=1e-12), (q, m)
    level2 = pytrec_eval.RelevanceEvaluator(qrels, {"P.5", "map"}, relevance_level=2).evaluate(run)
    ours2 = evaluate_run(qrels, run, ["P(rel=2)@5", "AP(rel=2)"], complete=False).to_dict()
    for q in ours2:
        assert ours2[q]["P(rel=2)@5"] == pytest.approx(level2[q]["P_5"], abs=1e-12)
        assert ours2[q]["AP(rel=2)"] == pytest.approx(level2[q]["map"], abs=1e-12)


IR_NAMES = ["AP", "AP@100", "nDCG@10", "nDCG", "P@5", "R@10", "RR", "Rprec", "Success@10", "P(rel=2)@5"]


def test_ir_measures_aggregate_and_per_topic():
    "ir_measures (pytrec_eval inside): equal, the judged topic the run lacks scoring 0 in both."
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = trec_data()
    parsed = [ir_measures.parse_measure(n) for n in IR_NAMES]
    theirs = {str(m): v for m, v in ir_measures.calc_aggregate(parsed, qrels, run).items()}
    rep = evaluate_run(qrels, run, IR_NAMES)
    assert "q19" in rep.qids and "x1" not in rep.qids
    printed = dict(zip(IR_NAMES, _printed(IR_NAMES)))
    for n in IR_NAMES:
        assert rep.summary[printed[n]] == pytest.approx(theirs[n], abs=1e-12), n
    per_topic = rep.to_dict()
    for row in ir_measures.iter_calc(parsed, qrels, run):
        assert per_topic[row.query_id][printed[str(row.measure)]] == pytest.approx(row.value, abs=1e-12)


def _printed(names):
    "The printed name (trec_eval's, or the spelling for rel > 1) of each ir_measures name, in order."
    from retrieval_lit.trec import parse_measures
    return [parse_measures([n])[0].name for n in names]


def test_ir_measures_missing_topic_scores_zero():
    "The issue's case: AP over a qrels topic the run lacks is 0.5 in ir_measures and under the name AP; 1.0 as map."
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = {"a": {"d1": 1}, "b": {"d2": 1}}, {"a": {"d1": 1.0, "d3": 0.5}}
    theirs = ir_measures.calc_aggregate([ir_measures.AP], qrels, run)[ir_measures.AP]
    assert theirs == pytest.approx(0.5, abs=1e-15)
    assert evaluate_run(qrels, run, ["AP"]).summary["map"] == pytest.approx(theirs, abs=1e-15)
    assert evaluate_run(qrels, run, ["map"]).summary["map"] == 1.0


RANX = [("map@100", "AP@100", "map_cut_100"), ("ndcg@10", "nDCG@10", "ndcg_cut_10"), ("mrr", "RR", "recip_rank"),
        ("precision@5", "P@5", "P_5"), ("recall@10", "R@10", "recall_10"), ("r-precision", "Rprec", "Rprec"),
        ("hit_rate@10", "Success@10", "success_10")]


def ranx_values(qrels, run):
    ranx = pytest.importorskip("ranx")
    out = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), [m for m, _, _ in RANX], make_comparable=True)
    return {m: float(out[m]) for m, _, _ in RANX}


def test_ranx_tie_free_tied_and_broken():
    """ranx.evaluate(make_comparable=True): a qrels topic the run lacks scores 0, as under ir_measures' names. A run
    whose ties are broken in trec_eval's order: equal to trec_eval's order; the tied run (ranx's sort leaves its
    own order): inside the range over every tie order."""
    qrels, run = trec_data()
    names = [n for _, n, _ in RANX]
    broken = ranx_values(qrels, trec_broken(run))
    ours = evaluate_run(qrels, run, names).summary
    for m, _, printed in RANX:
        assert broken[m] == pytest.approx(ours[printed], abs=1e-12), m
    tied = ranx_values(qrels, run)
    rng = evaluate_run(qrels, run, names, ties="expected", bounds=True).summary_bounds
    for m, _, printed in RANX:
        low, high = rng[printed]
        assert low - 1e-12 <= tied[m] <= high + 1e-12, m
    missing = ranx_values({"a": {"d1": 1}, "b": {"d2": 1}}, {"a": {"d1": 1.0, "d3": 0.5}})
    assert missing["map@100"] == pytest.approx(0.5, abs=1e-15)



@pytest.mark.parametrize("same", [True, False])
def test_pml_avg_of_avgs_and_return_per_class(pml, codes, same):
    """AccuracyCalculator(avg_of_avgs=True) = Report.class_mean, return_per_class=True = Report.per_class (issue 33),
    the library under the tool's order (ties="index"). Query 0 is moved to class 10, which no gallery item and no
    other query holds: lone, the tool drops it (and lists only the classes of the queries it keeps), so the library
    evaluates the other queries against the same gallery (with the queries as gallery, query 0 still in it)."""
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator
    d = codes[0]
    ql = d.query_labels.copy()
    ql[0] = 10
    q, g = d.query_codes.astype(np.float32), d.gallery_codes.astype(np.float32)
    refs = () if same else (g, d.gallery_labels)
    acc = {flag: AccuracyCalculator(k=None, exclude=("NMI", "AMI"), **{flag: True}) for flag in
           ("avg_of_avgs", "return_per_class")}
    acc = {flag: c.get_accuracy(q, ql) if same else c.get_accuracy(q, ql, *refs, ref_includes_query=False)
           for flag, c in acc.items()}
    gg, gl = (q, ql) if same else refs
    kept = np.arange(1, len(q))                                    # every query but the lone one
    r = evaluate(query_embeddings=q[kept].astype(np.float64), gallery_embeddings=gg.astype(np.float64),
                 query_labels=ql[kept], gallery_labels=gl, similarity="l2", self_index=kept if same else None,
                 ties="index", ap_denominator="all", metrics=list(PML_TO_LIBRARY.values()))
    per, mean = r.per_class(ql[kept]), r.class_mean(ql[kept])
    assert list(per) == list(range(10))
    for key, name in PML_TO_LIBRARY.items():
        t = 1e-6 if key == "mean_reciprocal_rank" else 1e-12       # the tool averages reciprocal ranks in float32
        assert acc["avg_of_avgs"][key] == pytest.approx(mean[name], abs=t), key
        assert acc["return_per_class"][key] == pytest.approx([per[c][name] for c in per], abs=t), key
        by_hand = np.mean([r.per_query[name][ql[kept] == c].mean() for c in range(10)])   # a plain loop over classes
        assert mean[name] == pytest.approx(by_hand, abs=1e-12), key
