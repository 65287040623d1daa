"""Every explorer of chapters 3-11 works on the built website: no kernel, no network.

On each chapter page's visit in dark mode on a desktop (conftest's ``visit``; Chromium,
every request to another host blocked) the check moves every control of the explorer to
at least two positions, once with the mouse and once with the keyboard (Tab into the
control, arrow keys), and checks that

* the readout shows the numbers for that state, computed here independently (hand
  formulas, or attnlib's model run directly rather than through the explorer), and
* the drawing changed.

The check of each heat map: pointing at a cell and moving through the cells with the
arrow keys (the map focused) shows that cell's value, which is read from the stored
matrix and compared with the text alternative's largest values. How soon the pages are
usable is measured by ``make bench-pages`` (never asserted as a time).

Every drawing's text alternative (its ``<title>``, what a screen reader reads) must
state the numbers it shows: it is checked against the same independently computed
numbers where the drawing shows them, and must change when the state does.
"""

from __future__ import annotations

import html
import math
import re
import time

import pytest
from learned_and_computed_explorer import LearnedExplorer
from sitepages import SITE, explorer_pages, register_check

CHAPTERS = [
    "how_attention_works/query_key_value/query_key_value",
    "how_attention_works/scoring/scoring",
    "how_attention_works/softmax/softmax",
    "how_attention_works/values/values",
    "how_attention_works/heads/heads",
    "how_attention_works/masks/masks",
    "attention_in_practice/cost/cost",
    "attention_in_practice/learned_and_computed/learned_and_computed",
    "reading_attention/interpretability/interpretability",
    "how_attention_works/order_and_position/order_and_position",
    "attention_in_practice/transformer_layer/transformer_layer",
    "attention_that_writes/language_model/language_model",
    "attention_that_writes/induction_heads/induction_heads",
]
if not (SITE / "index.html").is_file():
    pytest.skip(
        f"no built site at {SITE}: run `make test-browser` (it builds first)",
        allow_module_level=True,
    )


def softmax(s):
    m = max(s)
    e = [math.exp(x - m) for x in s]
    return [x / sum(e) for x in e]


def fmt(xs):
    return "[" + ", ".join(f"{x + 0.0:.4f}" for x in xs) + "]"


# --------------------------------------------------------------------------- expected
# numbers Each function takes the option index of every control and returns two lists of
# strings: what the readout must contain, and what the drawings' text alternatives must
# contain (numbers rounded to 2 decimals, as the drawings show them). The grids are the
# ones the chapters promise in their prose.
BANK_KEYS = [(2.0, 0.0), (1.0, 1.0), (0.0, 1.0)]
BANK_VALUES = [(2.0, 0.0), (0.0, 2.0), (1.0, 1.0)]


def two(x) -> str:
    """A number as the drawings and their text alternatives show it."""
    return f"{x + 0.0:.2f}".replace("-0.00", "0.00")


def _query_key(direction, length):
    angle = math.radians(22.5 * direction)
    r = (0.0, 0.25, 0.5, 0.75, 1.0, math.sqrt(2), 2.0, 2.5, 3.0)[length]
    q = (r * math.cos(angle), r * math.sin(angle))
    w = softmax([(q[0] * k[0] + q[1] * k[1]) / math.sqrt(2) for k in BANK_KEYS])
    out = [sum(wj * v[i] for wj, v in zip(w, BANK_VALUES)) for i in range(2)]
    alt = [f"(w={two(x)})" for x in w] + [
        f"query to ({two(q[0])}, {two(q[1])})",
        f"output to ({two(out[0])}, {two(out[1])})",
    ]
    return [fmt(w), fmt(out)], alt


def _scale(d_k, temperature):
    dk = 2**d_k
    t = 10 ** ((temperature - 4) / 4)
    raw = [2 * math.sqrt(2), math.sqrt(2), 0.0]
    w = softmax([r / math.sqrt(dk) / t for r in raw])
    return [fmt(w)], [f") {two(x)}" for x in w]


def _softmax_chapter(rocks, shift):
    scores = [2 + shift - 4, 4 + shift - 4, rocks - 2 + shift - 4]
    w = softmax(scores)
    out = [w[0] + w[2], 2 * w[1] + w[2]]
    return (
        [fmt(scores), fmt(w), fmt(out)],
        [f") {two(x)}" for x in w] + [f"out[{i}] {two(x)}" for i, x in enumerate(out)],
    )


