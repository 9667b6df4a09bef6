"""The documentation a reader opens: the offline build (tools/build_docs.py), its check in
headless Chromium (tools/check_docs.py), and the nbdev/Quarto settings.

The build test executes two small notebooks made here (math, a figure, a widget, nbdev
directives), so it needs a Jupyter kernel but no network; the browser test skips,
saying why, when Debian's chromium/chromium-driver or selenium are not installed."""
import copy
import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


bd = _load("build_docs")
cd = _load("check_docs")
v4 = nbformat.v4


# ----------------------------------------------------------------------------- directives
def test_split_directives_reads_nbdev_and_quarto_forms():
    d, code = bd.split_directives("#| default_exp plots\n#|hide\n#| eval: false\n\nx = 1\n#| not a directive\n")
    assert d == {"default_exp": "plots", "hide": "", "eval": "false"}
    assert code == "x = 1\n#| not a directive"
    assert bd.split_directives("y = 2") == ({}, "y = 2")


def test_exported_names_are_public_defs_and_classes():
    code = "import numpy as np\ndef f(x): pass\ndef _g(): pass\nclass C: pass\nz = 3"
    assert bd.exported_names(code) == ["f", "C"]
    assert bd.exported_names("def broken(:") == []


def test_prepare_and_finish_apply_the_directives():
    nb = v4.new_notebook(cells=[
        v4.new_code_cell("#| default_exp x"),
        v4.new_markdown_cell("# Title\n\n> what it is"),
        v4.new_code_cell("#| hide\nimport os"),
        v4.new_code_cell("#| export\ndef f(a):\n    'Doc.'\n    return a"),
        v4.new_code_cell("#| eval: false\nraise SystemExit"),
        v4.new_code_cell("#| slow\nslow_thing()"),
        v4.new_code_cell("#| echo: false\nprint(1)"),
        v4.new_code_cell("#| output: false\nprint(2)"),
    ])
    prepared = bd.prepare_for_docs(nb)
    assert nb.cells[2].source.startswith("#| hide")  # the caller's notebook is untouched
    sources = [c.source for c in prepared.cells]
    assert any("_rl_show_doc(f)" in s for s in sources)  # an API card follows the exported cell
    tags = {c.source.splitlines()[-1]: c.metadata.get("tags", []) for c in prepared.cells if c.cell_type == "code"}
    assert "skip-execution" in tags["raise SystemExit"] and "skip-execution" in tags["slow_thing()"]
    for c in prepared.cells:  # pretend they ran
        if c.cell_type == "code":
            c.outputs = [v4.new_output("stream", name="stdout", text="out\n")]
    done = bd.finish_for_docs(prepared)
    code = [c for c in done.cells if c.cell_type == "code"]
    shown = [c.source for c in code]
    assert "import os" not in shown and not any("default_exp" in s for s in shown)
    assert "def f(a):\n    'Doc.'\n    return a" in shown and "raise SystemExit" in shown
    skipped = next(c for c in code if c.source == "raise SystemExit")
    assert "not run" in skipped.outputs[0].text
    slow = next(c for c in code if c.source == "slow_thing()")
    assert "slow" in slow.outputs[0].text
    echo_off = next(c for c in code if "rl-no-input" in c.metadata.get("tags", []))
    assert echo_off.outputs and echo_off.source == ""
    assert next(c for c in code if c.source == "print(2)").outputs == []
    assert all("rl_docs" not in c.metadata for c in done.cells)


def test_list_chapters_orders_titles_and_links(tmp_path):
    for name, src in [("10_b.ipynb", "# Bee\n\n> second"), ("index.ipynb", "# Home"), ("02_a.ipynb", "# Ay"),
                      ("_hidden.ipynb", "# no")]:
        nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell(src)]), tmp_path / name)
    chs = bd.list_chapters(tmp_path)
    assert [c.out_name for c in chs] == ["index.html", "02_a.html", "10_b.html"]
    assert [c.title for c in chs] == ["Home", "Ay", "Bee"] and chs[2].description == "second"
    assert chs[0].prev is None and chs[0].next is chs[1] and chs[2].prev is chs[1] and chs[2].next is None
    with pytest.raises(bd.DocsBuildError, match="no notebook named"):
        bd.list_chapters(tmp_path, only=["nope"])


# ----------------------------------------------------------------------------- widgets
def test_widget_static_html_shows_the_final_state():
    state = {
        "box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_s", "IPY_MODEL_h", "IPY_MODEL_t", "IPY_MODEL_c"]}},
        "s": {"model_name": "IntSliderModel", "state": {"value": 3, "min": 0, "max": 8, "description": "radius"}},
        "h": {"model_name": "HTMLModel", "state": {"value": "<b>LGAP = 0.5424</b>"}},
        "t": {"model_name": "ToggleButtonsModel", "state": {"_options_labels": ["rel", "irr"], "index": 1}},
        "c": {"model_name": "CheckboxModel", "state": {"value": True, "description": "tie"}},
    }
    out = bd.widget_static_html("box", state)
    assert "radius" in out and ">3<" in out and "<b>LGAP = 0.5424</b>" in out
    assert '<span class="rl-w-opt rl-w-on">irr</span>' in out and '<span class="rl-w-opt">rel</span>' in out
    assert "☑ tie" in out
    btn = bd.widget_static_html("b", {"b": {"model_name": "ButtonModel", "state": {"description": "3 ✓", "button_style": "success"}}})
    assert "rl-w-style-success" in btn and "3 ✓" in btn
    assert "[widget]" in bd.widget_static_html("missing", state)


