"""Fixtures for the browser tests.

The built website (``_build/html``, or the folder named by the environment variable
``SITE_DIR``) is served by a local HTTP server on 127.0.0.1 as a static host serves it
(text gzip-compressed), and Debian's Chromium (never a browser downloaded by
Playwright) visits every page with every request to another host blocked and recorded.
Each page is visited at most once in each reader profile (``sitepages.PROFILES``: a
phone and a desktop, light and dark; which profiles a page is visited in depends on the
tier, ``sitepages.BROWSER_MATRIX``); every check of that profile that runs in this tier
(``sitepages.register_check``, ``sitepages.runs_in``) runs on that one visit, and the
tests read the recorded observations.

Without a built site every test here is skipped: ``make test-browser`` (part of ``make
test``) builds the site first.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from sitepages import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DEFAULT_PROFILE,
    EXTERNAL_URL,
    LIVE_OFF_JS,
    PAGE_CHECKS,
    PROFILES,
    SCREENSHOTS,
    SITE,
    runs_in,
    serve_site,
)


@pytest.fixture(scope="session")
def site_url():
    """The built site served on 127.0.0.1 at a free port, for the whole session."""
    if not (SITE / "index.html").is_file():
        pytest.skip(
            f"no built site at {SITE}: run `make test-browser` (it builds first)"
        )
    server, url = serve_site()
    yield url
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    if not (SITE / "index.html").is_file():
        pytest.skip(f"no built site at {SITE}")
    if not Path(CHROMIUM).is_file():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: run `make chromium` "
            "(apt-get install chromium), or set CHROMIUM=/path/to/chromium"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


def _new_context(browser, profile: str):
    """A browser context for a reader profile in which every request to a host other
    than 127.0.0.1 is aborted (and recorded in ``external_requests``)."""
    ctx = browser.new_context(**PROFILES[profile], service_workers="block")
    ctx.external_requests = []  # every blocked request, as (page url, request url)
    ctx.profile = profile

    def block(route):
        ctx.external_requests.append(
            (route.request.frame.url if route.request.frame else "", route.request.url)
        )
        route.abort("blockedbyclient")

    ctx.route(EXTERNAL_URL, block)
    return ctx


@pytest.fixture(scope="session")
def contexts(browser):
    """One browser context per reader profile, made when first needed."""
    made: dict = {}

    def get(profile: str = DEFAULT_PROFILE):
        if profile not in made:
            made[profile] = _new_context(browser, profile)
            # Live code, once turned on, stays on in a browser profile (live-code.js):
            # a check that presses "Make this page live" would start Python on every
            # later page of this shared profile. Each page here starts with it off.
            made[profile].add_init_script(LIVE_OFF_JS)
        return made[profile]

    yield get
    for ctx in made.values():
        ctx.close()


@pytest.fixture
def fresh_context(browser):
    """A new desktop, light-mode context (an empty profile), for this test only."""
    ctx = _new_context(browser, DEFAULT_PROFILE)
    yield ctx
    ctx.close()


@pytest.fixture(scope="module")
def module_context(browser):
    """A new desktop, light-mode context (an empty profile), shared by the tests of
    one module (a first visit, then the next visit in the same profile)."""
    ctx = _new_context(browser, DEFAULT_PROFILE)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def context(contexts):
    """The desktop, light-mode context (the profile of most tests)."""
    return contexts(DEFAULT_PROFILE)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    """Under ``pytest -n 2 --dist loadgroup`` (``make test-browser``), every test that
    reads one page's ``visit`` records runs in the same worker, so each page is still
    loaded once per profile."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        page = callspec.params.get("page") if callspec else None
        if isinstance(page, str) and "visit" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group(page))


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGETS_DRAWN_JS = """() => Array.from(document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]'))
    .every(view => view.parentElement.querySelector('.jupyter-widgets'))"""

