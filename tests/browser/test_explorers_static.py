"""Every explorer of chapters 3-11 works on the built website: no kernel, no network.

For each chapter page (Chromium, every request to another host blocked) the test moves every
control of the explorer to at least two positions, once with the mouse and once with the
keyboard (Tab into the control, arrow keys), and checks that

* the readout shows the numbers for that state, computed here independently (hand formulas,
  or attnlib's model run directly rather than through the explorer), and
* the drawing changed.

It also measures and prints each page's size (HTML plus images) and its time to interactive
(from navigation start until the explorer's controls and first state are drawn).
"""
from __future__ import annotations

import math
import os
import re
import time
from pathlib import Path

import pytest

from attnlib.explorers import LearnedExplorer
from sitepages import SITE

CHAPTERS = ["03_query_key_value", "04_scoring", "05_softmax", "06_values", "07_heads",
            "08_masks", "09_cost", "10_learned", "11_interpretability",
            "08b_order_and_position", "10b_transformer_layer"]
if not (SITE / "index.html").is_file():
    pytest.skip(f"no built site at {SITE}: run `make test-browser` (it builds first)",
                allow_module_level=True)

PAGE_BUDGET_BYTES = 3_000_000
TTI_BUDGET_S = 2.0


def softmax(s):
    m = max(s)
    e = [math.exp(x - m) for x in s]
    return [x / sum(e) for x in e]


def fmt(xs):
    return "[" + ", ".join(f"{x + 0.0:.4f}" for x in xs) + "]"


