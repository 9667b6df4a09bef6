#!/usr/bin/env python
"""Build the retrieval_lit documentation as a browsable HTML site, offline.

    python tools/build_docs.py                 # every notebook in nbs/ -> site/
    python tools/build_docs.py /tmp/site --only 70_demo 14_ap_playground
    python tools/build_docs.py --no-execute    # render the outputs saved in the notebooks

Each chapter notebook is executed (a real Jupyter kernel, through nbclient) with the
nbdev directives honoured the way `nbdev_docs` honours them: `#| hide` and
`#| include: false` cells run but are not shown, `#| eval: false` cells are shown but
not run, `#| slow` cells are skipped unless `--slow`, `#| echo: false` hides the code,
`#| output: false` the output, and every exported name gets its signature and
docstring (nbdev's `show_doc`) under the cell that defines it. Each worked solution (a
`### Solution CC.N` block of the `## Solutions` part, see `collapse_solutions`) is folded into a
closed `<details>` element. The pages are written with nbconvert's JupyterLab template plus a
sidebar of chapters and prev/next links.

The build fails a chapter that shows a reader something broken (`page_problems`): a figure
with an empty panel or with titles and labels drawn over each other (each figure is
checked as it is saved, in the kernel), an output that is an object's default repr
(`<function f at 0x...>`), or an error object shown as a value (after `show_error`
has printed it: the error shown twice).

Nothing is fetched from the network: the figures are embedded in the pages, the math
is typeset by a local copy of MathJax copied into `<out>/_static/mathjax` (from the
`jupyter-server-mathjax` package, a dev dependency, or Debian's `libjs-mathjax`, or the
folder given by `--mathjax` / `$RETRIEVAL_LIT_MATHJAX`), and interactive widgets are
drawn in the static state they had when the notebook finished (no widget JavaScript).
Open `<out>/index.html` in a browser; `python tools/check_docs.py <out>` checks the
pages in headless Chromium.

Where Quarto is installed, `nbdev_docs` builds the nbdev/Quarto site instead (settings
in `nbs/_quarto.yml`, `nbs/nbdev.yml`, `nbs/sidebar.yml`).
"""
from __future__ import annotations

import argparse
import ast
import copy
import html
import json
import os
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_DIR = Path(__file__).resolve().parent / "docs_template"
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_DIRECTIVE = re.compile(r"^\s*#\|\s*([\w-]+):?\s*(.*?)\s*$")


class DocsBuildError(RuntimeError):
    "A documentation build failed; the message names the notebook and what went wrong."


# ----------------------------------------------------------------------------- MathJax
_MATHJAX_CONFIGS = ("TeX-AMS_CHTML-full", "TeX-AMS-MML_HTMLorMML-full", "TeX-AMS_CHTML",
                    "TeX-AMS-MML_HTMLorMML", "TeX-AMS_HTML")


def mathjax_candidates() -> list[Path]:
    "Folders that may hold a MathJax 2 copy (`MathJax.js`), best first."
    out = []
    env = os.environ.get("RETRIEVAL_LIT_MATHJAX")
    if env:
        out.append(Path(env))
    try:
        import jupyter_server_mathjax
        out.append(Path(jupyter_server_mathjax.__file__).parent / "static")
    except ImportError:
        pass
    out += [Path("/usr/share/javascript/mathjax"), Path("/usr/share/mathjax")]
    return out


@dataclass
class LocalMathJax:
    "A MathJax 2 copy on disk: its folder, the combined config to load and the font it ships."
    folder: Path
    config: str
    font: str  # "TeX" (the full distribution) or "STIX-Web" (jupyter-server-mathjax's trimmed copy)

    def options(self) -> dict:
        "Extra `HTML-CSS` / `SVG` settings (as JS object text) that make MathJax use the shipped font."
        # MathJax's font probe `@font-face {src: url('about:blank')}` is a CORS error in the
        # console of a page opened from file://; a local() source fails the same way, silently.
        blank = ", styles: {'@font-face': {'font-family': 'MathJax_Blank', src: \"local('MathJax_Blank')\"}}"
        if self.font == "TeX":
            return {"mathjax_html_css": blank, "mathjax_svg": ""}
        f = json.dumps(self.font)
        return {"mathjax_html_css": f", availableFonts: [], webFont: {f}, imageFont: null, preferredFont: null" + blank,
                "mathjax_svg": f", font: {f}"}


def find_mathjax(explicit: str | os.PathLike | None = None) -> LocalMathJax:
    "The first usable local MathJax 2 copy; raise DocsBuildError if there is none."
    cands = [Path(explicit)] if explicit else mathjax_candidates()
    for d in cands:
        if (d / "MathJax.js").is_file():
            font = "TeX" if (d / "fonts" / "HTML-CSS" / "TeX").is_dir() else "STIX-Web"
            if not (d / "fonts" / "HTML-CSS" / font).is_dir():
                continue
            for cfg in _MATHJAX_CONFIGS:
                if (d / "config" / f"{cfg}.js").is_file():
                    return LocalMathJax(d, cfg, font)
    raise DocsBuildError(
        "no local MathJax 2 found (looked in: " + ", ".join(map(str, cands)) + "). "
        "Install it with `pip install jupyter-server-mathjax` (in the [dev] extras) or "
        "`apt-get install libjs-mathjax`, or pass --mathjax DIR (a folder with MathJax.js).")


