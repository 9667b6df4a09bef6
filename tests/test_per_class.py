"""Report.per_class and Report.class_mean (issue 33): per-class means and the mean over classes (avg_of_avgs).

The values are worked out by hand from the per-query values below; the library's own mean over queries is checked
against the same hand values, so the two readings (query-weighted, class-weighted) are seen to differ."""
import numpy as np
import pytest

from retrieval_lit import evaluate
from retrieval_lit.evaluation import Report
from retrieval_lit.metrics import Conventions
from retrieval_lit.validate import RetrievalInputError


def report(empty="skip"):
    # queries 0..4: classes 1, 1, 1, 4, 4; query 2's p@1 undefined (skipped), query 4's map undefined
    pq = {"map": np.array([1.0, 0.5, 0.0, 0.25, np.nan]), "p@1": np.array([1.0, 0.0, np.nan, 1.0, 0.0])}
    means = {"map": 1.75 / 4, "p@1": 2 / 4}
    return Report(means, pq, {"map": 1, "p@1": 1}, Conventions.make(empty=empty), n_queries=5, n_gallery=20,
                  nbits=None)


LABELS = [1, 1, 1, 4, 4]


def test_per_class_by_hand():
    per = report().per_class(LABELS)
    assert list(per) == [1, 4]
    assert per[1]["map"] == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert per[1]["p@1"] == pytest.approx((1.0 + 0.0) / 2)              # the skipped query leaves its class
    assert per[4]["map"] == pytest.approx(0.25)
    assert per[4]["p@1"] == pytest.approx(0.5)
    assert all(type(c) is int for c in per)


def test_class_mean_by_hand():
    r = report()
    cm = r.class_mean(LABELS)
    assert cm["map"] == pytest.approx((0.5 + 0.25) / 2)
    assert cm["p@1"] == pytest.approx((0.5 + 0.5) / 2)
    assert r["map"] == pytest.approx(1.75 / 4) and cm["map"] != pytest.approx(r["map"])   # class-weighted differs


def test_one_class_is_the_report_mean():
    r = report()
    cm = r.class_mean([3] * 5)
    assert cm == pytest.approx({"map": 1.75 / 4, "p@1": 0.5})


def test_a_class_with_nothing_defined_is_nan_and_leaves_the_class_mean():
    r = report()
    labels = [1, 1, 2, 4, 9]                        # class 2: query 2 only (p@1 skipped); class 9: query 4 (map skipped)
    per = r.per_class(labels)
    assert np.isnan(per[2]["p@1"]) and per[2]["map"] == 0.0
    assert np.isnan(per[9]["map"]) and per[9]["p@1"] == 0.0
    cm = r.class_mean(labels)
    assert cm["map"] == pytest.approx((0.75 + 0.0 + 0.25) / 3)
    assert cm["p@1"] == pytest.approx((0.5 + 1.0 + 0.0) / 3)


def test_negative_and_numpy_and_float_integral_ids():
    r = report()
    for labels in (np.array([-3, -3, -3, 0, 0]), np.array(LABELS, dtype=np.uint8), [1.0, 1.0, 1.0, 4.0, 4.0]):
        per = r.per_class(labels)
        assert [v["map"] for v in per.values()] == pytest.approx([0.5, 0.25])


def test_caller_labels_untouched():
    labels = np.array(LABELS)
    report().class_mean(labels)
    assert labels.tolist() == LABELS


def test_from_evaluate_zero_policy():
    # two queries of class 0 with relevant items, one of class 1 with none: empty="zero" counts it as 0
    r = evaluate(scores=[[3, 2, 1], [1, 2, 3], [3, 2, 1]], relevance=[[1, 0, 0], [1, 0, 0], [0, 0, 0]],
                 metrics=["p@1"])
    per = r.per_class([0, 0, 1])
    assert per == {0: {"p@1": 0.5}, 1: {"p@1": 0.0}}
    assert r.class_mean([0, 0, 1]) == {"p@1": 0.25}


@pytest.mark.parametrize("bad, says", [
    ([1, 1, 1, 4], "holds 4 class ids for the report's 5 queries"),
    ([1, 1, 1, 4, 4, 4], "holds 6 class ids for the report's 5 queries"),
    ([1.5, 1, 1, 4, 4], "whole numbers"),
    (["a", "a", "a", "b", "b"], ""),
    ([True, True, False, False, True], "booleans"),
    ([[1], [1], [1], [4], [4]], ""),
    (None, ""),
    ([1, 1, np.nan, 4, 4], ""),
])
def test_bad_labels(bad, says):
    for method in ("per_class", "class_mean"):
        with pytest.raises(RetrievalInputError, match="^`query_labels`") as e:
            getattr(report(), method)(bad)
        assert says in str(e.value)


def test_report_without_per_query_values_is_refused():
    back = Report.from_dict(report().to_dict())                       # per_query=False: means only
    with pytest.raises(RetrievalInputError, match="^`per_class` needs every metric's per-query values"):
        back.per_class(LABELS)
    again = Report.from_dict(report().to_dict(per_query=True))
    assert again.class_mean(LABELS) == pytest.approx(report().class_mean(LABELS))
