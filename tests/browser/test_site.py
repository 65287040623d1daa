"""The built website in a real browser (Chromium via Playwright), with the network
   blocked.

For every page: no console error, no failed request, no request to another host, math
typeset by MathJax (served by the site itself) with no raw TeX left in the text, every
image loaded, every embedded widget drawn. On every notebook page: a Binder link to that
very notebook, and the live-code button wherever a cell can run in the page (not on
"The same in PyTorch", whose every cell needs torch: _ext/live_cells.py). Exercise
solutions are collapsed until their title is clicked. A screenshot of every page is
saved under ``_build/screenshots/`` (the whole page with ``FULL_SCREENSHOTS=1``).
"""

from __future__ import annotations

import re
import sys
from urllib.parse import parse_qs, urlparse

import pytest
import yaml
from sitepages import REPO, SITE, notebook_source, register_check, site_pages

sys.path.insert(0, str(REPO / "_ext"))
from live_cells import chapter_cells, offers_live_code  # noqa: E402

PAGES = site_pages()
if not PAGES:
    pytest.skip(
        f"no built site at {SITE}: run `make test-browser` (it builds first)",
        allow_module_level=True,
    )
NOTEBOOK_PAGES = [p for p in PAGES if notebook_source(p)]
CONFIG = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))


def _pages_with_solutions() -> list[str]:
    return [
        p for p in PAGES if 'class="solution' in (SITE / p).read_text(encoding="utf-8")
    ]


def test_the_site_has_pages():
    assert "index.html" in PAGES
    assert any(p.startswith("chapters/") for p in PAGES), PAGES


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_errors_or_other_hosts(visit, page):
    seen = visit(page)
    assert seen["external_requests"] == [], f"{page} requested other hosts"
    assert seen["failed_requests"] == [], f"{page} has failed requests"
    assert seen["bad_responses"] == [], f"{page} has HTTP errors"
    assert seen["console_errors"] == [], f"{page} logged console errors"


def test_requests_to_other_hosts_are_blocked_and_recorded(context, site_url):
    """The check above can fail: a request to another host (a look-alike of the local
    one too) is aborted and recorded, and a request to the site is neither."""
    before = len(context.external_requests)
    tab = context.new_page()
    try:
        tab.goto(site_url + "chapters/reference/glossary.html", wait_until="load")
        statuses = tab.evaluate(
            """async urls => Promise.all(urls.map(u => fetch(u).then(
                r => r.status, () => "blocked")))""",
            [
                "https://example.org/script.js",
                "http://127.0.0.1.example.org/x",
                site_url + "index.html",
            ],
        )
    finally:
        tab.close()
    assert statuses == ["blocked", "blocked", 200], statuses
    recorded = [url for _, url in context.external_requests[before:]]
    assert recorded == [
        "https://example.org/script.js",
        "http://127.0.0.1.example.org/x",
    ], recorded


@pytest.mark.parametrize("page", PAGES)
def test_math_is_typeset(visit, page):
    seen = visit(page)
    assert seen["raw_math"] == [], f"{page} shows raw TeX instead of typeset math"
    if seen["nMath"]:
        assert seen["has_mathjax"], (
            f"{page} has {seen['nMath']} math elements but no MathJax"
        )
        assert seen["untypesetMath"] == [], (
            f"{page}: math elements MathJax did not typeset"
        )
        assert seen["nMjx"] >= seen["nMath"]
    assert seen["mathErrors"] == [], f"{page}: MathJax reported TeX errors"


@pytest.mark.parametrize("page", PAGES)
def test_every_image_loads(visit, page):
    seen = visit(page)
    assert seen["brokenImages"] == [], f"{page} has images that did not load"


@pytest.mark.parametrize("page", PAGES)
def test_embedded_widgets_are_drawn(visit, page):
    """Widget state stored in a notebook is drawn on the static page (not left
    blank)."""
    seen = visit(page)
    assert seen["widgetsDrawn"] == seen["widgetViews"], (
        f"{page}: {seen['widgetViews'] - seen['widgetsDrawn']} of "
        f"{seen['widgetViews']} "
        "embedded widgets were not drawn"
    )


