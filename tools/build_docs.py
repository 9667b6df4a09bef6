#!/usr/bin/env python
"""Build the retrieval_lit documentation as a browsable HTML site, offline.

    python tools/build_docs.py                 # every notebook in nbs/ -> site/
    python tools/build_docs.py /tmp/site --only 70_demo 14_ap_playground
    python tools/build_docs.py --no-execute    # render the outputs saved in the notebooks
    python -m http.server -d site              # then open http://127.0.0.1:8000/ (the search box needs http)

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

What a reader finds things with: the sidebar groups the chapters by the book's parts (the sections of
`nbs/sidebar.yml`, nbdev's/Quarto's format), the current part open; every page has a search box over an offline
Pagefind index of the whole site (`pagefind[bin]`, a dev dependency; the build writes `<out>/pagefind`; the box
works where the site is served, e.g. `python -m http.server -d <out>`, not from file://), whose results open at
the section heading; `api.html` lists every public name (each module's `__all__`) with its one-line summary and a
link to the cell that defines it; "chapter 03" in prose, a code span naming a chapter's notebook or an exported
definition, and each symbol of the notation chapter's tables link to where they are defined; docstring examples
are code blocks; each figure's alt text is its title, read from the figure in the kernel as it is saved.

The log gives each chapter's run time and its kernel's CPU time (on a shared machine the smaller of the two bounds
what an idle one takes), and names the chapters over `--budget` seconds (60). `--record FILE` keeps which cells
ran; a build of the student copy with `--reuse FILE` does not run again a chapter whose cells before its exercise
stubs ran there, stubs included (`ran_in_record`), and `--no-pages` runs chapters as a test only.

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
    part: str = ""                     # the title of its part of the book (nbs/sidebar.yml), "" outside the parts


@dataclass
class Part:
    "A part of the book: a `section:` of nbs/sidebar.yml, its title and its notebooks (stems) in order."
    title: str
    stems: list = field(default_factory=list)


def read_parts(nbs: str | os.PathLike) -> list[Part]:
    """The book's parts, read from `nbs/sidebar.yml` in nbdev's (Quarto's) format: each `section:` with its
    `contents:` is a part; notebooks listed outside any section form untitled parts (title ""). A nested section is
    a part of its own. [] when there is no sidebar.yml."""
    f = Path(nbs) / "sidebar.yml"
    if not f.is_file():
        return []
    import yaml
    data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
    contents = ((data.get("website") or {}).get("sidebar") or {}).get("contents") or []
    parts: list[Part] = []

    def add(title, entry):
        if not parts or parts[-1].title != title:
            parts.append(Part(title))
        parts[-1].stems.append(Path(str(entry)).stem)

    def walk(items, title):
        for item in items:
            if isinstance(item, str):
                add(title, item)
            elif isinstance(item, dict) and "section" in item:
                walk(item.get("contents") or [], str(item["section"]))
            elif isinstance(item, dict) and (item.get("href") or item.get("file")):
                add(title, item.get("href") or item.get("file"))
    walk(contents if isinstance(contents, list) else [], "")
    return [p for p in parts if p.stems]


def nav_groups(current: Chapter, chapters: list[Chapter]) -> list[dict]:
    """The sidebar: the pages grouped by part, in order, each group {"title", "open", "items"}; the current page's
    part is open, and a page outside the parts (the contents, the API index) opens them all."""
    groups = []
    for c in chapters:
        if not groups or groups[-1]["title"] != c.part:
            groups.append({"title": c.part, "open": not current.part, "items": []})
        groups[-1]["items"].append({"title": c.title, "href": c.out_name, "current": c is current,
                                    "stem": c.path.stem})
        if c is current:
            groups[-1]["open"] = True
    return groups


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
    part_of = {stem: part.title for part in read_parts(nbs) for stem in part.stems}
    chapters = []
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        title, desc = _title_of(nb, p.stem)
        chapters.append(Chapter(p, title, desc, "index.html" if p.stem == "index" else p.stem + ".html",
                                part=part_of.get(p.stem, "")))
    for a, b in zip(chapters, chapters[1:]):
        a.next, b.prev = b, a
    return chapters


# ----------------------------------------------------------------------------- the API index and cross-links
_CELL_MARK = re.compile(r"^# %% (?P<nb>\S+\.ipynb) #(?P<id>\w+)\s*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\[])")


@dataclass
class ApiEntry:
    "A public name (in its module's `__all__`), where nbdev exported it from and what it is, in one line."
    module: str          # the module's dotted name under the package: "trec", "labs.hashing"
    name: str
    stem: str            # the notebook that defines it
    cell: str            # the id of the cell that defines it
    kind: str            # "function", "class" or "value"
    summary: str         # one line: the docstring's first sentence, or the sentence before the cell
    markdown: bool = False   # the summary is markdown (the chapter's sentence), not a plain-text docstring


def first_sentence(text: str, limit: int = 220) -> str:
    "The first sentence of the first paragraph of `text`, on one line (cut at `limit` characters)."
    para = " ".join((text or "").strip().split("\n\n")[0].split())
    one = _SENTENCE_END.split(para, maxsplit=1)[0]
    return one if len(one) <= limit else one[:limit - 1].rsplit(" ", 1)[0] + "…"


def _sentence_before(nb_path: Path, cell_id: str) -> str:
    "The first sentence of the markdown cell just before cell `cell_id` of a notebook (headings skipped)."
    try:
        cells = json.loads(nb_path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return ""
    at = next((i for i, c in enumerate(cells) if c.get("id") == cell_id), None)
    for c in reversed(cells[:at] if at is not None else []):
        if c.get("cell_type") == "markdown":
            src = "".join(c.get("source", ""))
            src = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith("#"))
            return first_sentence(src)
    return ""


def _module_all(tree) -> list[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            try:
                return list(ast.literal_eval(node.value))
            except ValueError:
                return []
    return []


def _defined(node, lines: list[str]) -> list[tuple[str, str, str]]:
    """(name, kind, summary) of what one top-level statement of a cell (its `lines`) defines: a function's or class's
    docstring; for a value, the comment on its line (or the line above), else the value as written."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return [(node.name, "function", ast.get_docstring(node) or "")]
    if isinstance(node, ast.ClassDef):
        return [(node.name, "class", ast.get_docstring(node) or "")]
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
    names = []
    for t in targets:
        names += [e.id for e in (t.elts if isinstance(t, ast.Tuple) else [t]) if isinstance(e, ast.Name)]
    line = lines[node.lineno - 1] if node.lineno <= len(lines) else ""
    above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
    comment = line.split("  # ", 1)[1].strip() if "  # " in line else above[1:].strip() if above.startswith("#") else ""
    if comment:
        summary = comment[0].upper() + comment[1:]
    else:
        value = ast.get_source_segment("\n".join(lines), node.value) or "" if getattr(node, "value", None) else ""
        value = " ".join(value.split())
        summary = "= " + (value if len(value) <= 90 else value[:89] + "…")
    return [(n, "value", summary) for n in names]


def api_entries(lib: str | os.PathLike | None = None, nbs: str | os.PathLike | None = None) -> list[ApiEntry]:
    """Every name of every module's `__all__` in package folder `lib` (default: this repository's package) that
    notebook folder `nbs` exported, with the cell that defines it: read from the cell markers nbdev writes into
    each module (`# %% ../nbs/52_trec.ipynb #cff417ea`). Machinery (`#| exporti`) is not in `__all__`, so not here;
    nor is the package's `__init__` (its names are re-exports)."""
    lib = Path(lib) if lib else ROOT / "retrieval_lit"
    nbs = Path(nbs) if nbs else ROOT / "nbs"
    entries = []
    for path in sorted(lib.rglob("*.py")):
        if path.name.startswith("_") or "__pycache__" in path.parts:
            continue
        text = path.read_text(encoding="utf-8")
        try:
            public = set(_module_all(ast.parse(text)))
        except SyntaxError:
            continue
        module = ".".join(path.relative_to(lib).with_suffix("").parts)
        marks = list(_CELL_MARK.finditer(text))
        seen = set()
        for m, nxt in zip(marks, marks[1:] + [None]):
            stem = Path(m.group("nb")).stem
            if not (nbs / f"{stem}.ipynb").is_file():
                continue
            chunk = text[m.end():nxt.start() if nxt else len(text)].lstrip("\n")
            try:
                tree = ast.parse(chunk)
            except SyntaxError:
                continue
            for node in tree.body:
                for name, kind, doc in _defined(node, chunk.splitlines()):
                    if name in public and name not in seen:
                        seen.add(name)
                        summary, md = (first_sentence(doc) if kind != "value" else doc), False
                        if not summary:
                            summary, md = _sentence_before(nbs / f"{stem}.ipynb", m.group("id")), True
                        entries.append(ApiEntry(module, name, stem, m.group("id"), kind, summary, md))
    return entries


@dataclass
class SiteLinks:
    """What the build links to: the built pages by chapter number and by notebook stem, and each exported name to
    the page and cell that defines it (only names defined on a built page)."""
    chapters: dict = field(default_factory=dict)   # "03" -> "03_ranking.html"
    stems: dict = field(default_factory=dict)      # "03_ranking" -> "03_ranking.html"
    names: dict = field(default_factory=dict)      # "hypergeometric_weights", "ranking.hypergeometric_weights" -> href


def site_links(pages: list[Chapter], entries: list[ApiEntry]) -> SiteLinks:
    links = SiteLinks()
    for c in pages:
        m = re.match(r"(\d{2})_", c.path.stem)
        if m and c.out_name != "index.html":
            links.chapters.setdefault(m.group(1), c.out_name)
            links.stems[c.path.stem] = c.out_name
    counts = {}
    for e in entries:
        counts[e.name] = counts.get(e.name, 0) + 1
    for e in entries:
        if e.stem in links.stems:
            href = f"{links.stems[e.stem]}#cell-id={e.cell}"
            links.names[f"{e.module}.{e.name}"] = href
            if counts[e.name] == 1:            # a name two modules define links only when qualified
                links.names[e.name] = href
    return links


_CHAPTER_REF = re.compile(r"\b([Cc]hapters?)(\s+)(\d{2})((?:(?:,\s*|\s*,?\s+(?:and|or|to)\s+|\s*[–-]\s*)\d{2}\b)*)\b")
_TWO_DIGITS = re.compile(r"\d{2}")
_TOKEN = re.compile(r"(<[^>]*>)")
_NO_LINK_IN = ("a", "pre", "script", "style", "h1", "h2", "h3", "h4", "h5", "h6", "summary", "textarea")


def _link(href: str, text: str) -> str:
    return f'<a class="rl-xref" href="{html.escape(href, quote=True)}">{text}</a>'


def _link_chapters(text: str, links: SiteLinks, here: str) -> str:
    "'chapter 03' (and each number of 'chapters 09, 32 and 57') in a piece of HTML text as links to the chapters."
    def one(m):
        numbers = [m.group(3)] + _TWO_DIGITS.findall(m.group(4))
        if not any(links.chapters.get(n) not in (None, here) for n in numbers):
            return m.group(0)
        if not m.group(4):
            return _link(links.chapters[m.group(3)], m.group(0))
        def number(d):
            target = links.chapters.get(d.group(0))
            return _link(target, d.group(0)) if target not in (None, here) else d.group(0)
        return m.group(1) + m.group(2) + _TWO_DIGITS.sub(number, m.group(3) + m.group(4))
    return _CHAPTER_REF.sub(one, text)


def add_cross_links(page: str, links: SiteLinks, here: str) -> str:
    """Links in the prose of a rendered page `here` (markdown cells only; never inside a link, code block, heading
    or script): "chapter 03" to chapter 03, a code span naming a chapter's notebook (`03_ranking`) to it, and a code
    span naming an exported definition (`hypergeometric_weights`, `ranking.hypergeometric_weights`) to the cell
    that defines it."""
    parts = _TOKEN.split(page)
    out, stack, prose = [], [], []     # output; open tags that forbid a link; the div depth of each markdown cell
    depth, code_open = 0, None         # code_open: where in `out` the <code> tag of the prose's code span is
    for i, tok in enumerate(parts):
        if tok.startswith("<"):
            m = re.match(r"<(/?)([a-zA-Z0-9]+)", tok)
            if m:
                closing, tag = m.group(1) == "/", m.group(2).lower()
                if tag == "div":
                    if closing:
                        if prose and prose[-1] == depth:
                            prose.pop()
                        depth -= 1
                    elif not tok.endswith("/>"):
                        depth += 1
                        if "jp-MarkdownOutput" in tok:
                            prose.append(depth)
                elif tag in _NO_LINK_IN:
                    if not closing:
                        stack.append(tag)
                    elif tag in stack:
                        del stack[len(stack) - 1 - stack[::-1].index(tag)]
                elif tag == "code":
                    code_open = None if closing or not prose or stack else len(out)
            out.append(tok)
            continue
        if not prose or stack or not tok:
            out.append(tok)
            continue
        if code_open is not None:
            if code_open == len(out) - 1 and parts[i + 1:i + 2] == ["</code>"]:
                name = html.unescape(tok).strip()
                name = name[:-2] if name.endswith("()") else name
                target = links.stems.get(name) or links.names.get(name)
                if target and target.startswith(here + "#"):
                    target = target[len(here):]          # a definition on this page
                if target and target != here:
                    out[code_open] = f'<a class="rl-xref" href="{html.escape(target, quote=True)}">' + out[code_open]
                    parts[i + 1] = "</code></a>"
            out.append(tok)
            continue
        out.append(_link_chapters(tok, links, here))
    return "".join(out)


_ROW = re.compile(r"<tr>(.*?)</tr>", re.S)
_FIRST_CELL = re.compile(r"(<td[^>]*>)(.*?)(</td>)", re.S)
_XREF = re.compile(r'<a class="rl-xref[^"]*" href="([^"]+)">')
_STRONG = re.compile(r"<strong>(.*?)</strong>", re.S)


def link_notation_rows(page: str, heading_ids=lambda href: []) -> str:
    """In a table of symbols (the notation chapter), each symbol and its name in bold link to where the formula
    is derived: the first cross-link of its row (a chapter it names, or the definition of its code), sharpened to
    a section of that chapter whose heading names the bold term (`heading_ids(href)` lists (id, heading text) of
    a page)."""
    def row(m):
        body = m.group(1)
        if "<td" not in body:
            return m.group(0)
        found = _XREF.search(body)
        if not found:
            return m.group(0)
        href = html.unescape(found.group(1))
        terms = [html.unescape(_TAG.sub("", t)).strip().lower() for t in _STRONG.findall(body)]
        if "#" not in href:
            for hid, text in heading_ids(href):
                if any(t and t in text.lower() for t in terms):
                    href = f"{href}#{hid}"
                    break
        first = _FIRST_CELL.search(body)
        if not first:
            return m.group(0)
        cell = first.group(2) if "<a " in first.group(2) else _link(href, first.group(2))
        rest = _STRONG.sub(lambda s: _link(href, s.group(0)) if "<a " not in s.group(1) else s.group(0),
                           body[first.end():])
        return f"<tr>{body[:first.start()]}{first.group(1)}{cell}{first.group(3)}{rest}</tr>"
    return _ROW.sub(row, page)


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
    problems, seen, alts = [], set(), {}

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

    def alt_text(fig):
        "The figure's title, from what it shows: its suptitle and its panels' titles, else its axis labels."
        def clean(t):
            return " ".join(t.replace("$", "").replace("\\", "").split())
        sup = getattr(fig, "_suptitle", None)
        sup = clean(sup.get_text()) if sup is not None and sup.get_visible() else ""
        titles, labels = [], []
        for ax in fig.axes:
            if not ax.get_visible():
                continue
            for t in (ax.title, getattr(ax, "_left_title", None), getattr(ax, "_right_title", None)):
                if t is not None and t.get_visible() and clean(t.get_text()):
                    titles.append(clean(t.get_text()))
            x, y = clean(ax.get_xlabel()), clean(ax.get_ylabel())
            if x or y:
                labels.append(f"{y} against {x}" if x and y else y or x)
        titles = list(dict.fromkeys(titles))
        if sup:
            return sup + (": " + "; ".join(titles) if len(titles) > 1 else "")
        if titles:
            return ("; ".join(titles) if len(titles) > 1 else titles[0])
        if labels:
            return "a figure: " + "; ".join(dict.fromkeys(labels))
        counts = {}                    # no words on it: say what it draws
        for ax in fig.axes:
            for n, what in ((len(ax.patches), "bar"), (len(ax.lines), "line"), (len(ax.collections), "point set"),
                            (len(ax.images), "image")):
                counts[what] = counts.get(what, 0) + n
        shown = [f"{n} {what}{'s' if n > 1 else ''}" for what, n in counts.items() if n]
        panels = f" in {len(fig.axes)} panels" if len(fig.axes) > 1 else ""
        return ("a figure without a title: " + ", ".join(shown) + panels) if shown else ""

    def remember_alt(fig, target, kwargs):
        "Key the saved PNG's bytes (an in-memory file: the inline backend's, png_html's) to the figure's alt text."
        import hashlib
        if not hasattr(target, "getvalue") or str(kwargs.get("format", "png")).lower() != "png":
            return
        alt = alt_text(fig)
        if alt:
            alts[hashlib.sha1(target.getvalue()).hexdigest()] = alt

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
        result = original(self, *args, **kwargs)
        try:
            remember_alt(self.figure, args[0] if args else kwargs.get("filename"), kwargs)
        except Exception:
            pass
        return result

    bb.FigureCanvasBase.print_figure = print_figure
    return problems, alts

_rl_figure_problems, _rl_figure_alts = _rl_install_figure_check()
'''

ALT_REPORT = "rl-docs-figure-alts:"
CPU_REPORT = "rl-docs-cpu-seconds:"   # the kernel's CPU time (its threads and its finished child processes)
_FIGURE_REPORT_CELL = ("import json as _rl_json, resource as _rl_resource\n"
                       "print(%r + _rl_json.dumps(_rl_figure_problems))\n"
                       "print(%r + _rl_json.dumps(_rl_figure_alts))\n"
                       "print(%r + str(sum(getattr(_rl_resource.getrusage(w), f) for w in (_rl_resource.RUSAGE_SELF, "
                       "_rl_resource.RUSAGE_CHILDREN) for f in ('ru_utime', 'ru_stime'))))"
                       % (FIGURE_REPORT, ALT_REPORT, CPU_REPORT))

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
                elif line.startswith(ALT_REPORT):
                    nb.metadata["rl_figure_alts"] = json.loads(line[len(ALT_REPORT):])
                elif line.startswith(CPU_REPORT):
                    nb.metadata["rl_cpu_seconds"] = float(line[len(CPU_REPORT):])
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
_PROMPT = re.compile(r"^\s*(>>>|\.\.\.)(\s|$)")


def fence_doctests(md: str) -> str:
    """Docstring examples (`>>>` lines, their `...` continuations and the output lines after them, up to a blank
    line) as fenced Python code blocks in a markdown text: markdown reads `>>>` as three nested blockquotes,
    losing the prompt and running the output onto the prompt's line. Fenced code already in `md` is left alone."""
    out, block, fenced = [], [], False

    def flush():
        if block:
            indent = min(len(b) - len(b.lstrip()) for b in block if b.strip())
            out.extend(["", "```pycon"] + [b[indent:] for b in block] + ["```", ""])
            block.clear()

    for line in md.split("\n"):
        if block:
            if line.strip():
                block.append(line)
                continue
            flush()
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if not fenced and _PROMPT.match(line) and line.lstrip().startswith(">>>"):
            block.append(line)
        else:
            out.append(line)
    flush()
    return "\n".join(out).strip("\n")


def _clean_api_card(cell):
    """Drop the Quarto-only link attributes (`{target=...}`) that nbdev's show_doc writes into its markdown, and
    show the docstring's examples as code (`fence_doctests`)."""
    for out in cell.get("outputs", []):
        md = out.get("data", {}).get("text/markdown")
        if md:
            md = _QUARTO_ATTRS.sub("", md if isinstance(md, str) else "".join(md))
            out["data"]["text/markdown"] = fence_doctests(md)


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
                alt = ((o.get("metadata") or {}).get("image/png") or {}).get("alt") or "figure"
                inner.append(f'<img alt="{e(alt)}" src="data:image/png;base64,{data["image/png"]}">')
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
    toc = (f'<nav class="rl-toc" aria-label="On this page" data-pagefind-ignore="all">'
           f'<div class="rl-toc-title">On this page</div><ol>{items}</ol></nav>')
    at = page.find(f'<h2 id="{heads[0][1]}"') if heads[0][0] == 2 else page.find("<h2 id=")
    return page if at < 0 else page[:at] + toc + page[at:]


@dataclass
class SiteOptions:
    "What every page of one build shares besides its chapters: MathJax, the search box, the cross-links."
    mathjax: tuple = ("", {})          # (url, font options)
    search: bool = False               # a Pagefind search box on every page (the build writes the index)
    links: "SiteLinks | None" = None
    pages: bool = True                 # write the pages (False: run the chapters as a test only)


_ANY_HEADING = re.compile(r'(<h[1-6] id="([^"]+)"[^>]*>)(.*?)(?=<a class="anchor-link")', re.S)


def pandoc_id(text: str) -> str:
    """The id Pandoc (so Quarto, so nbdev's site) gives a heading: lowercase, spaces as hyphens, only letters,
    digits, `_`, `-` and `.`, nothing before the first letter."""
    text = html.unescape(_TAG.sub("", text)).strip().lower()
    text = "".join(ch for ch in text if ch.isalnum() or ch in "_-. ")
    text = re.sub(r"\s+", "-", text)
    return re.sub(r"^[^a-z]+", "", text)


def add_pandoc_ids(page: str) -> str:
    """Give each heading Pandoc's id too (`pandoc_id`), where it differs from nbconvert's: a link written for the
    nbdev/Quarto site (`90_references.ipynb#ties-metrics-and-evaluation-conventions`) reaches its heading here."""
    taken = set(re.findall(r'\bid="([^"]+)"', page))

    def one(m):
        alias = pandoc_id(m.group(3))
        if not alias or alias in taken:
            return m.group(0)
        taken.add(alias)
        return f'{m.group(1)}<span class="rl-alias" id="{html.escape(alias, quote=True)}"></span>{m.group(3)}'
    return _ANY_HEADING.sub(one, page)


def render_chapter(nb, chapter: Chapter, chapters: list[Chapter], mathjax: tuple[str, dict] | SiteOptions) -> str:
    "The HTML page of one prepared, executed notebook; `mathjax` = (url, font options), or the build's SiteOptions."
    site = mathjax if isinstance(mathjax, SiteOptions) else SiteOptions(mathjax)
    exporter = _exporter(site.mathjax[0])
    nav = nav_groups(chapter, chapters)
    resources = {"metadata": {"name": chapter.title},
                 "rl": {"nav": nav, "widget_css": WIDGET_CSS, **site.mathjax[1], "search": site.search,
                        "part": chapter.part,
                        "prev": (chapter.prev.title, chapter.prev.out_name) if chapter.prev else None,
                        "next": (chapter.next.title, chapter.next.out_name) if chapter.next else None,
                        "source": chapter.path.name if chapter.path.is_file() else ""}}
    nb.metadata["title"] = chapter.title
    body, _ = exporter.from_notebook_node(nb, resources=resources)
    body = _IPYNB_LINK.sub(lambda m: f'{m.group(1)}.html{m.group(2) or ""}"', body)
    body = body.replace('<a class="anchor-link"', '<a class="anchor-link" data-pagefind-ignore')  # no ¶ in results
    if site.links is not None:
        body = add_cross_links(body, site.links, chapter.out_name)
    return add_page_toc(add_pandoc_ids(body))


@dataclass
class BuildRecord:
    """What a build ran, for a later build of the student copy: the package's hash and, for each chapter that ran
    without error, the hashes of its code cells in order (`record=` writes it, `reuse=` reads it)."""
    package: str = ""
    chapters: dict = field(default_factory=dict)

    @staticmethod
    def read(path) -> "BuildRecord":
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return BuildRecord(data.get("package", ""), data.get("chapters", {}))

    def write(self, path):
        Path(path).write_text(json.dumps({"package": self.package, "chapters": self.chapters}, indent=1) + "\n",
                              encoding="utf-8")


def package_hash(lib: Path | None = None) -> str:
    "A hash of the package's source (every .py under it), the code every chapter imports."
    import hashlib
    lib = lib or ROOT / "retrieval_lit"
    h = hashlib.sha1()
    for f in sorted(lib.rglob("*.py")):
        if "__pycache__" not in f.parts:
            h.update(str(f.relative_to(lib)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def _runnable(src: str) -> str:
    """A code cell's source as a kernel runs it: nbdev's directives (comments to Python) and a student copy's stub
    header (`course.STUB_HEADER`, a comment) left out, so a stub and the book's cell it copies hash alike."""
    from retrieval_lit.course import STUB_HEADER
    src = src[len(STUB_HEADER):] if src.startswith(STUB_HEADER) else src
    return "\n".join(line for line in src.splitlines() if not line.startswith("#|")).strip()


def _cell_hashes(nb) -> list[str]:
    import hashlib
    return [hashlib.sha1(_runnable(c.source).encode()).hexdigest() for c in nb.cells if c.cell_type == "code"]


_READS_FOLDER = re.compile(r"\.ipynb|answers")


def ran_in_record(nb, recorded: list[str]) -> bool:
    """Whether running notebook `nb` (a student copy) is running cells that a recorded build already ran without
    error: its code cells are the recorded run's first cells (a stub is the book's cell it copies, under a comment:
    `course.student_notebook`), every cell from the first stub on is a stub (the Exercises part, which the book ran
    in the same order), and no cell reads what a student's folder holds differently (the notebooks, `answers/`). A
    fresh kernel running it then runs what already ran."""
    from retrieval_lit.course import STUB_HEADER
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    first = next((i for i, src in enumerate(code) if src.startswith(STUB_HEADER)), len(code))
    if not all(src.startswith(STUB_HEADER) for src in code[first:]):
        return False
    if any(_READS_FOLDER.search(src) for src in code):
        return False
    return len(code) <= len(recorded) and _cell_hashes(nb) == list(recorded[:len(code)])


def build(out: str | os.PathLike = "site", nbs: str | os.PathLike | None = None, only=None,
          execute: bool = True, slow: bool = False, timeout: int = 600, mathjax: str | None = None,
          allow_errors: bool = False, api_cards: bool = True, log=print, jobs: int = 1, search: bool = True,
          budget: float = 60, record: str | os.PathLike | None = None,
          reuse: str | os.PathLike | None = None, pages: bool = True) -> list[Path]:
    """Build the site into `out`; return the written pages (index.html first). Logs each chapter's execution time
    and, at the end, the chapters that ran longer than `budget` seconds. `search`: index the pages with Pagefind
    (a dev dependency) and put a search box on every page. `record`: write which chapters ran (a `BuildRecord`);
    `reuse`: a record of an earlier build of the same package, whose chapters a student copy need not run again
    (`ran_in_record`). `pages=False` runs the chapters as a test and writes nothing (no pages, no index)."""
    nbs = Path(nbs) if nbs else ROOT / "nbs"
    out = Path(out)
    if not nbs.is_dir():
        raise DocsBuildError(f"`nbs`: no notebook folder at {nbs}")
    chapters = list_chapters(nbs, only)
    if not chapters:
        raise DocsBuildError(f"`nbs`: no notebooks in {nbs}")
    search = search and pages
    if search:
        pagefind_command()                # fail early, before hours of executing, when Pagefind is missing
    mathjax, explicit = ("", {}), mathjax
    if pages:
        mj = find_mathjax(explicit)
        out.mkdir(parents=True, exist_ok=True)
        copy_mathjax(mj.folder, out / "_static" / "mathjax")
        mathjax = (f"_static/mathjax/MathJax.js?config={mj.config}", mj.options())
    contents = None
    nav_chapters = list(chapters)
    if not any(c.path.stem == "index" for c in chapters):
        contents = Chapter(Path("index.ipynb"), "Contents", "", "index.html", next=chapters[0])
        chapters[0].prev = contents
        nav_chapters = [contents] + nav_chapters
    entries = api_entries(nbs=nbs)
    api = None
    if entries:
        api = Chapter(Path("api.ipynb"), "API index", "Every public name, its summary and the cell that defines it.",
                      "api.html", prev=nav_chapters[-1])
        nav_chapters[-1].next = api
        nav_chapters.append(api)
    site = SiteOptions(mathjax, search, site_links(nav_chapters, entries), pages)
    rec = BuildRecord(package_hash())
    reused = BuildRecord.read(reuse) if reuse else None
    if reused is not None and reused.package != rec.package:
        log("  (the record to reuse is of another package source: every chapter runs)")
        reused = None
    written, times = [], {}
    args = [(ch, nav_chapters, out, site, execute, slow, timeout, allow_errors, api_cards,
             (reused.chapters.get(ch.path.stem) if reused else None)) for ch in chapters]
    if jobs > 1 and len(chapters) > 1:
        from concurrent.futures import ProcessPoolExecutor
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(_build_page, *a) for a in args]
            try:
                for ch, f in zip(chapters, futures):       # in chapter order; the first failure stops the build
                    page, line, seconds, hashes = f.result()
                    written.append(page)
                    times[ch.path.name] = seconds
                    rec.chapters[ch.path.stem] = hashes
                    log(line)
            except BaseException:
                pool.shutdown(wait=True, cancel_futures=True)
                raise
    else:
        for ch, a in zip(chapters, args):
            page, line, seconds, hashes = _build_page(*a)
            written.append(page)
            times[ch.path.name] = seconds
            rec.chapters[ch.path.stem] = hashes
            log(line)
    if contents is not None and site.pages:
        written.insert(0, write_contents_page(out, contents, chapters, nav_chapters, site))
    if api is not None and site.pages:
        written.append(write_api_page(out, api, entries, nav_chapters, site, list_chapters(nbs) if only else chapters))
    written = [p for p in written if p is not None]
    notation = [p for p in written if p.stem.endswith("_notation")]
    for page in notation:
        page.write_text(link_notation_rows(page.read_text(encoding="utf-8"), lambda href: _page_headings(out, href)),
                        encoding="utf-8")
    if record:
        rec.write(record)
    ran = {k: v for k, v in times.items() if v is not None}
    if ran:     # a chapter's time on an idle machine is at most the smaller of its wall and CPU times
        over = sorted((v, k) for k, v in ran.items() if v > budget)[::-1]
        log(f"  executing {len(ran)} chapters: {sum(ran.values()):.0f} s summed (each chapter the smaller of its run "
            "and cpu times, what an idle machine would take at most)"
            + (f"; over the {budget:g} s budget: " + ", ".join(f"{k} {v:.0f} s" for v, k in over) if over else
               f"; none over the {budget:g} s budget"))
    if search:
        log("  " + write_search_index(out))
    return written


def _page_headings(out: Path, href: str) -> list[tuple[str, str]]:
    "(id, text) of the h2 and h3 headings of the built page `href` (a file in `out`)."
    f = out / href.split("#")[0]
    if not f.is_file():
        return []
    return [(hid, html.unescape(_TAG.sub("", text)).strip()) for _, hid, text in _HEADING.findall(f.read_text("utf-8"))]


def _build_page(ch: Chapter, nav_chapters, out: Path, site: SiteOptions, execute: bool, slow: bool, timeout: int,
                allow_errors: bool, api_cards: bool, recorded: list | None = None):
    """Execute one chapter in a fresh kernel and write its page; (page, log line, seconds executing or None, the
    hashes of its code cells when it ran without error). The seconds are the smaller of the wall time and the
    kernel's CPU time: on a loaded machine the wall time counts the other processes' turns. Runs in a worker
    process too."""
    import nbformat
    t0 = time.time()
    source = nbformat.read(ch.path, as_version=4)
    hashes = _cell_hashes(source)
    reuse = execute and recorded is not None and ran_in_record(source, recorded)
    run = execute and not reuse
    nb = prepare_for_docs(source, slow=slow, api_cards=api_cards and run, checks=run)
    seconds, untitled, cpu = None, 0, None
    if run:
        try:
            execute_notebook(nb, ch.path.parent, timeout=timeout, allow_errors=allow_errors)
        except Exception as exc:  # CellExecutionError, timeouts, dead kernels
            msg = re.sub(r"\x1b\[[0-9;]*m", "", str(exc))
            raise DocsBuildError(f"{ch.path.name}: execution failed: {msg[-3000:]}") from exc
        seconds = time.time() - t0
        blank = missing_figures(nb)
        if blank:
            raise DocsBuildError(f"{ch.path.name}: cell{'s' if len(blank) > 1 else ''} {blank} draw a figure but "
                                 "produced no image (a non-inline matplotlib backend, or a figure closed unseen?)")
        problems = page_problems(nb)
        if problems:
            raise DocsBuildError(f"{ch.path.name}: what a reader sees is broken:\n  " + "\n  ".join(problems))
        untitled = apply_alt_texts(nb)
        cpu = nb.metadata.pop("rl_cpu_seconds", None)
    nw, page = 0, None
    if site.pages:
        nb = finish_for_docs(nb)
        collapse_solutions(nb)
        nw = staticize_widgets(nb)
        page = out / ch.out_name
        page.write_text(render_chapter(nb, ch, nav_chapters, site), encoding="utf-8")
    total = time.time() - t0
    how = (f"run {seconds:6.1f}s" + (f" (cpu {cpu:6.1f}s)" if cpu is not None else "")
           + f"  page {total - seconds:5.1f}s" if seconds is not None else
           "not run: the site build ran these cells (its stubs too)" if reuse else f"page {total:5.1f}s (not run)")
    line = (f"  {ch.path.name:30s} -> {page.name if page else '(no page)':30s} {how}"
            + (f"  ({nw} widget view{'s' if nw != 1 else ''})" if nw else "")
            + (f"  ({untitled} figure{'s' if untitled != 1 else ''} without a title: alt text 'figure')"
               if untitled else ""))
    idle = None if seconds is None else min(seconds, cpu) if cpu is not None else seconds
    return page, line, idle, (hashes if run else None)


def apply_alt_texts(nb) -> int:
    """Give each figure of an executed notebook its alt text: the title the kernel read from the figure as it was
    saved (`rl_figure_alts`, by the PNG's hash; see `_FIGURE_CHECK`), on the output's `image/png` metadata, which
    the page template writes as the image's `alt`. Also the figures inside a widget's output. Returns how many
    figures had no title to read."""
    import base64
    import hashlib
    alts = nb.metadata.pop("rl_figure_alts", {}) or {}
    missing = 0

    def label(out):
        nonlocal missing
        png = out.get("data", {}).get("image/png")
        if not png:
            return
        png = png if isinstance(png, str) else "".join(png)
        try:
            alt = alts.get(hashlib.sha1(base64.b64decode(png)).hexdigest())
        except ValueError:
            alt = None
        if not alt:
            missing += 1
        md = out.setdefault("metadata", {})
        md.setdefault("image/png", {})["alt"] = alt or "figure"

    for cell in nb.cells:
        for out in cell.get("outputs", []):
            label(out)
    state = (nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}) or {}).get("state", {})
    for entry in state.values():
        for out in (entry.get("state", {}) or {}).get("outputs", []) or []:
            if isinstance(out, dict):
                label(out)
    return missing


def pagefind_command() -> list[str]:
    "The command that runs Pagefind (`pip install \"pagefind[bin]\"`, a dev dependency); DocsBuildError without it."
    import importlib.util
    if importlib.util.find_spec("pagefind") is not None and importlib.util.find_spec("pagefind_bin") is not None:
        return [sys.executable, "-m", "pagefind"]
    if shutil.which("pagefind"):
        return [shutil.which("pagefind")]
    raise DocsBuildError("the search index needs Pagefind: pip install \"pagefind[bin]==1.5.2\" (in the [dev] extras), "
                         "or build without search (--no-search)")


def write_search_index(out: Path) -> str:
    "Index the built pages with Pagefind into `out`/pagefind (offline: no server, no network); a line for the log."
    import subprocess
    t0 = time.time()
    shutil.rmtree(out / "pagefind", ignore_errors=True)
    res = subprocess.run(pagefind_command() + ["--site", str(out), "--quiet"], capture_output=True, text=True)
    if res.returncode != 0 or not (out / "pagefind" / "pagefind-ui.js").is_file():
        raise DocsBuildError(f"Pagefind failed to index {out}: {(res.stderr or res.stdout)[-2000:]}")
    return f"search index: {out / 'pagefind'} ({time.time() - t0:.1f} s)"


def write_contents_page(out: Path, contents: Chapter, chapters: list[Chapter], nav_chapters=None,
                        site: SiteOptions | tuple | None = None) -> Path:
    "A generated index.html listing the chapters (used when there is no index notebook)."
    import nbformat
    lines = ["# retrieval_lit", "", "The chapters of this documentation:", ""]
    for c in chapters:
        lines.append(f"1. [{c.title}]({c.out_name})" + (f": {c.description}" if c.description else ""))
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("\n".join(lines))])
    page = out / "index.html"
    page.write_text(render_chapter(nb, contents, nav_chapters or [contents] + chapters, site), encoding="utf-8")
    return page


def _md_text(text: str) -> str:
    """Plain text (a docstring's sentence) safe in a markdown table cell: its `code spans` kept, and elsewhere no
    emphasis, no math, no tags and no column bar."""
    pieces = re.split(r"(`[^`]+`)", text)
    return "".join(p.replace("|", "\\|") if p.startswith("`") and p.endswith("`") and len(p) > 1 else
                   re.sub(r"([\\*_\[\]|$`])", r"\\\1", html.escape(p, quote=False)) for p in pieces)


def api_index_markdown(entries: list[ApiEntry], chapters: list[Chapter], links: SiteLinks) -> list[str]:
    """The API index as markdown cells: a heading per part, a table per module (name, what it is), in the book's
    order. `chapters`: every chapter of the book (for its part and title), built or not."""
    by_stem = {c.path.stem: c for c in chapters}
    rank = {c.path.stem: i for i, c in enumerate(chapters)}
    parts, order = {}, []
    for e in sorted(entries, key=lambda e: (rank.get(e.stem, len(rank)), e.module)):
        ch = by_stem.get(e.stem)
        part = (ch.part if ch else "") or "Other modules"
        if part not in parts:
            parts[part] = {}
            order.append(part)
        parts[part].setdefault((e.stem, e.module), []).append(e)
    cells = ["# API index\n\n> Every public name of `retrieval_lit` (each module's `__all__`) with its one-line "
             "summary, by part and module; each name links to the cell of the chapter that defines it. The machinery "
             "that modules share (`#| exporti`) is importable but not listed.\n\n"
             f"{len(entries)} names in {len({e.module for e in entries})} modules."]
    for part in order:
        md = [f"## {part}"]
        for (stem, module), items in parts[part].items():
            ch = by_stem.get(stem)
            title = f"{stem[:2]}: {ch.title}" if ch else stem
            where = f"[{title}]({links.stems[stem]})" if stem in links.stems else title
            md += ["", f"### retrieval_lit.{module}", "", f"Chapter {where}", "",
                   "| name | what it is |", "|:---|:---|"]
            for e in items:
                href = links.names.get(f"{e.module}.{e.name}")
                name = f"[`{e.name}`]({href})" if href else f"`{e.name}`"
                summary = e.summary.replace("|", "\\|").replace("\n", " ") if e.markdown else _md_text(e.summary)
                md.append(f"| {name} | {summary} |")
        cells.append("\n".join(md))
    return cells


def write_api_page(out: Path, api: Chapter, entries: list[ApiEntry], nav_chapters: list[Chapter],
                   site: SiteOptions, book: list[Chapter]) -> Path:
    "The API index page (`api_index_markdown` of the whole `book`), in the frame of the built pages."
    import nbformat
    cells = api_index_markdown(entries, book, site.links)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(c) for c in cells])
    page = out / api.out_name
    page.write_text(render_chapter(nb, api, nav_chapters, site), encoding="utf-8")
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
    p.add_argument("--no-search", action="store_true", help="no search box and no Pagefind index")
    p.add_argument("--budget", type=float, default=60,
                   help="seconds a chapter may take to execute; the log names those over it (default 60)")
    p.add_argument("--record", default=None, metavar="FILE", help="write which chapters ran, for --reuse")
    p.add_argument("--no-pages", action="store_true", help="run the chapters as a test: write no pages")
    p.add_argument("--reuse", default=None, metavar="FILE",
                   help="a --record of a build of the same package: a student copy's chapter whose cells that build "
                        "ran (its stubs too) is rendered without running again")
    a = p.parse_args(argv)
    t0 = time.time()
    try:
        pages = build(a.out, a.nbs, a.only, execute=not a.no_execute, slow=a.slow, timeout=a.timeout,
                      mathjax=a.mathjax, allow_errors=a.allow_errors, jobs=max(1, a.jobs), search=not a.no_search,
                      budget=a.budget, record=a.record, reuse=a.reuse, pages=not a.no_pages)
    except DocsBuildError as exc:
        print(f"build_docs: {exc}", file=sys.stderr)
        return 1
    if a.no_pages:
        print(f"ran the chapters of {a.nbs or 'nbs/'} in {time.time() - t0:.0f}s (no pages written)")
    else:
        print(f"wrote {len(pages)} pages to {Path(a.out).resolve()} in {time.time() - t0:.0f}s; open "
              f"{(Path(a.out) / 'index.html').resolve()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
