"""Benchmark: live code, what "Make this page live" loads and how soon the first output
and the first figure appear (part of `make bench-pages`).

The built site (``_build/html``, or ``SITE_DIR``) is served on 127.0.0.1 by a server
that counts the bytes it sends for each request, and Debian's Chromium (headless, every
request to another host blocked) opens each chapter of ``--page`` (default: one chapter
of each numbered part of the book) ``--runs`` times. Each run of a chapter starts a
fresh browser context (an empty profile) and makes five visits in it:

* ``cold``: the first visit (nothing kept). The reader presses "Make this page live",
  then "Run" on the first cell that prints (the cells above it run first) and on the
  first cell that draws a figure;
* ``warm``: the same chapter again in a new tab of the same profile (a second visit:
  what the browser kept of the first is not downloaded again), the button pressed as
  soon as the page's network is idle. Live code stays on in a browser where a page was
  made live, so Python has been starting since the page's scripts ran, about a second
  before that click (the ``start_*`` columns are negative): the shortest head start a
  reader gets;
* ``reread``: the same, but the reader presses the button after :data:`READ_SECONDS`
  of reading (Python started while they read);
* ``next``: the next chapter of the list in a new tab of the same profile, the button
  pressed at once (a reader going on);
* ``onward``: the chapter after that, in the same tab as ``next``, the button pressed
  after :data:`READ_SECONDS` of reading.

Per visit: bytes and files served (``cold``: after the click, the page itself not
counted; the others from the page's load, since Python starts before the click there),
seconds from the click until Python is ready, until the first output and until the
first figure (read in the page with ``performance.now()``: ``attnLive.times()``), where
the time until ready went (``start_*``: when each stage of the start began: worker,
runtime, packages, book files, shell), and the load average. Results: a table on
stdout and ``_build/live_timings.csv``. Not a test: nothing here asserts a time.

Usage:  python tests/benchmarks/bench_live.py [--runs 3] [--page chapters/X.html ...]
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

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_pages import _block_external  # noqa: E402
from sitepages import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    EXTERNAL_URL,
    MATRIX_PAGES,
    SITE,
    SiteHandler,
)

OUT = SITE.parent / "live_timings.csv"
_SENT = {"bytes": 0, "files": 0}
_LOCK = threading.Lock()


class _Counting(SiteHandler):
    """The browser tests' site server (quiet, text gzipped as a static host serves
    it), counting the bytes of every file it sends."""

    extensions_map = {
        **SiteHandler.extensions_map,
        ".mjs": "text/javascript",
        ".wasm": "application/wasm",
        ".json": "application/json",
    }

    def copyfile(self, source, outputfile):
        sent = 0
        while chunk := source.read(1 << 16):
            outputfile.write(chunk)
            sent += len(chunk)
        with _LOCK:
            _SENT["bytes"] += sent
            _SENT["files"] += 1


def _serve():
    handler = functools.partial(_Counting, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


_FIRST_CELLS_JS = """() => {
  const cells = attnLive.cells();
  return [cells.find(c => c.runnable && c.node && !c.quiz && c.editor
                          && /print\\(/.test(c.source)),
          cells.find(c => c.runnable && c.node && c.editor
                          && /plt\\.subplots|_figure\\(|fig\\b/.test(c.source))]
    .map(c => c ? c.position : null);
}"""


# the stages of the start (live-code.js: times["start_" + step]), in order
STAGES = ("runtime", "packages", "book", "kernel")
# how long the reader of an ``onward`` visit reads before pressing the button
READ_SECONDS = 10


def _visit(page, url: str, read_seconds: float = 0, from_load: bool = True) -> dict:
    if from_load:
        with _LOCK:
            before = dict(_SENT)
    page.goto(url, wait_until="load")
    if read_seconds:
        page.wait_for_timeout(read_seconds * 1000)
    else:
        page.wait_for_load_state("networkidle")
    if not from_load:
        with _LOCK:
            before = dict(_SENT)
    page.get_by_role("button", name="Make this page live").click()
    page.wait_for_function("() => attnLive.cells() !== null", timeout=60_000)
    printing, drawing = page.evaluate(_FIRST_CELLS_JS)
    page.evaluate("p => attnLive.run(p).then(() => true)", printing)
    if drawing is not None:
        page.evaluate("p => attnLive.run(p).then(() => true)", drawing)
    times = page.evaluate("() => attnLive.times()")
    with _LOCK:
        sent = {k: _SENT[k] - before[k] for k in _SENT}
    t = {k: (v - times["click"]) / 1000 for k, v in times.items() if k != "click"}
    nan = float("nan")
    return {
        "bytes": sent["bytes"],
        "files": sent["files"],
        **{f"start_{s}_s": t.get(f"start_{s}", nan) for s in STAGES},
        "ready_s": t["ready"],
        "first_output_s": t["output"],
        "first_figure_s": t.get("figure", nan),
        # started from the memory snapshot (boot.mjs)
        "snapshot": page.evaluate("() => attnLive.restored && attnLive.restored()"),
        "load": os.getloadavg()[0],
    }


def _line(row: dict) -> str:
    stages = ", ".join(f"{s} {row[f'start_{s}_s']:4.1f}" for s in STAGES)
    return (
        f"{row['bytes'] / 1e6:6.1f} MB in {row['files']:3d} files; started: "
        f"{stages}; ready {row['ready_s']:5.1f} s, first output "
        f"{row['first_output_s']:5.1f} s, first figure {row['first_figure_s']:5.1f} s "
        f"(load {row['load']:.1f}{', snapshot' if row['snapshot'] else ''})"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--page",
        action="append",
        help="a chapter's page (repeat for more; default: one chapter of each part; "
        "the next chapter of the last one is the first)",
    )
    args = parser.parse_args(argv)
    pages = args.page or list(MATRIX_PAGES)
    if not (SITE / "live" / "manifest.json").is_file():
        sys.exit(f"no live code in {SITE}: run `make book` first")
    from playwright.sync_api import sync_playwright

    server, url = _serve()
    rows = []
    print(f"live code, seconds after the click (uptime: {_uptime()})", flush=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        for run in range(args.runs):
            for i, chapter in enumerate(pages):
                following = pages[(i + 1) % len(pages)]
                after = pages[(i + 2) % len(pages)]
                context = browser.new_context(viewport={"width": 1280, "height": 900})
                context.route(EXTERNAL_URL, _block_external)
                visits = (
                    ("cold", chapter),
                    ("warm", chapter),
                    ("reread", chapter),
                    ("next", following),
                    ("onward", after),  # in the tab of "next"
                )
                page = None
                for kind, visited in visits:
                    if kind != "onward":
                        if page is not None:
                            page.close()
                        page = context.new_page()
                    read = READ_SECONDS if kind in ("reread", "onward") else 0
                    row = {
                        "run": run + 1,
                        "chapter": chapter,
                        "visit": kind,
                        "page": visited,
                        **_visit(page, url + visited, read, from_load=kind != "cold"),
                    }
                    rows.append(row)
                    name = Path(visited).stem
                    print(f"run {run + 1} {name:>18} {kind}: {_line(row)}", flush=True)
                page.close()
                context.close()
        browser.close()
    server.shutdown()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(f"\nmedian of {args.runs} runs (uptime now: {_uptime()}):")
    for chapter in pages:
        for kind in ("cold", "warm", "reread", "next", "onward"):
            mine = [r for r in rows if r["chapter"] == chapter and r["visit"] == kind]
            med = {
                k: statistics.median(r[k] for r in mine)
                for k in mine[0]
                if k not in ("run", "chapter", "visit", "page", "snapshot")
            }
            med["files"] = int(med["files"])
            med["snapshot"] = all(r["snapshot"] for r in mine)
            print(f"  {Path(mine[0]['page']).stem:>18} {kind}: {_line(med)}")
    print(f"written: {OUT}")
    return 0


def _uptime() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


if __name__ == "__main__":
    sys.exit(main())
