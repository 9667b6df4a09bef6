"""The house's shape, checked: chapters that read (small export cells), a surface a user can hold, one contract for
relevance sources. DEVELOPING.md states each rule; these tests keep it true."""
import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest

import retrieval_lit

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
MAX_CELL_LINES = 50        # an export cell holds one idea: at most this many lines ...
MAX_KERNEL_LINES = 80      # ... or, in a compute-kernel chapter, one function (a kernel) of at most this many
KERNEL_CHAPTERS = ("09_", "32_", "57_", "58_", "60_", "61_", "62_")   # the scores, EGR, TREC, engine, Dask, GPU kernels
MAX_PUBLIC_NAMES = 250


def _export_cells():
    for path in sorted(NBS.glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            src = "".join(cell["source"])
            if cell["cell_type"] == "code" and re.match(r"#\|\s*export", src):
                yield path.name, cell["id"], src


def _definitions(src: str) -> int:
    body = "\n".join(line for line in src.splitlines() if not line.startswith("#|"))
    return sum(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) for n in ast.parse(body).body)


def _docstring_lines(src: str) -> int:
    "Lines of the docstrings of the cell's top-level definitions: documentation, not code, so the rule leaves them out."
    body = "\n".join("" if line.startswith("#|") else line for line in src.splitlines())
    out = 0
    for node in ast.parse(body).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and ast.get_docstring(node):
            doc = node.body[0]
            out += doc.end_lineno - doc.lineno + 1
    return out


def oversized(cells) -> list:
    """The export cells that break the rule: over MAX_CELL_LINES lines (docstrings not counted), unless one function of
    at most MAX_KERNEL_LINES in a kernel chapter."""
    out = []
    for name, cell_id, src in cells:
        n = len(src.rstrip("\n").splitlines()) - _docstring_lines(src)
        one_function = _definitions(src) == 1 and re.search(r"^(async )?def ", src, re.M) is not None
        kernel = one_function and name.startswith(KERNEL_CHAPTERS)
        if n > MAX_CELL_LINES and not (kernel and n <= MAX_KERNEL_LINES):
            out.append(f"{name} {cell_id}: {n} lines")
    return out


def test_the_rule_catches_a_long_cell_and_spares_a_kernel():
    long_cell = "#| export\n" + "\n".join(f"x{i} = {i}" for i in range(60))
    kernel = "#| export\ndef k(a):\n" + "\n".join(f"    a += {i}" for i in range(70)) + "\n    return a"
    two_defs = "#| export\ndef a():\n" + "    pass\n" * 30 + "def b():\n" + "    pass\n" * 30
    documented = "#| export\ndef f(a):\n    \"\"\"" + "\n".join(["a line of documentation"] * 40) + "\"\"\"\n    return a"
    cells = [("09_x", "1", long_cell), ("09_x", "2", kernel), ("09_x", "3", two_defs), ("10_x", "4", kernel),
             ("10_x", "5", documented)]
    assert oversized(cells) == ["09_x 1: 61 lines", "09_x 3: 63 lines", "10_x 4: 73 lines"]   # a kernel only where kernels live


def test_no_export_cell_is_a_code_dump():
    assert oversized(_export_cells()) == []


def public_names() -> dict:
    out = {}
    for m in pkgutil.iter_modules(retrieval_lit.__path__):
        if m.ispkg or m.name.startswith("_"):
            continue
        names = getattr(importlib.import_module(f"retrieval_lit.{m.name}"), "__all__", None)
        if names is not None:
            out[m.name] = list(names)
    return out


def test_the_public_surface_stays_small():
    names = public_names()
    total = sum(len(v) for v in names.values())
    assert 50 < total <= MAX_PUBLIC_NAMES, {m: len(v) for m, v in names.items()}


def test_only_the_relevance_chapter_reads_a_sources_kind():
    readers = [p.name for p in (ROOT / "retrieval_lit").glob("*.py")
               if p.name != "relevance.py" and re.search(r"\b(rel|relevance)\.kind\b", p.read_text())]
    assert readers == []


