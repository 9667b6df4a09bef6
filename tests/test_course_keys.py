"""Issue 37: the answer keys are out of what students install (the wheel ships salted digests; the plain keys stay in
the source tree's nbs/answers/), `check` still grades right / close / wrong, and the teacher's tools write the
teacher's copy, the slides and the sealed keys."""
import io
import json
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit import course
from retrieval_lit.cli import main

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
PLAIN = NBS / "answers"
SEALED = ROOT / "retrieval_lit" / "answers"

KEYS = {ex: entry for p in sorted(PLAIN.glob("*.json")) for ex, entry in json.loads(p.read_text()).items()}

# Numbers a package documents for its own sake, which an exercise asks the student to recompute: they are the
# library's docstrings (or the README), not the key; each is named here with the module and the reason.
DOCUMENTED = {
    ("0.5424", "retrieval_lit/lgap.py"): "20.1 / 23.1: the paper's LGAP@2 of Fig. 6 (eq. 15), the chapter's doctest",
    ("0.5424", "METADATA"): "20.1 / 23.1: the README's quick start prints the paper's Fig. 6 value",
    ("0.56484", "retrieval_lit/egr.py"): "30.1: the doctest of EGR on the chapter's worked list",
    ("0.8611", "retrieval_lit/evaluation.py"): "52.1: evaluate's doctest (AP = (29/36 + 33/36)/2)",
    ("0.5833", "retrieval_lit/evaluator.py"): "55.2: the Evaluator's doctest",
    ("0.3437", "retrieval_lit/egr_companions.py"): "56.1: the V-measure doctest, as scikit-learn's",
    ("0.3333", "retrieval_lit/display.py"): "08.3: 1/3, fmt_number's doctest",
    ("0.3333333333333333", "retrieval_lit/precision.py"): "08.3: 1/3, a precision doctest",
    ("252", "retrieval_lit/egr.py"): "95.2: C(10, 5), the orders of a tie group in a comment",
}


def _significant(form: str) -> int:
    "How many significant digits a printed number shows (0.5000 shows 1, 0.0476 shows 3, 252 shows 3)."
    digits = re.sub(r"[^0-9]", "", form.split("e")[0]).lstrip("0").rstrip("0")
    return len(digits)


def _forms(v: float) -> set:
    "The common ways a program or a person prints v."
    v = float(v)
    forms = {repr(v), str(v), f"{v:.6g}", f"{v:.10g}", f"{v:.12g}", f"{v:.15g}", f"{v:.17g}", f"{v:g}", f"{v:.3f}",
             f"{v:.4f}", f"{v:.5f}", f"{v:.6f}", f"{v:.3e}", f"{v:.6e}", json.dumps(v)}
    if v.is_integer():
        forms.add(str(int(v)))
    return {f for f in forms if _significant(f) >= 3}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    "The files of the wheel `pip wheel .` builds from this tree, {name: text}."
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation", "-q",
                    "-w", str(out)], check=True, capture_output=True, cwd=out)
    (whl,) = out.glob("retrieval_lit-*.whl")
    with zipfile.ZipFile(whl) as z:
        return {n: z.read(n).decode("utf-8", "replace") for n in z.namelist()}


def test_the_wheel_ships_sealed_keys_and_no_plain_ones(wheel):
    shipped = {n.split("/")[-1]: t for n, t in wheel.items() if n.startswith("retrieval_lit/answers/")}
    assert sorted(shipped) == sorted(p.name for p in PLAIN.glob("*.json")) == sorted(p.name for p in SEALED.glob("*.json"))
    for name, text in shipped.items():
        assert text == (SEALED / name).read_text()
        for entry in json.loads(text).values():
            assert "value" not in entry and set(entry) == {"n", "rtol", "atol", "close_rtol", "close_atol", "grid",
                                                           "salt", "right", "close"}
    assert not [n for n in wheel if "nbs/" in n or n.endswith(".ipynb")]


def test_no_answer_can_be_read_from_the_installed_package(wheel):
    """Every file of the wheel searched for every key's numbers in every common printed form (those with three or more
    significant digits: 0.5, 0.75 or 7 are in any program). Hits outside the keys are only the numbers the library
    documents itself (DOCUMENTED)."""
    assert len(KEYS) >= 50
    hits = set()
    for ex, entry in KEYS.items():
        for v in np.atleast_1d(np.asarray(entry["value"], dtype=float)).tolist():
            for form in _forms(v):
                pattern = re.compile(r"(?<![\w.])" + re.escape(form) + r"(?!\d|\.\d|[A-Za-z_])")
                for name, text in wheel.items():
                    if pattern.search(text):
                        hits.add((form, name.split(".dist-info/")[-1], ex))
    assert not [h for h in hits if h[1].startswith("retrieval_lit/answers/") or h[1] == "retrieval_lit/course.py"], hits
    assert {(form, name) for form, name, _ in hits} <= set(DOCUMENTED), sorted(hits)


def _tol(v, rtol, atol):
    return max(rtol * abs(v), atol)