def copy_mathjax(src: Path, dest: Path) -> None:
    "Copy the MathJax tree (without its translations) into the site."
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("localization", "*.md", "unpacked", "test", "docs"))


# ----------------------------------------------------------------------------- chapters
@dataclass
class Chapter:
    path: Path
    title: str
    description: str = ""
    out_name: str = ""
    prev: "Chapter | None" = field(default=None, repr=False)
    next: "Chapter | None" = field(default=None, repr=False)


def _title_of(nb, fallback: str) -> tuple[str, str]:
    "The chapter title (first `# ` heading) and its nbdev description (a `> ` line)."
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        title, desc = None, ""
        for line in cell.source.splitlines():
            if title is None and line.startswith("# "):
                title = line[2:].strip()
            elif title is not None and line.startswith("> ") and not desc:
                desc = line[2:].strip()
        if title:
            return title, desc
    return fallback, ""


def list_chapters(nbs: Path, only=None) -> list[Chapter]:
    "The notebooks of `nbs` in reading order (index first, then by file name)."
    import nbformat
    paths = sorted(p for p in nbs.glob("*.ipynb") if not p.name.startswith(("_", ".")))
    paths.sort(key=lambda p: (p.stem != "index", p.name))
    if only:
        want = {Path(o).stem for o in only}
        missing = want - {p.stem for p in paths}
        if missing:
            raise DocsBuildError(f"`--only`: no notebook named {sorted(missing)} in {nbs}")
        paths = [p for p in paths if p.stem in want]
    chapters = []
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        title, desc = _title_of(nb, p.stem)
        chapters.append(Chapter(p, title, desc, "index.html" if p.stem == "index" else p.stem + ".html"))
    for a, b in zip(chapters, chapters[1:]):
        a.next, b.prev = b, a
    return chapters


# ----------------------------------------------------------------------------- directives
def split_directives(source: str) -> tuple[dict, str]:
    "nbdev directives at the top of a code cell (`#| name: value`) and the code without them."
    lines = source.splitlines()
    directives, i = {}, 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if m:
            directives[m.group(1).replace("-", "_")] = (m.group(2) or "").strip()
            i += 1
        elif not lines[i].strip():
            i += 1
        else:
            break
    return directives, "\n".join(lines[i:])


def _false(v: str) -> bool:
    return v.strip().lower() in ("false", "0", "no")


def exported_names(code: str) -> list[str]:
    "Public top-level functions and classes defined in an exported cell (what nbdev documents)."
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    return [n.name for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not n.name.startswith("_")]


_SHOW_DOC = """try:
    from nbdev.showdoc import show_doc as _rl_show_doc
    {calls}
except Exception as _rl_e:  # the docs must not fail for a rendering detail
    print('(no API card for {names}:', _rl_e, ')')"""


def prepare_for_docs(nb, slow: bool = False, api_cards: bool = True, checks: bool = False):
    """Translate nbdev directives into what nbclient/nbconvert understand (a copy of `nb`).

    Each code cell gets `metadata.rl_docs` = {"remove": bool, "echo": bool, "output": bool}
    and the nbclient tag `skip-execution` where it must not run. With `checks`, a hidden first cell installs the
    figure check and a hidden last cell reports it (read by `page_problems`)."""
    import nbformat
    nb = copy.deepcopy(nb)
    cells = []
    for index, cell in enumerate(nb.cells):
        cells.append(cell)
        if cell.cell_type != "code":
            continue
        d, code = split_directives(cell.source)
        tags = list(cell.metadata.get("tags", []))
        skip = _false(d.get("eval", "true")) or ("slow" in d and not slow)
        if skip:
            tags.append("skip-execution")
        remove = ("hide" in d or "default_exp" in d or _false(d.get("include", "true"))
                  or ("slow" in d and not slow and not code.strip()))
        cell.metadata["tags"] = tags
        cell.metadata["rl_docs"] = {"remove": remove, "echo": not _false(d.get("echo", "true")),
                                    "output": not _false(d.get("output", "true")), "skipped": skip,
                                    "slow": "slow" in d, "code": code, "cell": index}
        is_export = any(k in d for k in ("export", "exports"))
        names = exported_names(code) if (is_export and api_cards and not skip) else []
        if names:
            calls = "\n    ".join(f"display(_rl_show_doc({n}))" for n in names)
            card = nbformat.v4.new_code_cell(_SHOW_DOC.format(calls=calls, names=", ".join(names)))
            card.metadata["rl_docs"] = {"remove": False, "echo": False, "output": True, "skipped": False,
                                        "slow": False, "code": "", "api_card": True}
            cells.append(card)
    if checks:
        first = nbformat.v4.new_code_cell(_FIGURE_CHECK)
        last = nbformat.v4.new_code_cell(_FIGURE_REPORT_CELL)
        for c, extra in ((first, {"figure_check": True}), (last, {"figure_report": True})):
            c.metadata["rl_docs"] = {"remove": True, "echo": False, "output": False, "skipped": False,
                                     "slow": False, "code": "", **extra}
        cells = [first] + cells + [last]
    nb.cells = cells
    return nb


