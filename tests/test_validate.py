"""Table-driven bad inputs: every one must raise RetrievalInputError naming the argument and the problem."""
import numpy as np
import pytest

from retrieval_lit import evaluate, pack_codes, hamming_distances, RetrievalInputError
from retrieval_lit.hamming import PackedCodes
from retrieval_lit.metrics import Conventions
from retrieval_lit.relevance import make_relevance

Q = np.array([[0, 1, 1, 0], [1, 1, 0, 0]])
G = np.array([[0, 1, 1, 0], [1, 0, 0, 0], [1, 1, 1, 1]])
QL, GL = np.array([0, 1]), np.array([0, 1, 1])


def ev(**kw):
    args = dict(query_codes=Q, gallery_codes=G, query_labels=QL, gallery_labels=GL, metrics=["count_only"])
    args.update(kw)
    q, g = args.pop("query_codes"), args.pop("gallery_codes")
    return evaluate(q, g, **args)


CASES = [
    ("1-D codes", lambda: pack_codes(np.array([0, 1, 1]), "query_codes"), "`query_codes` must be a 2-D array (items x bits), got shape (3,)"),
    ("3-D codes", lambda: pack_codes(np.zeros((2, 2, 2)), "gallery_codes"), "`gallery_codes` must be a 2-D array"),
    ("empty codes", lambda: pack_codes(np.zeros((0, 8)), "gallery_codes"), "`gallery_codes` is empty"),
    ("zero-bit codes", lambda: pack_codes(np.zeros((3, 0)), "query_codes"), "`query_codes` has no columns"),
    ("string codes", lambda: pack_codes(np.array([["a", "b"]]), "query_codes"), "`query_codes` must hold numbers, got dtype <U1"),
    ("NaN in codes", lambda: pack_codes(np.array([[0.0, np.nan]]), "query_codes"), "`query_codes` contains nan at index (0, 1)"),
    ("inf in codes", lambda: pack_codes(np.array([[1.0, np.inf]]), "gallery_codes"), "`gallery_codes` contains inf"),
    ("value 2 in codes", lambda: pack_codes(np.array([[0, 2]]), "query_codes"), "`query_codes` must hold only {0,1} or {-1,+1} values; found 2"),
    ("sign(0) in +-1 codes", lambda: pack_codes(np.array([[-1, 0, 1]]), "query_codes"), "`query_codes` mixes the alphabets"),
    ("complex codes", lambda: pack_codes(np.array([[1j, 0]]), "query_codes"), "`query_codes` must hold real numbers"),
    ("None codes", lambda: pack_codes(None, "query_codes"), "`query_codes` is required, got None"),
    ("ragged codes", lambda: pack_codes([[0, 1], [1]], "query_codes"), "`query_codes` could not be read as an array"),
    ("mismatched lengths", lambda: hamming_distances(np.zeros((2, 8)), np.zeros((2, 9))), "`gallery_codes` has 9-bit codes but `query_codes` has 8-bit codes"),
    ("labels too short", lambda: ev(query_labels=np.array([0])), "`query_labels` has 1 rows but `query_codes` has 2 items"),
    ("labels of two kinds", lambda: ev(gallery_labels=np.array([[1, 0], [0, 1], [1, 1]])), "`gallery_labels` are multi-hot (2-D) but `query_labels` are class ids (1-D)"),
    ("non-integral class ids", lambda: ev(query_labels=np.array([0.5, 1.0])), "`query_labels` class ids must be integers"),
    ("multi-hot not 0/1", lambda: ev(query_labels=np.array([[2, 0], [0, 1]]), gallery_labels=np.array([[1, 0], [0, 1], [1, 1]])), "`query_labels` multi-hot labels must hold only 0 and 1; found 2"),
    ("NaN label", lambda: ev(gallery_labels=np.array([0.0, np.nan, 1.0])), "`gallery_labels` contains nan"),
    ("multi-hot width mismatch", lambda: ev(query_labels=np.array([[1, 0], [0, 1]]), gallery_labels=np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]])), "`gallery_labels` have 3 label columns but `query_labels` have 2"),
    ("two relevance sources", lambda: ev(relevance=np.ones((2, 3))), "`relevance` needs exactly one source"),
    ("missing gallery labels", lambda: ev(gallery_labels=None), "`gallery_labels` is required"),
    ("relevance wrong shape", lambda: ev(query_labels=None, gallery_labels=None, relevance=np.ones((3, 2))), "`relevance` must have shape (2, 3)"),
    ("negative grade", lambda: ev(query_labels=None, gallery_labels=None, relevance=-np.ones((2, 3))), "`relevance` must hold whole numbers from 0 to 255; found -1"),
    ("relation type 4", lambda: ev(query_labels=None, gallery_labels=None, relation_types=np.full((2, 3), 4)), "`relation_types` relation types must be 1, 2 or 3"),
    ("unknown tie mode", lambda: ev(ties="random"), "`ties` must be one of 'expected', 'optimistic', 'pessimistic', 'index'; got 'random'"),
    ("unknown AP denominator", lambda: ev(ap_denominator="R"), "`ap_denominator` must be one of"),
    ("unknown empty policy", lambda: ev(empty="nan"), "`empty` must be one of"),
    ("unknown gain", lambda: ev(gain="log"), "`gain` must be one of"),
    ("persistence out of range", lambda: ev(rbp_persistence=1.5), "`rbp_persistence` must lie in (0, 1), got 1.5"),
    ("empty metric list", lambda: ev(metrics=[]), "`metrics` is empty"),
    ("unknown metric", lambda: ev(metrics=["nope@3"]), "`metrics` has an unknown metric name 'nope@3'; known:"),
    ("non-string metric", lambda: ev(metrics=[3]), "`metrics` entries must be metric names (strings), got 3"),
    ("unknown engine", lambda: ev(engine="gpu"), "`engine` must be one of"),
    ("packed words wrong dtype", lambda: PackedCodes(np.zeros((2, 1), dtype=np.int64), 8), "`words` must have dtype uint64"),
    ("packed words wrong width", lambda: PackedCodes(np.zeros((2, 2), dtype=np.uint64), 8), "`words` must have 1 words per code for 8 bits, got 2"),
    ("packed padding set", lambda: PackedCodes(np.full((1, 1), 1 << 9, dtype=np.uint64), 8), "`words` has bits set past bit 8"),
    ("bad convention name", lambda: Conventions.make(tie="index"), "`tie` is not a convention"),
    ("no relevance at all", lambda: make_relevance(2, 3), "`relevance` needs exactly one source"),
    # issue 13: each of these crashed or was read wrongly before
    ("metrics None", lambda: ev(metrics=None), "`metrics` must be a metric name or a list of names"),
    ("metrics a number", lambda: ev(metrics=5), "`metrics` must be a metric name or a list of names"),
    ("bounds a string", lambda: ev(metrics=["map"], bounds="no"), "`bounds` must be True or False, got 'no'"),
    ("progress a string (numpy)", lambda: ev(metrics=["map"], progress="x", engine="numpy"), "`progress` must be True or False or None"),
    ("progress a string (numba)", lambda: ev(metrics=["map"], progress="x", engine="numba"), "`progress` must be True or False or None"),
    ("cutoff 2**63", lambda: ev(metrics=["p@9223372036854775808"]), "`metrics` 'p@9223372036854775808': the cutoff must be at most 2**53"),
    ("recall cutoff 10**20", lambda: ev(metrics=["recall@100000000000000000000"]), "the cutoff must be at most 2**53"),
    ("radius 2**63", lambda: ev(metrics=["p@r9223372036854775808"]), "the radius must be at most 2**53"),
    ("mlgap radius 2**63", lambda: ev(metrics=["mlgap@9223372036854775808"]), "the radius must be at most 2**53"),
    ("packed nbits a float", lambda: PackedCodes(np.zeros((1, 1), dtype=np.uint64), 16.9), "`nbits` must be a whole number, got 16.9"),
    ("empty packed gallery", lambda: ev(gallery_codes=PackedCodes(np.zeros((0, 1), dtype=np.uint64), 4), query_labels=None,
                                        gallery_labels=None, relation_types=np.ones((2, 0))), "`gallery_codes` is empty"),
    ("empty packed gallery, matrix", lambda: ev(gallery_codes=PackedCodes(np.zeros((0, 1), dtype=np.uint64), 4), query_labels=None,
                                                gallery_labels=None, relevance=np.ones((2, 0))), "`gallery_codes` is empty"),
]


