"""CI's smoke run of benchmarks/bench_gpu.py (issue 35): on torch's CPU build, at its small size, every part runs and
the torch path's values equal the CPU path's. The timings and goals are read on a GPU, not here."""
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[1]


def test_bench_gpu_small_runs_and_agrees_with_the_cpu_path():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_gpu.py"), "--small"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    for part in ("floor  product + sort", "torchmetrics RetrievalMAP(top_k=100)", "cpu    map + map@100",
                 "gpu    map      expected", "gpu    map@100  index"):
        assert part in out, out
    agree = re.search(r"goal 4: values = the CPU path's \(max \|diff\| (\S+) <= 1e-6\): met", out)
    assert agree and float(agree.group(1)) <= 1e-6, out
    exact = re.search(r"goal 5: float64 values = the CPU path's on \S+ queries \(max \|diff\| (\S+) <= 1e-12\): met", out)
    assert exact and float(exact.group(1)) <= 1e-12, out
    launched = re.findall(r"map@100 expected, the device finish of one block of \d+ queries: (\d+) kernel launches, "
                          r"(\d+) of them making a \(block, N\) tensor", out)
    assert launched and int(launched[0][1]) <= 1, out          # the product alone: no grade matrix, no second pass
