"""The hashing lab (Ding, Li & Li 2018, eqs. 16, 20, 25): objectives against a pair-by-pair reference, gradients
against finite differences, the classic hashes' invariants, training determinism, bad input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from retrieval_lit.labs.hashing import (DIGIT_SUPERCLASS, dispersion2_loss, dispersion_loss, dsh_loss, init_mlp, itq, lsh,
                                   paper_margins, pca_directions, pca_rr, pcah, train_hash)
from retrieval_lit.validate import RetrievalInputError


# ---------- a pair-by-pair reference, written from the printed equations ----------
def reference_loss(U, labels, objective, m, r=(), superlabels=None, alpha=0.01, literal=False):
    "Mean over pairs i<j of the printed pair term, with the regulariser || |u_i| - 1 ||_1 + || |u_j| - 1 ||_1."
    n = len(U)
    total = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            d1 = float(np.abs(U[i] - U[j]).sum())
            d2 = float(((U[i] - U[j]) ** 2).sum())
            y = 0 if labels[i] == labels[j] else 1
            reg = alpha * (np.abs(np.abs(U[i]) - 1).sum() + np.abs(np.abs(U[j]) - 1).sum())
            if objective == 16:
                term = 0.5 * (1 - y) * d2 + 0.5 * y * max(m - d2, 0)
            elif objective == 20:
                r1, r2 = r
                term = 0.5 * (1 - y) * (max(r1 - d1, 0) + max(d1 - r2, 0)) + 0.5 * y * max(m - d1, 0)
            else:
                r1, r2, r3, r4 = r
                Y = 0 if superlabels[i] == superlabels[j] else 1
                in_b = (1 - Y) if literal else (1 - Y) * y
                term = (0.5 * (1 - y) * (max(r1 - d1, 0) + max(d1 - r2, 0))
                        + 0.5 * in_b * (max(r3 - d1, 0) + max(d1 - r4, 0)) + 0.5 * Y * max(m - d1, 0))
            total += term + reg
    return total / (n * (n - 1) / 2)


def numeric_gradient(f, U, eps=1e-6):
    g = np.zeros_like(U)
    for idx in np.ndindex(U.shape):
        Up, Um = U.copy(), U.copy()
        Up[idx] += eps
        Um[idx] -= eps
        g[idx] = (f(Up) - f(Um)) / (2 * eps)
    return g


@st.composite
def batches(draw):
    n, K = draw(st.integers(2, 7)), draw(st.integers(1, 8))
    U = draw(arrays(np.float64, (n, K), elements=st.floats(-3, 3, allow_nan=False)))
    labels = draw(arrays(np.int64, n, elements=st.integers(0, 3)))
    return U, labels, K


def objectives(K, labels):
    sup = labels // 2                   # classes {0,1} -> superclass 0, {2,3} -> 1
    one, two = paper_margins(K), paper_margins(K, 2)
    return {
        "16": (lambda U: dsh_loss(U, labels, 2 * K), lambda U: reference_loss(U, labels, 16, 2 * K)),
        "20": (lambda U: dispersion_loss(U, labels, **one),
               lambda U: reference_loss(U, labels, 20, one["m"], (one["r1"], one["r2"]))),
        "25": (lambda U: dispersion2_loss(U, labels, sup, **two),
               lambda U: reference_loss(U, labels, 25, two["m"], (two["r1"], two["r2"], two["r3"], two["r4"]), sup)),
        "25 literal": (lambda U: dispersion2_loss(U, labels, sup, **two, literal=True),
                       lambda U: reference_loss(U, labels, 25, two["m"], (two["r1"], two["r2"], two["r3"], two["r4"]),
                                                sup, literal=True)),
    }


@given(batches())
@settings(max_examples=150, deadline=None)
def test_losses_equal_pairwise_reference(batch):
    U, labels, K = batch
    U0 = U.copy()
    for name, (fast, ref) in objectives(K, labels).items():
        assert fast(U)[0] == pytest.approx(ref(U), rel=1e-10, abs=1e-10), name
    assert np.array_equal(U, U0)            # the caller's outputs are not modified


@given(st.integers(0, 10_000), st.integers(2, 7), st.integers(1, 7))
@settings(max_examples=60, deadline=None)
def test_gradients_match_finite_differences(seed, n, K):
    rng = np.random.default_rng(seed)
    U = rng.standard_normal((n, K)) * 2          # random points: almost surely away from every kink
    labels = rng.integers(0, 4, n)
    for name, (fast, _) in objectives(K, labels).items():
        _, g = fast(U)
        num = numeric_gradient(lambda V: fast(V)[0], U)
        assert np.allclose(g, num, atol=1e-6), name


def test_hand_values():
    U = np.array([[1.0, 1, 1, 1, 1, 1], [1.0, 1, 1, 1, 1, -1]])     # D1 = 2, D2 = 4, |u| = 1
    assert dispersion_loss(U, [0, 0], 12, 1, 2)[0] == 0.0
    assert dispersion_loss(U, [0, 1], 12, 1, 2)[0] == 5.0
    assert dsh_loss(U, [0, 0], 12)[0] == 2.0
    assert dsh_loss(U, [0, 1], 12)[0] == 4.0
    assert dispersion2_loss(U, [0, 0], [0, 0], m=12, r1=0.5, r2=1, r3=1, r4=2)[0] == 0.5
    assert dispersion2_loss(U, [0, 0], [0, 0], m=12, r1=0.5, r2=1, r3=1, r4=2, literal=True)[0] == 0.5
    assert dispersion2_loss(U, [0, 1], [0, 1], m=12, r1=0.5, r2=1, r3=1, r4=2)[0] == 5.0
    assert dsh_loss(2 * U, [0, 0], 12)[0] == pytest.approx(8.0 + 0.01 * 12)   # regulariser: |2| - 1 = 1 per entry


def test_paper_margins():
    assert paper_margins(12) == {"m": 24, "r1": 2.0, "r2": 4.0}
    assert paper_margins(24, 2) == {"m": 48, "r1": 2.0, "r2": 4.0, "r3": 4.0, "r4": 8.0}


@pytest.mark.parametrize("call, message", [
    (lambda: dsh_loss(np.zeros((3, 2)), [0, 1], 4), "`labels` has 2 entries but `U` has 3 rows"),
    (lambda: dsh_loss(np.zeros((1, 2)), [0], 4), "`U` needs at least 2 rows"),
    (lambda: dsh_loss(np.zeros(4), [0, 1, 1, 0], 4), "`U` must be a 2-D array"),
    (lambda: dispersion_loss([[np.nan, 0], [0, 0]], [0, 1], 4, 1, 2), "`U` contains nan"),
    (lambda: dispersion2_loss(np.zeros((2, 2)), [0, 0], [0, 1], m=4, r1=1, r2=2, r3=2, r4=3), "`superlabels` must give every class one superclass"),
    (lambda: lsh(np.zeros((5, 3)), 4), "`nbits` must be at most 3"),
    (lambda: pcah(np.zeros(5), 1), "`X` must be a 2-D array"),
    (lambda: paper_margins(12, 3), "`levels` must be at most 2"),
    (lambda: train_hash(np.zeros((5, 3)), lambda U, i: dsh_loss(U, i, 4), 2, "x", epochs=0), "`epochs` must be at least 1"),
])
def test_bad_input(call, message):
    with pytest.raises(RetrievalInputError, match=message):
        call()


# ---------- classic hashes ----------
@pytest.fixture(scope="module")
def digits():
    from retrieval_lit.data import load_digits_split
    return load_digits_split()


def test_pca_directions_orthonormal_and_signed(digits):
    V = pca_directions(digits.gallery_features, 12)
    assert np.allclose(V.T @ V, np.eye(12), atol=1e-12)
    assert (V[np.argmax(np.abs(V), axis=0), np.arange(12)] > 0).all()
    X = digits.gallery_features - digits.gallery_features.mean(0)
    var = ((X @ V) ** 2).sum(0)
    assert (np.diff(var) <= 1e-6).all()                   # variance decreasing along the components


def test_itq_lowers_quantisation_error(digits):
    X = digits.gallery_features

    def err(h):
        V = h.outputs(X)
        return ((np.where(V >= 0, 1.0, -1.0) - V) ** 2).sum()
    errs = [err(itq(X, 16, n_iter=n)) for n in (0, 1, 3, 10, 50)]
    assert all(a >= b - 1e-6 for a, b in zip(errs, errs[1:]))
    assert errs[-1] < errs[0]
    R = np.linalg.lstsq(pca_directions(X, 16), itq(X, 16).W, rcond=None)[0]
    assert np.allclose(R.T @ R, np.eye(16), atol=1e-8)    # ITQ = PCA followed by an orthogonal rotation


def test_linear_hash_codes(digits):
    X = digits.gallery_features
    for h in (lsh(X, 12), pcah(X, 12), pca_rr(X, 12), itq(X, 12)):
        c = h.codes(X)
        assert c.shape == (len(X), 12) and set(np.unique(c)) <= {-1, 1}
        assert np.array_equal(c, h.codes(X.copy()))
    assert np.array_equal(lsh(X, 8, seed=3).codes(X), lsh(X, 8, seed=3).codes(X))
    assert not np.array_equal(lsh(X, 8, seed=3).codes(X), lsh(X, 8, seed=4).codes(X))
    h = pcah(X, 4)
    assert (h.codes(h.mean[None, :]) == 1).all()          # sign(0) -> +1


# ---------- the network ----------
def test_backprop_matches_finite_differences(digits):
    X, y = digits.gallery_features[:9], digits.gallery_labels[:9]
    net = init_mlp(digits.gallery_features, 5, hidden=4, seed=2)
    f = lambda U: dispersion2_loss(U, y, DIGIT_SUPERCLASS[y], **paper_margins(5, 2))
    _, grads = net.loss_and_grads(X, f)
    for k, p in net.params.items():
        num = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            old = p[idx]
            p[idx] = old + 1e-6
            lp = net.loss_and_grads(X, f)[0]
            p[idx] = old - 1e-6
            lm = net.loss_and_grads(X, f)[0]
            p[idx] = old
            num[idx] = (lp - lm) / 2e-6
        assert np.allclose(grads[k], num, atol=1e-7), k


def test_training_is_seeded_and_lowers_the_loss(digits):
    X, y = digits.gallery_features[:400], digits.gallery_labels[:400]
    loss = lambda U, i: dispersion_loss(U, y[i], **paper_margins(8))
    a = train_hash(X, loss, 8, "a", epochs=4, seed=5)
    b = train_hash(X, loss, 8, "b", epochs=4, seed=5)
    c = train_hash(X, loss, 8, "c", epochs=4, seed=6)
    assert np.array_equal(a.codes(X), b.codes(X)) and np.array_equal(a.losses, b.losses)
    assert not np.array_equal(a.losses, c.losses)
    assert a.losses[-1] < a.losses[0]
    assert a.codes(X).dtype == np.int8 and set(np.unique(a.codes(X))) <= {-1, 1}


def test_superclasses_partition_the_digits():
    assert sorted(DIGIT_SUPERCLASS.tolist()) == [0, 0, 0, 0, 1, 1, 1, 2, 2, 2]
