"""The engine's structure (issues 41 and 42): one kernel per pass, specialised by the kind of labels at compile time;
named structures for the kernels' arguments; one signature per kernel whatever the caller's arrays; only what a
call needs compiled. Each merged kernel is held to `ranking.summarize`, the numpy reference, for every kind of
labels it serves."""
import ast
import inspect
from fractions import Fraction
from pathlib import Path

import numba
import numpy as np
import pytest
from numba.core.event import install_recorder

from retrieval_lit import engine, ranking
from retrieval_lit.hamming import PackedCodes, pack_codes
from retrieval_lit.ranking import group_starts
from retrieval_lit.relevance import make_ignore, relevance_from_labels, relevance_from_matrix

ROOT = Path(__file__).resolve().parents[1]
KERNELS = {"_hist_kernel", "_unhist_kernel", "_top_kernel", "_sums_kernel", "_code_max_kernel"}


def positional(node) -> int:
    return len(node.args.posonlyargs) + len(node.args.args)


@pytest.mark.parametrize("module", ["engine", "sharded"])
def test_no_function_takes_more_than_eight_positional_parameters(module):
    tree = ast.parse((ROOT / "retrieval_lit" / f"{module}.py").read_text())
    over = [(n.name if hasattr(n, "name") else "lambda", positional(n)) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and positional(n) > 8]
    assert over == []


def test_one_kernel_per_pass():
    "The compiled kernels are one per pass; none is a twin for class ids (the kind of labels is a type)."
    kernels = {name for name, f in vars(engine).items() if isinstance(f, numba.core.registry.CPUDispatcher)
               and name.endswith("_kernel")}
    assert kernels == KERNELS
    assert not [name for name in vars(engine) if name.startswith("_class_") and name.endswith("_kernel")]


def test_kernels_take_named_structures():
    "Codes, labels and visits come as named tuples; what a kernel writes comes as plain arrays (see chapter 60)."
    params = {name: list(inspect.signature(getattr(engine, name).py_func).parameters) for name in KERNELS}
    assert params["_top_kernel"] == ["codes", "labels", "visit", "hist", "top", "width"]
    assert params["_sums_kernel"] == ["codes", "labels", "visit", "hist", "ap", "dcg", "hits", "width"]
    assert params["_hist_kernel"] == ["codes", "labels", "hist", "width"]