def test_staticize_widgets_replaces_views_and_drops_state():
    nb = v4.new_notebook(cells=[v4.new_code_cell("w")])
    nb.cells[0].outputs = [v4.new_output("execute_result", execution_count=1, data={
        "text/plain": "Label(value='hi')", bd.WIDGET_VIEW: {"model_id": "m", "version_major": 2, "version_minor": 0}})]
    nb.metadata["widgets"] = {bd.WIDGET_STATE: {"state": {"m": {"model_name": "LabelModel", "state": {"value": "hi"}}}}}
    assert bd.staticize_widgets(nb) == 1
    data = nb.cells[0].outputs[0].data
    assert bd.WIDGET_VIEW not in data and "rl-widget-static" in data["text/html"] and ">hi<" in data["text/html"]
    assert "widgets" not in nb.metadata


# ----------------------------------------------------------------------------- MathJax
def test_find_mathjax_finds_a_local_copy_or_says_how_to_get_one(tmp_path):
    with pytest.raises(bd.DocsBuildError, match="jupyter-server-mathjax"):
        bd.find_mathjax(tmp_path)
    mj = bd.find_mathjax()
    assert (mj.folder / "MathJax.js").is_file() and (mj.folder / "config" / f"{mj.config}.js").is_file()


# ----------------------------------------------------------------------------- the build
DEMO = [
    v4.new_code_cell("#| default_exp demo"),
    v4.new_markdown_cell("# A demo chapter\n\n> Math, a figure and a widget.\n\n"
                         "Inline $\\mathrm{AP}@p = \\frac{1}{R_p}\\sum_{m=1}^{p} P@m\\,\\mathrm{rel}(m)$ and\n\n"
                         "$$\\varphi(S)=\\frac{A(S)}{B(S)}.$$\n\nSee [the other chapter](02_other.ipynb). "
                         "Fonts: $\\mathbb{R}$, $\\mathcal{A}$."),
    v4.new_code_cell("#| hide\nimport numpy as np"),
    v4.new_code_cell("#| export\ndef add(a: int, # first\n        b: int = 2, # second\n       ) -> int: # the sum\n"
                     "    \"\"\"Add two integers.\n\n    >>> add(40)\n    42\n    >>> add(1, b=1)\n    2\n    \"\"\"\n"
                     "    return a + b"),
    v4.new_code_cell("add(40)"),
    v4.new_code_cell("#| eval: false\nraise SystemExit('never run')"),
    v4.new_code_cell("import matplotlib.pyplot as plt\nfig, ax = plt.subplots(figsize=(3, 2))\n"
                     "ax.plot([0, 1], [1, 0])\nax.set_title('a falling line')\nplt.show()"),
    v4.new_code_cell("fig, ax = plt.subplots(figsize=(3, 2))\nax.bar([1, 2], [2, 1])\nplt.show()"),
    v4.new_markdown_cell("As chapter 02 shows, and as `add` does: see `02_other`."),
    v4.new_code_cell("import ipywidgets as W\ns = W.IntSlider(value=1, min=0, max=8, description='radius')\n"
                     "W.VBox([s, W.HTML('<b>LGAP = 0.5424</b>')])"),
    v4.new_code_cell("s.value = 5"),
]


