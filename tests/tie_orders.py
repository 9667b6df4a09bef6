"""Shared by the metric tests: random ranked lists with tie groups, and every order inside the groups."""
from hypothesis import strategies as st

from retrieval_lit.testing import tie_orders


@st.composite
def tied_lists(draw, max_items=8, max_grade=2):
    "A ranked list of grades with consecutive tie groups (sizes may be 0, as for empty distances)."
    sizes = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(lambda s: 0 < sum(s) <= max_items))
    grades = draw(st.lists(st.integers(0, max_grade), min_size=sum(sizes), max_size=sum(sizes)))
    return grades, sizes


def all_orders(grades, sizes):
    "Every distinct order inside the tie groups (retrieval_lit.testing.tie_orders, the oracle the chapters use too)."
    return list(tie_orders(grades, sizes))
