"""The classroom (issue 26): `course.check` against the answer keys shipped in the package, student copies of the
notebooks (solutions removed, stub cells stubbed) that still run from top to bottom, and `retrieval-lit course`."""
import io
import json
import math
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from retrieval_lit import RetrievalInputError, course
from retrieval_lit.cli import main

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
ANSWERS = ROOT / "nbs" / "answers"                  # the plain keys (source tree only; the package ships digests)

# exercise 95.1, computed here from its definition: Fig. 2 of Ding, Li & Li (2018), AP over all orders of one tie group
# of 5 relevant and 5 irrelevant items: relevant first gives 1, relevant last the mean of the precisions below
FIG2_WIDTH = 1 - sum(i / (5 + i) for i in range(1, 6)) / 5


# ----------------------------------------------------------------------------- check
def test_check_says_right_close_and_wrong(capsys):
    assert course.check("95.1", FIG2_WIDTH) == "right"
    assert "95.1: right" in capsys.readouterr().out
    assert course.check("95.1", round(FIG2_WIDTH, 4)) == "right"                     # the four decimals the book prints
    assert course.check("95.1", round(FIG2_WIDTH, 3)) == "close"                     # fewer: not within 1e-4
    out = capsys.readouterr().out
    assert "95.1: close" in out and "0.0001" in out and "0.01" in out             # the tolerances are named
    assert course.check("95.1", 0.5) == "wrong"
    assert "95.1: wrong" in capsys.readouterr().out
    assert course.check("95.1", np.float64(FIG2_WIDTH), quiet=True) == "right"    # numpy scalars, one-item lists
    assert course.check("95.1", [FIG2_WIDTH], quiet=True) == "right"
    assert course.check("95.1", FIG2_WIDTH * (1 + 5e-10), quiet=True) == "right"
    assert course.check("95.1", FIG2_WIDTH * (1 + 5e-3), quiet=True) == "close"
    assert course.check("95.1", FIG2_WIDTH * (1 + 2e-2), quiet=True) == "wrong"
    assert capsys.readouterr().out == ""                                           # quiet prints nothing


def test_check_checks_a_list_number_by_number(capsys):
    orders = math.comb(10, 5)                                                      # 95.2: [orders, orders with AP > 0.9]
    assert course.check("95.2", [orders, 7], quiet=True) == "right"
    assert course.check("95.2", np.array([orders, 7.0]), quiet=True) == "right"
    assert course.check("95.2", [orders, 7.01], quiet=True) == "close"
    assert course.check("95.2", [7, orders], quiet=True) == "wrong"                # the order the exercise asks for
    assert course.check("95.2", [orders, 8]) == "wrong"
    assert "(1 of 2 numbers right)" in capsys.readouterr().out


def test_check_never_prints_the_answer(capsys):
    for guess in (FIG2_WIDTH, round(FIG2_WIDTH, 3), 0.1, 0.9, 100.0):
        course.check("95.1", guess)
    for guess in ([252, 7], [250, 7], [1, 1]):
        course.check("95.2", guess)
    out = capsys.readouterr().out
    digits = re.findall(r"\d+(?:\.\d+)?", out)
    assert not {"0.6456", "0.646", "0.65", "252", "7"} & set(digits), out
    assert not [d for d in digits if d.startswith("0.64")], out


