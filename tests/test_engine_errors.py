"""Errors of the engine's kernels surface as themselves (issue 42). A leftover name in a kernel (a rename done in
part) raises numba's TypingError naming it, not `SystemError: CPUDispatcher(...) returned a result with an exception
set`, through every layer a call crosses (the chunk loop, the thread-count wrapper, a caller's own thread); an error
raised inside a parallel loop at run time, which numba reports as that SystemError with the error as its cause, is
raised as itself by `engine._launch`."""
import importlib.util
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from numba import njit, prange
from numba.core.errors import TypingError

from retrieval_lit import engine
from retrieval_lit.relevance import relevance_from_labels

ENGINE = Path(engine.__file__)


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """A scratch copy of the engine whose top kernel reads a name that no longer exists (`top_grades_left`), as a
    half-done rename would leave it; imported as a module of its own (its own numba cache, in the scratch folder)."""
    src = ENGINE.read_text().replace("from . import", "from retrieval_lit import")
    src = src.replace("from .", "from retrieval_lit.")
    old = "                        top[i, r] = v >> shift\n"
    assert src.count(old) == 1
    src = src.replace(old, "                        top[i, r] = (v >> shift) + top_grades_left\n")
    folder = tmp_path_factory.mktemp("scratch")
    path = folder / "scratch_engine.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("scratch_engine", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["scratch_engine"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("scratch_engine", None)


def problem():
    rng = np.random.default_rng(0)
    qb, gb = rng.integers(0, 2, (40, 16)), rng.integers(0, 2, (60, 16))
    return qb, gb, relevance_from_labels(rng.integers(0, 3, 40), rng.integers(0, 3, 60), 40, 60)


@pytest.mark.parametrize("how", ["scan", "chunks and threads", "a thread of the caller's"])
def test_a_leftover_name_in_a_kernel_is_a_typing_error_naming_it(broken, how):
    qb, gb, rel = problem()
    run = {"scan": lambda: broken.scan(qb, gb, rel, stable_ranks=5),
           "chunks and threads": lambda: broken.scan(qb, gb, rel, stable_ranks=5, chunk=7, threads=1),
           "a thread of the caller's": None}[how]
    if run is None:                        # the call made from another thread, its error handed back
        box = []

        def work():
            try:
                broken.scan(qb, gb, rel, stable_ranks=5)
            except BaseException as e:     # handed to the test's thread
                box.append(e)
        t = threading.Thread(target=work)
        t.start()
        t.join()
        assert len(box) == 1
        error = box[0]
    else:
        with pytest.raises(Exception) as caught:
            run()
        error = caught.value
    assert isinstance(error, TypingError) and not isinstance(error, SystemError)
    assert "top_grades_left" in str(error)


def test_the_other_passes_of_the_scratch_engine_still_run(broken):
    "Only the broken kernel fails: a histogram-only call compiles and runs the histogram kernel alone."
    qb, gb, rel = problem()
    assert np.array_equal(broken.summarize(qb, gb, rel).hist, engine.summarize(qb, gb, rel).hist)


@njit(parallel=True)
def _allocating_kernel(n, out):
    "A parallel loop that allocates n items per iteration: n < 0 raises there, at run time."
    for i in prange(out.shape[0]):
        out[i] = np.empty(n, np.int64).shape[0]


def test_an_error_inside_a_parallel_loop_is_raised_as_itself():
    out = np.zeros(2, np.int64)
    with pytest.raises(SystemError) as numbas:           # numba's own report: the error is only the cause
        _allocating_kernel(-1, out)
    assert isinstance(numbas.value.__cause__, ValueError)
    with pytest.raises(ValueError, match="negative"):    # through `_launch`: the error itself
        engine._launch(_allocating_kernel, (-1, out))
    engine._launch(_allocating_kernel, (4, out))
    assert out.tolist() == [4, 4]