SIDEBAR = """website:
  sidebar:
    contents:
      - index.ipynb
      - section: "Part one"
        contents:
          - 01_demo.ipynb
      - section: "Part two"
        contents:
          - 02_other.ipynb
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    nbs = tmp_path_factory.mktemp("nbs")
    nbformat.write(v4.new_notebook(cells=DEMO), nbs / "01_demo.ipynb")
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("# The other\n\n$x^2$"), v4.new_code_cell("print('hi')")]),
                   nbs / "02_other.ipynb")
    (nbs / "sidebar.yml").write_text(SIDEBAR)
    out = tmp_path_factory.mktemp("site")
    pages = bd.build(out, nbs, log=lambda *a: None)
    return out, pages


def test_build_writes_pages_with_navigation_and_no_network(site):
    out, pages = site
    assert [p.name for p in pages] == ["index.html", "01_demo.html", "02_other.html"]
    assert (out / "_static" / "mathjax" / "MathJax.js").is_file()
    demo = (out / "01_demo.html").read_text()
    # executed, hidden cells gone, skipped cell marked, API card, link rewritten
    assert ">42<" in demo and "import numpy as np" not in demo and "default_exp" not in demo
    assert "not run" in demo and "Add two integers." in demo and 'href="02_other.html"' in demo
    assert demo.count('<img') >= 1 and "data:image/png;base64," in demo
    # the widget shows the state it had at the end of the notebook (slider moved to 5)
    assert "rl-widget-static" in demo and "LGAP = 0.5424" in demo
    assert re.search(r'class="rl-w-value">5<', demo)
    # navigation: sidebar lists every page, prev/next
    for p in ("index.html", "01_demo.html", "02_other.html"):
        assert f'href="{p}"' in demo
    prev = re.search(r'<a [^>]*rel="prev"[^>]*>', demo).group(0)
    nxt = re.search(r'<a [^>]*rel="next"[^>]*>', demo).group(0)
    assert 'href="index.html"' in prev and 'href="02_other.html"' in nxt
    # nothing loaded from outside the site
    for page in out.glob("*.html"):
        text = page.read_text()
        assert not re.search(r'<(script|link|img)[^>]+(src|href)="(https?:)?//', text), page.name
        assert "_static/mathjax/MathJax.js?config=" in text
    index = (out / "index.html").read_text()
    assert "A demo chapter" in index and "Math, a figure and a widget." in index


def test_the_sidebar_shows_the_parts_with_the_current_one_open(site):
    out, _ = site
    demo = (out / "01_demo.html").read_text()
    parts = re.findall(r'<details class="rl-part"( open(?:="")?)?><summary>([^<]+)</summary>\s*<ol>(.*?)</ol>'
                       r'</details>', demo, re.S)
    assert [(p[1], bool(p[0])) for p in parts] == [("Part one", True), ("Part two", False)]
    assert 'href="01_demo.html"' in parts[0][2] and 'href="02_other.html"' in parts[1][2]
    index = (out / "index.html").read_text()      # a page outside the parts opens them all
    assert index.count('<details class="rl-part" open="">') == 2


def test_docstring_examples_figures_and_prose_links(site):
    "The docstring's examples are a code block with the prompts; each figure's alt text is its title; prose links."
    out, _ = site
    demo = (out / "01_demo.html").read_text()
    assert "<blockquote>\n<blockquote>" not in demo
    block = re.search(r'<div class="highlight"><pre>(?:(?!</pre>).)*add</span><span class="p">\(</span>'
                      r'<span class="mi">40(?:(?!</pre>).)*</pre>', demo, re.S).group(0)
    text = re.sub(r"<[^>]+>", "", block)
    assert "&gt;&gt;&gt; add(40)\n42\n&gt;&gt;&gt; add(1, b=1)\n2" in text
    alts = re.findall(r'<img[^>]*\balt="([^"]*)"', demo)
    assert alts == ["a falling line", "a figure without a title: 2 bars"], alts
    assert '<a class="rl-xref" href="02_other.html">chapter 02</a>' in demo
    assert '<a class="rl-xref" href="02_other.html"><code>02_other</code></a>' in demo


def test_the_build_writes_a_search_index_and_a_box_on_every_page(site):
    out, _ = site
    assert (out / "pagefind" / "pagefind-ui.js").is_file() and any((out / "pagefind").glob("*.pf_meta"))
    for page in out.glob("*.html"):
        text = page.read_text()
        assert '<div id="rl-search"></div>' in text and "data-pagefind-body" in text, page.name


def test_build_reports_a_failing_notebook_by_name(tmp_path):
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("# Bad"), v4.new_code_cell("1/0")]), nbs / "03_bad.ipynb")
    with pytest.raises(bd.DocsBuildError, match=r"(?s)03_bad.ipynb: execution failed.*ZeroDivisionError: division by zero"):
        bd.build(tmp_path / "site", nbs, log=lambda *a: None)


def test_build_fails_a_chapter_whose_drawing_cell_shows_no_figure(tmp_path):
    "matplotlib.use('Agg') in a chapter silences every later figure; the build names the cells (run in 2 jobs)."
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    draw = "import matplotlib.pyplot as plt\nplt.plot([0, 1], [1, 0])\nplt.show()"
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("# Fine"), v4.new_code_cell(draw)]), nbs / "01_fine.ipynb")
    nbformat.write(v4.new_notebook(cells=[v4.new_markdown_cell("# Blank"), v4.new_code_cell("import matplotlib"),
                                          v4.new_code_cell("matplotlib.use('Agg')\n" + draw)]), nbs / "02_blank.ipynb")
    with pytest.raises(bd.DocsBuildError, match=r"02_blank.ipynb: cell \[2\] draw a figure but produced no image"):
        bd.build(tmp_path / "site", nbs, log=lambda *a: None, jobs=2)
    pages = bd.build(tmp_path / "site", nbs, only=["01_fine"], log=lambda *a: None)
    assert "data:image/png" in pages[-1].read_text()


# ----------------------------------------------------------------------------- folded solutions
def _exercises_nb(chapter, n_exercises, solved, tail=()):
    "A chapter with `n_exercises` exercises (the first with a nested list) and the solutions `solved` (None: none)."
    items = [f"{i}. Question {i}." + ("\n   1. part a\n   2. part b" if i == 1 else "") for i in range(1, n_exercises + 1)]
    cells = [v4.new_markdown_cell(f"# Chapter {chapter}\n\n## Setup"), v4.new_code_cell("x = 1"),
             v4.new_markdown_cell("## Summary\n\n- x is 1.\n\n## Exercises\n\n" + "\n".join(items))]
    if solved is not None:
        cells.append(v4.new_markdown_cell("## Solutions"))
        for i in solved:
            cells += [v4.new_markdown_cell(f"### Solution {chapter}.{i}\n\nWorked answer {i}: $x = 1$."),
                      v4.new_code_cell(f"assert x == 1   # worked code {i}"), v4.new_code_cell(f"y{i} = {i}")]
    return v4.new_notebook(cells=cells + list(tail))


def test_collapse_solutions_marks_each_block_from_its_heading_to_the_next():
    nb = _exercises_nb("03", 2, [1, 2], tail=[v4.new_code_cell("#| hide\nimport nbdev; nbdev.nbdev_export()")])
    done = bd.finish_for_docs(bd.prepare_for_docs(nb, api_cards=False))
    assert bd.collapse_solutions(done) == 2
    marks = [(c.metadata.get("rl_solution"), c.metadata.get("rl_solution_end", False)) for c in done.cells]
    assert marks[-6:] == [("Solution 03.1", False), (None, False), (None, True),
                          ("Solution 03.2", False), (None, False), (None, True)]   # the hidden last cell is gone
    assert marks[:-6] == [(None, False)] * (len(done.cells) - 6)
    assert bd.collapse_solutions(bd.finish_for_docs(bd.prepare_for_docs(_exercises_nb("03", 2, None)))) == 0


@pytest.fixture(scope="module")
def exercise_site(tmp_path_factory):
    "Pages (not executed) of a solved chapter, a half-solved one and one without solutions."
    nbs = tmp_path_factory.mktemp("ex_nbs")
    nbformat.write(_exercises_nb("03", 3, [1, 2, 3]), nbs / "03_solved.ipynb")
    nbformat.write(_exercises_nb("04", 3, [1, 2]), nbs / "04_partial.ipynb")
    nbformat.write(_exercises_nb("05", 2, None), nbs / "05_unsolved.ipynb")
    out = tmp_path_factory.mktemp("ex_site")
    bd.build(out, nbs, execute=False, log=lambda *a: None)
    return out


def test_solutions_are_folded_closed_under_their_numbers(exercise_site):
    page = (exercise_site / "03_solved.html").read_text()
    assert re.findall(r'<details class="rl-solution"><summary>(Solution [\d.]+)</summary>', page) == [
        "Solution 03.1", "Solution 03.2", "Solution 03.3"]
    assert "<details open" not in page and page.count("</details>") == 3
    for i in (1, 2, 3):            # the heading, the prose and the code of each solution are inside its block
        block = page[page.index(f"<summary>Solution 03.{i}</summary>"):]
        block = block[:block.index("</details>")]
        assert f"Worked answer {i}" in block and f"worked code {i}" in block and f"y{i}" in block
    assert cd.solution_problems(page, "03_solved.html") == []
    assert cd.solution_problems(page, "03_solved.html", require=True) == []
    toc = page[page.index('<nav class="rl-toc"'):page.index("</nav>", page.index('<nav class="rl-toc"'))]
    assert 'href="#Solutions"' in toc and "Solution 03.1" not in toc      # the folded solutions stay out of the map


def test_the_solution_check_catches_missing_and_open_solutions(exercise_site):
    partial = (exercise_site / "04_partial.html").read_text()
    assert cd.solution_problems(partial, "04_partial.html") == [
        "exercises without a solution: ['04.3'] (3 exercises, 2 solutions)"]
    unsolved = (exercise_site / "05_unsolved.html").read_text()
    assert cd.solution_problems(unsolved, "05_unsolved.html") == []          # no Solutions section: not asked for
    assert "['05.1', '05.2']" in " ".join(cd.solution_problems(unsolved, "05_unsolved.html", require=True))
    solved = (exercise_site / "03_solved.html").read_text()
    opened = solved.replace('<details class="rl-solution">', '<details class="rl-solution" open>', 1)
    assert cd.solution_problems(opened, "03_solved.html") == ["solutions shown open (<details open>): ['Solution 03.1']"]
    unfolded = re.sub(r'<details class="rl-solution"><summary>Solution 03.2</summary>(.*?)</details>', r"\1", solved,
                      count=1, flags=re.S)
    text = " ".join(cd.solution_problems(unfolded, "03_solved.html"))
    assert "outside a folded <details> block: ['Solution 03.2']" in text and "3 cell(s) of the Solutions part" in text
    assert "['03.2']" in text                                                 # and 03.2 counts as missing
    renumbered = solved.replace("<summary>Solution 03.3</summary>", "<summary>Solution 03.4</summary>")
    assert "solutions to no exercise of the list: ['03.4']" in " ".join(cd.solution_problems(renumbered, "03_solved.html"))
    elsewhere = solved.replace("<summary>Solution 03.3</summary>", "<summary>Solution 11.3</summary>")
    assert "another chapter: ['11.3']" in " ".join(cd.solution_problems(elsewhere, "03_solved.html"))


def test_the_solution_check_runs_without_a_browser(exercise_site, monkeypatch, capsys):
    monkeypatch.setattr(cd.shutil, "which", lambda name: None)               # no chromium here
    assert cd.main([str(exercise_site), "--pages", "03_solved.html", "05_unsolved.html"]) == 2   # fine, browser skipped
    assert cd.main([str(exercise_site), "--pages", "03_solved.html", "05_unsolved.html", "--require-solutions"]) == 1
    assert "FAIL 05_unsolved.html" in capsys.readouterr().out
    assert cd.main([str(exercise_site)]) == 1
    out = capsys.readouterr().out
    assert "FAIL 04_partial.html" in out and "03_solved.html" not in out
    reports = {r.page: r for r in cd.check_solutions(exercise_site)}
    assert not reports["03_solved.html"].problems and reports["04_partial.html"].problems
def test_page_problems_finds_default_reprs_and_errors_shown_twice():
    "Read from the outputs alone (no kernel): a rich output's text/plain is not shown, so it is not a problem."
    nb = bd.prepare_for_docs(v4.new_notebook(cells=[
        v4.new_code_cell("register_metric(...)"), v4.new_code_cell("show_error(f, 0)"),
        v4.new_code_cell("fig"), v4.new_code_cell("42"), v4.new_code_cell("#| hide\nf")]))
    outs = [("<function __main__._build_map(m)>", {}),
            ("retrieval_lit.validate.RetrievalInputError('`p` must be at least 1, got 0')", {}),
            ("<Figure size 640x480 with 1 Axes>", {"image/png": "iVBOR"}), ("42", {}), ("<function f at 0x7f3a>", {})]
    for cell, (plain, rich) in zip(nb.cells, outs):
        cell.outputs = [v4.new_output("execute_result", execution_count=1, data={"text/plain": plain, **rich})]
    found = bd.page_problems(nb)
    assert len(found) == 2, found               # the hidden cell's repr is not on the page
    assert found[0].startswith("cell 0: shows an object's default repr") and "_build_map" in found[0]
    assert found[1].startswith("cell 1: shows an error object as a value") and "shown twice" in found[1]
    assert bd._DEFAULT_REPR.match("<__main__.HammingBallExplorer at 0x7f0e2c1d5f90>")
    assert bd._ERROR_REPR.match("RetrievalInputError('`p` bad')") and bd._ERROR_REPR.match('ValueError("no")')
    assert not bd._DEFAULT_REPR.match("<b>bold</b> at 0x") and not bd._ERROR_REPR.match("ValueOf(3)")
def test_build_fails_a_page_a_reader_would_see_broken(tmp_path):
    """Empty axes (a figure drawn before an argument check fails), titles drawn over or against each other, a function's repr
    and an error shown twice each fail the build, naming the chapter's cell; a plain figure passes."""
    nbs = tmp_path / "nbs"
    nbs.mkdir()
    cells = [v4.new_markdown_cell("# Broken"),
             v4.new_code_cell("import matplotlib.pyplot as plt"),
             v4.new_code_cell("fig, ax = plt.subplots()\ntry:\n    raise ValueError('bad argument')\n"
                              "except ValueError:\n    pass"),
             v4.new_code_cell("fig, (a, b) = plt.subplots(2, 1, figsize=(4, 3))\na.plot([0, 1])\nb.plot([1, 0])\n"
                              "a.set_xlabel('a long label under the top panel')\n"
                              "b.set_title('the bottom panel title, long enough')\nplt.show()"),
             v4.new_code_cell("fig, axes = plt.subplots(1, 2, figsize=(4, 2))\nfor ax in axes:\n    ax.plot([0, 1])\n"
                              "    ax.set_title('a title as wide as its panel', fontsize=9)\nplt.show()"),
             v4.new_code_cell("from matplotlib.figure import Figure\nfrom IPython.display import display\n"
                              "fig = Figure(figsize=(4, 2))\na, b = fig.subplots(1, 2)\na.plot([0, 1])\nb.plot([1, 0])\n"
                              "a.set_title('a bare Figure, one long title')\nb.set_title('and its neighbour, another')\ndisplay(fig)"),
             v4.new_code_cell("def f(): pass\nf"),
             v4.new_code_cell("print('ValueError: no'); ValueError('no')"),
             v4.new_code_cell("fig, ax = plt.subplots(figsize=(3, 2))\nax.plot([0, 1])\nax.set_title('fine')\nplt.show()")]
    nbformat.write(v4.new_notebook(cells=cells), nbs / "01_broken.ipynb")
    with pytest.raises(bd.DocsBuildError) as err:
        bd.build(tmp_path / "site", nbs, log=lambda *a: None)
    msg = str(err.value)
    assert "01_broken.ipynb: what a reader sees is broken" in msg
    assert "cell 2: figure: panel 1 of 1 is empty axes" in msg
    assert re.search(r"cell 3: figure: texts overlap: .*'the bottom panel title, long enough'", msg)
    assert "cell 4: figure: texts overlap: 'a title as wide as its panel' and 'a title as wide as its panel'" in msg
    assert re.search(r"cell 5: figure: texts overlap: .*'a bare Figure, one long title' and 'and its neighbour, another'", msg)
    assert "cell 6: shows an object's default repr '<function __main__.f()>'" in msg
    assert "cell 7: shows an error object as a value" in msg
    assert "cell 8" not in msg and "cell 1" not in msg