@pytest.mark.parametrize("label,call,message", CASES, ids=[c[0] for c in CASES])
def test_bad_input(label, call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value), f"{label}: got {e.value}"
    assert str(e.value).startswith("`"), "the message must start with the argument's name"


def test_inputs_are_not_modified():
    q, g = Q.copy(), (G * 2 - 1).astype(float)
    ql, gl = QL.copy(), GL.copy()
    before = [a.copy() for a in (q, g, ql, gl)]
    pack_codes(q); pack_codes(g); hamming_distances(q, g)
    make_relevance(2, 3, ql, gl).block(0, 2)
    for a, b in zip((q, g, ql, gl), before):
        assert np.array_equal(a, b) and a.dtype == b.dtype


def test_class_ids_are_compared_exactly():
    "Ids beyond int64 were cast and compared equal: mAP 1.0 where the truth is 0."
    q, g = np.zeros((1, 8)), np.zeros((2, 8))
    for ql, gl in [(np.array([1e19]), np.array([2e19, 2e19])),
                   (np.array([2**64 - 1], dtype=np.uint64), np.array([-1, -1])),
                   (np.array([2**63], dtype=np.uint64), np.array([2**63 - 1, 2**63 - 1], dtype=np.int64))]:
        for engine in ("numpy", "numba"):
            assert evaluate(q, g, ql, gl, ["map"], engine=engine)["map"] == 0.0
    assert evaluate(q, g, np.array([2**64 - 1], dtype=np.uint64), np.array([2**64 - 1, 3], dtype=np.uint64), ["p@1"], ties="index")["p@1"] == 1.0