@pytest.mark.parametrize("exercise_id, answer, quiet, message", [
    ("95.9", 1.0, False, "`exercise_id` '95.9' has no answer to check"),
    ("11", 1.0, False, "`exercise_id` must name an exercise as 'CC.N'"),
    (95.1, 1.0, False, "`exercise_id` must name an exercise as 'CC.N'"),
    ("95.01", 1.0, False, "`exercise_id` must name an exercise"),
    ("95.1", [1.0, 2.0], False, "`answer` must be one number for exercise 95.1"),
    ("95.2", 252, False, "`answer` must be a list of 2 numbers for exercise 95.2"),
    ("95.2", [[252, 7]], False, "`answer` must be a list of 2 numbers"),
    ("95.1", float("nan"), False, "`answer` must hold finite numbers"),
    ("95.2", [252, float("inf")], False, "`answer` must hold finite numbers"),
    ("95.1", True, False, "`answer` must be a number, not a truth value"),
    ("95.1", "0.65", False, "`answer`"),
    ("95.1", None, False, "`answer`"),
    ("95.1", 0.5, "yes", "`quiet`"),
])
def test_check_refuses_bad_input(exercise_id, answer, quiet, message):
    with pytest.raises(RetrievalInputError) as e:
        course.check(exercise_id, answer, quiet=quiet)
    assert str(e.value).startswith(message), str(e.value)


def _exercise_count(nb: dict) -> int:
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        m = re.search(r"^## Exercises\s*$", text, re.M)
        if cell["cell_type"] == "markdown" and m:
            return len(re.findall(r"^\d+\. ", text[m.end():], re.M))
    return 0


@pytest.mark.parametrize("key_file", sorted(ANSWERS.glob("*.json")), ids=lambda p: p.name)
def test_every_answer_key_is_well_formed_and_wired_to_its_solution(key_file):
    "Each key loads, names exercises its chapter has, and each entry's solution asserts check(...) == 'right'."
    chapter = key_file.stem
    key = course._plain_key(key_file)
    assert key == json.loads(key_file.read_text()) and key
    assert set(course._answer_key(chapter)) == set(key)                              # sealed in the package, every entry
    (nb_path,) = NBS.glob(f"{chapter}_*.ipynb")
    nb = json.loads(nb_path.read_text())
    n = _exercise_count(nb)
    text = "\n".join("".join(c["source"]) for c in nb["cells"])
    for exercise_id, entry in key.items():
        assert 1 <= int(exercise_id.split(".")[1]) <= n, f"{exercise_id}: {nb_path.name} has {n} exercises"
        assert course.check(exercise_id, entry["value"], quiet=True) == "right"
        assert re.search(rf"check\(\s*\"{re.escape(exercise_id)}\"", text), f"no solution of {nb_path.name} checks {exercise_id}"


def test_a_broken_answer_key_is_named(tmp_path, monkeypatch):
    (tmp_path / "answers").mkdir()
    (tmp_path / "answers" / "98.json").write_text("{not json")
    (tmp_path / "answers" / "97.json").write_text(json.dumps({"97.1": {"value": 0.5, "rtol": 1e-9}}))   # plain: not sealed
    (tmp_path / "answers" / "96.json").write_text(json.dumps({"95.1": course._seal("95.1", {"value": 0.5})}))
    monkeypatch.setattr(course.importlib.resources, "files", lambda package: tmp_path)
    course._answer_key.cache_clear()
    try:
        with pytest.raises(RuntimeError, match=r"answers/98.json is not valid JSON"):
            course.check("98.1", 0.5)
        with pytest.raises(RuntimeError, match=r"answers/97.json: entry '97.1' is not a sealed entry"):
            course.check("97.1", 0.5)
        with pytest.raises(RuntimeError, match=r"answers/96.json: entry '95.1'"):      # an id of another chapter
            course.check("96.1", 0.5)
    finally:
        course._answer_key.cache_clear()


def test_an_answer_of_zero_is_checked_with_an_absolute_tolerance(tmp_path, monkeypatch, capsys):
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "96.json").write_text(json.dumps({"96.1": {"value": 0, "rtol": 1e-9},
                                                             "96.2": {"value": 2.5, "rtol": 0, "atol": 0.05}}))
    course.seal_answer_keys(tmp_path / "plain", tmp_path / "answers")
    monkeypatch.setattr(course.importlib.resources, "files", lambda package: tmp_path)
    course._answer_key.cache_clear()
    try:
        assert [course.check("96.1", a, quiet=True) for a in (0, 1e-13, -5e-7, 0.01)] == ["right", "right", "close", "wrong"]
        assert [course.check("96.2", a, quiet=True) for a in (2.54, 2.56, 3.1)] == ["right", "close", "wrong"]   # close: 10 atol
        course.check("96.2", 2.56)
        out = capsys.readouterr().out
        assert "not within an absolute tolerance of 0.05 as required" in out and "2.5" not in out.replace("0.05", "")
    finally:
        course._answer_key.cache_clear()