def test_fence_doctests_keeps_prompts_and_outputs_on_their_lines():
    md = ("### f\n\n```python\ndef f(x)->int:\n```\n\n*Doc.*\nmore.\n>>> lo = f(4)   # note\n>>> lo\n4\n\n"
          "Then:\n\n    >>> for i in range(2):\n    ...     print(i)\n    0\n    1")
    assert bd.fence_doctests(md) == (
        "### f\n\n```python\ndef f(x)->int:\n```\n\n*Doc.*\nmore.\n\n"
        "```pycon\n>>> lo = f(4)   # note\n>>> lo\n4\n```\n\n\n"
        "Then:\n\n\n```pycon\n>>> for i in range(2):\n...     print(i)\n0\n1\n```")
    assert bd.fence_doctests("```\n>>> inside a fence\n```") == "```\n>>> inside a fence\n```"


def test_cross_links_in_prose_only():
    links = bd.SiteLinks(chapters={"03": "03_ranking.html", "09": "09_s.html", "11": "11_ap.html"},
                         stems={"03_ranking": "03_ranking.html"},
                         names={"hypergeometric_weights": "03_ranking.html#cell-id=ab12",
                                "ranking.hypergeometric_weights": "03_ranking.html#cell-id=ab12"})
    md = '<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown jp-MarkdownOutput">{}</div>'
    page = (md.format("<p>As chapter 03 shows, and chapters 09, 11 and 12; see <code>03_ranking</code>, "
                      "<code>ranking.hypergeometric_weights</code>, <code>hypergeometric_weights()</code> and "
                      "<code>row_sums</code>.</p><h2>chapter 03</h2><a href='x'>chapter 03</a><pre>chapter 03</pre>")
            + '<div class="jp-OutputArea-output"><pre>chapter 03</pre><p>chapter 03</p></div>')
    out = bd.add_cross_links(page, links, "11_ap.html")
    assert '<a class="rl-xref" href="03_ranking.html">chapter 03</a> shows' in out
    assert ('chapters <a class="rl-xref" href="09_s.html">09</a>, 11 and 12' in out)   # no link to itself or to no page
    assert '<a class="rl-xref" href="03_ranking.html"><code>03_ranking</code></a>' in out
    assert ('<a class="rl-xref" href="03_ranking.html#cell-id=ab12"><code>ranking.hypergeometric_weights</code></a>'
            in out)
    assert '<a class="rl-xref" href="03_ranking.html#cell-id=ab12"><code>hypergeometric_weights()</code></a>' in out
    assert "<code>row_sums</code>" in out
    assert out.count("rl-xref") == 5                 # not in the heading, the link, the code block, nor an output
    here = bd.add_cross_links(md.format("<p><code>hypergeometric_weights</code></p>"), links, "03_ranking.html")
    assert '<a class="rl-xref" href="#cell-id=ab12">' in here    # a definition on the same page: a link within it


