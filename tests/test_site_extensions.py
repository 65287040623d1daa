"""The website's Sphinx extensions (_ext/reader_path.py, _ext/page_weight.py), their
pure parts: chapter labels, the course's time, which widget models a page needs, which
icons it shows. The built pages are checked in tests/browser/test_pages_static.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "_ext"))

import page_weight  # noqa: E402
import reader_path  # noqa: E402


def test_chapter_labels_and_times():
    assert (
        reader_path.chapter_label("chapters/how_attention_works/softmax/softmax")
        == "chapter-softmax"
    )
    nbsp = "\u00a0"
    assert reader_path.hours_and_minutes(550) == f"about 9{nbsp}h 10{nbsp}min"
    assert reader_path.hours_and_minutes(65) == f"about 1{nbsp}h 05{nbsp}min"
    assert reader_path.hours_and_minutes(40) == f"about 40{nbsp}min"


def test_announced_minutes(tmp_path):
    nb = tmp_path / "x.ipynb"
    nb.write_text(
        json.dumps(
            {
                "cells": [
                    {"cell_type": "code", "source": ["**Time:** about 99 minutes"]},
                    {
                        "cell_type": "markdown",
                        "source": ["# T\n", "**Time:** about 35 minutes, e"],
                    },
                ]
            }
        )
    )
    assert reader_path._announced_minutes(nb) == 35
    md = tmp_path / "y.md"
    md.write_text("# Y\n\nno time here\n")
    assert reader_path._announced_minutes(md) is None
    assert reader_path._announced_minutes(tmp_path / "missing.md") is None


def _model(name, state):
    return {
        "model_name": name,
        "model_module": "@jupyter-widgets/controls",
        "state": state,
    }


def _link(source, target):
    """A jslink between two models: it has no view; it names both ends."""
    return _model("LinkModel", {"_view_name": None, "source": source, "target": target})


def test_used_models_follow_the_views_and_keep_their_links():
    state = {
        "box": _model(
            "VBoxModel",
            {
                "_view_name": "VBoxView",
                "children": ["IPY_MODEL_slider", "IPY_MODEL_stack"],
                "layout": "IPY_MODEL_layout",
            },
        ),
        "slider": _model(
            "SelectionSliderModel",
            {"_view_name": "SelectionSliderView", "style": "IPY_MODEL_style"},
        ),
        "stack": _model(
            "StackModel", {"_view_name": "StackView", "children": ["IPY_MODEL_leaf"]}
        ),
        "leaf": _model("HTMLModel", {"_view_name": "HTMLView"}),
        "layout": _model("LayoutModel", {"_view_name": "LayoutView"}),
        "style": _model("SliderStyleModel", {"_view_name": "StyleView"}),
        "link": _link(
            ["IPY_MODEL_slider", "index"], ["IPY_MODEL_stack", "selected_index"]
        ),
        # a live explorer: its own box, image and a slider, shown by no view of the page
        "live": _model(
            "VBoxModel",
            {
                "_view_name": "VBoxView",
                "children": ["IPY_MODEL_image", "IPY_MODEL_layout"],
            },
        ),
        "image": _model("ImageModel", {"_view_name": "ImageView"}),
        "orphan-link": _link(["IPY_MODEL_image", "value"], ["IPY_MODEL_live", "x"]),
    }
    kept = page_weight.used_models(state, ["box"])
    assert kept == {"box", "slider", "stack", "leaf", "layout", "style", "link"}
    assert page_weight.used_models(state, []) == set()


def test_icon_code_points(tmp_path):
    styles = tmp_path / "_static" / "styles"
    styles.mkdir(parents=True)
    (styles / "theme.css").write_text(
        '.fa-rocket:before{content:"\\f135"}.fa-a:before,.fa-b:before{content:"\\f001"}'
        '.fa-unused:before{content:"\\f002"}.x:after{content:"\uf107"}'
        '.fa-text:before{content:"\\@"}'
    )
    (tmp_path / "page.html").write_text(
        '<i class="fa-solid fa-rocket"></i><i class="fa-b">'
    )
    (tmp_path / "_static" / "theme.js").write_text(
        'icon.classList = "fa-solid fa-xmark"'
    )
    assert page_weight.icon_codepoints(tmp_path) == {0xF135, 0xF001, 0xF107}


def test_the_layer_explorer_cannot_run_live_and_binder_is_offered():
    """Expert read 4c: the page's live code cannot run the MiniLM explorer (the reader
    is sent to Binder or their own Jupyter), and the book has a Binder to send them
    to."""
    import yaml
    from book_files import notebook
    from live_cells import chapter_cells

    served = chapter_cells(notebook("transformer_layer"))
    assert all(c["runnable"] for c in served if "LayerExplorer(" in c["source"])
    cells = chapter_cells(notebook("transformer_layer"), model_served=False)
    explorer = [c for c in cells if "LayerExplorer(" in c["source"]]
    assert explorer, "the explorer cell was not found"
    assert all(not c["runnable"] for c in explorer)
    assert "MiniLM" in explorer[0]["reason"]
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    assert config["launch_buttons"]["binderhub_url"] == "https://mybinder.org"


# ---- pages that need PyTorch (issue 39): no live code offered -----------------------


def test_the_pytorch_chapter_offers_no_live_code_and_every_other_page_does():
    """Every cell of "The same in PyTorch" needs torch, which the page's Python lacks:
    each is marked with that reason, so the page offers no "Make this page live";
    every other notebook page keeps it."""
    from book_files import NOTEBOOKS, notebook
    from live_cells import chapter_cells, offers_live_code

    cells = chapter_cells(notebook("same_in_pytorch"))
    assert cells and not any(c["runnable"] for c in cells)
    assert "PyTorch" in cells[0]["reason"] and "Pyodide" in cells[0]["reason"]
    assert "import torch" not in cells[0]["prelude"]  # the page never runs it
    assert not offers_live_code(cells)
    others = [p for p in NOTEBOOKS if p.stem != "same_in_pytorch"]
    assert others and all(offers_live_code(chapter_cells(p)) for p in others)


def test_no_page_that_runs_without_torch_imports_it(tmp_path):
    """The modules of the book that import torch (found by reading their imports) are
    imported only by cells marked as unable to run in the page; the converters of
    book_support.torch_reference import without torch."""
    import subprocess

    from book_files import NOTEBOOKS
    from live_cells import chapter_cells, torch_modules

    assert torch_modules() == {"book_support.torch_blocks"}
    for path in NOTEBOOKS:
        for cell in chapter_cells(path):
            code = cell["source"] if cell["runnable"] else cell["prelude"]
            for name in ("torch", "torch_blocks"):
                assert f"import {name}" not in code, (path.stem, cell["index"])
    blocked = "import sys; sys.modules['torch'] = None; "  # import torch fails
    run = subprocess.run(
        [sys.executable, "-c", blocked + "import book_support.torch_reference"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": f"{REPO}:{REPO / 'chapters'}", "PATH": ""},
    )
    assert run.returncode == 0, run.stderr


def test_a_page_without_live_code_gets_no_script_no_cells_and_no_button(
    tmp_path, monkeypatch
):
    """The extension's page hook, with a build that has live code: the PyTorch page
    gets no ``attn-live`` meta, no script, no cells file and no live-code button (and
    loses Thebe's, as every page); the softmax chapter gets all of them."""
    import types

    import live_code
    from book_files import ROOT, notebook

    monkeypatch.setattr(live_code, "_manifest", lambda: {"available": True})
    pages = {
        str(p.relative_to(ROOT).with_suffix("")): p
        for p in (notebook("same_in_pytorch"), notebook("softmax"))
    }
    scripts = []
    app = types.SimpleNamespace(
        env=types.SimpleNamespace(all_docs=pages, doc2path=pages.__getitem__),
        outdir=str(tmp_path),
        add_js_file=lambda name, **kw: scripts.append(name),
        add_css_file=lambda name, **kw: scripts.append(name),
    )
    seen = {}
    for page in pages:
        buttons = [{"label": "launch-binder"}, {"label": "launch-thebe"}]
        context = {"header_buttons": [{"label": "launch-buttons", "buttons": buttons}]}
        before = len(scripts)
        live_code._page(app, page, "page.html", context, doctree=object())
        labels = [b["label"] for b in context["header_buttons"][0]["buttons"]]
        cells_file = tmp_path / "live" / "cells" / f"{page}.json"
        seen[pages[page].stem] = (
            labels,
            "attn-live" in context.get("metatags", ""),
            len(scripts) > before,
            cells_file.is_file(),
        )
    assert seen["same_in_pytorch"] == (["launch-binder"], False, False, False)
    assert seen["softmax"] == (["launch-binder", "live-code"], True, True, True)
