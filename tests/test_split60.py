"""The relevance contract is explicit (issue 36): what the engines ask of a label source is declared on
`relevance.Relevance` (`per_pair`, `same_class`, `labels()`), so a label source that is not chapter 02's
`LabelRelevance` runs through the compiled engine, the sharded run and the torch path with the same results; the
subclasses inherit the base class's documentation; no engine reads a source's `kind`. And the kernel chapters'
split helpers (chapters 60-62) give what they gave inline."""
import inspect
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from retrieval_lit import engine
from retrieval_lit.relevance import (GradeMatrix, LabelRelevance, Relevance, SparseGrades, make_relevance,
                                     relevance_from_labels, relevance_from_matrix)

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class OwnLabels(Relevance):
    "A label source written outside chapter 02: only the base class's contract, none of LabelRelevance's fields."
    ql: np.ndarray = None
    gl: np.ndarray = None
    by_class: bool = True

    per_pair: ClassVar[bool] = False

    @property
    def same_class(self) -> bool:
        return self.by_class

    def labels(self) -> tuple:
        return self.ql, self.gl

    def block(self, start, stop, items=None):
        g = self.gl if items is None else self.gl[items[0]:items[1]]
        if self.by_class:
            return (self.ql[start:stop, None] == g[None, :]).astype(np.uint8)
        return (self.ql[start:stop].astype(np.int64) @ g.T.astype(np.int64)).astype(np.uint8)

    def rows(self, start, stop):
        return replace(self, n_queries=stop - start, ql=self.ql[start:stop])

    def columns(self, start, stop):
        return replace(self, n_gallery=stop - start, gl=self.gl[start:stop])


def labels_case(rng, same_class: bool, nq: int, ng: int):
    "Chapter 02's label source and an OwnLabels holding the same encoded labels."
    if same_class:
        ql, gl = rng.integers(0, 4, nq), rng.integers(0, 4, ng)
    else:
        ql, gl = rng.integers(0, 2, (nq, 5)), rng.integers(0, 2, (ng, 5))
    rel = relevance_from_labels(ql, gl, nq, ng)
    q_enc, g_enc = rel.labels()
    return rel, OwnLabels(nq, ng, rel.max_grade, q_enc, g_enc, same_class)


# ---- the contract declared on the base class -------------------------------------------------------------------

def test_label_sources_say_how_and_give_their_labels():
    ids = relevance_from_labels(["b", "a"], ["a", "a", "b"], 2, 3)
    assert ids.per_pair is False and ids.same_class is True
    q, g = ids.labels()
    assert q.dtype == np.int64 and g.dtype == np.int64
    assert (q[:, None] == g[None, :]).astype(int).tolist() == [[0, 0, 1], [1, 1, 0]]   # b: item 2; a: items 0, 1
    hot = relevance_from_labels([[1, 0, 1]], [[1, 1, 1], [0, 1, 0]], 1, 2)
    assert hot.per_pair is False and hot.same_class is False
    q, g = hot.labels()
    assert q.tolist() == [[1, 0, 1]] and g.tolist() == [[1, 1, 1], [0, 1, 0]] and q.dtype == np.uint8


def test_the_gallery_labels_keep_their_identity_through_rows():
    "The engines remember what they make of the gallery labels by identity: rows() and repeated calls keep it."
    rel = relevance_from_labels([1, 2, 3], [3, 2, 1, 1], 3, 4)
    assert rel.labels()[1] is rel.labels()[1] is rel.rows(1, 3).labels()[1]
    assert rel.rows(1, 3).labels()[0].tolist() == rel.labels()[0][1:3].tolist()


def test_per_pair_sources_hold_no_labels():
    import scipy.sparse as sp
    for rel in (relevance_from_matrix([[0, 2]], 1, 2), make_relevance(1, 2, relation_types=[[1, 3]]),
                make_relevance(1, 2, relevance=sp.csr_array([[0, 2]]))):
        assert rel.per_pair is True and rel.same_class is False
        with pytest.raises(NotImplementedError, match="per pair"):
            rel.labels()


def test_a_label_source_must_say_how_its_grades_come():
    @dataclass(frozen=True)
    class Silent(Relevance):
        per_pair: ClassVar[bool] = False
    with pytest.raises(NotImplementedError, match="Silent"):
        Silent(1, 1, 1).same_class


