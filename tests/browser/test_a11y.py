"""Accessibility of every page of the built site, in Chromium with the network blocked.

* **axe-core** (pinned in package.json, copied by ``make assets`` to
  ``vendor/axe-core/`` and served by the site itself) checks every page for the WCAG
  2.0/2.1 level A and AA rules (tags ``wcag2a``, ``wcag2aa``, ``wcag21a``,
  ``wcag21aa``): zero violations, in one run over the whole page once its controls have
  been operated (so that feedback and read-outs are drawn) and every collapsed block
  (solutions, dropdowns) has been opened.
* **Alt text**: every image and every ``svg`` with ``role="img"`` in the article has a
  text alternative that describes it: a sentence of several words, not a file name, not
  a generic word such as "image" or "png".
* **Headings**: each page has one ``h1``, first, and no level is skipped on the way
  down.
* **Keyboard**: every control in the article (buttons, toggles, widgets' sliders,
  dropdowns, text fields, anything with a click handler or an interactive ARIA role,
  whoever added it) is reached with the Tab key from just before it, and each one does
  something when operated with the keyboard alone (Enter, Space or the arrow keys): the
  page changes. Of controls drawn alike on a page (the questions' options, the
  solutions' toggles) the first two are tried in `make test`, every one nightly. The
  pages are found by iterating over ``_build/html``, so new chapters are covered.
"""

from __future__ import annotations

import re

import pytest
from sitepages import FULL_MATRIX, SITE, register_check, site_pages

PAGES = site_pages()
if not PAGES:
    pytest.skip(
        f"no built site at {SITE}: run `make test-browser` (it builds first)",
        allow_module_level=True,
    )

WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
# the page's own content, without the theme's header and sidebars (checked by axe-core)
ARTICLE = ["article.bd-article", ".bd-search-container", "main", "body"]

# axe-core from the site itself. An AMD or CommonJS loader on a page would capture axe's
# UMD wrapper, so the source runs with `define`, `module` and `exports` hidden.
_LOAD_AXE_JS = """async () => {
  if (window.axe) return axe.version;
  const url = new URL(document.documentElement.dataset.content_root
                      + "vendor/axe-core/axe.min.js", document.baseURI);
  const response = await fetch(url);
  if (!response.ok)
    throw new Error("axe-core not served at " + url + ": " + response.status);
  (new Function("define", "module", "exports", await response.text())).call(window);
  return axe.version;
}"""

_RUN_AXE_JS = """async ([tags, include]) => {
  const context = include ? {include: include} : document;
  const result = await axe.run(context, {runOnly: {type: "tag", values: tags},
                                         resultTypes: ["violations"]});
  return {
    rulesRun: result.passes.length + result.violations.length + result.incomplete.length
              + result.inapplicable.length,
    violations: result.violations.map(v => ({
      id: v.id, impact: v.impact, help: v.help,
      nodes: v.nodes.map(n => n.target.join(" ") + "  " + n.html.slice(0, 160))})),
  };
}"""

_WIDGETS_DRAWN_JS = """() => Array.from(document.querySelectorAll(
    'script[type="application/vnd.jupyter.widget-view+json"]'))
    .every(view => view.parentElement.querySelector('.jupyter-widgets'))"""


def _open(context, site_url: str, page_path: str):
    """A tab on the page once its math is typeset and its widgets are drawn."""
    tab = context.new_page()
    tab.goto(site_url + page_path, wait_until="load")
    tab.wait_for_load_state("networkidle")
    if tab.evaluate("() => !!(window.MathJax && window.MathJax.version)"):
        tab.wait_for_function(
            "() => MathJax.startup.promise !== undefined", timeout=20000
        )
        tab.evaluate("() => MathJax.startup.promise.then(() => true)")
    if tab.locator('script[type="application/vnd.jupyter.widget-view+json"]').count():
        tab.wait_for_function(_WIDGETS_DRAWN_JS, timeout=20000)
    return tab


