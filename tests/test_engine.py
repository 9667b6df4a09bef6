"""The engine (numba) against the numpy reference: identical summaries, identical metric values for every
registered metric and tie mode, invariance to chunks and threads, exact whole-ranking index sums."""
import math
import re
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from retrieval_lit import engine, ranking
from retrieval_lit.ranking import group_starts
from retrieval_lit.average_precision import ap_from_sums, ap_from_summary
from retrieval_lit.dcg import dcg_from_sums
from retrieval_lit.precision import r_precision_from_sums
from retrieval_lit.metrics import Conventions, known_metrics, parse_metric
from retrieval_lit.relevance import make_ignore, relevance_from_labels, relevance_from_matrix, relevance_from_types
from retrieval_lit.validate import RetrievalInputError

TIES = ("expected", "optimistic", "pessimistic", "index")


@st.composite
def problems(draw):
    "Random codes (1..130 bits, many ties and repeated codes) with one of the four relevance sources."
    k = draw(st.integers(1, 130))
    nq, ng = draw(st.integers(1, 7)), draw(st.integers(1, 60))
    alphabet = draw(st.integers(1, 4))          # few distinct bit patterns -> ties and repeated codes
    qb = draw(arrays(np.uint8, (nq, k), elements=st.integers(0, 1)))
    pool = draw(arrays(np.uint8, (alphabet, k), elements=st.integers(0, 1)))
    pick = draw(arrays(np.int64, ng, elements=st.integers(0, alphabet - 1)))
    noise = draw(arrays(np.uint8, (ng, k), elements=st.integers(0, 1)))
    flip = draw(st.booleans())
    gb = pool[pick] ^ (noise if flip else 0)
    kind = draw(st.sampled_from(["class", "multihot", "matrix", "types"]))
    if kind == "class":
        rel = relevance_from_labels(draw(arrays(np.int64, nq, elements=st.integers(-2, 2))),
                                    draw(arrays(np.int64, ng, elements=st.integers(-2, 2))), nq, ng)
    elif kind == "multihot":
        width = draw(st.integers(1, 70))
        rel = relevance_from_labels(draw(arrays(np.uint8, (nq, width), elements=st.integers(0, 1))),
                                    draw(arrays(np.uint8, (ng, width), elements=st.integers(0, 1))), nq, ng)
    elif kind == "matrix":
        rel = relevance_from_matrix(draw(arrays(np.uint8, (nq, ng), elements=st.integers(0, 5))), nq, ng)
    else:
        rel = relevance_from_types(draw(arrays(np.uint8, (nq, ng), elements=st.integers(1, 3))), nq, ng)
    return qb, gb, rel


def assert_same(a, b):
    assert (a.n_groups, a.n_ranks) == (b.n_groups, b.n_ranks)
    for f in ("hist", "top_grades", "code_max"):
        x, y = getattr(a, f), getattr(b, f)
        assert (x is None) == (y is None), f
        if x is not None:
            assert x.dtype == y.dtype and x.shape == y.shape, f
            assert np.array_equal(x, y), f


@given(problems(), st.sampled_from([0, 1, 5, 17, -1]), st.booleans(), st.integers(1, 9), st.sampled_from([1, 2]))
@settings(max_examples=300, deadline=None)
def test_engine_summary_identical_to_reference(prob, top, code_max, chunk, threads):
    qb, gb, rel = prob
    threads = min(threads, __import__("numba").config.NUMBA_NUM_THREADS)
    ref = ranking.summarize(qb, gb, rel, stable_ranks=top, code_max=code_max)
    got = engine.summarize(qb, gb, rel, stable_ranks=top, code_max=code_max, chunk=chunk, threads=threads)
    assert_same(got, ref)


