"""Time Bayes merging (Zheng et al. 2014, nbs/40_bayes.ipynb): the readable walks (Algorithms 1 and 2, K-way) against the
vectorised `merge_lists` on two lists of growing length, and the batch scorer `merged_scores` against a loop of
`merge_lists` over the query features of the digits experiment (300 queries, 256 words, K = 2).

Run: python benchmarks/bench_bayes.py   (best of 3, seconds per call)
"""
import time

import numpy as np

from timing import timed  # benchmarks/timing.py: a script's own folder is on sys.path
from retrieval_lit.bayes import (build_index, merge_kway_reference, merge_lists, merge_per_descriptor_reference,
                                 merge_per_image_reference, merged_scores)
from retrieval_lit.labs.bayes_digits import assign_words, digit_patches, tfidf_values, train_vocabulary


def lists(n, seed=0):
    rng = np.random.default_rng(seed)
    a, b = np.sort(rng.choice(4 * n, n, replace=False)), np.sort(rng.choice(4 * n, n, replace=False))
    c, d = np.sort(rng.integers(0, 4 * n, n)), np.sort(rng.integers(0, 4 * n, n))
    return a, b, c, d, np.zeros(4 * n)


def walks():
    print(f"{'|A|+|B|':>8} {'Alg.2 loop':>11} {'Alg.1 loop':>11} {'K-way loop':>11} {'merge_lists':>12} {'speed-up':>9}")
    for n in (1_000, 10_000, 100_000):
        a, b, c, d, s = lists(n)
        t2 = timed(lambda: merge_per_image_reference(a, np.ones(n), b, np.ones(n), s, 0.5))
        t1 = timed(lambda: merge_per_descriptor_reference(c, d, s, 0.5))
        tk = timed(lambda: merge_kway_reference([c, d], None, s, 0.5))
        tv = timed(lambda: merge_lists([c, d], None, s, 0.5))
        print(f"{2 * n:>8} {t2:>11.4f} {t1:>11.4f} {tk:>11.4f} {tv:>12.5f} {t1 / tv:>8.0f}x")


def batch():
    desc, image, labels = digit_patches()
    n = len(labels)
    words = [assign_words(desc, train_vocabulary(desc, 256, s)) for s in (0, 1)]
    idx = [build_index(w, image, 256, n) for w in words]
    idx = [ix.with_values(tfidf_values(ix)) for ix in idx]
    queries = np.arange(0, n, 6)
    feats = np.flatnonzero(np.isin(image, queries))
    owner = np.searchsorted(queries, image[feats])
    qw = [w[feats] for w in words]

    def loop():
        out = np.zeros((len(queries), n))
        for f in range(len(feats)):
            ids = [ix.postings(int(q[f]))[0] for ix, q in zip(idx, qw)]
            vals = [ix.postings(int(q[f]))[1] for ix, q in zip(idx, qw)]
            out[owner[f]] = merge_lists(ids, vals, out[owner[f]], 0.8, per_image=True)
        return out

    assert np.array_equal(loop(), merged_scores(idx, qw, owner, len(queries), 0.8))
    tl = timed(loop, 1)
    tb = timed(lambda: merged_scores(idx, qw, owner, len(queries), 0.8))
    print(f"\n{len(queries)} queries, {len(feats)} features, K = 2, 256 words: "
          f"loop of merge_lists {tl:.2f} s, merged_scores {tb:.3f} s ({tl / tb:.0f}x)")


if __name__ == "__main__":
    walks()
    batch()
