"""Metric learning's other numbers (module `metric_learning`, notebook 56).

Checked against: scikit-learn's KMeans and scores called directly, NMI from its contingency-table formula, Recall@K by
a brute-force loop and by every order of the tied items, and pytorch-metric-learning's AccuracyCalculator procedure
rewritten from its description (exact nearest neighbours, lone queries left out)."""
import numpy as np
import pytest

from retrieval_lit.metric_learning import accuracy_dictionary, clustering_scores, kmeans_clusters, ml_recall_at_k
from retrieval_lit.testing import tie_orders
from retrieval_lit.validate import RetrievalInputError

sklearn_metrics = pytest.importorskip("sklearn.metrics")
from sklearn.cluster import KMeans


def blobs(seed, n=120, d=5, classes=4, spread=1.5):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, size=n)
    centers = rng.normal(size=(classes, d)) * 3
    return centers[y] + rng.normal(size=(n, d)) * spread, y


def nmi_formula(y, c):
    y, c = np.unique(y, return_inverse=True)[1], np.unique(c, return_inverse=True)[1]
    n = len(y)
    t = np.zeros((y.max() + 1, c.max() + 1))
    np.add.at(t, (y, c), 1)
    a, b = t.sum(1), t.sum(0)
    nz = t > 0
    mi = (t[nz] / n * np.log(n * t[nz] / np.outer(a, b)[nz])).sum()
    h = lambda p: -(p / n * np.log(p / n)).sum()
    return mi / ((h(a) + h(b)) / 2)


@pytest.mark.parametrize("seed", range(3))
def test_clustering_scores_are_sklearns_of_a_seeded_kmeans(seed):
    x, y = blobs(seed)
    c = KMeans(n_clusters=len(np.unique(y)), random_state=seed, n_init=10).fit_predict(x)
    got = clustering_scores(x, y, seed=seed)
    assert got["NMI"] == sklearn_metrics.normalized_mutual_info_score(y, c)
    assert got["AMI"] == sklearn_metrics.adjusted_mutual_info_score(y, c)
    assert got["NMI"] == pytest.approx(nmi_formula(y, c), abs=1e-12)
    assert np.array_equal(kmeans_clusters(x, 4, seed=seed), c)


def test_clustering_scores_string_labels_and_perfect_clusters():
    x = np.array([[0.0, 0], [0.1, 0], [9, 9], [9.1, 9], [-9, 5], [-9.1, 5]])
    assert clustering_scores(x, ["cat", "cat", "dog", "dog", "eel", "eel"]) == {"NMI": 1.0, "AMI": 1.0}


def recall_brute(q, ql, g, gl, k, same):
    dist = ((q[:, None, :] - g[None, :, :]) ** 2).sum(-1)
    if same:
        np.fill_diagonal(dist, np.inf)
    order = np.argsort(dist, axis=1, kind="stable")[:, :k]
    return float(np.mean([(gl[order[i]] == ql[i]).any() for i in range(len(q))]))


@pytest.mark.parametrize("seed", range(3))
def test_recall_at_k_by_brute_force(seed):
    x, y = blobs(seed, spread=3.0)
    x = np.round(x)                                                    # integer coordinates: ties
    got = ml_recall_at_k(x, y, ks=[1, 2, 4, 8], ties="index")
    for k in (1, 2, 4, 8):
        assert got[f"Recall@{k}"] == pytest.approx(recall_brute(x, y, x, y, k, True), abs=1e-15)
    g, gl = x[:50], y[:50]
    got = ml_recall_at_k(x[50:], y[50:], g, gl, ks=3, ties="index")
    assert got["Recall@3"] == pytest.approx(recall_brute(x[50:], y[50:], g, gl, 3, False), abs=1e-15)


