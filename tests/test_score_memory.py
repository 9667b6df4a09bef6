"""Issue 47: every buffer the compiled scores pass holds is counted in `max_block_bytes`, the stream's candidate
buffers included. Measured, not assumed: a fresh subprocess (numba's allocations are not seen by tracemalloc) loads
the compiled kernels on a tiny input first (their code is then resident), then summarises a ranking with a small
bound, and reads its peak resident memory (/proc's VmHWM) against the resident memory just before the call. Not
`ru_maxrss`: Linux carries the forking parent's peak across exec into it, so under pytest it read the test
runner's 500 MB.

The margin: the call's results are not a buffer of the pass (they are what it returns; evaluate finishes them wave
by wave) and are subtracted, measured from the arrays returned; beyond the bound remain the allocator's slack, the
threads' stacks and numpy's temporaries of a few small arrays, 24 MiB in all (with a bound of 1 byte, one query a
wave, the growth beyond the results measured here was 0.3 MiB through the cutoff and 3 MiB for the whole ranking).
With a bound of 32 MiB it was 15 and 23 MiB. Without the candidate buffers counted (the bound read as 2 bytes a pair
only, every part streamed), the cutoff case below held 145 MiB beyond its results: the parts' 4,000 candidates of 12
bytes each, and their merge, for every query of a wave of 838."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
MARGIN = 24 * MIB

CHILD = r"""
import json, sys
import numpy as np
from retrieval_lit.relevance import relevance_from_labels
from retrieval_lit.score_ranking import score_summaries, similarity_rows

layout, bound = sys.argv[1], int(sys.argv[2])
cutoff = 1000 if layout == "tiles" else None
dtype = "float32" if layout == "tiles" else "float64"

def call(nq, ng, max_block_bytes):
    rng = np.random.default_rng(0)
    q, g = rng.normal(size=(nq, 16)).astype(np.float32), rng.normal(size=(ng, 16)).astype(np.float32)
    n_q, n_g, rows = similarity_rows(q, g, precision=dtype)
    rel = relevance_from_labels(rng.integers(0, 10, nq), rng.integers(0, 10, ng), nq, ng)
    return rows, rel

def status(field):
    "VmRSS (resident now) or VmHWM (its peak) of this process's memory, in bytes."
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(field))

rows, rel = call(8, 3000, 1 << 20)                                    # the kernels loaded (compiled in a warm-up)
score_summaries(rows, rel, cutoff=cutoff, index_sums=cutoff is None, method="compiled", threads=2,
                max_block_bytes=1 << 20)
rows, rel = call(1000, 20_000, bound)
before = status("VmRSS")
out = score_summaries(rows, rel, cutoff=cutoff, index_sums=cutoff is None, method="compiled", threads=2,
                      max_block_bytes=bound)
peak = status("VmHWM")
results = sum(s.hist.nbytes + (0 if s.top_grades is None else s.top_grades.nbytes) for s in out)
print(json.dumps({"growth": peak - before, "results": results, "waves": len(out)}))
"""


def measure(layout: str, bound: int) -> dict:
    p = subprocess.run([sys.executable, "-c", CHILD, layout, str(bound)], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module", autouse=True)
def compiled():
    "Compile the kernels once (numba's cache), so that no child's peak holds a compiler's."
    measure("tiles", 1 << 20), measure("whole", 1 << 20)


@pytest.mark.parametrize("layout", ["tiles", "whole"])
def test_peak_memory_of_a_pass_stays_within_its_bound(layout):
    bound = 32 * MIB
    m = measure(layout, bound)
    assert m["waves"] > 1                                             # the bound does cut the queries into waves
    assert m["growth"] - m["results"] <= bound + MARGIN, m


def test_the_margin_is_the_fixed_cost_of_a_call():
    "With a bound of one byte (one query a wave) the growth beyond the results is the fixed cost the margin covers."
    m = measure("tiles", 1)
    assert m["growth"] - m["results"] <= MARGIN, m