@given(problems())
@settings(max_examples=150, deadline=None)
def test_index_sums_exact(prob):
    "precision_sum is the correctly rounded exact sum; r_hits and discount_sum read off the stable order."
    qb, gb, rel = prob
    res = engine.scan(qb, gb, rel, index_sums=True, chunk=3)
    full = ranking.summarize(qb, gb, rel, stable_ranks=-1).top_grades
    for i in range(len(qb)):
        ranks = np.flatnonzero(full[i] > 0) + 1
        exact = sum((Fraction(k, int(r)) for k, r in enumerate(ranks, start=1)), Fraction(0))
        assert float(exact) == res.sums.precision_sum[i]
        assert res.sums.r_hits[i] == int((full[i, : len(ranks)] > 0).sum())
        assert res.sums.discount_sum[i, 0] == 0
        for g in range(1, res.sums.discount_sum.shape[1]):
            at = np.flatnonzero(full[i] == g) + 1
            want = math.fsum(1 / np.log2(at + 1.0))
            assert math.isclose(want, res.sums.discount_sum[i, g], rel_tol=1e-15, abs_tol=0)


@given(problems())
@settings(max_examples=100, deadline=None)
def test_streamed_ap_equals_chapter(prob):
    "Whole-ranking AP with ties='index' from the sums equals the average-precision chapter's value."
    qb, gb, rel = prob
    res = engine.scan(qb, gb, rel, stable_ranks=-1, index_sums=True)
    for den in ("retrieved", "all", "min"):
        chapter = ap_from_summary(res.summary, None, Conventions.make(ties="index", ap_denominator=den))
        streamed, undefined = ap_from_sums(res.sums, res.summary.n_relevant)
        np.testing.assert_allclose(chapter, np.where(undefined, 0.0, streamed), rtol=1e-13, atol=0)


def _metric_names():
    "Every registered metric family: its example name, and the whole-ranking form where one exists."
    names = []
    for example, _ in known_metrics():
        names.append(example)
        bare = re.sub(r"@[0-9]+$", "", example)
        try:
            parse_metric(bare)
            names.append(bare)
        except RetrievalInputError:
            pass
    return names


def tied_case(rng, nq: int, ng: int, nbits: int, kind: str, repeated: int):
    "Random codes with `repeated` gallery items copying one code (a big tie group), and relevance of `kind`."
    qb, gb = rng.integers(0, 2, (nq, nbits)), rng.integers(0, 2, (ng, nbits))
    gb[rng.integers(0, ng, repeated)] = gb[0]
    if kind == "class":
        return qb, gb, relevance_from_labels(rng.integers(0, 4, nq), rng.integers(0, 4, ng), nq, ng)
    if kind == "multihot":
        return qb, gb, relevance_from_labels(rng.integers(0, 2, (nq, 4)), rng.integers(0, 2, (ng, 4)), nq, ng)
    return qb, gb, relevance_from_matrix(rng.integers(0, 3, (nq, ng)), nq, ng)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_every_metric_every_tie_mode(ties, kind):
    "Each registered metric, finished from the engine's summary, equals its value on the reference summary."
    rng = np.random.default_rng(hash((ties, kind)) % 2**32)
    qb, gb, rel = tied_case(rng, 9, 400, 12, kind, 100)
    names = _metric_names()
    assert len(names) >= 4
    for empty in ("zero", "skip"):
        conv = Conventions.make(ties=ties, empty=empty)
        for name in names:
            m = parse_metric(name)
            t = m.cutoff if ties == "index" else 0
            ref = ranking.summarize(qb, gb, rel, stable_ranks=t, code_max=m.code_max)
            got = engine.summarize(qb, gb, rel, stable_ranks=t, code_max=m.code_max, chunk=4)
            a, b = m.compute(ref, conv), m.compute(got, conv)
            np.testing.assert_array_equal(a, b, err_msg=f"{name} ties={ties} empty={empty}")


def test_evaluate_with_engine_equals_numpy():
    "evaluate() with the engine registered gives the numpy engine's report, value for value."
    from retrieval_lit import evaluation
    evaluation.register_engine("numba", engine.summarize)
    rng = np.random.default_rng(3)
    qb, gb = rng.integers(0, 2, (20, 32)), rng.integers(0, 2, (700, 32))
    ql, gl = rng.integers(0, 5, 20), rng.integers(0, 5, 700)
    names = _metric_names()
    for ties in TIES:
        a = evaluation.evaluate(qb, gb, ql, gl, names, ties=ties, bounds=True, engine="numpy")
        b = evaluation.evaluate(qb, gb, ql, gl, names, ties=ties, bounds=True, engine="numba")
        for n in a:
            np.testing.assert_array_equal(a.per_query[n], b.per_query[n])
            assert (n in a.bounds) == (n in b.bounds)
            if n in a.bounds:
                np.testing.assert_array_equal(np.array(a.bounds[n]), np.array(b.bounds[n]))


