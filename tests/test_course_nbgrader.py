"""Issue 45: the course in nbgrader, run through the real nbgrader (a dev dependency): `retrieval-lit course --nbgrader`
writes the course folder, `nbgrader generate_assignment` makes the release, and `nbgrader autograde` gives full marks
to a submission holding the book's solutions and zero to the untouched release. One session's assignment is graded
(session 2: chapters 02, 04 and 08, whose keyed exercises are 02.1, 08.1 and 08.3), to keep the runtime to a few
minutes: autograding runs every chapter of the assignment, twice."""
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from retrieval_lit import course
from retrieval_lit.cli import main

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
SESSION = 2


def _nbgrader(course_dir: Path, *args) -> subprocess.CompletedProcess:
    "The installed nbgrader, run in the course folder (where it reads nbgrader_config.py)."
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course_dir, capture_output=True, text=True,
                          timeout=1800)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    pytest.importorskip("nbgrader")
    from nbgrader.api import Gradebook
    root = tmp_path_factory.mktemp("nbgrader") / "course"
    assert main(["course", "--nbgrader", str(root), "--nbs", str(NBS), "--sessions", str(SESSION)], out=io.StringIO()) == 0
    assignment = f"session-{SESSION:02d}"
    made = _nbgrader(root, "generate_assignment", assignment, "--force")
    assert made.returncode == 0, made.stderr[-3000:]
    shutil.copytree(root / "source" / assignment, root / "submitted" / "book" / assignment)     # the book's solutions
    shutil.copytree(root / "release" / assignment, root / "submitted" / "untouched" / assignment)
    done = _nbgrader(root, "autograde", assignment, "--force")
    assert done.returncode == 0, done.stderr[-3000:]
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        scores = {s: (gb.find_submission(assignment, s).score, gb.find_submission(assignment, s).max_score)
                  for s in ("book", "untouched")}
    return root, assignment, scores


def test_the_course_folder_is_in_nbgrader_s_layout(graded):
    root, assignment, _ = graded
    chapters = [c for n, _, cs, _ in course.SESSIONS if n == SESSION for c in cs]
    assert sorted(p.name[:2] for p in (root / "source" / assignment).glob("*.ipynb")) == sorted(chapters)
    assert (root / "nbgrader_config.py").is_file()
    cells = [c for p in (root / "source" / assignment).glob("*.ipynb") for c in json.loads(p.read_text())["cells"]]
    tests = [c for c in cells if c["metadata"].get("nbgrader", {}).get("grade")]
    keyed = [ex for c in chapters for ex in course._answer_key(c)]
    assert sorted(c["metadata"]["nbgrader"]["grade_id"] for c in tests) == sorted(f"check-{e.replace('.', '-')}" for e in keyed)
    assert all(c["metadata"]["nbgrader"]["points"] == course.POINTS and c["metadata"]["nbgrader"]["locked"] for c in tests)
    solutions = [c for c in cells if c["metadata"].get("nbgrader", {}).get("solution")]
    assert solutions and all("### BEGIN SOLUTION" in "".join(c["source"]) for c in solutions)


def test_the_release_holds_no_solution(graded):
    root, assignment, _ = graded
    for p in (root / "release" / assignment).glob("*.ipynb"):
        text = p.read_text()
        assert "BEGIN SOLUTION" not in text and "raise NotImplementedError()" in text
        assert "### Solution" not in text


def test_autograde_gives_the_book_full_marks_and_the_untouched_release_zero(graded):
    _, _, scores = graded
    score, max_score = scores["book"]
    assert max_score == course.POINTS * len([ex for n, _, cs, _ in course.SESSIONS if n == SESSION
                                             for c in cs for ex in course._answer_key(c)]) > 0
    assert score == max_score
    assert scores["untouched"] == (0.0, max_score)


def test_a_close_answer_earns_half(tmp_path):
    "The test cell's value is nbgrader's partial credit: the marking scheme's right / close / wrong."
    (_, sol, test) = course._nbgrader_cells("95", 1, "", 'w = 0.646\nassert check("95.1", w, quiet=True) == "close"', True)
    for answer, marks in ((1 - (1 / 6 + 2 / 7 + 3 / 8 + 4 / 9 + 5 / 10) / 5, 4), (0.646, 2), (0.5, 0)):
        space = {"answer_95_1": answer}
        exec("\n".join(test["source"].splitlines()[:-1]), space)
        assert eval(test["source"].splitlines()[-1], space) == marks
