"""Time the precision and DCG finishers on a summary (not the summary itself: that is ranking/engine's cost).

Workload: shared/bench/workload.py, 1000 queries x 20000 gallery, 64 bits, 10 classes (multi-label for nDCG)."""
import sys, time
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "bench"))  # ../shared/bench beside the repo
import workload
from retrieval_lit.metrics import Conventions
from retrieval_lit.ranking import summarize
from retrieval_lit.relevance import relevance_from_labels
from retrieval_lit.precision import precision_from_summary, recall_from_summary, rprec_from_summary, \
    radius_precision_from_summary, pr_curve_by_rank
from retrieval_lit.dcg import ndcg_from_summary

def best(fn, reps=3):
    ts = []
    for _ in range(reps):
        t = time.perf_counter(); fn(); ts.append(time.perf_counter() - t)
    return min(ts)

qb, ql, gb, gl = workload.make(q=1000, n=20000, k=64, multilabel=True)
rel = relevance_from_labels(ql, gl, len(ql), len(gl))
t = time.perf_counter(); s = summarize(qb, gb, rel, stable_ranks=1000); t_sum = time.perf_counter() - t
print(f"summarize (numpy reference, stable_ranks=1000): {t_sum:.2f} s  [for scale]")
for ties in ("expected", "optimistic", "pessimistic", "index"):
    c = Conventions(ties=ties)
    print(f"{ties:12s} p@100 {best(lambda: precision_from_summary(s, 100, c))*1e3:7.2f} ms"
          f" | recall@1000 {best(lambda: recall_from_summary(s, 1000, c))*1e3:7.2f} ms"
          f" | ndcg@1000 {best(lambda: ndcg_from_summary(s, 1000, c))*1e3:7.2f} ms")
c = Conventions()
print(f"rprec (expected) {best(lambda: rprec_from_summary(s, c))*1e3:.2f} ms; p@r2 {best(lambda: radius_precision_from_summary(s, 2, c))*1e3:.2f} ms;"
      f" ndcg whole ranking (expected) {best(lambda: ndcg_from_summary(s, None, c))*1e3:.2f} ms;"
      f" PR curve by rank, 100 cutoffs {best(lambda: pr_curve_by_rank(s, c))*1e3:.2f} ms")
# scikit-learn's tie-averaged ndcg_score, per query as users call it, on 100 queries
from sklearn.metrics import ndcg_score
grades = (ql[:100].astype(np.int32) @ gl.T.astype(np.int32))
dist = (qb[:100, None, :] != gb[None, :, :]).sum(-1)
t = time.perf_counter()
sk = np.array([ndcg_score(grades[i:i+1], -dist[i:i+1].astype(float), k=1000) for i in range(100)])
t_sk = time.perf_counter() - t
ours = ndcg_from_summary(s, 1000, Conventions(gain="linear"))[:100]
print(f"scikit-learn ndcg_score@1000, 100 queries: {t_sk:.2f} s; max |diff| vs ours (linear gain): {np.abs(sk-ours).max():.1e}")
