"""Read and change a notebook's cells by id, without editing its JSON by hand.

    python tools/nbcell.py list NB                       # one line per cell: index, id, type, first line
    python tools/nbcell.py find NB TEXT                  # the cells whose source contains TEXT
    python tools/nbcell.py show NB ID                    # a cell's source
    python tools/nbcell.py replace NB ID [--source FILE]  # a cell's source from FILE (default: standard input)
    python tools/nbcell.py insert NB --after ID [--markdown] [--source FILE]   # a new cell after ID ("start": first)
    python tools/nbcell.py delete NB ID                  # remove a cell

A new cell gets a fresh id; code cells lose their outputs when replaced. Run `nbdev_clean`, then `nbdev_export`
afterwards (cleaning can renumber ids, which the exported modules quote).
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import uuid
from pathlib import Path


def load(path: str) -> dict:
    "The notebook at `path` as a dict."
    return json.loads(Path(path).read_text(encoding="utf-8"))


def save(path: str, nb: dict) -> None:
    "Write `nb` back as nbdev_clean writes it (one-space indent, a final newline)."
    Path(path).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def index_of(nb: dict, cell_id: str) -> int:
    "The position of the cell with this id; exits with a message naming the ids when there is none."
    for i, c in enumerate(nb["cells"]):
        if c.get("id") == cell_id:
            return i
    sys.exit(f"nbcell: no cell with id {cell_id!r} (ids: {', '.join(c.get('id', '?') for c in nb['cells'])})")


def source_lines(text: str) -> list:
    "A cell source as the list of lines Jupyter stores (each but the last ends with a newline)."
    lines = text.splitlines(keepends=True)
    if lines and lines[-1].endswith("\n"):
        lines[-1] = lines[-1][:-1]
    return lines


def new_cell(text: str, markdown: bool) -> dict:
    "A fresh cell holding `text`."
    cell = {"cell_type": "markdown" if markdown else "code", "id": uuid.uuid4().hex[:8], "metadata": {},
            "source": source_lines(text)}
    if not markdown:
        cell.update(execution_count=None, outputs=[])
    return cell


def read_text(arg: str | None) -> str:
    "The text of FILE, or of standard input for '-' or no argument."
    return sys.stdin.read() if arg in (None, "-") else Path(arg).read_text(encoding="utf-8")


def main(argv=None) -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)     # `... | head` ends quietly
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("list", "find", "show", "replace", "insert", "delete"):
        s = sub.add_parser(name)
        s.add_argument("notebook")
        if name == "find":
            s.add_argument("text")
        if name in ("show", "replace", "delete"):
            s.add_argument("id")
        if name == "insert":
            s.add_argument("--after", required=True, help="the id of the cell before the new one, or 'start'")
            s.add_argument("--markdown", action="store_true")
        if name in ("replace", "insert"):
            s.add_argument("--source", metavar="FILE", help="the new source, from FILE ('-' or none: standard input)")
    a = p.parse_args(argv)
    nb = load(a.notebook)
    cells = nb["cells"]
    if a.cmd in ("list", "find"):
        for i, c in enumerate(cells):
            src = "".join(c["source"])
            if a.cmd == "find" and a.text not in src:
                continue
            first = src.splitlines()[0] if src else ""
            print(f"{i:4d} {c.get('id', '?'):>10} {c['cell_type'][:4]:4} {first[:90]}")
        return 0
    if a.cmd == "show":
        print("".join(cells[index_of(nb, a.id)]["source"]))
        return 0
    if a.cmd == "replace":
        c = cells[index_of(nb, a.id)]
        c["source"] = source_lines(read_text(a.source))
        if c["cell_type"] == "code":
            c.update(execution_count=None, outputs=[])
    elif a.cmd == "insert":
        at = 0 if a.after == "start" else index_of(nb, a.after) + 1
        cell = new_cell(read_text(a.source), a.markdown)
        cells.insert(at, cell)
        print(cell["id"])
    elif a.cmd == "delete":
        del cells[index_of(nb, a.id)]
    save(a.notebook, nb)
    return 0


if __name__ == "__main__":
    sys.exit(main())