def test_recall_at_k_expected_is_the_mean_over_tie_orders():
    # one query, distances 0, 1, 1, 1, 2 with relevance 0, 1, 0, 0, 1: Recall@2 over the orders of the tie of three
    q, g = np.array([[0.0]]), np.array([[0.0], [1.0], [-1.0], [1.0], [2.0]])
    ql, gl = np.array([1]), np.array([0, 1, 0, 0, 1])
    grades = [0, 1, 0, 0, 1]
    lists = tie_orders(grades, [1, 3, 1])
    mean = np.mean([1.0 if any(l[:2]) else 0.0 for l in lists])
    value, (low, high) = ml_recall_at_k(q, ql, g, gl, ks=2, bounds=True)["Recall@2"]
    assert value == pytest.approx(mean, abs=1e-15) and (low, high) == (0.0, 1.0)


def pml_procedure(query, reference, ql, rl, same):
    """AccuracyCalculator 2.x's ranking metrics rewritten from its source: exact L2 neighbours over the whole
    reference set (k=None), equal distances in index order, the query removed by its index when the reference set
    includes it, lone queries (no other item of their class) left out of the means. tests/test_peers.py runs the
    tool itself."""
    dist = ((query[:, None, :] - reference[None, :, :]) ** 2).sum(-1)
    out = {"precision_at_1": [], "r_precision": [], "mean_average_precision_at_r": [], "mean_average_precision": [],
           "mean_reciprocal_rank": []}
    for i in range(len(query)):
        order = np.argsort(dist[i], kind="stable")
        if same:
            order = order[order != i]
        rel = (rl[order] == ql[i]).astype(float)
        r = int((rl == ql[i]).sum()) - int(same)
        if r <= 0:
            continue
        prec = np.cumsum(rel) / np.arange(1, len(rel) + 1)
        out["precision_at_1"].append(rel[0])
        out["r_precision"].append(rel[:r].sum() / r)
        out["mean_average_precision_at_r"].append((prec[:r] * rel[:r]).sum() / r)
        out["mean_average_precision"].append((prec * rel).sum() / max(rel.sum(), 1))
        out["mean_reciprocal_rank"].append(1.0 / (np.argmax(rel) + 1))
    return {k: float(np.mean(v)) for k, v in out.items()}


@pytest.mark.parametrize("same", [True, False])
@pytest.mark.parametrize("seed", range(3))
def test_accuracy_dictionary_against_the_rewritten_procedure(seed, same):
    x, y = blobs(seed)
    y[0] = 99                                                           # a lone query (alone in its class)
    q, ql = (x, y) if same else (x[:40], y[:40])
    ref, rl = (x, y) if same else (x[40:], y[40:])
    got = accuracy_dictionary(q, ref, ql, rl, embeddings_come_from_same_source=same, seed=seed)
    want = pml_procedure(q, ref, ql, rl, same)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, abs=1e-12), key
    assert got["NMI"] == clustering_scores(q, ql, seed=seed)["NMI"]


@pytest.mark.parametrize("call, message", [
    (lambda x, y: kmeans_clusters(x, 0), "`n_clusters` must be at least 1"),
    (lambda x, y: kmeans_clusters(x, len(x) + 1), "`n_clusters` must be at most"),
    (lambda x, y: kmeans_clusters(x, 2, seed=-1), "`seed` must be at least 0"),
    (lambda x, y: kmeans_clusters(x[0], 2), "`embeddings` must be a 2-D"),
    (lambda x, y: clustering_scores(x, y[:-1]), "`labels`"),
    (lambda x, y: clustering_scores(np.where(np.isnan(x), 0, np.nan), y), "`embeddings` contains nan"),
    (lambda x, y: ml_recall_at_k(x, y, ks=0), "`ks`"),
    (lambda x, y: ml_recall_at_k(x, y, ks=[2, 2]), "`ks`"),
    (lambda x, y: ml_recall_at_k(x, y, gallery_embeddings=x), "`gallery_labels` must be given with the other"),
    (lambda x, y: ml_recall_at_k(x, y, similarity="hamming"), "`similarity`"),
    (lambda x, y: accuracy_dictionary(x, x[:5], y, y[:5], True), "`reference` must be the queries themselves"),
    (lambda x, y: accuracy_dictionary(x, x, y, y, 1), "`embeddings_come_from_same_source` must be True or False"),
])
def test_bad_input(call, message):
    x, y = blobs(0, n=30)
    with pytest.raises(RetrievalInputError, match="^`") as e:
        call(x, y)
    assert message in str(e.value), str(e.value)