def test_chunks_and_threads_change_nothing():
    rng = np.random.default_rng(11)
    qb, gb = rng.integers(0, 2, (33, 64)), rng.integers(0, 2, (2000, 64))
    gb[::7] = gb[1]
    rel = relevance_from_labels(rng.integers(0, 2, (33, 9)), rng.integers(0, 2, (2000, 9)), 33, 2000)
    runs = [engine.scan(qb, gb, rel, stable_ranks=50, code_max=True, index_sums=True, chunk=c, threads=t)
            for c, t in [(1, 1), (5, 2), (33, 2), (None, None)]]
    for r in runs[1:]:
        assert_same(r.summary, runs[0].summary)
        for f in ("precision_sum", "discount_sum", "r_hits"):
            assert np.array_equal(getattr(r.sums, f), getattr(runs[0].sums, f))


def test_inputs_are_not_modified():
    rng = np.random.default_rng(5)
    qb, gb = rng.integers(0, 2, (4, 10)), rng.integers(0, 2, (30, 10))
    grades = rng.integers(0, 3, (4, 30))
    rel = relevance_from_matrix(grades, 4, 30)
    copies = [qb.copy(), gb.copy(), rel.matrix.copy()]
    engine.scan(qb, gb, rel, stable_ranks=-1, code_max=True, index_sums=True)
    for a, b in zip(copies, [qb, gb, rel.matrix]):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("kwargs, where", [
    (dict(threads=0), "`threads`"), (dict(threads=10**6), "`threads`"), (dict(chunk=0), "`chunk`"),
    (dict(progress="yes"), "`progress`"), (dict(stable_ranks=-2), "`stable_ranks`"),
    (dict(stable_ranks=1.5), "`stable_ranks`"),
])
def test_bad_options(kwargs, where):
    qb, gb = np.zeros((2, 8)), np.ones((5, 8))
    rel = relevance_from_labels(np.zeros(2, int), np.zeros(5, int), 2, 5)
    with pytest.raises(RetrievalInputError, match=re.escape(where)):
        engine.summarize(qb, gb, rel, **kwargs)


def test_bad_inputs():
    qb, gb = np.zeros((2, 8)), np.ones((5, 8))
    rel = relevance_from_labels(np.zeros(2, int), np.zeros(5, int), 2, 5)
    with pytest.raises(RetrievalInputError, match="`gallery_codes`"):
        engine.summarize(qb, gb[:, :7], rel)
    with pytest.raises(RetrievalInputError, match="`relevance`"):
        engine.summarize(qb, gb[:4], rel)
    with pytest.raises(RetrievalInputError, match="`relevance`"):
        engine.summarize(qb, gb, np.zeros((2, 5)))
    with pytest.raises(RetrievalInputError, match="`query_codes`"):
        engine.summarize(np.full((2, 8), 2), gb, rel)


def test_progress_bar_writes_to_stderr(capsys):
    qb, gb = np.zeros((3, 8)), np.ones((5, 8))
    rel = relevance_from_labels(np.zeros(3, int), np.zeros(5, int), 3, 5)
    engine.summarize(qb, gb, rel, progress=True, chunk=1)
    err = capsys.readouterr().err
    assert "3/3 queries" in err
    engine.summarize(qb, gb, rel)            # automatic: off (stderr is not a terminal, small run)
    assert capsys.readouterr().err == ""


