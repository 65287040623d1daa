"""No page names another chapter by a number (issue 29, the newcomer's first item).

The book numbers its chapters from the table of contents (`_toc.yml` counts on from
part to part), so a file's prefix is not its chapter number: 01b is chapter 2 and
05_softmax is chapter 6. Prose that says "chapter 5" therefore points at the wrong
chapter. A reference is a ``{doc}`` link to the file, which renders the chapter's title.
The book cites no paper by its chapters, so no exception is needed; a paper's sections
("section 3.2") are allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"

# "chapter 5", "Chapters 3 to 8", "chapter 10c", "chapter-2 model", "ch. 9"
NUMBERED = re.compile(r"\b(?:chapters?[\s-]+|ch\.\s*)\d", re.IGNORECASE)


def _texts(path: Path) -> list[tuple[str, str]]:
    """(where, text) pairs a reader sees: markdown, code, captions and alt text."""
    if path.suffix == ".md":
        return [("page", path.read_text(encoding="utf-8"))]
    nb = nbformat.read(path, as_version=4)
    texts = []
    for number, cell in enumerate(nb.cells):
        texts.append((f"cell {number} ({cell.cell_type})", cell.source))
        mystnb = cell.metadata.get("mystnb", {})
        for key in ("figure", "image"):
            for field in ("caption", "alt"):
                value = mystnb.get(key, {}).get(field)
                if value:
                    texts.append((f"cell {number} {key} {field}", value))
    return texts


PAGES = sorted(CHAPTERS.glob("*.ipynb")) + sorted(CHAPTERS.glob("*.md"))


def test_the_pattern_catches_what_it_must_and_spares_sections():
    for bad in ["the softmax of chapter 5", "Chapters 3 to 8", "chapter 10c", "ch. 9"]:
        assert NUMBERED.search(bad), bad
    for good in ["section 3.2", "{doc}`05_softmax`", "this chapter's 3 figures"]:
        assert not NUMBERED.search(good), good


def test_every_page_is_checked():
    names = {p.stem for p in PAGES}
    assert {"01b_learning", "12_summary", "syllabus", "glossary"} <= names


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.name)
def test_no_chapter_is_named_by_a_number(path):
    found = [
        f"{where}: ...{text[max(m.start() - 40, 0) : m.end() + 20]!r}..."
        for where, text in _texts(path)
        for m in NUMBERED.finditer(text)
    ]
    assert not found, (
        "name the chapter with a {doc} link to its file, not by a number "
        "(the table of contents numbers chapters differently from the files): "
        + "; ".join(found)
    )
