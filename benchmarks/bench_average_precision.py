"""usage: python benchmarks/bench_average_precision.py Q N K[,K...]

Time AP finishing from a RankSummary vs the hashing papers' per-query loop (one run, same workload)."""
import sys, time
import numpy as np
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "shared" / "bench"))  # ../shared/bench beside the repo
from workload import make, pm1
from peers import deephash_style
from retrieval_lit.average_precision import ap_from_summary
from retrieval_lit.metrics import Conventions
from retrieval_lit.ranking import summarize
from retrieval_lit.relevance import relevance_from_labels

Q, N = int(sys.argv[1]), int(sys.argv[2])
for K in map(int, sys.argv[3].split(",")):
    qb, ql, gb, gl = make(Q, N, K)
    t = time.perf_counter()
    s = summarize(qb, gb, relevance_from_labels(ql, gl, Q, N), stable_ranks=-1)
    print(f"K={K}: summarize(stable_ranks=N) {time.perf_counter() - t:.3f}s")
    for p in (1000, None):
        for ties in ("expected", "index", "optimistic", "pessimistic"):
            for den in ("retrieved", "all"):
                t = time.perf_counter()
                v = ap_from_summary(s, p, Conventions.make(ties=ties, ap_denominator=den))
                print(f"  map{'' if p is None else '@%d' % p:6s} {ties:11s} {den:9s} {time.perf_counter() - t:7.3f}s  {np.nanmean(v):.6f}")
        t = time.perf_counter()
        ref = deephash_style(pm1(qb), pm1(gb), ql, gl, N if p is None else p)
        print(f"  map{'' if p is None else '@%d' % p:6s} deephash_style loop  {time.perf_counter() - t:7.3f}s  {ref:.6f}")