def _axe(tab, include=None) -> dict:
    tab.evaluate(_LOAD_AXE_JS)
    return tab.evaluate(_RUN_AXE_JS, [WCAG_TAGS, include])


def _report(violations: list[dict]) -> str:
    return "\n".join(
        f"  {v['id']} ({v['impact']}): {v['help']}\n      "
        + "\n      ".join(v["nodes"])
        for v in violations
    )


# ----------------------------------------------------------------------------- axe-core
@pytest.mark.parametrize("page", PAGES)
def test_no_wcag_a_aa_violations(audit, page):
    """The whole page, with its controls operated and its collapsed blocks (solutions,
    dropdowns: they hold text too) opened."""
    result = audit(page)["axe"]
    assert result["rulesRun"] >= 20, "axe-core did not run its WCAG rules"
    assert result["violations"] == [], f"{page}:\n{_report(result['violations'])}"


def test_axe_finds_a_violation(context, site_url):
    """The check can fail: a button without a name and low-contrast text are
    reported."""
    tab = _open(context, site_url, PAGES[0])
    tab.evaluate("""() => {
        const box = document.createElement("div");
        box.id = "a11y-control";
        box.innerHTML = '<button></button>'
          + '<p style="color:#ccc;background:#fff">faint</p>';
        document.body.prepend(box);
    }""")
    result = _axe(tab, include=[["#a11y-control"]])
    tab.close()
    assert {"button-name", "color-contrast"} <= {v["id"] for v in result["violations"]}


# ----------------------------------------------------------------------------- alt text
_GENERIC_ALT = re.compile(
    r"^(image|img|figure|fig\.?|plot|chart|graph|picture|output|png|svg|untitled|"
    r"figure \d+|image \d+|output_\w+)$",
    re.I,
)
_FILE_LIKE = re.compile(
    r"(\.(png|jpe?g|svg|gif|webp)\b|^[\w./-]*_images/|^[\w-]+\.\w{2,4}$)", re.I
)

_IMAGES_JS = """(article) => {
  const root = article.map(s => document.querySelector(s)).find(Boolean);
  const describe = el => {
    if (el.tagName.toLowerCase() === "img") return el.getAttribute("alt");
    const labelledby = el.getAttribute("aria-labelledby");
    if (labelledby) return labelledby.split(/\\s+/).map(id => {
        const ref = document.getElementById(id); return ref ? ref.textContent : "";
      }).join(" ");
    if (el.getAttribute("aria-label")) return el.getAttribute("aria-label");
    const title = el.querySelector(":scope > title");
    return title ? title.textContent : null;
  };
  return Array.from(root.querySelectorAll("img, svg[role='img']"))
    .filter(el => el.getAttribute("aria-hidden") !== "true"
                  && el.getAttribute("role") !== "presentation")
    .map(el => ({
      src: (el.currentSrc || el.getAttribute("src") || el.outerHTML).slice(0, 120),
      alt: describe(el),
      decorative: el.closest(".headerlink, .copybtn, button, a.btn") !== null}));
}"""


def alt_text_problem(alt: str | None) -> str | None:
    """Why ``alt`` does not say what an image shows (None if it does)."""
    if alt is None:
        return "no alt attribute"
    text = " ".join(alt.split())
    if not text:
        return "empty alt text"
    if _FILE_LIKE.search(text):
        return f"alt text is a file name: {text!r}"
    if _GENERIC_ALT.match(text):
        return f"alt text is a generic word: {text!r}"
    if len(re.findall(r"[A-Za-z]{2,}", text)) < 4:
        return f"alt text too short to say what the image shows: {text!r}"
    return None


@pytest.mark.parametrize(
    "alt, problem",
    [
        (None, "no alt"),
        ("", "empty"),
        ("../_images/3f2a.png", "file name"),
        ("figure", "generic"),
        ("Image", "generic"),
        ("a plot", "too short"),
        ("Bar chart of three weights: fisherman 0.665, net 0.245, bank 0.090.", None),
    ],
)
def test_alt_text_rule(alt, problem):
    found = alt_text_problem(alt)
    assert (found is None) == (problem is None), found
    if problem:
        assert problem.split()[0] in found


