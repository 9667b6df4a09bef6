"""The classroom widgets (retrieval_lit.widgets.*) driven as a student would: press the buttons, move the sliders, read the numbers.

Every number a widget shows is checked against the metric chapter that owns it (and a few against
the papers' printed values), and the displayed HTML is checked to contain the same numbers."""
import itertools
import math
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("ipywidgets")
import ipywidgets

from retrieval_lit import average_precision as ap_mod, bayes, dcg, egr, lgap
from retrieval_lit.labs import egr_tables
from retrieval_lit.metrics import AP_DENOMINATORS
from retrieval_lit.ranking import TIE_MODES
from retrieval_lit.validate import RetrievalInputError
from retrieval_lit.display import fmt_number as _fmt
from retrieval_lit.widgets.ap_playground import APPlayground, ap_playground
from retrieval_lit.widgets.bayes_stepper import BayesStepper, bayes_stepper
from retrieval_lit.widgets.egr_explorer import EGRExplorer, egr_explorer
from retrieval_lit.widgets.hamming_ball import HammingBallExplorer, hamming_ball_explorer


# ----------------------------------------------------------------------------- AP playground
def _check_playground_numbers(lab):
    "Every cell of the table equals the chapters' list-level functions, and is what the HTML shows."
    g, sizes, k = lab.grades, lab.tie_sizes, lab.k
    r = lab.readout()
    for d in AP_DENOMINATORS:
        for t in TIE_MODES:
            want = ap_mod.average_precision(g, k, sizes, ties=t, ap_denominator=d, empty=lab.empty.value)
            assert r["AP"][d][t] == want or (math.isnan(want) and math.isnan(r["AP"][d][t]))
            assert f">{_fmt(want)}<" in lab.table.value
    for t in TIE_MODES:
        want = dcg.ndcg(g, k, sizes, ties=t, gain=lab.gain.value, empty=lab.empty.value)
        assert r["nDCG"][t] == want or (math.isnan(want) and math.isnan(r["nDCG"][t]))
        assert r["EGR"][t] == egr.egr_tied(g, sizes, k=k, ties=t)


def test_playground_returns_a_widget_with_its_lab():
    w = ap_playground()
    assert isinstance(w, ipywidgets.VBox) and isinstance(w.lab, APPlayground) and w.lab.widget is w
    assert w.lab.grades == [1, 0, 1, 1, 0, 0, 1, 0] and w.lab.k == 8 and w.lab.tie_sizes == [1] * 8
    _check_playground_numbers(w.lab)


def test_playground_paper_fig2_collision():
    "Ding, Li & Li (2018), Fig. 2: 10 items on one code, 5 relevant: AP from 0.3544 (worst order) to 1 (best)."
    lab = ap_playground([0] * 5 + [1] * 5, tie_sizes=[10]).lab
    r = lab.readout()["AP"]["retrieved"]
    assert r["optimistic"] == 1.0
    assert round(r["pessimistic"], 4) == 0.3544 == round(r["index"], 4)
    # the expected value by brute force over all C(10,5) placements of the relevant items
    total, count = Fraction(0), 0
    for pos in itertools.combinations(range(10), 5):
        total += sum(Fraction(k + 1, p + 1) for k, p in enumerate(pos)) / 5
        count += 1
    assert abs(r["expected"] - float(total / count)) < 1e-12
    _check_playground_numbers(lab)


