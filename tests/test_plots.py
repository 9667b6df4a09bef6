"""The figures: the Hamming-ball histogram behind φ (lgap), the demo's PNG files (demo), and bad input."""
import itertools
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from retrieval_lit import lgap
from retrieval_lit.lgap import paper_fig6_gallery
from retrieval_lit.demo import DEMO_FIGURES, demo_summaries, pr_curves, save_demo_figures
from retrieval_lit.lgap import BallHistogram, ball_codes, ball_histogram, plot_phi
from retrieval_lit.validate import RetrievalInputError

PNG = b"\x89PNG\r\n\x1a\n"


def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == PNG, f"{path.name} is not a PNG"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


@pytest.fixture(scope="module")
def small_summaries():
    return demo_summaries((8, 16), seed=1)


def test_save_demo_figures_writes_nonempty_pngs(tmp_path, small_summaries):
    out = tmp_path / "new" / "figs"                      # created, parents too
    paths = save_demo_figures(out, bits=(8, 16), seed=1, summaries=small_summaries, dpi=60)
    assert [p.name for p in paths] == list(DEMO_FIGURES)
    for p in paths:
        assert p.parent == out and p.stat().st_size > 5_000
        w, h = _png_size(p)
        assert w > 300 and h > 150
    # a second call overwrites in place
    again = save_demo_figures(out, summaries=small_summaries, dpi=60)
    assert again == paths


def test_save_demo_figures_computes_its_own_summaries(tmp_path):
    paths = save_demo_figures(tmp_path, bits=[8], seed=0, dpi=40)
    assert all(p.stat().st_size > 1_000 for p in paths)


def test_save_demo_figures_bad_input(tmp_path, small_summaries):
    f = tmp_path / "file.png"
    f.write_bytes(b"x")
    with pytest.raises(RetrievalInputError, match="^`folder`"):
        save_demo_figures(f, summaries=small_summaries)
    with pytest.raises(RetrievalInputError, match="^`dpi`"):
        save_demo_figures(tmp_path, summaries=small_summaries, dpi=0)
    with pytest.raises(RetrievalInputError, match="^`bits`"):
        save_demo_figures(tmp_path, bits=[0])
    with pytest.raises(RetrievalInputError, match="^`ties`"):
        save_demo_figures(tmp_path, bits=[8], ties="random")


def test_pr_curves_come_from_the_precision_chapter(small_summaries):
    from retrieval_lit.metrics import Conventions
    from retrieval_lit.precision import pr_curve_by_radius
    curves = pr_curves(small_summaries, "radius")
    assert list(curves) == ["8 bits", "16 bits"]
    want = pr_curve_by_radius(small_summaries[8][1], Conventions(empty="skip"))   # the demo follows chapter 10
    np.testing.assert_array_equal(curves["8 bits"].precision, want.precision)
    zero = pr_curve_by_radius(small_summaries[8][1], Conventions(empty="zero"))
    np.testing.assert_array_equal(pr_curves(small_summaries, "radius", empty="zero")["8 bits"].precision, zero.precision)
    with pytest.raises(RetrievalInputError, match="^`by`"):
        pr_curves(small_summaries, "distance")


def test_paper_fig6_phi_and_lgap():
    q, codes, grades = paper_fig6_gallery()
    hists = [ball_histogram(q, codes, k, grades) for k in range(3)]
    assert [h.phi for h in hists] == [1.0, 0.6, 10 / 22]                     # Ding, Li & Li (2018), eq. 14
    assert [h.area for h in hists] == [1, 6, 10] and [int(h.relevant.sum()) for h in hists] == [1, 4, 5]
    assert [h.n_codes for h in hists] == [1, 5, 11]
    # LGAP@2 from the histograms equals the LGAP chapter's value (0.5424, eq. 15)
    terms = [h.relevant.sum() / h.area * h.phi for h in hists]
    assert round(float(np.mean(terms)), 4) == 0.5424
    assert np.isclose(np.mean(terms), lgap.lgap(q, codes, grades, 2))


def _brute(query, codes, radius):
    K = len(query)
    ball = [c for c in itertools.product((0, 1), repeat=K) if sum(a != b for a, b in zip(c, query)) <= radius]
    rows = [tuple(r) for r in np.asarray(codes).tolist()]
    return len(ball), sorted(rows.count(c) for c in ball if rows.count(c))


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 6).flatmap(lambda K: st.tuples(
    st.lists(st.integers(0, 1), min_size=K, max_size=K),
    st.lists(st.lists(st.integers(0, 1), min_size=K, max_size=K), min_size=1, max_size=25),
    st.integers(0, 7))))
def test_ball_histogram_matches_enumeration(case):
    query, codes, radius = case
    h = ball_histogram(query, codes, radius)
    n_codes, bars = _brute(tuple(query), codes, radius)
    assert h.n_codes == n_codes == lgap.ball_size(len(query), radius)
    assert sorted(h.counts.tolist()) == bars
    assert (np.diff(h.distances) >= 0).all()
    assert len(ball_codes(query, radius)) == n_codes
    expect = np.nan if not bars else sum(bars) / (max(bars) * n_codes)
    assert (np.isnan(h.phi) and np.isnan(expect)) or h.phi == expect


def test_ball_histogram_leaves_inputs_alone_and_names_bad_input():
    q, codes, grades = paper_fig6_gallery()
    before = codes.copy(), grades.copy()
    ball_histogram(q, codes, 2, grades)
    assert np.array_equal(codes, before[0]) and np.array_equal(grades, before[1])
    for args, name in [(([0, 0, 0], codes, 1), "gallery_codes"), ((q, codes, -1), "radius"),
                       ((q, codes, 1, [1, 0]), "grades"), (([[0, 0, 0, 0]], codes, 1), "query_code"),
                       (([0, 2, 0, 0], codes, 1), "query_code")]:
        with pytest.raises(RetrievalInputError, match=f"^`{name}`"):
            ball_histogram(*args)
    with pytest.raises(RetrievalInputError, match="^`hist`"):
        plot_phi("not a histogram")


def test_plot_phi_draws_every_slot_or_only_the_occupied_codes():
    from matplotlib.figure import Figure
    q, codes, grades = paper_fig6_gallery()
    ax = Figure().subplots()
    plot_phi(ball_histogram(q, codes, 2, grades), ax=ax)
    assert len(ax.patches) == 2 * 11 + 1 and "0.4545" in ax.get_title()
    ax = Figure().subplots()
    plot_phi(ball_histogram(q, codes, 2, grades), ax=ax, max_slots=4)
    assert len(ax.patches) == 2 * 8 + 1 and "3 empty codes not drawn" in ax.get_title()
    empty = ball_histogram([1, 1, 1, 1], codes[:1], 0)
    assert isinstance(empty, BallHistogram) and np.isnan(empty.phi)
    ax = Figure().subplots()
    plot_phi(empty, ax=ax)
    assert "undefined" in ax.get_title()


def test_import_stays_light():
    code = "import sys, retrieval_lit.demo, retrieval_lit.lgap, retrieval_lit.precision; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
