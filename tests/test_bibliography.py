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
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
BIB = parse_file(str(ROOT / "references.bib"))
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9]*.ipynb"))
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
