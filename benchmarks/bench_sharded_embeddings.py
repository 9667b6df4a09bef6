"""Embeddings on a Dask cluster beside one process: evaluate(query_embeddings=..., gallery_embeddings=..., client=...).

usage: python benchmarks/bench_sharded_embeddings.py [Q N]
bench_scores.py's workload (clustered 128-d float32 embeddings, cosine), Q queries x N gallery items; map@100 and
map under ties="expected" and "index". One process, then a local cluster of 2 worker processes (1 thread each) on the
same machine: the gallery is sent once per call in 2 shards (a small warm-up call first, for the workers' imports). Each in a fresh process (its own peak RSS; the workers'
memory is their own). The values are compared: equal where the similarities are (see chapter 61 on BLAS shapes)."""
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scores import workload  # noqa: E402

CASES = [("map@100", "expected"), ("map@100", "index"), ("map", "expected"), ("map", "index")]


def stage(where, nq, n):
    from retrieval_lit import evaluate
    q, ql, g, gl = workload(nq, n)
    client = cluster = None
    if where == "dask":
        import distributed
        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = distributed.Client(cluster)
    evaluate(query_embeddings=q[:2], gallery_embeddings=g[:1000], query_labels=ql[:2], gallery_labels=gl[:1000],
             metrics=["map"], client=client, progress=False)          # a warm-up: the workers' imports, untimed
    out = {}
    for metric, ties in CASES:
        t0 = time.perf_counter()
        r = evaluate(query_embeddings=q, gallery_embeddings=g, query_labels=ql, gallery_labels=gl, metrics=[metric],
                     ties=ties, client=client, progress=False)
        out[f"{metric} ties={ties}"] = (time.perf_counter() - t0, r.per_query[metric].tolist())
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if client is not None:
        client.close()
        cluster.close()
    print(json.dumps(out))


def main(nq=500, n=100_000):
    print(f"{nq:,} queries x {n:,} gallery items, 128-d float32 embeddings, cosine; one process, then a local Dask "
          f"cluster of 2 worker processes (1 thread each), each in a fresh process")
    res = {}
    for where in ("one", "dask"):
        p = subprocess.run([sys.executable, __file__, "--stage", where, str(nq), str(n)], capture_output=True, text=True)
        if p.returncode:
            raise SystemExit(f"{where} failed:\n{p.stderr[-3000:]}")
        res[where] = json.loads(p.stdout.strip().splitlines()[-1])
    for case in res["one"]:
        if case == "peak_rss_mib":
            continue
        (t1, v1), (t2, v2) = res["one"][case], res["dask"][case]
        same = np.array_equal(np.array(v1), np.array(v2))
        worst = float(np.max(np.abs(np.array(v1) - np.array(v2))))
        print(f"  {case:24s} one process {t1:7.2f} s   dask (2 workers) {t2:7.2f} s   per-query values "
              f"{'equal bit for bit' if same else f'differ by up to {worst:.1e}'}; mean {np.mean(v1):.6f}")
    print(f"  peak RSS of the calling process: one {res['one']['peak_rss_mib']:.0f} MiB, "
          f"dask client {res['dask']['peak_rss_mib']:.0f} MiB")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--stage":
        stage(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(*map(int, sys.argv[1:3]))