@given(problems())
@settings(max_examples=150, deadline=None)
def test_one_walk_equals_two_passes(prob):
    "The fused walk (terms in rank order) and the two passes (terms in gallery order) round to the same floats."
    qb, gb, rel = prob
    q, g = engine.pack_codes(qb), engine.pack_codes(gb)
    n_grades = rel.max_grade + 1
    h, ap1, dcg1, hits1 = engine.hist_sums_pass(q, g, rel, n_grades)
    assert np.array_equal(h, engine.hist_pass(q, g, rel, n_grades))
    rh = h[:, :, 1:].sum(-1)
    ap2, dcg2, hits2 = engine.sums_pass(q, g, rel, n_grades,
                                        engine.Offsets(group_starts(h.sum(-1)), group_starts(rh), rh.sum(-1), len(g)))
    fin = engine._finish_pairs
    assert np.array_equal(fin(ap1), fin(ap2)) and np.array_equal(fin(dcg1), fin(dcg2))
    assert np.array_equal(hits1, hits2)


def test_all_irrelevant_matrix():
    "A grade matrix of zeros has one grade (G = 1): every pass still matches the reference."
    rng = np.random.default_rng(2)
    qb, gb = rng.integers(0, 2, (5, 64)), rng.integers(0, 2, (300, 64))
    rel = relevance_from_matrix(np.zeros((5, 300), dtype=int), 5, 300)
    res = engine.scan(qb, gb, rel, stable_ranks=-1, code_max=True, index_sums=True)
    assert_same(res.summary, ranking.summarize(qb, gb, rel, stable_ranks=-1, code_max=True))
    assert res.sums.discount_sum.shape == (5, 1) and not res.sums.precision_sum.any() and not res.sums.r_hits.any()


@given(problems())
@settings(max_examples=100, deadline=None)
def test_streamed_dcg_and_rprec_equal_chapters(prob):
    "Whole-ranking DCG (both gains) and R-precision with ties='index' from the sums equal the chapters' values."
    from retrieval_lit.dcg import dcg_from_summary
    from retrieval_lit.precision import rprec_from_summary
    qb, gb, rel = prob
    res = engine.scan(qb, gb, rel, stable_ranks=-1, index_sums=True)
    for gain in ("exp2", "linear"):
        chapter = dcg_from_summary(res.summary, None, Conventions.make(ties="index", gain=gain))
        np.testing.assert_allclose(dcg_from_sums(res.sums, gain), chapter, rtol=1e-12, atol=1e-12)
    chapter = rprec_from_summary(res.summary, Conventions.make(ties="index"))
    streamed, undefined = r_precision_from_sums(res.sums, res.summary.n_relevant)
    np.testing.assert_array_equal(np.where(undefined, 0.0, streamed), chapter)


@pytest.mark.parametrize("nbits", [1, 63, 64, 65, 129, 200, 256, 257, 320, 700])
def test_code_lengths_specialised_and_generic(nbits):
    """1..4 words use the specialised distance, longer codes the generic loop; every relevance source (class ids,
    one word of labels, several words of labels, grade matrix) through every pass: all equal the reference.
    (This also compiles every specialisation the tests can reach, so numba's disk cache is complete after one run.)"""
    rng = np.random.default_rng(nbits)
    qb, gb = rng.integers(0, 2, (6, nbits)), rng.integers(0, 2, (200, nbits))
    gb[::5] = qb[0]
    for rel in (relevance_from_labels(rng.integers(0, 3, 6), rng.integers(0, 3, 200), 6, 200),
                relevance_from_labels(rng.integers(0, 2, (6, 5)), rng.integers(0, 2, (200, 5)), 6, 200),
                relevance_from_labels(rng.integers(0, 2, (6, 130)), rng.integers(0, 2, (200, 130)), 6, 200),
                relevance_from_matrix(rng.integers(0, 2, (6, 200)), 6, 200),
                relevance_from_matrix(rng.integers(0, 3, (6, 200)), 6, 200)):
        ref = ranking.summarize(qb, gb, rel, stable_ranks=17, code_max=True)
        res = engine.scan(qb, gb, rel, stable_ranks=17, code_max=True, index_sums=True, chunk=4)
        assert_same(res.summary, ref)
        assert_same(engine.summarize(qb, gb, rel, stable_ranks=17, code_max=True, chunk=4), ref)
        q, g = engine.pack_codes(qb), engine.pack_codes(gb)
        n_grades = rel.max_grade + 1
        h = ref.hist
        ap, dcg, hits = engine.sums_pass(q, g, rel, n_grades, engine.Offsets(
            group_starts(h.sum(-1)), group_starts(h[:, :, 1:].sum(-1)), h[:, :, 1:].sum((1, 2)), len(g)))
        assert np.array_equal(engine._finish_pairs(ap), res.sums.precision_sum)
        assert np.array_equal(hits, res.sums.r_hits)


