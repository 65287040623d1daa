"""The PDF edition (``make pdf`` builds it, then runs this file with ``make test-pdf``).

Read back with poppler's tools (``pdftotext``, ``pdfimages``, ``pdftoppm``) and compared
with the built website it was printed from:

* the page count is plausible for the number of pages of the book, and each of them has
  pages;
* page 1 is the title page; the contents list every page of the book in reading order
  with the number of the page on which its title appears;
* no raw TeX (``$``, ``\\frac``, ``\\(`` ...) is left in the text: the mathematics was
  typeset;
* every figure of every page of the site is in the PDF, within that page's page range
  (matched by its pixel size);
* no code line is cut: every word of every line of code and text output of the site is
  in the PDF's text, and nothing is drawn in the outer margins of any page (rendered
  with pdftoppm);
* every explorer was drawn and the words of its starting state are printed; every
  self-check question is printed, followed by its right answer;
* the bibliography's DOIs are all there; the site's landing page links to the PDF, which
  `make pdf` puts beside the pages.

Not collected by ``pytest tests`` (the file name does not start with ``test_``): the PDF
is built by its own target. Run ``make test-pdf`` after ``make pdf``.
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import yaml
from PIL import Image

REPO = Path(__file__).resolve().parents[2]
SITE = REPO / "_build" / "html"
PDF = REPO / "_build" / "pdf" / "attention-executable.pdf"
SUMMARY = PDF.with_suffix(".json")

if not PDF.is_file() or not SUMMARY.is_file():
    pytest.skip(f"no PDF at {PDF}: run `make pdf`", allow_module_level=True)

BOOK = json.loads(SUMMARY.read_text(encoding="utf-8"))
CHAPTERS = BOOK["chapters"]
N_PAGES = BOOK["pages"]


def _pdftotext(first: int | None = None, last: int | None = None, *extra: str) -> str:
    args = ["pdftotext", "-enc", "UTF-8", *extra]
    if first:
        args += ["-f", str(first), "-l", str(last or first)]
    return subprocess.run(
        [*args, str(PDF), "-"], capture_output=True, text=True, check=True
    ).stdout


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


class _Article(HTMLParser):
    """The article of a built page: its h1, images, code lines and text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.depth = 0  # > 0 inside <article>
        self.h1 = None
        self._in_h1 = False
        self.images: list[str] = []
        self.pre: list[str] = []
        self._pre_depth = 0
        self._buffer: list[str] = []
        self.text: list[str] = []
        self._skipping: list[
            str
        ] = []  # open tags whose content is not text of the page

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "article":
            self.depth += 1
        if not self.depth:
            return
        classes = (attrs.get("class") or "").split()
        if tag in ("script", "style") or "headerlink" in classes:
            self._skipping.append(tag)
        if tag == "h1" and self.h1 is None:
            self._in_h1, self._buffer = True, []
        if tag == "img" and attrs.get("src") and not attrs["src"].startswith("data:"):
            self.images.append(attrs["src"])
        if tag == "pre":
            if not self._pre_depth:
                self._buffer = []
            self._pre_depth += 1

    def handle_endtag(self, tag):
        if not self.depth:
            return
        if self._skipping and tag == self._skipping[-1]:
            self._skipping.pop()
        if tag == "h1" and self._in_h1:
            self.h1 = " ".join("".join(self._buffer).replace("#", "").split())
            self._in_h1 = False
        if tag == "pre" and self._pre_depth:
            self._pre_depth -= 1
            if not self._pre_depth:
                self.pre.append("".join(self._buffer))
        if tag == "article":
            self.depth -= 1

    def handle_data(self, data):
        if not self.depth or self._skipping:
            return
        if self._in_h1 or self._pre_depth:
            self._buffer.append(data)
        self.text.append(data)


def _article(html_path: str) -> _Article:
    parser = _Article()
    parser.feed((SITE / html_path).read_text(encoding="utf-8"))
    return parser


def _page_ranges() -> list[tuple[dict, int, int]]:
    ranges = []
    for i, chapter in enumerate(CHAPTERS):
        last = CHAPTERS[i + 1]["first_page"] - 1 if i + 1 < len(CHAPTERS) else N_PAGES
        ranges.append((chapter, chapter["first_page"], last))
    return ranges


def test_every_page_of_the_book_in_reading_order():
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    files = [toc["root"]] + [
        f
        for part in toc["parts"]
        for c in part["chapters"]
        for f in [c["file"]] + [s["file"] for s in c.get("sections", [])]
    ]
    assert [c["file"] for c in CHAPTERS] == files