def test_notation_rows_link_to_where_the_formula_is_derived():
    table = ("<table><tbody><tr><th>symbol</th></tr>"
             '<tr><td>$Y$</td><td>a <strong>hypergeometric</strong> variable (<a class="rl-xref" href="11_ap.html">'
             "chapter 11</a>)</td></tr><tr><td>$m$</td><td>a rank</td></tr></tbody></table>")
    out = bd.link_notation_rows(table, lambda href: [("The-question", "The question"),
                                                     ("Hypergeometric-law", "The hypergeometric law")])
    assert '<td><a class="rl-xref" href="11_ap.html#Hypergeometric-law">$Y$</a></td>' in out
    assert '<a class="rl-xref" href="11_ap.html#Hypergeometric-law"><strong>hypergeometric</strong></a>' in out
    assert "<td>$m$</td>" in out


def test_headings_also_answer_to_pandocs_ids():
    page = ('<h2 id="Ties,-metrics-and-evaluation">Ties, metrics and evaluation'
            '<a class="anchor-link" href="#">¶</a></h2>')
    out = bd.add_pandoc_ids(page)
    assert '<span class="rl-alias" id="ties-metrics-and-evaluation"></span>' in out
    assert bd.add_pandoc_ids('<h2 id="x">x<a class="anchor-link" href="#">¶</a></h2>').count("id=") == 1


