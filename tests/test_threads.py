"""evaluate(threads=): every value the same, bit for bit, for any thread count (issue 35 item 1). The pieces of work
(waves of queries, tiles of the gallery, products) keep their shapes whatever the count, so a BLAS product's bits
cannot depend on it; these tests hold threads=1 as the reference, on data that makes several waves and several
parts, with removed items and with heavy ties (buffers that overflow)."""
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import retrieval_lit.score_ranking as score_ranking
from retrieval_lit import evaluate
from retrieval_lit.cli import main
from retrieval_lit.relevance import make_ignore, relevance_from_labels, relevance_from_matrix
from retrieval_lit.score_kernel import streamed_top_block, top_block
from retrieval_lit.score_ranking import (similarity_rows, summarize_scores, threads_in_force, threads_wanted,
                                         usable_cpus)
from retrieval_lit.validate import RetrievalInputError

METRICS = ["map", "map@100", "ndcg@10"]
COUNTS = (1, 2, 16)


@pytest.fixture
def sixteen_cpus(monkeypatch):
    "As on a machine with 16 CPUs: the gallery is then streamed in up to 16 parts (not capped at this machine's)."
    monkeypatch.setattr(score_ranking, "_process_cpus", lambda: 16)


def _data(seed, n_q=70, n_g=3000, dim=12, ties=False):
    rng = np.random.default_rng(seed)
    if ties:   # small integers: many exactly equal similarities, in float32 and float64 alike
        q, g = rng.integers(-2, 3, (n_q, dim)).astype(float), rng.integers(-2, 3, (n_g, dim)).astype(float)
        q[q.sum(axis=1) == 0, 0], g[np.abs(g).sum(axis=1) == 0, 0] = 1, 1       # no zero vector (cosine)
    else:
        q, g = rng.normal(size=(n_q, dim)), rng.normal(size=(n_g, dim))
    return q, g, rng.integers(0, 6, n_q), rng.integers(0, 6, n_g)


def _bits(r):
    return {m: r.per_query[m].view(np.uint64).copy() for m in METRICS}


@pytest.mark.parametrize("precision", ["float32", "float64"])
@pytest.mark.parametrize("similarity", ["cosine", "dot", "l2"])
@pytest.mark.parametrize("ties", [False, True])
def test_embeddings_same_bits_for_any_thread_count(sixteen_cpus, precision, similarity, ties):
    q, g, ql, gl = _data(1, ties=ties)
    ignore = [np.arange(i, 3000, 97) for i in range(len(q))]          # removed items: the stream's flags
    for max_block_bytes in (1 << 28, 200_000):                     # one wave; several waves of queries
        runs = {t: _bits(evaluate(query_embeddings=q, gallery_embeddings=g, query_labels=ql, gallery_labels=gl,
                                  metrics=METRICS, similarity=similarity, precision=precision, ignore=ignore,
                                  max_block_bytes=max_block_bytes, threads=t, progress=False)) for t in COUNTS}
        for t in COUNTS[1:]:
            for m in METRICS:
                assert np.array_equal(runs[t][m], runs[1][m]), (t, m, max_block_bytes)


@pytest.mark.parametrize("precision", ["float32", "float64"])
def test_scores_same_bits_for_any_thread_count(sixteen_cpus, precision):
    rng = np.random.default_rng(2)
    scores = np.round(rng.normal(size=(50, 2000)), 1)                # one decimal: heavy ties
    rel = rng.integers(0, 3, (50, 2000)) * (rng.random((50, 2000)) < 0.2)
    for max_block_bytes in (1 << 28, 300_000):
        runs = {t: _bits(evaluate(scores=scores, relevance=rel, metrics=METRICS, precision=precision,
                                  max_block_bytes=max_block_bytes, threads=t)) for t in COUNTS}
        for t in COUNTS[1:]:
            for m in METRICS:
                assert np.array_equal(runs[t][m], runs[1][m]), (t, m)


def test_products_keep_their_shapes(sixteen_cpus):
    """The products asked of `rows` (queries, items) are the same pieces for 1, 2 and 16 threads: a BLAS product's
    bits depend on its shape, so no count can change a similarity."""
    q, g, ql, gl = _data(3, n_q=40, n_g=9000)
    _, _, rows = similarity_rows(q, g, "cosine", "float32")
    rel = relevance_from_labels(ql, gl, len(q), len(g))
    for cutoff in (None, 50):                                        # the whole layout's waves; the stream's tiles
        asked = {}
        for t in COUNTS:
            seen, lock = [], threading.Lock()

            def recording(a, b, items=None, out=None):
                with lock:
                    seen.append((a, b, items))
                return rows(a, b, items, out)
            summarize_scores(recording, rel, cutoff=cutoff, max_block_bytes=2_000_000, threads=t)
            asked[t] = sorted(seen, key=str)
        assert asked[2] == asked[1] and asked[16] == asked[1], cutoff


