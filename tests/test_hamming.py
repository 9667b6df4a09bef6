"""Properties of Hamming space: eq. 1, packing round trips, distances against a direct computation."""
import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from retrieval_lit.hamming import (eq1_cosine, eq1_normalized_euclidean, hamming_distances, iter_distance_blocks,
                                   n_words, pack_codes, to_bits, to_pm1)
from retrieval_lit.ranking import counting_sort_order, stable_order

bits_2d = st.integers(1, 300).flatmap(
    lambda k: st.integers(1, 12).flatmap(lambda n: arrays(np.uint8, (n, k), elements=st.integers(0, 1))))


@given(st.integers(1, 300).flatmap(lambda k: arrays(np.int8, (2, k), elements=st.sampled_from([-1, 1]))))
@settings(max_examples=300, deadline=None)
def test_eq1_identity_on_pm1_codes(h):
    d_h = int(np.sum(h[0] != h[1]))
    assert abs(eq1_normalized_euclidean(h[0], h[1]) - d_h) < 1e-9 * max(1, h.shape[1])
    assert abs(eq1_cosine(h[0], h[1]) - d_h) < 1e-9 * max(1, h.shape[1])


@given(bits_2d)
@settings(max_examples=300, deadline=None)
def test_pack_unpack_round_trip(bits):
    p = pack_codes(bits)
    assert p.words.dtype == np.uint64 and p.words.shape == (bits.shape[0], n_words(bits.shape[1]))
    assert np.array_equal(p.unpack(), bits)
    assert np.array_equal(pack_codes(to_pm1(bits)).words, p.words)       # either alphabet packs the same
    assert np.array_equal(to_bits(to_pm1(bits)), bits)
    # the documented layout: bit j is bit j % 64 of word j // 64
    for j in range(bits.shape[1]):
        assert np.array_equal((p.words[:, j // 64] >> np.uint64(j % 64)) & np.uint64(1), bits[:, j])


@given(st.integers(1, 200).flatmap(lambda k: st.tuples(
    arrays(np.uint8, st.tuples(st.integers(1, 9), st.just(k)), elements=st.integers(0, 1)),
    arrays(np.uint8, st.tuples(st.integers(1, 40), st.just(k)), elements=st.integers(0, 1)))),
    st.integers(1, 400))
@settings(max_examples=300, deadline=None)
def test_distances_against_direct_count(qg, block_bytes):
    qb, gb = qg
    direct = (qb[:, None, :] != gb[None, :, :]).sum(-1)
    assert np.array_equal(hamming_distances(qb, gb, max_block_bytes=block_bytes), direct)
    dot = (qb.shape[1] - to_pm1(qb).astype(int) @ to_pm1(gb).astype(int).T) // 2
    assert np.array_equal(direct, dot)
    rows = sorted((s, e) for s, e, _ in iter_distance_blocks(qb, gb, block_bytes))
    assert rows[0][0] == 0 and rows[-1][1] == len(qb)


@given(st.integers(1, 64).flatmap(lambda k: st.tuples(st.just(k), arrays(np.uint16, st.integers(1, 200), elements=st.integers(0, k)))))
@settings(max_examples=200, deadline=None)
def test_stable_order_is_the_counting_sort(kd):
    k, d = kd
    order = stable_order(d)
    assert np.array_equal(order, counting_sort_order(d, k))
    assert np.all(np.diff(d[order].astype(int)) >= 0)
    same = np.diff(d[order].astype(int)) == 0
    assert np.all(np.diff(order)[same] > 0)      # ties in gallery index order