def test_api_entries_are_the_public_names_with_their_cells():
    entries = {(e.module, e.name): e for e in bd.api_entries()}
    assert entries[("evaluation", "evaluate")].stem == "50_evaluation"
    assert entries[("trec", "evaluate_run")].stem == "52_trec" and entries[("compare", "compare")].stem == "53_compare"
    import retrieval_lit.display as display
    import retrieval_lit.trec as trec
    assert set(display.__all__) == {n for m, n in entries if m == "display"}     # exactly __all__: no exporti names
    assert set(trec.__all__) == {n for m, n in entries if m == "trec"} and "integer_ticks" not in display.__all__
    e = entries[("trec", "evaluate_run")]
    cells = {c.id: c.source for c in nbformat.read(ROOT / "nbs" / "52_trec.ipynb", as_version=4).cells}
    assert "def evaluate_run(" in cells[e.cell] and e.kind == "function"
    assert e.summary.startswith("trec_eval's measures")
    modes = entries[("ranking", "TIE_MODES")]
    assert modes.summary.startswith("= (") and modes.kind == "value"


def test_the_api_page_lists_each_name_linked_to_its_chapter(tmp_path):
    chapters = bd.list_chapters(ROOT / "nbs")
    built = [c for c in chapters if c.path.stem in ("50_evaluation", "52_trec", "53_compare")]
    for c in built:
        (tmp_path / c.out_name).write_text("<html></html>")
    entries = bd.api_entries()
    api = bd.Chapter(Path("api.ipynb"), "API index", "", "api.html")
    site = bd.SiteOptions(("_static/x.js", {"mathjax_html_css": "", "mathjax_svg": ""}), False,
                          bd.site_links(built + [api], entries))
    page = bd.write_api_page(tmp_path, api, entries, built + [api], site, chapters).read_text()
    assert cd.api_problems(tmp_path) == []
    assert re.search(r'<a href="50_evaluation.html#cell-id=\w+"><code>evaluate</code></a>', page)
    assert page.count("<tr>") - len(re.findall(r"<th[^>]*>name</th>", page)) == len(entries)    # one row a name
    assert "<h2" in page and '<h3 id="retrieval_lit.trec">' in page and "The classic metrics" in page
    (tmp_path / "api.html").write_text(page.replace("52_trec.html#", "53_compare.html#"))
    assert cd.api_problems(tmp_path) == ["the API index links `evaluate_run` to 53_compare.html#cell-id="
                                         + entries[[e.name for e in entries].index("evaluate_run")].cell
                                         + ", not to its chapter 52_trec.html"]