@pytest.mark.parametrize("labels", ["class", "multihot"])
@pytest.mark.parametrize("seed", range(5))
def test_evaluate_streams_index_sums_and_agrees_with_the_numpy_path(labels, seed):
    "Under ties='index' evaluate finishes whole-ranking map/ndcg/rprec from the engine's streamed sums."
    from retrieval_lit import evaluate
    rng = np.random.default_rng(seed)
    nbits = int(rng.integers(3, 40))
    q, g = rng.integers(0, 2, (15, nbits)), rng.integers(0, 2, (200, nbits))
    if labels == "class":
        ql, gl = rng.integers(0, 4, 15), rng.integers(0, 4, 200)
    else:
        ql, gl = rng.integers(0, 2, (15, 3)), rng.integers(0, 2, (200, 3))
    names = ["map", "ndcg", "rprec", "p@10", "map@50"]
    for empty in ("zero", "skip"):
        a = evaluate(q, g, ql, gl, names, ties="index", engine="numpy", empty=empty)
        b = evaluate(q, g, ql, gl, names, ties="index", engine="numba", empty=empty)
        for name in names:
            np.testing.assert_allclose(b.per_query[name], a.per_query[name], rtol=0, atol=1e-12, err_msg=name)


def _in_threads(run, n: int):
    "run(0) .. run(n-1) at once in n threads, switching between threads as often as the interpreter allows."
    import sys
    import threading
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=run, args=(k,)) for k in range(n)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
    finally:
        sys.setswitchinterval(old)


def test_concurrent_evaluate_on_different_galleries_equals_sequential():
    "Threads sharing the engine never read each other's gallery (the prepared-gallery cache is per thread)."
    from retrieval_lit import evaluation
    rng = np.random.default_rng(3)
    jobs = []
    for i, n in enumerate((300, 700, 1100, 1900)):
        q = rng.integers(0, 2, (40, 32)); g = rng.integers(0, 2, (n, 32))
        ql = rng.integers(0, 3 + i, 40); gl = rng.integers(0, 3 + i, n)
        jobs.append((q, g, ql, gl))
    names = ["map", "map@50", "p@10", "ndcg@20"]
    sequential = [evaluation.evaluate(*j, names, ties=t, engine="numba") for j in jobs for t in ("expected", "index")]
    results, errors = {}, []

    def run(k):
        try:
            for rep in range(5):
                for jt, t in enumerate(("expected", "index")):
                    r = evaluation.evaluate(*jobs[k], names, ties=t, engine="numba")
                    results.setdefault((k, jt), []).append(r)
        except Exception as e:      # pragma: no cover - reported below
            errors.append(e)

    _in_threads(run, len(jobs))
    assert not errors
    for (k, jt), reps in results.items():
        want = sequential[2 * k + jt]
        for r in reps:
            for n in names:
                assert np.array_equal(r.per_query[n], want.per_query[n]), (k, jt, n)


def test_engine_summaries_under_thread_stress_never_mix_galleries():
    "Four threads, four galleries of different sizes, a tiny switch interval: the old shared cache mixed them."
    from retrieval_lit.hamming import pack_codes
    rng = np.random.default_rng(0)
    jobs = []
    for i, n in enumerate((50, 90, 130, 170)):
        q, g = rng.integers(0, 2, (4, 16)), rng.integers(0, 2, (n, 16))
        ql, gl = rng.integers(0, 2 + i, 4), rng.integers(0, 2 + i, n)
        jobs.append((pack_codes(q), pack_codes(g), relevance_from_labels(ql, gl, 4, n)))
    want = [engine.summarize(*j).hist for j in jobs]
    bad = []

    def run(k):
        for _ in range(2000):
            if not np.array_equal(engine.summarize(*jobs[k]).hist, want[k]):
                bad.append(k)

    _in_threads(run, 4)
    assert not bad


