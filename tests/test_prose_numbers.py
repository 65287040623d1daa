"""Numbers in the chapters' prose come from the cells that compute them.

Every decimal number in a chapter's running text (outside code, mathematics and the
folded solutions' code) is either glued from a cell (``{glue:text}`name```, see
``book_support.glue``) or listed in ``tests/facts/typed/<topic>.yml`` with the reason it
is typed: a definition, a seed fact of the source documents, or a value the text
chooses (a setting, not a result). A glued name must be stored by a cell of the same
notebook.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from book_files import CHAPTER_NOTEBOOKS, NOTEBOOKS

TYPED = Path(__file__).resolve().parent / "facts" / "typed"
DECIMAL = re.compile(r"(?<![\w.\-/])-?\d[\d,]*\.\d+(?![\w.]*\w)")
GLUE_ROLE = re.compile(r"\{glue:text\}`([^`:]+)(?::[^`]*)?`")


def prose(markdown: str) -> str:
    """The running text of a Markdown cell: no code, mathematics, roles' targets or
    glued numbers."""
    text = re.sub(r"(`{3,4})\{solution\}.*?\n\1(?=\n|$)", " ", markdown, flags=re.S)
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " ", text, flags=re.S)
    text = GLUE_ROLE.sub(" ", text)
    text = re.sub(r"\{[\w:-]+\}`[^`]*`", " ", text)  # roles: {doc}, {cite:t}, {numref}
    text = re.sub(r"`[^`\n]*`", " ", text)  # inline code
    text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
    return text


def typed_numbers(notebook: Path) -> list[str]:
    found = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            found += DECIMAL.findall(prose("".join(cell["source"])))
    return found


def glued_names(notebook: Path) -> tuple[set, set]:
    """(names the prose pastes, names the stored outputs hold)."""
    used, stored = set(), set()
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "markdown":
            used |= set(GLUE_ROLE.findall("".join(cell["source"])))
        for out in cell.get("outputs", []):
            name = out.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                stored.add(name)
    return used, stored


def listed(topic: str) -> dict[str, str]:
    path = TYPED / f"{topic}.yml"
    entries = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else []
    return {str(e["text"]): e["why"] for e in entries or []}


@pytest.mark.parametrize("notebook", CHAPTER_NOTEBOOKS, ids=lambda p: p.stem)
def test_every_decimal_in_the_prose_is_glued_or_listed(notebook):
    allowed = listed(notebook.stem)
    missing = sorted({n for n in typed_numbers(notebook) if n not in allowed})
    assert not missing, (
        f"{notebook.stem}: typed decimals {missing}: glue each from the cell that "
        f"computes it, or list it in tests/facts/typed/{notebook.stem}.yml with why"
    )


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_glued_name_is_stored_by_the_notebook(notebook):
    used, stored = glued_names(notebook)
    assert used <= stored, f"{notebook.stem}: pasted but never glued: {used - stored}"


def test_the_check_finds_a_typed_decimal_and_skips_code_math_and_glue():
    markdown = (
        "Learning gets 84.4% of the weight and {glue:text}`x` more; `0.5` is code, "
        "$0.25$ is maths, {doc}`/a/b1.2` a link.\n```python\ny = 3.5\n```\n"
    )
    assert DECIMAL.findall(prose(markdown)) == ["84.4"]
