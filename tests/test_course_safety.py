"""Issue 45: `retrieval-lit course` never destroys what it did not write. Each case leaves canary files (files that
must survive byte for byte) where the command writes, and checks them after. As root no permission stops a write, so
an unwritable folder is made two ways: a path that runs through a regular file (always), and a folder made immutable
with `chattr +i` where the file system allows it (else that case is skipped, saying why); as another user, chmod."""
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from retrieval_lit import course
from retrieval_lit.cli import main

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
PLAIN = NBS / "answers"
SEALED = ROOT / "retrieval_lit" / "answers"
CANARY = b"\x00canary: must survive \xe9 byte for byte\n"


def _canaries(folder: Path, *names) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    for n in names:
        (folder / n).write_bytes(CANARY + n.encode())
    return {folder / n: CANARY + n.encode() for n in names}


def _survived(canaries: dict) -> None:
    for path, data in canaries.items():
        assert path.read_bytes() == data, f"{path} was changed"


def _run(capsys, *argv) -> tuple:
    code = main(["course", *map(str, argv)])
    err = capsys.readouterr().err
    return code, err


# ----------------------------------------------------------------------------- --seal
def test_seal_refuses_a_folder_holding_files_it_did_not_write(tmp_path, capsys):
    dest = tmp_path / "sealed"
    shutil.copytree(SEALED, dest)
    canaries = _canaries(dest, "95.json", "notes.txt")        # the user's own 95.json (not sealed) and a note
    code, err = _run(capsys, "--seal", dest, "--nbs", NBS)
    assert code == 2 and err.count("\n") == 1 and "did not write (95.json, notes.txt)" in err and "--replace" in err
    _survived(canaries)
    assert (dest / "11.json").read_text() == (SEALED / "11.json").read_text()          # nothing written at all


def test_seal_with_replace_overwrites_only_the_keys_and_keeps_other_files(tmp_path, capsys):
    dest = tmp_path / "sealed"
    shutil.copytree(SEALED, dest)
    canaries = _canaries(dest, "notes.txt", "77.json")        # 77.json: not sealed, no plain key: not ours to delete
    (dest / "95.json").write_text("my own notes on chapter 95")
    stale = course._seal("98.1", {"value": 0.5})
    (dest / "98.json").write_text(json.dumps({"98.1": stale}))  # a sealed key with no plain key left: removed
    code, err = _run(capsys, "--seal", dest, "--nbs", NBS, "--replace")
    assert code == 0, err
    _survived(canaries)
    resealed = course._sealed_file(dest / "95.json")                 # sealed afresh (new salts): a key, not the note
    assert resealed is not None and set(resealed) == set(json.loads((SEALED / "95.json").read_text()))
    assert (dest / "11.json").read_text() == (SEALED / "11.json").read_text()     # unchanged keys keep their salts
    assert not (dest / "98.json").exists()


def test_seal_refuses_to_write_into_the_folder_it_reads(tmp_path, capsys):
    plain = tmp_path / "answers"
    shutil.copytree(PLAIN, plain)
    before = {p.name: p.read_bytes() for p in plain.iterdir()}
    for argv in (["--seal", plain, "--answers", plain], ["--seal", plain, "--nbs", tmp_path],
                 ["--seal", tmp_path / "." / "answers", "--answers", plain, "--replace"]):
        code, err = _run(capsys, *argv)
        assert code == 2 and "is the folder the plain keys are read from" in err, err
    assert {p.name: p.read_bytes() for p in plain.iterdir()} == before
    nbs = tmp_path / "nbs"                                    # and a teacher's copy still reads them afterwards
    nbs.mkdir()
    shutil.copy(NBS / "95_course.ipynb", nbs)
    assert main(["course", "--teacher", str(tmp_path / "teacher"), "--nbs", str(nbs), "--answers", str(plain)]) == 0