def _values_chapter(fisherman, net):
    w = softmax([fisherman - 2, net - 2, 0.0])
    out = [sum(wj * v[i] for wj, v in zip(w, BANK_VALUES)) for i in range(2)]
    return (
        [fmt(w), fmt(out)],
        [f") {two(x)}" for x in w] + [f"out[{i}] {two(x)}" for i, x in enumerate(out)],
    )


def _heads(fisherman, net):
    heads = [softmax([fisherman - 3, 1, 0]), softmax([1, net - 3, 0])]
    words = ("fisherman", "net", "bank")
    return (
        [fmt(w) for w in heads],
        [
            f"head {h}: " + ", ".join(f"{t} {two(x)}" for t, x in zip(words, w))
            for h, w in enumerate(heads)
        ],
    )


MASK_SENTENCES = [
    "The bank flooded after the storm .",
    "The cat sat on the mat .",
    "I love building distributed systems",
]


def _masks(kind, sentence):
    words = MASK_SENTENCES[sentence].split()
    n = len(words)
    allowed = {0: list(range(1, n + 1)), 1: [n] * n, 2: [n] * n + [0, 0]}[kind]
    columns = len(allowed)
    alt = [
        f"{word}: "
        + (
            f"all {columns} keys"
            if a == columns
            else f"{a} key{'s' if a > 1 else ''} ({', '.join(words[:a])})"
        )
        for word, a in zip(words, allowed)
    ]
    return [f"keys allowed per query {allowed}"], alt


def _cost(n_index, heads_index):
    n = 2 ** (7 + n_index)
    heads = (1, 2, 4, 8, 12, 16)[heads_index]
    per_query = f"{heads * n * 4 / 2**20:,.3f} MiB"
    plain = heads * n * n * 4 / 2**20
    shown = (
        f"{plain:,.0f}"
        if plain >= 1000
        else f"{plain:.4g}"
        if plain >= 1
        else f"{plain:.3g}"
    )
    return (
        [
            f"{heads * n * n:,}",
            f"{plain:,.3f} MiB",
            per_query,
            f"{4 * heads * n * n * 64:,}",
        ],
        [f"{shown} MiB at {n:,}", f"{heads} head(s)"],
    )


# the explorer's own presets (text, not a computed value)
LEARNED_SENTENCES = LearnedExplorer.SENTENCES


def _learned(sentence):
    """The chapter's model (trained from seed 0), run directly on the sentence."""
    from attnlib.data.context_task import SENSES, encode_sentences
    from book_support.experiments.context_classifier import (
        forward,
        train_context_classifier,
    )

    model = _cached("learned", lambda: train_context_classifier(seed=0))
    batch = encode_sentences([LEARNED_SENTENCES[sentence]])
    result = forward(model, batch)
    words = batch.words(0)
    ambiguous = words[int(batch.query_index[0])]
    probs = result.probs[0]
    sense = SENSES[ambiguous][int(probs.argmax())]
    weights = result.query_weights[0, : len(words)]
    return (
        [fmt(weights), f"{sense} (p = {probs.max():.4f})"],
        [", ".join(f"{t} {two(x)}" for t, x in zip(words, weights))],
    )


MODEL_SENTENCES = [
    "The fisherman repaired his net beside the bank.",
    "The cashier counted the money inside the bank.",
]


def _model(sentence, layer, head):
    """all-MiniLM-L6-v2 run directly: the mean weight that the queries give [CLS], and
    the key that the first query ([CLS]) weighs most."""
    from attnlib.models import minilm

    out = _cached(
        f"minilm{sentence}", lambda: minilm.forward(MODEL_SENTENCES[sentence])
    )
    weights = out.attention[layer, head]
    top = int(weights[0].argmax())
    return (
        [" | ".join(out.tokens), f"{round(float(weights[:, 0].mean()), 4) + 0.0:.4f}"],
        [
            f"layer {layer} head {head}",
            f"[CLS]: {out.tokens[top]} {two(weights[0, top])}",
        ],
    )