def test_page_count_is_plausible():
    result = subprocess.run(
        ["pdfinfo", str(PDF)], capture_output=True, text=True, check=True
    )
    pages = int(re.search(r"^Pages:\s+(\d+)", result.stdout, re.M).group(1))
    assert pages == N_PAGES
    n = len(CHAPTERS)
    assert n + 2 <= pages <= 60 * n, f"{pages} pages for {n} chapters"
    for chapter, first, last in _page_ranges():
        assert last >= first, f"{chapter['file']} has no pages"


def test_title_page():
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    assert config["title"] in " ".join(_pdftotext(1).split())


def test_contents_give_the_page_of_each_chapter():
    first = BOOK["contents_first_page"]
    lines = [
        " ".join(line.split())
        for line in _pdftotext(
            first, first + BOOK["contents_pages"] - 1, "-layout"
        ).splitlines()
    ]
    assert any(line == "Contents" for line in lines)
    entries = [line for line in lines if re.search(r"\s\d+$", line)]
    assert len(entries) == len(CHAPTERS), entries
    for chapter, entry in zip(CHAPTERS, entries):
        title = _article(chapter["html"]).h1
        assert entry == f"{title} {chapter['first_page']}", (entry, title)
        # that page starts the chapter: its title is among the first lines
        top = [
            " ".join(t.split())
            for t in _pdftotext(chapter["first_page"]).splitlines()
            if t.strip()
        ][:4]
        assert title in " ".join(top), (title, chapter["first_page"], top)


RAW_TEX = re.compile(
    r"\$|\\(frac|sqrt|mathbf|mathrm|top|sum|begin|end|left|right|cdot)\b|"
    r"\\[()\[\]]"
)


def test_no_raw_tex_in_the_text():
    text = _pdftotext()
    code = _squash(
        "".join(block for c in CHAPTERS for block in _article(c["html"]).pre)
    )
    found = []
    for line in text.splitlines():
        for _match in RAW_TEX.finditer(line):
            if _squash(line) and _squash(line) in code:  # a line of code may hold a `$`
                continue
            found.append(line.strip())
    assert found == [], f"raw TeX in the PDF's text: {found[:10]}"