@pytest.mark.parametrize("exercise_id", sorted(KEYS))
def test_check_grades_every_key_right_close_and_wrong(exercise_id):
    "For each key: its value is right, each number moved within the tolerance still right, moved past it close, past the close one wrong."
    entry = KEYS[exercise_id]
    value = np.asarray(entry["value"], dtype=float)
    rtol, atol, close_rtol, close_atol = course._tolerances(entry)
    flat = value.reshape(-1)
    answer = lambda x: x.reshape(value.shape).tolist()
    assert course.check(exercise_id, entry["value"], quiet=True) == "right"
    for i, v in enumerate(flat.tolist()):
        right, close = _tol(v, rtol, atol), _tol(v, close_rtol, close_atol)
        assert close >= 10 * right
        for step, verdict in ((0.9 * right, "right"), (-0.9 * right, "right"), (3 * right, "close"),
                              (-3 * right, "close"), (1.3 * close, "wrong"), (-1.3 * close, "wrong")):
            moved = flat.copy()
            moved[i] = v + step
            assert course.check(exercise_id, answer(moved), quiet=True) == verdict, (exercise_id, i, step)


def test_the_sealed_keys_are_the_plain_ones_sealed(tmp_path):
    "Each sealed entry has its plain entry's tolerances and shape, and sealing again changes no file (the salts kept)."
    for ex, entry in KEYS.items():
        sealed = course._answer_key(ex.split(".")[0])[ex]
        rtol, atol, close_rtol, close_atol = course._tolerances(entry)
        value = np.asarray(entry["value"])
        assert (sealed["rtol"], sealed["atol"], sealed["close_rtol"], sealed["close_atol"]) == (rtol, atol, close_rtol, close_atol)
        assert sealed["n"] == (None if value.ndim == 0 else value.size)
    copy = tmp_path / "answers"
    shutil.copytree(SEALED, copy)
    out = io.StringIO()
    assert main(["course", "--seal", str(copy), "--nbs", str(NBS)], out=out) == 0
    assert f"sealed {len(list(PLAIN.glob('*.json')))} answer keys" in out.getvalue()
    assert {p.name: p.read_text() for p in copy.glob("*.json")} == {p.name: p.read_text() for p in SEALED.glob("*.json")}


def test_a_plain_key_refused_for_sealing_is_named(tmp_path, capsys):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "97.json").write_text(json.dumps({"97.1": {"value": 0.5, "rtol": 0, "atol": 0}}))
    from retrieval_lit import RetrievalInputError
    with pytest.raises(RetrievalInputError, match=r"^`answers` .*plain/97.json: entry '97.1': its tolerances must be"):
        course.seal_answer_keys(tmp_path / "plain", tmp_path / "sealed")
    assert main(["course", "--seal", str(tmp_path / "sealed"), "--answers", str(tmp_path / "none")]) == 2
    assert "`plain` must be a folder of plain answer keys" in capsys.readouterr().err


def test_the_teacher_copy_holds_the_plain_keys_and_the_student_copy_does_not(tmp_path):
    out = io.StringIO()
    assert main(["course", "--teacher", str(tmp_path / "teacher"), "--nbs", str(NBS)], out=out) == 0
    teacher = tmp_path / "teacher"
    assert sorted(p.name for p in (teacher / "answers").glob("*.json")) == sorted(p.name for p in PLAIN.glob("*.json"))
    table = (teacher / "answers.md").read_text()
    assert "| 95.1 | 0.6456349206349207 | rtol 0.0001 | rtol 0.01 |" in table        # to the 4 decimals printed
    solutions = "".join("".join(c["source"]) for c in json.loads((teacher / "95_course.ipynb").read_text())["cells"])
    assert "### Solution 95.1" in solutions                                   # the notebooks keep their solutions
    assert main(["course", "--student", str(tmp_path / "student"), "--nbs", str(NBS)], out=io.StringIO()) == 0
    assert not (tmp_path / "student" / "answers").exists()
    assert main(["course", "--teacher", str(tmp_path / "teacher"), "--nbs", str(NBS)]) == 2      # not empty: refused


def test_the_slides_hold_each_session_and_its_chapters(tmp_path):
    "One deck per session (the chapters not run here: tests/test_course_slides.py runs them); the HTML is only read."
    out = io.StringIO()
    assert main(["course", "--slides", str(tmp_path / "slides"), "--nbs", str(NBS), "--no-execute"], out=out) == 0
    decks = sorted((tmp_path / "slides").glob("*.html"))
    assert [d.name for d in decks] == [f"session-{n:02d}.slides.html" for n in range(1, 11)]
    assert (tmp_path / "slides" / "reveal.js" / "dist" / "reveal.js").is_file()           # copied beside the decks
    for deck, (number, topic, chapters, _) in zip(decks, course.SESSIONS):
        html = deck.read_text()
        assert f"Session {number}: {topic}" in html and '"reveal.js/dist/reveal.js"' in html      # loaded from beside it
        for c in chapters:
            (nb,) = NBS.glob(f"{c}_*.ipynb")
            title = "".join(json.loads(nb.read_text())["cells"][0]["source"]).split("\n")[0].lstrip("# ").strip()
            assert re.split(r"[:'&`]", title)[0].strip() in html, (deck.name, title)   # (before any escaped character)
        assert "### Solution" not in html and "Solution " + chapters[0] + ".1" not in html
        assert html.count("<section") >= 1 + 2 * len(chapters)               # a title, and at least two per chapter


@pytest.mark.parametrize("sessions, message", [([11], "`sessions` must be session numbers"),
                                               ([True], "`sessions` must be session numbers"),
                                               ([], "`sessions` must be session numbers")])
def test_slides_refuse_bad_sessions(tmp_path, sessions, message):
    from retrieval_lit import RetrievalInputError
    with pytest.raises(RetrievalInputError, match=re.escape(message)):
        course.write_slides(tmp_path / "s", NBS, sessions=sessions)
