"""Properties of Bayes merging (nbs/40_bayes.ipynb): the vectorised merge equals the readable walks bit for bit,
w = 1 is B1 (concatenation), the walks cost O(|A| + |B|) steps, and the Bayes weight estimator's identities."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from retrieval_lit.bayes import (
    bayes_weight, bayes_weight_tables, build_index, membership_masks, merge_kway_reference, merge_lists,
    merge_per_descriptor_reference, merge_per_image_reference, merged_scores, walk_per_image, weight_table, word_overlap)
from retrieval_lit.hamming import hamming_distances, pack_codes
from retrieval_lit.labs.bayes_digits import rank_by_score
from retrieval_lit.validate import RetrievalInputError

N_IMAGES = 15


@st.composite
def sorted_list(draw, per_image: bool, n_images: int = N_IMAGES, max_len: int = 25):
    "Image ids of one inverted list (sorted; unique when per_image) and a value per entry."
    if per_image:
        ids = sorted(draw(st.sets(st.integers(0, n_images - 1), max_size=min(max_len, n_images))))
    else:
        ids = sorted(draw(st.lists(st.integers(0, n_images - 1), max_size=max_len)))
    values = draw(st.lists(st.floats(0, 10, allow_nan=False, allow_subnormal=False), min_size=len(ids), max_size=len(ids)))
    return np.array(ids, dtype=np.int64), np.array(values)


scores_st = st.lists(st.floats(-5, 5, allow_nan=False, allow_subnormal=False), min_size=N_IMAGES, max_size=N_IMAGES).map(np.array)
weight_st = st.floats(0, 3, allow_nan=False, allow_subnormal=False)


@settings(max_examples=150, deadline=None)
@given(sorted_list(True), sorted_list(True), scores_st, weight_st)
def test_algorithm_2_vectorised_equals_loop(a, b, s, w):
    ref = merge_per_image_reference(a[0], a[1], b[0], b[1], s, w)
    assert np.array_equal(merge_lists([a[0], b[0]], [a[1], b[1]], s, w, per_image=True), ref.scores)
    assert np.array_equal(merge_kway_reference([a[0], b[0]], [a[1], b[1]], s, w, per_image=True).scores, ref.scores)


@settings(max_examples=150, deadline=None)
@given(sorted_list(False), sorted_list(False), scores_st, weight_st, st.booleans())
def test_algorithm_1_vectorised_equals_loop(a, b, s, w, unit_votes):
    v1, v2 = (None, None) if unit_votes else (a[1], b[1])
    ref = merge_per_descriptor_reference(a[0], b[0], s, w, v1, v2)
    assert np.array_equal(merge_lists([a[0], b[0]], [v1, v2], s, w), ref.scores)
    assert np.array_equal(merge_kway_reference([a[0], b[0]], [v1, v2], s, w).scores, ref.scores)


@st.composite
def k_lists(draw, per_image: bool):
    k = draw(st.integers(1, 5))
    lists = [draw(sorted_list(per_image)) for _ in range(k)]
    table = draw(st.lists(weight_st, min_size=2 ** k, max_size=2 ** k))
    return [x for x, _ in lists], [v for _, v in lists], np.array(table)


@settings(max_examples=150, deadline=None)
@given(st.booleans().flatmap(lambda p: st.tuples(st.just(p), k_lists(p))), scores_st)
def test_kway_vectorised_equals_loop(case, s):
    per_image, (ids, values, table) = case
    ref = merge_kway_reference(ids, values, s, table, per_image)
    assert np.array_equal(merge_lists(ids, values, s, table, per_image), ref.scores)
    # and with a plain number: 1 on one list, w on two or more
    assert np.array_equal(merge_lists(ids, values, s, 0.7, per_image), merge_kway_reference(ids, values, s, 0.7, per_image).scores)


@settings(max_examples=120, deadline=None)
@given(k_lists(False), scores_st)
def test_masks_by_brute_force(case, s):
    ids, _, _ = case
    for k, mask in enumerate(membership_masks(ids)):
        for e, image in enumerate(ids[k]):
            assert mask[e] == sum(1 << n for n, other in enumerate(ids) if image in set(other.tolist()))


@settings(max_examples=120, deadline=None)
@given(k_lists(False), st.integers(0, 3))
def test_w_one_is_b1_concatenation(case, seed):
    "w = 1: every entry of every list adds its value; integer values make the sums exact."
    ids, values, _ = case
    values = [np.round(v) for v in values]
    s0 = np.random.default_rng(seed).integers(-3, 3, N_IMAGES).astype(float)
    concatenated = s0 + np.bincount(np.concatenate(ids).astype(np.int64), weights=np.concatenate(values), minlength=N_IMAGES)
    assert np.array_equal(merge_lists(ids, values, s0, 1.0), concatenated)
    if len(ids) == 2:
        assert np.array_equal(merge_per_descriptor_reference(ids[0], ids[1], s0, 1.0, *values).scores, concatenated)


@settings(max_examples=120, deadline=None)
@given(sorted_list(True), sorted_list(True), sorted_list(False), sorted_list(False), weight_st)
def test_step_counts(a, b, c, d, w):
    "Algorithm 2: |A| + |B| - common images; Algorithm 1 and K-way: entries + common images; all <= 2(|A| + |B|)."
    s = np.zeros(N_IMAGES)
    common = len(np.intersect1d(a[0], b[0]))
    steps = merge_per_image_reference(a[0], a[1], b[0], b[1], s, w).steps
    assert steps == len(a[0]) + len(b[0]) - common
    walk = list(walk_per_image(a[0], a[1], b[0], b[1], s, w))
    assert walk[-1].step == steps and walk[-1].action == "done" and len(walk) == steps + 2
    common_d = len(np.intersect1d(c[0], d[0]))
    n = len(c[0]) + len(d[0])
    assert merge_per_descriptor_reference(c[0], d[0], s, w).steps == n + common_d <= 2 * max(n, 1)
    assert merge_kway_reference([c[0], d[0]], None, s, w).steps == n + common_d


@pytest.mark.parametrize("n", [10, 100, 1000, 10000])
def test_steps_linear_in_length(n):
    "On lists growing tenfold, steps stay between (|A|+|B|)/2 and 2(|A|+|B|); a naive scan would be |A||B|."
    rng = np.random.default_rng(n)
    a, b = np.sort(rng.choice(4 * n, n, replace=False)), np.sort(rng.choice(4 * n, n, replace=False))
    steps2 = merge_per_image_reference(a, np.ones(n), b, np.ones(n), np.zeros(4 * n), 0.5).steps
    c, d = np.sort(rng.integers(0, 4 * n, n)), np.sort(rng.integers(0, 4 * n, n))
    steps1 = merge_per_descriptor_reference(c, d, np.zeros(4 * n), 0.5).steps
    stepsk = merge_kway_reference([c, d, a], None, np.zeros(4 * n), 0.5).steps
    assert n <= steps2 <= 2 * n
    assert 2 * n <= steps1 <= 4 * n
    assert 3 * n <= stepsk <= 6 * n


@settings(max_examples=120, deadline=None)
@given(sorted_list(True), sorted_list(True), scores_st, weight_st)
def test_walk_final_scores(a, b, s, w):
    walk = list(walk_per_image(a[0], a[1], b[0], b[1], s, w))
    ref = merge_per_image_reference(a[0], a[1], b[0], b[1], s, w)
    assert np.array_equal(walk[-1].scores, ref.scores)
    assert walk[0].action == "start" and np.array_equal(walk[0].scores, ref.scores)  # the live view: last state
    assert all(0 <= st_.i <= len(a[0]) and 0 <= st_.j <= len(b[0]) for st_ in walk)


def test_walk_yields_running_scores():
    "Copying the scores at each step gives the running totals."
    snaps = [x.scores.copy() for x in walk_per_image([0, 2], [1, 1], [2, 3], [2, 1], np.zeros(4), 0.5)]
    assert [s.tolist() for s in snaps] == [[0, 0, 0, 0], [1, 0, 0, 0], [1, 0, 1.5, 0], [1, 0, 1.5, 1], [1, 0, 1.5, 1]]


@st.composite
def word_pairs(draw):
    n = draw(st.integers(1, 60))
    na, nb = draw(st.integers(1, 6)), draw(st.integers(1, 6))
    wa = draw(st.lists(st.integers(0, na - 1), min_size=n, max_size=n))
    wb = draw(st.lists(st.integers(0, nb - 1), min_size=n, max_size=n))
    return np.array(wa), np.array(wb), na, nb


@settings(max_examples=120, deadline=None)
@given(word_pairs())
def test_overlap_ratio_and_weight_by_sets(case):
    "Card(A∩B)/Card(A∪B) from Python sets; w = 1/(1+r) = |A∪B|/(|A|+|B|) in [1/2, 1]."
    wa, wb, na, nb = case
    ov = word_overlap(wa, wb, na, nb)
    for a in range(na):
        for b in range(nb):
            A, B = set(np.flatnonzero(wa == a)), set(np.flatnonzero(wb == b))
            r = len(A & B) / len(A | B) if A | B else 0.0
            assert ov.ratio(a, b)[0] == pytest.approx(r, abs=1e-15)
            w = bayes_weight(r)
            assert 0.5 <= w <= 1
            if A or B:
                assert w == pytest.approx(len(A | B) / (len(A) + len(B)), rel=1e-12)


@settings(max_examples=100, deadline=None)
@given(sorted_list(True), st.integers(2, 4))
def test_self_merge_is_b0(lst, k):
    "Merging a vocabulary with itself under the estimator (ratio 1) gives B0: exactly for K = 2, to rounding for K > 2."
    ids, values = lst
    table = bayes_weight_tables(np.ones((1, k, k)))[0]
    merged = merge_lists([ids] * k, [values] * k, np.zeros(N_IMAGES), table, per_image=True)
    b0 = merge_lists([ids], [values], np.zeros(N_IMAGES), per_image=True)
    if k == 2:
        assert np.array_equal(merged, b0)
    np.testing.assert_allclose(merged, b0, rtol=1e-12, atol=1e-12)


def _random_indexes(rng, k, per_image, n_img=25, n_desc=300, nw=5, nbits=10):
    img = rng.integers(0, n_img, n_desc)
    sigs = [rng.integers(0, 2, (n_desc, nbits)) for _ in range(k)]
    words = [rng.integers(0, nw, n_desc) for _ in range(k)]
    idx = [build_index(w, img, nw, n_img, per_image, None if per_image else s) for w, s in zip(words, sigs)]
    return [ix.with_values(rng.integers(1, 4, len(ix.images)).astype(float)) for ix in idx], words, img


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("per_image", [True, False])
def test_merged_scores_equals_per_feature_walks(k, per_image):
    rng = np.random.default_rng(10 * k + per_image)
    idx, _, _ = _random_indexes(rng, k, per_image)
    F, Q = 40, 6
    qw = [rng.integers(0, 5, F) for _ in range(k)]
    owner = rng.integers(0, Q, F)
    tables = rng.random((F, 2 ** k))
    qsig = [pack_codes(rng.integers(0, 2, (F, 10))) for _ in range(k)]
    for he in ([False] if per_image else [False, True]):
        expected = np.zeros((Q, idx[0].n_images))
        for f in range(F):                     # the features of each query, in order, each merged by merge_lists
            ids, vals = [], []
            for n, ix in enumerate(idx):
                lo, hi = ix.indptr[qw[n][f]], ix.indptr[qw[n][f] + 1]
                keep = np.arange(lo, hi)
                if he and hi > lo:
                    keep = keep[hamming_distances(qsig[n][f], ix.signatures[lo:hi])[0] <= 4]
                ids.append(ix.images[keep]); vals.append(ix.values[keep])
            expected[owner[f]] = merge_lists(ids, vals, expected[owner[f]], tables[f])
        he_args = dict(query_signatures=qsig, ht=4) if he else {}
        got = merged_scores(idx, qw, owner, Q, tables, queries_per_block=4, **he_args)
        assert np.array_equal(got, expected)


def test_merged_scores_b1_is_concatenated_bow():
    "w = 1 over a whole index: the dot product of concatenated BoW vectors (integer TF: exact)."
    rng = np.random.default_rng(3)
    n_img, nw = 20, 6
    img = rng.integers(0, n_img, 200)
    words = [rng.integers(0, nw, 200) for _ in range(2)]
    idx = [build_index(w, img, nw, n_img) for w in words]
    bow = np.hstack([np.bincount(img * nw + w, minlength=n_img * nw).reshape(n_img, nw) for w in words])
    F = 30
    qw = [rng.integers(0, nw, F) for _ in range(2)]
    owner = np.sort(rng.integers(0, 3, F))
    q = np.hstack([np.bincount(owner * nw + w, minlength=3 * nw).reshape(3, nw) for w in qw])
    assert np.array_equal(merged_scores(idx, qw, owner, 3, 1.0), (q @ bow.T).astype(float))
    assert np.array_equal(merged_scores(idx[:1], qw[:1], owner, 3), (q[:, :nw] @ bow[:, :nw].T).astype(float))


def test_rank_by_score_is_stable():
    assert rank_by_score([1.0, 3.0, 1.0, 3.0, 0.0]).tolist() == [1, 3, 0, 2, 4]


def test_inputs_not_modified():
    s = np.zeros(5)
    a, b = np.array([0, 1, 3]), np.array([1, 2])
    merge_lists([a, b], None, s, 0.5)
    merge_per_image_reference(a, np.ones(3), b, np.ones(2), s, 0.5)
    merge_kway_reference([a, b], None, s, 0.5)
    list(walk_per_image(a, np.ones(3), b, np.ones(2), s, 0.5))
    assert s.tolist() == [0] * 5 and a.tolist() == [0, 1, 3] and b.tolist() == [1, 2]


BAD = [
    (lambda: merge_per_image_reference([1, 0], [1, 1], [], [], np.zeros(3)), "`idx1` must be strictly increasing"),
    (lambda: merge_per_image_reference([0], [1], [2, 2], [1, 1], np.zeros(3)), "`idx2` must be strictly increasing"),
    (lambda: walk_per_image([1, 0], [1, 1], [], [], np.zeros(3)), "`idx1` must be strictly increasing"),  # at the call
    (lambda: merge_per_descriptor_reference([0], [-1], np.zeros(3)), "`idx2` must hold whole numbers from 0; found -1"),
    (lambda: merge_per_descriptor_reference([0], [1], np.zeros(3), votes1=[1, 2]), "`votes1` has 2 values"),
    (lambda: merge_per_descriptor_reference([0], [1], np.zeros((3, 1))), "`scores` must be a 1-D array"),
    (lambda: merge_per_descriptor_reference([0], [1], np.zeros(3), w=True), "`w` must be a finite real number >= 0"),
    (lambda: merge_per_descriptor_reference([0], [1], np.zeros(3), w=float("inf")), "`w` must be a finite real number"),
    (lambda: merge_lists([], None, np.zeros(3)), "`ids` must be a non-empty sequence"),
    (lambda: merge_lists([[0]], [None, None], np.zeros(3)), "`values` has 2 lists but `ids` has 1"),
    (lambda: merge_lists([[0], [1]], None, np.zeros(3), w=[1, 1, 1, -1]), "`w` must hold weights >= 0"),
    (lambda: weight_table(0.5, 0), "`n_lists` must be at least 1"),
    (lambda: build_index([0, 1], [0], 2, 1), "`image_ids` has 1 entries but `words` has 2"),
    (lambda: build_index([0], [0], 2, 1, per_image=False, signatures=[[1, 0], [0, 1]]), "`signatures` has 2 codes"),
    (lambda: word_overlap([0, 1], [0], 2, 2), "`words_b` has 1 descriptors"),
    (lambda: word_overlap([0], [0], 2, 2).ratio([0, 1], [0]), "`b` has 1 words but `a` has 2"),
    (lambda: bayes_weight_tables(np.ones((2, 2))), "`ratios` must be an (F, K, K) array"),
    (lambda: bayes_weight(-0.1), "`ratio` is Card"),
    (lambda: rank_by_score([[1.0]]), "`scores` must be a 1-D array"),
]


@pytest.mark.parametrize("call, message", BAD)
def test_bad_input(call, message):
    with pytest.raises(RetrievalInputError, match=None) as e:
        call()
    assert message in str(e.value)