@pytest.mark.parametrize("name, data, says", [
    ("95.json", b'{"95.1": {"value": NaN, "rtol": 1e-9}}', "entry '95.1': 'value' must be finite"),
    ("95.json", '{"95.1": {"value": 0.5, "rtol": 1e-9, "note": "é"}}'.encode("latin-1"), "not UTF-8 text"),
    ("95.json", b'{"95.1": {"value": 0.5,', "is not valid JSON"),
    ("95.json", b'{"95.1": {"value": [[1, 2]], "rtol": 1e-9}}', "entry '95.1': 'value' must be a number or a flat list"),
    ("95.json", b'{"95.1": {"value": 0.5, "rtol": 2}}', "entry '95.1': each tolerance"),
    ("95.json", b'{"11.1": {"value": 0.5}}', "the id '11.1' is not an exercise of chapter 95"),
    ("95.json", b'[1, 2]', "must hold one JSON object"),
    ("95.json", b'{"95.1": {"value": 0.64, "printed": "0.7"}}', "the printed 0.7 is not its value rounded"),
    ("95.json", b'{"95.1": {"value": 0.65, "printed": 0.65}}', "entry '95.1': 'printed' must be"),
])
def test_every_bad_key_file_is_one_line_naming_the_file_and_the_key(tmp_path, capsys, name, data, says):
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / name).write_bytes(data)
    dest = tmp_path / "sealed"
    canaries = _canaries(dest, "11.json")
    shutil.copy(SEALED / "11.json", dest / "11.json")
    canaries[dest / "11.json"] = (SEALED / "11.json").read_bytes()
    for option, folder in (("--seal", dest), ("--teacher", tmp_path / "teacher")):
        code, err = _run(capsys, option, folder, "--answers", plain, "--nbs", NBS)
        assert code == 2 and err.count("\n") == 1 and str(plain / name) in err and says in err, err
    _survived(canaries)
    assert not (tmp_path / "teacher").exists()


def test_a_sealed_key_read_as_a_plain_one_is_one_line(tmp_path, capsys):
    "The issue's case: a folder of sealed keys given as the plain keys (after an old --seal into nbs/answers)."
    code, err = _run(capsys, "--teacher", tmp_path / "t", "--answers", SEALED, "--nbs", NBS)
    assert code == 2 and err.count("\n") == 1 and "entry" in err and "Traceback" not in err


# ----------------------------------------------------------------------------- folders that cannot be written
@pytest.fixture
def read_only(tmp_path):
    "A folder no one may write into, root included (chattr +i), or chmod for another user; skipped where neither works."
    folder = tmp_path / "ro"
    folder.mkdir()
    canaries = _canaries(folder, "keep.txt")
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder, canaries
        folder.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode:
        pytest.skip("as root, only an immutable folder (chattr +i) cannot be written, and this file system has none")
    try:
        yield folder, canaries
    finally:
        subprocess.run(["chattr", "-i", str(folder)], check=True)


@pytest.mark.parametrize("option", ["--student", "--teacher", "--slides", "--seal", "--nbgrader"])
def test_an_output_under_a_file_is_refused_before_any_work(tmp_path, capsys, option):
    canaries = _canaries(tmp_path, "a-file")
    code, err = _run(capsys, option, tmp_path / "a-file" / "out", "--nbs", NBS)
    assert code == 2 and err.count("\n") == 1 and "is a file, not a folder" in err, err
    _survived(canaries)


@pytest.mark.parametrize("option", ["--student", "--slides", "--seal", "--nbgrader"])
def test_an_output_in_a_read_only_folder_is_refused_before_any_work(read_only, capsys, option):
    folder, canaries = read_only
    code, err = _run(capsys, option, folder / "out", "--nbs", NBS)
    assert code == 2 and err.count("\n") == 1 and "cannot be written" in err and "Traceback" not in err, err
    _survived(canaries)
    assert sorted(p.name for p in folder.iterdir()) == ["keep.txt"]


def test_the_writers_refuse_a_folder_that_holds_files(tmp_path, capsys):
    for option in ("--student", "--teacher", "--slides", "--nbgrader"):
        canaries = _canaries(tmp_path / option.strip("-"), "mine.ipynb")
        code, err = _run(capsys, option, tmp_path / option.strip("-"), "--nbs", NBS)
        assert code == 2 and "is not an empty folder" in err, (option, err)
        _survived(canaries)


@pytest.mark.parametrize("argv, says", [
    (["--student", ""], "`--student` must name a folder, got an empty string"),
    (["--slides", " "], "`--slides` must name a folder"),
    (["--seal", ""], "`--seal` must name a folder"),
    (["--student", "x", "--nbs", ""], "`--nbs` must name a folder"),
    (["--teacher", "x", "--answers", ""], "`--answers` must name a folder"),
])
def test_an_empty_folder_name_is_one_error_not_a_traceback(capsys, argv, says):
    "Issue 46: `retrieval-lit course --student ''` ended in a TypeError traceback."
    code, err = _run(capsys, *argv)
    assert code == 2 and says in err and err.count("\n") == 1, err
