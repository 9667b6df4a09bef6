#!/usr/bin/env python
"""Check the built documentation the way a reader sees it: in headless Chromium.

    python tools/build_docs.py site/
    python tools/check_docs.py site/ [--screenshots shots/] [--serve]
    python tools/check_docs.py --nbdev     # can nbdev_docs process every notebook? (no Quarto needed)

For every page of the site it checks that:
- the page loads with no error in the browser console and requests nothing outside
  the site (no CDN: every resource is a `file:`/`data:` URL, or the local server);
- the math is typeset: MathJax ran, produced an output element for every formula,
  and reported no TeX error;
- every figure shows: each `<img>` has loaded with a natural width > 0;
- every widget shows its static state (a non-empty `.rl-widget-static` block);
- the sidebar lists every page and the prev/next links point to pages that exist;
- a page with four sections or more has an in-page table of contents whose links reach their headings, and no
  code block or table runs off the page (wide ones scroll);
- worked solutions are folded: every `### Solution CC.N` block is inside a closed `<details>` (none `open`, nothing
  of the `## Solutions` part outside one), and a page with a `## Solutions` section has a solution for each item
  of its `## Exercises` list (`--require-solutions`: every page with exercises must). This check reads the page
  source and needs no browser: it runs, and can fail the pages, where Chromium is missing.
- no output is an object's default repr (`<function f at 0x...>`) or an error object shown as a value (the error
  shown twice, after `show_error` printed it). The build (tools/build_docs.py) fails these too, and figures with
  an empty panel or overlapping titles, which only the kernel can see.
- the sidebar shows the book's parts, each with its chapters, the page's own part open (`--min-parts N`: at least N
  parts; the whole book has nine); every page has a search box; no blockquote is nested three deep and every
  docstring example (`>>>`) is in a code block; every image has an alt text (not nbconvert's default);
- every link inside the site reaches a page and an anchor that exist (`--partial`: a site built with `--only` may
  lack pages), and the API index (api.html) lists `evaluate`, `evaluate_run` and `compare`, each linked to its
  chapter;
- the search works: served from 127.0.0.1 (Pagefind's UI does not run from file://), searching "hypergeometric"
  lists chapter 03 among the first five results and "trec_eval" chapter 52, each result opening at a heading.

Needs Debian's `chromium` and `chromium-driver` (`apt-get install chromium
chromium-driver`) and the `selenium` package. Exits 0 when every page passes,
1 otherwise, 2 when the browser is missing. The network is never needed.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import html.parser
import http.server
import json
import re
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--hide-scrollbars")


class BrowserMissing(RuntimeError):
    "Chromium, chromedriver or selenium is not installed."


def find_browser() -> tuple[str, str]:
    "Paths of the chromium binary and of chromedriver; raise BrowserMissing naming what is absent."
    chrome = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    driver = shutil.which("chromedriver")
    missing = [n for n, p in (("chromium", chrome), ("chromedriver (chromium-driver)", driver)) if not p]
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing.append("the selenium package")
    if missing:
        raise BrowserMissing("not installed: " + ", ".join(missing)
                             + " (apt-get install chromium chromium-driver; pip install selenium)")
    return chrome, driver


@contextlib.contextmanager
def headless_chromium(width: int = 1280, height: int = 900):
    "A selenium WebDriver on headless Debian chromium with a fresh profile, no network features."
    chrome, driver_path = find_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    with tempfile.TemporaryDirectory(prefix="rl-chromium-") as profile:
        opts = webdriver.ChromeOptions()
        opts.binary_location = chrome
        for f in CHROMIUM_FLAGS:
            opts.add_argument(f)
        opts.add_argument(f"--user-data-dir={profile}")
        opts.add_argument(f"--window-size={width},{height}")
        opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        drv = webdriver.Chrome(service=Service(executable_path=driver_path), options=opts)
        try:
            drv.set_page_load_timeout(60)
            drv.set_script_timeout(60)
            yield drv
        finally:
            drv.quit()


@contextlib.contextmanager
def serve_folder(folder: Path):
    "Serve `folder` on 127.0.0.1 (an ephemeral port) for the duration of the block."
    handler = functools.partial(_QuietHandler, directory=str(folder))
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/"
    finally:
        srv.shutdown()
        srv.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


_WAIT_MATHJAX = """
var done = arguments[arguments.length - 1];
if (!window.MathJax || !MathJax.Hub) { done("no-mathjax"); return; }
MathJax.Hub.Queue(function () { done("typeset"); });
"""

_INSPECT = """
var q = function (s) { return Array.prototype.slice.call(document.querySelectorAll(s)); };
var imgs = q('main img');
var widgets = q('.rl-widget-static');
return {
  title: document.title,
  mathjax_loaded: !!(window.MathJax && MathJax.Hub),
  math_sources: q('script[type^="math/tex"]').length,
  math_rendered: q('.MathJax, .MathJax_Display, .MathJax_SVG, .MathJax_CHTML, mjx-container').length,
  math_errors: q('.MathJax_Error, merror, .mjx-merror, [data-mjx-error]').map(function (e) {
      return (e.getAttribute('data-mjx-error') || e.textContent || '').slice(0, 120); }),
  mathjax_messages: q('#MathJax_Message').map(function (e) { return e.textContent; }).filter(Boolean),
  leftover_dollars: (function () {   // TeX that MathJax left as text ($...$ outside code)
      var n = 0; q('.jp-RenderedMarkdown').forEach(function (e) {
        var c = e.cloneNode(true);
        Array.prototype.slice.call(c.querySelectorAll('code, pre, script, .MathJax, .MathJax_Display, .MJX_Assistive_MathML'))
          .forEach(function (x) { x.remove(); });
        if (/\\$[^$\\s][^$]*\\$/.test(c.textContent || '')) n++; }); return n; })(),
  images: imgs.map(function (i) { return {src: (i.currentSrc || i.src).slice(0, 60), complete: i.complete,
                                          natural_width: i.naturalWidth}; }),
  widgets: widgets.map(function (w) { return (w.innerText || '').trim().length; }),
  nav: q('nav.rl-sidebar li a').map(function (a) { return a.getAttribute('href'); }),
  toc: q('nav.rl-toc a').map(function (a) { return a.getAttribute('href'); }),
  toc_missing: q('nav.rl-toc a').filter(function (a) {
      var f = a.getAttribute('href').slice(1);    // as the browser does: the fragment as written, then decoded
      return !document.getElementById(f) && !document.getElementById(decodeURIComponent(f)); }).length,
  sections: q('.rl-content h2').length,
  wrapped_text: q('.rl-content .jp-OutputArea-output pre').filter(function (e) {   // printed tables must keep their lines
      return getComputedStyle(e).whiteSpace !== 'pre'; }).length,
  overflowing: q('.rl-content pre, .rl-content table').filter(function (e) {   // wider than the page, and not scrolling
      var s = getComputedStyle(e); return e.scrollWidth > e.clientWidth + 1 && s.overflowX !== 'auto' && s.overflowX !== 'scroll'; }).length,
  stray_reprs: q('.rl-content .jp-OutputArea-output pre').map(function (e) { return (e.textContent || '').trim(); })
    .filter(function (t) {   // the same patterns as build_docs._DEFAULT_REPR and _ERROR_REPR
      return /^<(?:function|bound method|built-in function|class|module) .*>$|^<[^<>\\n]* at 0x[0-9a-fA-F]+>$/.test(t)
          || /^(?:[\\w.]+\\.)?[A-Z]\\w*(?:Error|Exception|Warning)\\((['"])[\\s\\S]*\\1\\)$/.test(t); })
    .map(function (t) { return t.slice(0, 80); }),
  pager: q('nav.rl-pager a').map(function (a) { return a.getAttribute('href'); }),
  parts: q('nav.rl-sidebar details.rl-part').map(function (d) {
      return {title: (d.querySelector('summary') || {}).textContent || '', open: d.open,
              chapters: d.querySelectorAll('li a').length, current: !!d.querySelector('a.rl-current')}; }),
  search_box: !!document.querySelector('#rl-search'),
  deep_quotes: q('blockquote blockquote blockquote').length,
  loose_prompts: (function () {   // docstring examples (>>>) outside a code block
      var n = 0, root = document.querySelector('main') || document.body;
      var walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      while (walk.nextNode()) {
        var t = walk.currentNode;
        if (t.nodeValue.indexOf('>>>') < 0) continue;
        var e = t.parentElement, inCode = false;
        while (e) {
          if (e.tagName === 'PRE' || e.tagName === 'CODE' || e.tagName === 'SCRIPT') { inCode = true; break; }
          e = e.parentElement; }
        if (!inCode) n++; }
      return n; })(),
  default_alt: q('img').filter(function (i) {
      var alt = (i.getAttribute('alt') || '').trim();
      return alt === '' || alt === 'No description has been provided for this image'; }).length,
  resources: performance.getEntriesByType('resource').map(function (r) { return r.name; })
};
"""


@dataclass
class PageReport:
    page: str
    problems: list = field(default_factory=list)
    math: int = 0
    images: int = 0
    widgets: int = 0
    parts: int = 0
    console: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_page(drv, url: str, name: str, site_pages: set, base: str, screenshot: Path | None = None,
               search: bool = False) -> PageReport:
    "Load one page and return what is wrong with it."
    rep = PageReport(name)
    drv.get_log("browser")  # drop messages of the previous page
    drv.get(url)
    state = drv.execute_async_script(_WAIT_MATHJAX)
    info = drv.execute_script(_INSPECT)
    for entry in drv.get_log("browser"):
        rep.console.append(f"{entry.get('level')}: {entry.get('message')}")
        if entry.get("level") in ("SEVERE", "ERROR"):
            rep.problems.append(f"console error: {entry.get('message')}")
    if state != "typeset" or not info["mathjax_loaded"]:
        rep.problems.append("MathJax did not load from the local copy")
    rep.math = info["math_sources"]
    if info["math_rendered"] < info["math_sources"]:
        rep.problems.append(f"only {info['math_rendered']} of {info['math_sources']} formulas typeset")
    if info["math_errors"]:
        rep.problems.append(f"TeX errors: {info['math_errors'][:5]}")
    if info["leftover_dollars"]:
        rep.problems.append(f"{info['leftover_dollars']} markdown blocks still show raw $...$ math")
    rep.images = len(info["images"])
    for im in info["images"]:
        if not im["complete"] or im["natural_width"] <= 0:
            rep.problems.append(f"figure did not load: {im['src']}")
    rep.widgets = len(info["widgets"])
    if any(n == 0 for n in info["widgets"]):
        rep.problems.append("a widget block is empty")
    for r in info["resources"]:
        if not (r.startswith(base) or r.startswith("data:")):
            rep.problems.append(f"requested a resource outside the site: {r[:120]}")
    missing = set(info["nav"]) ^ site_pages
    if missing:
        rep.problems.append(f"sidebar does not match the pages: {sorted(missing)}")
    for href in info["pager"]:
        if href not in site_pages:
            rep.problems.append(f"prev/next link to a missing page: {href}")
    if info["sections"] >= 4 and not info["toc"]:
        rep.problems.append(f"{info['sections']} sections but no in-page table of contents")
    if info["toc_missing"]:
        rep.problems.append(f"{info['toc_missing']} table-of-contents links point to no heading")
    if info["wrapped_text"]:
        rep.problems.append(f"{info['wrapped_text']} printed outputs wrap their lines (text tables become unreadable)")
    if info["overflowing"]:
        rep.problems.append(f"{info['overflowing']} code blocks or tables run off the page without scrolling")
    for text in info["stray_reprs"]:
        rep.problems.append(f"an output shows an object's repr or an error as a value: {text}")
    for part in info["parts"]:
        if not part["chapters"]:
            rep.problems.append(f"sidebar part {part['title']!r} lists no chapter")
        if part["current"] and not part["open"]:
            rep.problems.append(f"sidebar part {part['title']!r} holds this page but is closed")
    rep.parts = len(info["parts"])
    if search and not info["search_box"]:
        rep.problems.append("no search box")
    if info["deep_quotes"]:
        rep.problems.append(f"{info['deep_quotes']} blockquotes nested three deep (a docstring example as quotes?)")
    if info["loose_prompts"]:
        rep.problems.append(f"{info['loose_prompts']} docstring examples (>>>) outside a code block")
    if info["default_alt"]:
        rep.problems.append(f"{info['default_alt']} images without alt text (or with nbconvert's default)")
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        drv.save_screenshot(str(screenshot))
    return rep


# ----------------------------------------------------------------------------- solutions (no browser needed)
_SOLUTION = re.compile(r"Solution (\d+)\.(\d+)")


class _SolutionScan(html.parser.HTMLParser):
    "One pass over a page's HTML: the exercise list, the solutions' <details> blocks, and what lies outside them."

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.exercises = None          # items of the list after the `Exercises` h2 (None: no such section)
        self.solutions_section = False
        self.solutions = []            # (chapter, number) of each folded solution, from its <summary>
        self.open_solutions = []       # "Solution CC.N" shown open
        self.outside = 0               # cells of the Solutions part outside any <details>
        self.loose_headings = []       # `Solution CC.N` headings outside any <details>
        self._details = 0
        self._kinds = []               # for each open <details>: is it a solution's?
        self._summary = None
        self._heading = None
        self._list_state = None        # None, "waiting" (after the Exercises h2), "in" (inside its <ol>), "done"
        self._ol_depth = 0
        self._list_depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "details":
            solution = "rl-solution" in (a.get("class") or "").split()   # not the sidebar's parts
            self._kinds.append(solution)
            if solution:
                self._details += 1
                if "open" in a:
                    self.open_solutions.append(None)
        elif tag == "summary" and self._details and self._kinds and self._kinds[-1]:
            self._summary = ""
        elif tag in ("h2", "h3"):
            self._heading = (tag, a.get("id", ""), "")
            if self._list_state == "waiting":
                self._list_state = "done"          # a new section before any list: no exercises
        elif tag == "div" and "jp-Cell" in (a.get("class") or "").split():
            if self.solutions_section and not self._details:
                self.outside += 1
        elif tag == "ol":
            self._ol_depth += 1
            if self._list_state == "waiting":
                self._list_state, self._list_depth, self.exercises = "in", self._ol_depth, 0
        elif tag == "li" and self._list_state == "in" and self._ol_depth == self._list_depth:
            self.exercises += 1

    def handle_endtag(self, tag):
        if tag == "details":
            if self._kinds and self._kinds.pop():
                self._details = max(0, self._details - 1)
        elif tag == "summary" and self._summary is not None:
            m = _SOLUTION.fullmatch(self._summary.strip())
            if m:
                self.solutions.append((m.group(1), int(m.group(2))))
                if self.open_solutions and self.open_solutions[-1] is None:
                    self.open_solutions[-1] = self._summary.strip()
            self._summary = None
        elif tag in ("h2", "h3") and self._heading is not None:
            level, hid, text = self._heading[0], self._heading[1], self._heading[2].replace("¶", "").strip()
            if level == "h2" and hid == "Exercises" and self.exercises is None:
                self._list_state = "waiting"
            elif level == "h2" and hid == "Solutions":
                self.solutions_section = True
            elif level == "h3" and _SOLUTION.fullmatch(text) and not self._details:
                self.loose_headings.append(text)
            self._heading = None
        elif tag == "ol":
            if self._list_state == "in" and self._ol_depth == self._list_depth:
                self._list_state = "done"
            self._ol_depth = max(0, self._ol_depth - 1)

    def handle_data(self, data):
        if self._summary is not None:
            self._summary += data
        if self._heading is not None:
            self._heading = (self._heading[0], self._heading[1], self._heading[2] + data)


def solution_problems(page: str, name: str = "", require: bool = False) -> list[str]:
    """What is wrong with the worked solutions of one page (its HTML source `page`, file name `name`): a solution
    shown open (a `<details open>`, a `Solution CC.N` heading or any cell of the `## Solutions` part outside a
    `<details>`), and, where the page has a `## Solutions` section (or `require`), an exercise without a solution
    (the items of the `## Exercises` list against the `Solution CC.N` summaries; CC is the page's number prefix)."""
    scan = _SolutionScan()
    scan.feed(page)
    scan.close()
    problems = []
    shown = [s or "a solution" for s in scan.open_solutions]
    if shown:
        problems.append(f"solutions shown open (<details open>): {shown}")
    if scan.loose_headings:
        problems.append(f"solutions outside a folded <details> block: {scan.loose_headings}")
    if scan.outside:
        problems.append(f"{scan.outside} cell(s) of the Solutions part outside a folded <details> block")
    m = re.match(r"(\d+)_", Path(name).name)
    chapter = m.group(1) if m else None
    mine = sorted({n for cc, n in scan.solutions if chapter is None or cc == chapter})
    others = sorted({f"{cc}.{n}" for cc, n in scan.solutions if chapter is not None and cc != chapter})
    if others:
        problems.append(f"solutions numbered for another chapter: {others}")
    n, cc = scan.exercises or 0, chapter or "?"
    if n and (scan.solutions_section or require):
        missing = [f"{cc}.{i}" for i in range(1, n + 1) if i not in mine]
        if missing:
            problems.append(f"exercises without a solution: {missing} ({n} exercises, {len(mine)} solutions)")
    extra = [f"{cc}.{i}" for i in mine if i > n]
    if extra:
        problems.append(f"solutions to no exercise of the list: {extra}")
    return problems


def check_solutions(site: str | Path, pages: list[str] | None = None, require: bool = False) -> list[PageReport]:
    "The solution check (`solution_problems`) of every page of `site` (or the named `pages`), without a browser."
    site = Path(site).resolve()
    todo = pages or sorted(p.name for p in site.glob("*.html"))
    if not todo:
        raise FileNotFoundError(f"`site`: no .html pages in {site}")
    return [PageReport(name, solution_problems((site / name).read_text(encoding="utf-8"), name, require))
            for name in todo]


# ----------------------------------------------------------------------------- links, the API index, search
# What a reader must find: a search for the word lists the page among the first results (the build's Pagefind index),
# and the API index links each name to its chapter. Checked where the site holds the page.
SEARCHES = (("hypergeometric", "03_ranking.html"), ("trec_eval", "52_trec.html"))
API_NAMES = (("evaluate", "50_evaluation.html"), ("evaluate_run", "52_trec.html"), ("compare", "53_compare.html"))
_HREF = re.compile(r'<a\b[^>]*?\bhref="([^"]*)"')
_ID = re.compile(r'\bid="([^"]*)"')


def _ids(page_text: str) -> set:
    import html as html_mod
    return {html_mod.unescape(i) for i in _ID.findall(page_text)}


def link_problems(site: str | Path, name: str, ids: dict | None = None, partial: bool = False) -> list[str]:
    """Links of page `name` that lead nowhere: to a page of the site that does not exist (unless `partial`: a site
    built with `--only` lacks the other chapters), or to an anchor that the target page does not hold (the API
    index's links to the defining cells, the cross-links, the contents). Links out of the site and to its assets
    (`_static/`, `pagefind/`) are not followed. Needs no browser."""
    import html as html_mod
    from urllib.parse import unquote, urlsplit
    site = Path(site)
    ids = {} if ids is None else ids
    text = (site / name).read_text(encoding="utf-8")
    problems = []
    for raw in dict.fromkeys(_HREF.findall(text)):
        href = html_mod.unescape(raw)
        parts = urlsplit(href)
        if parts.scheme or parts.netloc or href.startswith(("_static/", "pagefind/", "data:", "mailto:")):
            continue
        target = parts.path or name
        if not target.endswith(".html"):
            continue
        if not (site / target).is_file():
            if not partial:
                problems.append(f"link to a missing page: {href}")
            continue
        if parts.fragment:
            if target not in ids:
                ids[target] = _ids((site / target).read_text(encoding="utf-8"))
            if parts.fragment not in ids[target] and unquote(parts.fragment) not in ids[target]:
                problems.append(f"link to a missing anchor: {href}")
    return problems


def api_problems(site: str | Path, names=API_NAMES) -> list[str]:
    """What the API index (api.html) lacks: each of `names` (name, its chapter's page) listed as a link into its
    chapter's page (checked where the site holds that page)."""
    import html as html_mod
    site = Path(site)
    text = (site / "api.html").read_text(encoding="utf-8")
    problems = []
    for name, page in names:
        if not (site / page).is_file():
            continue
        hrefs = [html_mod.unescape(h) for h in re.findall(
            r'<a\b[^>]*?href="([^"]*)"[^>]*>\s*<code>' + re.escape(name) + r'</code>\s*</a>', text)]
        if not hrefs:
            problems.append(f"the API index does not list `{name}` with a link")
        elif not any(h.split("#")[0] == page for h in hrefs):
            problems.append(f"the API index links `{name}` to {hrefs[0]}, not to its chapter {page}")
    return problems


def search_results(drv, base: str, query: str, wait: float = 30) -> list[str]:
    "The pages (links) that the site's search box lists for `query`, best first; loaded from the http server `base`."
    import time
    from selenium.webdriver.common.by import By
    drv.get(base + "index.html")
    t0 = time.time()
    while not drv.find_elements(By.CSS_SELECTOR, "#rl-search input"):
        if time.time() - t0 > wait:
            raise TimeoutError("the search box did not load")
        time.sleep(0.1)
    drv.find_element(By.CSS_SELECTOR, "#rl-search input").send_keys(query)
    script = """return Array.prototype.slice.call(document.querySelectorAll('#rl-search li.pagefind-ui__result'))
        .map(function (li) {
          var a = li.querySelector('a.pagefind-ui__result-link'); return a ? a.getAttribute('href') : ''; });"""
    found, last, t0 = [], None, time.time()
    while time.time() - t0 < wait:                  # until the list is there and stops changing
        found = drv.execute_script(script)
        msg = drv.execute_script("var m = document.querySelector('#rl-search .pagefind-ui__message');"
                                 "return m ? m.textContent : '';")
        if (found or "No results" in (msg or "")) and found == last:
            break
        last = found
        time.sleep(0.5)
    return found


def search_problems(drv, base: str, site: Path, searches=SEARCHES, top: int = 5) -> list[str]:
    "Each (query, page) of `searches` whose page the site holds must be among the first `top` results, at a heading."
    problems = []
    for query, page in searches:
        if not (site / page).is_file():
            continue
        try:
            found = search_results(drv, base, query)
        except Exception as exc:  # the UI did not load: say so, per query
            problems.append(f"search for {query!r}: {exc}")
            continue
        pages = [h.split("#")[0].rsplit("/", 1)[-1] for h in found[:top]]
        if page not in pages:
            problems.append(f"search for {query!r} does not list {page} among the first {top} results: {pages}")
        elif "#" not in found[pages.index(page)]:
            problems.append(f"search for {query!r} links to {page} but not to a section heading")
    return problems


def check_site(site: str | Path, screenshots: str | Path | None = None, serve: bool = False,
               pages: list[str] | None = None, width: int = 1280, height: int = 900,
               require_solutions: bool = False, min_parts: int = 0, searches=SEARCHES,
               top: int = 5, partial: bool = False) -> list[PageReport]:
    """Check every page of `site` (or the named `pages`); return one report per page, and one for the search when
    the site has a search index (`searches`: (query, page) pairs, served from 127.0.0.1: Pagefind's UI does not run
    from file://). `min_parts`: every page's sidebar shows at least that many parts of the book."""
    site = Path(site).resolve()
    all_pages = sorted(p.name for p in site.glob("*.html"))
    if not all_pages:
        raise FileNotFoundError(f"`site`: no .html pages in {site}")
    todo = pages or all_pages
    shots = Path(screenshots) if screenshots else None
    search = (site / "pagefind" / "pagefind-ui.js").is_file()
    reports, ids = [], {}
    ctx = serve_folder(site) if (serve or (search and searches)) else contextlib.nullcontext(None)
    with ctx as http_base, headless_chromium(width, height) as drv:
        base = http_base if serve else site.as_uri() + "/"
        for name in todo:
            shot = shots / (Path(name).stem + ".png") if shots else None
            rep = check_page(drv, base + name, name, set(all_pages), base, shot, search=search)
            rep.problems += solution_problems((site / name).read_text(encoding="utf-8"), name, require_solutions)
            rep.problems += link_problems(site, name, ids, partial)
            if min_parts and rep.parts < min_parts:
                rep.problems.append(f"the sidebar shows {rep.parts} parts of the book, fewer than {min_parts}")
            if name == "api.html":
                rep.problems += api_problems(site)
            reports.append(rep)
        if search and searches and pages is None:
            reports.append(PageReport("(search box)", search_problems(drv, http_base, site, searches, top)))
    return reports


def nbdev_processing_errors(nbs: str | Path = None, names: list[str] | None = None) -> dict:
    """Run nbdev's docs processors (what `nbdev_docs` does to each notebook before handing it to
    Quarto) on the notebooks of `nbs`; return {notebook: error message} for those that fail.

    nbdev executes, besides exported cells, every cell that holds an import statement (its
    `exec_show_docs` step), so a cell that mixes imports with code needing earlier cells breaks
    `nbdev_docs` even though the notebook runs fine top to bottom. Needs no Quarto."""
    import os
    import warnings
    from nbdev.processors import FilterDefaults
    from nbdev.serve_drv import exec_nb
    nbs = Path(nbs) if nbs else Path(__file__).resolve().parent.parent / "nbs"
    paths = sorted(p for p in nbs.glob("*.ipynb") if not p.name.startswith(("_", ".")))
    if names:
        paths = [p for p in paths if p.stem in {Path(n).stem for n in names}]
    errors = {}
    old = os.getcwd()
    os.chdir(nbs)                      # nbdev finds settings.ini from the working directory
    try:
        with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for p in paths:
                os.environ["IN_TEST"] = "1"
                try:
                    with contextlib.redirect_stdout(None), contextlib.redirect_stderr(None):
                        exec_nb(p, Path(tmp) / p.name, FilterDefaults)
                except Exception as exc:  # report every notebook, not just the first
                    cause = exc.__cause__ or exc
                    where = str(exc).strip().splitlines()[0][:200]
                    errors[p.name] = f"{where} {type(cause).__name__}: {str(cause)[:200]}"
                finally:
                    os.environ.pop("IN_TEST", None)
    finally:
        os.chdir(old)
    return errors


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("site", nargs="?", default="site", help="the built site folder (default: site)")
    p.add_argument("--screenshots", default=None, help="save a PNG of each page into this folder")
    p.add_argument("--serve", action="store_true", help="load pages from a 127.0.0.1 server instead of file://")
    p.add_argument("--pages", nargs="+", default=None, help="check only these pages (file names)")
    p.add_argument("--json", action="store_true", help="print the reports as JSON")
    p.add_argument("--nbdev", action="store_true",
                   help="instead, check that nbdev_docs can process every notebook (all but the Quarto step)")
    p.add_argument("--partial", action="store_true",
                   help="the site was built with --only: links to chapters it lacks are not errors")
    p.add_argument("--min-parts", type=int, default=0,
                   help="every page's sidebar must show at least this many parts of the book (the full book: 6)")
    p.add_argument("--require-solutions", action="store_true",
                   help="every page with exercises must have a solution for each (default: only pages with a "
                        "Solutions section)")
    a = p.parse_args(argv)
    if a.nbdev:
        errors = nbdev_processing_errors()
        for name, err in errors.items():
            print(f"FAIL {name}: {err}")
        print(f"nbdev docs processing: {len(errors)} notebook(s) fail")
        return 1 if errors else 0
    try:
        reports = check_site(a.site, a.screenshots, a.serve, a.pages, require_solutions=a.require_solutions,
                             min_parts=a.min_parts, partial=a.partial)
    except BrowserMissing as exc:
        print(f"check_docs: {exc}", file=sys.stderr)
        bad = [r for r in check_solutions(a.site, a.pages, a.require_solutions) if not r.ok]   # needs no browser
        for r in bad:
            print(f"FAIL {r.page}")
            for prob in r.problems:
                print(f"       - {prob}")
        if bad:
            print(f"the solution check (no browser needed) failed {len(bad)} page(s)")
            return 1
        return 2
    if a.json:
        print(json.dumps([r.__dict__ for r in reports], indent=1))
    for r in reports:
        status = "ok  " if r.ok else "FAIL"
        print(f"{status} {r.page:28s} math {r.math:4d}  figures {r.images:3d}  widgets {r.widgets:3d}")
        for prob in r.problems:
            print(f"       - {prob}")
    bad = sum(not r.ok for r in reports)
    print(f"{len(reports) - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
