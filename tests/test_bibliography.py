"""The bibliography is complete and every chapter's reference list is honest.

- every entry of references.bib has a DOI, or a note saying why none exists;
- every work a chapter lists under "## References" is cited in that chapter's text, and
  every work cited in the text is listed there.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from book_files import CHAPTER_NOTEBOOKS, page  # tests/ is on the path
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
BIB = parse_file(str(ROOT / "references.bib"))
CHAPTERS = CHAPTER_NOTEBOOKS  # chapters/<part>/<topic>/<topic>.ipynb, from _toc.yml
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")


def _cited(text: str) -> set[str]:
    return {key.strip() for keys in CITE.findall(text) for key in keys.split(",")}


def _body_and_references(notebook: Path) -> tuple[str, str]:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    markdown = "\n".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
    )
    head, sep, references = markdown.partition("\n## References")
    assert sep, f"{notebook.name} has no '## References' section"
    return head, references


@pytest.mark.parametrize("key", sorted(BIB.entries))
def test_entry_has_doi_or_says_why_not(key):
    fields = BIB.entries[key].fields
    if "doi" in fields:
        assert re.fullmatch(r"10\.\d{4,9}/\S+", fields["doi"]), f"{key}: malformed DOI"
    else:
        assert "no doi" in fields.get("note", "").lower(), (
            f"{key} has neither a DOI nor a note saying why none exists"
        )


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_reference_list_matches_citations(notebook):
    body, references = _body_and_references(notebook)
    listed, cited = _cited(references), _cited(body)
    assert listed <= set(BIB.entries), (
        f"unknown keys: {sorted(listed - set(BIB.entries))}"
    )
    assert not listed - cited, (
        f"listed under References but never cited: {sorted(listed - cited)}"
    )
    assert not cited - listed, (
        f"cited but missing from References: {sorted(cited - listed)}"
    )


def test_helpers_find_what_they_should():
    # The checks above would pass vacuously if the parsing found nothing.
    assert _cited("see {cite:t}`a2020` and {cite:p}`b2019,c2018`") == {
        "a2020",
        "b2019",
        "c2018",
    }
    assert len(BIB.entries) >= 10
    assert all(_cited(_body_and_references(c)[1]) for c in CHAPTERS)


def test_every_chapter_is_checked():
    # the reference-list check above would pass vacuously on an empty list of chapters
    assert len(CHAPTERS) >= 20 and all(p.is_file() for p in CHAPTERS)


# ---- entries the chapters rely on (expert reads 3a, 4c; issue 28, error 11) ---------


@pytest.mark.parametrize(
    "key, title, doi",
    [
        ("dao2023", "{FlashAttention-2}", "10.48550/arXiv.2307.08691"),
        ("xiong2020", None, "10.48550/arXiv.2002.04745"),
        ("he2016identity", "Identity Mappings in Deep Residual Networks", None),
    ],
)
def test_entry_is_the_work_the_chapter_means(key, title, doi):
    fields = BIB.entries[key].fields
    if title is not None:
        assert fields["title"].startswith(title)
    if doi is not None:
        assert fields["doi"] == doi
        assert "no doi exists" not in fields.get("note", "").lower()


@pytest.mark.parametrize("key", ["allminilmcard2021", "reimers2021minilm6"])
def test_model_cards_are_cited_by_their_web_page_without_a_doi(key):
    fields = BIB.entries[key].fields
    assert "doi" not in fields and "No DOI" in fields["note"]
    assert fields["url"].startswith("https://huggingface.co/")


def test_bibliography_page_names_every_work_without_a_doi_and_counts_them():
    text = re.sub(r"\s+", " ", page("bibliography").read_text(encoding="utf-8"))
    missing = [key for key, e in BIB.entries.items() if "doi" not in e.fields]
    assert missing, "the check would pass vacuously"
    for key in missing:
        entry = BIB.entries[key]
        surname = entry.persons["author"][0].last_names[0].strip("{}")
        year = entry.fields["year"]
        assert re.search(rf"{surname}[^()]*\({year}\)", text), (key, surname, year)
    names = "One Two Three Four Five Six Seven Eight Nine Ten".split()
    stated = re.search(rf"({'|'.join(names)}) ha(?:s|ve) none", text)
    assert stated and names.index(stated.group(1)) + 1 == len(missing)
