"""A read-only install compiles once per user, not in every process (issue 41): where the package's folder cannot be
written (site-packages owned by root, a container image), numba caches the compiled kernels in the user's cache
directory (`$XDG_CACHE_HOME/numba`, else `~/.cache/numba`), and a second process loads them instead of compiling.

The package is copied into a temporary folder made read-only by a read-only bind mount in a mount namespace of the
test's own (`unshare -m`; as root, file permissions alone do not stop a write), and two processes evaluate the same
codes from it. The second must compile nothing: counted from numba's own compile events, not timed."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

COUNT_COMPILES = """
import sys
import numpy as np
from numba.core import event

compiled = []
class Count(event.Listener):
    def on_start(self, ev):
        compiled.append(ev.data["dispatcher"].py_func.__module__)
    def on_end(self, ev):
        pass

event.register("numba:compile", Count())
import retrieval_lit
from retrieval_lit import evaluate
assert retrieval_lit.__file__.startswith(sys.argv[1]), retrieval_lit.__file__
rng = np.random.default_rng(0)
q, g = rng.integers(0, 2, (20, 64)), rng.integers(0, 2, (300, 64))
r = evaluate(q, g, rng.integers(0, 3, 20), rng.integers(0, 3, 300), ["map", "p@10"], engine="numba")   # compiled path
print(sum(m.startswith("retrieval_lit") for m in compiled), round(r["map"], 12))
"""


def _read_only_run(folder: Path, env: dict) -> str:
    "Run COUNT_COMPILES with `folder` mounted read-only over itself, in a mount namespace of its own."
    inner = (f'mount --bind "{folder}" "{folder}" && mount -o remount,bind,ro "{folder}" && '
             f'touch "{folder}/probe" 2>/dev/null && exit 97; '
             f'exec "{sys.executable}" -c "$COUNT_COMPILES" "{folder}"')
    p = subprocess.run(["unshare", "-m", "sh", "-c", inner], env={**env, "COUNT_COMPILES": COUNT_COMPILES},
                       capture_output=True, text=True, timeout=900, cwd=folder.parent)
    if p.returncode == 97:
        pytest.fail("the bind mount was writable: the test would not test a read-only install")
    assert p.returncode == 0, p.stderr[-3000:]
    return p.stdout.split()


def _can_mount_read_only(tmp_path: Path) -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = tmp_path / "probe_dir"
    probe.mkdir()
    p = subprocess.run(["unshare", "-m", "sh", "-c", f'mount --bind "{probe}" "{probe}" && '
                        f'mount -o remount,bind,ro "{probe}" && ! touch "{probe}/x" 2>/dev/null'],
                       capture_output=True)
    return p.returncode == 0


def test_a_read_only_install_compiles_in_the_first_process_only(tmp_path):
    if not _can_mount_read_only(tmp_path):
        pytest.skip("this machine cannot make a read-only bind mount (unshare -m)")
    site = tmp_path / "site"
    shutil.copytree(ROOT / "retrieval_lit", site / "retrieval_lit",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_CACHE")}
    env.update(PYTHONPATH=str(site), HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"))
    first = _read_only_run(site, env)
    second = _read_only_run(site, env)
    assert int(first[0]) > 0                            # the first process compiled the kernels of its path ...
    assert int(second[0]) == 0, second                  # ... the second loaded every one of them
    assert first[1] == second[1]                        # and the same value, of course
    assert not list(site.rglob("__pycache__"))          # nothing was written into the read-only package
    assert list((home / ".cache" / "numba").rglob("*.nbi"))   # the kernels live in the user's cache directory
