"""Sphinx extension: live code, every chapter's code cells editable and run in the page.

On each page made from a notebook it

* gives every code cell's HTML the class ``live-cell-N`` (N: the cell's index in the
  notebook), so the page's script finds the cell a source belongs to;
* writes ``live/cells/<page>.json``: the chapter's code cells in order (hidden ones
  too, since later cells use what they define), with the cells that cannot run in the
  page and why (``_ext/live_cells.py``); the page fetches it when the reader asks;
* loads ``live/live-code.js`` and ``live-code.css`` (a few KB; Python itself, about
  46 MB, loads only when the reader presses "Make this page live") and tells the
  script, in a ``<meta name="attn-live">``, the page, the size of what "Run" loads and,
  on a build without live code, why;
* replaces the theme's "Live Code" launch button (Thebe, which needs a network and a
  Binder server) by one that opens live code in the page; the Binder button stays,
  for readers who want a full Jupyter.

A page none of whose code cells can run in the page's Python (``offers_live_code``:
the chapter "The same in PyTorch", whose every cell needs torch) gets none of this:
no cells file, no script, no button; the chapter itself says how to run it.

The files under ``live/`` are made by ``make live`` (``_ext/live/build_live.py``) into
``_site_assets/live``, which ``html_extra_path`` copies to the site's root.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path

from live_cells import chapter_cells, offers_live_code
from sphinx.util import logging

LOGGER = logging.getLogger(__name__)
LIVE = Path(__file__).resolve().parents[1] / "_site_assets" / "live"
LIVE_JS, LIVE_CSS = "../live/live-code.js", "../live/live-code.css"
# What the page promises for the first output after "Make this page live" on a first
# visit: measured by `make bench-pages` (tests/benchmarks/bench_live.py) on this
# project's 2-core machine, files served from the same machine: 4.8-5.8 s (medians of
# 3, one chapter of each part, at load 1.4-2.2, 2026-12-07; 4.0-4.6 s on another
# machine of the project, 4.9-9.9 s at load 3-5). The margin is for slower computers
# and the download.
TYPICAL_FIRST_S = 10


def _manifest() -> dict | None:
    path = LIVE / "manifest.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def _is_notebook(app, pagename: str) -> bool:
    return bool(pagename in app.env.all_docs) and str(
        app.env.doc2path(pagename)
    ).endswith(".ipynb")


def _mark_cells(app, doctree, docname):
    if not _is_notebook(app, docname):
        return
    for node in doctree.findall():
        if getattr(node, "get", None) and node.get("nb_element") == "cell_code":
            node["classes"].append(f"live-cell-{node['cell_index']}")


def _report(app):
    manifest = _manifest()
    if manifest is None:
        LOGGER.info(
            "live code: _site_assets/live is missing (run `make live`): the "
            "pages are built without live code"
        )
    elif not manifest["available"]:
        LOGGER.info(f"live code: NOT IN THIS BUILD: {manifest['reason']}")


def _page(app, pagename, templatename, context, doctree):
    manifest = _manifest()
    if manifest is None or doctree is None or not _is_notebook(app, pagename):
        return
    cells = chapter_cells(
        Path(app.env.doc2path(pagename)), model_served=bool(manifest.get("model"))
    )
    if not offers_live_code(cells):
        _without_thebe(context)
        _launch_buttons(context, live=False)
        return
    folder = Path(app.outdir) / "live" / "cells" / Path(pagename).parent
    folder.mkdir(parents=True, exist_ok=True)
    (Path(app.outdir) / "live" / "cells" / f"{pagename}.json").write_text(
        json.dumps({"page": pagename, "cells": cells}), encoding="utf-8"
    )
    info = {
        "page": pagename,
        "available": manifest["available"],
        "reason": manifest.get("reason", ""),
        "megabytes": round(manifest.get("bytes", 0) / 1e6),
        "first_seconds": TYPICAL_FIRST_S,
        "python": manifest.get("python", ""),
        # the pretrained model's files, fetched only when Python first reads them
        "model_megabytes": round(
            sum(
                f["bytes"]
                for f in (manifest.get("model") or {}).get("files", {}).values()
            )
            / 1e6
        ),
    }
    context["metatags"] = context.get("metatags", "") + (
        f'<meta name="attn-live" content="{escape(json.dumps(info))}">\n'
    )
    # relative to _static/, as for the vendored scripts (see _config.yml); only on
    # this page (Sphinx restores its lists after each page)
    app.add_js_file(LIVE_JS, defer="defer")
    app.add_css_file(LIVE_CSS)
    _without_thebe(context)
    _launch_buttons(context, live=True)


def _launch_buttons(context, live: bool) -> None:
    """Leave out Thebe's launch button; with ``live``, add "Live code (in this
    page)"."""
    button = {
        "type": "javascript",
        "text": "Live code (in this page)",
        "tooltip": "Run and edit this page's code in your browser, offline",
        "javascript": "attnLive.open()",
        "icon": "fas fa-play",
        "label": "live-code",
    }
    for group in context.get("header_buttons", []):
        if group.get("label") != "launch-buttons":
            continue
        group["buttons"] = [
            b for b in group["buttons"] if b.get("label") != "launch-thebe"
        ] + ([button] if live else [])


def _without_thebe(context) -> None:
    """Leave out sphinx-thebe's script, style sheet and configuration, which Jupyter
    Book adds to every notebook page although Thebe is off (launch_buttons.thebe)."""

    def thebe(asset) -> bool:
        name = getattr(asset, "filename", "") or ""
        body = getattr(asset, "attributes", {}).get("body", "")
        return "sphinx-thebe" in name or "THEBE_JS_URL" in body

    # in place: the list is the builder's, to which later handlers of this event add
    # the page's own files (app.add_css_file, e.g. the widgets' style sheet)
    for key in ("script_files", "css_files"):
        if isinstance(context.get(key), list):
            context[key][:] = [a for a in context[key] if not thebe(a)]


def setup(app):
    app.connect("builder-inited", _report)
    app.connect("doctree-resolved", _mark_cells)
    # after sphinx-book-theme's launch buttons (priority 501)
    app.connect("html-page-context", _page, priority=502)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
