"""The book keeps its own rules (issue 44), one chapter at a time (`pytest tests/test_book_rules.py -k 10_precision`):

- every exported definition has its sentence in the markdown cell right before it and its check right after it (a
  code cell that asserts: a hand value, brute force, a plain loop); import and constant cells are exempt;
- the cutoff is k: no other cutoff letter in a chapter's markdown, docstrings or comments, outside a quotation
  (a source's own spelling is quoted: in quotation marks, or on a line that says it is quoted "as printed").

Each rule is also tested on made-up cells, so that it can fail."""
import ast
import json
import re
from pathlib import Path

import pytest

NBS = Path(__file__).resolve().parents[1] / "nbs"
CHAPTERS = sorted(p.name for p in NBS.glob("*.ipynb"))
EXPORT = re.compile(r"#\|\s*export")
CHECK = re.compile(r"\bassert\b|\btest_(?:eq|close|fail|ne|is|warns|stdout|shuffled|eq_type)\b")


def _source(cell) -> str:
    return "".join(cell["source"])


def _defined(src: str) -> list:
    "The functions and classes a cell defines at its top level (directives dropped)."
    body = "\n".join(line for line in src.splitlines() if not line.startswith("#|"))
    return [n.name for n in ast.parse(body).body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


def definition_faults(cells: list) -> list:
    """'name: no sentence before' / 'name: no check after' for each export cell that defines something: the cell
    before must be markdown with text, the cell after a code cell (not an export) that asserts."""
    out = []
    for i, cell in enumerate(cells):
        src = _source(cell)
        if cell["cell_type"] != "code" or not EXPORT.match(src):
            continue
        names = _defined(src)
        if not names:
            continue                               # imports and constants: exempt
        before = cells[i - 1] if i else None
        after = cells[i + 1] if i + 1 < len(cells) else None
        if before is None or before["cell_type"] != "markdown" or not _source(before).strip():
            out.append(f"{names[0]}: no sentence before")
        if (after is None or after["cell_type"] != "code" or EXPORT.match(_source(after))
                or not CHECK.search(_source(after))):
            out.append(f"{names[0]}: no check after")
    return out


# A cutoff letter: after a metric's @ (P@K, AP@$p$, nDCG@p) or after the word "cutoff". Allowed: k; R (R-precision,
# recall@R, MAP@R: the cutoff is the count of relevant items); r, d, ℓ (a Hamming radius: P@d_H<=r, P@r).
_AT = re.compile(r"\b(?:P|AP|nDCG|DCG|iDCG|NDCG|R|recall|Recall|mAP|MAP|map|p|ndcg|egr|EGR|rbp|RBP|ERR|err|success|Success|"
                 r"RR|mrr|MRR|F1|f1)@\{?\$?([A-Za-z])(?![A-Za-z_(])")
_CUT = re.compile(r"\bcut-?offs? (?:of |at |is )?[`$]?([A-Za-z])(?![A-Za-z_(])[`$]?")
_ALLOWED = set("kRrdN")
_QUOTED = re.compile(r'"[^"\n]*"|“[^”]*”|\'[^\'\n]*\'')


def _prose(cell) -> str:
    "What a reader reads as prose: a markdown cell, or a code cell's docstrings and comments."
    src = _source(cell)
    if cell["cell_type"] == "markdown":
        return src
    docs = re.findall(r'"""(.*?)"""', src, re.S) + re.findall(r"#(?!\|)([^\n]*)", src)
    return "\n".join(docs)


def cutoff_faults(text: str) -> list:
    "Each cutoff written with a letter other than k, outside quotations and lines that quote 'as printed'."
    out = []
    for line in text.splitlines():
        if "as printed" in line or line.lstrip().startswith(">"):
            continue
        bare = _QUOTED.sub(" ", line)
        for rx in (_AT, _CUT):
            for m in rx.finditer(bare):
                if m.group(1) not in _ALLOWED:
                    out.append(bare[max(0, m.start() - 20): m.end() + 10].strip())
    return out


def test_the_definition_rule_can_fail():
    md = {"cell_type": "markdown", "source": ["The sentence."]}
    good = {"cell_type": "code", "source": ["#| export\ndef f():\n    return 1"]}
    check = {"cell_type": "code", "source": ["assert f() == 1"]}
    show = {"cell_type": "code", "source": ["f()"]}
    const = {"cell_type": "code", "source": ["#| export\nX = 1"]}
    assert definition_faults([md, good, check]) == []
    assert definition_faults([check, good, check]) == ["f: no sentence before"]
    assert definition_faults([md, good, md, check]) == ["f: no check after"]    # the sentence after the code
    assert definition_faults([md, good, show]) == ["f: no check after"]         # shown, not checked
    assert definition_faults([check, const, check]) == []                      # a constant needs neither


def test_the_cutoff_rule_can_fail():
    assert len(cutoff_faults("P@K of a ranking, and AP@$p$ with a cutoff $t$")) == 3
    assert cutoff_faults("P@k, AP@$k$, recall@R, MAP@R, P@$d_H \\le r$ and a cutoff $k$") == []
    assert cutoff_faults('Ding, Li & Li write "P@K" (their letter)') == []
    assert cutoff_faults("nDCG@p = DCG@p / iDCG@p, as printed in eq. 8") == []


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_definition_has_its_sentence_before_and_its_check_after(chapter):
    cells = json.loads((NBS / chapter).read_text(encoding="utf-8"))["cells"]
    assert definition_faults(cells) == []


@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c != "90_references.ipynb"])   # titles, as published
def test_the_cutoff_is_k(chapter):
    cells = json.loads((NBS / chapter).read_text(encoding="utf-8"))["cells"]
    assert [f for cell in cells for f in cutoff_faults(_prose(cell))] == []
