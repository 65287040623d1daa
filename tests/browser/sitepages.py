"""Where the built site is, which of its files are pages, how the browser tests see it
(shared by the browser tests and ``tests/benchmarks/bench_pages.py``)."""

from __future__ import annotations

import functools
import gzip
import http.server
import io
import os
import re
import sys
import threading
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
# Any request to a host not in LOCAL_HOSTS, for a browser context's ``route``. The
# pattern is matched inside Playwright's driver, so only these requests are
# intercepted; routing "**/*" sent every request of the site through Python and back,
# about 0.3 s of processor time per page.
_LOCAL = "|".join(re.escape(host) for host in sorted(LOCAL_HOSTS))
EXTERNAL_URL = re.compile(rf"^(?!https?://(?:{_LOCAL})[:/])(https?|wss?)://")

# How a reader meets the site: a phone held upright (390 x 844, touch) and a desktop
# window (1280 x 900), each in light and dark mode (the theme follows the system's
# colour scheme). A page is visited at most once in each profile (conftest's `visit`);
# in which profiles depends on the tier (BROWSER_MATRIX, below).
PROFILES = {
    "desktop-light": {
        "viewport": {"width": 1280, "height": 900},
        "color_scheme": "light",
    },
    "phone-light": {
        "viewport": {"width": 390, "height": 844},
        "color_scheme": "light",
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
    "phone-dark": {
        "viewport": {"width": 390, "height": 844},
        "color_scheme": "dark",
        "is_mobile": True,
        "has_touch": True,
        "device_scale_factor": 2,
    },
    "desktop-dark": {
        "viewport": {"width": 1280, "height": 900},
        "color_scheme": "dark",
    },
}
DEFAULT_PROFILE = "desktop-light"

# Where the browser checks run (issue 37). Colours depend on the colour scheme, not on
# the width; layout (drawer, column widths, slider tracks, the Tab path) on the width,
# not on the scheme. So in `make test` (BROWSER_MATRIX unset or "tiered"):
#
# * "colour" checks run on every page in light and dark mode on the desktop (dark mode
#   by switching the colour scheme on the page loaded in light mode);
# * "layout" checks run on every page on the phone and on the desktop in light mode;
# * every check runs in all four profiles on MATRIX_PAGES, one chapter of each
#   numbered part of the book (tests/browser/test_reader.py checks that);
#
# * "shared" checks, of a script every page shares (the self-check answers kept across
#   a reload), run on MATRIX_PAGES only;
#
# with BROWSER_MATRIX=full (`make test-all`, nightly) every page in all four profiles.
# Checks of no kind run in every profile they are registered for.
BROWSER_MATRIX = os.environ.get("BROWSER_MATRIX", "tiered")
if BROWSER_MATRIX not in ("tiered", "full"):
    raise ValueError(f"BROWSER_MATRIX={BROWSER_MATRIX!r}: 'tiered' or 'full'")
FULL_MATRIX = BROWSER_MATRIX == "full"
MATRIX_PAGES = (
    "chapters/why_attention/word_in_context/word_in_context.html",
    "chapters/how_attention_works/softmax/softmax.html",
    "chapters/attention_in_practice/transformer_layer/transformer_layer.html",
    "chapters/attention_that_writes/language_model/language_model.html",
    "chapters/reading_attention/interpretability/interpretability.html",
)
KIND_PROFILES = {
    # dark mode is measured on the light-mode visit too, by switching the colour scheme
    # of the open page (tests/browser/test_reader.py, "contrast_dark"); a dark-mode
    # load is compared with it on MATRIX_PAGES
    "colour": ("desktop-light",),
    "layout": ("desktop-light", "phone-light"),
}


def runs_in(kind: str | None, page: str, profile: str) -> bool:
    """Whether a check of ``kind`` ("colour", "layout", "shared" or None) runs on
    ``page`` in ``profile`` in this tier."""
    if kind is None or FULL_MATRIX or page in MATRIX_PAGES:
        return True
    return kind != "shared" and profile in KIND_PROFILES[kind]


def page_profiles(pages, kind: str) -> list[tuple[str, str]]:
    """(page, profile) for every page and every profile a check of ``kind`` runs in."""
    return [(p, prof) for p in pages for prof in PROFILES if runs_in(kind, p, prof)]


# More checks to run on the visit of each page in a profile, so that a page is loaded
# once per profile for all the browser tests: PAGE_CHECKS[profile][name] = (order,
# function(playwright page, page path) -> result, kind), stored in the visit's record
# under that name, run in increasing order, where ``runs_in(kind, ...)`` says so.
# Registered by test modules when they are imported (register_check); they run after
# the screenshot and may change the page (click, type, reload).
PAGE_CHECKS: dict[str, dict] = {name: {} for name in PROFILES}


def register_check(
    name: str, function, *, profiles=(DEFAULT_PROFILE,), order=50, kind=None
):
    """Run ``function(page, page_path)`` on the visit of every page in ``profiles``
    (of those, only where :func:`runs_in` says for a check of ``kind``); its result is
    stored in the visit's record as ``name``."""
    for profile in profiles:
        PAGE_CHECKS[profile][name] = (order, function, kind)


#: how sphinx-reredirects' stub at an old page address begins (tests/browser/
#: test_redirects.py opens those; they are not pages)
REDIRECT_STUB = '<html><head><noscript><meta http-equiv="refresh"'


def site_pages() -> list[str]:
    """Every HTML page of the built site, as a path relative to the site root (not the
    redirects from old addresses)."""
    if not (SITE / "index.html").is_file():
        return []
    pages = []
    for path in SITE.rglob("*.html"):
        rel = path.relative_to(SITE)
        if rel.parts[0] in ASSET_DIRS:
            continue
        if path.read_text(encoding="utf-8", errors="replace").startswith(REDIRECT_STUB):
            continue
        pages.append(rel.as_posix())
    return sorted(pages)


def notebook_source(page: str) -> str | None:
    """``chapters/<part>/<topic>/<topic>.ipynb`` for the page
    ``chapters/<part>/<topic>/<topic>.html`` if that page is a notebook."""
    stem = page[: -len(".html")]
    if (SITE / "_sources" / f"{stem}.ipynb").is_file():
        return f"{stem}.ipynb"
    return None


def explorer_pages() -> list[str]:
    """Every page of the built site that embeds a precomputed explorer."""
    return [
        p
        for p in site_pages()
        if p.startswith("chapters/")
        and "explorer-state" in (SITE / p).read_text("utf-8")
    ]


# ------------------------------------------------------------------ serving the site
COMPRESSED = (".html", ".js", ".css", ".json", ".svg", ".txt", ".map", ".ttf", ".eot")


class SiteHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the built site as a static web host does: text files gzip-compressed when
    the browser accepts it (as GitHub Pages serves them), fonts and images as they
    are."""

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".svg": "image/svg+xml",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
        ".ttf": "font/ttf",
        ".eot": "application/vnd.ms-fontobject",
    }

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        gzip_ok = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (gzip_ok and path.suffix in COMPRESSED and path.is_file()):
            return super().send_head()
        body = _gzipped(str(path), path.stat().st_mtime_ns)
        self.send_response(200)
        self.send_header("Content-Type", self.guess_type(str(path)))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "max-age=600")
        self.end_headers()
        return io.BytesIO(body)


@functools.lru_cache(maxsize=512)
def _gzipped(path: str, mtime_ns: int) -> bytes:
    return gzip.compress(Path(path).read_bytes(), compresslevel=6, mtime=0)


class SiteServer(http.server.ThreadingHTTPServer):
    """A threaded server that does not print a traceback when the browser closes a
    connection before a response is sent (a tab closed while a page still loads)."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], ConnectionError):  # reset, broken pipe
            return
        super().handle_error(request, client_address)


def serve_site():
    """The built site on 127.0.0.1 at a free port: (server, base URL). Stop it with
    ``server.shutdown(); server.server_close()``."""
    handler = functools.partial(SiteHandler, directory=str(SITE))
    server = SiteServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


#: Turns live code's "stays on" flag (live-code.js, localStorage) off before a page's
#: own scripts run: for a browser profile whose every page should start as a first
#: visit does, with nothing of live code loaded before the click.
LIVE_OFF_JS = "try { localStorage.removeItem('attn-live-on'); } catch (e) {}"
