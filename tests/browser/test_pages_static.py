"""The built pages' HTML, read without a browser (issue 27): the reader's path through
the course, what each page loads, and no build internals shown.

* chapter numbers: every chapter's title and its entry in the list of chapters carry the
  number of its place in the table of contents (1, 2, ... from the first chapter on,
  counted across parts); front matter, reference pages and the instructors' page have
  none; figures and exercises are numbered within their chapter (Fig. 5.2, Exercise
  5.3); ``{numref}`chapter-<file>``` resolves to "Chapter N";
* previous/next: the instructors' page is out of the learner's chain;
* the landing page: a start button to the first chapter, and the course's time, which is
  the sum of the times the chapters announce (read here from the notebooks);
* the PDF edition: linked only where the PDF is part of the build;
* weight: MathJax only on pages with mathematics (or TeX in their questions or
  explorers); the search index only on the search page; in the widget state, no model
  that no view shows (the live explorers' controls, images, outputs); icons from fonts
  cut down to the icons shown, each of which is in them;
* build internals: no code cell says what it does for nbval or the website, and the
  live explorers' cells are not on the page.
"""

from __future__ import annotations

import json
import re

import pytest
import yaml
from sitepages import REPO, SITE, site_pages

PAGES = site_pages()
if not PAGES:
    pytest.skip(
        f"no built site at {SITE}: run `make test-browser` (it builds first)",
        allow_module_level=True,
    )
TOC = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
NUMBERED = [
    c["file"] for part in TOC["parts"] if part.get("numbered") for c in part["chapters"]
]
UNNUMBERED = [
    c["file"]
    for part in TOC["parts"]
    if not part.get("numbered")
    for c in part["chapters"]
]
STATE = re.compile(
    r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', re.S
)
VIEW = re.compile(
    r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>', re.S
)


def _html(page: str) -> str:
    return (SITE / page).read_text(encoding="utf-8")


def _h1(page: str) -> str:
    """The page's title in its article (not the print-only copy above it)."""
    titles = re.findall(r"<h1[^>]*>(.*?)</h1>", _html(page), re.S)
    title = next(t for t in titles if "headerlink" in t)
    return re.sub(r"<[^>]+>", "", title).replace("#", "").strip()


# ------------------------------------------------------------------ numbers
def test_chapters_are_numbered_in_the_order_of_the_table_of_contents():
    assert len(NUMBERED) >= 14, NUMBERED
    for number, doc in enumerate(NUMBERED, start=1):
        assert _h1(f"{doc}.html").startswith(f"{number}. "), (doc, _h1(f"{doc}.html"))
    for doc in UNNUMBERED:
        assert not re.match(r"\d+\. ", _h1(f"{doc}.html")), doc
    # the list of chapters in the sidebar shows the same numbers
    sidebar = _html("chapters/intro.html")
    for number, doc in enumerate(NUMBERED, start=1):
        name = re.escape(doc[len("chapters/") :])  # the link from chapters/intro.html
        assert re.search(rf'href="{name}\.html">{number}\. ', sidebar), doc


def test_figures_and_exercises_are_numbered_within_their_chapter():
    for number, doc in enumerate(NUMBERED, start=1):
        html = _html(f"{doc}.html")
        figures = re.findall(r'class="caption-number">Fig\. ([\d.]+)', html)
        exercises = set(re.findall(r"Exercise (\d+\.\d+)", html))
        for label in figures + sorted(exercises):
            assert label.split(".")[0] == str(number), (doc, label)
        if figures:
            assert figures[0] == f"{number}.1", (doc, figures[:3])


def test_chapter_labels_give_chapter_numbers():
    """``{numref}`chapter-<file>``` works for every numbered chapter (the labels are
    made by _ext/reader_path.py); checked on the objects inventory that Sphinx
    writes."""
    inventory = (SITE / "objects.inv").read_bytes()
    import zlib

    text = zlib.decompress(inventory.split(b"\n", 4)[4]).decode("utf-8")
    for doc in NUMBERED + UNNUMBERED:
        label = "chapter-" + doc.split("/")[-1]
        assert re.search(
            rf"^{re.escape(label)} std:label -1 {re.escape(doc)}\.html", text, re.M
        ), label


# ------------------------------------------------------------------ the path
def _prev_next(page: str) -> tuple[str | None, str | None]:
    html = _html(page)
    prev = re.search(r'<a class="left-prev"\s+href="([^"]+)"', html)
    nxt = re.search(r'<a class="right-next"\s+href="([^"]+)"', html)
    return (prev.group(1) if prev else None, nxt.group(1) if nxt else None)


def test_the_instructors_page_is_out_of_the_learners_chain():
    assert _prev_next("chapters/for_instructors/instructors.html") == (None, None)
    for page in PAGES:
        assert "instructors.html" not in (_prev_next(page)[0] or "") + (
            _prev_next(page)[1] or ""
        ), page
    assert _prev_next(f"{NUMBERED[0]}.html")[0] == "../../using_the_book/running.html"


def _announced_minutes() -> int:
    total = 0
    for doc in NUMBERED + UNNUMBERED:
        path = REPO / f"{doc}.ipynb"
        if not path.is_file():
            continue
        first = next(
            c
            for c in json.loads(path.read_text("utf-8"))["cells"]
            if c["cell_type"] == "markdown"
        )
        m = re.search(r"\*\*Time:\*\* about (\d+) minutes", "".join(first["source"]))
        total += int(m.group(1)) if m else 0
    return total