def tied(rng, n_q, n_g, nbits, kind):
    "Codes with many ties and repeated codes, and a relevance of the given kind."
    qb, gb = rng.integers(0, 2, (n_q, nbits)), rng.integers(0, 2, (n_g, nbits))
    gb[rng.integers(0, n_g, n_g // 3)] = gb[0]
    qb[0] = gb[0]
    if kind == "class":
        return qb, gb, relevance_from_labels(rng.integers(0, 4, n_q), rng.integers(0, 4, n_g), n_q, n_g)
    if kind == "multihot":
        return qb, gb, relevance_from_labels(rng.integers(0, 2, (n_q, 6)), rng.integers(0, 2, (n_g, 6)), n_q, n_g)
    if kind == "multihot2":
        return qb, gb, relevance_from_labels(rng.integers(0, 2, (n_q, 70)), rng.integers(0, 2, (n_g, 70)), n_q, n_g)
    return qb, gb, relevance_from_matrix(rng.integers(0, 4, (n_q, n_g)), n_q, n_g)


def exact_sums(top_grades, n_kept):
    "Per query: the precision sum (a Fraction, rounded once) and the hits within R, from the grades in index order."
    out = []
    for row, kept in zip(top_grades, n_kept):
        ranks = np.flatnonzero(row[:kept] > 0) + 1
        out.append((float(sum((Fraction(k, int(r)) for k, r in enumerate(ranks, 1)), Fraction(0))),
                    int((row[:len(ranks)] > 0).sum())))
    return out


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("kind", ["class", "multihot", "multihot2", "matrix"])
@pytest.mark.parametrize("nbits", [7, 64, 100, 300])
@pytest.mark.parametrize("removed", [False, True])
def test_merged_kernels_equal_the_reference(grouped, kind, nbits, removed):
    """Each pass, with the gallery grouped by class or the labels compared pair by pair (class ids take either; other
    kinds always take pairs), equals `ranking.summarize`: the histogram, the top in index order (its own offsets
    and given ones), the index sums (exact), with and without removed items."""
    rng = np.random.default_rng(nbits + 7 * len(kind) + grouped)
    qb, gb, rel = tied(rng, 9, 240, nbits, kind)
    ig = make_ignore(9, 240, rng.random((9, 240)) < 0.2, rng.integers(-1, 240, 9)) if removed else None
    ref = ranking.summarize(qb, gb, rel, stable_ranks=-1, ignore=ig)
    q, g, n_grades = pack_codes(qb), pack_codes(gb), rel.max_grade + 1
    assert np.array_equal(engine.hist_pass(q, g, rel, n_grades, ig, grouped=grouped), ref.hist)
    h, top = engine._top_walk(q, g, rel, n_grades, 240, ig, None, grouped)
    assert np.array_equal(h, ref.hist) and np.array_equal(top, ref.top_grades)
    before = group_starts(ref.hist.sum(-1))
    assert np.array_equal(engine.top_pass(q, g, rel, n_grades, before, 37, ig, grouped=grouped), ref.top_grades[:, :37])
    rh = ref.hist[:, :, 1:].sum(-1)
    offsets = engine.Offsets(group_starts(ref.hist.sum(-1)), group_starts(rh), rh.sum(-1), 240)
    ap, dcg, hits = engine.sums_pass(q, g, rel, n_grades, offsets, ig, grouped=grouped)
    kept = 240 - (ig.counts if ig is not None else np.zeros(9, int))
    assert [(float(a), int(b)) for a, b in zip(engine._finish_pairs(ap), hits)] == exact_sums(ref.top_grades, kept)
    one = engine.scan(qb, gb, rel, stable_ranks=-1, index_sums=True, ignore=ig)      # the single process's one walk
    assert np.array_equal(one.summary.hist, ref.hist)
    assert np.array_equal(one.sums.precision_sum, engine._finish_pairs(ap))
    assert np.array_equal(one.sums.discount_sum, engine._finish_pairs(dcg))


@pytest.mark.parametrize("kind", ["class", "matrix"])
def test_a_gallery_in_segments_gives_the_same_sums(kind, monkeypatch):
    "A gallery beyond one walk's records goes in segments (WALK_ITEMS forces it here): the sums are bit for bit."
    rng = np.random.default_rng(5)
    qb, gb, rel = tied(rng, 40, 500, 64, kind)
    ig = make_ignore(40, 500, rng.random((40, 500)) < 0.1, rng.integers(-1, 500, 40))
    whole = engine.scan(qb, gb, rel, stable_ranks=20, index_sums=True, ignore=ig)
    monkeypatch.setattr(engine, "WALK_ITEMS", 37)
    parts = engine.scan(qb, gb, rel, stable_ranks=20, index_sums=True, ignore=ig)
    for f in ("precision_sum", "discount_sum", "r_hits"):
        assert np.array_equal(getattr(whole.sums, f), getattr(parts.sums, f)), f
    assert np.array_equal(whole.summary.hist, parts.summary.hist)
    assert np.array_equal(whole.summary.top_grades, parts.summary.top_grades)


def signatures() -> dict:
    return {name: len(getattr(engine, name).signatures) for name in KERNELS}


def test_read_only_inputs_compile_nothing_new():
    """What a Dask worker holds after deserialising is read-only: the same run on read-only codes and labels (and
    unaligned-free copies of other dtypes) adds no signature to any kernel."""
    rng = np.random.default_rng(9)
    qb, gb = rng.integers(0, 2, (40, 64)), rng.integers(0, 2, (300, 64))
    ql, gl = rng.integers(0, 3, 40), rng.integers(0, 3, 300)
    args = dict(stable_ranks=10, code_max=True, index_sums=True, ignore=make_ignore(40, 300, [[1, 2]] * 40))
    engine.scan(qb, gb, relevance_from_labels(ql, gl, 40, 300), **args)
    before = signatures()

    def frozen(a, dtype):
        b = np.frombuffer(np.asarray(a, dtype=dtype).tobytes(), dtype=dtype).reshape(np.shape(a))
        assert not b.flags.writeable
        return b
    q, g = pack_codes(qb), pack_codes(gb)
    q_ro, g_ro = PackedCodes(frozen(q.words, np.uint64), q.nbits), PackedCodes(frozen(g.words, np.uint64), g.nbits)
    rel_ro = relevance_from_labels(frozen(ql, np.int32), frozen(gl, np.int16), 40, 300)
    engine.scan(q_ro, g_ro, rel_ro, **args)
    assert signatures() == before


@pytest.mark.parametrize("kind", ["class", "multihot", "matrix"])
def test_prepared_kernels_leave_nothing_to_compile(kind):
    "After `prepare_kernels` for a run's kinds, the run itself compiles nothing (it loads or reuses only)."
    rng = np.random.default_rng(11)
    qb, gb, rel = tied(rng, 33, 200, 100, kind)
    passes = engine.Passes(top=True, sums=True, code_max=True, removed=True, grouped=True)
    engine.prepare_kernels(100, rel, passes)
    ig = make_ignore(33, 200, rng.random((33, 200)) < 0.1)
    q, g, n_grades = pack_codes(qb), pack_codes(gb), rel.max_grade + 1
    with install_recorder("numba:compile") as compiled:
        h = engine.hist_pass(q, g, rel, n_grades, ig, grouped=True)
        engine.top_pass(q, g, rel, n_grades, group_starts(h.sum(-1)), 5, ig, grouped=True)
        rh = h[:, :, 1:].sum(-1)
        offsets = engine.Offsets(group_starts(h.sum(-1)), group_starts(rh), rh.sum(-1), 200)
        engine.sums_pass(q, g, rel, n_grades, offsets, ig, grouped=True)
        engine.code_max_pass(q, *engine.distinct_codes(g), (ig.indptr, g.words[ig.indices]))
    assert [e for e in compiled.buffer if e[1].data["dispatcher"].py_func.__name__ in KERNELS] == []


def test_a_call_compiles_only_the_kernels_of_its_path():
    """A histogram-only call, in a fresh process, compiles or loads the histogram kernel and no other (nothing
    eager: the top, sums and code_max kernels wait for a call that needs them)."""
    import subprocess
    import sys
    code = ("import numpy as np; from retrieval_lit import engine; from retrieval_lit.relevance import "
            "relevance_from_labels as L; r = np.random.default_rng(0); "
            "engine.summarize(r.integers(0, 2, (40, 64)), r.integers(0, 2, (300, 64)), "
            "L(r.integers(0, 3, 40), r.integers(0, 3, 300), 40, 300)); "
            f"print(sorted(n for n in {sorted(KERNELS)!r} if getattr(engine, n).signatures))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    assert out.stdout.split("\n")[-2] == "['_hist_kernel']"