def test_a_student_copy_reuses_only_cells_that_ran():
    "The student build skips a chapter only when its cells before the stubs ran in the recorded build; stubs follow."
    from retrieval_lit.course import student_notebook
    teacher = v4.new_notebook(cells=[
        v4.new_markdown_cell("# C"), v4.new_code_cell("x = 1"), v4.new_markdown_cell("## Exercises\n\n1. Do."),
        v4.new_code_cell("#| student: stub\ny = x + 1"), v4.new_markdown_cell("## Solutions"),
        v4.new_markdown_cell("### Solution 01.1"), v4.new_code_cell("assert y == 2")])
    def copy_of(nb):
        return nbformat.reads(json.dumps(student_notebook(json.loads(nbformat.writes(nb)), "01_c.ipynb")), as_version=4)
    recorded = bd._cell_hashes(teacher)
    student = copy_of(teacher)
    assert bd.ran_in_record(student, recorded)
    assert not bd.ran_in_record(student, recorded[:0])          # nothing recorded: it runs
    changed = copy.deepcopy(student)
    changed.cells[1].source = "x = 2"
    assert not bd.ran_in_record(changed, recorded)              # a changed cell: it runs
    late = copy.deepcopy(student)
    late.cells.append(v4.new_code_cell("z = 3"))                  # a cell after the stubs: it runs
    assert not bd.ran_in_record(late, recorded + [bd._cell_hashes(late)[-1]])
    stub = copy.deepcopy(student)
    stub.cells[3].source = stub.cells[3].source.replace("x + 1", "x + 2")
    assert not bd.ran_in_record(stub, recorded)                 # a stub that is not the book's cell: it runs
    reads = copy.deepcopy(teacher)
    reads.cells[1].source = "x = len(open('answers/01.json').read())"
    assert not bd.ran_in_record(copy_of(reads), bd._cell_hashes(reads))


def _browser_or_skip():
    try:
        cd.find_browser()
    except cd.BrowserMissing as exc:
        pytest.skip(f"headless browser check skipped: {exc}")


def test_pages_render_in_headless_chromium(site, tmp_path):
    _browser_or_skip()
    out, _ = site
    reports = cd.check_site(out, screenshots=tmp_path / "shots", min_parts=2,
                            searches=[("integers", "01_demo.html")])     # served on 127.0.0.1 for the search
    by_page = {r.page: r for r in reports}
    assert all(r.ok for r in reports), {r.page: r.problems for r in reports}
    assert "(search box)" in by_page and by_page["01_demo.html"].parts == 2
    demo = by_page["01_demo.html"]
    assert demo.math == 4 and demo.images >= 1 and demo.widgets == 1
    assert by_page["02_other.html"].math == 1
    assert (tmp_path / "shots" / "01_demo.png").stat().st_size > 10_000
    with cd.serve_folder(out) as base, cd.headless_chromium() as drv:      # the results open at a heading
        found = cd.search_results(drv, base, "integers")
        assert found and found[0].split("#")[0].endswith("01_demo.html") and "#" in found[0], found
        assert cd.search_problems(drv, base, out, [("integers", "02_other.html")], top=5) == [
            f"search for 'integers' does not list 02_other.html among the first 5 results: ['01_demo.html']"]
    assert cd.check_site(out, min_parts=3, pages=["02_other.html"])[0].problems == [
        "the sidebar shows 2 parts of the book, fewer than 3"]


def test_the_check_catches_broken_pages(site, tmp_path):
    "The browser check is not a rubber stamp: a CDN script, a broken figure, bad TeX and stray reprs all fail."
    _browser_or_skip()
    out, _ = site
    bad = (out / "01_demo.html").read_text()
    bad = bad.replace("</main>", '<img src="missing.png"><p>$\\frac{1}{$</p>'
                      '<div class="jp-OutputArea-output"><pre>&lt;function f at 0x7f3a&gt;</pre></div>'
                      '<div class="jp-OutputArea-output"><pre>RetrievalInputError(\'`p` bad\')</pre></div>'
                      '<blockquote><blockquote><blockquote><p>add(40)\n42</p></blockquote></blockquote></blockquote>'
                      '<img alt="No description has been provided for this image" src="data:image/png;base64,'
                      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg'
                      '==">'
                      '<p>&gt;&gt;&gt; add(1)</p><a href="02_other.html#nowhere">x</a><a href="03_gone.html">y</a>'
                      '</main>', 1)
    bad = bad.replace('<div id="rl-search"></div>', '', 1)
    bad = bad.replace("<head>", '<head><script src="https://cdn.example.invalid/x.js"></script>', 1)
    (out / "broken.html").write_text(bad)
    try:
        rep = cd.check_site(out, pages=["broken.html"])[0]
    finally:
        (out / "broken.html").unlink()
    text = " ".join(rep.problems)
    assert not rep.ok
    assert "figure did not load" in text
    assert "cdn.example.invalid" in text
    assert "TeX errors" in text or "formulas typeset" in text
    assert text.count("an output shows an object's repr or an error as a value") == 2
    assert "1 blockquotes nested three deep" in text and "1 docstring examples (>>>) outside a code block" in text
    assert "2 images without alt text" in text and "no search box" in text   # missing.png has none either
    assert "link to a missing anchor: 02_other.html#nowhere" in text and "link to a missing page: 03_gone.html" in text


