"""Embeddings on a Dask cluster beside one process: evaluate(query_embeddings=..., gallery_embeddings=..., client=...).

usage: python benchmarks/bench_sharded_embeddings.py [Q N]     # 500 x 100,000, 128-d: four cases, best of 2 each
       python benchmarks/bench_sharded_embeddings.py s2 [Q [PRECISION]]   # S2's data (Q of 10,000 queries x 1,000,000,
                                                                          # 64-d), similarities in float64 or float32
bench_scores.py's workload (clustered float32 embeddings, 10 classes, cosine), Q queries x N gallery items; map@100
and map under ties="expected" and "index" (s2: map and map@100 in one call, ties="expected", once, the time scaled
to 10,000 queries). One process, then a local cluster of 2 worker processes (1 thread each) on the same machine: the
gallery is sent once per call in 2 shards (small warm-up calls first, for the workers' imports and compiled code).
Similarities in float64 on both sides (s2: or float32, as asked). Each in a fresh process (its own peak RSS; the
workers' memory is their own). The values are compared: equal where the similarities are (see chapter 61 on BLAS
shapes)."""
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scores import workload, workload_chunked  # noqa: E402

CASES = [("map@100", "expected"), ("map@100", "index"), ("map", "expected"), ("map", "index")]
S2_CASES = [("map+map@100", "expected")]


def stage(where, nq, n, precision="float64"):
    from retrieval_lit import evaluate
    s2 = n == 1_000_000
    if s2:
        q, ql, g, gl = workload_chunked(10_000, n, 64)
        q, ql = q[:nq], ql[:nq]
    else:
        q, ql, g, gl = workload(nq, n)
    client = cluster = None
    if where == "dask":
        import distributed
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
    for warm in (["map"], ["map@10"]):              # a warm-up of both paths: the workers' imports, untimed
        evaluate(query_embeddings=q[:2], gallery_embeddings=g[:1000], query_labels=ql[:2], gallery_labels=gl[:1000],
                 metrics=warm, client=client, progress=False)
    out = {}
    for metric, ties in S2_CASES if s2 else CASES:
        best = np.inf
        for _ in range(1 if s2 else 2):           # best of 2: a fresh worker's first big call also grows its memory
            t0 = time.perf_counter()
            r = evaluate(query_embeddings=q, gallery_embeddings=g, query_labels=ql, gallery_labels=gl,
                         metrics=metric.split("+"), ties=ties, precision=precision, client=client, progress=False)
            best = min(best, time.perf_counter() - t0)
        out[f"{metric} ties={ties}"] = (best, np.concatenate([r.per_query[m] for m in metric.split("+")]).tolist())
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if client is not None:
        client.close()
        cluster.close()
    print(json.dumps(out))


def main(nq=500, n=100_000, precision="float64"):
    dim = 64 if n == 1_000_000 else 128
    print(f"{nq:,} queries x {n:,} gallery items, {dim}-d float32 embeddings, cosine, {precision} similarities; one "
          f"process, then a local Dask cluster of 2 worker processes (1 thread each), each in a fresh process")
    res = {}
    for where in ("one", "dask"):
        p = subprocess.run([sys.executable, __file__, "--stage", where, str(nq), str(n), precision], capture_output=True,
                           text=True)
        if p.returncode:
            raise SystemExit(f"{where} failed:\n{p.stderr[-3000:]}")
        res[where] = json.loads(p.stdout.strip().splitlines()[-1])
    for case in res["one"]:
        if case == "peak_rss_mib":
            continue
        (t1, v1), (t2, v2) = res["one"][case], res["dask"][case]
        same = np.array_equal(np.array(v1), np.array(v2))
        worst = float(np.max(np.abs(np.array(v1) - np.array(v2))))
        print(f"  {case:24s} one process {t1:7.2f} s   dask (2 workers) {t2:7.2f} s = {t2 / t1:.2f} x   per-query "
              f"values {'equal bit for bit' if same else f'differ by up to {worst:.1e}'}; mean {np.mean(v1):.6f}")
        if n == 1_000_000 and nq < 10_000:
            print(f"  {'':24s} scaled to 10,000 queries: one process {t1 * 10_000 / nq:.0f} s, dask {t2 * 10_000 / nq:.0f} s")
    print(f"  peak RSS of the calling process: one {res['one']['peak_rss_mib']:.0f} MiB, "
          f"dask client {res['dask']['peak_rss_mib']:.0f} MiB")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--stage":
        stage(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    elif len(sys.argv) > 1 and sys.argv[1] == "s2":
        main(int(sys.argv[2]) if len(sys.argv) > 2 else 10_000, 1_000_000, sys.argv[3] if len(sys.argv) > 3 else "float64")
    else:
        main(*map(int, sys.argv[1:3]))