def test_the_answer_keys_are_package_data():
    "setup.py and MANIFEST.in ship retrieval_lit/answers/*.json, the sealed keys (not a Python package: find_packages skips it)."
    assert '"answers/*.json"' in (ROOT / "setup.py").read_text()
    assert "recursive-include retrieval_lit/answers *.json" in (ROOT / "MANIFEST.in").read_text()
    assert 'cp -r retrieval_lit/answers "$tmp/export/retrieval_lit/"' in (ROOT / "tests" / "check.sh").read_text()


# ----------------------------------------------------------------------------- student copies
SECRET = "SECRET-WORKED-ANSWER"


def _cell(kind, text):
    return {"cell_type": kind, "id": f"t{abs(hash(text)) % 10**7:07d}", "metadata": {}, "source": text,
            **({"outputs": [], "execution_count": None} if kind == "code" else {})}


@pytest.fixture(scope="module")
def handout(tmp_path_factory):
    """A teacher's folder (the book's notebooks, with worked solutions and a stub added to chapter 06 here) and the
    student copies written from it by the command line."""
    tmp = tmp_path_factory.mktemp("course")
    teacher = tmp / "nbs"
    shutil.copytree(NBS, teacher, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    nb = json.loads((teacher / "06_testing.ipynb").read_text())
    cut = next((i for i, c in enumerate(nb["cells"]) if "".join(c["source"]).startswith("## Solutions")),
               len(nb["cells"]))                       # the chapter's own solutions, if it has them, stay after
    nb["cells"][cut:cut] = [
        _cell("code", "#| student: stub\n# exercise 06.2: a ranked list to try\nsizes_06_9 = [2, 1]\nmy_list = None")]
    if cut == len(nb["cells"]) - 1:
        nb["cells"].append(_cell("markdown", "## Solutions"))
    nb["cells"] += [
        _cell("markdown", f"### Solution 06.1\n\n{SECRET} 2: a proof."),
        _cell("code", f"assert my_list == [1, 0, 1]\nraise AssertionError('{SECRET} 3: a solution ran in a student copy')"),
        _cell("markdown", f"### Solution 06.2\n\n{SECRET} 4"),
        _cell("code", "#| hide\nimport nbdev; nbdev.nbdev_export" + "()"),
    ]
    (teacher / "06_testing.ipynb").write_text(json.dumps(nb, indent=1))
    out = io.StringIO()
    assert main(["course", "--student", str(tmp / "handout"), "--nbs", str(teacher)], out=out) == 0
    assert f"wrote {len(list(teacher.glob('*.ipynb')))} student notebooks" in out.getvalue()
    return teacher, tmp / "handout"


def _sources(path):
    return ["".join(c["source"]) for c in json.loads(Path(path).read_text())["cells"]]


def test_student_copies_hold_no_solution_text(handout):
    teacher, student = handout
    assert sorted(p.name for p in student.glob("*.ipynb")) == sorted(p.name for p in teacher.glob("*.ipynb"))
    assert (student / "styles.css").is_file() and (student / "recorded").is_dir()     # the folder's other files too
    for path in student.glob("*.ipynb"):
        cells = _sources(path)
        assert not [c for c in cells if c.startswith(("## Solutions", "### Solution"))], path.name
        assert SECRET not in path.read_text(), path.name
        solutions = _sources(teacher / path.name)
        cut = next((i for i, c in enumerate(solutions) if c.startswith("## Solutions")), None)
        if cut is not None:                           # every cell of the teacher's Solutions part is gone
            everything = "\n".join(cells)
            assert not [c for c in solutions[cut + 1:] if c.strip() and not c.startswith("#| hide") and c in everything]
    cells = _sources(student / "06_testing.ipynb")
    assert cells[-1].startswith("#| hide") and "nbdev_export" in cells[-1]       # the closing export cell is kept
    stub = cells[-2]                                  # the stub kept as written: the question's data, names to fill
    assert stub.startswith("# Exercise: fill in the names set to None") and "my_list = None" in stub
    assert "student: stub" not in stub and "sizes_06_9 = [2, 1]" in stub
    teacher_stubs = sum(c.startswith("#| student: stub") for c in _sources(teacher / "95_course.ipynb"))
    assert sum(c.startswith("# Exercise: fill in the names") for c in _sources(student / "95_course.ipynb")) == teacher_stubs
    unchanged = _sources(teacher / "03_ranking.ipynb")
    if not any(c.startswith("## Solutions") for c in unchanged):
        assert _sources(student / "03_ranking.ipynb") == unchanged                 # nothing to remove: the same cells


@pytest.mark.parametrize("chapter", ["06_testing", "42_bayes_stepper", "95_course"])
def test_a_student_copy_runs_top_to_bottom(handout, chapter):
    "nbdev's own runner (execnb), as nbdev_test runs a chapter: every cell of the copy runs, stubs print their message."
    from execnb.nbio import read_nb
    from nbdev.test import test_nb
    _, student = handout
    ok, _ = test_nb(student / f"{chapter}.ipynb", skip_flags=["slow"], do_print=False)
    assert ok, f"the student copy of {chapter} failed (see the captured output)"
    if chapter == "06_testing":                       # the stub ran: its data is there, its names wait for the student
        from execnb.shell import CaptureShell
        nb = read_nb(student / f"{chapter}.ipynb")
        nb.cells = [c for c in nb.cells if "nbdev_export" not in c.source]
        shell = CaptureShell(student / f"{chapter}.ipynb")
        shell.run_all(nb, exc_stop=True)
        assert shell.user_ns["my_list"] is None and shell.user_ns["sizes_06_9"] == [2, 1]


def test_student_copies_refuse_a_stub_whose_names_a_kept_cell_needs(tmp_path):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    cells = [_cell("markdown", "## Exercises\n\n1. Q."), _cell("code", "#| student: stub\nx = 1"), _cell("code", "y = x + 1")]
    (nbs / "01_x.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    with pytest.raises(RetrievalInputError, match=r"^`nb` 01_x.ipynb: cell 2 uses x, which the `#\| student: stub` cell 1"):
        course.write_student_copies(tmp_path / "out", nbs)
    assert not (tmp_path / "out").exists()                      # checked before anything is written
    cells[2]["source"] = "x = 2\ny = x + 1"                     # a cell that defines x itself may use it
    (nbs / "01_x.ipynb").write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells}))
    assert [p.name for p in course.write_student_copies(tmp_path / "out", nbs)] == ["01_x.ipynb"]


def test_the_course_command_refuses_a_folder_in_use(handout, capsys):
    teacher, student = handout
    assert main(["course", "--student", str(student), "--nbs", str(teacher)]) == 2
    err = capsys.readouterr().err
    assert "`dest`" in err and "is not an empty folder" in err
    assert main(["course", "--student", str(teacher / "inside"), "--nbs", str(teacher)]) == 2
    assert "inside the notebook folder" in capsys.readouterr().err
    assert main(["course", "--student", str(student.parent / "other"), "--nbs", str(student.parent / "missing")]) == 2
    assert "`nbs` must be a folder of notebooks" in capsys.readouterr().err


def test_import_is_light():
    "The course module needs numpy and the standard library only (the CLI loads it only for `course`)."
    import subprocess
    import sys
    code = ("import sys, retrieval_lit.cli; print('retrieval_lit.course' in sys.modules); import retrieval_lit.course; "
            "print(any(m in sys.modules for m in ('matplotlib', 'nbformat', 'execnb', 'sklearn')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