# JavaScript run in each page once it has loaded (and MathJax, if present, has typeset).
_INSPECT_JS = r"""
async () => {
  // Load every image now (lazy ones too, including those inside collapsed blocks).
  const imgs = Array.from(document.images);
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.all(imgs.map(img => img.complete ? null :
      new Promise(resolve => { img.addEventListener("load", resolve);
                               img.addEventListener("error", resolve);
                               setTimeout(resolve, 5000); })));
  const brokenImages = imgs.filter(img => !(img.complete && img.naturalWidth > 0))
                           .map(img => img.currentSrc || img.src);

  // Text that should have become typeset math: text nodes outside code, scripts and
  // MathJax.
  const skip = "pre, code, script, style, textarea, mjx-container, .highlight, "
               + ".thebe-config";
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const texts = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    if (node.nodeValue.trim()) texts.push(node.nodeValue);
  }

  const mathElements = Array.from(document.querySelectorAll(".math"));
  return {
    brokenImages,
    nImages: imgs.length,
    text: texts.join(" "),
    nMath: mathElements.length,
    untypesetMath: mathElements.filter(el => !el.querySelector("mjx-container"))
                                .map(el => el.textContent.slice(0, 80)),
    nMjx: document.querySelectorAll("mjx-container").length,
    mathErrors: Array.from(document.querySelectorAll("mjx-merror"))
                     .map(el => el.getAttribute("data-mjx-error") || el.textContent),
    binderLinks: Array.from(document.querySelectorAll("a[href*='mybinder.org']"))
                      .map(a => a.href),
    liveButtons: document.querySelectorAll("button[onclick='attnLive.open()']").length,
    widgetViews: document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]').length,
    widgetsDrawn: Array.from(document.querySelectorAll(
        'script[type="application/vnd.jupyter.widget-view+json"]'))
        .filter(view => view.parentElement.querySelector(".jupyter-widgets")).length,
    // The theme's icons (<i class="fa-...">) are drawn by Font Awesome's web font, from
    // the theme's style sheet: a glyph before each, in that font, with a width.
    icons: Array.from(document.querySelectorAll("i[class*='fa-']"))
      .filter(el => el.getClientRects().length > 0)
      .map(el => {
        const before = getComputedStyle(el, "::before");
        return {classes: el.className, glyph: before.content,
                font: before.fontFamily, width: el.getBoundingClientRect().width};
      }),
    fontawesomeScript: Array.from(document.scripts)
      .some(s => /fontawesome/.test(s.src)),
    solutions: Array.from(document.querySelectorAll(".solution")).map(el => ({
      id: el.id, classes: el.className})),
  };
}
"""

RAW_MATH_PATTERNS = [
    re.compile(r"\$\$?[^$\n]{1,200}?\$"),
    re.compile(r"\\\(|\\\)|\\\[|\\\]"),
    re.compile(r"\\(begin|end|frac|sqrt|mathbf|operatorname|top|sum)\b"),
]