def test_playground_clicks_ties_and_cutoff_drive_the_numbers():
    lab = ap_playground([0, 0, 0, 0]).lab
    assert lab.readout()["AP"]["retrieved"]["index"] == 0.0        # no relevant item: the 'zero' policy
    assert lab.readout()["R"] == 0
    lab.empty.value = "skip"                                        # ... or skipped: NaN, shown as a dash
    assert math.isnan(lab.readout()["AP"]["min"]["expected"]) and ">—<" in lab.table.value
    _check_playground_numbers(lab)
    lab.empty.value = "zero"
    lab.item_buttons[2].click()                                     # the student clicks the third item
    assert lab.grades == [0, 0, 1, 0]
    assert lab.readout()["AP"]["retrieved"]["index"] == 1 / 3
    assert lab.item_buttons[2].button_style == "success" and "✓" in lab.item_buttons[2].description
    lab.tie_toggles[1].value = True                                 # ties items 1 and 2
    lab.tie_toggles[2].value = True                                 # ... and 3: one group of three
    assert lab.tie_sizes == [3, 1]
    r = lab.readout()["AP"]["retrieved"]
    assert r["optimistic"] == 1.0 and r["pessimistic"] == 1 / 3 and r["index"] == 1 / 3
    assert r["expected"] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3, abs=1e-15)
    _check_playground_numbers(lab)
    lab.cutoff.value = 2                                            # slider: AP@2
    assert lab.k == 2
    _check_playground_numbers(lab)
    assert lab.readout()["AP"]["retrieved"]["index"] == 0.0         # nothing relevant in the first 2 (index order)
    lab.tie(2, False).tie(1, False)
    assert lab.tie_sizes == [1, 1, 1, 1]
    lab.set_list([1, 1, 0], tie_sizes=[1, 2], k=2)
    assert len(lab.item_buttons) == 3 and len(lab.tie_toggles) == 3 and lab.tie_toggles[2].value
    assert lab.cutoff.max == 3 and lab.k == 2
    _check_playground_numbers(lab)


def test_playground_graded_and_gain():
    lab = ap_playground([0, 1], max_grade=3).lab
    for _ in range(3):
        lab.toggle(0)
    assert lab.grades == [3, 1] and "★3" in lab.item_buttons[0].description
    lab.toggle(0)
    assert lab.grades == [0, 1]                                      # cycles back to 0
    lab.set_grade(0, 2)
    lab.gain.value = "linear"
    assert lab.readout()["nDCG"]["index"] == dcg.ndcg([2, 1], gain="linear") == 1.0
    lab.set_list([1, 2])
    assert lab.readout()["nDCG"]["index"] == dcg.ndcg([1, 2], gain="linear")
    _check_playground_numbers(lab)


@pytest.mark.parametrize("kwargs, name", [
    (dict(grades=[0, 2]), "grades"), (dict(grades=[]), "grades"), (dict(grades=[[1, 0]]), "grades"),
    (dict(grades=[1, 0, 1], tie_sizes=[2, 2]), "tie_sizes"), (dict(grades=[1, 0], k=3), "k"),
    (dict(grades=[1], max_grade=0), "max_grade"), (dict(gain="cubic"), "gain")])
def test_playground_bad_input(kwargs, name):
    with pytest.raises(RetrievalInputError, match=f"^`{name}`"):
        ap_playground(**kwargs)


def test_playground_leaves_callers_list_alone():
    grades = np.array([1, 0, 1])
    lab = ap_playground(grades).lab
    lab.toggle(1)
    assert grades.tolist() == [1, 0, 1] and lab.grades == [1, 1, 1]


# ----------------------------------------------------------------------------- Hamming ball
def lgap_fig6():
    from retrieval_lit.lgap import paper_fig6_gallery
    q, codes, grades = paper_fig6_gallery()
    return q, codes, grades, 2


def test_hamming_ball_defaults_to_the_paper_worked_example():
    w = hamming_ball_explorer()
    lab = w.lab
    assert isinstance(w, ipywidgets.VBox) and isinstance(lab, HammingBallExplorer)
    r = lab.readout()
    assert round(r["LGAP"], 4) == 0.5424                                       # Ding, Li & Li (2018), eq. 15
    assert r["LGAP"] == lgap.lgap(*lgap_fig6()) == pytest.approx(float(Fraction(179, 330)), abs=1e-15)
    assert [x["phi"] for x in r["rows"]] == [1.0, 0.6, 10 / 22]                       # eq. 14
    assert [x["items"] for x in r["rows"]] == [1, 6, 10] and [x["relevant"] for x in r["rows"]] == [1, 4, 5]
    assert [x["codes"] for x in r["rows"]] == [1, 5, 11]
    assert "LGAP@2 = 0.5424" in lab.summary.value and "0.4545" in lab.table.value
    assert lab.figure.value.startswith('<img') and "base64," in lab.figure.value