@pytest.mark.parametrize("engine_name", ["numpy", "numba"])
def test_one_progress_bar_for_the_whole_evaluation(engine_name, capsys):
    "Several query blocks (and bounds) still draw one bar that counts every query once and ends once."
    from retrieval_lit import evaluation
    rng = np.random.default_rng(1)
    q, g = rng.integers(0, 2, (60, 16)), rng.integers(0, 2, (400, 16))
    ql, gl = rng.integers(0, 3, 60), rng.integers(0, 3, 400)
    evaluation.evaluate(q, g, ql, gl, ["map@10", "p@5"], bounds=True, engine=engine_name, progress=True,
                        max_block_bytes=20_000)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "60/60 queries" in err and err.count("evaluate [") >= 2
    assert "engine [" not in err


def test_evaluate_blocks_bound_the_histogram_memory():
    "Under ties='expected' without bounds the (Q, K+1, G) histogram is built block by block too."
    from retrieval_lit import evaluation
    calls = []
    rng = np.random.default_rng(2)
    q, g = rng.integers(0, 2, (50, 64)), rng.integers(0, 2, (30, 64))
    grades = rng.integers(0, 200, (50, 30))

    def spy(query_codes, gallery_codes, relevance, stable_ranks=0, code_max=False, progress=None):
        calls.append(len(query_codes))
        return ranking.summarize(query_codes, gallery_codes, relevance, stable_ranks=stable_ranks, code_max=code_max)

    evaluation.register_engine("spy", spy)
    try:
        r = evaluation.evaluate(q, g, relevance=grades, metrics=["map", "ndcg"], engine="spy",
                                max_block_bytes=65 * 200 * 8 * 10)
    finally:
        evaluation.ENGINES.pop("spy")
    assert max(calls) <= 10 and sum(calls) == 50
    ref = evaluation.evaluate(q, g, relevance=grades, metrics=["map", "ndcg"], engine="numpy")
    assert all(np.array_equal(r.per_query[n], ref.per_query[n]) for n in r)


@st.composite
def problems_with_ignore(draw):
    "A problem with junk items removed per query (a random mask) and, half the time, each query's own item."
    qb, gb, rel = draw(problems())
    nq, ng = len(qb), len(gb)
    junk = draw(arrays(np.bool_, (nq, ng), elements=st.booleans()))
    own = draw(arrays(np.int64, nq, elements=st.integers(-1, ng - 1))) if draw(st.booleans()) else None
    return qb, gb, rel, make_ignore(nq, ng, junk, own)


@given(problems_with_ignore(), st.sampled_from([0, 1, 5, -1]), st.booleans(), st.integers(1, 9))
@settings(max_examples=250, deadline=None)
def test_engine_with_ignore_identical_to_reference(prob, top, code_max, chunk):
    "Junk and self-exclusion inside the kernels: the same summary as the numpy reference's mask."
    qb, gb, rel, ig = prob
    ref = ranking.summarize(qb, gb, rel, stable_ranks=top, code_max=code_max, ignore=ig)
    assert_same(engine.summarize(qb, gb, rel, stable_ranks=top, code_max=code_max, chunk=chunk, ignore=ig), ref)
    assert_same(engine.scan(qb, gb, rel, stable_ranks=top, code_max=code_max, index_sums=True, ignore=ig).summary, ref)


@given(problems_with_ignore())
@settings(max_examples=150, deadline=None)
def test_index_sums_exact_with_ignore(prob):
    "The streamed sums skip removed items: exact against the reference's ranked grades of the kept items."
    qb, gb, rel, ig = prob
    res = engine.scan(qb, gb, rel, index_sums=True, chunk=2, ignore=ig)
    full = ranking.summarize(qb, gb, rel, stable_ranks=-1, ignore=ig).top_grades
    for i in range(len(qb)):
        kept = full[i, : len(gb) - ig.counts[i]]
        ranks = np.flatnonzero(kept > 0) + 1
        exact = sum((Fraction(k, int(r)) for k, r in enumerate(ranks, start=1)), Fraction(0))
        assert float(exact) == res.sums.precision_sum[i]
        assert res.sums.r_hits[i] == int((kept[: len(ranks)] > 0).sum())


