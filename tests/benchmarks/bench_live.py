"""Benchmark: live code, what "Make this page live" loads and how soon the first output
and the first figure appear (part of `make bench-pages`).

The built site (``_build/html``, or ``SITE_DIR``) is served on 127.0.0.1 by a server
that counts the bytes it sends for each request, and Debian's Chromium (headless, every
request to another host blocked) opens a chapter ``--runs`` times, each in a fresh
browser context:

* ``cold``: the first visit (empty cache). The reader presses "Make this page live",
  then "Run" on the first cell that prints (the cells above it run first) and on the
  first cell that draws a figure;
* ``warm``: the same page again in the same context (the browser's cache holds the
  files; the server then sends only what the browser asks to revalidate).

Per visit: bytes served by the server after the click (the page itself is not
counted), seconds from the click until Python is ready, until the first output and
until the first figure (read in the page with ``performance.now()``:
``attnLive.times()``), and the load average. Results: a table on stdout and
``_build/live_timings.csv``. Not a test: nothing here asserts a time.

Usage:  python tests/benchmarks/bench_live.py [--runs 3] [--page chapters/X.html]
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
from sitepages import CHROMIUM, CHROMIUM_ARGS, SITE, SiteHandler  # noqa: E402

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


def _visit(page, url: str) -> dict:
    page.goto(url, wait_until="load")
    page.wait_for_load_state("networkidle")
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
    return {
        "bytes": sent["bytes"],
        "files": sent["files"],
        "ready_s": t["ready"],
        "first_output_s": t["output"],
        "first_figure_s": t.get("figure", float("nan")),
        "load": os.getloadavg()[0],
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--page", default="chapters/how_attention_works/softmax/softmax.html"
    )
    args = parser.parse_args(argv)
    if not (SITE / "live" / "manifest.json").is_file():
        sys.exit(f"no live code in {SITE}: run `make book` first")
    from playwright.sync_api import sync_playwright

    server, url = _serve()
    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        for run in range(args.runs):
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            context.route("**/*", _block_external)
            for kind in ("cold", "warm"):
                page = context.new_page()
                row = {"run": run + 1, "visit": kind, **_visit(page, url + args.page)}
                page.close()
                rows.append(row)
                print(
                    f"run {run + 1} {kind}: {row['bytes'] / 1e6:6.1f} MB in "
                    f"{row['files']:3d} files, ready {row['ready_s']:5.1f} s, first "
                    f"output {row['first_output_s']:5.1f} s, first figure "
                    f"{row['first_figure_s']:5.1f} s (load {row['load']:.1f})",
                    flush=True,
                )
            context.close()
        browser.close()
    server.shutdown()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    print(
        f"\nlive code on {args.page}, median of {args.runs} runs "
        "(seconds after the click):"
    )
    for kind in ("cold", "warm"):
        mine = [r for r in rows if r["visit"] == kind]
        med = {
            k: statistics.median(r[k] for r in mine)
            for k in mine[0]
            if k not in ("run", "visit")
        }
        print(
            f"  {kind}: {med['bytes'] / 1e6:.1f} MB served, "
            f"ready {med['ready_s']:.1f} s, "
            f"first output {med['first_output_s']:.1f} s, first figure "
            f"{med['first_figure_s']:.1f} s"
        )
    print(f"written: {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
