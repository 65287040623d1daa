"""Benchmark: how soon each explorer page of the built website becomes interactive
(`make bench-pages`).

The built site (``_build/html``, or ``SITE_DIR``) is served on 127.0.0.1 by Python's
HTTP server, and Debian's Chromium (headless, every request to another host blocked)
opens each page that embeds a precomputed explorer ``--runs`` times, each time in a
fresh browser context (an empty cache: a reader's first visit). Per page it reports the
size (HTML plus images), and the best and the median over the runs of

* ``tti``: from the start of the navigation until the explorer's controls and first
  state are drawn (the budget of issue 16: 2 s);
* ``dcl``: until the page's own HTML was parsed (DOMContentLoaded);
* ``load``: until the window's load event ended (every image, script and font loaded);
* ``respond``: from a key press on the explorer's first control until the new state
  shows;
* ``tti_warm``: ``tti`` for a reader who comes from other chapters with explorers: in a
  fresh context, two other explorer pages are opened first (``--warm-runs`` times), so
  the shared scripts (MathJax, the widgets' script) are in the browser's cache and
  compiled code cache.

The load average of the machine is recorded before and after each page: timings taken on
a busy machine are not the page's. Results: a table on stdout and
``_build/page_timings.csv`` (one row per page, and one per run in
``_build/page_timings_runs.csv``).

Usage:  python tests/benchmarks/bench_pages.py [--runs 5]
            [--page chapters/04_scoring.html]
Not a test: pytest does not collect it, and nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import csv
import functools
import http.server
import os
import statistics
import sys
import threading
from pathlib import Path
from urllib.parse import urlparse

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from pagetiming import (  # noqa: E402
    PAGE_BUDGET_BYTES,
    TTI_BUDGET_S,
    explorer_pages,
    measure,
    page_bytes,
)
from sitepages import CHROMIUM, CHROMIUM_ARGS, LOCAL_HOSTS, SITE  # noqa: E402

OUT = SITE.parent / "page_timings.csv"
OUT_RUNS = SITE.parent / "page_timings_runs.csv"
KEYS = ("tti", "dcl", "load", "respond", "tti_warm")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".svg": "image/svg+xml",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
    }

    def log_message(self, format, *args):  # noqa: A002 - signature of the base class
        pass


def _serve():
    handler = functools.partial(_Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _block_external(route):
    if urlparse(route.request.url).hostname not in LOCAL_HOSTS | {None}:
        route.abort("blockedbyclient")
    else:
        route.continue_()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs", type=int, default=5, help="visits per page (default 5)"
    )
    parser.add_argument(
        "--warm-runs",
        type=int,
        default=3,
        help="visits per page after two other explorer pages (default 3)",
    )
    parser.add_argument(
        "--page",
        action="append",
        help="a page to time, e.g. chapters/04_scoring.html (default: every "
        "page with an explorer)",
    )
    args = parser.parse_args(argv)
    if not (SITE / "index.html").is_file():
        sys.exit(f"no built site at {SITE}: run `make book` first")
    all_pages = explorer_pages(SITE)
    pages = args.page or all_pages
    from playwright.sync_api import sync_playwright

    server, base = _serve()
    rows, runs = [], []
    print(
        f"{len(pages)} pages, {args.runs} runs each, {os.cpu_count()} cores; "
        f"seconds (best / median); budget {TTI_BUDGET_S} s to interactive, "
        f"{PAGE_BUDGET_BYTES / 1e6:.0f} MB per page"
    )
    print(
        f"{'page':34} {'MB':>5} {'interactive':>12} {'HTML parsed':>12} {'load':>12} "
        f"{'key -> state':>12} {'warm':>12}  load avg"
    )
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            for page_path in pages:
                load_before = os.getloadavg()[0]
                results = []
                for run in range(args.runs):
                    context, tab = _fresh_tab(browser)
                    result = measure(tab, base + page_path)
                    context.close()
                    results.append(result)
                    runs.append(
                        {
                            "page": page_path,
                            "run": run + 1,
                            "warm": False,
                            "load_average": f"{os.getloadavg()[0]:.2f}",
                            **{k: _s(result.get(k)) for k in KEYS},
                        }
                    )
                others = [p for p in all_pages if p != page_path][:2]
                for run in range(args.warm_runs):
                    context, tab = _fresh_tab(browser)
                    for other in others:
                        measure(tab, base + other, respond=False)
                    warm = measure(tab, base + page_path, respond=False)
                    context.close()
                    results.append({"tti_warm": warm["tti"]})
                    runs.append(
                        {
                            "page": page_path,
                            "run": run + 1,
                            "warm": True,
                            "load_average": f"{os.getloadavg()[0]:.2f}",
                            **{k: _s(warm.get(k)) for k in ("tti", "dcl", "load")},
                        }
                    )
                load_after = os.getloadavg()[0]
                size = page_bytes(SITE / page_path)
                row = {
                    "page": page_path,
                    "bytes": size,
                    "runs": args.runs,
                    "load_average_before": f"{load_before:.2f}",
                    "load_average_after": f"{load_after:.2f}",
                    "cores": os.cpu_count(),
                }
                for key in KEYS:
                    values = [r[key] for r in results if r.get(key) is not None]
                    row[f"{key}_best"] = _s(min(values)) if values else ""
                    row[f"{key}_median"] = (
                        _s(statistics.median(values)) if values else ""
                    )
                rows.append(row)
                cells = [f"{row[k + '_best']:>5}/{row[k + '_median']:>6}" for k in KEYS]
                print(
                    f"{page_path:34} {size / 1e6:5.2f} "
                    f"{' '.join(f'{c:>12}' for c in cells)}"
                    f"  {load_before:.1f} -> {load_after:.1f}",
                    flush=True,
                )
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    _write(OUT, rows)
    _write(OUT_RUNS, runs)
    over = [r["page"] for r in rows if float(r["tti_median"] or "inf") >= TTI_BUDGET_S]
    print(
        f"median time to interactive over {TTI_BUDGET_S} s, first visit: "
        f"{', '.join(over) or 'none'}"
    )
    over = [
        r["page"] for r in rows if float(r["tti_warm_median"] or "inf") >= TTI_BUDGET_S
    ]
    print(f"... coming from two other explorer pages: {', '.join(over) or 'none'}")
    print(f"written: {OUT}, {OUT_RUNS}")
    return 0


def _fresh_tab(browser):
    """A new context (empty cache, other hosts blocked) and a tab in it."""
    context = browser.new_context(
        viewport={"width": 1280, "height": 900}, service_workers="block"
    )
    context.route("**/*", _block_external)
    return context, context.new_page()


def _s(value) -> str:
    return "" if value is None else f"{value:.3f}"


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


if __name__ == "__main__":
    raise SystemExit(main())
