"""Side-by-side timing of Hamming-ranking mAP: the engine, the hashing papers' per-query loop, the bare numpy
XOR + popcount pass, scikit-learn, torchmetrics (if installed); then how the engine's time grows with Q*N and
with the code length, and the peak memory of the 10k x 1M run.

usage:
  python benchmarks/bench_engine.py w1               # workload W1: 2,000 x 50,000, 64 bits, 10 classes
  python benchmarks/bench_engine.py scale            # Q*N sizes (up to 2k x 500k) and code lengths 32..256
  python benchmarks/bench_engine.py big              # 10,000 x 1,000,000, 64 bits, peak RSS (a fresh process)
  python benchmarks/bench_engine.py all              # the three above
options: --threads N (numba threads; default all), --no-sklearn (skip the slowest peer)

Timings are wall-clock seconds after a warm-up call (numba compiles on first use; the compile is not counted):
the best of 5 runs for the fast methods (engine, numpy floor), one run for the slow per-query peers. The values
column is the mAP each method reports; the engine's and the per-query loop's must agree.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from retrieval_lit import engine  # noqa: E402
from retrieval_lit.hamming import PackedCodes, pack_codes  # noqa: E402
from retrieval_lit.relevance import relevance_from_labels  # noqa: E402


# ---------------------------------------------------------------------------------------------- workload
def workload(n_queries: int, n_gallery: int, nbits: int, classes: int = 10, flip: float = 0.2, seed: int = 0):
    """Packed codes drawn around one random centroid per class (each bit flipped with probability `flip`),
    generated in slices so that a 1,000,000-item gallery never exists as a float or bit matrix."""
    rng = np.random.default_rng(seed)
    centroids = pack_codes(rng.integers(0, 2, (classes, nbits))).words

    def draw(n):
        labels = rng.integers(0, classes, n)
        words = np.empty((n, centroids.shape[1]), dtype=np.uint64)
        for a in range(0, n, 100_000):
            b = min(a + 100_000, n)
            noise = pack_codes((rng.random((b - a, nbits)) < flip).astype(np.uint8)).words
            words[a:b] = centroids[labels[a:b]] ^ noise
        return PackedCodes(words, nbits), labels

    q, ql = draw(n_queries)
    g, gl = draw(n_gallery)
    return q, ql, g, gl


def timed(f, *args, repeat: int = 1, **kw):
    "(best wall-clock seconds over `repeat` runs, value): the best run is the one least disturbed by other load."
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        v = f(*args, **kw)
        best = min(best, time.perf_counter() - t)
    return best, v


# ---------------------------------------------------------------------------------------------- methods
def engine_map(q, ql, g, gl, threads=None):
    "mAP over the whole ranking, ties by gallery index: the engine's streamed index-order sums."
    rel = relevance_from_labels(ql, gl, len(q), len(g))
    res = engine.scan(q, g, rel, index_sums=True, threads=threads, progress=False)
    ap, undefined = engine.ap_from_sums(res.sums, res.summary.n_relevant)
    return float(np.where(undefined, 0.0, ap).mean())


def engine_hist_only(q, ql, g, gl, threads=None):
    "The histogram pass alone (what every tie-aware metric needs), finished as tie-aware expected mAP."
    from retrieval_lit.average_precision import ap_from_summary
    from retrieval_lit.metrics import Conventions
    rel = relevance_from_labels(ql, gl, len(q), len(g))
    s = engine.summarize(q, g, rel, threads=threads, progress=False)
    return float(ap_from_summary(s, None, Conventions.make(ties="expected")).mean())


def per_query_loop(qB, rB, ql, gl):
    """The loop of the hashing papers' evaluation code: Hamming distance from a dot product of +-1 codes,
    a stable argsort of every row, AP from the relevant positions (here over the whole ranking)."""
    nbits = qB.shape[1]
    aps = np.zeros(len(qB))
    for i in range(len(qB)):
        rel = (gl == ql[i]).astype(np.float32)
        ham = 0.5 * (nbits - rB @ qB[i])
        order = np.argsort(ham, kind="stable")
        hits = rel[order]
        n_rel = int(hits.sum())
        if n_rel == 0:
            continue
        positions = np.flatnonzero(hits) + 1.0
        aps[i] = np.mean(np.arange(1, n_rel + 1) / positions)
    return float(aps.mean())


def numpy_floor(q: PackedCodes, g: PackedCodes):
    "The floor of any exact method in numpy: XOR + bitwise_count of every pair (nothing else), in blocks."
    step = max(1, (1 << 24) // len(g))
    checksum = 0
    for a in range(0, len(q), step):
        d = np.bitwise_count(q.words[a:a + step, None, :] ^ g.words[None, :, :])
        if d.shape[2] > 1:
            d = d.sum(-1, dtype=np.uint16)
        checksum += int(d[:, 0].sum())
    return checksum


def sklearn_map(qB, rB, ql, gl):
    "scikit-learn's average_precision_score per query (a tied block counts as one threshold)."
    from sklearn.metrics import average_precision_score
    nbits = qB.shape[1]
    out = []
    for i in range(len(qB)):
        rel = gl == ql[i]
        out.append(average_precision_score(rel, -(0.5 * (nbits - rB @ qB[i]))) if rel.any() else 0.0)
    return float(np.mean(out))


def torchmetrics_map(qB, rB, ql, gl):
    import torch
    from torchmetrics.retrieval import RetrievalMAP
    nbits = qB.shape[1]
    scores = torch.from_numpy(nbits + 1 - 0.5 * (nbits - qB @ rB.T))   # > 0: torchmetrics drops scores <= 0
    target = torch.from_numpy(ql[:, None] == gl[None, :])
    idx = torch.arange(len(qB))[:, None].expand_as(scores)
    return float(RetrievalMAP()(scores.reshape(-1), target.reshape(-1), indexes=idx.reshape(-1)))


def pm1(p: PackedCodes) -> np.ndarray:
    return p.unpack().astype(np.float32) * 2 - 1


# ---------------------------------------------------------------------------------------------- runs
def warm_up(threads):
    q, ql, g, gl = workload(8, 64, 64, seed=1)
    engine_map(q, ql, g, gl, threads)
    engine_hist_only(q, ql, g, gl, threads)


def run_w1(args):
    print("== W1: 2,000 queries x 50,000 gallery items, 64 bits, 10 classes; mAP over the whole ranking, "
          "ties by gallery index")
    q, ql, g, gl = workload(2000, 50_000, 64)
    qB, rB = pm1(q), pm1(g)
    warm_up(args.threads)
    rows = []
    t, v = timed(engine_map, q, ql, g, gl, args.threads, repeat=5); rows.append(("engine: mAP, index ties", t, v))
    t1, v1 = timed(engine_map, q, ql, g, gl, 1, repeat=5); rows.append(("engine: same, 1 thread", t1, v1))
    t, v = timed(engine_hist_only, q, ql, g, gl, args.threads, repeat=5)
    rows.append(("engine: mAP, expected ties (hist)", t, v))
    t, v = timed(numpy_floor, q, g, repeat=5); rows.append(("numpy XOR + bitwise_count floor", t, None))
    t, v = timed(per_query_loop, qB, rB, ql, gl); rows.append(("per-query loop (papers' code)", t, v))
    if not args.no_sklearn:
        t, v = timed(sklearn_map, qB, rB, ql, gl); rows.append(("scikit-learn per query", t, v))
    try:
        import torchmetrics  # noqa: F401
        t, v = timed(torchmetrics_map, qB, rB, ql, gl); rows.append(("torchmetrics RetrievalMAP", t, v))
    except ImportError:
        rows.append(("torchmetrics RetrievalMAP", None, "not installed"))
    base = rows[0][1]
    print(f"{'method':36s} {'seconds':>9s} {'x engine':>9s}  value")
    for name, t, v in rows:
        ts = f"{t:9.3f}" if t is not None else f"{'-':>9s}"
        ratio = f"{t / base:9.1f}" if t is not None else f"{'-':>9s}"
        vs = f"{v:.12f}" if isinstance(v, float) else ("" if v is None else str(v))
        print(f"{name:36s} {ts} {ratio}  {vs}")
    eng, loop = rows[0][2], rows[4][2]
    print(f"engine mAP - per-query loop mAP = {eng - loop:.3e}")
    assert abs(eng - loop) < 1e-12, "the engine and the per-query loop disagree"
    print(f"speed-up over the per-query loop: {rows[4][1] / base:.0f}x (1 thread: {rows[4][1] / rows[1][1]:.0f}x); "
          f"engine time / numpy floor time: {base / rows[3][1]:.2f} (1 thread: {rows[1][1] / rows[3][1]:.2f})")


def run_scale(args):
    print("== time against Q*N (64 bits, 10 classes): engine passes and the numpy floor")
    warm_up(args.threads)
    sizes = [(500, 10_000), (2000, 50_000), (2000, 200_000), (2000, 500_000)]
    print(f"{'Q x N':>16s} {'pairs':>9s} {'hist s':>8s} {'ns/pair':>8s} {'hist+sums s':>12s} {'floor s':>8s} "
          f"{'floor/hist':>10s} {'time / first':>12s} {'Q*N / first':>11s}")
    first = None
    for nq, ng in sizes:
        q, ql, g, gl = workload(nq, ng, 64)
        reps = 3 if nq * ng <= 10 ** 8 else 1
        th, _ = timed(engine_hist_only, q, ql, g, gl, args.threads, repeat=reps)
        ts, _ = timed(engine_map, q, ql, g, gl, args.threads, repeat=reps)
        tf, _ = timed(numpy_floor, q, g, repeat=reps)
        first = first or (th, nq * ng)
        print(f"{nq:>7d} x {ng:<7d} {nq * ng:9.1e} {th:8.3f} {th / (nq * ng) * 1e9:8.2f} {ts:12.3f} {tf:8.3f} "
              f"{tf / th:10.1f} {th / first[0]:12.1f} {nq * ng / first[1]:11.1f}")
    print("== time against code length (2,000 x 50,000)")
    print(f"{'bits':>5s} {'hist s':>8s} {'hist+sums s':>12s} {'floor s':>8s} {'floor/hist':>10s} {'time / 32 bits':>14s}")
    first = None
    for nbits in (32, 64, 128, 256):
        q, ql, g, gl = workload(2000, 50_000, nbits)
        th, _ = timed(engine_hist_only, q, ql, g, gl, args.threads, repeat=3)
        ts, _ = timed(engine_map, q, ql, g, gl, args.threads, repeat=3)
        tf, _ = timed(numpy_floor, q, g, repeat=3)
        first = first or th
        print(f"{nbits:5d} {th:8.3f} {ts:12.3f} {tf:8.3f} {tf / th:10.1f} {th / first:14.2f}")


def big_child(threads):
    "The 10k x 1M point in this (fresh) process; prints time and peak RSS."
    q, ql, g, gl = workload(10_000, 1_000_000, 64)
    warm_up(threads)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t, v = timed(engine_hist_only, q, ql, g, gl, threads)
    print(f"10,000 x 1,000,000, 64 bits: hist pass + expected-ties mAP {t:8.1f} s   mAP = {v:.6f}")
    t, v = timed(engine_map, q, ql, g, gl, threads)
    print(f"10,000 x 1,000,000, 64 bits: hist + index-sums passes, mAP (index ties) {t:8.1f} s   mAP = {v:.6f}")
    rel = relevance_from_labels(ql, gl, len(q), len(g))
    t, s = timed(engine.summarize, q, g, rel, top=1000, code_max=True, threads=threads, progress=False)
    print(f"10,000 x 1,000,000, 64 bits: hist + top 1000 + code_max passes {t:8.1f} s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"peak RSS {peak / 1024:.0f} MiB (after building the workload: {rss0 / 1024:.0f} MiB); bound 1024 MiB")
    assert peak < 1024 * 1024, "peak RSS above 1 GiB"


def run_big(args):
    print("== 10,000 queries x 1,000,000 gallery items (a fresh process, so peak RSS is this run's alone)")
    cmd = [sys.executable, os.path.abspath(__file__), "_big_child"] + (["--threads", str(args.threads)] if args.threads else [])
    subprocess.run(cmd, check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["w1", "scale", "big", "all", "_big_child"])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--no-sklearn", action="store_true")
    args = p.parse_args()
    import numba
    print(f"numpy {np.__version__}, numba {numba.__version__}, {numba.config.NUMBA_NUM_THREADS} numba threads "
          f"(using {args.threads or numba.config.NUMBA_NUM_THREADS}), {os.cpu_count()} CPUs")
    if args.what == "_big_child":
        return big_child(args.threads)
    if args.what in ("w1", "all"):
        run_w1(args)
    if args.what in ("scale", "all"):
        run_scale(args)
    if args.what in ("big", "all"):
        run_big(args)


if __name__ == "__main__":
    main()