def test_widget_pages_load_the_bundled_widgets_script_and_its_styles():
    """Pages with widget state load the site's own widgets script (deferred) and its
    style sheet, and no AMD loader; pages without widgets load neither. The bundle's
    notice file names the Jupyter widgets packages it contains, with licence texts."""
    with_widgets = [
        p
        for p in PAGES
        if "application/vnd.jupyter.widget-state+json"
        in (SITE / p).read_text(encoding="utf-8")
    ]
    assert len(with_widgets) >= 9, with_widgets
    for page in PAGES:
        html = (SITE / page).read_text(encoding="utf-8")
        has_state = page in with_widgets
        assert ("vendor/static-widgets/static-widgets.js" in html) == has_state, page
        assert ("vendor/static-widgets/static-widgets.css" in html) == has_state, page
        assert "require.js" not in html and "embed-amd.js" not in html, page
        if has_state:
            assert re.search(
                r'<script defer="defer" src="[^"]*static-widgets\.js', html
            ), page
    notice = (SITE / "vendor" / "static-widgets" / "THIRD-PARTY.txt").read_text()
    for package in (
        "@jupyter-widgets/base@",
        "@jupyter-widgets/base-manager@",
        "@jupyter-widgets/controls@",
        "@lumino/widgets@",
        "jquery@",
    ):
        assert f"==== {package}" in notice, package


@pytest.mark.parametrize("page", PAGES)
def test_icons_are_drawn_by_the_web_font(visit, page):
    """The theme's icons show without its 1.5 MB fontawesome.js (site_fixes leaves it
    out)."""
    seen = visit(page)
    assert not seen["fontawesomeScript"], f"{page} loads fontawesome.js"
    assert seen["icons"], f"{page} shows none of the theme's icons"
    for icon in seen["icons"]:
        assert icon["glyph"] not in ("none", "normal", ""), (
            f"{page}: no glyph for {icon}"
        )
        assert "Font Awesome" in icon["font"], (
            f"{page}: {icon} is not in Font Awesome's font"
        )
        assert icon["width"] > 0, f"{page}: {icon} has no width"


@pytest.mark.parametrize("page", PAGES)
def test_screenshot_saved(visit, page):
    shot = visit(page)["screenshot"]
    assert shot.is_file() and shot.stat().st_size > 1000


@pytest.mark.parametrize("page", NOTEBOOK_PAGES)
def test_notebook_page_launches_that_notebook(visit, page):
    """The Binder link opens this notebook, in the repository and branch of
    _config.yml."""
    seen = visit(page)
    repo_url = CONFIG["repository"]["url"].rstrip("/")
    owner_repo = urlparse(repo_url).path.strip("/")
    branch = CONFIG["repository"].get("branch", "main")
    binderhub = CONFIG["launch_buttons"]["binderhub_url"].rstrip("/")
    expected_prefix = f"{binderhub}/v2/gh/{owner_repo}/{branch}"
    notebook = notebook_source(page)
    matching = []
    for href in seen["binderLinks"]:
        parsed = urlparse(href)
        urlpath = parse_qs(parsed.query).get("urlpath", [""])[0]
        if (
            href.startswith(expected_prefix)
            and urlpath.endswith(f"/{notebook}")
            and urlpath.split("/", 1)[1] == notebook
        ):
            matching.append(href)
    assert matching, (
        f"{page}: no Binder link to {expected_prefix}?urlpath=.../{notebook}; "
        f"found {seen['binderLinks']}"
    )
    if offers_live_code(chapter_cells(REPO / notebook)):
        assert seen["liveButtons"] >= 1, f"{page} has no live-code button"
    else:
        assert seen["liveButtons"] == 0, f"{page} offers live code no cell can use"


def _solutions(tab, page_path) -> dict:
    """Each exercise solution: collapsible, closed when the page loads, open once its
    title's button is clicked (checked on the page's one visit, before anything else
    opens it)."""
    found = {"closed_at_first": [], "opened_by_click": [], "count": 0}
    solutions = tab.locator(".solution")
    found["count"] = solutions.count()
    for i in range(solutions.count()):
        solution = solutions.nth(i)
        body = solution.locator(":scope > :not(.admonition-title)").first
        solution.scroll_into_view_if_needed()
        found["closed_at_first"].append(not body.is_visible())
        # the chevron button a reader clicks (the title itself holds a link to the
        # exercise)
        solution.locator(":scope > .admonition-title .toggle-button").click()
        try:
            body.wait_for(state="visible", timeout=5000)
        except Exception:  # noqa: BLE001 - recorded as not opened
            pass
        found["opened_by_click"].append(body.is_visible())
    return found


register_check("solutions_clicked", _solutions, order=10)


@pytest.mark.parametrize("page", _pages_with_solutions())
def test_solutions_collapsed_until_clicked(visit, page):
    seen = visit(page)
    for solution in seen["solutions"]:
        assert "dropdown" in solution["classes"].split(), (
            f"{page}: solution {solution['id']} is not collapsible (use :class: "
            "dropdown)"
        )
    clicked = seen["solutions_clicked"]
    assert clicked["count"] == len(seen["solutions"]) > 0
    for i, (closed, opened) in enumerate(
        zip(clicked["closed_at_first"], clicked["opened_by_click"])
    ):
        assert closed, f"{page}: solution {i + 1} is open before any click"
        assert opened, f"{page}: solution {i + 1} did not open when clicked"