# ----------------------------------------------------------------------------- nbdev/Quarto
def test_quarto_settings_are_what_nbdev_docs_expects():
    import yaml
    from nbdev.config import get_config
    from nbdev.quarto import _nbdev_yml
    nbs = ROOT / "nbs"
    q = yaml.safe_load((nbs / "_quarto.yml").read_text())
    assert q["project"]["type"] == "website"
    assert q["metadata-files"] == ["nbdev.yml", "sidebar.yml"]
    assert (nbs / q["format"]["html"]["css"]).is_file()
    cfg = get_config(path=ROOT)
    vals = {k: cfg[k] for k in ["title", "description", "branch", "git_url", "doc_host", "doc_baseurl"]}
    vals["doc_path"] = cfg.doc_path.name
    assert (nbs / "nbdev.yml").read_text() == _nbdev_yml.format(**vals), (  # what nbdev_docs would write
        "nbs/nbdev.yml is out of step with settings.ini: run "
        "python -c 'from nbdev.quarto import refresh_quarto_yml; refresh_quarto_yml()'")
    assert cfg.custom_sidebar, "settings.ini: custom_sidebar = True, or nbdev_sidebar flattens nbs/sidebar.yml's parts"
    side = yaml.safe_load((nbs / "sidebar.yml").read_text())
    listed, sections = [], []

    def walk(items):
        for item in items:
            if isinstance(item, dict) and "section" in item:
                sections.append((item["section"], [c for c in item["contents"] if isinstance(c, str)]))
                walk(item["contents"])
            else:
                listed.append(item)
    walk(side["website"]["sidebar"]["contents"])
    missing = [f for f in listed if not (nbs / f).is_file()]
    assert not missing, f"nbs/sidebar.yml lists missing notebooks {missing}"
    notebooks = sorted(p.name for p in nbs.glob("*.ipynb") if not p.name.startswith(("_", ".")))
    unlisted = sorted(set(notebooks) - set(listed))
    assert not unlisted, f"add {unlisted} to a part (a section) of nbs/sidebar.yml"
    assert len(listed) == len(set(listed)), "nbs/sidebar.yml lists a notebook twice"
    assert len(sections) >= 6 and all(chapters for _, chapters in sections), sections
    assert listed == ["index.ipynb"] + sorted(set(listed) - {"index.ipynb"}), "the parts follow the numbering"
    assert [(p.title, p.stems) for p in bd.read_parts(nbs)][1:] == [(t, [c[:-6] for c in cs]) for t, cs in sections]


def test_nbdev_docs_can_process_the_user_side_chapters(tmp_path):
    """nbdev_docs runs nbdev's processors on each notebook before Quarto: they execute every cell that
    holds an import, so such cells must not depend on earlier non-import cells. Checked without Quarto.
    (`python tools/check_docs.py --nbdev` checks every chapter.)"""
    assert cd.nbdev_processing_errors(names=["70_demo", "07_display", "23_hamming_ball_explorer"]) == {}
    # the check is not a rubber stamp: a cell mixing an import with code that needs an earlier cell fails
    (tmp_path / "settings.ini").write_text((ROOT / "settings.ini").read_text())
    (tmp_path / "nbs").mkdir()
    exported = v4.new_code_cell("#| export\ndef f():\n    'Doc.'\n    return 1")
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell("#| default_exp probe"), v4.new_markdown_cell("# Probe"),
                                          exported, v4.new_code_cell("x = 1"),
                                          v4.new_code_cell("import math\ny = x + 1")]), tmp_path / "nbs" / "01_probe.ipynb")
    nbformat.write(v4.new_notebook(cells=[v4.new_code_cell("#| default_exp fine"), v4.new_markdown_cell("# Fine"),
                                          exported, v4.new_code_cell("import math"), v4.new_code_cell("y = math.pi")]),
                   tmp_path / "nbs" / "02_fine.ipynb")
    errors = cd.nbdev_processing_errors(tmp_path / "nbs")
    assert list(errors) == ["01_probe.ipynb"] and "NameError" in errors["01_probe.ipynb"]


def test_command_lines_exit_codes(tmp_path, monkeypatch, capsys):
    assert bd.main([str(tmp_path / "site"), "--nbs", str(tmp_path), "--only", "nope"]) == 1   # no notebooks at all
    assert "no notebook named" in capsys.readouterr().err
    (tmp_path / "x.ipynb").write_text(nbformat.writes(v4.new_notebook(cells=[v4.new_markdown_cell("# X")])))
    assert bd.main([str(tmp_path / "site"), "--nbs", str(tmp_path), "--only", "nope"]) == 1
    assert "`--only`: no notebook named ['nope']" in capsys.readouterr().err
    assert bd.main([str(tmp_path / "site"), "--nbs", str(tmp_path), "--no-execute"]) == 0
    assert (tmp_path / "site" / "x.html").is_file() and (tmp_path / "site" / "index.html").is_file()
    monkeypatch.setattr(cd.shutil, "which", lambda name: None)   # no browser on this machine
    assert cd.main([str(tmp_path / "site")]) == 2
    assert "not installed: chromium" in capsys.readouterr().err


def test_a_definition_that_draws_when_called_is_not_a_missing_figure():
    "Export cells of any kind (export, exporti, exports) define; only a cell that runs a drawing must show an image."
    def cell(src, outputs=()):
        c = nbformat.v4.new_code_cell(src, outputs=list(outputs))
        c.metadata["rl_docs"] = {"skipped": False, "output": True}
        return c
    body = "def _view(n):\n    plot_phi(n)\n    return n"
    nb = nbformat.v4.new_notebook(cells=[cell("#| exporti\n" + body), cell("#| export\n" + body),
                                         cell("plot_phi(3)"), cell("plt.show()")])
    assert bd.missing_figures(nb) == [2, 3]