# ----------------------------------------------------------------------------- what a reader sees
FIGURE_REPORT = "rl-docs-figure-report:"

# Runs first in the chapter's kernel (hidden): every figure is checked when it is saved to an image (inline
# display, `savefig`, a widget's PNG), before the inline backend closes it; problems are kept with the
# number of the cell that drew them, counted in the order cells run (the k-th cell run after this one), and printed
# by the last (hidden) cell. Not by IPython's execution count: IPython 9 increments it before `pre_run_cell`, IPython
# 8 after the cell, so a count read in a hook names the wrong cell under one of them.
_FIGURE_CHECK = r'''
def _rl_install_figure_check():
    import matplotlib.backend_bases as bb
    from IPython import get_ipython
    problems, seen = [], set()

    def drawn_tick_labels(axis, coord):
        "The axis's major tick labels inside its view interval (matplotlib keeps, and does not draw, the others)."
        lo, hi = sorted(axis.get_view_interval())
        slack = 1e-9 * (abs(hi - lo) + abs(hi) + abs(lo))
        return [t for t in axis.get_ticklabels() if lo - slack <= t.get_position()[coord] <= hi + slack]

    def texts_of(fig):
        "Visible, non-empty texts of the figure: (owner, kind, text artist); owner -1 is the figure."
        out = []
        for i, ax in enumerate(fig.axes):
            if not ax.get_visible():
                continue
            for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
                if t is not None:
                    out.append((i, "title", t))
            out += [(i, "label", ax.xaxis.label), (i, "label", ax.yaxis.label)]
            if ax.axison:
                out += [(i, "tick", t) for t in drawn_tick_labels(ax.xaxis, 0) + drawn_tick_labels(ax.yaxis, 1)]
        for t in [getattr(fig, "_suptitle", None), getattr(fig, "_supxlabel", None),
                  getattr(fig, "_supylabel", None)] + list(fig.texts):
            if t is not None:
                out.append((-1, "title", t))
        seen_ids = set()               # the suptitle is also among fig.texts
        out = [x for x in out if not (id(x[2]) in seen_ids or seen_ids.add(id(x[2])))]
        return [(o, k, t) for o, k, t in out if t.get_visible() and t.get_text().strip()]

    def check(fig):
        found = []
        for i, ax in enumerate(fig.axes):
            drawn = (ax.lines or ax.collections or ax.patches or ax.images or ax.texts or ax.tables
                     or ax.artists or ax.get_legend() is not None)
            if ax.get_visible() and ax.axison and not drawn:
                found.append(f"panel {i + 1} of {len(fig.axes)} is empty axes (nothing drawn in it)")
        try:
            fig.draw_without_rendering()   # lays the figure out (constrained layout too)
            renderer = fig._get_renderer()   # works on any canvas, a bare Figure's too
            boxes = [(o, k, t, t.get_window_extent(renderer)) for o, k, t in texts_of(fig)]
        except Exception:
            return found
        clashes = []
        for a in range(len(boxes)):
            for b in range(a + 1, len(boxes)):
                (oa, ka, ta, ba), (ob, kb, tb, bx) = boxes[a], boxes[b]
                if oa == ob and "title" not in (ka, kb):
                    continue           # one panel's own ticks and labels: matplotlib lays those out
                # two titles side by side read as one line unless a space of about one letter parts them
                gap = (min(ta.get_fontsize(), tb.get_fontsize()) * fig.dpi / 72 if ka == kb == "title" else 0) - 1
                if ba.x0 < bx.x1 + gap and bx.x0 < ba.x1 + gap and ba.y0 < bx.y1 - 1 and bx.y0 < ba.y1 - 1:
                    clashes.append(f"{ta.get_text()[:40]!r} and {tb.get_text()[:40]!r}")
        if clashes:
            more = f" (and {len(clashes) - 2} more)" if len(clashes) > 2 else ""
            found.append("texts overlap: " + "; ".join(clashes[:2]) + more)
        return found

    original = bb.FigureCanvasBase.print_figure
    current = [0]                      # the running cell's number, 1 for the first cell run after this one
                                       # (figures flushed after a cell, before the next starts, still count)
    busy = []                          # set while checking: a figure saved by the check itself is not checked

    def count_cell(info):
        if not info.silent and info.store_history:   # a notebook cell, as nbclient runs it (not a silent request)
            current[0] += 1

    ip = get_ipython()
    if ip is not None:
        ip.events.register("pre_run_cell", count_cell)

    def print_figure(self, *args, **kwargs):
        if busy:
            return original(self, *args, **kwargs)
        busy.append(1)
        try:
            n = current[0]
            for msg in check(self.figure):
                if (n, msg) not in seen:
                    seen.add((n, msg))
                    problems.append((n, msg))
        except Exception:
            pass                       # the check never breaks a chapter
        finally:
            busy.clear()
        return original(self, *args, **kwargs)

    bb.FigureCanvasBase.print_figure = print_figure
    return problems

_rl_figure_problems = _rl_install_figure_check()
'''