def test_hamming_ball_slider_and_bits():
    lab = hamming_ball_explorer().lab
    lab.radius.value = 0
    assert lab.readout()["LGAP"] == 1.0 and len(lab.readout()["rows"]) == 1
    lab.bit_buttons[1].value = True                                  # the student flips bit 1
    assert lab.query == [0, 1, 0, 0] and lab.bit_buttons[1].description == "1"
    codes, grades = lab.codes, lab.grades
    for r in range(5):
        lab.set_radius(r)
        got = lab.readout()
        want = lgap.lgap([0, 1, 0, 0], codes, grades, r)
        assert got["LGAP"] == want or (math.isnan(want) and math.isnan(got["LGAP"]))
        assert len(got["rows"]) == r + 1
        assert np.isclose(np.mean([x["term"] for x in got["rows"]]), got["LGAP"])
    with pytest.raises(RetrievalInputError, match="^`r`"):
        lab.set_radius(5)


def test_hamming_ball_on_random_galleries_matches_lgap():
    rng = np.random.default_rng(3)
    for _ in range(5):
        K, N = int(rng.integers(2, 7)), int(rng.integers(3, 30))
        codes, grades, q = rng.integers(0, 2, (N, K)), rng.integers(0, 3, N), rng.integers(0, 2, K)
        lab = hamming_ball_explorer(q, codes, grades, radius=min(2, K)).lab
        want = lgap.lgap(q, codes, grades, min(2, K))
        got = lab.readout()["LGAP"]
        assert got == want or (math.isnan(want) and math.isnan(got))
        for row in lab.readout()["rows"]:
            assert row["codes"] == lgap.ball_size(K, row["k"])


def test_hamming_ball_bad_input():
    q, codes = np.zeros(4), np.zeros((3, 4))
    with pytest.raises(RetrievalInputError, match="^`gallery_codes`"):
        hamming_ball_explorer(np.zeros(20), np.zeros((3, 20)))
    with pytest.raises(RetrievalInputError, match="^`grades`"):
        hamming_ball_explorer(q, codes, [1, 0])
    with pytest.raises(RetrievalInputError, match="^`radius`"):
        hamming_ball_explorer(q, codes, radius=5)
    with pytest.raises(RetrievalInputError):
        hamming_ball_explorer(np.zeros(3), codes)


# ----------------------------------------------------------------------------- EGR explorer
def test_egr_explorer_paper_ranks():
    w = egr_explorer(12, "10, 1", paper=True)
    lab = w.lab
    assert isinstance(lab, EGRExplorer) and w.lab.widget is w
    expect = {"12": 1, "11": 2, "10,1": 3, "10": 4, "2,1": 91, "1,1,1": 92, "2": 93, "1,1": 94, "1": 95}
    for groups, rank in expect.items():
        lab.groups_text.value = groups                                  # the student types the runs
        assert lab.readout()["ranks"]["EGR"] == rank, groups
        assert lab.readout()["arrangements"] == 95
    lab.paper.value = False
    assert lab.readout()["arrangements"] == 100 and lab.readout()["ranks"]["EGR"] == 100


def test_egr_explorer_values_are_the_egr_chapter():
    lab = egr_explorer(10, [3, 2]).lab
    r = lab.readout()
    rel = egr_tables.layout([3, 2], 10)
    assert r["list"] == rel.tolist() == [1, 1, 1, 0, 1, 1, 0, 0, 0, 0]
    assert r["values"]["EGR"] == egr.egr(rel) == egr.egr_from_groups([3, 2], 10)
    assert r["values"]["EGR'"] == egr.egr(rel, "R")
    assert r["values"]["MAP"] == float(egr.paper_map(rel, True))
    assert r["values"]["RBP"] == pytest.approx(egr.rbp(rel, 0.8))
    assert f">{_fmt(r['values']['EGR'])}<" in lab.table.value
    lab.n_items.value = 5                                               # R = N: Table 4's value, log10(N)/N
    lab.set(groups="5")
    assert egr.truncate(lab.readout()["values"]["EGR"]) == egr.TABLE4[5] == 0.139
    lab.persistence.value = 0.5
    assert lab.readout()["values"]["RBP"] == pytest.approx(float(egr.rbp([1] * 5, 0.5, True)))