@pytest.mark.parametrize("page", PAGES)
def test_every_image_has_descriptive_alt_text(audit, page):
    images = audit(page)["images"]
    problems = [
        f"{img['src']}: {alt_text_problem(img['alt'])}"
        for img in images
        if not img["decorative"] and alt_text_problem(img["alt"])
    ]
    assert problems == [], f"{page}:\n  " + "\n  ".join(problems)


# ----------------------------------------------------------------------------- headings
_HEADINGS_JS = """(article) => {
  const root = article.map(s => document.querySelector(s)).find(Boolean);
  return Array.from(root.querySelectorAll("h1, h2, h3, h4, h5, h6, [role='heading']"))
    .filter(h => h.getClientRects().length > 0 || h.closest(".toggle-hidden, details"))
    .map(h => ({level: h.getAttribute("aria-level") ? +h.getAttribute("aria-level")
                                                     : +h.tagName.slice(1),
                text: h.textContent.replace(/[#¶]/g, "").trim().slice(0, 60)}));
}"""


def heading_problems(headings: list[dict]) -> list[str]:
    """Skipped levels, a missing or repeated h1, or content before the h1."""
    problems = []
    levels = [h["level"] for h in headings]
    if levels.count(1) != 1:
        problems.append(f"{levels.count(1)} h1 headings (one expected)")
    if levels and levels[0] != 1:
        problems.append(f"the first heading is h{levels[0]}, not h1")
    for before, after in zip(headings, headings[1:]):
        if after["level"] > before["level"] + 1:
            problems.append(
                f"h{before['level']} {before['text']!r} is followed by "
                f"h{after['level']} {after['text']!r} (a level skipped)"
            )
    return problems


def test_heading_rule():
    ok = [{"level": n, "text": str(n)} for n in (1, 2, 3, 3, 2, 3, 4, 2)]
    assert heading_problems(ok) == []
    assert heading_problems([{"level": 1, "text": "a"}, {"level": 3, "text": "b"}])
    assert heading_problems([{"level": 2, "text": "a"}, {"level": 1, "text": "b"}])
    assert heading_problems([{"level": 1, "text": "a"}, {"level": 1, "text": "b"}])


@pytest.mark.parametrize("page", PAGES)
def test_headings_in_order(audit, page):
    headings = audit(page)["headings"]
    assert heading_problems(headings) == [], f"{page}: {heading_problems(headings)}"