_FIGURE_REPORT_CELL = "import json as _rl_json\nprint(%r + _rl_json.dumps(_rl_figure_problems))" % FIGURE_REPORT

_DEFAULT_REPR = re.compile(r"^<(?:function|bound method|built-in function|class|module) .*>$|^<[^<>\n]* at 0x[0-9a-fA-F]+>$")
_ERROR_REPR = re.compile(r"^(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Warning)\((['\"]).*\1\)$", re.S)


def _plain(out) -> str:
    t = out.get("data", {}).get("text/plain", "")
    return (t if isinstance(t, str) else "".join(t)).strip()


def page_problems(nb) -> list[str]:
    """What a reader would see broken on the page of an executed notebook prepared by `prepare_for_docs`, each
    naming the chapter's cell (its index in the notebook): figures with an empty panel or overlapping texts
    (reported by the kernel-side check), outputs that are an object's default repr, and error objects shown as a
    value. Removes the check's report cell."""
    problems = []
    report = next((c for c in nb.cells if c.get("metadata", {}).get("rl_docs", {}).get("figure_report")), None)
    # the cells run after the (hidden) figure check, in the order they ran: the check numbers them 1, 2, ...
    start = next((i for i, c in enumerate(nb.cells) if c.get("metadata", {}).get("rl_docs", {}).get("figure_check")),
                 len(nb.cells))
    ran = [c.get("metadata", {}).get("rl_docs", {}).get("cell", "?") for c in nb.cells[start + 1:]
           if c.cell_type == "code" and c.get("execution_count") is not None]
    by_number = dict(enumerate(ran, start=1))
    if report is not None:
        for out in report.get("outputs", []):
            text = out.get("text", "") if out.get("output_type") == "stream" else ""
            for line in text.splitlines():
                if line.startswith(FIGURE_REPORT):
                    for n, msg in json.loads(line[len(FIGURE_REPORT):]):
                        problems.append(f"cell {by_number.get(n, '?')}: figure: {msg}")
        nb.cells = [c for c in nb.cells if c is not report]
    for cell in nb.cells:
        info = cell.get("metadata", {}).get("rl_docs")
        if cell.cell_type != "code" or info is None or info["remove"] or not info["output"] or info.get("api_card"):
            continue
        i = info.get("cell", "?")
        for out in cell.get("outputs", []):
            if out.get("output_type") not in ("execute_result", "display_data"):
                continue
            if set(out.get("data", {})) - {"text/plain"}:
                continue               # a rich output (HTML, image, widget): its text/plain is not shown
            text = _plain(out)
            if _DEFAULT_REPR.match(text):
                problems.append(f"cell {i}: shows an object's default repr {text[:60]!r} "
                                "(end the line with `;` or assign it)")
            elif _ERROR_REPR.match(text):
                problems.append(f"cell {i}: shows an error object as a value {text[:60]!r} (after show_error printed "
                                "it, the error is shown twice: assign the result, `_ = show_error(...)`)")
    return problems


_DRAWS = re.compile(r"\bplt\.show\(\)|^\s*plot_\w+\(|^\s*\w+\s*=\s*plot_\w+\(", re.M)


def _has_image(cell) -> bool:
    return any(any(k.startswith("image/") for k in out.get("data", {})) for out in cell.get("outputs", []))


def missing_figures(nb) -> list[int]:
    """Executed code cells (their index in the chapter) that draw (call `plt.show()` or a top-level `plot_*`
    function) but produced no image: the sign of a non-inline matplotlib backend (e.g. `matplotlib.use("Agg")`)
    or a figure closed unseen."""
    bad = []
    for i, cell in enumerate(nb.cells):
        info = cell.metadata.get("rl_docs")
        if cell.cell_type != "code" or info is None or info["skipped"] or not info["output"]:
            continue
        d, code = split_directives(cell.source)
        if any(k in d for k in ("export", "exporti", "exports")) or not _DRAWS.search(code):   # definitions draw nothing yet
            continue
        if not _has_image(cell):
            bad.append(info.get("cell", i))
    return bad


def finish_for_docs(nb):
    "After execution: drop hidden cells, directive lines, hidden inputs/outputs; mark skipped cells."
    keep = []
    for cell in nb.cells:
        info = cell.metadata.pop("rl_docs", None)
        if cell.cell_type == "code" and info is not None:
            if info["remove"]:
                continue
            cell.source = info["code"] if info["echo"] else ""
            if not info["output"]:
                cell.outputs = []
            if info.get("api_card"):
                _clean_api_card(cell)
            if info["skipped"]:
                note = "not run in the docs build (`#| slow`)" if info["slow"] else "not run (`#| eval: false`)"
                cell.outputs = [_stream(f"[{note}]\n")]
            if not cell.source and not cell.outputs:
                continue
            tags = [t for t in cell.metadata.get("tags", []) if t != "skip-execution"]
            if not info["echo"]:
                tags.append("rl-no-input")
            cell.metadata["tags"] = tags
        keep.append(cell)
    nb.cells = keep
    return nb