def test_egr_explorer_shows_errors_instead_of_crashing():
    lab = egr_explorer(6, "3").lab
    lab.groups_text.value = "4, 3"                                      # 4 + 3 + 1 gap > 6
    assert lab.error.startswith("`groups`") and lab.readout() == {}
    assert "groups" in lab.strip.value and lab.table.value == ""
    lab.groups_text.value = "three"
    assert lab.error.startswith("`groups`")
    lab.groups_text.value = "2"
    assert lab.error == "" and lab.readout()["R"] == 2
    lab.groups_text.value = ""                                          # no relevant item at all
    assert lab.readout()["R"] == 0 and lab.readout()["ranks"]["EGR"] is None
    assert lab.readout()["values"]["EGR"] == egr.egr([0] * 6)


# ----------------------------------------------------------------------------- Bayes stepper
def test_bayes_stepper_walks_the_chapter_generator():
    w = bayes_stepper()
    lab = w.lab
    assert isinstance(lab, BayesStepper)
    steps = [(s.step, s.i, s.j, s.action, s.image, s.added)
             for s in bayes.walk_per_image(*lab.lists[:2], *lab.lists[2:], np.zeros(6), 0.5)]
    seen = [(lab.readout()["step"], lab.readout()["i"], lab.readout()["j"], lab.readout()["action"],
             lab.readout()["image"], lab.readout()["added"])]
    while lab.readout()["action"] != "done":
        lab.step_button.click()                                         # the student presses "step"
        r = lab.readout()
        seen.append((r["step"], r["i"], r["j"], r["action"], r["image"], r["added"]))
    assert seen == steps
    assert lab.readout()["scores"] == [1, 1, 2, 1.5, 1, 2]
    assert lab.step_button.disabled and not lab.back_button.disabled
    lab.back_button.click()
    assert lab.readout()["action"] == "both lists" and lab.readout()["image"] == 5
    lab.reset_button.click()
    assert lab.readout()["position"] == 0 and lab.back_button.disabled
    lab.end_button.click()
    assert lab.readout()["scores"] == bayes.merge_per_image_reference(
        *lab.lists[:2], *lab.lists[2:], np.zeros(6), 0.5).scores.tolist()


def test_bayes_stepper_weight_and_html():
    lab = bayes_stepper([0, 1], [2, 3], [1, 2], [4, 5], n_images=4, w=1.0).lab
    lab.run_to_end()
    assert lab.readout()["scores"] == [2, 7, 5, 0]                     # w = 1: baseline B1 (sum of TFs)
    lab.weight.value = 0.25                                             # resets the walk
    assert lab.readout()["position"] == 0
    lab.run_to_end()
    assert lab.readout()["scores"] == [2, 0.25 * 3 + 0.25 * 4, 5, 0]
    lab.back().back()
    assert "both lists: image 1 receives 1.75" in lab.view.value
    assert "img 3" in lab.view.value                                   # every image's score is shown


def test_bayes_stepper_bad_input():
    with pytest.raises(RetrievalInputError, match="^`idx1`"):
        bayes_stepper(idx1=[2, 1], tf1=[1, 1])
    with pytest.raises(RetrievalInputError, match="^`tf2`"):
        bayes_stepper(idx2=[1, 3], tf2=[1])
    with pytest.raises(RetrievalInputError, match=r"^`w` must lie in \[0, 1\], got 1.5"):
        bayes_stepper(w=1.5)                       # the slider would have clamped it to 1 without a word


def test_bayes_stepper_tf_none_is_one_per_entry():
    ones = BayesStepper(tf1=None, tf2=None).run_to_end().readout()["scores"]
    assert ones == BayesStepper(tf1=[1, 1, 1, 1], tf2=[1, 1, 1, 1]).run_to_end().readout()["scores"]


def test_egr_explorer_persistence_outside_the_slider_is_refused():
    with pytest.raises(RetrievalInputError, match=r"^`persistence` must lie in \[0.05, 0.95\]"):
        egr_explorer(persistence=0.99)


# ----------------------------------------------------------------------------- light import
def test_import_is_light():
    modules = ", ".join(f"retrieval_lit.widgets.{m}" for m in ("ap_playground", "hamming_ball", "egr_explorer", "bayes_stepper"))
    code = f"import sys, {modules}; print('ipywidgets' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