# ----------------------------------------------------------------------------- keyboard
# Everything in the article that a reader can operate, however it was made: native
# controls, interactive ARIA roles, contenteditable fields, inline click handlers, and
# elements that look clickable (cursor: pointer) without containing or being inside a
# native control or a link.
_CONTROLS_JS = """(article) => {
  const root = article.map(s => document.querySelector(s)).find(Boolean);
  const native = "button, input:not([type=hidden]), select, textarea, summary, "
               + "[contenteditable=''], [contenteditable=true]";
  const roles = ["button", "slider", "checkbox", "radio", "tab", "switch", "combobox",
                 "spinbutton", "option", "menuitem", "textbox", "listbox", "link"];
  const ariaSelector = roles.map(r => `[role=${r}]`).join(", ");
  const visible = el => el.getClientRects().length > 0
                        && getComputedStyle(el).visibility !== "hidden";
  const candidates = new Set([...root.querySelectorAll(native + ", " + ariaSelector
                                                        + ", [onclick]")]);
  for (const el of root.querySelectorAll("div, span, li, label, td, img, svg")) {
    if (getComputedStyle(el).cursor !== "pointer") continue;
    if (el.closest("a, button, summary, label, [onclick], mjx-container, "
                   + ariaSelector))
      continue;
    if (el.querySelector("a, button, input, select, textarea, summary, [tabindex]"))
      continue;
    if (el.parentElement && getComputedStyle(el.parentElement).cursor === "pointer")
      continue;
    candidates.add(el);
  }
  let n = 0;
  const controls = [];
  for (const el of candidates) {
    if (!visible(el) || el.disabled || el.closest("[inert], [aria-disabled=true]"))
      continue;
    // reached by Tab, see below
    if (el.matches(".copybtn, .headerlink, a[href]")) continue;
    el.dataset.kbdControl = String(n);
    const role = el.getAttribute("role") || "";
    const type = (el.getAttribute("type") || "").toLowerCase();
    let kind = "press";
    if (role === "slider" || type === "range" || role === "spinbutton"
        || type === "number")
      kind = "slide";
    else if (el.tagName === "SELECT" || role === "listbox" || role === "combobox")
      kind = "choose";
    else if (["checkbox", "radio", "switch"].includes(role)
             || ["checkbox", "radio"].includes(type))
      kind = "tick";
    else if (el.isContentEditable || el.tagName === "TEXTAREA" || role === "textbox"
             || (el.tagName === "INPUT"
                 && ["", "text", "search", "email"].includes(type)))
      kind = "type";
    // a radio button that is already chosen changes nothing when chosen again: it is
    // operated after the others of its group (see _operate)
    const chosen = (type === "radio" && el.checked)
                   || (role === "radio" && el.getAttribute("aria-checked") === "true");
    // controls drawn alike (same element, role, type, classes): one component's copies
    const sig = [el.tagName, role, type, kind, el.className].join("|");
    controls.push({index: n, kind, chosen, sig, html: el.outerHTML.slice(0, 140)});
    n += 1;
  }
  return controls;
}"""

# Everything that operating a control may change, anywhere on the page (a toggle may
# open a sidebar, a slider may redraw a figure elsewhere): a MutationObserver on the
# whole document counts added or removed nodes, changed text and attributes that get a
# different value, and the fields' values are compared. `_ARM_JS` focuses the control
# (false if it is hidden) and starts counting; `_CHANGED_JS` waits up to `timeout` ms
# for a change and returns as soon as it sees one.
_ARM_JS = """(index) => {
  const fields = () => Array.from(document.querySelectorAll("input, select, textarea"))
    .map(i => i.value + "|" + i.checked).join(";");
  if (!window.kbdWatch) {
    const watch = {changes: 0, fields};
    watch.count = records => {
      for (const r of records) {
        if (r.type === "attributes"
            && r.target.getAttribute(r.attributeName) === r.oldValue) continue;
        if (r.type === "characterData" && r.target.data === r.oldValue) continue;
        watch.changes += 1;
      }
    };
    watch.observer = new MutationObserver(watch.count);
    watch.observer.observe(document, {subtree: true, childList: true, attributes: true,
                                      characterData: true, attributeOldValue: true,
                                      characterDataOldValue: true});
    window.kbdWatch = watch;
  }
  const el = document.querySelector(`[data-kbd-control="${index}"]`);
  if (!el || !el.getClientRects().length) return false;  // hidden by an earlier control
  el.focus();
  window.kbdWatch.observer.takeRecords();  // what focusing changed does not count
  window.kbdWatch.changes = 0;
  window.kbdWatch.before = fields();
  return true;
}"""

_CHANGED_JS = """async (timeout) => {
  const watch = window.kbdWatch;
  const start = performance.now();
  for (;;) {
    watch.count(watch.observer.takeRecords());
    if (watch.changes > 0 || watch.fields() !== watch.before) return true;
    if (performance.now() - start > timeout) return false;
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}"""

