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
- no output is an object's default repr (`<function f at 0x...>`) or an error object shown as a value (the error
  shown twice, after `show_error` printed it). The build (tools/build_docs.py) fails these too, and figures with
  an empty panel or overlapping titles, which only the kernel can see.

Needs Debian's `chromium` and `chromium-driver` (`apt-get install chromium
chromium-driver`) and the `selenium` package. Exits 0 when every page passes,
1 otherwise, 2 when the browser is missing. The network is never needed.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import http.server
import json
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
    console: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def check_page(drv, url: str, name: str, site_pages: set, base: str, screenshot: Path | None = None) -> PageReport:
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
    if screenshot is not None:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        drv.save_screenshot(str(screenshot))
    return rep


def check_site(site: str | Path, screenshots: str | Path | None = None, serve: bool = False,
               pages: list[str] | None = None, width: int = 1280, height: int = 900) -> list[PageReport]:
    "Check every page of `site` (or the named `pages`); return one report per page."
    site = Path(site).resolve()
    all_pages = sorted(p.name for p in site.glob("*.html"))
    if not all_pages:
        raise FileNotFoundError(f"`site`: no .html pages in {site}")
    todo = pages or all_pages
    shots = Path(screenshots) if screenshots else None
    reports = []
    ctx = serve_folder(site) if serve else contextlib.nullcontext(site.as_uri() + "/")
    with ctx as base, headless_chromium(width, height) as drv:
        for name in todo:
            shot = shots / (Path(name).stem + ".png") if shots else None
            reports.append(check_page(drv, base + name, name, set(all_pages), base, shot))
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
    a = p.parse_args(argv)
    if a.nbdev:
        errors = nbdev_processing_errors()
        for name, err in errors.items():
            print(f"FAIL {name}: {err}")
        print(f"nbdev docs processing: {len(errors)} notebook(s) fail")
        return 1 if errors else 0
    try:
        reports = check_site(a.site, a.screenshots, a.serve, a.pages)
    except BrowserMissing as exc:
        print(f"check_docs: {exc}", file=sys.stderr)
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
