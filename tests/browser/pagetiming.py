"""Page size and time to interactive of the explorer pages (used by the browser test and by
``tests/benchmarks/bench_pages.py``).

*Size*: the page's HTML (with its embedded widget state) plus the images it links with
``<img>``; scripts, styles and fonts are shared by every page of the site and cached.

*Time to interactive*: from the start of the navigation until the explorer's controls
and its first state are drawn, read in the page with ``performance.now()``. Also
recorded: when the page's own HTML was parsed (``domContentLoadedEventEnd``), when the
window's ``load`` event ended, and how long the page then took to answer the keyboard:
the first control is focused, one arrow key pressed, and the time until the drawing
shows the new state.

Nothing here asserts a time: timings depend on the machine and its load (performance is
measured in benchmarks, not asserted); the browser test prints and records them, the
benchmark repeats them on a quiet machine.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

PAGE_BUDGET_BYTES = 3_000_000
TTI_BUDGET_S = 2.0

# The explorer is drawn: its first state is visible and the box around it holds its
# controls.
EXPLORER_READY_JS = """() => {
  const state = Array.from(document.querySelectorAll('.explorer-state'))
    .find(el => el.getClientRects().length > 0);
  if (!state) return false;
  const box = state.closest('.widget-vbox');
  return !!box && box.querySelectorAll(':scope > .widget-hslider, :scope > .widget-dropdown,'
                                       + ':scope > .widget-select').length > 0;
}"""

_NAVIGATION_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return {dcl: nav.domContentLoadedEventEnd / 1000, load: nav.loadEventEnd / 1000};
}"""

# Before a key press: remember the visible state and the time of the key's keydown.
_ARM_JS = """() => {
  window.__explorerBefore = Array.from(document.querySelectorAll('.explorer-state'))
    .find(el => el.getClientRects().length > 0).innerHTML;
  window.__explorerKeyAt = null;
  document.addEventListener('keydown', () => { window.__explorerKeyAt = performance.now(); },
                            {capture: true, once: true});
}"""
# After it: seconds from the keydown until another state is visible (polled every
# frame).
_CHANGED_JS = """() => {
  const now = Array.from(document.querySelectorAll('.explorer-state'))
    .find(el => el.getClientRects().length > 0);
  if (!now || window.__explorerKeyAt === null || now.innerHTML === window.__explorerBefore)
    return false;
  return (performance.now() - window.__explorerKeyAt) / 1000;
}"""


def page_bytes(path: Path) -> int:
    """Bytes of a built page's HTML plus the local images it shows with ``<img>``."""
    html = path.read_text(encoding="utf-8")
    total = len(html.encode("utf-8"))
    for src in set(re.findall(r'<img[^>]+src="([^"]+)"', html)):
        if src.startswith("data:"):
            continue
        file = (path.parent / src.split("#")[0]).resolve()
        if file.is_file():
            total += file.stat().st_size
    return total


def explorer_pages(site: Path) -> list[str]:
    """Every page of the built site that embeds a precomputed explorer."""
    return sorted(
        p.relative_to(site).as_posix()
        for p in (site / "chapters").glob("*.html")
        if "explorer-state" in p.read_text(encoding="utf-8")
    )


def first_control_key(page) -> tuple:
    """The first control of the explorer (a locator) and the key that moves it forward."""
    box = page.locator(".explorer-state:visible").first.locator(
        "xpath=ancestor::div[contains(@class,'widget-vbox')][1]"
    )
    control = box.locator(
        ":scope > .widget-hslider, :scope > .widget-dropdown, :scope > .widget-select"
    ).first
    kind = control.get_attribute("class") or ""
    if "widget-hslider" in kind:
        return control.locator(".noUi-handle"), "ArrowRight"
    return control.locator("select"), "ArrowDown"


def measure(page, url: str, *, respond: bool = True, timeout_ms: int = 60_000) -> dict:
    """Open ``url`` in ``page`` (a fresh Playwright tab) and time it (seconds).

    Returns a dict with ``tti`` (the explorer drawn), ``dcl`` and ``load`` (the
    navigation's DOMContentLoaded and load events, None if not reached by then) and,
    with ``respond``, ``respond`` (a key press until the new state shows) and ``load``
    read after that.
    """
    page.goto(url, wait_until="commit")
    # The time is read in the same animation frame that finds the explorer drawn (a
    # later evaluate() would wait for whatever the page does next, e.g. typesetting).
    ready_at = page.wait_for_function(
        f"() => ({EXPLORER_READY_JS})() && performance.now()",
        timeout=timeout_ms,
        polling="raf",
    ).json_value()
    result = {"tti": ready_at / 1000}
    result["dcl"] = page.evaluate(_NAVIGATION_JS)["dcl"] or None
    if respond:
        target, key = first_control_key(page)
        target.focus()
        page.evaluate(_ARM_JS)
        page.keyboard.press(key)
        result["respond"] = page.wait_for_function(
            _CHANGED_JS, timeout=timeout_ms, polling="raf"
        ).json_value()
    page.wait_for_load_state("load")
    result["load"] = page.evaluate(_NAVIGATION_JS)["load"] or None
    return result


def machine_load() -> str:
    """The 1-minute load average and the number of cores, for the record."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
