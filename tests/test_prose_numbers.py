"""Numbers in the chapters' prose come from the cells that compute them.

Every decimal number in a chapter's running text (outside code and mathematics) is
either glued from a cell (``{glue:text}`name```, see ``book_support.glue``) or listed in
``tests/facts/typed/<topic>.yml`` with the reason it is typed: a definition, a seed
fact of the source documents, or a value the text chooses (a setting, not a result). A
glued name must be stored by a cell of the same notebook.

The running text includes the text of directive blocks (```` ```{exercise} ````,
```` ````{solution} ````, ``:::{note}`` and other admonitions, however many backticks
or colons fence them): only their option lines (``:label:``, ``:class:``) are left out.
Code fences (```` ```python ````, a bare ```` ``` ````, ``{code-cell}``, ``{math}`` ...)
are left out wherever they are, also nested inside a directive, as are inline code,
mathematics and roles.
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


FENCE = re.compile(r"^[ \t]*(`{3,}|~{3,}|:{3,})[ \t]*(.*?)[ \t]*$")
OPTION = re.compile(r"^[ \t]*:[\w-]+:")
DIRECTIVE = re.compile(r"\{([\w:-]+)\}")
# Directives whose body is code or mathematics, not running text.
CODE_DIRECTIVES = {"code", "code-block", "code-cell", "sourcecode", "math", "raw"}


def _without_code_fences(markdown: str) -> str:
    """The lines of ``markdown`` outside code fences, with each directive block's body
    kept (its opening and closing lines and leading option lines dropped)."""
    kept: list[str] = []
    stack: list[tuple[str, bool]] = []  # open fences: (fence, holds code)
    in_options = False
    for line in markdown.split("\n"):
        fence = FENCE.match(line)
        top, top_is_code = stack[-1] if stack else ("", False)
        closes = (
            fence is not None
            and stack
            and not fence.group(2)
            and fence.group(1)[0] == top[0]
            and len(fence.group(1)) >= len(top)
        )
        if closes:
            stack.pop()
            in_options = False
        elif top_is_code:
            pass
        elif fence and (fence.group(1)[0] != ":" or fence.group(2)):
            marks, info = fence.groups()
            name = DIRECTIVE.match(info)
            if name:  # a directive: text unless it holds code or mathematics
                is_code = name.group(1) in CODE_DIRECTIVES
            else:  # ```python, a bare ```: code; a colon fence is never code
                is_code = marks[0] != ":"
            stack.append((marks, is_code))
            in_options = not is_code
            if not is_code:  # a directive's argument (a title) is text
                kept.append(info[name.end() :] if name else "")
        elif in_options and OPTION.match(line):
            pass
        else:
            in_options = False
            kept.append(line)
    return "\n".join(kept)


def prose(markdown: str) -> str:
    """The running text of a Markdown cell, directive blocks' text included: no code
    fences, options, mathematics, inline code, roles' targets or glued numbers."""
    text = _without_code_fences(markdown)
    # display maths, then inline maths (which may run on over a line, not a paragraph)
    text = re.sub(r"\$\$.*?\$\$|\$(?:[^$\n]|\n(?![ \t]*\n))*\$", " ", text, flags=re.S)
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


def test_the_check_reads_directive_text_but_not_options_or_nested_code():
    markdown = (
        "```{exercise}\n:label: ex-a-1.5\n**Core.** Use a learning rate of 0.1 and "
        "$x =\n0.2$ maths over a line.\n```\n\n"
        "````{solution} ex-a-1.5\n:class: dropdown\nThe loss is 0.05 at `2.5`.\n\n"
        "```python\nlr = 0.3\n```\n\n```\n0.4 in a bare fence\n```\n"
        "Its weight is {glue:text}`w`.\n````\n\n"
        ":::{note} A title with 1.25\n:class: tip\nA note keeps 7.5.\n:::\n"
        "```{code-cell} python\nx = 8.5\n```\n"
    )
    assert DECIMAL.findall(prose(markdown)) == ["0.1", "0.05", "1.25", "7.5"]