def test_the_landing_page_says_where_to_start_and_how_long_it_takes():
    html = _html("chapters/intro.html")
    start = re.search(r'<a class="[^"]*start-here[^"]*" href="([^"]+)"', html)
    assert start and start.group(1) == NUMBERED[0][len("chapters/") :] + ".html"
    hours, minutes = divmod(_announced_minutes(), 60)
    assert f"about {hours}\u00a0h {minutes:02d}\u00a0min" in html
    assert "one-hour skim" in html and "full course" in html
    assert "rocket icon at the top of the page" not in html


def test_the_pdf_edition_is_linked_only_where_it_is():
    pdf = SITE / "attention-executable.pdf"
    links = [
        p
        for p in PAGES
        if re.search(r'<a [^>]*href="[^"]*attention-executable\.pdf"', _html(p))
    ]
    if pdf.is_file():
        assert "chapters/using_the_book/running.html" in links
    else:
        assert links == [], links
        assert "not part of this copy of the site" in _html(
            "chapters/using_the_book/running.html"
        )


# ------------------------------------------------------------------ weight
def test_mathjax_only_on_pages_with_mathematics():
    for page in PAGES:
        html = _html(page)
        loads = "vendor/mathjax/startup.js" in html
        assert "tex-mml-chtml" not in html, page
        has_math = (
            'class="math' in html
            or bool(re.search(r"\\\\\(|\$[^$\s][^$<]*\$", "".join(STATE.findall(html))))
            or bool(re.search(r'id="attnquiz_.*?\$[^$]+\$', html, re.S))
        )
        assert loads == has_math, (page, loads, has_math)
    assert "vendor/mathjax/startup.js" not in _html("chapters/intro.html")


def test_the_search_index_only_on_the_search_page():
    for page in PAGES:
        assert ("searchindex.js" in _html(page)) == (page == "search.html"), page


EXPLORER_MODELS = {
    "LayoutModel",
    "DescriptionStyleModel",
    "DropdownModel",
    "HTMLModel",
    "HTMLStyleModel",
    "LinkModel",
    "SelectModel",
    "SelectionSliderModel",
    "SliderStyleModel",
    "StackModel",
    "VBoxModel",
}


@pytest.mark.parametrize("page", [p for p in PAGES if STATE.search(_html(p))])
def test_no_unused_widget_models_in_the_page(page):
    html = _html(page)
    state = json.loads(STATE.search(html).group(1))["state"]
    views = {json.loads(v)["model_id"] for v in VIEW.findall(html)}
    named = set()
    for record in state.values():
        named |= set(re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(record["state"])))
    for model_id, record in state.items():
        assert record["model_name"] in EXPLORER_MODELS, (page, record["model_name"])
        if record["model_name"] == "LinkModel":
            ends = re.findall(r"IPY_MODEL_([0-9a-f]+)", json.dumps(record["state"]))
            assert ends and all(e in state for e in ends), (page, model_id)
        else:
            assert model_id in views or model_id in named, (page, model_id)


def test_icons_come_from_fonts_cut_to_the_icons_shown():
    from fontTools.ttLib import TTFont

    icons = SITE / "_static" / "icons"
    css = (SITE / "_static" / "styles" / "pydata-sphinx-theme.css").read_text("utf-8")
    mapping = {}
    for names, content in re.findall(
        r'((?:\.fa-[\w-]+:before,?)+)\{content:"(\\[0-9a-f]{4})"\}', css
    ):
        for name in re.findall(r"\.(fa-[\w-]+):", names):
            mapping[name] = int(content[1:], 16)
    shown = set()
    for page in PAGES:
        for classes in re.findall(r'<i class="([^"]*)"', _html(page)):
            shown |= {c for c in classes.split() if c.startswith("fa-")}
    cmap = set()
    for font in icons.glob("*.woff"):
        assert font.stat().st_size < 20_000, font
        cmap |= set(TTFont(font).getBestCmap())
    used = {name for name in shown if name in mapping}
    assert len(used) >= 8, used
    assert {name for name in used if mapping[name] not in cmap} == set()
    for page in PAGES:
        if "http-equiv" not in _html(page)[:200]:  # not the redirect of index.html
            assert "_static/icons/icons.css" in _html(page), page


# ------------------------------------------------------------------ build internals
@pytest.mark.parametrize("page", [p for p in PAGES if p.startswith("chapters/")])
def test_no_build_internals_in_the_code_cells(page):
    code = " ".join(re.findall(r"<pre>(.*?)</pre>", _html(page), re.S))
    text = re.sub(r"<[^>]+>", "", code)
    assert not re.search(r"nbval|the website hides|For the website", text), page
    assert "explorer.widget" not in text, f"{page}: the live explorer's cell is shown"


def test_explorer_pages_have_a_skip_link_to_the_explorer():
    for page in PAGES:
        html = _html(page)
        if "explorer-state" not in html:
            continue
        assert '<a href="#first-explorer">Skip to the explorer</a>' in html, page
        assert html.index('id="first-explorer"') < html.index(
            'application/vnd.jupyter.widget-view+json">'
        ), page