def _position(t_index, k_index, pair):
    """Sinusoidal encodings by hand, d = 16: PE(t) . PE(t + k) = sum_i cos(k
    theta_i)."""
    t, k = 5 * t_index, (0, 1, 2, 3, 5, 8, 13, 20, 30)[k_index]
    theta = [10000 ** (-2 * i / 16) for i in range(8)]
    pair_t = [math.sin(t * theta[pair]), math.cos(t * theta[pair])]
    pair_tk = [math.sin((t + k) * theta[pair]), math.cos((t + k) * theta[pair])]
    dot = sum(math.cos(k * th) for th in theta)
    return (
        [f"{t}, {k}, {pair}"] + _plain([k * theta[pair], dot] + pair_t + pair_tk),
        [
            f"PE(t = {t}), pair {pair} to ({two(pair_t[0])}, {two(pair_t[1])})",
            f"PE(t + k = {t + k}), pair {pair} to "
            f"({two(pair_tk[0])}, {two(pair_tk[1])})",
        ],
    )


def _plain(xs):
    return [f"{round(x, 4) + 0.0:.4f}" for x in xs]


LAYER_SENTENCES = ["The dog bit the man.", "The man bit the dog."] + MODEL_SENTENCES


def _layer(sentence, layer):
    """all-MiniLM-L6-v2 run directly: the mean cosine of each token's input and
    output."""
    import numpy as np

    from attnlib.models import minilm

    out = _cached(f"layer{sentence}", lambda: minilm.forward(LAYER_SENTENCES[sentence]))
    x, y = out.hidden_states[layer], out.hidden_states[layer + 1]  # (L, 384)
    cos = (x * y).sum(-1) / (np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1))
    return (
        [" | ".join(out.tokens), f"{round(float(cos.mean()), 4) + 0.0:.4f}"],
        [", ".join(f"{t} {two(c)}" for t, c in zip(out.tokens, cos))],
    )


def _next_character(prompt_index, temperature_index):
    """The stored language model run directly, the temperature applied by hand: the
    most likely next characters and the first one's probability."""
    import numpy as np

    from attnlib.models import language_model
    from book_support.experiments import lm_runs
    from book_support.figures.explorers.language_model import NextTokenExplorer

    params, config, tokenizer, _ = _cached("lm", lm_runs.load_main)
    prompt = NextTokenExplorer.PROMPTS[prompt_index]
    t = NextTokenExplorer.TEMPERATURES[temperature_index]
    ids = tokenizer.encode(prompt)[-config.context :]
    logits, _ = language_model.forward(params, config, ids[None])
    z = logits[0, -1]  # (V,)
    if t == 0:
        p = (z == z.max()).astype(float)
    else:
        p = np.exp((z - z.max()) / t)
    p = p / p.sum()
    top = np.argsort(-p, kind="stable")[:8]
    shown = [
        {" ": "\u2423", "\n": "\u23ce"}.get(tokenizer.chars[i], tokenizer.chars[i])
        for i in top
    ]
    # as the read-out's HTML writes them (an ampersand escaped)
    return [html.escape(" ".join(shown), quote=False), f"{p[top[0]]:.4f}"], []


def _induction(sequence, layer, head):
    """The stored induction model (seed 0) run directly on the chapter's evaluation
    sequences: the head's previous-token and induction scores, by hand from its
    weights."""
    import numpy as np

    from book_support.experiments import induction

    config, models, _ = _cached("induction", induction.load)
    sequences = _cached(
        "induction-sequences",
        lambda: induction.make_sequences(
            np.random.default_rng(induction.EVAL_SEED), 500
        ),
    )
    tokens = sequences[sequence][None]  # (1, 2h)
    half = tokens.shape[1] // 2
    _, weights = induction.forward(models[0], config, tokens[:, :-1])
    w = weights[layer][0, head]  # (2h - 1, 2h - 1)
    previous = np.mean([w[i, i - 1] for i in range(1, len(w))])
    copying = np.mean([w[i, i - half + 1] for i in range(half, len(w))])
    # the readout shows 3 decimals (the model computes in float32: its 7th digit
    # differs between machines); each value shown is far from a rounding edge
    for x in (previous, copying):
        assert abs((x * 1e3) % 1 - 0.5) > 1e-2, (sequence, layer, head, x)
    return [f"{round(previous, 3) + 0.0:.3f}", f"{round(copying, 3) + 0.0:.3f}"], []


_CACHE: dict = {}


