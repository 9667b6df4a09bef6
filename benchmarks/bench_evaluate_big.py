"""The user's entry point at scale: `evaluate` on 10,000 queries x 1,000,000 gallery items, 64 bits, in a fresh process.

usage: python benchmarks/bench_evaluate_big.py [Q N]
Prints the time of each evaluate call and the peak RSS of the process (the bound issue 7 sets is 1 GiB).
Codes come from bench_engine.workload (generated in slices, packed; no float or bit matrix of the gallery)."""
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_engine import workload  # noqa: E402

from retrieval_lit import evaluate  # noqa: E402


def main(n_queries=10_000, n_gallery=1_000_000):
    q, ql, g, gl = workload(n_queries, n_gallery, 64)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"{n_queries:,} queries x {n_gallery:,} gallery items, 64 bits; RSS after building the codes: {rss0 / 1024:.0f} MiB")
    runs = [(["map", "map@1000", "p@100", "ndcg@100", "p@r2"], dict(ties="expected")),
            (["map@1000", "p@100", "mlgap@2"], dict(ties="expected", bounds=True))]
    for metrics, kw in runs:
        t = time.perf_counter()
        r = evaluate(q, g, ql, gl, metrics, progress=False, **kw)
        print(f"\nevaluate({metrics}, {kw}): {time.perf_counter() - t:.1f} s")
        print(r.table())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\npeak RSS {peak / 1024:.0f} MiB (bound: 1024 MiB)")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:3]))
