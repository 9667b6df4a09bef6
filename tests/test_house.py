"""The house's shape, checked: chapters that read (small export cells), a surface a user can hold, one contract for
relevance sources. DEVELOPING.md states each rule; these tests keep it true."""
import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

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
