"""What a reader meets on every page, on a phone (390 x 844, touch) and on a desktop
(1280 x 900), in light and in dark mode (issue 27).

Each page is loaded once per profile (conftest's ``visit``); on that visit:

* **contrast**: every text in the explorers, the self-check questions and the code
  (``pre``, ``code``; the SVG drawings' text too) has a contrast of at least 4.5:1 with
  what is behind it, 3:1 for large text (24 px, or 18.66 px bold), computed here from
  the colours the browser rendered (the text's colour or fill, each background behind it
  composited with its transparency), not taken from axe-core, which passed the
  explorers' read-outs at 1.01:1. Dark mode is measured on the desktop on the page
  loaded in light mode, by switching the colour scheme the theme follows; where the
  page is also loaded in dark mode (one chapter of each part in `make test`), both
  must draw every text in the same colours;
* **width**: no paragraph, list item, code block, output, table, figure, explorer or
  display equation is wider than the text column; a block whose content is wider
  scrolls, and visibly so (``overflow-x`` auto or scroll, and the shadow that shows
  there is more); none cuts its content off (hidden overflow);
* **sliders**: every explorer's slider track is at least 150 px wide;
* **keyboard**: from the top of a page with an explorer, at most 20 presses of Tab (and
  Enter on the "Skip to the explorer" link) reach the explorer's first control;
* **navigation**: on the phone, the "Toggle primary sidebar" button opens the drawer
  with every chapter of the table of contents, Escape closes it, and the "On this page"
  button opens its own; on the desktop, the sidebar shows every chapter;
* **self-check answers survive a reload** (desktop, dark, on one chapter of each part
  in `make test` and every page nightly; on the phone, test_quiz.py reloads with every
  question answered): the first question answered, the page
  reloaded, the answer is shown again with its feedback, the score counts it and the
  chapter's entry in the list of chapters shows it; "Forget my answers" clears it.
"""

from __future__ import annotations

import json

import pytest
import yaml
from sitepages import (
    DEFAULT_PROFILE,
    MATRIX_PAGES,
    PROFILES,
    REPO,
    SITE,
    page_profiles,
    register_check,
    runs_in,
    site_pages,
)

PAGES = site_pages()
if not PAGES:
    pytest.skip(
        f"no built site at {SITE}: run `make test-browser` (it builds first)",
        allow_module_level=True,
    )
MAX_TABS = 20
MIN_TRACK_PX = 150


