"""The peers of chapter 75 that are installed, called directly on random tie-heavy rankings: scikit-learn's
ndcg_score (the library's ndcg@k, gain rel, exact mean over tie orders) and average_precision_score (the library's map
without ties; inside the range over tie orders with them). pytrec_eval is compared in test_names and test_trec."""
import numpy as np
import pytest

from retrieval_lit import evaluate

sk = pytest.importorskip("sklearn.metrics")


def tie_heavy(seed, q=15, n=40, levels=4, grades=3):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(q, n)).astype(float)
    rel = rng.integers(0, grades, size=(q, n))
    rel[0] = 0                                                    # one query without relevant items
    return scores, rel


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("k", [1, 5, 13, 40])
def test_ndcg_score_is_expected_linear_ndcg(seed, k):
    scores, rel = tie_heavy(seed)
    ours = evaluate(scores=scores, relevance=rel, metrics=[f"ndcg@{k}"], gain="linear", ties="expected")
    assert ours[f"ndcg@{k}"] == pytest.approx(sk.ndcg_score(rel, scores, k=k), abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_average_precision_score(seed):
    scores, rel = tie_heavy(seed)
    binary = (rel > 0).astype(np.uint8)
    rows = range(1, len(scores))                                   # scikit-learn's AP needs a positive
    free = np.random.default_rng(seed).random(scores.shape)        # continuous scores: no ties
    r = evaluate(scores=free, relevance=binary, metrics=["map"])
    for q in rows:
        assert r.per_query["map"][q] == pytest.approx(sk.average_precision_score(binary[q], free[q]), abs=1e-12)
    r = evaluate(scores=scores, relevance=binary, metrics=["map"], bounds=True)
    lo, hi = r.per_query_bounds["map"]
    for q in rows:
        v = sk.average_precision_score(binary[q], scores[q])
        assert lo[q] - 1e-12 <= v <= hi[q] + 1e-12