def _cached(key, make):
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


EXPECTED = {
    "how_attention_works/query_key_value/query_key_value": _query_key,
    "how_attention_works/scoring/scoring": _scale,
    "how_attention_works/softmax/softmax": _softmax_chapter,
    "how_attention_works/values/values": _values_chapter,
    "how_attention_works/heads/heads": _heads,
    "how_attention_works/masks/masks": _masks,
    "attention_in_practice/cost/cost": _cost,
    "attention_in_practice/learned_and_computed/learned_and_computed": _learned,
    "reading_attention/interpretability/interpretability": _model,
    "how_attention_works/order_and_position/order_and_position": _position,
    "attention_in_practice/transformer_layer/transformer_layer": _layer,
    "attention_that_writes/language_model/language_model": _next_character,
    "attention_that_writes/induction_heads/induction_heads": _induction,
}


# --------------------------------------------------------------------------- page
# helpers
CONTROL_CLASSES = (
    ":scope > .widget-hslider, :scope > .widget-dropdown, :scope > .widget-select"
)


def _explorer(page):
    state = page.locator(".explorer-state:visible").first
    return state.locator("xpath=ancestor::div[contains(@class,'widget-vbox')][1]")


def _visible_state(page):
    state = page.locator(".explorer-state:visible")
    assert state.count() == 1, f"{state.count()} states visible at once"
    return state.first.inner_html()


def _readout(html: str) -> str:
    """The readout's text, one space between words (numpy pads numbers to equal
    widths)."""
    text = re.sub("<[^>]+>", " ", html[html.index("explorer-readout") :])
    return re.sub(r"\[ ", "[", re.sub(r"\s+", " ", text))


def _drawing(html: str) -> str:
    return html[: html.index("explorer-readout")]


def _alt_texts(page) -> list[str]:
    """The text alternative of every drawing of the visible state, as a screen reader
    gets it (the accessible name Chromium computes is the ``<title>``; read here as its
    text)."""
    return page.locator(".explorer-state:visible svg[role='img']").evaluate_all(
        "svgs => svgs.map(s => (s.querySelector(':scope > title') || {}).textContent "
        "|| '')"
    )


def _kind(control) -> str:
    kind = control.get_attribute("class") or ""
    return (
        "slider"
        if "widget-hslider" in kind
        else "dropdown"
        if "widget-dropdown" in kind
        else "list"
    )


def _focus_target(control):
    """The element of a control that takes the keyboard focus."""
    return control.locator(".noUi-handle" if _kind(control) == "slider" else "select")


def _index(control) -> int:
    """The option index a control shows now."""
    if _kind(control) == "slider":
        return int(
            float(control.locator(".noUi-handle").get_attribute("aria-valuenow"))
        )
    return control.locator("select").evaluate("s => s.selectedIndex")


def _n_options(control) -> int:
    if _kind(control) == "slider":
        return (
            int(float(control.locator(".noUi-handle").get_attribute("aria-valuemax")))
            + 1
        )
    return control.locator("option").count()


def _move_with_mouse(page, control, target: int, n: int):
    kind = _kind(control)
    if kind == "slider":
        track = control.locator(".noUi-target")
        track.scroll_into_view_if_needed()
        box = track.bounding_box()
        x = box["x"] + box["width"] * target / (n - 1)
        page.mouse.click(
            min(max(x, box["x"] + 1), box["x"] + box["width"] - 1),
            box["y"] + box["height"] / 2,
        )
    elif kind == "dropdown":
        # a native drop-down: its list is drawn by the browser, outside the page;
        # Playwright chooses the option as a click in that list would
        control.locator("select").select_option(index=target)
    else:
        # a list box: every option is on the page; click it
        option = control.locator("option").nth(target)
        option.scroll_into_view_if_needed()
        box = option.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _tab_to(page, explorer, control) -> int:
    """Move the keyboard focus to ``control`` with the Tab key alone, starting just
    before the explorer's first control; returns how many Tabs it took."""
    explorer.evaluate("box => { box.tabIndex = -1; box.focus(); }")
    for presses in range(1, 13):
        page.keyboard.press("Tab")
        if _focus_target(control).evaluate("el => el === document.activeElement"):
            explorer.evaluate("box => box.removeAttribute('tabindex')")
            return presses
    raise AssertionError(
        "Tab never reached the control: "
        + control.evaluate("el => el.outerHTML.slice(0, 200)")
    )


