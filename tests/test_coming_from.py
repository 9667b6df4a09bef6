"""Chapter 75's mappings on random tie-heavy rankings: scikit-learn's ndcg_score (the library's ndcg@k, gain rel,
exact mean over tie orders) and average_precision_score (the library's map without ties; with them, never below the
relevant-last AP, and able to exceed the relevant-first AP: Exercise 75.2); and DeepHash-pytorch's CalcTopMap (stable
sort, utils/tools.py at commit ab14068) and TALR's tie-aware AP (+eval/tieAP.m at commit 9a93296) rewritten from their
code. tests/test_peers.py runs the installed peers themselves; pytrec_eval is also compared in test_names and
test_trec."""
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
        assert lo[q] - 1e-12 <= v                                  # never below relevant-last (Exercise 75.2)


def test_average_precision_score_can_exceed_every_tie_order():
    "Exercise 75.2's case: 10 irrelevant items, then a tie of three holding two relevant: 2/13 > (1/11 + 2/12) / 2."
    rel = np.array([0] * 10 + [1, 1, 0])
    scores = np.array([13.0 - i for i in range(10)] + [1.0, 1.0, 1.0])
    v = sk.average_precision_score(rel, scores)
    assert v == pytest.approx(2 / 13, abs=1e-12)
    r = evaluate(scores=scores[None], relevance=rel[None], metrics=["map"], bounds=True)
    assert r.bounds["map"][1] == pytest.approx((1 / 11 + 2 / 12) / 2, abs=1e-12) and v > r.bounds["map"][1]


# ---------------------------------------------------------------- hashing tools, rewritten from their descriptions
def random_codes(seed, q=12, n=90, bits=6, classes=3):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 2, size=(q, bits)), rng.integers(0, 2, size=(n, bits)),
            rng.integers(0, classes, size=q), rng.integers(0, classes, size=n))


def hamming(qc, gc):
    return (qc[:, None, :] != gc[None, :, :]).sum(-1)


def top_map_stable(qc, gc, ql, gl, topk):
    "DeepHash-pytorch's CalcTopMap with a stable sort: AP over the first topk, a query without a hit adding 0."
    d = hamming(qc, gc)
    total = 0.0
    for i in range(len(qc)):
        hits = (gl[np.argsort(d[i], kind="stable")] == ql[i])[:topk]
        ranks = np.flatnonzero(hits) + 1.0
        total += np.mean(np.arange(1, len(ranks) + 1) / ranks) if len(ranks) else 0.0
    return total / len(qc)


def tie_aware_ap(d_row, rel_row, bits):
    "TALR's tie-aware AP of one query, from its description (the sum over distances, divided by R)."
    n = np.bincount(d_row, minlength=bits + 1).astype(float)
    npos = np.bincount(d_row[rel_row], minlength=bits + 1).astype(float)
    if npos.sum() == 0:
        return 0.0
    before, before_pos = np.cumsum(n) - n, np.cumsum(npos) - npos
    total = 0.0
    for d in np.flatnonzero(npos):
        j = np.arange(1, n[d] + 1)
        step = (npos[d] - 1) / (n[d] - 1) if n[d] > 1 else 0.0
        total += npos[d] * np.mean((before_pos[d] + 1 + (j - 1) * step) / (before[d] + j))
    return total / npos.sum()


@pytest.mark.parametrize("seed", range(5))
def test_deephash_top_map_and_talr(seed):
    qc, gc, ql, gl = random_codes(seed)
    for topk in (1, 10, 50, 90):
        r = evaluate(qc, gc, ql, gl, metrics=[f"map@{topk}"], ties="index")
        assert r[f"map@{topk}"] == pytest.approx(top_map_stable(qc, gc, ql, gl, topk), abs=1e-12)
    d = hamming(qc, gc)
    talr = np.mean([tie_aware_ap(d[i], gl == ql[i], qc.shape[1]) for i in range(len(qc))])
    r = evaluate(qc, gc, ql, gl, metrics=["map"], ties="expected", ap_denominator="all")
    assert r["map"] == pytest.approx(talr, abs=1e-12)