# ---------------------------------------------------------------- issue 42: one home per idea, checked by ast
PACKAGE = ROOT / "retrieval_lit"
MAX_POSITIONAL = 8         # a function takes at most this many positional parameters: more travel in a named structure
MAX_WIDTH = 120            # no line of a module or of a notebook's code cell is wider
# modules other helpers are reworking (issue 42's kernels and named structures); the lead makes the rules strict after
# merging them
BEING_FIXED = ("engine.py", "sharded.py", "score_kernel.py", "score_ranking.py", "labs/hashing.py", "compare.py",
               "evaluator.py", "trec.py")
# the files issue 42's registry pass (this branch) made hold the width rule: held strictly now
WIDTH_HELD = ("04_metrics.ipynb", "08_names.ipynb", "10_precision.ipynb", "11_average_precision.ipynb", "12_dcg.ipynb",
              "13_scores.ipynb", "15_err.ipynb", "50_evaluation.ipynb", "62_torch_engine.ipynb", "metrics.py", "names.py",
              "precision.py", "average_precision.py", "dcg.py", "err.py", "evaluation.py", "torch_engine.py")


def _modules() -> list:
    return [p for p in sorted(PACKAGE.rglob("*.py")) if p.name != "_modidx.py"]


def _name(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix() if PACKAGE in path.parents else path.name


def underscore_imports(source: str) -> list:
    "The names of `from ... import _name` (another module's private name) in a module's source; dunders apart."
    return [a.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)
            for a in node.names if a.name.startswith("_") and not a.name.startswith("__")]


def wide_positional(source: str, limit: int = MAX_POSITIONAL) -> list:
    "(function, line, positional parameters) of every function that takes more than `limit` positional parameters."
    return [(n.name, n.lineno, len(n.args.posonlyargs) + len(n.args.args)) for n in ast.walk(ast.parse(source))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and len(n.args.posonlyargs) + len(n.args.args) > limit]


def wide_lines(path: Path, limit: int = MAX_WIDTH) -> list:
    """(where, width) of every line wider than `limit`: a module's lines (its first, the docstring nbdev writes from
    the notebook's one-line summary, apart), or a notebook's code cells."""
    if path.suffix == ".py":
        lines = path.read_text(encoding="utf-8").splitlines()
        return [(f"{_name(path)}:{i + 1}", len(l)) for i, l in enumerate(lines) if i > 0 and len(l) > limit]
    out = []
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            out += [(f"{path.name} {cell['id']}", len(l)) for l in "".join(cell["source"]).splitlines() if len(l) > limit]
    return out


def test_the_checkers_catch_what_they_look_for():
    assert underscore_imports("from .a import _b, c\nfrom __future__ import annotations\nimport _d") == ["_b"]
    assert underscore_imports("from retrieval_lit.x import (y,\n    _z as z)") == ["_z"]
    assert wide_positional("def f(a, b, c, d, e, f, g, h, i): pass\ndef g(a, *, b, c, d, e, f, g, h, i): pass\n"
                           "class C:\n    def m(self, a, b, c, d, e, f, g, h): pass") == [("f", 1, 9), ("m", 4, 9)]


def test_no_module_imports_another_modules_underscore_names():
    "Machinery another module reads is named without an underscore (#| exporti); nothing private crosses a module."
    found = {_name(p): underscore_imports(p.read_text(encoding="utf-8")) for p in _modules()}
    assert {m: names for m, names in found.items() if names} == {}


def test_at_most_eight_positional_parameters_outside_the_modules_being_fixed():
    found = {_name(p): wide_positional(p.read_text(encoding="utf-8")) for p in _modules() if _name(p) not in BEING_FIXED}
    assert {m: f for m, f in found.items() if f} == {}


def test_at_most_eight_positional_parameters_everywhere():
    found = {_name(p): wide_positional(p.read_text(encoding="utf-8")) for p in _modules()}
    assert {m: f for m, f in found.items() if f} == {}


def test_lines_at_most_120_characters_where_held():
    paths = [p for p in _modules() + sorted(NBS.glob("*.ipynb")) if _name(p) in WIDTH_HELD]
    assert len(paths) == len(WIDTH_HELD)
    assert [w for p in paths for w in wide_lines(p)] == []


@pytest.mark.xfail(strict=False, reason="lines over 120 characters remain in chapters and modules outside issue 42's "
                                        "registry pass (the assertion lists them); each helper fixes its own files")
def test_lines_at_most_120_characters_everywhere():
    assert [w for p in _modules() + sorted(NBS.glob("*.ipynb")) for w in wide_lines(p)] == []