# --------------------------------------------------------------------------- expected numbers
# Each function takes the option index of every control and returns strings the readout
# must contain. The grids are the ones the chapters promise in their prose.
BANK_KEYS = [(2.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
BANK_VALUES = [(2.0, 0.0), (0.0, 2.0), (1.0, 1.0)]


def _query_key(direction, length):
    angle = math.radians(22.5 * direction)
    r = (0.0, 0.25, 0.5, 0.75, 1.0, math.sqrt(2), 2.0, 2.5, 3.0)[length]
    q = (r * math.cos(angle), r * math.sin(angle))
    w = softmax([(q[0] * k[0] + q[1] * k[1]) / math.sqrt(2) for k in BANK_KEYS])
    out = [sum(wj * v[i] for wj, v in zip(w, BANK_VALUES)) for i in range(2)]
    return [fmt(w), fmt(out)]


def _scale(d_k, temperature):
    dk = 2 ** d_k
    t = 10 ** ((temperature - 4) / 4)
    raw = [2 * math.sqrt(2), math.sqrt(2), 0.0]
    return [fmt(softmax([r / math.sqrt(dk) / t for r in raw]))]


def _softmax_chapter(rocks, shift):
    scores = [2 + shift - 4, 4 + shift - 4, rocks - 2 + shift - 4]
    w = softmax(scores)
    return [fmt(scores), fmt(w), fmt([w[0] + w[2], 2 * w[1] + w[2]])]


def _values_chapter(fisherman, net):
    w = softmax([fisherman - 2, net - 2, 0.0])
    return [fmt(w), fmt([sum(wj * v[i] for wj, v in zip(w, BANK_VALUES)) for i in range(2)])]


def _heads(fisherman, net):
    return [fmt(softmax([fisherman - 3, 1, 0])), fmt(softmax([1, net - 3, 0]))]


MASK_SENTENCES = ["The bank flooded after the storm .", "The cat sat on the mat .",
                  "I love building distributed systems"]


def _masks(kind, sentence):
    n = len(MASK_SENTENCES[sentence].split())
    allowed = {0: list(range(1, n + 1)), 1: [n] * n, 2: [n] * n + [0, 0]}[kind]
    return [f"keys allowed per query {allowed}"]


def _cost(n_index, heads_index):
    n = 2 ** (7 + n_index)
    heads = (1, 2, 4, 8, 12, 16)[heads_index]
    per_query = f"{heads * n * 4 / 2**20:,.3f} MiB"
    return [f"{heads * n * n:,}", f"{heads * n * n * 4 / 2**20:,.3f} MiB", per_query,
            f"{4 * heads * n * n * 64:,}"]


# the explorer's own presets (text, not a computed value)
LEARNED_SENTENCES = LearnedExplorer.SENTENCES


def _learned(sentence):
    """The chapter's model (trained from seed 0), run directly on the sentence."""
    from attnlib.context_task import SENSES, encode_sentences
    from attnlib.training import forward, train_context_classifier

    model = _cached("learned", lambda: train_context_classifier(seed=0))
    batch = encode_sentences([LEARNED_SENTENCES[sentence]])
    result = forward(model, batch)
    words = batch.words(0)
    ambiguous = words[int(batch.query_index[0])]
    probs = result.probs[0]
    sense = SENSES[ambiguous][int(probs.argmax())]
    return [fmt(result.query_weights[0, :len(words)]), f"{sense} (p = {probs.max():.4f})"]


MODEL_SENTENCES = ["The fisherman repaired his net beside the bank.",
                   "The cashier counted the money inside the bank."]


def _model(sentence, layer, head):
    """all-MiniLM-L6-v2 run directly: the mean weight that the queries give [CLS]."""
    from attnlib import minilm

    out = _cached(f"minilm{sentence}", lambda: minilm.forward(MODEL_SENTENCES[sentence]))
    weights = out.attention[layer, head]
    return [" | ".join(out.tokens), f"{round(float(weights[:, 0].mean()), 4) + 0.0:.4f}"]


def _position(t_index, k_index, pair):
    """Sinusoidal encodings by hand, d = 16: PE(t) . PE(t + k) = sum_i cos(k theta_i)."""
    t, k = 5 * t_index, (0, 1, 2, 3, 5, 8, 13, 20, 30)[k_index]
    theta = [10000 ** (-2 * i / 16) for i in range(8)]
    pair_t = [math.sin(t * theta[pair]), math.cos(t * theta[pair])]
    pair_tk = [math.sin((t + k) * theta[pair]), math.cos((t + k) * theta[pair])]
    dot = sum(math.cos(k * th) for th in theta)
    return [f"{t}, {k}, {pair}"] + _plain([k * theta[pair], dot] + pair_t + pair_tk)


def _plain(xs):
    return [f"{round(x, 4) + 0.0:.4f}" for x in xs]


LAYER_SENTENCES = ["The dog bit the man.", "The man bit the dog."] + MODEL_SENTENCES


def _layer(sentence, layer):
    """all-MiniLM-L6-v2 run directly: the mean cosine of each token's input and output."""
    import numpy as np

    from attnlib import minilm

    out = _cached(f"layer{sentence}", lambda: minilm.forward(LAYER_SENTENCES[sentence]))
    x, y = out.hidden_states[layer], out.hidden_states[layer + 1]              # (L, 384)
    cos = (x * y).sum(-1) / (np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1))
    return [" | ".join(out.tokens), f"{round(float(cos.mean()), 4) + 0.0:.4f}"]


_CACHE: dict = {}


def _cached(key, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


EXPECTED = {
    "03_query_key_value": _query_key, "04_scoring": _scale, "05_softmax": _softmax_chapter,
    "06_values": _values_chapter, "07_heads": _heads, "08_masks": _masks, "09_cost": _cost,
    "10_learned": _learned, "11_interpretability": _model,
    "08b_order_and_position": _position, "10b_transformer_layer": _layer,
}


# --------------------------------------------------------------------------- page helpers
_CONTROLS_JS = """() => {
  const state = document.querySelector('.explorer-state');
  if (!state) return null;
  const box = state.closest('.widget-vbox');
  return box ? box.querySelectorAll(':scope > .widget-hslider, :scope > .widget-dropdown,'
                                    + ':scope > .widget-radio').length : null;
}"""


def _explorer(page):
    state = page.locator(".explorer-state").first
    return state.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")


def _visible_state(page):
    state = page.locator(".explorer-state:visible")
    assert state.count() == 1, f"{state.count()} states visible at once"
    return state.first.inner_html()


def _readout(html: str) -> str:
    """The readout's text, one space between words (numpy pads numbers to equal widths)."""
    text = re.sub("<[^>]+>", " ", html[html.index("explorer-readout"):])
    return re.sub(r"\[ ", "[", re.sub(r"\s+", " ", text))


def _drawing(html: str) -> str:
    return html[: html.index("explorer-readout")]


def _index(control) -> int:
    """The option index a control shows now."""
    kind = control.get_attribute("class")
    if "widget-hslider" in kind:
        return int(float(control.locator(".noUi-handle").get_attribute("aria-valuenow")))
    if "widget-dropdown" in kind:
        return control.locator("select").evaluate("s => s.selectedIndex")
    return control.locator("input").evaluate_all("xs => xs.findIndex(x => x.checked)")


def _n_options(control) -> int:
    kind = control.get_attribute("class")
    if "widget-hslider" in kind:
        return int(float(control.locator(".noUi-handle").get_attribute("aria-valuemax"))) + 1
    if "widget-dropdown" in kind:
        return control.locator("option").count()
    return control.locator("input").count()


def _move_with_mouse(page, control, target: int, n: int):
    kind = control.get_attribute("class")
    if "widget-hslider" in kind:
        track = control.locator(".noUi-target")
        track.scroll_into_view_if_needed()
        box = track.bounding_box()
        x = box["x"] + box["width"] * target / (n - 1)
        page.mouse.click(min(max(x, box["x"] + 1), box["x"] + box["width"] - 1),
                         box["y"] + box["height"] / 2)
    elif "widget-dropdown" in kind:
        # a native <select>: Playwright chooses the option as a click in its list would
        control.locator("select").select_option(index=target)
    else:
        control.locator(".widget-radio-box label").nth(target).click()


def _move_with_keyboard(page, control, steps: int):
    """Focus the control (as Tab would) and press the arrow key ``steps`` times."""
    kind = control.get_attribute("class")
    target = (control.locator(".noUi-handle") if "widget-hslider" in kind
              else control.locator("select") if "widget-dropdown" in kind
              else control.locator("input:checked"))
    target.focus()
    key = "ArrowRight" if "widget-hslider" in kind else "ArrowDown"
    key = key if steps > 0 else {"ArrowRight": "ArrowLeft", "ArrowDown": "ArrowUp"}[key]
    for _ in range(abs(steps)):
        page.keyboard.press(key)


def _wait_for_change(page, before: str, timeout: float = 5.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        html = _visible_state(page)
        if html != before:
            return html
        page.wait_for_timeout(50)
    return _visible_state(page)


def _page_bytes(path: Path, html: str) -> int:
    total = len(html.encode("utf-8"))
    for src in set(re.findall(r'<img[^>]+src="([^"]+)"', html)):
        if src.startswith("data:"):
            continue
        file = (path.parent / src.split("#")[0]).resolve()
        if file.is_file():
            total += file.stat().st_size
    return total


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_explorer_moves_on_the_static_page(context, site_url, chapter):
    path = SITE / "chapters" / f"{chapter}.html"
    html = path.read_text(encoding="utf-8")
    size = _page_bytes(path, html)
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{site_url}chapters/{chapter}.html", wait_until="commit")
        page.wait_for_function(_CONTROLS_JS, timeout=60_000)
        page.locator(".explorer-state:visible").first.wait_for(state="visible")
        tti = page.evaluate("performance.now()") / 1000
        dcl = page.evaluate("performance.getEntriesByType('navigation')[0]"
                            ".domContentLoadedEventEnd") / 1000
        load = os.getloadavg()[0]
        print(f"\n{chapter}: page {size / 1e6:.2f} MB (HTML + images), interactive after "
              f"{tti:.2f} s (the page's own HTML parsed after {dcl:.2f} s; load average "
              f"{load:.1f} on {os.cpu_count()} cores)")
        assert size < PAGE_BUDGET_BYTES, f"{chapter}: {size:,} bytes"

        explorer = _explorer(page)
        controls = explorer.locator(":scope > .widget-hslider, :scope > .widget-dropdown, "
                                    ":scope > .widget-radio")
        assert controls.count() >= 1
        for k in range(controls.count()):
            control = controls.nth(k)
            label = control.locator("label.widget-label").first.inner_text().strip()
            assert label, f"{chapter}: control {k} has no label"
            n = _n_options(control)
            start = _index(control)
            if "widget-hslider" in (control.get_attribute("class") or ""):
                assert n >= 6, f"{chapter}: slider {label!r} has only {n} positions"
                handle = control.locator(".noUi-handle")
                assert handle.get_attribute("tabindex") == "0"   # reachable with Tab
            # the mouse: to the far end from the start
            target = 0 if start >= n / 2 else n - 1
            for how, move in (("mouse", lambda: _move_with_mouse(page, control, target, n)),
                              ("keyboard", lambda: _move_with_keyboard(
                                  page, control, 1 if target == 0 else -1))):
                before = _visible_state(page)
                move()
                after = _wait_for_change(page, before)
                index = [_index(controls.nth(j)) for j in range(controls.count())]
                expected_index = target if how == "mouse" else (1 if target == 0 else n - 2)
                assert index[k] == expected_index, (chapter, label, how, index)
                assert _drawing(after) != _drawing(before), (
                    f"{chapter}: the drawing did not change when {label!r} moved ({how})")
                readout = _readout(after)
                for number in EXPECTED[chapter](*index):
                    assert number in readout, (chapter, label, how, index, number, readout)
        # Tab moves from one control to the next (keyboard reachable, in order)
        if controls.count() > 1:
            _move_with_keyboard(page, controls.nth(0), 0)
            for _ in range(3):      # a slider's own number box may take one Tab first
                page.keyboard.press("Tab")
                if not controls.nth(0).evaluate("el => el.contains(document.activeElement)"):
                    break
            assert controls.nth(1).evaluate("el => el.contains(document.activeElement)"), (
                f"{chapter}: Tab did not reach the second control")
        assert errors == []
        if load <= (os.cpu_count() or 1):
            assert tti < TTI_BUDGET_S, f"{chapter}: interactive after {tti:.2f} s"
    finally:
        page.close()