def test_subclasses_inherit_the_documentation():
    "The subclasses' methods carry no restated docstrings: inspect (and the docs) show the base class's."
    for cls in (LabelRelevance, GradeMatrix, SparseGrades):
        for name in ("block", "grades_at", "grade_counts", "rows", "columns", "same_class", "labels"):
            own = cls.__dict__.get(name)
            if own is None:
                continue
            fn = own.fget if isinstance(own, property) else own
            if fn in (getattr(Relevance, name), getattr(Relevance, name).fget if isinstance(getattr(Relevance, name),
                                                                                             property) else None):
                continue                       # SparseGrades reuses the base method itself
            assert fn.__doc__ is None, f"{cls.__name__}.{name} restates its docstring"
            assert inspect.getdoc(getattr(cls, name)) == inspect.getdoc(getattr(Relevance, name))


def test_no_engine_reads_a_source_kind():
    for module in ("engine", "sharded", "torch_engine"):
        text = (ROOT / "retrieval_lit" / f"{module}.py").read_text()
        assert not re.search(r"\b(rel|relevance)\.kind\b", text), module
        assert not re.search(r"\b(rel|relevance)\.(query|gallery)_labels\b", text), module
        assert "LabelRelevance" not in text, module


# ---- a label source written elsewhere runs through every engine ------------------------------------------------

def assert_same_scan(a, b):
    for f in ("hist", "top_grades", "code_max"):
        x, y = getattr(a.summary, f), getattr(b.summary, f)
        assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), f
    for f in ("precision_sum", "discount_sum", "r_hits"):
        assert np.array_equal(getattr(a.sums, f), getattr(b.sums, f)), f


@pytest.mark.parametrize("same_class", [True, False])
@pytest.mark.parametrize("nq", [3, 40])           # 40 >= CLASS_SORT_MIN_QUERIES: the class-sorted kernels
def test_engine_reads_any_label_source(same_class, nq):
    rng = np.random.default_rng(nq + same_class)
    ng = 150
    qb, gb = rng.integers(0, 2, (nq, 16)), rng.integers(0, 2, (ng, 16))
    rel, own = labels_case(rng, same_class, nq, ng)
    assert not isinstance(own, LabelRelevance)
    for t in (0, 7):
        a = engine.scan(qb, gb, rel, stable_ranks=t, code_max=True, index_sums=True, chunk=17)
        b = engine.scan(qb, gb, own, stable_ranks=t, code_max=True, index_sums=True, chunk=17)
        assert_same_scan(a, b)
    # and both are the brute force: the grades of the nearest item first
    d = (qb[:, None, :] != gb[None, :, :]).sum(-1)
    grades = own.block(0, nq)
    order = np.argsort(d, axis=1, kind="stable")
    top = engine.scan(qb, gb, own, stable_ranks=-1).summary.top_grades
    assert np.array_equal(top, np.take_along_axis(grades, order, axis=1))


@pytest.mark.parametrize("same_class", [True, False])
def test_torch_device_job_reads_any_label_source(same_class):
    torch = pytest.importorskip("torch")
    from retrieval_lit.torch_engine import _DeviceJob
    rng = np.random.default_rng(5)
    rel, own = labels_case(rng, same_class, 6, 30)
    dev = torch.device("cpu")
    a = _DeviceJob(dev, None, rel, None, 30, None, "float64").grades(1, 5).numpy()
    b = _DeviceJob(dev, None, own, None, 30, None, "float64").grades(1, 5).numpy()
    assert np.array_equal(a, rel.block(1, 5)) and np.array_equal(b, rel.block(1, 5))


def test_sharded_scan_reads_any_label_source():
    distributed = pytest.importorskip("distributed")
    from retrieval_lit.sharded import scatter_gallery
    from retrieval_lit.validate import RetrievalInputError
    rng = np.random.default_rng(11)
    nq, ng = 9, 120
    qb, gb = rng.integers(0, 2, (nq, 16)), rng.integers(0, 2, (ng, 16))
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None) as c, \
            distributed.Client(c) as client:
        for same_class in (True, False):
            rel, own = labels_case(rng, same_class, nq, ng)
            gallery = scatter_gallery(gb, rel.labels()[1], shards=3, client=client)
            a = gallery.scan(qb, rel, stable_ranks=5, index_sums=True)
            b = gallery.scan(qb, own, stable_ranks=5, index_sums=True)
            assert_same_scan(a, b)
            assert_same_scan(a, engine.scan(qb, gb, rel, stable_ranks=5, index_sums=True))
        bare = scatter_gallery(gb, None, shards=2, client=client)
        with pytest.raises(RetrievalInputError, match="computes its grades from labels but the gallery was sent "
                                                      "without labels"):
            bare.scan(qb, own)
        with pytest.raises(RetrievalInputError, match="holds its grades per pair but the gallery was sent with"):
            gallery.scan(qb, relevance_from_matrix(rng.integers(0, 3, (nq, ng)), nq, ng))