def _toc_documents() -> list[str]:
    """Every document of the table of contents except the landing page, in order."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    return [c["file"] for part in toc["parts"] for c in part["chapters"]]


CHAPTERS = _toc_documents()

# ------------------------------------------------------------------ measured in the
# page
_MEASURE_JS = r"""({contrast, widths}) => {
  const article = document.querySelector("article.bd-article");
  const visible = el => {
    if (!el.getClientRects().length) return false;
    const cs = getComputedStyle(el);
    return cs.visibility !== "hidden" && cs.display !== "none";
  };
  // ---- colours
  const parse = c => {
    const m = c && c.match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[,\s/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {   // top composited over an opaque bottom
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  // What is behind an element: its own background over what is behind its parent,
  // down to the first opaque one (the canvas, white, below all). Kept per element, so
  // that the thousands of spans of a highlighted code block share their ancestors'.
  const behind = new Map();
  const background = el => {
    if (!el) return [255, 255, 255, 1];   // the canvas
    if (!behind.has(el)) {
      const c = parse(getComputedStyle(el).backgroundColor);
      behind.set(el, c && c[3] >= 1 ? c
        : c && c[3] > 0 ? over(c, background(el.parentElement))
        : background(el.parentElement));
    }
    return behind.get(el);
  };
  const luminance = c => {
    const [r, g, b] = c.slice(0, 3).map(v => {
      v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const ratio = (a, b) => {
    const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (hi + 0.05) / (lo + 0.05);
  };
  const opacities = new Map();
  const opacity = el => {
    if (!el) return 1;
    if (!opacities.has(el))
      opacities.set(el, Number(getComputedStyle(el).opacity)
                        * opacity(el.parentElement));
    return opacities.get(el);
  };
  const name = el => el.tagName.toLowerCase() + "."
    + String(el.className.baseVal ?? el.className).slice(0, 40);
  const contrastFailures = [];
  const palette = new Set();   // every colour of text on its background, as drawn
  let textsChecked = 0;
  const roots = contrast ? Array.from(document.querySelectorAll(
    ".explorer, [id^='attnquiz_'], article pre, article code")) : [];
  const seen = new Set();
  for (const root of roots) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    while (walker.nextNode()) {
      const node = walker.currentNode;
      const el = node.parentElement;
      if (!el || seen.has(el) || !node.nodeValue.trim()) continue;
      seen.add(el);
      if (!visible(el)
          || el.closest("title, style, script, .visually-hidden, mjx-assistive-mml"))
        continue;
      const cs = getComputedStyle(el);
      const isSvg = el instanceof SVGElement;
      let fg = parse(isSvg ? cs.fill : cs.color);
      if (!fg) continue;
      fg = fg.slice(0, 3).concat([fg[3] * opacity(el)]);
      const bg = background(isSvg ? el.closest("svg").parentElement : el);
      const shown = over(fg, bg);
      const svg = isSvg ? el.closest("svg") : null;
      const scale = svg ? svg.getBoundingClientRect().width
                          / (svg.viewBox.baseVal.width || 1) : 1;
      const px = parseFloat(cs.fontSize) * scale;
      const bold = Number(cs.fontWeight) >= 700 || cs.fontWeight === "bold";
      const large = px >= 24 || (bold && px >= 18.66);
      const r = ratio(shown, bg);
      textsChecked += 1;
      const rgb = c => c.slice(0, 3).map(Math.round).join(",");
      palette.add(`${rgb(shown)} on ${rgb(bg)}`);
      if (r < (large ? 3 : 4.5) - 0.005)
        contrastFailures.push(
          `${r.toFixed(2)}:1 ${node.nodeValue.trim().slice(0, 40)} (${name(el)}, ` +
          `rgb ${shown.slice(0, 3).map(Math.round)} on ` +
          `${bg.slice(0, 3).map(Math.round)})`);
    }
  }
  // ---- widths
  const counts = {explorers: document.querySelectorAll(".explorer").length,
    quizzes: document.querySelectorAll("[id^='attnquiz_'] .QuizScore").length};
  const colours = {contrastFailures, textsChecked, palette: Array.from(palette).sort()};
  const none = {tooWide: [], hiddenScroll: [], cutOff: [], tracks: []};
  if (!article || !widths) return {...colours, ...none, ...counts};
  const column = article.getBoundingClientRect();
  const pad = parseFloat(getComputedStyle(article).paddingLeft);
  const left = column.left + pad - 1;
  const right = column.right - parseFloat(getComputedStyle(article).paddingRight) + 1;
  const cue = el => {
    const cs = getComputedStyle(el);
    return ["auto", "scroll"].includes(cs.overflowX)
           && cs.backgroundAttachment.includes("local");
  };
  const scrollsVisibly = el => el.scrollWidth <= el.clientWidth + 1 || cue(el);
  const inScroller = el => {
    for (let e = el.parentElement; e && e !== article; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (["auto", "scroll"].includes(cs.overflowX)) return e;
    }
    return null;
  };
  const blocks = "p, li, pre, div.highlight, div.cell_output > .output, .text_html, " +
    "table, figure, img, .explorer, .Quiz, div.math, mjx-container";
  const tooWide = [], hiddenScroll = [], cutOff = [];
  for (const el of article.querySelectorAll(blocks)) {
    if (!visible(el)) continue;
    const box = el.getBoundingClientRect();
    const scroller = inScroller(el);
    if ((box.right > right || box.left < left) && !scroller)
      tooWide.push(`${name(el)}: ${Math.round(box.width)} px in a ` +
        `${Math.round(right - left)} px column`);
    const cs = getComputedStyle(el);
    if (el.scrollWidth > el.clientWidth + 1) {
      if (["hidden", "clip"].includes(cs.overflowX))
        cutOff.push(`${name(el)}: ${el.scrollWidth} px of content shown in ` +
          `${el.clientWidth} px`);
      else if (["auto", "scroll"].includes(cs.overflowX) && !scrollsVisibly(el))
        hiddenScroll.push(`${name(el)} scrolls ${el.scrollWidth} px in ` +
          `${el.clientWidth} px with no cue`);
    }
  }
  // ---- slider tracks
  const tracks = Array.from(document.querySelectorAll(".explorer .noUi-target"))
    .filter(visible).map(t => Math.round(t.getBoundingClientRect().width));
  return {...colours, tooWide, hiddenScroll, cutOff, tracks, ...counts};
}"""


def _measure_contrast(tab, page_path) -> dict:
    return tab.evaluate(_MEASURE_JS, {"contrast": True, "widths": False})


# The theme follows the system's colour scheme while the page is open (pydata-sphinx-
# theme's "auto" mode listens to it), so dark mode can be measured on the page loaded
# in light mode: the scheme is switched, the colours measured, and switched back. While
# it is switched, CSS transitions are turned off, so that the colours measured are the
# final ones, not a step of a fade (a transition in a part of the page that is not
# drawn would never end).
_THEME_IS_JS = "scheme => document.documentElement.dataset.theme === scheme"
_NO_TRANSITIONS_JS = """on => {
  let style = document.getElementById("test-no-transitions");
  if (on && !style) {
    style = document.createElement("style");
    style.id = "test-no-transitions";
    style.textContent = "*, *::before, *::after { transition: none !important; }";
    document.head.append(style);
  } else if (!on && style) {
    style.remove();
  }
}"""


def _measure_contrast_dark(tab, page_path) -> dict:
    """The contrast measure in dark mode, on the page loaded in light mode."""
    tab.evaluate(_NO_TRANSITIONS_JS, True)
    try:
        tab.emulate_media(color_scheme="dark")
        tab.wait_for_function(_THEME_IS_JS, arg="dark", timeout=5000)
        found = _measure_contrast(tab, page_path)
    finally:
        light = PROFILES[DEFAULT_PROFILE]["color_scheme"]  # the visit's own scheme
        tab.emulate_media(color_scheme=light)
        tab.wait_for_function(_THEME_IS_JS, arg=light, timeout=5000)
        tab.evaluate(_NO_TRANSITIONS_JS, False)
    return found


def _measure_widths(tab, page_path) -> dict:
    return tab.evaluate(_MEASURE_JS, {"contrast": False, "widths": True})


# ------------------------------------------------------------------ the keyboard
_FIRST_CONTROL_JS = """() => {
  const box = document.querySelector(".explorer");
  if (!box) return false;
  const control = box.querySelector(".noUi-handle, select");
  return document.activeElement === control;
}"""


def _tabs_to_explorer(tab, page_path) -> dict:
    """Tab presses from the top of the page to the first explorer's first control."""
    if not tab.evaluate("() => !!document.querySelector('.explorer')"):
        return {"explorer": False}
    tab.evaluate(
        """() => { window.scrollTo(0, 0);
                   const start = document.createElement("span"); start.tabIndex = -1;
                   document.body.prepend(start); start.focus(); start.remove(); }"""
    )
    skipped = False
    for presses in range(1, MAX_TABS + 1):
        tab.keyboard.press("Tab")
        text = tab.evaluate("() => (document.activeElement.textContent || '').trim()")
        if text == "Skip to the explorer":
            tab.keyboard.press("Enter")
            skipped = True
            continue
        if tab.evaluate(_FIRST_CONTROL_JS):
            return {"explorer": True, "presses": presses, "skip_link": skipped}
    return {"explorer": True, "presses": None, "skip_link": skipped}


# ------------------------------------------------------------------ navigation
_NAV_LINKS_JS = """(selector) => Array.from(document.querySelectorAll(selector))
  .filter(a => a.getClientRects().length && getComputedStyle(a).visibility !== "hidden")
  .map(a => a.getAttribute("href"))"""


def _href_document(page_path: str, href: str) -> str:
    """The document a sidebar link leads to, from the page it is on."""
    from posixpath import dirname, join, normpath

    target = href.split("#")[0]
    if not target:
        return page_path[: -len(".html")]
    return normpath(join(dirname(page_path), target))[: -len(".html")]


def _opens(tab, button, dialog: str) -> bool:
    """Tapping ``button`` opens the drawer ``dialog`` (a <dialog>) within 5 s."""
    button.tap()
    try:
        tab.wait_for_selector(f"{dialog}[open]", timeout=5000)
    except Exception:  # noqa: BLE001 - recorded as not opened
        return False
    return True


def _navigation(tab, page_path) -> dict:
    found = {}
    page_path = tab.url.split("/", 3)[3].split("#")[0] or page_path  # after a redirect
    phone = tab.viewport_size["width"] < 960
    if not phone:
        hrefs = tab.evaluate(_NAV_LINKS_JS, ".bd-sidebar-primary .bd-docs-nav a")
        found["listed"] = sorted({_href_document(page_path, h) for h in hrefs})
        return found
    toggle = tab.locator(".bd-header-article .primary-toggle")
    found["toggles"] = toggle.count()
    if not toggle.count():
        return found
    found["opened"] = _opens(tab, toggle.first, "#pst-primary-sidebar-modal")
    if not found["opened"]:
        return found
    hrefs = tab.evaluate(_NAV_LINKS_JS, "#pst-primary-sidebar-modal .bd-docs-nav a")
    found["listed"] = sorted({_href_document(page_path, h) for h in hrefs})
    tab.keyboard.press("Escape")
    tab.wait_for_timeout(200)
    found["closed"] = not tab.evaluate(
        "() => document.getElementById('pst-primary-sidebar-modal').open"
    )
    secondary = tab.locator(".bd-header-article .secondary-toggle")
    if secondary.count() and secondary.first.is_visible():
        found["contents_opened"] = _opens(
            tab, secondary.first, "#pst-secondary-sidebar-modal"
        )
        tab.keyboard.press("Escape")
    return found


# ------------------------------------------------------------------ answers kept
def _answer_first_question(tab) -> dict | None:
    """Answers the first self-check question rightly; returns what was answered."""
    wrap = tab.locator("[id^='attnquiz_'] .Quiz").first
    wrap.scroll_into_view_if_needed()
    box = wrap.locator("input.Input-text")
    if box.count():
        answers = json.loads(box.get_attribute("data-answers"))
        lo, hi = next(a["range"] for a in answers if a.get("correct"))
        value = repr((lo + hi) / 2)
        box.fill(value)
        box.press("Enter")
        return {"kind": "number", "value": value}
    option = wrap.locator('label.MCButton[data-correct="true"]')
    option.locator("button").click()
    # the option's text as drawn before MathJax typeset it: what the page keeps
    return {"kind": "option", "value": option.get_attribute("data-text")}


_FIRST_STATE_JS = """() => {
  const quiz = document.querySelector("[id^='attnquiz_']");
  const wrap = quiz.querySelector(".Quiz");
  const box = wrap.querySelector("input.Input-text");
  const pressed = wrap.querySelector("button.MCOption[aria-pressed='true']");
  const mark = Array.from(document.querySelectorAll(".bd-docs-nav a .reader-progress"))
    .map(m => m.textContent).filter(Boolean);
  const kept = pressed ? pressed.parentElement.dataset.text : null;
  return {value: box ? box.value : kept,
          feedback: wrap.querySelector(".Feedback").textContent.trim(),
          score: quiz.querySelector(".QuizScore p").textContent, marks: mark};
}"""


def _answers_kept(tab, page_path) -> dict:
    if not tab.locator("[id^='attnquiz_'] .QuizScore").count():
        return {"quiz": False}
    given = _answer_first_question(tab)
    tab.reload(wait_until="load")  # every script has run, MathJax's typesetting too
    tab.wait_for_selector("[id^='attnquiz_'] .QuizScore", timeout=10000)
    after = tab.evaluate(_FIRST_STATE_JS)
    forget = tab.locator("[id^='attnquiz_'] button.QuizForget")
    if forget.is_visible():  # hidden when no answer is kept: recorded as such below
        forget.click()
        try:  # the page redraws the score after the click; a loaded machine is slow
            tab.wait_for_function(
                "() => document.querySelector(\"[id^='attnquiz_'] .QuizScore p\")"
                ".textContent.startsWith('Score: 0 of ')",
                timeout=15000,
            )
        except Exception:  # noqa: BLE001 - the state is recorded and asserted below
            pass
    cleared = tab.evaluate(_FIRST_STATE_JS)
    return {
        "quiz": True,
        "given": given,
        "after_reload": after,
        "after_forget": cleared,
    }


ALL = tuple(PROFILES)
# Contrast where colour is checked, widths and slider tracks, the Tab path and the
# drawer where layout is checked (sitepages.runs_in).
register_check("contrast", _measure_contrast, profiles=ALL, order=5, kind="colour")
# dark mode on every page's light-mode visit on the desktop; a page loaded in dark mode
# (sitepages.KIND_PROFILES, MATRIX_PAGES) must measure the same
register_check(
    "contrast_dark", _measure_contrast_dark, profiles=(DEFAULT_PROFILE,), order=7
)
register_check("widths", _measure_widths, profiles=ALL, order=6, kind="layout")
register_check(
    "keyboard_path", _tabs_to_explorer, profiles=ALL, order=20, kind="layout"
)
register_check("navigation", _navigation, profiles=ALL, order=30, kind="layout")
# Where answers are kept (localStorage) depends neither on the width nor on the colour
# mode: the reload is tried on the desktop in dark mode here, and on the phone in light
# mode with every question answered (test_quiz.py), so that both widths and both modes
# are covered without reloading every page four times. The pages share one script for
# it: in `make test` it is tried on one chapter of each part (kind "shared",
# sitepages.runs_in), on every page nightly.
KEPT_PROFILE = "desktop-dark"
register_check(
    "answers_kept", _answers_kept, profiles=(KEPT_PROFILE,), order=40, kind="shared"
)
KEPT_PAGES = [p for p in PAGES if runs_in("shared", p, KEPT_PROFILE)]

# colour in light and dark on the desktop, layout on the phone and the desktop in
# light mode, all four profiles on sitepages.MATRIX_PAGES (every page with
# BROWSER_MATRIX=full)
colour_visits = pytest.mark.parametrize(
    ("page", "profile"), page_profiles(PAGES, "colour")
)
layout_visits = pytest.mark.parametrize(
    ("page", "profile"), page_profiles(PAGES, "layout")
)


# ------------------------------------------------------------------ the tests
@colour_visits
def test_text_contrast_from_rendered_colours(visit, page, profile):
    seen = visit(page, profile)["contrast"]
    assert seen["contrastFailures"] == [], f"{page} ({profile}):\n  " + "\n  ".join(
        seen["contrastFailures"][:20]
    )


@pytest.mark.parametrize("page", PAGES)
def test_text_contrast_in_dark_mode(visit, page):
    """Contrast in dark mode, measured on the desktop by switching the colour scheme
    of the page loaded in light mode."""
    seen = visit(page)["contrast_dark"]
    assert seen["contrastFailures"] == [], f"{page} (dark):\n  " + "\n  ".join(
        seen["contrastFailures"][:20]
    )


DARK_LOADS = [p for p in PAGES if runs_in("colour", p, "desktop-dark")]


@pytest.mark.parametrize("page", DARK_LOADS)
def test_dark_mode_switched_on_the_page_is_drawn_as_when_loaded_dark(visit, page):
    """Where a page is also loaded in dark mode (one chapter of each part in `make
    test`, every page nightly), the scheme switched on the open page draws every text
    in the same colour on the same background as the page loaded dark."""
    switched = visit(page)["contrast_dark"]
    loaded = visit(page, "desktop-dark")["contrast"]
    # (a page with no code, explorer or question measures no text either way)
    assert switched["textsChecked"] == loaded["textsChecked"], page
    assert switched["palette"] == loaded["palette"], page
    assert switched["contrastFailures"] == loaded["contrastFailures"], page


@layout_visits
def test_nothing_wider_than_the_column(visit, page, profile):
    seen = visit(page, profile)["widths"]
    problems = seen["tooWide"] + seen["hiddenScroll"] + seen["cutOff"]
    assert problems == [], f"{page} ({profile}):\n  " + "\n  ".join(problems[:20])


@layout_visits
def test_slider_tracks_are_wide_enough(visit, page, profile):
    tracks = visit(page, profile)["widths"]["tracks"]
    assert all(width >= MIN_TRACK_PX for width in tracks), (page, profile, tracks)


@layout_visits
def test_first_explorer_control_within_twenty_tabs(visit, page, profile):
    path = visit(page, profile)["keyboard_path"]
    if not path["explorer"]:
        pytest.skip("no explorer on this page")
    assert path["presses"] is not None, (
        f"{page} ({profile}): the first explorer control is not reached in "
        f"{MAX_TABS} Tab presses"
    )


@layout_visits
def test_navigation_lists_every_chapter(visit, page, profile):
    nav = visit(page, profile)["navigation"]
    if PROFILES[profile]["viewport"]["width"] < 960:
        assert nav.get("toggles"), f"{page}: no visible 'Toggle primary sidebar' button"
        assert nav["opened"], f"{page} ({profile}): the drawer did not open"
        assert nav["closed"], f"{page} ({profile}): Escape did not close the drawer"
        if "contents_opened" in nav:
            assert nav["contents_opened"], f"{page}: 'On this page' opened nothing"
    missing = [doc for doc in CHAPTERS if doc not in nav["listed"]]
    assert missing == [], f"{page} ({profile}): not listed: {missing}"


@pytest.mark.parametrize("page", KEPT_PAGES)
def test_a_self_check_answer_survives_a_reload(visit, page):
    profile = KEPT_PROFILE
    kept = visit(page, profile)["answers_kept"]
    if not kept["quiz"]:
        pytest.skip("no self-check questions on this page")
    after, given = kept["after_reload"], kept["given"]
    assert after["value"] == given["value"], (page, profile, kept)
    assert after["feedback"].startswith("Correct."), (page, profile, kept)
    assert after["score"].startswith("Score: 1 of "), (page, profile, kept)
    assert any("1/" in m for m in after["marks"]), (
        f"{page} ({profile}): the list of chapters does not show the answer: {after}"
    )
    cleared = kept["after_forget"]
    assert cleared["score"].startswith("Score: 0 of ") and not cleared["feedback"], kept


def test_every_page_was_measured_in_every_profile(visit):
    """The checks above did measure something (a page with an explorer and
    questions)."""
    for profile in PROFILES:
        seen = visit("chapters/how_attention_works/softmax/softmax.html", profile)
        colour, layout = seen["contrast"], seen["widths"]
        assert colour["explorers"] == 1 and colour["quizzes"] == 1, (profile, colour)
        assert colour["textsChecked"] > 100, (profile, colour)
        assert len(layout["tracks"]) == 2, (profile, layout)


def test_matrix_pages_cover_every_numbered_part_of_the_book():
    """sitepages.MATRIX_PAGES, the pages checked in all four profiles in `make test`,
    hold a chapter of every numbered part of _toc.yml, and are pages of the site."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    chosen = {p[: -len(".html")] for p in MATRIX_PAGES}
    for part in toc["parts"]:
        if part.get("numbered"):
            files = {c["file"] for c in part["chapters"]}
            assert files & chosen, f"no page of the part {part['caption']!r}"
    assert set(MATRIX_PAGES) <= set(PAGES), set(MATRIX_PAGES) - set(PAGES)


def test_contrast_measure_can_fail(context, site_url):
    """The measure reports text that is hard to read: grey on white, yellow text in a
    drawing, and the pink on light grey the explorers' read-outs had in dark mode."""
    tab = context.new_page()
    try:
        tab.goto(
            site_url + "chapters/how_attention_works/softmax/softmax.html",
            wait_until="load",
        )
        tab.evaluate(
            """() => {
            const box = document.querySelector(".explorer") || document.body;
            const probe = document.createElement("div");
            probe.innerHTML = '<p style="color:#bbb;background:#fff">faint grey</p>'
              + '<p style="color:#f3c7ee;background:#ced6dd">pink read-out</p>'
              + '<svg width="100" height="20" viewBox="0 0 100 20"><text x="1" y="15" '
              + 'fill="#F0E442" font-size="12">yellow label</text></svg>'
              + '<p style="color:#333;background:#fff">dark enough</p>';
            box.prepend(probe);
        }"""
        )
        failures = _measure_contrast(tab, None)["contrastFailures"]
    finally:
        tab.close()
    for text in ("faint grey", "pink read-out", "yellow label"):
        assert any(text in f for f in failures), (text, failures)
    assert not any("dark enough" in f for f in failures)
