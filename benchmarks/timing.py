"""What the benchmark scripts share: the best-of-n wall time of a call."""
import time


def timed(fn, repeat=3):
    "Best of `repeat` wall-clock times of `fn()`, in seconds."
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best
