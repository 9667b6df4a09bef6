"""The arrays researchers hold: every public entry point takes numpy arrays, lists, pandas columns, PyTorch tensors
(with grad, on any device) and CuPy arrays, and labels that are strings or any hashable ids; each gives the numbers
the numpy arrays give. torch, pandas and cupy are not dependencies: their tests skip, saying so, where absent."""
import numpy as np
import pytest

from retrieval_lit import evaluate

rng = np.random.default_rng(0)
Q, G = rng.integers(0, 2, (20, 16)), rng.integers(0, 2, (200, 16))
QL, GL = rng.integers(0, 4, 20), rng.integers(0, 4, 200)
NAMES = ["map", "map@10", "p@5", "ndcg@10"]
REF = evaluate(Q, G, QL, GL, NAMES)


def same(r):
    for n in NAMES:
        np.testing.assert_array_equal(r.per_query[n], REF.per_query[n])


def test_lists():
    same(evaluate(Q.tolist(), G.tolist(), QL.tolist(), GL.tolist(), NAMES))


def test_string_and_hashable_ids():
    names = np.array(["cat", "dog", "cow", "emu"])
    same(evaluate(Q, G, names[QL], names[GL], NAMES))
    mixed = lambda a: np.array(["zero" if x == 0 else int(x) for x in a], dtype=object)   # ints and strings
    same(evaluate(Q, G, mixed(QL), mixed(GL), NAMES))


def test_a_column_of_ids_is_ids():
    same(evaluate(Q, G, QL[:, None], GL[:, None], NAMES))
    binary = evaluate(Q, G, (QL > 1)[:, None].astype(int), (GL > 1)[:, None].astype(int), ["map"])
    ids = evaluate(Q, G, (QL > 1).astype(int), (GL > 1).astype(int), ["map"])
    assert binary["map"] == ids["map"]      # {0,1} in one column: class ids 0 and 1, not "shares label 1"


def test_pandas_columns():
    pd = pytest.importorskip("pandas", reason="pandas is not installed: the pandas path is not tested here")
    same(evaluate(pd.DataFrame(Q), pd.DataFrame(G), pd.Series(QL), pd.Series(GL), NAMES))
    same(evaluate(Q, G, pd.Series(QL).astype("category"), pd.Series(GL).astype("category"), NAMES))
    same(evaluate(Q, G, pd.Series(QL).map(str), pd.Series(GL).map(str), NAMES))


def test_torch_tensors_with_grad():
    torch = pytest.importorskip("torch", reason="torch is not installed: the tensor path is not tested here")
    qt = torch.tensor(Q * 2 - 1, dtype=torch.float32, requires_grad=True)
    gt = torch.tensor(G * 2 - 1, dtype=torch.float32)
    same(evaluate(qt, gt, torch.tensor(QL), torch.tensor(GL), NAMES))
    assert qt.requires_grad and qt.grad is None            # the caller's tensor is untouched
    emb = torch.randn(5, 8, requires_grad=True)
    r = evaluate(query_embeddings=emb, gallery_embeddings=emb, query_labels=torch.arange(5), gallery_labels=torch.arange(5),
                 metrics=["p@1"])
    assert r["p@1"] == 1.0


def test_cupy_arrays():
    cp = pytest.importorskip("cupy", reason="cupy is not installed (it needs a GPU): the CuPy path is not tested here")
    same(evaluate(cp.asarray(Q), cp.asarray(G), cp.asarray(QL), cp.asarray(GL), NAMES))


def test_torch_is_not_imported_for_numpy_input():
    import subprocess
    import sys
    code = ("import sys, numpy as np; from retrieval_lit import evaluate; "
            "evaluate(np.zeros((1, 4)), np.zeros((2, 4)), [0], [0, 1], ['map']); "
            "assert not any(m in sys.modules for m in ('torch', 'pandas', 'cupy')), 'imported'")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