# Tab is pressed from just before each control: a focus point (a span with tabindex -1)
# is put in front of the control, or of its parent if a span there cannot take focus
# (the control is a <summary>, say), focused and removed again; the browser then moves
# on from where it was. One to a few presses per control, where walking through the
# article would press Tab once for every link and formula on the page.
_TAB_FROM_JS = """(index) => {
  const el = document.querySelector(`[data-kbd-control="${index}"]`);
  if (!window.kbdFocused) {
    window.kbdFocused = [];
    document.addEventListener("focusin", event => window.kbdFocused.push(
        event.target.dataset.kbdControl === undefined
          ? "" : event.target.dataset.kbdControl),
        true);
  }
  if (document.activeElement) document.activeElement.blur();
  for (let before = el; before && before.parentElement; before = before.parentElement) {
    const start = document.createElement("span");
    start.tabIndex = -1;
    before.before(start);
    start.focus();
    const focused = document.activeElement === start;
    // the sequential focus navigation starting point stays where it was
    start.remove();
    if (focused) break;
  }
  window.kbdFocused = [];
}"""
# Tab presses allowed from that point to the control (links or buttons between them).
MAX_TABS = 3


def _tab_through(tab, controls: list[dict]) -> list[str]:
    """The controls that pressing Tab from just before them does not focus."""
    missed = []
    for control in controls:
        tab.evaluate(_TAB_FROM_JS, control["index"])
        for _ in range(MAX_TABS):
            tab.keyboard.press("Tab")
            if str(control["index"]) in tab.evaluate("() => window.kbdFocused"):
                break
        else:
            missed.append(control["html"])
    return missed


_KEYS = {
    "press": ["Enter"],
    "tick": ["Space"],
    "choose": ["ArrowDown", "ArrowUp"],
    "slide": ["ArrowRight", "ArrowLeft", "ArrowUp"],
    "type": ["1"],
}
# How long a key may take to show its effect (a widget redraws through its model, a
# block opens after a transition): waited for only when nothing has changed yet.
CHANGE_TIMEOUT_MS = 400


def _operate(tab, controls: list[dict]) -> list[str]:
    """The controls that, focused and given their keys, change nothing on the page."""
    inert = []
    # A chosen radio button is operated last: by then another of its group has been
    # chosen.
    for control in sorted(controls, key=lambda c: c.get("chosen", False)):
        if not tab.evaluate(_ARM_JS, control["index"]):  # hidden by an earlier control
            continue
        changed = False
        for key in _KEYS[control["kind"]]:
            tab.keyboard.press(key)
            if tab.evaluate(_CHANGED_JS, CHANGE_TIMEOUT_MS):
                changed = True
                break
        if not changed:
            inert.append(
                f"{control['kind']} ({', '.join(_KEYS[control['kind']])}): "
                f"{control['html']}"
            )
    return inert


@pytest.mark.parametrize("page", PAGES)
def test_controls_reached_with_tab(audit, page):
    """Pressing Tab from just before each control of the article focuses it."""
    missed = audit(page)["not_reached"]
    assert missed == [], f"{page}: controls never focused with Tab:\n  " + "\n  ".join(
        missed
    )


@pytest.mark.parametrize("page", PAGES)
def test_controls_operable_with_keyboard(audit, page):
    """Each control, focused and given its keys, changes the part of the page it belongs
    to."""
    inert = audit(page)["inert"]
    assert inert == [], (
        f"{page}: controls that did nothing from the keyboard:\n  " + "\n  ".join(inert)
    )


# Controls drawn alike on one page (the options of the self-check questions, the
# solutions' toggles) are copies of one component: in `make test` the first
# SAME_CONTROLS of each kind on a page are reached and operated, every control nightly
# (BROWSER_MATRIX=full).
SAME_CONTROLS = 2


def _controls_to_try(controls: list[dict]) -> list[dict]:
    """Every control with BROWSER_MATRIX=full, else the first SAME_CONTROLS of each
    kind of control drawn alike (chosen radio buttons kept: they are operated last)."""
    if FULL_MATRIX:
        return controls
    seen: dict[str, int] = {}
    chosen = []
    for control in controls:
        seen[control["sig"]] = seen.get(control["sig"], 0) + 1
        if seen[control["sig"]] <= SAME_CONTROLS:
            chosen.append(control)
    return chosen