_QUARTO_ATTRS = re.compile(r'\{(?:target|style|\.)[^{}\n]*\}')


def _clean_api_card(cell):
    "Drop the Quarto-only link attributes (`{target=...}`) that nbdev's show_doc writes into its markdown."
    for out in cell.get("outputs", []):
        md = out.get("data", {}).get("text/markdown")
        if md:
            out["data"]["text/markdown"] = _QUARTO_ATTRS.sub("", md if isinstance(md, str) else "".join(md))


def _stream(text):
    import nbformat
    return nbformat.v4.new_output("stream", name="stdout", text=text)


# ----------------------------------------------------------------------------- solutions
SOLUTION_HEADING = re.compile(r"###\s+Solution\s+(\d+\.\d+)\s*$")


def collapse_solutions(nb) -> int:
    """Mark each worked solution for a closed `<details>` element: a markdown cell whose first line is
    `### Solution CC.N` and the cells after it, up to the next such cell or the end of the notebook (the format of
    the chapters' `## Solutions` part). Run it on a finished notebook (hidden cells gone); the template reads
    `metadata.rl_solution` ("Solution CC.N" on a block's first cell) and `metadata.rl_solution_end` (on its last).
    Returns the number of solutions."""
    last, n = None, 0
    for cell in nb.cells:
        first = cell.source.lstrip().split("\n", 1)[0].strip() if cell.cell_type == "markdown" else ""
        m = SOLUTION_HEADING.fullmatch(first)
        if m:
            if last is not None:
                last.metadata["rl_solution_end"] = True
            cell.metadata["rl_solution"] = f"Solution {m.group(1)}"
            n += 1
        if n:
            last = cell
    if last is not None:
        last.metadata["rl_solution_end"] = True
    return n


# ----------------------------------------------------------------------------- widgets
def _model_id(ref) -> str:
    return ref[len("IPY_MODEL_"):] if isinstance(ref, str) and ref.startswith("IPY_MODEL_") else str(ref)


def _options(st) -> list:
    return list(st.get("_options_labels") or st.get("options") or [])


def _selected(st):
    opts, idx = _options(st), st.get("index")
    if isinstance(idx, int) and 0 <= idx < len(opts):
        return opts[idx]
    if isinstance(idx, (list, tuple)):
        return ", ".join(str(opts[i]) for i in idx if 0 <= i < len(opts))
    return st.get("value", "")


