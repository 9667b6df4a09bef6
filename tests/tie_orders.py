"""Shared by the metric tests: random ranked lists with tie groups, and every order inside the groups."""
import itertools

import numpy as np
from hypothesis import strategies as st


@st.composite
def tied_lists(draw, max_items=8, max_grade=2):
    "A ranked list of grades with consecutive tie groups (sizes may be 0, as for empty distances)."
    sizes = draw(st.lists(st.integers(0, 4), min_size=1, max_size=4).filter(lambda s: 0 < sum(s) <= max_items))
    grades = draw(st.lists(st.integers(0, max_grade), min_size=sum(sizes), max_size=sum(sizes)))
    return grades, sizes


def all_orders(grades, sizes):
    "Every ranked list obtained by permuting the grades inside each tie group (duplicates kept: equally likely)."
    bounds = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    blocks = [list(itertools.permutations(grades[a:b])) for a, b in zip(bounds[:-1], bounds[1:])]
    return [sum(combo, ()) for combo in itertools.product(*blocks)]
