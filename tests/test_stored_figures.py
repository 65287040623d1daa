"""Every figure a chapter shows is stored as a picture: a cell whose output is a
matplotlib figure stores its PNG beside the text ``<Figure ...>``.

nbval compares text, not pictures, so a notebook executed without the inline backend
(with ``MPLBACKEND=Agg``, say) would pass nbval and show the reader the words
``<Figure size ...>`` instead of the figure."""

from __future__ import annotations

import json

import pytest
from book_files import NOTEBOOKS


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_figure_output_holds_its_png(notebook):
    missing = []
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            text = "".join(data.get("text/plain", ""))
            if text.startswith("<Figure") and "image/png" not in data:
                missing.append(cell.get("id"))
    assert not missing, (
        f"{notebook.stem}: figure outputs without their PNG in cells {missing}: "
        "re-execute the notebook with Jupyter's inline backend (unset MPLBACKEND)"
    )