def widget_static_html(model_id: str, state: dict, _depth: int = 0) -> str:
    """Static HTML for a widget view, from the widget state that nbclient stored.

    This is what the page shows instead of a live widget: the widget tree with the
    values it had when the notebook finished (labels, slider positions, selected
    buttons, numbers). No JavaScript is involved."""
    if _depth > 50:
        return ""
    entry = state.get(model_id)
    if entry is None:
        return '<span class="rl-w-missing">[widget]</span>'
    name = entry.get("model_name", "")
    st = entry.get("state", {})
    e = html.escape
    desc = st.get("description") or ""
    label = f'<span class="rl-w-desc">{e(desc)}</span>' if desc and name not in ("ButtonModel", "ToggleButtonModel", "CheckboxModel") else ""
    kids = "".join(widget_static_html(_model_id(c), state, _depth + 1) for c in st.get("children", []))
    if name in ("VBoxModel", "BoxModel", "GridBoxModel"):
        return f'<div class="rl-w rl-w-vbox">{kids}</div>'
    if name == "HBoxModel":
        return f'<div class="rl-w rl-w-hbox">{kids}</div>'
    if name in ("TabModel", "AccordionModel", "StackModel"):
        titles = st.get("titles") or []
        parts = []
        for i, c in enumerate(st.get("children", [])):
            t = titles[i] if i < len(titles) and titles[i] else f"{i + 1}"
            parts.append(f'<div class="rl-w-tab"><div class="rl-w-tabtitle">{e(str(t))}</div>'
                         f'{widget_static_html(_model_id(c), state, _depth + 1)}</div>')
        return f'<div class="rl-w rl-w-vbox">{"".join(parts)}</div>'
    if name in ("HTMLModel", "HTMLMathModel"):
        return f'<div class="rl-w rl-w-html">{label}{st.get("value", "")}</div>'
    if name == "LabelModel":
        return f'<div class="rl-w rl-w-label">{e(str(st.get("value", "")))}</div>'
    if name in ("IntSliderModel", "FloatSliderModel", "FloatLogSliderModel", "SelectionSliderModel",
                "IntRangeSliderModel", "FloatRangeSliderModel", "SelectionRangeSliderModel"):
        v = st.get("value")
        if name.startswith("Selection"):
            v = _selected(st)
        lo, hi = st.get("min", 0), st.get("max", 100)
        shown = f"{v[0]} – {v[1]}" if isinstance(v, (list, tuple)) else str(v)
        rng = ""
        if isinstance(v, (int, float)) and isinstance(lo, (int, float)) and isinstance(hi, (int, float)) and hi > lo:
            rng = f'<progress class="rl-w-range" max="{hi - lo}" value="{v - lo}"></progress>'
        return f'<div class="rl-w rl-w-slider">{label}{rng}<span class="rl-w-value">{e(shown)}</span></div>'
    if name in ("ToggleButtonsModel", "RadioButtonsModel", "DropdownModel", "SelectModel",
                "SelectMultipleModel", "ComboboxModel"):
        sel = _selected(st)
        opts = "".join(f'<span class="rl-w-opt{" rl-w-on" if str(o) == str(sel) else ""}">{e(str(o))}</span>'
                       for o in _options(st))
        return f'<div class="rl-w rl-w-choice">{label}{opts}</div>'
    style = st.get("button_style") or ""
    style_cls = f" rl-w-style-{e(style)}" if style else ""
    if name == "CheckboxModel":
        on = bool(st.get("value"))
        return f'<span class="rl-w rl-w-check{" rl-w-on" if on else ""}">{"☑" if on else "☐"} {e(desc)}</span>'
    if name == "ToggleButtonModel":
        on = bool(st.get("value"))
        return f'<span class="rl-w rl-w-toggle{" rl-w-on" if on else ""}{style_cls}">{e(desc)}</span>'
    if name == "ButtonModel":
        off = " rl-w-disabled" if st.get("disabled") else ""
        return f'<span class="rl-w rl-w-button{style_cls}{off}">{e(desc)}</span>'
    if name in ("IntTextModel", "FloatTextModel", "BoundedIntTextModel", "BoundedFloatTextModel",
                "TextModel", "TextareaModel", "ValidModel"):
        return f'<div class="rl-w rl-w-text">{label}<span class="rl-w-value">{e(str(st.get("value", "")))}</span></div>'
    if name == "OutputModel":
        inner = []
        for o in st.get("outputs", []):
            data = o.get("data", {})
            if "image/png" in data:
                inner.append(f'<img alt="widget output" src="data:image/png;base64,{data["image/png"]}">')
            elif "text/html" in data:
                inner.append(data["text/html"] if isinstance(data["text/html"], str) else "".join(data["text/html"]))
            elif "text/plain" in data:
                inner.append(f'<pre>{e(str(data["text/plain"]))}</pre>')
            elif o.get("output_type") == "stream":
                inner.append(f'<pre>{e(str(o.get("text", "")))}</pre>')
        return f'<div class="rl-w rl-w-output">{"".join(inner)}</div>'
    return f'<span class="rl-w rl-w-other">[{e(name.replace("Model", ""))}]</span>'


WIDGET_CSS = """
.rl-widget-static { border: 1px solid #c7d0dc; border-radius: 6px; padding: 8px 10px; margin: 4px 0;
  background: #f8fafc; font-size: 0.92em; }
.rl-widget-static::before { content: "widget (static view: run the notebook to interact)";
  display: block; font-size: 0.78em; color: #6b7280; margin-bottom: 4px; }
.rl-w-vbox { display: flex; flex-direction: column; gap: 4px; }
.rl-w-hbox { display: flex; flex-direction: row; flex-wrap: wrap; gap: 6px; align-items: center; }
.rl-w-desc { color: #374151; margin-right: 6px; font-weight: 600; }
.rl-w-opt, .rl-w-button, .rl-w-toggle { display: inline-block; border: 1px solid #9ca3af; border-radius: 3px;
  padding: 1px 7px; margin: 1px 2px; background: #fff; }
.rl-w-opt.rl-w-on, .rl-w-toggle.rl-w-on { background: #2563eb; color: #fff; border-color: #1d4ed8; }
.rl-w-style-success { background: #16a34a; color: #fff; border-color: #15803d; }
.rl-w-style-primary, .rl-w-style-info { background: #2563eb; color: #fff; border-color: #1d4ed8; }
.rl-w-style-warning, .rl-w-toggle.rl-w-on.rl-w-style-warning { background: #f59e0b; color: #fff; border-color: #d97706; }
.rl-w-style-danger { background: #dc2626; color: #fff; border-color: #b91c1c; }
.rl-w-disabled { opacity: 0.5; }
.rl-w-check { margin: 1px 4px; }
.rl-w-range { width: 12em; vertical-align: middle; margin-right: 6px; }
.rl-w-value { font-family: var(--jp-code-font-family, monospace); }
.rl-w-tabtitle { font-weight: 600; border-bottom: 1px solid #d1d5db; margin-top: 4px; }
"""