def _pdf_image_sizes(first: int, last: int) -> Counter:
    listing = subprocess.run(
        ["pdfimages", "-list", "-f", str(first), "-l", str(last), str(PDF)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    sizes = Counter()
    for row in listing.splitlines()[2:]:
        cols = row.split()
        if len(cols) > 4 and cols[2] in ("image", "smask") and cols[2] == "image":
            sizes[(int(cols[3]), int(cols[4]))] += 1
    return sizes


@pytest.mark.parametrize(
    "chapter, first, last", _page_ranges(), ids=[c["file"] for c in CHAPTERS]
)
def test_every_figure_appears(chapter, first, last):
    page = SITE / chapter["html"]
    wanted = Counter()
    for src in _article(chapter["html"]).images:
        path = (page.parent / src.split("?")[0]).resolve()
        if path.suffix.lower() in (".png", ".jpg", ".jpeg", ".gif"):
            with Image.open(path) as image:
                wanted[image.size] += 1
    if not wanted:
        pytest.skip(f"{chapter['file']} has no raster figures")
    present = _pdf_image_sizes(first, last)
    missing = wanted - present
    assert not missing, (
        f"{chapter['file']}: figures of these pixel sizes are not on pages "
        f"{first}-{last}: {dict(missing)}"
    )


@pytest.mark.parametrize(
    "chapter, first, last", _page_ranges(), ids=[c["file"] for c in CHAPTERS]
)
def test_every_code_line_is_complete(chapter, first, last):
    """Each word of each line of code and output is on the chapter's pages, whole.
    Words are looked up one by one in the page text without spaces (a wrapped line
    continues on the next line of the page), and without hyphens (poppler drops a
    hyphen at a line end)."""
    text = _squash(_pdftotext(first, last, "-layout")).replace("-", "")
    missing = []
    for block in _article(chapter["html"]).pre:
        for line in block.splitlines():
            absent = [
                word for word in line.split() if word.replace("-", "") not in text
            ]
            if absent:
                missing.append(f"{line[:90]}  (missing: {' '.join(absent)[:60]})")
    assert missing == [], (
        f"{chapter['file']}: {len(missing)} code lines not whole on pages "
        f"{first}-{last}:\n" + "\n".join(missing[:20])
    )


def test_nothing_drawn_in_the_side_margins(tmp_path):
    """Rendered at 30 dpi, the outer 10 mm on the left and right of every page are
    blank."""
    subprocess.run(
        ["pdftoppm", "-r", "30", "-gray", "-png", str(PDF), str(tmp_path / "p")],
        check=True,
    )
    pngs = sorted(tmp_path.glob("p-*.png"))
    assert len(pngs) == N_PAGES
    strip = round(10 / 25.4 * 30)
    inked = []
    for png in pngs:
        pixels = np.asarray(Image.open(png).convert("L"))
        margins = np.concatenate([pixels[:, :strip], pixels[:, -strip:]], axis=1)
        if (margins < 200).any():
            inked.append(png.name)
    assert inked == [], f"pages with something drawn in the side margins: {inked}"


def test_the_margin_check_can_fail(tmp_path):
    """A page whose content runs past the right edge is caught by the same
    measurement."""
    page = np.full((351, 248), 255, dtype=np.uint8)  # A4 at 30 dpi
    page[100:104, 60:248] = 0  # a line of text that runs off the right edge
    strip = round(10 / 25.4 * 30)
    assert (np.concatenate([page[:, :strip], page[:, -strip:]], axis=1) < 200).any()


def test_bibliography_complete():
    [bibliography] = [c for c in CHAPTERS if c["file"].endswith("bibliography")]
    dois = set(
        re.findall(
            r"10\.\d{4,9}/[^\s\"<>]+[^\s\"<>.,;]",
            "".join(_article(bibliography["html"]).text),
        )
    )
    assert dois, "the bibliography page lists no DOIs"
    # poppler joins a word hyphenated at a line end: compare without hyphens
    text = _squash(_pdftotext()).replace("-", "")
    missing = sorted(doi for doi in dois if doi.replace("-", "") not in text)
    assert missing == [], f"DOIs missing from the PDF: {missing}"


def _widget_models(html_path: str) -> tuple[dict, list[str]]:
    """The stored widget state of a page and the ids of the widgets it shows (its
    views)."""
    page = (SITE / html_path).read_text(encoding="utf-8")
    state = re.search(
        r'<script type="application/vnd\.jupyter\.widget-state\+json">(.*?)'
        r"</script>",
        page,
        re.S,
    )
    views = [
        json.loads(v)["model_id"]
        for v in re.findall(
            r'<script type="application/vnd\.jupyter\.widget-view\+json">(.*?)'
            r"</script>",
            page,
            re.S,
        )
    ]
    return (json.loads(state.group(1))["state"] if state else {}), views


class _Text(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skip = 0

    # An SVG's <title> is its text alternative for screen readers, not drawn on the
    # page.
    HIDDEN = ("style", "script", "title")

    def handle_starttag(self, tag, attrs):
        self._skip += tag in self.HIDDEN

    def handle_endtag(self, tag):
        self._skip -= tag in self.HIDDEN and self._skip > 0

    def handle_data(self, data):
        if not self._skip:
            self.parts.append(data)


def _default_view_text(state: dict, model_id: str) -> list[str]:
    """The words an explorer shows before anyone touches it: the labels of its
    controls and the text of its HTML children (tables, SVG labels); of a Stack only
    the selected child."""
    model = state[model_id]
    values = model["state"]
    words = (values.get("description") or "").split()
    if model["model_name"] in ("HTMLModel", "HTMLMathModel", "LabelModel"):
        parser = _Text()
        parser.feed(values.get("value") or "")
        words += " ".join(parser.parts).split()
    children = values.get("children") or []
    if model["model_name"] == "StackModel":
        index = values.get("selected_index")
        children = [] if index is None else [children[index]]
    for child in children:
        words += _default_view_text(state, child.removeprefix("IPY_MODEL_"))
    return words


EXPLORER_CHAPTERS = [
    (c, first, last)
    for c, first, last in _page_ranges()
    if _widget_models(c["html"])[1]
]


@pytest.mark.parametrize(
    "chapter, first, last",
    EXPLORER_CHAPTERS,
    ids=[c["file"] for c, _, _ in EXPLORER_CHAPTERS],
)
def test_explorers_printed_in_their_default_state(chapter, first, last):
    """Every explorer of the page was drawn when it was printed (build_pdf.py counts
    them) and every word of its starting state (control labels, readouts, the
    drawing's labels, taken from the widget state stored in the page) is on the
    chapter's pages."""
    state, views = _widget_models(chapter["html"])
    assert chapter.get("widgets") == len(views) == chapter.get("drawn"), chapter
    text = _squash(_pdftotext(first, last)).replace("-", "")
    for view in views:
        words = _default_view_text(state, view)
        assert len(words) >= 5, (
            f"{chapter['file']}: explorer {view} shows almost no text"
        )
        missing = [w for w in words if w.replace("-", "") not in text]
        assert missing == [], (
            f"{chapter['file']}: words of the explorer's starting state "
            f"not on pages {first}-{last}: {missing[:20]}"
        )


def _quizzes(html_path: str) -> list[list[dict]]:
    """The self-check questions (jupyterquiz) a page embeds: one list per quiz."""
    page = (SITE / html_path).read_text(encoding="utf-8")
    return [
        json.loads(q) for q in re.findall(r"var questions\w+=(\[.*?\]);\n", page, re.S)
    ]


QUIZ_CHAPTERS = [
    (c, first, last) for c, first, last in _page_ranges() if _quizzes(c["html"])
]


def test_quizzes_found():
    """The pattern that finds the questions matches: most chapters have self-check
    questions."""
    assert len(QUIZ_CHAPTERS) >= 10, [c["file"] for c, _, _ in QUIZ_CHAPTERS]


def _plain_pieces(text: str) -> list[str]:
    """The parts of a question outside its mathematics (``$...$``), as text (a
    question's HTML markup, e.g. ``<em>fisherman</em>``, is not printed, its text is),
    squashed."""
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    pieces = re.split(r"\$\$.+?\$\$|\$.+?\$", text)
    # hyphens dropped, as pdftotext joins a word hyphenated at a line end
    return [_squash(p).replace("-", "") for p in pieces if _squash(p)]


def _find(text: str, piece: str, start: int) -> tuple[int, int]:
    """(where ``piece`` is in ``text`` from ``start``, its length there), or (-1, 0).
    A typeset formula's superscript can land inside a neighbouring line's text in
    pdftotext's reading order ("cost as much 2 as ..." beside $24 n d^2$): up to two
    stray characters are allowed between two characters of the piece."""
    found = text.find(piece, start)
    if found >= 0:
        return found, len(piece)
    pattern = ".{0,2}?".join(re.escape(c) for c in piece)
    match = re.compile(pattern).search(text, start)
    return (match.start(), match.end() - match.start()) if match else (-1, 0)


@pytest.mark.parametrize(
    "chapter, first, last", QUIZ_CHAPTERS, ids=[c["file"] for c, _, _ in QUIZ_CHAPTERS]
)
def test_self_check_questions_and_answers_printed(chapter, first, last):
    """Each question's text and its right answer (the centre of a numeric question's
    accepted interval, the right option of a multiple choice) are on the chapter's
    pages, in order."""
    quizzes = _quizzes(chapter["html"])
    assert chapter.get("quizzes") == len(quizzes), chapter
    text = _squash(_pdftotext(first, last)).replace("-", "")
    at = 0
    for quiz in quizzes:
        for question in quiz:
            for piece in _plain_pieces(question["question"]):
                found, length = _find(text, piece, at)
                assert found >= 0, (
                    f"{chapter['file']}: question text {piece!r} not on "
                    f"pages {first}-{last} (after the previous question)"
                )
                at = found + length
        answers = text.find(_squash("Answers to these questions"), at)
        assert answers >= 0, f"{chapter['file']}: no answers after a quiz"
        for question in quiz:
            [right] = [a for a in question["answers"] if a.get("correct")]
            if question["type"] == "numeric":
                low, high = right["range"]
                tol = (high - low) / (2 + 1e-9)
                digits = max(0, int(np.ceil(-np.log10(tol))))
                shown = f"{low + tol:.{digits}f}(±{tol:.{digits}f})"
            elif _plain_pieces(right["answer"]):
                shown = _plain_pieces(right["answer"])[0]
            else:  # an option that is all mathematics: its text differs once typeset
                continue
            found, length = _find(text, shown.replace("-", ""), answers)
            assert found >= 0, (
                f"{chapter['file']}: answer {shown!r} not printed after its quiz"
            )
            answers = found + length
        at = answers


def test_site_links_to_the_pdf():
    """The landing page and the page on running the book link to the PDF, and the
    link leads to this PDF inside the built site (works offline and on GitHub Pages
    alike)."""
    for page in ("chapters/intro.html", "chapters/using_the_book/running.html"):
        links = re.findall(
            r'<a [^>]*href="([^"]*attention-executable\.pdf)"',
            (SITE / page).read_text(encoding="utf-8"),
        )
        assert links, f"{page} does not link to the PDF"
        for link in links:
            assert "://" not in link, f"{page}: {link} is not a link into the site"
            target = (SITE / page).parent / link
            assert target.resolve() == (SITE / PDF.name).resolve(), link
            assert target.read_bytes() == PDF.read_bytes(), f"{target} is not this PDF"