def _move_with_keyboard(page, explorer, control, steps: int):
    """Tab to the control, then press the arrow key ``steps`` times (negative: back)."""
    _tab_to(page, explorer, control)
    key = "ArrowRight" if _kind(control) == "slider" else "ArrowDown"
    key = key if steps > 0 else {"ArrowRight": "ArrowLeft", "ArrowDown": "ArrowUp"}[key]
    for _ in range(abs(steps)):
        page.keyboard.press(key)


def _wait_for_index(control, expected: int, timeout: float = 10.0) -> None:
    """Wait until the control shows option ``expected`` (a busy machine may take a
    moment to finish a slider's tap animation); the caller asserts it."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and _index(control) != expected:
        time.sleep(0.05)


def _wait_for_change(page, before: str, timeout: float = 5.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        html = _visible_state(page)
        if html != before:
            return html
        page.wait_for_timeout(50)
    return _visible_state(page)


def _alt_problems(alts: list[str]) -> list[str]:
    return [
        f"text alternative {a!r} does not say what the drawing shows with its numbers"
        for a in alts
        if len(re.findall(r"[A-Za-z]{2,}", a)) < 4 or not re.search(r"\d", a)
    ]


def _check_explorer(page, chapter: str) -> None:
    """Every control of the page's explorer moved with the mouse and the keyboard;
    raises AssertionError with what went wrong."""
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.evaluate("() => window.scrollTo(0, 0)")
    explorer = _explorer(page)
    controls = explorer.locator(CONTROL_CLASSES)
    assert controls.count() >= 1
    alts = _alt_texts(page)
    assert alts and _alt_problems(alts) == [], (chapter, alts)
    for k in range(controls.count()):
        control = controls.nth(k)
        label = control.locator("label.widget-label").first.inner_text().strip()
        assert label, f"{chapter}: control {k} has no label"
        n = _n_options(control)
        start = _index(control)
        if _kind(control) == "slider":
            assert n >= 6, f"{chapter}: slider {label!r} has only {n} positions"
            # a screen reader names the handle by its label and reads the option
            # shown
            handle = control.locator(".noUi-handle")
            page.wait_for_function(
                "h => h.getAttribute('aria-valuetext')",
                arg=handle.element_handle(),
                timeout=5000,
            )
            name = handle.evaluate(
                "h => (document.getElementById("
                "h.getAttribute('aria-labelledby')) || {}).textContent"
            )
            assert name == label, (chapter, label, name)
            assert (
                handle.get_attribute("aria-valuetext")
                == control.locator(".widget-readout").inner_text().strip()
            )
        assert _focus_target(control).get_attribute("tabindex") in (None, "0")
        # the mouse: to the far end from the start; then one step back with the
        # keyboard
        target = 0 if start >= n / 2 else n - 1
        for how, move in (
            ("mouse", lambda: _move_with_mouse(page, control, target, n)),
            (
                "keyboard",
                lambda: _move_with_keyboard(
                    page, explorer, control, 1 if target == 0 else -1
                ),
            ),
        ):
            before, alts_before = _visible_state(page), _alt_texts(page)
            expected_index = target if how == "mouse" else (1 if target == 0 else n - 2)
            move()
            _wait_for_index(control, expected_index)
            after = _wait_for_change(page, before)
            index = [_index(controls.nth(j)) for j in range(controls.count())]
            assert index[k] == expected_index, (chapter, label, how, index)
            assert _drawing(after) != _drawing(before), (
                f"{chapter}: the drawing did not change when {label!r} moved ({how})"
            )
            readout = _readout(after)
            numbers, alt_numbers = EXPECTED[chapter](*index)
            for number in numbers:
                assert number in readout, (
                    chapter,
                    label,
                    how,
                    index,
                    number,
                    readout,
                )
            alts = _alt_texts(page)
            assert _alt_problems(alts) == [], (chapter, alts)
            assert alts != alts_before, (
                f"{chapter}: the text alternative did not change when {label!r} moved"
            )
            for number in alt_numbers:
                assert any(number in a for a in alts), (
                    chapter,
                    label,
                    how,
                    index,
                    number,
                    alts,
                )
    # Tab moves from one control to the next (keyboard reachable, in order)
    for k in range(1, controls.count()):
        _tab_to(page, explorer, controls.nth(k - 1))
        for _ in range(3):  # a slider's own readout may take one Tab first
            page.keyboard.press("Tab")
            if _focus_target(controls.nth(k)).evaluate(
                "el => el === document.activeElement"
            ):
                break
        assert _focus_target(controls.nth(k)).evaluate(
            "el => el === document.activeElement"
        ), f"{chapter}: Tab did not go from control {k} to control {k + 1}"
    _check_heatmaps(page, chapter)
    assert errors == []


def _check_heatmaps(page, chapter: str) -> None:
    """Each heat map of the visible state tells the value of a cell under the pointer
    and of the cells reached with the arrow keys, as its text alternative states
    them."""
    maps = page.locator(".explorer-state:visible .explorer-heatmap")
    for k in range(maps.count()):
        heatmap = maps.nth(k)
        heatmap.scroll_into_view_if_needed()
        data = heatmap.evaluate(
            """m => ({values: m.dataset.values.split(";").map(r => r.split(",")),
                     rows: m.dataset.rows.split("|"), cols: m.dataset.cols.split("|"),
                     kind: m.dataset.kind, grid: m.dataset.grid.split(" ").map(Number),
                     alt: m.querySelector("svg > title").textContent})"""
        )

        def said(i, j):
            v = data["values"][i][j]
            value = (
                ("may attend" if v == "1" else "masked")
                if data["kind"] == "mask"
                else v
            )
            return f"query {data['rows'][i]}, key {data['cols'][j]}: {value}"

        heatmap.focus()
        cell = heatmap.locator(".heatmap-cell")
        cell.wait_for(timeout=3000)
        assert cell.inner_text() == said(0, 0), (chapter, cell.inner_text())
        page.keyboard.press("ArrowRight")
        page.keyboard.press("ArrowDown")
        assert cell.inner_text() == said(1, 1), (chapter, cell.inner_text())
        # the pointer over the last cell of the last row
        left, top, size, width = data["grid"]
        box = heatmap.locator("svg").bounding_box()
        scale = box["width"] / width
        rows, cols = len(data["values"]), len(data["values"][0])
        page.mouse.move(
            box["x"] + (left + (cols - 0.5) * size) * scale,
            box["y"] + (top + (rows - 0.5) * size) * scale,
        )
        assert cell.inner_text() == said(rows - 1, cols - 1), (
            chapter,
            cell.inner_text(),
        )
        if data["kind"] == "value":
            # the row's largest value, as the text alternative states it
            first = re.split(r"\(at most \d+\): ", data["alt"], maxsplit=1)[1]
            cells = first.split(";")[0].split(": ", 1)[1]
            name, value = cells.split(", ")[0].rsplit(" ", 1)
            j = data["cols"].index(name)
            assert data["values"][0][j] == value, (chapter, first)


def _explorer_check(page, page_path) -> dict | None:
    """Run on the page's visit: None on a page without an explorer, else
    ``{"failure": None}`` if the explorer works, or what failed."""
    # chapters/<part>/<topic>/<topic>.html -> "<part>/<topic>/<topic>"
    chapter = page_path.removeprefix("chapters/").removesuffix(".html")
    if chapter not in EXPECTED:
        return None
    try:
        _check_explorer(page, chapter)
    except AssertionError as error:
        return {"failure": f"{type(error).__name__}: {error}"}
    return {"failure": None}


register_check("explorer_moves", _explorer_check, profiles=("desktop-dark",), order=60)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_explorer_moves_on_the_static_page(visit, chapter):
    page = f"chapters/{chapter}.html"
    result = visit(page, "desktop-dark")["explorer_moves"]
    # None: the check took the page for one without an explorer and did not run
    assert result is not None, f"{chapter}: the explorer check did not run"
    assert result["failure"] is None, f"{chapter}: {result['failure']}"


def test_every_explorer_page_is_tested():
    """Every built page with a precomputed explorer is in CHAPTERS (a new one is not
    missed)."""
    # chapters/<part>/<topic>/<topic>.html -> "<part>/<topic>/<topic>"
    found = {page[len("chapters/") : -len(".html")] for page in explorer_pages()}
    assert found == set(CHAPTERS)
