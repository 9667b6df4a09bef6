"""The ranking summary against brute force; tie modes; shard additivity; block-size invariance."""
import itertools

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from retrieval_lit.ranking import counting_sort_order, ordered_top, summarize
from retrieval_lit.relevance import relevance_from_labels, relevance_from_matrix


@st.composite
def problems(draw):
    k = draw(st.integers(1, 70))
    nq, ng = draw(st.integers(1, 6)), draw(st.integers(1, 30))
    qb = draw(arrays(np.uint8, (nq, k), elements=st.integers(0, 1)))
    gb = draw(arrays(np.uint8, (ng, k), elements=st.integers(0, 1)))
    grades = draw(arrays(np.uint8, (nq, ng), elements=st.integers(0, 3)))
    return qb, gb, grades


def brute(qb, gb, grades):
    d = (qb[:, None, :] != gb[None, :, :]).sum(-1)
    k = qb.shape[1]
    hist = np.zeros((len(qb), k + 1, int(grades.max()) + 1), dtype=np.int64)
    for i, j in itertools.product(range(len(qb)), range(len(gb))):
        hist[i, d[i, j], grades[i, j]] += 1
    top = np.array([grades[i][counting_sort_order(d[i], k)] for i in range(len(qb))])
    return d, hist, top


@given(problems(), st.integers(1, 500))
@settings(max_examples=300, deadline=None)
def test_summary_equals_brute_force(prob, block_bytes):
    qb, gb, grades = prob
    s = summarize(qb, gb, relevance_from_matrix(grades, *grades.shape), stable_ranks=-1, code_max=True, max_block_bytes=block_bytes)
    d, hist, top = brute(qb, gb, grades)
    assert np.array_equal(s.hist, hist)
    assert np.array_equal(s.top_grades, top)
    for i in range(len(qb)):                      # code_max: tallest code bar on each shell
        for dist in range(qb.shape[1] + 1):
            rows = gb[d[i] == dist]
            tallest = max((np.sum(np.all(rows == r, axis=1)) for r in rows), default=0)
            assert s.code_max[i, dist] == tallest


@given(problems())
@settings(max_examples=200, deadline=None)
def test_optimistic_and_pessimistic_sort_each_tie_group(prob):
    qb, gb, grades = prob
    s = summarize(qb, gb, relevance_from_matrix(grades, *grades.shape), stable_ranks=-1)
    d = (qb[:, None, :] != gb[None, :, :]).sum(-1)
    opt, pes = ordered_top(s, -1, "optimistic"), ordered_top(s, -1, "pessimistic")
    for i in range(len(qb)):
        ds = np.sort(d[i], kind="stable")
        for dist in np.unique(ds):
            block = grades[i][d[i] == dist]
            assert np.array_equal(opt[i][ds == dist], np.sort(block)[::-1])
            assert np.array_equal(pes[i][ds == dist], np.sort(block))
    assert np.array_equal(ordered_top(s, 3, "index"), s.top_grades[:, :3])


@given(problems(), st.integers(1, 29))
@settings(max_examples=200, deadline=None)
def test_histograms_of_gallery_shards_add_up(prob, cut):
    qb, gb, grades = prob
    cut = min(cut, len(gb) - 1)
    if cut < 1:
        return
    rel = lambda a, b: relevance_from_matrix(grades[:, a:b], len(qb), b - a)
    whole = summarize(qb, gb, relevance_from_matrix(grades, *grades.shape)).hist
    a = summarize(qb, gb[:cut], rel(0, cut)).hist
    b = summarize(qb, gb[cut:], rel(cut, len(gb))).hist
    g = max(a.shape[2], b.shape[2])
    pad = lambda h: np.concatenate([h, np.zeros(h.shape[:2] + (g - h.shape[2],), h.dtype)], axis=2)
    total = pad(a) + pad(b)
    assert np.array_equal(total[:, :, : whole.shape[2]], whole) and not total[:, :, whole.shape[2]:].any()


def test_class_and_multihot_labels_give_the_same_binary_relevance():
    rng = np.random.default_rng(1)
    qb, gb = rng.integers(0, 2, (5, 16)), rng.integers(0, 2, (50, 16))
    ql, gl = rng.integers(0, 4, 5), rng.integers(0, 4, 50)
    one_hot = lambda y: np.eye(4, dtype=int)[y]
    a = summarize(qb, gb, relevance_from_labels(ql, gl, 5, 50), stable_ranks=-1)
    b = summarize(qb, gb, relevance_from_labels(one_hot(ql), one_hot(gl), 5, 50), stable_ranks=-1)
    assert np.array_equal(a.relevant_hist, b.relevant_hist) and np.array_equal(a.top_grades > 0, b.top_grades > 0)