# ----------------------------------------------------------------------------- one
# visit
def _audit(tab, page_path) -> dict:
    found = {
        "images": tab.evaluate(_IMAGES_JS, ARTICLE),
        "headings": tab.evaluate(_HEADINGS_JS, ARTICLE),
    }
    controls = tab.evaluate(_CONTROLS_JS, ARTICLE)
    found["controls"] = controls
    tried = _controls_to_try(controls)
    found["controls_tried"] = tried
    found["not_reached"] = _tab_through(tab, tried)
    found["inert"] = _operate(tab, tried)
    # open whatever is still collapsed (operating the controls toggled some of them),
    # then check the whole page once: what loaded, what the controls drew, what opened
    opened = tab.evaluate("""() => {
        document.querySelectorAll(".toggle-hidden > .admonition-title .toggle-button, "
                                  + "button.toggle-button.toggle-button-hidden")
          .forEach(b => b.click());
        document.querySelectorAll("details").forEach(d => { d.open = true; });
        return document.querySelectorAll(".toggle, details").length;
    }""")
    if opened:
        tab.wait_for_timeout(300)
    # until every running animation has ended, at most 5 s: the blocks' opening
    # transitions, and the answer box's flash after an answer is checked (its fill
    # fades in over 0.8 s). A busy machine draws them slowly, and axe would measure the
    # contrast of text on a fill still fading in.
    tab.evaluate(
        """() => Promise.race([
            Promise.all(document.getAnimations().map(a => a.finished.catch(() => 0))),
            new Promise(done => setTimeout(done, 5000)),
        ])"""
    )
    found["axe"] = _axe(tab)
    return found


# run by conftest's `visit`, on the one visit of each page (desktop, light mode)
register_check("a11y", _audit, order=50)


@pytest.fixture
def audit(visit):
    """``audit(page)``: the results of every check above, from the page's one visit."""
    return lambda page_path: visit(page_path)["a11y"]


def test_keyboard_check_finds_a_mouse_only_control(context, site_url):
    """The check can fail: a clickable div is neither reached by Tab nor operable by
    keys, while a real button next to it passes both checks, and so do two radio buttons
    drawn as ipywidgets draws them (no common name; choosing one unchecks the other), of
    which the first is chosen when the page loads."""
    tab = _open(context, site_url, PAGES[0])
    try:
        tab.evaluate(
            """(article) => {
            const root = article.map(s => document.querySelector(s)).find(Boolean);
            const box = document.createElement("section");
            const div = document.createElement("div");
            div.id = "mouse-only"; div.textContent = "Show answer";
            div.style.cursor = "pointer";
            div.addEventListener("click", () => { div.textContent = "Answer: 0.665"; });
            const button = document.createElement("button");
            button.id = "real-button"; button.textContent = "Show answer";
            button.addEventListener("click", () => {
                button.textContent = "Answer: 0.665"; });
            const radios = ["causal", "padding"].map((value, i) => {
                const radio = document.createElement("input");
                radio.type = "radio"; radio.value = value; radio.checked = i === 0;
                radio.setAttribute("aria-label", value);
                return radio;
            });
            radios.forEach(radio => radio.addEventListener("change",
                () => radios.forEach(other => { other.checked = other === radio; })));
            box.append(div, button, ...radios);
            root.prepend(box);
        }""",
            ARTICLE,
        )
        controls = [
            c
            for c in tab.evaluate(_CONTROLS_JS, ARTICLE)
            if re.search(
                r'id="(mouse-only|real-button)"|aria-label="(causal|padding)"',
                c["html"],
            )
        ]
        assert len(controls) == 4
        assert [html for html in _tab_through(tab, controls)] == [
            c["html"] for c in controls if "mouse-only" in c["html"]
        ]
        inert = _operate(tab, controls)
        assert len(inert) == 1 and "mouse-only" in inert[0]
    finally:
        tab.close()