def test_distances_do_not_wrap_past_65535_bits():
    w = np.zeros((2, 70_000), dtype=np.uint8)
    w[1] = 1
    assert hamming_distances(w[:1], w).tolist() == [[0, 70_000]]
    for engine in ("numpy", "numba"):
        r = evaluate(w[:1], w, np.array([0]), np.array([1, 0]), ["p@1", "map"], ties="index", engine=engine)
        assert (r["p@1"], r["map"]) == (0.0, 0.5)


def test_report_reads_back_any_spelling():
    r = evaluate(Q, G, QL, GL, ["map@10", "P@2"])
    assert r["MAP@0010"] == r["map@10"] and r[" p@02 "] == r["p@2"]
    with pytest.raises(KeyError):
        r["map@11"]


def test_class_ids_held_as_objects():
    "Numbers in an object array are checked as numbers; unhashable or missing ids are named with their index."
    from retrieval_lit.validate import check_labels
    ids = np.empty(3, dtype=object)
    ids[:] = [3, 1, 3]
    assert check_labels(ids, "query_labels", 3, "query_codes").tolist() == [3, 1, 3]
    ids[:] = [3, 0.5, 3]
    with pytest.raises(RetrievalInputError, match="class ids must be integers, got non-integral value 0.5 at index 1"):
        check_labels(ids, "query_labels", 3, "query_codes")
    ids[:] = ["a", [1], "b"]
    with pytest.raises(RetrievalInputError, match=r"holds an id that cannot be compared \(it is not hashable\): \[1\]"):
        check_labels(ids, "query_labels", 3, "query_codes")
    ids[:] = ["a", None, "b"]
    with pytest.raises(RetrievalInputError, match="holds a missing id \\(None or NaN\\) at index 1"):
        check_labels(ids, "query_labels", 3, "query_codes")
    # through evaluate: string and integer class ids give the same numbers
    q, g = [[0, 0], [1, 1]], [[0, 0], [0, 1], [1, 1]]
    assert (evaluate(q, g, ["x", "y"], ["x", "y", "y"], ["map"])["map"]
            == evaluate(q, g, [0, 1], [0, 1, 1], ["map"])["map"])