def staticize_widgets(nb) -> int:
    "Replace every widget view in the outputs by its static HTML; return how many were replaced."
    state = (nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}) or {}).get("state", {})
    n = 0
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if WIDGET_VIEW in data:
                mid = data[WIDGET_VIEW].get("model_id", "")
                body = widget_static_html(mid, state) if mid in state else None
                if body is None:  # no stored state: fall back to the text form
                    body = f'<pre>{html.escape(str(data.get("text/plain", "[widget]")))}</pre>'
                data["text/html"] = f'<div class="rl-widget-static" data-model-id="{html.escape(mid)}">{body}</div>'
                del data[WIDGET_VIEW]
                n += 1
    nb.metadata.pop("widgets", None)
    return n


# ----------------------------------------------------------------------------- build
def execute_notebook(nb, cwd: Path, timeout: int = 600, kernel: str = "python3", allow_errors: bool = False):
    "Run `nb` in a fresh kernel started in `cwd`, keeping the widget state."
    from nbclient import NotebookClient
    client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=allow_errors,
                            store_widget_state=True, resources={"metadata": {"path": str(cwd)}})
    env_backend = os.environ.get("MPLBACKEND")
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    try:
        client.execute()
    finally:
        if env_backend is None:
            os.environ.pop("MPLBACKEND", None)
        else:
            os.environ["MPLBACKEND"] = env_backend
    return nb


def _exporter(mathjax_url: str):
    from nbconvert import HTMLExporter
    from traitlets.config import Config
    c = Config()
    c.HTMLExporter.extra_template_basedirs = [str(TEMPLATE_DIR.parent)]
    c.HTMLExporter.template_name = TEMPLATE_DIR.name
    c.HTMLExporter.mathjax_url = mathjax_url
    c.HTMLExporter.require_js_url = ""
    c.HTMLExporter.exclude_anchor_links = False
    c.HTMLExporter.embed_images = True
    c.TagRemovePreprocessor.enabled = True
    c.TagRemovePreprocessor.remove_input_tags = {"rl-no-input"}
    return HTMLExporter(config=c)


_IPYNB_LINK = re.compile(r'(href="(?![a-z]+://)[^"#]*?)\.ipynb(#[^"]*)?"')
_HEADING = re.compile(r'<h([23]) id="([^"]+)"[^>]*>(.*?)<a class="anchor-link"', re.S)
_TAG = re.compile(r"<[^>]+>")
TOC_MIN_SECTIONS = 4      # pages with fewer sections read without an in-page table of contents
_API_CARD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_SOLUTION_TITLE = re.compile(r"Solution \d+\.\d+")


def add_page_toc(page: str) -> str:
    """Put an "On this page" list of the page's sections (h2, and h3 under them) before its first section: long
    chapters get a map of themselves. Headings are read from nbconvert's output, whose ids the links use."""
    heads = [(int(level), hid, html.unescape(_TAG.sub("", text)).strip()) for level, hid, text in _HEADING.findall(page)]
    heads = [h for h in heads if not (h[0] == 3 and _API_CARD.fullmatch(h[2]))]   # API cards: h3 of a bare name
    heads = [h for h in heads if not (h[0] == 3 and _SOLUTION_TITLE.fullmatch(h[2]))]   # folded solutions
    if sum(level == 2 for level, _, _ in heads) < TOC_MIN_SECTIONS:
        return page
    items = "".join(f'<li class="rl-toc-h{level}"><a href="#{hid}">{html.escape(text)}</a></li>' for level, hid, text in heads)
    toc = f'<nav class="rl-toc" aria-label="On this page"><div class="rl-toc-title">On this page</div><ol>{items}</ol></nav>'
    at = page.find(f'<h2 id="{heads[0][1]}"') if heads[0][0] == 2 else page.find("<h2 id=")
    return page if at < 0 else page[:at] + toc + page[at:]


def render_chapter(nb, chapter: Chapter, chapters: list[Chapter], mathjax: tuple[str, dict]) -> str:
    "The HTML page of one prepared, executed notebook; `mathjax` = (url, font options)."
    exporter = _exporter(mathjax[0])
    nav = [{"title": c.title, "href": c.out_name, "current": c is chapter, "stem": c.path.stem} for c in chapters]
    resources = {"metadata": {"name": chapter.title},
                 "rl": {"nav": nav, "widget_css": WIDGET_CSS, **mathjax[1],
                        "prev": (chapter.prev.title, chapter.prev.out_name) if chapter.prev else None,
                        "next": (chapter.next.title, chapter.next.out_name) if chapter.next else None,
                        "source": chapter.path.name}}
    nb.metadata["title"] = chapter.title
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    return add_page_toc(_IPYNB_LINK.sub(lambda m: f'{m.group(1)}.html{m.group(2) or ""}"', body))


