"""Issue 15: no exercise cell of a chapter is pre-answered, and every folded solution
   passes.

Exercise cells carry the tag ``exercise`` and the metadata ``exercise_solutions``, the
labels of the ``{solution}`` blocks whose ```` ```python ```` code replaces the cell.
For each chapter the test runs the chapter's first code cell (its imports), then, in
order, every exercise cell as stored (it must print "Not answered yet" and nothing
"Correct"), followed by its solution code (every checker call in it must print
"Correct").
"""

from __future__ import annotations

import contextlib
import io
import re

import nbformat
import pytest
from book_files import CHAPTER_NOTEBOOKS, NOTEBOOKS

# a cell with two checkers gives each result its own name: passed_scaled, passed_std
CHECK_CALL = re.compile(r"^(ok|passed)(_\w+)? = ", re.M)


def _solutions(nb) -> dict:
    found = {}
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for m in re.finditer(
            r"(`{3,4})\{solution\} (\S+)\n(.*?)\n\1(?=\n|$)", cell.source, re.S
        ):
            code = re.findall(r"```python\n(.*?)\n```", m.group(3), re.S)
            if code:
                found[m.group(2)] = "\n".join(code)
    return found


def _run(source: str, namespace: dict) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(source, "<cell>", "exec"), namespace)
    return out.getvalue()


def _exercise_cells(nb):
    return [
        c
        for c in nb.cells
        if c.cell_type == "code" and "exercise" in c.metadata.get("tags", [])
    ]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exercises_start_unanswered_and_solutions_pass(path, monkeypatch):
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.chdir(path.parent)
    nb = nbformat.read(path, as_version=4)
    cells = _exercise_cells(nb)
    if not cells:
        pytest.skip(f"{path.name} has no exercise cells")
    solutions = _solutions(nb)
    namespace: dict = {}
    setup = next(c for c in nb.cells if c.cell_type == "code")
    _run(setup.source, namespace)
    for cell in cells:
        calls = len(CHECK_CALL.findall(cell.source))
        assert calls >= 1, f"{cell.id}: no checker call"
        stored = _run(cell.source, namespace)
        assert stored.count("Not answered yet") == calls, (cell.id, stored)
        assert "Correct" not in stored, (cell.id, stored)
        labels = cell.metadata["exercise_solutions"]
        code = "\n".join(solutions[label] for label in labels)
        solved = _run(code, namespace)
        assert len(CHECK_CALL.findall(code)) == calls, (cell.id, code)
        verdicts = [
            line for line in solved.splitlines() if line.startswith(("Correct", "Not"))
        ]
        assert len(verdicts) >= calls and all(
            v.startswith("Correct") for v in verdicts
        ), (cell.id, solved)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_stored_outputs_of_exercise_cells_are_unanswered(path):
    """What the website shows: every exercise cell's stored output says "Not answered
    yet"."""
    nb = nbformat.read(path, as_version=4)
    for cell in _exercise_cells(nb):
        text = "".join(
            o.get("text", "") for o in cell.outputs if o.output_type == "stream"
        )
        assert "Not answered yet" in text and "Correct" not in text, (
            path.name,
            cell.id,
            text,
        )


#: chapters whose practice is the self-check questions alone: the interventions chapter
#: runs experiments on the pretrained model that a reader reruns rather than writes
WITHOUT_EXERCISES = {"interventions"}


def test_every_numbered_chapter_has_exercise_cells():
    assert len(CHAPTER_NOTEBOOKS) >= 20
    for path in CHAPTER_NOTEBOOKS:
        if path.stem in WITHOUT_EXERCISES:
            continue
        assert _exercise_cells(nbformat.read(path, as_version=4)), path.name