def _visit(context, site_url: str, page_path: str) -> dict:
    page = context.new_page()
    profile = context.profile
    seen = {"console_errors": [], "failed_requests": [], "bad_responses": []}
    page.on(
        "console",
        lambda msg: (
            msg.type == "error"
            and seen["console_errors"].append(
                f"{msg.text} ({msg.location.get('url', '')})"
            )
        ),
    )
    page.on("pageerror", lambda exc: seen["console_errors"].append(f"uncaught: {exc}"))
    page.on(
        "requestfailed",
        lambda req: seen["failed_requests"].append(f"{req.url}: {req.failure}"),
    )
    page.on(
        "response",
        lambda resp: (
            resp.status >= 400
            and seen["bad_responses"].append(f"{resp.status} {resp.url}")
        ),
    )
    n_external_before = len(context.external_requests)
    started = time.monotonic()

    page.goto(site_url + page_path, wait_until="load")
    if 'http-equiv="Refresh"' in (SITE / page_path).read_text(encoding="utf-8"):
        # a redirect page (index.html): inspect the page it leads to
        page.wait_for_url(lambda url: not url.endswith("/" + page_path), timeout=10000)
        page.wait_for_load_state("load")
    has_mathjax = page.evaluate("() => !!(window.MathJax && window.MathJax.version)")
    if has_mathjax:
        page.wait_for_function(
            "() => MathJax.startup.promise !== undefined", timeout=20000
        )
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
    # The desktop light-mode visit, which the page-wide tests read, waits until the
    # network is idle (generous: on a busy 2-core machine a chapter's fonts and figures
    # can take over 30 s) and inspects every image; the other profiles' checks need the
    # page loaded, typeset and drawn only.
    full = profile == DEFAULT_PROFILE
    if full:
        page.wait_for_load_state("networkidle", timeout=90_000)
    if page.locator(f'script[type="{WIDGET_VIEW}"]').count():
        # widget state embedded in the page: give the widgets manager time to draw them
        try:
            page.wait_for_function(_WIDGETS_DRAWN_JS, timeout=15000)
        except Exception:  # noqa: BLE001 - reported by the widget test through the counts
            pass
    info = page.evaluate(_INSPECT_JS) if full else {"text": ""}
    info["has_mathjax"] = has_mathjax
    text = info.pop("text")
    info["raw_math"] = sorted(
        {m.group(0) for pat in RAW_MATH_PATTERNS for m in pat.finditer(text)}
    )
    # A screenshot of every page on the desktop in light mode, and with
    # ALL_SCREENSHOTS=1 in every profile too (_build/screenshots/<profile>/); the whole
    # page with FULL_SCREENSHOTS=1 (for reviewing a build; slow on long chapters), else
    # what a reader sees first.
    if full or os.environ.get("ALL_SCREENSHOTS") == "1":
        folder = SCREENSHOTS if full else SCREENSHOTS / profile
        folder.mkdir(parents=True, exist_ok=True)
        shot = folder / (page_path[: -len(".html")].replace("/", "__") + ".png")
        page.screenshot(
            path=str(shot), full_page=os.environ.get("FULL_SCREENSHOTS") == "1"
        )
        info["screenshot"] = shot
    info["external_requests"] = [
        u for _, u in context.external_requests[n_external_before:]
    ]
    info.update({key: list(value) for key, value in seen.items()})
    checks = sorted(PAGE_CHECKS[profile].items(), key=lambda item: item[1][0])
    timed = {"load": time.monotonic() - started}
    for name, (_, check, kind) in checks:  # e.g. test_a11y.py's audit
        if not runs_in(kind, page_path, profile):
            continue  # not in this tier (sitepages.BROWSER_MATRIX)
        began = time.monotonic()
        info[name] = check(page, page_path)
        timed[name] = time.monotonic() - began
    if os.environ.get("BROWSER_TIMINGS") == "1":  # where a visit's time goes
        print(
            f"\n{page_path} {profile}: "
            + ", ".join(f"{k} {v:.1f} s" for k, v in timed.items())
        )
    # what the checks made the page do (reloads, clicks) must not log errors either
    info["console_errors_after_checks"] = list(seen["console_errors"])
    page.close()
    return info


@pytest.fixture(scope="session")
def visit(contexts, site_url):
    """``visit(page_path, profile="desktop-light")``: open the page once in that reader
    profile, run the profile's checks, record what happened, save a screenshot."""
    cache: dict[tuple, dict] = {}

    def get(page_path: str, profile: str = DEFAULT_PROFILE) -> dict:
        key = (page_path, profile)
        if key not in cache:
            cache[key] = _visit(contexts(profile), site_url, page_path)
        return cache[key]

    return get


@pytest.fixture
def new_page(context, site_url):
    """A fresh tab on a page of the site, for tests that click."""
    pages = []

    def open_page(page_path: str):
        page = context.new_page()
        page.goto(site_url + page_path, wait_until="load")
        pages.append(page)
        return page

    yield open_page
    for page in pages:
        page.close()
