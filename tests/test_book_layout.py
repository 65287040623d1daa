"""The tree shows the book: every chapter is ``chapters/<part>/<topic>/<topic>.ipynb``,
its own modules beside it with names unique across the book (the tests and the page's
Python import them by name), and ``tools/contents.py`` prints the reading order that
``_toc.yml`` alone sets."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter

from book_files import CHAPTER_DIRS, CHAPTERS, NOTEBOOKS, ROOT, TOC

_spec = importlib.util.spec_from_file_location("contents", ROOT / "tools/contents.py")
contents = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(contents)


def test_every_chapter_sits_in_a_topic_folder_of_its_part():
    for path in NOTEBOOKS:
        part, topic, name = path.relative_to(CHAPTERS).parts
        assert name == f"{topic}.ipynb", path
        assert re.fullmatch(r"[a-z]+(_[a-z]+)*", part + "_" + topic), path


def test_no_file_name_carries_a_number():
    for path in CHAPTERS.rglob("*"):
        if path.suffix in (".ipynb", ".md", ".py") and "__pycache__" not in path.parts:
            assert not re.match(r"\d", path.name), path


def test_a_chapters_modules_have_names_unique_across_the_book():
    names = Counter(p.stem for d in CHAPTER_DIRS for p in d.glob("*.py"))
    assert [n for n, k in names.items() if k > 1] == []
    for folder in CHAPTER_DIRS:
        for module in folder.glob("*.py"):
            assert not module.name.startswith("test_"), module


def test_contents_lists_every_page_once_in_toc_order_with_chapter_numbers():
    lines = contents.contents()
    files = [entry["file"] for part in TOC["parts"] for entry in part["chapters"]]
    listed = [re.sub(r"\.(ipynb|md)$", "", line.split()[-1]) for line in lines]
    assert [f for f in listed if f in files] == files
    numbers = [int(line.split()[0]) for line in lines if re.match(r"\s*\d+\s", line)]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) >= 20


# ---- no page names another chapter by a number (issue 29) ---------------------------
# The table of contents numbers the chapters, so prose that says "chapter 5" points at
# whatever _toc.yml puts fifth; a reference is a {doc} link, which renders the title.
# A paper's sections ("section 3.2") are allowed.

NUMBERED_CHAPTER = re.compile(r"\b(?:chapters?[\s-]+|ch\.\s*)\d", re.IGNORECASE)
READER_PAGES = NOTEBOOKS + sorted(CHAPTERS.rglob("*.md"))


def _reader_texts(path):
    """(where, text) pairs a reader sees: markdown, code, captions and alt text."""
    import nbformat

    if path.suffix == ".md":
        return [("page", path.read_text(encoding="utf-8"))]
    texts = []
    for number, cell in enumerate(nbformat.read(path, as_version=4).cells):
        texts.append((f"cell {number} ({cell.cell_type})", cell.source))
        mystnb = cell.metadata.get("mystnb", {})
        for key in ("figure", "image"):
            for field in ("caption", "alt"):
                if mystnb.get(key, {}).get(field):
                    texts.append((f"cell {number} {key} {field}", mystnb[key][field]))
    return texts


def test_the_chapter_number_pattern_catches_what_it_must_and_spares_sections():
    for bad in ["the softmax of chapter 5", "Chapters 3 to 8", "chapter 10c", "ch. 9"]:
        assert NUMBERED_CHAPTER.search(bad), bad
    for good in ["section 3.2", "{doc}`softmax`", "this chapter's 3 figures"]:
        assert not NUMBERED_CHAPTER.search(good), good
    names = {p.stem for p in READER_PAGES}
    assert {"softmax", "summary", "glossary", "bibliography"} <= names


def test_no_page_names_a_chapter_by_a_number():
    found = [
        f"{path.relative_to(ROOT)} {where}: "
        f"...{text[max(m.start() - 40, 0) : m.end() + 20]!r}..."
        for path in READER_PAGES
        for where, text in _reader_texts(path)
        for m in NUMBERED_CHAPTER.finditer(text)
    ]
    assert not found, "name the chapter with a {doc} link: " + "; ".join(found)
