"""One notation across the book: the glossary's notation table is the rule.

The check reads the table in chapters/reference/glossary.md and every formula ($...$ and
$$...$$) in the markdown cells of every chapter, and asserts

- every Latin letter and Greek symbol used in a chapter's formulas is listed in the
  table (commands such as \\sqrt, \\top, \\mathbf and the words inside \\text{...} are
  not symbols);
- no retired symbol (second table) appears again, unless the same letter is listed with
  its one current meaning (then only a reader can tell the meanings apart, which the
  table records).

What it cannot check is *which* meaning a listed letter has in a given formula; the
table's meaning column and the chapters' prose are for readers and reviewers.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from book_files import CHAPTER_NOTEBOOKS, page

ROOT = Path(__file__).resolve().parent.parent
GLOSSARY = page("glossary").read_text(encoding="utf-8")
CHAPTERS = CHAPTER_NOTEBOOKS

MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.S)
GREEK = {
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "varepsilon",
    "zeta",
    "eta",
    "theta",
    "iota",
    "kappa",
    "lambda",
    "mu",
    "nu",
    "xi",
    "pi",
    "rho",
    "sigma",
    "tau",
    "upsilon",
    "phi",
    "varphi",
    "chi",
    "psi",
    "omega",
    "Gamma",
    "Delta",
    "Theta",
    "Lambda",
    "Xi",
    "Pi",
    "Sigma",
    "Phi",
    "Psi",
    "Omega",
    "ell",
    "odot",
}
WORD_ARGUMENTS = re.compile(r"\\(?:text|operatorname|mathrm|textrm|label)\{[^{}]*\}")
FONT_LETTER = re.compile(r"\\(mathcal|mathbb)\{([A-Za-z])\}")


def symbols(latex: str) -> set[str]:
    """The symbols of a formula: single letters, Greek letters, \\mathcal/\\mathbb
    letters."""
    found = {f"\\{font}{{{letter}}}" for font, letter in FONT_LETTER.findall(latex)}
    rest = FONT_LETTER.sub(" ", WORD_ARGUMENTS.sub(" ", latex))
    for command in re.findall(r"\\([A-Za-z]+)", rest):
        if command in GREEK:
            found.add("\\" + command)
    rest = re.sub(r"\\[A-Za-z]+", " ", rest)
    found |= set(re.findall(r"[A-Za-z]", rest))
    return found


def _formulas(text: str) -> list[str]:
    return [a or b for a, b in MATH.findall(text)]


def _table(heading: str) -> list[list[str]]:
    section = GLOSSARY.split(heading, 1)[1]
    rows = []
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set(cells[0]) <= {"-", " "} and cells[0] not in (
                "symbol",
                "retired",
            ):
                rows.append(cells)
        elif rows:
            break
    return rows


DECLARED = set().union(
    *(symbols(f) for row in _table("## Notation") for f in _formulas(row[0]))
)
RETIRED_ROWS = _table("Retired symbols")
RETIRED = [
    f.strip()
    for row in RETIRED_ROWS
    for f in _formulas(row[0])
    if not (len(f.strip()) == 1 and f.strip() in DECLARED)
]


def _chapter_formulas(notebook: Path) -> list[str]:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return [
        f
        for cell in nb["cells"]
        if cell["cell_type"] == "markdown"
        for f in _formulas("".join(cell["source"]))
    ]


def _pattern(retired: str) -> re.Pattern:
    # The retired symbol as a whole token: not part of a longer name or a command.
    return re.compile(
        r"(?<![\\A-Za-z])" + re.escape(retired) + r"(?![A-Za-z_{])"
        if len(retired) == 1
        else r"(?<![\\A-Za-z])" + re.escape(retired)
    )


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_every_symbol_is_in_the_notation_table(notebook):
    unknown = {}
    for formula in _chapter_formulas(notebook):
        for symbol in symbols(formula) - DECLARED:
            unknown.setdefault(symbol, formula.strip()[:60])
    assert not unknown, (
        "symbols missing from the glossary's notation table (first use): "
        + "; ".join(f"{s} in ${f}$" for s, f in sorted(unknown.items()))
    )


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_no_retired_symbol_returns(notebook):
    back = sorted(
        {
            r
            for formula in _chapter_formulas(notebook)
            for r in RETIRED
            if _pattern(r).search(formula)
        }
    )
    assert not back, (
        f"retired symbols used again: {back} (see the glossary's retired table)"
    )


def test_the_rule_is_read_and_can_fail():
    assert {"n", "d", "h", "\\tau", "\\alpha", "\\mathcal{L}"} <= DECLARED
    assert "T" not in DECLARED and "p" not in DECLARED
    assert {"T", "W_q", "w_v", "d_{\\text{model}}", "e_{ij}"} <= set(RETIRED)
    assert symbols(r"\operatorname{softmax}(QK^{\top}/\sqrt{d_k}) V") == {
        "Q",
        "K",
        "d",
        "k",
        "V",
    }
    assert _pattern("T").search("T = 8") and not _pattern("T").search(r"K^{\top}")
    assert _pattern("W_q").search("s W_q + h") and not _pattern("W_q").search("W_{q}x")
    assert _pattern("e_{ij}").search("e_{ij} = 1") and not _pattern("e_{ij}").search(
        "s_{ij}"
    )
