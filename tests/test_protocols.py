"""The benchmark protocols (chapter 51) against direct loops written from the datasets' evaluation procedures, on
random ground truth with tied scores; and exact under ties: the expected value lies in the range over tie orders."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_lit import RetrievalInputError
from retrieval_lit.protocols import REVISITED_SETUPS, cut_precision_at, holidays, oxford, revisited, ukbench_ns

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))


def trapezoid_ap(pos_ranks, n_pos):
    "0-based ranks of the positives in the ranking with junk removed; trapezoids, precision 1 at rank 0."
    return sum(((1.0 if r == 0 else j / r) + (j + 1) / (r + 1)) / 2 for j, r in enumerate(sorted(pos_ranks))) / n_pos


def ranking(row, removed=()):
    "Gallery indices by descending score, ties by index, removed items deleted."
    return [j for j in sorted(range(len(row)), key=lambda j: (-row[j], j)) if j not in set(removed)]


@st.composite
def revisited_cases(draw):
    nq, n = draw(st.integers(1, 4)), draw(st.integers(3, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    scores = rng.integers(0, draw(st.integers(1, 8)), (nq, n)).astype(float)
    gnd = []
    for _ in range(nq):
        perm = rng.permutation(n)
        a, b, c = sorted(rng.integers(0, n + 1, 3))
        gnd.append({"easy": perm[:a], "hard": perm[a:b], "junk": perm[b:c]})
    return scores, gnd


@SETTINGS
@given(revisited_cases())
def test_revisited_equals_the_direct_loop(case):
    scores, gnd = case
    kappas = (1, 3, 10)
    ours = revisited(scores, gnd, kappas)
    for setup, (pos_keys, junk_keys) in REVISITED_SETUPS.items():
        aps, mps, ps = [], [], []
        for i, row in enumerate(scores):
            positives = set(np.concatenate([gnd[i][k] for k in pos_keys]).tolist())
            removed = set(np.concatenate([gnd[i][k] for k in junk_keys]).tolist()) - positives
            if not positives:
                continue
            order = ranking(row, removed)
            ranks = [m for m, j in enumerate(order) if j in positives]
            aps.append(trapezoid_ap(ranks, len(positives)))
            last = max(ranks) + 1
            mps.append([sum(r < min(last, k) for r in ranks) / min(last, k) for k in kappas])
            ps.append([sum(r < k for r in ranks) / k for k in kappas])
        if not aps:
            assert np.isnan(ours[setup]["map"])
            continue
        assert ours[setup]["map"] == pytest.approx(np.mean(aps), abs=1e-12)
        for j, k in enumerate(kappas):
            assert ours[setup][f"mp@{k}"] == pytest.approx(np.mean(mps, axis=0)[j], abs=1e-12)
            assert ours[setup][f"p@{k}"] == pytest.approx(np.mean(ps, axis=0)[j], abs=1e-12)


@SETTINGS
@given(revisited_cases())
def test_revisited_expected_lies_between_the_fixed_orders(case):
    scores, gnd = case
    e = revisited(scores, gnd, ties="expected")
    lo, hi = revisited(scores, gnd, ties="pessimistic"), revisited(scores, gnd, ties="optimistic")
    for setup in e:
        if not np.isnan(e[setup]["map"]):
            assert lo[setup]["map"] - 1e-12 <= e[setup]["map"] <= hi[setup]["map"] + 1e-12
        assert "mp@1" not in e[setup]


@SETTINGS
@given(st.integers(2, 6), st.integers(0, 2**32 - 1), st.sampled_from([2, 4, 30]))
def test_ukbench_and_holidays_equal_their_loops(n_groups, seed, levels):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_groups), 4)
    n = len(groups)
    scores = rng.integers(0, levels, (n, n)).astype(float)
    ns = np.mean([sum(groups[j] == groups[i] for j in ranking(scores[i])[:4]) for i in range(n)])
    assert ukbench_ns(scores, groups) == pytest.approx(ns, abs=1e-12)
    queries = np.arange(0, n, 4)
    aps = []
    for qi in queries:
        order = ranking(scores[qi], [qi])
        positives = [j for j in range(n) if groups[j] == groups[qi] and j != qi]
        aps.append(trapezoid_ap([m for m, j in enumerate(order) if j in positives], len(positives)))
    assert holidays(scores[queries], groups, queries) == pytest.approx(np.mean(aps), abs=1e-12)
    e = ukbench_ns(scores, groups, ties="expected")
    assert ukbench_ns(scores, groups, ties="pessimistic") - 1e-12 <= e <= ukbench_ns(scores, groups, ties="optimistic") + 1e-12


def test_oxford_equals_revisited_medium_when_good_ok_are_easy_hard():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(3, 40))
    gnd = [{"easy": rng.choice(40, 5, replace=False), "hard": [], "junk": []} for _ in range(3)]
    for e in gnd:
        rest = np.setdiff1d(np.arange(40), e["easy"])
        e["hard"], e["junk"] = rest[:4], rest[4:7]
    ox = oxford(scores, [{"good": e["easy"], "ok": e["hard"], "junk": e["junk"]} for e in gnd])
    assert ox == pytest.approx(revisited(scores, gnd)["medium"]["map"], abs=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": []}]), "`gnd` entry 0 has no 'junk'"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": [3]}]), "`gnd[0]['junk']` holds id 3 at index 0, but the gallery has 3 items"),
    (lambda: revisited(np.zeros((1, 3)), {"easy": [0]}), "`gnd` must be a list of one dict per query"),
    (lambda: revisited(np.array([[0.0, np.nan, 1]]), [{"easy": [0], "hard": [], "junk": []}]), "`scores` contains nan"),
    (lambda: ukbench_ns(np.zeros((4, 5)), np.zeros(5)), "`scores` must be square"),
    (lambda: ukbench_ns(np.zeros((4, 4)), np.zeros(3)), "`groups` has 3 rows but `scores` has 4 items"),
    (lambda: holidays(np.zeros((2, 4)), np.zeros(4), [0]), "`query_index` must give each of the 2 queries"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas="5"),
     "`kappas` must be one whole number or a list, tuple or array of them, got the string '5'"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas={1, 5}),
     "`kappas` must be one whole number or a list, tuple or array of them, got {1, 5} (set)"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas=[1, 0]),
     "`kappas` must be at least 1, got 0"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas=np.array([[1, 5]])),
     "`kappas` must be one whole number or a list, tuple or array of them, got an array of shape (1, 2)"),
    (lambda: cut_precision_at([[1, 0, 1]], [0]), "`kappas` must be at least 1, got 0"),
    (lambda: cut_precision_at([[1, 0, 1]], "5"), "`kappas` must be one whole number or a list"),
    (lambda: cut_precision_at([1, 0, 1], [1]), "`grades_in_order` must be a 2-D array (queries x ranks), got shape (3,)"),
    (lambda: oxford(np.zeros((1, 4)), [{"good": [np.inf], "ok": [], "junk": []}]),
     "`gnd[0]['good']` contains inf at index (0,): NaN and inf are not allowed"),
    (lambda: holidays(np.zeros((2, 4)), [0, 0, 1, 1], [True, False]),
     "`query_index` must hold whole gallery indices, got booleans"),
    (lambda: holidays(np.zeros((1, 4)), [0, 0.5, 1, 1], [0]), "`groups` group ids must be integers, got dtype float64 with non-integral value 0.5"),
    (lambda: holidays(np.zeros((1, 4)), [0, np.nan, 1, 1], [0]), "`groups` contains nan at index (1,)"),
    (lambda: ukbench_ns(np.eye(4), [0, 0, np.nan, 1]), "`groups` contains nan at index (2,)"),
    (lambda: ukbench_ns(np.eye(4), [True, True, False, False]), "`groups` group ids must be integers, got dtype bool"),
])
def test_bad_ground_truth_is_named(call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value), str(e.value)


# ---------------------------------------------------------------- UKBench's groups of four; any hashable group ids
@pytest.mark.parametrize("groups, message", [
    ([0, 0, 0, 1, 1, 1], "group 0 has 3 images"),
    ([5] * 4 + [7] * 5, "group 7 has 5 images"),
    ([2, 2, 2, 1, 1, 1, 1, 1], "group 2 has 3 images"),           # the first group to appear, not the smallest id
    (["a"] * 4 + ["b"] * 3, "group 'b' has 3 images"),
    ([0, 0, 0, 0, 1], "group 1 has 1 image"),
])
def test_ukbench_refuses_groups_that_are_not_of_four(groups, message):
    n = len(groups)
    with pytest.raises(RetrievalInputError) as e:
        ukbench_ns(np.eye(n), groups)
    assert str(e.value).startswith("`groups` must give every object exactly 4 images"), str(e.value)
    assert message in str(e.value), str(e.value)


def _as_objects(values):
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a


@pytest.mark.parametrize("ties", ["index", "optimistic", "pessimistic", "expected"])
def test_string_and_hashable_group_ids_give_the_integer_ids_numbers(ties):
    rng = np.random.default_rng(5)
    ints = np.array([3, 1, 3, 0, 1, 0, 3, 1, 0, 0, 1, 3])              # three objects of four, interleaved
    scores = rng.integers(0, 4, (12, 12)).astype(float)             # many ties
    queries = np.array([0, 1, 3, 7])
    ns, h = ukbench_ns(scores, ints, ties), holidays(scores[queries], ints, queries, ties)
    assert 0 < ns < 4 and 0 < h < 1
    for ids in (np.array([f"obj{g}" for g in ints]), [f"obj{g}" for g in ints],
                _as_objects([("scene", int(g)) for g in ints]), np.array([f"g{g}" for g in ints], dtype="S")):
        kept = ids.copy()
        assert ukbench_ns(scores, ids, ties) == ns
        assert holidays(scores[queries], ids, queries, ties) == h
        assert np.array_equal(np.asarray(kept), np.asarray(ids))      # the caller's ids untouched


@pytest.mark.parametrize("call, message", [
    (lambda: ukbench_ns(np.eye(4), ["a", None, "b", "b"]), "`groups` holds a missing id (None or NaN) at index 1"),
    (lambda: holidays(np.zeros((1, 4)), _as_objects(["a", "a", float("nan"), "b"]), [0]),
     "`groups` holds a missing id (None or NaN) at index 2"),
    (lambda: holidays(np.zeros((1, 4)), _as_objects(["a", "a", [1], "b"]), [0]),
     "`groups` holds an id that cannot be compared (it is not hashable): [1] (list) at index 2"),
    (lambda: holidays(np.zeros((1, 4)), _as_objects([0, 0.5, 1, 1]), [0]),      # numbers held as objects: numbers
     "`groups` group ids must be integers, got non-integral value 0.5 at index 1"),
    (lambda: holidays(np.zeros((1, 4)), np.array(["a", "a", "b"]), [0]), "`groups` has 3 rows but `scores` has 4 items"),
])
def test_bad_hashable_group_ids_are_named(call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value), str(e.value)


# ---------------------------------------------------------------- each k once, and at least one
@pytest.mark.parametrize("call, message", [
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas=[5, 5]),
     "`kappas` names 5 twice: name each k once"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas=np.array([1, 5, 1])),
     "`kappas` names 1 twice: name each k once"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas=[]),
     "`kappas` must name at least one k"),
    (lambda: revisited(np.zeros((1, 3)), [{"easy": [0], "hard": [], "junk": []}], kappas=np.array([], dtype=int)),
     "`kappas` must name at least one k"),
    (lambda: cut_precision_at([[1, 0, 1]], range(0)), "`kappas` must name at least one k"),
    (lambda: cut_precision_at([[1, 0, 1]], [2, np.int64(2)]), "`kappas` names 2 twice: name each k once"),
])
def test_kappas_name_each_k_once_and_at_least_one(call, message):
    with pytest.raises(RetrievalInputError) as e:
        call()
    assert message in str(e.value), str(e.value)