def build(out: str | os.PathLike = "site", nbs: str | os.PathLike | None = None, only=None,
          execute: bool = True, slow: bool = False, timeout: int = 600, mathjax: str | None = None,
          allow_errors: bool = False, api_cards: bool = True, log=print, jobs: int = 1) -> list[Path]:
    "Build the site into `out`; return the written pages (index.html first)."
    nbs = Path(nbs) if nbs else ROOT / "nbs"
    out = Path(out)
    if not nbs.is_dir():
        raise DocsBuildError(f"`nbs`: no notebook folder at {nbs}")
    chapters = list_chapters(nbs, only)
    if not chapters:
        raise DocsBuildError(f"`nbs`: no notebooks in {nbs}")
    mj = find_mathjax(mathjax)
    out.mkdir(parents=True, exist_ok=True)
    copy_mathjax(mj.folder, out / "_static" / "mathjax")
    mathjax = (f"_static/mathjax/MathJax.js?config={mj.config}", mj.options())
    import nbformat
    contents = None
    nav_chapters = chapters
    if not any(c.path.stem == "index" for c in chapters):
        contents = Chapter(Path("index.ipynb"), "Contents", "", "index.html", next=chapters[0])
        chapters[0].prev = contents
        nav_chapters = [contents] + chapters
    pages = []
    if jobs > 1 and len(chapters) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_build_page, ch, nav_chapters, out, mathjax, execute, slow, timeout, allow_errors,
                                   api_cards) for ch in chapters]
            try:
                for f in futures:               # in chapter order; the first failure stops the build
                    page, line = f.result()
                    pages.append(page)
                    log(line)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        for ch in chapters:
            page, line = _build_page(ch, nav_chapters, out, mathjax, execute, slow, timeout, allow_errors, api_cards)
            pages.append(page)
            log(line)
    if contents is not None:
        pages.insert(0, write_contents_page(out, contents, chapters, mathjax))
    return pages


def _build_page(ch: Chapter, nav_chapters, out: Path, mathjax, execute: bool, slow: bool, timeout: int,
                allow_errors: bool, api_cards: bool) -> tuple[Path, str]:
    "Execute one chapter in a fresh kernel and write its page; (page, log line). Runs in a worker process too."
    import nbformat
    t0 = time.time()
    nb = prepare_for_docs(nbformat.read(ch.path, as_version=4), slow=slow, api_cards=api_cards and execute,
                          checks=execute)
    if execute:
        try:
            execute_notebook(nb, ch.path.parent, timeout=timeout, allow_errors=allow_errors)
        except Exception as exc:  # CellExecutionError, timeouts, dead kernels
            msg = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
            raise DocsBuildError(f"{ch.path.name}: execution failed: {msg[-3000:]}") from exc
        blank = missing_figures(nb)
        if blank:
            raise DocsBuildError(f"{ch.path.name}: cell{'s' if len(blank) > 1 else ''} {blank} draw a figure but "
                                 "produced no image (a non-inline matplotlib backend, or a figure closed unseen?)")
        problems = page_problems(nb)
        if problems:
            raise DocsBuildError(f"{ch.path.name}: what a reader sees is broken:\n  " + "\n  ".join(problems))
    nb = finish_for_docs(nb)
    collapse_solutions(nb)
    nw = staticize_widgets(nb)
    page = out / ch.out_name
    page.write_text(render_chapter(nb, ch, nav_chapters, mathjax), encoding="utf-8")
    return page, (f"  {ch.path.name:28s} -> {page.name:28s} {time.time() - t0:6.1f}s"
                  + (f"  ({nw} widget view{'s' if nw != 1 else ''})" if nw else ""))


def write_contents_page(out: Path, contents: Chapter, chapters: list[Chapter], mathjax) -> Path:
    "A generated index.html listing the chapters (used when there is no index notebook)."
    import nbformat
    lines = ["# retrieval_lit", "", "The chapters of this documentation:", ""]
    for c in chapters:
        lines.append(f"1. [{c.title}]({c.out_name})" + (f": {c.description}" if c.description else ""))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("\n".join(lines))])
    page = out / "index.html"
    page.write_text(render_chapter(nb, contents, [contents] + chapters, mathjax), encoding="utf-8")
    return page


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", nargs="?", default="site", help="output folder (default: site)")
    p.add_argument("--nbs", default=None, help="notebook folder (default: nbs/ of this repository)")
    p.add_argument("--only", nargs="+", default=None, metavar="NB", help="build only these notebooks (stems)")
    p.add_argument("--no-execute", action="store_true", help="render the saved outputs, do not run the notebooks")
    p.add_argument("--slow", action="store_true", help="also run `#| slow` cells")
    p.add_argument("--timeout", type=int, default=600, help="seconds per cell (default 600)")
    p.add_argument("--mathjax", default=None, help="folder holding MathJax.js (MathJax 2)")
    p.add_argument("--allow-errors", action="store_true", help="keep going when a cell raises")
    p.add_argument("--jobs", type=int, default=1, help="chapters executed at once, each in its own kernel (default 1)")
    a = p.parse_args(argv)
    t0 = time.time()
    try:
        pages = build(a.out, a.nbs, a.only, execute=not a.no_execute, slow=a.slow, timeout=a.timeout,
                      mathjax=a.mathjax, allow_errors=a.allow_errors, jobs=max(1, a.jobs))
    except DocsBuildError as exc:
        print(f"build_docs: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {len(pages)} pages to {Path(a.out).resolve()} in {time.time() - t0:.0f}s; open "
          f"{(Path(a.out) / 'index.html').resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
