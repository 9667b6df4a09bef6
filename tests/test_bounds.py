"""`bounds=True` against brute force: for every metric that claims a range over tie orders, the (min, max) the
library reports equals the smallest and largest value over every order of the tied items, for every AP denominator,
cutoffs inside a tie group, at its edge and beyond the ranking, and the zero/skip empty policies.

The brute force knows nothing of the bounds code: it permutes the grades inside each tie group, builds the one-query
summary of that fixed order (`list_summary` with every group of size 1, so no tie is left), and evaluates the metric
in that order. The mean under `ties="expected"` must lie inside the range; the relevant-last / relevant-first orders
must lie inside it too (and be the range itself wherever the chapters prove it)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from retrieval_lit import evaluate
from retrieval_lit.data import load_digits_codes
from retrieval_lit.metrics import Conventions, parse_metric, tie_range
from retrieval_lit.ranking import list_summary
from metric_names import families_where
from tie_orders import all_orders, tied_lists

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# every family with a range over tie orders that a ranked list can hold (the Hamming radius metrics need codes)
FAMILIES = families_where(lambda m: m.tie_bounds and not m.hamming_only)


def brute_range(metric, grades, sizes, conventions):
    "(min, max) over every order inside the tie groups; None if no order gives a defined value."
    values = []
    for order in set(all_orders(grades, sizes)):
        v = metric.compute(list_summary(list(order)), conventions.with_ties("index"))[0]
        if not np.isnan(v):
            values.append(v)
    return (min(values), max(values)) if values else None


@SETTINGS
@given(tied_lists(max_items=8, max_grade=2), st.integers(1, 10), st.sampled_from(FAMILIES),
       st.sampled_from(("retrieved", "all", "min")), st.sampled_from(("zero", "skip")))
def test_range_is_min_and_max_over_every_tie_order(case, k, family, denominator, empty):
    grades, sizes = case
    metric = parse_metric(family.format(k=k))
    conv = Conventions.make(ap_denominator=denominator, empty=empty)
    lo, hi = tie_range(metric, list_summary(grades, sizes), conv)
    ref = brute_range(metric, grades, sizes, conv)
    if ref is None:
        assert np.isnan(lo[0]) and np.isnan(hi[0])
        return
    np.testing.assert_allclose([lo[0], hi[0]], ref, rtol=0, atol=1e-13)
    summary = list_summary(grades, sizes)
    mean = metric.compute(summary, conv)[0]
    if not np.isnan(mean):
        assert lo[0] - 1e-13 <= mean <= hi[0] + 1e-13
    for ties in ("pessimistic", "optimistic"):
        v = metric.compute(summary, conv.with_ties(ties))[0]
        if not np.isnan(v):
            assert lo[0] - 1e-13 <= v <= hi[0] + 1e-13


def test_fixed_orders_miss_the_range_only_for_the_seeds_ap_with_a_cut_group():
    "The chapter's counterexample: AP@4 of [1, 0, 0, 1, 0] with a tie group of 2 at ranks 4-5."
    grades, sizes = [1, 0, 0, 1, 0], [1, 1, 1, 2]
    s = list_summary(grades, sizes)
    m = parse_metric("map@4")
    lo, hi = tie_range(m, s, Conventions())
    assert (lo[0], hi[0]) == (0.75, 1.0)
    first = m.compute(s, Conventions(ties="optimistic"))[0]
    last = m.compute(s, Conventions(ties="pessimistic"))[0]
    assert (first, last) == (0.75, 1.0)          # relevant first gives the minimum here
    lo, hi = tie_range(m, s, Conventions(ap_denominator="all"))
    assert (lo[0], hi[0]) == (m.compute(s, Conventions(ties="pessimistic", ap_denominator="all"))[0],
                              m.compute(s, Conventions(ties="optimistic", ap_denominator="all"))[0])


def test_skip_under_expected_ties_gives_defined_bounds():
    "The audit's case: AP@1 of one group [0, 1, 0] is defined only when the relevant item comes first."
    s = list_summary([0, 1, 0], [3])
    m = parse_metric("map@1")
    assert m.compute(s, Conventions(empty="skip"))[0] == 1.0           # conditional mean over defined orders
    assert m.compute(s, Conventions(empty="zero"))[0] == pytest.approx(1 / 3, abs=1e-15)
    assert tuple(x[0] for x in tie_range(m, s, Conventions(empty="skip"))) == (1.0, 1.0)
    assert tuple(x[0] for x in tie_range(m, s, Conventions(empty="zero"))) == (0.0, 1.0)


@pytest.mark.parametrize("nbits, name, outside", [(12, "map@10", 32), (8, "map@100", 5)])
def test_digits_expected_ap_inside_its_range(nbits, name, outside):
    "The audit's numbers: relevant-last/first miss the expected AP for some queries; the true range never does."
    d = load_digits_codes(nbits)
    r = evaluate(d.query_codes, d.gallery_codes, d.query_labels, d.gallery_labels, [name], bounds=True)
    lo, hi = r.per_query_bounds[name]
    v = r.per_query[name]
    assert ((lo - 1e-12 <= v) & (v <= hi + 1e-12)).all()
    last = evaluate(d.query_codes, d.gallery_codes, d.query_labels, d.gallery_labels, [name], ties="pessimistic")
    first = evaluate(d.query_codes, d.gallery_codes, d.query_labels, d.gallery_labels, [name], ties="optimistic")
    a, b = last.per_query[name], first.per_query[name]
    assert int(((v < np.fmin(a, b) - 1e-12) | (v > np.fmax(a, b) + 1e-12)).sum()) == outside
    assert r.orders[name] == (last[name], first[name])
    assert r.bounds[name][0] <= min(r.orders[name]) and max(r.orders[name]) <= r.bounds[name][1]
