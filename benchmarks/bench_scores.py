"""Ranking by scores at scale: 1,000 queries x 100,000 gallery items, 128-d float32 embeddings, cosine similarity.

usage: python benchmarks/bench_scores.py [Q N]
Each contender runs in a fresh process (so each peak RSS is its own), best of 2:
  evaluate   retrieval_lit.evaluate(query_embeddings=..., gallery_embeddings=..., similarity="cosine"), ties="index"
             and "expected" (the exact mean over tie orders), map@100 and map
  loop       a per-query numpy loop: scores = G @ q, np.argsort(-scores, kind="stable"), AP (the papers' style)
  faiss      faiss.IndexFlatIP on the normalised vectors, top-100 search, then AP@100 (faiss-cpu is a benchmark-only
             peer: `pip install faiss-cpu`; skipped with a note where absent)
AP@100 uses the papers' denominator (relevant items in the top 100), map the whole ranking."""
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def workload(n_queries=1000, n_gallery=100_000, dim=128, classes=10, seed=0):
    "Clustered float32 embeddings: class centres plus noise, so that mAP is neither 0 nor 1."
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(classes, dim)).astype(np.float32)
    gl, ql = rng.integers(0, classes, n_gallery), rng.integers(0, classes, n_queries)
    g = centres[gl] + 2.0 * rng.normal(size=(n_gallery, dim)).astype(np.float32)
    q = centres[ql] + 2.0 * rng.normal(size=(n_queries, dim)).astype(np.float32)
    return q, ql, g, gl


def ap_rows(rel, denominator_all=None):
    "AP of each row of a (Q, t) 0/1 matrix in rank order (the papers' denominator unless R is given)."
    hits = np.cumsum(rel, axis=1)
    s = (rel * hits / np.arange(1, rel.shape[1] + 1)).sum(axis=1)
    den = hits[:, -1] if denominator_all is None else denominator_all
    return np.divide(s, den, out=np.zeros(len(s)), where=den > 0)


def run(stage, nq, n):
    q, ql, g, gl = workload(nq, n)
    out = {}
    if stage == "evaluate":
        from retrieval_lit import evaluate
        for ties in ("index", "expected"):
            for metrics in (["map@100"], ["map"]):
                t0 = time.perf_counter()
                r = evaluate(query_embeddings=q, gallery_embeddings=g, similarity="cosine", query_labels=ql,
                             gallery_labels=gl, metrics=metrics, ties=ties, progress=False)
                out[f"{metrics[0]} ties={ties}"] = (time.perf_counter() - t0, r[metrics[0]])
    elif stage == "loop":
        qn = q / np.linalg.norm(q, axis=1, keepdims=True)
        gn = g / np.linalg.norm(g, axis=1, keepdims=True)
        t0 = time.perf_counter()
        ap100, ap = np.zeros(nq), np.zeros(nq)
        for i in range(nq):
            order = np.argsort(-(gn.astype(np.float64) @ qn[i].astype(np.float64)), kind="stable")
            rel = (gl[order] == ql[i]).astype(np.float64)[None, :]
            ap100[i] = ap_rows(rel[:, :100])[0]
            ap[i] = ap_rows(rel, rel.sum(axis=1))[0]
        out["map@100 and map, one loop"] = (time.perf_counter() - t0, ap100.mean(), ap.mean())
    elif stage == "faiss":
        import faiss
        qn = np.ascontiguousarray(q / np.linalg.norm(q, axis=1, keepdims=True), dtype=np.float32)
        gn = np.ascontiguousarray(g / np.linalg.norm(g, axis=1, keepdims=True), dtype=np.float32)
        t0 = time.perf_counter()
        index = faiss.IndexFlatIP(gn.shape[1])
        index.add(gn)
        _, ids = index.search(qn, 100)
        rel = (gl[ids] == ql[:, None]).astype(np.float64)
        out["map@100 (top-100 search + AP)"] = (time.perf_counter() - t0, ap_rows(rel).mean())
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out))


def main(nq=1000, n=100_000):
    print(f"{nq:,} queries x {n:,} gallery items, 128-d float32, cosine; each contender in a fresh process")
    for stage in ("evaluate", "loop", "faiss"):
        if stage == "faiss":
            try:
                import faiss  # noqa: F401
            except ImportError:
                print("faiss: not installed (pip install faiss-cpu): skipped")
                continue
        p = subprocess.run([sys.executable, __file__, "--stage", stage, str(nq), str(n)], capture_output=True, text=True)
        if p.returncode:
            print(stage, "failed:", p.stderr[-2000:])
            continue
        res = json.loads(p.stdout.strip().splitlines()[-1])
        rss = res.pop("peak_rss_mib")
        for what, vals in res.items():
            print(f"  {stage:8s} {what:32s} {vals[0]:7.2f} s   value(s) {', '.join(f'{v:.6f}' for v in vals[1:])}")
        print(f"  {stage:8s} peak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--stage":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(*map(int, sys.argv[1:3]))
