"""Expert read 4c of chapters/10b_transformer_layer.ipynb: its definite errors stay
fixed.

1. the route to the live layer explorer is one that works (Binder or one's own Jupyter,
   with the call that takes other sentences), not the page's live code, which cannot
   run the model;
2. (the layer-norm checker: tests/test_layer_checker_diagnoses.py);
3. the summary gives the attention weights their own shape (h, n, n);
4. xiong2020 has the DOI of its arXiv version, and the bibliography page's list of
   works without a DOI is true.
Also the GELU caption against the printed minimiser.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml
from pybtex.database import parse_file

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "chapters" / "10b_transformer_layer.ipynb"
sys.path.insert(0, str(ROOT / "_ext"))
from live_cells import chapter_cells  # noqa: E402


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _prose() -> str:
    text = "\n".join(
        "".join(c["source"]) for c in _cells() if c["cell_type"] == "markdown"
    )
    return " ".join(text.split())


def _outputs() -> str:
    return "\n".join(
        "".join(o.get("text", "")) for c in _cells() for o in c.get("outputs", [])
    )


# ---- 1. the route to the live explorer -----------------------------------------------


def test_the_live_explorer_route_names_what_works():
    prose = _prose()
    assert "switch on live code" not in prose
    assert "The live explorer in the cell after it" not in prose
    assert 'LayerExplorer(["your first sentence", "your second one"]).widget' in prose
    assert "open the chapter on Binder" in prose and "{doc}`running`" in prose
    assert "The page's own live code cannot do this" in prose


def test_the_page_really_cannot_run_the_explorer_and_binder_is_offered():
    cells = {c["index"]: c for c in chapter_cells(NOTEBOOK)}
    explorer = [i for i, c in cells.items() if "LayerExplorer()" in c["source"]]
    assert explorer, "the explorer cell was not found"
    assert all(not cells[i]["runnable"] for i in explorer)
    assert "MiniLM" in cells[explorer[0]]["reason"]
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"


def test_the_explorer_takes_the_reader_s_sentences():
    from attnlib.figures.explorers import LayerExplorer

    mine = ["A cat sat on the mat.", "Birds fly."]
    explorer = LayerExplorer(mine)
    assert list(explorer.sentence.options) == mine
    assert explorer.rows()[0][1] == "[CLS] | a | cat | sat | on | the | mat | . | [SEP]"


# ---- 3. the summary's shapes ---------------------------------------------------------


def test_summary_gives_the_weights_their_own_shape():
    prose = _prose()
    summary = prose[prose.index("## Summary") :]
    assert "$(h, n, n)$ for the attention weights" in summary
    assert "the heads $(h, n, d_k)$ and inside" not in summary
    assert "(12, 8, 8)" in "\n".join(
        "".join(o["data"].get("text/plain", ""))
        for c in _cells()
        for o in c.get("outputs", [])
        if "data" in o
    )


# ---- 4. the DOIs ---------------------------------------------------------------------


def test_xiong2020_has_the_doi_of_its_arxiv_version():
    fields = parse_file(str(ROOT / "references.bib")).entries["xiong2020"].fields
    assert fields["doi"] == "10.48550/arXiv.2002.04745"
    assert "no doi exists" not in fields["note"].lower()
    page = (ROOT / "chapters" / "bibliography.md").read_text(encoding="utf-8")
    page = " ".join(page.split())
    assert "Glorot and Bengio (2010) and Xiong et al. (2020)" not in page
    assert "Seven have none" in page


# ---- the GELU caption ----------------------------------------------------------------


def test_gelu_caption_matches_the_printed_minimum():
    match = re.search(r"GELU's smallest value: (-0\.\d+) at x = (-0\.\d+)", _outputs())
    assert match
    low, where = float(match.group(1)), float(match.group(2))
    caption = next(
        c["metadata"]["mystnb"]["figure"]["caption"]
        for c in _cells()
        if c["metadata"].get("mystnb", {}).get("figure", {}).get("name")
        == "fig-layer-gelu"
    )
    stated = re.search(r"minimum of about (-0\.\d+) near x = (-0\.\d+)", caption)
    assert stated
    assert round(low, 2) == float(stated.group(1))
    assert round(where, 2) == float(stated.group(2))
