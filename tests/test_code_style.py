"""Code a reader can scan: the code cells of every chapter.

- (no code line is longer than 88 characters, so that nothing scrolls sideways on the
  website: ``ruff check`` reads the notebooks too, ``make lint``);
- no visible code cell is mostly plotting calls: figure code longer than a few lines
  lives in ``book_support.figures`` or is hidden on the page (tag ``hide-input``, the
  code a click away).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from book_files import NOTEBOOKS

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = NOTEBOOKS
HIDDEN = {"hide-input", "remove-input", "remove-cell"}
PLOTTING = re.compile(
    r"\b(?:plt|ax|axes|fig|ax_\w+)\b[.\[]|\.set_\w+\(|\.(?:bar|plot|imshow|"
    r"legend|scatter|text|annotate|add_patch)\(|subplots\("
)


def _code_cells(notebook: Path):
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell["cell_type"] == "code":
            yield (
                cell.get("id", "?"),
                set(cell.get("metadata", {}).get("tags", [])),
                "".join(cell["source"]),
            )


def _is_mostly_plotting(source: str) -> bool:
    # Count simple statements (not lines, so a call wrapped over three lines counts
    # once), imports excluded; a cell of six or more with at least 40 % plotting calls
    # is "mostly".
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    simple = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.stmt)
        and not isinstance(
            node,
            (
                ast.Import,
                ast.ImportFrom,
                ast.FunctionDef,
                ast.For,
                ast.While,
                ast.If,
                ast.With,
                ast.ClassDef,
                ast.Try,
            ),
        )
    ]
    plotting = sum(
        1 for node in simple if PLOTTING.search(ast.get_source_segment(source, node))
    )
    return len(simple) >= 6 and plotting >= 0.4 * len(simple)


@pytest.mark.parametrize("notebook", CHAPTERS, ids=[c.stem for c in CHAPTERS])
def test_no_visible_cell_is_mostly_plotting(notebook):
    heavy = [
        cid
        for cid, tags, source in _code_cells(notebook)
        if not tags & HIDDEN and _is_mostly_plotting(source)
    ]
    assert not heavy, (
        f"visible code cells that are mostly plotting: {heavy}; move the figure "
        "into book_support.figures or tag the cell hide-input"
    )


def test_the_checks_can_fail():
    plotting = "\n".join(
        [
            "fig, ax = plt.subplots()",
            "ax.plot(x, y)",
            "ax.set_xlabel('x')",
            "ax.set_ylabel('y')",
            "ax.legend()",
            "y = x + 1",
        ]
    )
    assert _is_mostly_plotting(plotting)
    assert not _is_mostly_plotting("\n".join(f"x{i} = {i}" for i in range(10)))
    assert len(CHAPTERS) >= 12
