"""Time egr@N (Gherbi et al. 2023) on ranking summaries: the exact tie-aware mean (`expected`) against the three
definite orders, on the embedded digits and on the shared synthetic workload.

Run: python benchmarks/bench_egr.py   (prints seconds per call; the summary is built once, outside the timing)
"""
import sys
import time

import numpy as np

from timing import timed  # benchmarks/timing.py: a script's own folder is on sys.path
from retrieval_lit.data import load_digits_codes
from retrieval_lit.egr import egr_at
from retrieval_lit.metrics import Conventions
from retrieval_lit.ranking import summarize
from retrieval_lit.relevance import relevance_from_labels


def run(name, qc, gc, ql, gl, cutoffs):
    s = summarize(qc, gc, relevance_from_labels(ql, gl, len(ql), len(gl)), stable_ranks=max(cutoffs))
    for n in cutoffs:
        row = [f"{name:<34} N={n:<5}"]
        for ties in ("expected", "index", "optimistic", "pessimistic"):
            c = Conventions.make(ties=ties)
            row.append(f"{ties} {timed(lambda: egr_at(s, n, c)):.3f}s")
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    for nbits in (12, 32, 64):
        d = load_digits_codes(nbits, seed=0)
        run(f"digits {len(d.query_labels)}x{len(d.gallery_labels)}, {nbits} bits", d.query_codes, d.gallery_codes,
            d.query_labels, d.gallery_labels, (12, 100, 1000))
    sys.path.insert(0, "/work/shared/bench")
    try:
        import workload
    except ImportError:
        workload = None
    if workload is not None:
        qb, ql, gb, gl = workload.make(q=1000, n=20000, k=64)
        run("workload 1000x20000, 64 bits", qb, gb, ql, gl, (12, 100, 1000))
