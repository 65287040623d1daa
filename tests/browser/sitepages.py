"""Where the built site is and which of its files are pages (shared by the browser tests)."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SITE = Path(os.environ.get("SITE_DIR", REPO / "_build" / "html")).resolve()
SCREENSHOTS = Path(
    os.environ.get("SCREENSHOT_DIR", REPO / "_build" / "screenshots")
).resolve()
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
# Folders of the built site that hold assets, not pages.
ASSET_DIRS = {"_static", "_sources", "_images", "vendor", "_sphinx_design_static"}
LOCAL_HOSTS = {"127.0.0.1"}
# More checks to run on the same visit of each page (conftest's `visit`), so that a page
# is loaded once for all the browser tests: name -> function(playwright page) -> result,
# stored in the visit's record under that name. Registered by test modules when they are
# imported; they run after the screenshot and may change the page (click, type).
PAGE_CHECKS: dict = {}


def site_pages() -> list[str]:
    """Every HTML page of the built site, as a path relative to the site root."""
    if not (SITE / "index.html").is_file():
        return []
    pages = []
    for path in SITE.rglob("*.html"):
        rel = path.relative_to(SITE)
        if rel.parts[0] in ASSET_DIRS:
            continue
        pages.append(rel.as_posix())
    return sorted(pages)


def notebook_source(page: str) -> str | None:
    """``chapters/05_softmax.ipynb`` for ``chapters/05_softmax.html`` if that page is a notebook."""
    stem = page[: -len(".html")]
    if (SITE / "_sources" / f"{stem}.ipynb").is_file():
        return f"{stem}.ipynb"
    return None