@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_class_sorted_kernels_with_ignore(kind):
    "40 queries take the class-id kernels over the gallery grouped by class; removed items still hold no rank."
    rng = np.random.default_rng(3)
    nq, ng = 40, 500
    qb, gb, rel = tied_case(rng, nq, ng, 16, kind, 200)
    ig = make_ignore(nq, ng, rng.random((nq, ng)) < 0.3, rng.integers(-1, ng, nq))
    ref = ranking.summarize(qb, gb, rel, stable_ranks=-1, code_max=True, ignore=ig)
    got = engine.scan(qb, gb, rel, stable_ranks=-1, code_max=True, index_sums=True, ignore=ig)
    assert_same(got.summary, ref)
    plain = engine.scan(qb, gb, rel, index_sums=True, ignore=ig)
    assert np.array_equal(plain.sums.precision_sum, got.sums.precision_sum)
    for ignored in (ig, None):                  # histogram + top in one walk (class ids), with and without junk
        for t in (1, 37, -1):
            want = ranking.summarize(qb, gb, rel, stable_ranks=t, ignore=ignored)
            assert_same(engine.scan(qb, gb, rel, stable_ranks=t, ignore=ignored).summary, want)
    assert np.array_equal(got.summary.hist.sum((1, 2)), ng - ig.counts)


@pytest.mark.parametrize("ties", TIES)
def test_evaluate_with_ignore_engine_equals_numpy(ties):
    "evaluate(ignore=, self_index=) on codes: the compiled engine reads the ignore sets itself, same report."
    from retrieval_lit import evaluation
    rng = np.random.default_rng(5)
    nq, ng = 36, 600
    qb, gb = rng.integers(0, 2, (nq, 24)), rng.integers(0, 2, (ng, 24))
    gb[rng.integers(0, ng, 150)] = gb[1]
    ql, gl = rng.integers(0, 5, nq), rng.integers(0, 5, ng)
    junk = [np.flatnonzero(rng.random(ng) < 0.1) for _ in range(nq)]
    own = rng.integers(-1, ng, nq)
    names = _metric_names()
    a = evaluation.evaluate(qb, gb, ql, gl, names, ties=ties, bounds=True, engine="numpy", ignore=junk,
                            self_index=own)
    b = evaluation.evaluate(qb, gb, ql, gl, names, ties=ties, bounds=ties != "index", engine="numba", ignore=junk,
                            self_index=own)
    for n in a:
        np.testing.assert_allclose(a.per_query[n], b.per_query[n], rtol=1e-15, atol=0, err_msg=n)
        if n in b.bounds:
            np.testing.assert_array_equal(np.array(a.bounds[n]), np.array(b.bounds[n]))
    assert "numba" in evaluation.READS_IGNORE


def test_whole_ranking_ndcg_index_ties_same_bits_in_every_engine():
    """The engine's DCG discounts are chapter 03's table (numpy's log2): a table of its own, computed with numba's log2,
    differed in the last bit at rank 1,620, and nDCG under ties="index" differed between engine="numba" and numpy."""
    from retrieval_lit import evaluate
    n = 4000
    q, g = np.zeros((1, 16), dtype=np.uint8), np.ones((n, 16), dtype=np.uint8)
    g[:, 0] = 0                                     # every item at distance 15: one tie group, ranked by index
    rel = np.zeros((1, n), dtype=np.uint8)
    rel[0, [1619, 3240]] = 1                        # the relevant items at ranks 1,620 and 3,241
    got = {e: evaluate(q, g, relevance=rel, metrics=["ndcg"], ties="index", engine=e)["ndcg"]
           for e in ("numpy", "numba")}
    assert got["numpy"] == got["numba"], got
    ideal = 1 + 1 / np.log2(3)
    assert abs(got["numpy"] - (1 / np.log2(1621) + 1 / np.log2(3242)) / ideal) < 1e-15   # by hand