@pytest.mark.parametrize("seed", range(6))
def test_gallery_in_parts_equals_one_pass(seed):
    "streamed_top_block(parts=) merges its parts' candidates into the summary of one pass, heavy ties included."
    rng = np.random.default_rng(seed)
    b, n = int(rng.integers(1, 6)), int(rng.integers(50, 900))
    key = (rng.integers(0, int(rng.integers(1, 8)), (b, n)) / 4 if seed % 2 else rng.normal(size=(b, n)))
    key = key.astype((np.float32, np.float64)[seed % 3 == 0])
    grades = (rng.integers(0, 3, (b, n)) * (rng.random((b, n)) < 0.3)).astype(np.uint8)
    rel = relevance_from_matrix(grades, b, n)
    kept = rng.random((b, n)) < 0.8 if seed % 3 == 1 else None
    rows = lambda a, z, items: key[a:z, items[0]:items[1]]
    cutoff = int(rng.integers(1, 30))
    t = int(rng.integers(0, cutoff + 1))
    ref = top_block(key, grades, kept, 3, t, cutoff)
    pool = ThreadPoolExecutor(4)
    for tile in (1, 7, 64):
        for parts in (1, 2, 5, 1000):
            hist, top = streamed_top_block(rows, 0, b, n, rel, kept, t, cutoff, tile=tile, parts=parts, run=pool.map)
            width = max(hist.shape[1], ref[0].shape[1])
            pad = lambda h: np.pad(h, ((0, 0), (0, width - h.shape[1]), (0, 0)))
            assert np.array_equal(pad(hist), pad(ref[0])), (tile, parts)
            if t:
                assert np.array_equal(top, ref[1]), (tile, parts)
    pool.shutdown()


def test_threads_checked():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(RetrievalInputError, match="^`threads`"):
            evaluate(scores=[[0.9, 0.5]], relevance=[[0, 1]], threads=bad)
    assert evaluate(scores=[[0.9, 0.5]], relevance=[[0, 1]], threads=np.int64(3))["map"] == 0.5


def test_threads_in_force_is_scoped():
    "The count holds inside the `with` block, in this thread only, and is restored after an error."
    outside = usable_cpus()
    with threads_in_force(5):
        assert usable_cpus() == 5 and threads_wanted() == 5
        with ThreadPoolExecutor(1) as pool:                          # another thread does not see it
            assert pool.submit(threads_wanted).result() is None
        with threads_in_force(None):
            assert usable_cpus() == outside
    with pytest.raises(RetrievalInputError):
        with threads_in_force(3):
            evaluate(scores=[[0.9, 0.5]], relevance=[[0, 1]], threads=0)
    assert threads_wanted() is None and usable_cpus() == outside


def test_engine_takes_the_count_in_force():
    from retrieval_lit.engine import _Threads
    assert _Threads(None).n == __import__("numba").config.NUMBA_NUM_THREADS
    with threads_in_force(1):
        assert _Threads(None).n == 1
        assert _Threads(2).n == min(2, __import__("numba").config.NUMBA_NUM_THREADS)
    rng = np.random.default_rng(4)
    qc, gc = rng.integers(0, 2, (30, 16)), rng.integers(0, 2, (500, 16))
    ql, gl = rng.integers(0, 4, 30), rng.integers(0, 4, 500)
    runs = [evaluate(qc, gc, ql, gl, METRICS, engine="numba", threads=t) for t in COUNTS]
    for r in runs[1:]:
        for m in METRICS:
            assert np.array_equal(r.per_query[m], runs[0].per_query[m])


def test_cli_threads(tmp_path, capsys):
    np.save(tmp_path / "s.npy", np.array([[0.9, 0.5, 0.1]]))
    np.save(tmp_path / "r.npy", np.array([[0, 1, 1]], dtype=np.uint8))
    args = ["evaluate", "--scores", str(tmp_path / "s.npy"), "--relevance", str(tmp_path / "r.npy"), "--metrics", "map"]
    assert main(args + ["--threads", "0"]) == 2
    assert "`--threads` must be at least 1" in capsys.readouterr().err
    assert main(args + ["--threads", "2"]) == 0
    assert f"map     {(1 / 2 + 2 / 3) / 2:.4f}" in capsys.readouterr().out      # relevant at ranks 2 and 3
