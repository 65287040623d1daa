"""Benchmark: what every page of the built website weighs and how soon it is usable on a
slow phone (`make bench-pages`).

The built site (``_build/html``, or ``SITE_DIR``) is served on 127.0.0.1 as a static
host serves it (text gzip-compressed, ``tests/browser/sitepages.py``), and Debian's
Chromium (headless, every request to another host blocked) opens each page ``--runs``
times, each time in a fresh browser context (an empty cache: a reader's first visit),
under the throttled profile of issue 27: the CPU 4 times slower, 1.6 Mbit/s down,
0.75 Mbit/s up and 150 ms round trip (Chrome DevTools' network and CPU emulation). Per
page it reports

* ``kB``: the bytes transferred, as the network sees them (compressed, headers
  included), everything the page loads until it is interactive and the network is idle;
* ``interactive``: seconds from the start of the navigation until the page can be used:
  its HTML parsed, the theme's script run (the buttons work), every explorer drawn with
  its controls, and every set of self-check questions drawn and ready (``quiz.js`` has
  run); the median over the runs;
* ``blocked``: the main thread's blocking time until then (the time beyond 50 ms of
  every long task, as Lighthouse counts it), median;
* ``load``: when the window's load event ended, median.

The targets of issue 27 are printed with the table (at most 1 MB transferred per chapter
page, interactive within 8 s); they are reported, never asserted: a time depends on the
machine and its load, which is recorded before and after each page. Results: a table on
stdout and ``_build/page_timings.csv`` (one row per page).

Usage:  python tests/benchmarks/bench_pages.py [--runs 3] [--page
chapters/how_attention_works/scoring/scoring.html] Not a test: pytest does not collect
it, and nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "browser"))

from sitepages import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    EXTERNAL_URL,
    SITE,
    serve_site,
    site_pages,
)

OUT = SITE.parent / "page_timings.csv"
TARGET_BYTES = 1_000_000
TARGET_TTI_S = 8.0
THROTTLE = {
    "offline": False,
    "latency": 150,
    "downloadThroughput": 1.6e6 / 8,
    "uploadThroughput": 0.75e6 / 8,
}
CPU_SLOWDOWN = 4

# Run in the page before its own scripts: record long tasks and, every frame from the
# moment the HTML is parsed, whether the page is usable; `window.__interactiveAt` is
# then the time it first was (performance.now(), ms).
_WATCH_JS = """(() => {
  window.__blocked = 0;
  try {
    new PerformanceObserver(list => list.getEntries().forEach(task => {
      if (window.__interactiveAt === undefined) window.__blocked += task.duration - 50;
    })).observe({type: "longtask", buffered: true});
  } catch (e) {}
  const ready = () => {
    // the theme's script has run
    if (!document.documentElement.dataset.mode) return false;
    const views = document.querySelectorAll(
      'script[type="application/vnd.jupyter.widget-view+json"]');
    for (const view of views)
      if (!view.parentElement.querySelector(".jupyter-widgets")) return false;
    if (document.querySelector(".explorer-state")) {
      const state = Array.from(document.querySelectorAll(".explorer-state"))
        .find(el => el.getClientRects().length > 0);
      if (!state || !state.closest(".explorer")) return false;
    }
    for (const quiz of document.querySelectorAll('[id^="attnquiz_"]'))
      if (!quiz.querySelector(".QuizScore")) return false;
    return true;
  };
  const poll = () => {
    if (ready()) { window.__interactiveAt = performance.now(); return; }
    requestAnimationFrame(poll);
  };
  document.addEventListener("DOMContentLoaded", poll);
})();"""


def _block_external(route):
    """Routed for sitepages.EXTERNAL_URL only: every request to another host."""
    route.abort("blockedbyclient")


def measure(browser, url: str, timeout_ms: int = 120_000) -> dict:
    """One throttled first visit of ``url``: bytes transferred and times (seconds)."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844},
        is_mobile=True,
        has_touch=True,
        device_scale_factor=2,
        service_workers="block",
    )
    context.route(EXTERNAL_URL, _block_external)
    page = context.new_page()
    page.add_init_script(_WATCH_JS)
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    cdp.send("Network.emulateNetworkConditions", THROTTLE)
    cdp.send("Emulation.setCPUThrottlingRate", {"rate": CPU_SLOWDOWN})
    transferred = {}
    cdp.on(
        "Network.loadingFinished",
        lambda e: transferred.__setitem__(e["requestId"], e["encodedDataLength"]),
    )
    try:
        page.goto(url, wait_until="commit", timeout=timeout_ms)
        page.wait_for_function(
            "() => window.__interactiveAt !== undefined", timeout=timeout_ms
        )
        page.wait_for_load_state("load", timeout=timeout_ms)
        page.wait_for_load_state("networkidle", timeout=timeout_ms)
        result = page.evaluate(
            """() => ({tti: window.__interactiveAt / 1000,
                       blocked: window.__blocked / 1000,
                       load: performance.getEntriesByType('navigation')[0].loadEventEnd
                             / 1000})"""
        )
        result["bytes"] = sum(transferred.values())
    finally:
        context.close()
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--runs", type=int, default=3, help="visits per page (default 3)"
    )
    parser.add_argument(
        "--page",
        action="append",
        help=(
            "a page to time, e.g. chapters/how_attention_works/scoring/scoring.html "
            "(default: every page)"
        ),
    )
    args = parser.parse_args(argv)
    if not (SITE / "index.html").is_file():
        sys.exit(f"no built site at {SITE}: run `make book` first")
    pages = args.page or site_pages()
    from playwright.sync_api import sync_playwright

    server, base = serve_site()
    rows = []
    print(
        f"{len(pages)} pages, {args.runs} first visits each on a throttled phone "
        f"(CPU x{CPU_SLOWDOWN}, 1.6 Mbit/s, 150 ms), {os.cpu_count()} cores; targets: "
        f"{TARGET_BYTES / 1e6:.0f} MB per chapter page, interactive within "
        f"{TARGET_TTI_S:.0f} s (reported, not asserted)"
    )
    print(
        f"{'page':40} {'kB':>6} {'interactive s':>14} {'blocked s':>10} {'load s':>7}"
        "  load average"
    )
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            for page_path in pages:
                before = os.getloadavg()[0]
                runs = [measure(browser, base + page_path) for _ in range(args.runs)]
                after = os.getloadavg()[0]
                row = {
                    "page": page_path,
                    "kB_transferred": round(
                        statistics.median(r["bytes"] for r in runs) / 1e3
                    ),
                    "interactive_s": round(
                        statistics.median(r["tti"] for r in runs), 2
                    ),
                    "interactive_best_s": round(min(r["tti"] for r in runs), 2),
                    "blocked_s": round(
                        statistics.median(r["blocked"] for r in runs), 2
                    ),
                    "load_s": round(statistics.median(r["load"] for r in runs), 2),
                    "runs": args.runs,
                    "load_average_before": f"{before:.2f}",
                    "load_average_after": f"{after:.2f}",
                    "cores": os.cpu_count(),
                    "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                }
                rows.append(row)
                print(
                    f"{page_path:40} {row['kB_transferred']:6} "
                    f"{row['interactive_s']:8.2f} ({row['interactive_best_s']:.2f}) "
                    f"{row['blocked_s']:9.2f} {row['load_s']:7.2f}  "
                    f"{before:.1f} -> {after:.1f}",
                    flush=True,
                )
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    chapters = [r for r in rows if r["page"].startswith("chapters/")]
    heavy = [r["page"] for r in chapters if r["kB_transferred"] * 1e3 > TARGET_BYTES]
    slow = [r["page"] for r in rows if r["interactive_s"] > TARGET_TTI_S]
    print(f"over {TARGET_BYTES / 1e6:.0f} MB: {', '.join(heavy) or 'none'}")
    print(
        f"interactive after more than {TARGET_TTI_S:.0f} s: {', '.join(slow) or 'none'}"
    )
    print(f"written: {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
