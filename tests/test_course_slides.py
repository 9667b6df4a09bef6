"""Issue 45: slides a lecturer can project. The whole course's decks are written once, the chapters run (as
`retrieval-lit course --slides DIR` does): every deck shows a figure, no slide holds more than SLIDE_PROSE characters
of prose (the rest is in its speaker notes), no implementation slide, and nothing is loaded from the network."""
import html
import io
import re
from pathlib import Path

import pytest

from retrieval_lit import course
from retrieval_lit.cli import main

ROOT = Path(__file__).resolve().parent.parent
NBS = ROOT / "nbs"
MARKDOWN = re.compile(r'<div class="jp-RenderedHTMLCommon jp-RenderedMarkdown[^"]*"[^>]*>(.*?)</div>', re.S)


@pytest.fixture(scope="module")
def decks(tmp_path_factory):
    "All ten decks, the chapters run (several minutes: every session's chapters up to the last cell shown)."
    out = tmp_path_factory.mktemp("slides") / "decks"
    assert main(["course", "--slides", str(out), "--nbs", str(NBS)], out=io.StringIO()) == 0
    return out


def _slides(page: str) -> list:
    "The text of each slide's own markdown (speaker notes left out), as a reader sees it before MathJax runs."
    page = re.sub(r'<aside class="notes">.*?</aside>', "", page, flags=re.S)
    out = []
    for chunk in re.split(r"<section[^>]*>", page)[1:]:
        text = " ".join(MARKDOWN.findall(chunk.split("</section>")[0]))
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
        text = re.sub(r"\$\$.*?\$\$|\\\[.*?\\\]", " ", text, flags=re.S)       # displayed formulas are not prose
        out.append(re.sub(r"\s+", " ", text).strip())
    return out


def test_one_deck_per_session_with_reveal_js_and_mathjax_beside_them(decks):
    assert sorted(p.name for p in decks.glob("*.html")) == [f"session-{n:02d}.slides.html" for n in range(1, 11)]
    assert (decks / "mathjax" / "MathJax.js").is_file() and (decks / "reveal.js" / "dist" / "reveal.js").is_file()
    assert (decks / "reveal.js" / "plugin" / "notes" / "notes.js").is_file()


@pytest.mark.parametrize("number", range(1, 11))
def test_every_deck_shows_a_figure_and_loads_nothing_from_the_network(decks, number):
    page = (decks / f"session-{number:02d}.slides.html").read_text(encoding="utf-8")
    assert re.search(r'<img[^>]*src="data:image/png;base64,', page), f"session {number}: no figure"
    sources = re.findall(r"<script[^>]*\bsrc=\"([^\"]*)\"", page) + re.findall(r"<link[^>]*\bhref=\"([^\"]*)\"", page)
    assert not [s for s in sources if re.match(r"(https?:)?//", s)], sources
    assert not re.search(r"import\s[^;]*from\s*['\"]https?:", page)                   # no module from a CDN either
    for s in sources:                                                                  # every file it loads is there
        assert (decks / s.split("?")[0]).is_file(), s


@pytest.mark.parametrize("number", range(1, 11))
def test_no_slide_holds_more_than_the_limit_of_prose(decks, number):
    page = (decks / f"session-{number:02d}.slides.html").read_text(encoding="utf-8")
    lengths = [len(s) for s in _slides(page)]
    assert lengths and max(lengths) <= course.SLIDE_PROSE, sorted(lengths)[-3:]
    assert '<aside class="notes">' in page                                             # the rest went to the notes


def test_no_implementation_slide(decks):
    four = (decks / "session-04.slides.html").read_text(encoding="utf-8")
    assert "Instead:" not in four                                                      # the case
    for page in decks.glob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r'<div class="jp-Cell jp-CodeCell[^>]*>\s*<div[^>]*>\s*<div[^>]*>\s*<div[^>]*>\s*'
                             r'<div[^>]*>\s*<div[^>]*>\s*<pre><span></span><span class="k">def</span>', text), page.name
        assert "#| export" not in text and "#| session" not in text
