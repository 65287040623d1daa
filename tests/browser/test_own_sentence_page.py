"""The reader's own sentence on the interpretability chapter's page, in the browser,
offline (every request to another host blocked: conftest's ``context``).

* Before the reader asks, the page loads nothing of live code but its small script and
  style sheet, and nothing of the model; the form is there, labelled, in the page's
  colours in dark mode too.
* Pressing "Show its attention" makes the page live and draws the maps of the typed
  sentence for the chosen layer and head: two heat maps with their text alternative
  (role="img" and a <title>), hover values equal to Hugging Face's attention weights
  (tests/data/minilm_reference.npz) to the two decimals shown, a value read out with
  the keyboard, and the table quoting the sentence. The page's Python gives that head's
  weights equal to attnlib's outside the browser within 1e-5.
* Markup typed as a sentence is shown as text, never run.
* Bad input (empty, a character the tokenizer does not know, too long for the model's
  512 positions) gets its message in the page.
* The model's files are downloaded once: a second visit in the same browser profile
  reads them from the site's Cache Storage (no request for them reaches the site) and
  draws the same maps.

The first two visits share one empty browser profile (``module_context``): the visit
that draws the maps is also the first visit whose download is kept, so Python and the
model load twice in this file, not three times. The weights-only path (a cell that
reads the weights but not the tokenizer) is checked nightly (``make test-all``).

The Python side is tests/test_own_sentence.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlparse

import numpy as np
import pytest
from live_support import live_manifest, watched_page
from sitepages import FULL_MATRIX

# both visits of the shared profile run in one worker, in this file's order
pytestmark = pytest.mark.xdist_group("own_sentence_page")

PAGE = "chapters/reading_attention/interpretability/interpretability.html"
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "minilm_reference.npz"


# the model's files that the page's worker keeps in the site's Cache Storage
_KEPT_JS = """async () => (await (await caches.open('attn-live')).keys())
  .map(r => new URL(r.url).pathname).filter(p => p.includes('/live/model/'))"""
# where the page's Python reads the weights from (a link into the kept copies, or not)
_WEIGHTS_FROM = (
    "import os\nprint(os.path.realpath(os.environ['ATTNLIB_MINILM_DIR']"
    " + '/model.safetensors'))"
)


def _live_or_fail():
    live_manifest(model=True)


def _values(raw: str) -> np.ndarray:
    return np.array([[float(v) for v in row.split(",")] for row in raw.split(";")])


def _show(page, form, timeout=240_000):
    """Press the button and wait for the form's answer (maps or a message)."""
    before = form.locator(".own-sentence-result").inner_html()
    form.get_by_role("button", name="Show its attention").click()
    page.wait_for_function(
        """([f, before]) => !f.hasAttribute('aria-busy')
               && f.hasAttribute('data-shown')
               && f.querySelector('.own-sentence-result').innerHTML !== before""",
        arg=[form.element_handle(), before],
        timeout=timeout,
    )


def test_own_sentence_form_before_live_code(contexts, site_url):
    """Nothing of Python or the model loads with the page; the form is labelled and
    follows the dark theme."""
    for profile in ("desktop-light", "desktop-dark"):
        context = contexts(profile)
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        page = context.new_page()
        try:
            page.goto(site_url + PAGE, wait_until="load")
            form = page.locator(".own-sentence")
            assert form.count() == 1
            assert form.get_by_label("Your sentence").input_value()
            assert form.get_by_label("layer (0 = first, 5 = last)").count() == 1
            assert form.get_by_label("head (0 to 11)").count() == 1
            live = [urlparse(u).path for u in requests if "/live/" in u]
            assert all(p.endswith(("live-code.js", "live-code.css")) for p in live)
            colour = page.evaluate(
                """() => getComputedStyle(document.querySelector(
                     '.own-sentence input')).color"""
            )
            r, g, b = (int(v) for v in re.findall(r"\d+", colour)[:3])
            light_text = (r + g + b) / 3 > 128
            assert light_text == (profile == "desktop-dark"), (profile, colour)
        finally:
            page.close()


def _drawn_weights(form) -> np.ndarray:
    """The weight map's values, once two maps (weights and scores) are drawn."""
    maps = form.locator(".own-sentence-result .explorer-heatmap")
    assert maps.count() == 2, form.locator(".own-sentence-result").inner_html()[:500]
    return _values(maps.nth(0).get_attribute("data-values"))


def _redrawn(page, result, before: str) -> None:
    """Wait until the form's answer has been replaced by new maps (a change of layer,
    head or sentence redraws at once, with no button press)."""
    page.wait_for_function(
        """([r, b]) => r.innerHTML !== b && !r.closest('.own-sentence')
             .hasAttribute('aria-busy') && r.querySelector('.explorer-heatmap')""",
        arg=[result.element_handle(), before],
        timeout=60_000,
    )


def _fisherman_at_layer_2_head_9(form):
    ref = np.load(REFERENCE)
    sentence = str(ref["sentences"][1])  # the fisherman sentence
    form.get_by_label("Your sentence").fill(sentence)
    form.get_by_label("layer (0 = first, 5 = last)").select_option("2")
    form.get_by_label("head (0 to 11)").select_option("9")
    return sentence, ref["attention_1"][2, 9]  # Hugging Face's weights


def test_own_sentence_drawn_in_the_page_offline(module_context, site_url):
    """The first visit of an empty profile: the maps and everything the form does;
    the model's files are downloaded, and the worker keeps both."""
    _live_or_fail()
    context = module_context
    n_external = len(context.external_requests)
    page, requests, errors, stop = watched_page(context)
    try:
        page.goto(site_url + PAGE, wait_until="load")
        form = page.locator(".own-sentence")
        sentence, reference = _fisherman_at_layer_2_head_9(form)
        _show(page, form)
        result = form.locator(".own-sentence-result")
        shown = _drawn_weights(form)
        np.testing.assert_allclose(shown, reference, atol=0.005)
        maps = result.locator(".explorer-heatmap")
        for k in range(2):
            svg = maps.nth(k).locator("svg")
            assert svg.get_attribute("role") == "img"
            assert svg.locator("title").first.text_content().startswith("Heat map")
        assert sentence in result.locator("table.explorer-readout").inner_text()

        # the keyboard reads a cell: focus the weight map, one step right
        maps.nth(0).focus()
        page.keyboard.press("ArrowRight")
        read = maps.nth(0).locator(".heatmap-cell").inner_text()
        assert read == f"query [CLS], key the: {shown[0, 1]:.2f}", read
        # the pointer too: hovering shows a value
        maps.nth(1).hover()
        assert maps.nth(1).locator(".heatmap-cell").inner_text().startswith("query ")

        # every head at a glance: 72 small maps; pressing one (with the keyboard)
        # shows that head above, keeps the focus on it and marks it pressed
        picks = result.locator(".own-sentence-pick")
        assert picks.count() == 72
        assert result.locator(".own-sentence-pick[aria-pressed='true']").count() == 1
        alt = picks.nth(3 * 12 + 7).locator("img").get_attribute("alt")
        assert alt.startswith("Layer 3, head 7: most weight on "), alt
        before = result.inner_html()
        picks.nth(3 * 12 + 7).focus()
        page.keyboard.press("Enter")
        _redrawn(page, result, before)
        assert form.get_by_label("layer (0 = first, 5 = last)").input_value() == "3"
        assert form.get_by_label("head (0 to 11)").input_value() == "7"
        title = maps.nth(0).locator("svg title").first.text_content()
        assert "layer 3 head 7" in title, title
        focused = page.evaluate(
            "() => [document.activeElement.dataset.layer, "
            "document.activeElement.dataset.head, "
            "document.activeElement.getAttribute('aria-pressed')]"
        )
        assert focused == ["3", "7", "true"], focused

        # the page's Python gives the head's weights of attnlib outside the browser
        from attnlib.models import minilm

        expected = minilm.forward(sentence).attention[2, 9]
        messages = page.evaluate(
            """s => attnLive.python(
                 'import json\\nfrom book_support.figures.explorers.minilm import '
                 + 'model_state\\nprint(json.dumps(model_state(' + JSON.stringify(s)
                 + ', 2, 9)["weights"].tolist()))')""",
            sentence,
        )
        printed = "".join(m["text"] for m in messages if m["type"] == "stream")
        np.testing.assert_allclose(json.loads(printed), expected, atol=1e-5, rtol=0)

        # markup typed by the reader is text
        hostile = "<img src=x onerror=window.__pwned=1> the bank"
        form.get_by_label("Your sentence").fill(hostile)
        _show(page, form)
        # the only images are the overview's small maps (data: PNGs)
        sources = result.locator("img").evaluate_all("xs => xs.map(x => x.src)")
        assert sources and all(u.startswith("data:image/png;base64,") for u in sources)
        assert result.locator("img[onerror]").count() == 0
        assert page.evaluate("() => window.__pwned === undefined")
        assert hostile in result.locator("table.explorer-readout").inner_text()

        # bad input: each gets its message in the page
        for typed, expected_text in [
            ("", "The box is empty"),
            ("I like 😀 today", "does not know “😀”"),
            ("word " * 600, "602 tokens"),
        ]:
            form.get_by_label("Your sentence").fill(typed)
            _show(page, form, timeout=60_000)
            message = result.locator(".own-sentence-message[role='alert']")
            assert expected_text in message.inner_text(), message.inner_text()
            assert result.locator(".explorer-heatmap").count() == 0

        # a sentence picked from the list replaces the text and is drawn at once
        options = form.get_by_label("or one of the chapter's").locator("option")
        second = options.nth(1).get_attribute("value")
        before = result.inner_html()
        form.get_by_label("or one of the chapter's").select_option(index=1)
        assert form.get_by_label("Your sentence").input_value() == second
        _redrawn(page, result, before)

        assert context.external_requests[n_external:] == []
        assert all(u.startswith((site_url, "data:", "blob:")) for u in requests)
        # the empty profile downloaded the model's files; a run after the maps' waits
        # until the worker has kept them
        assert any("/live/model/" in urlparse(u).path for u in requests)
        page.evaluate("code => attnLive.python(code)", _WEIGHTS_FROM)
        assert len(page.evaluate(_KEPT_JS)) == 2, "both files are kept"
        assert not errors, errors
    finally:
        stop()
        page.close()


def test_model_kept_by_the_browser_for_the_next_visit(module_context, site_url):
    """The next visit in the profile of the visit above: the same maps, equal to
    Hugging Face's weights, with no request for the model's files; the page's Python
    reads the kept copies. (Run alone, the test makes that first visit itself.)"""
    _live_or_fail()
    for visit in ("first", "next"):
        page, requests, errors, stop = watched_page(module_context)
        try:
            page.goto(site_url + PAGE, wait_until="load")
            if visit == "first" and len(page.evaluate(_KEPT_JS)) == 2:
                continue  # kept by the visit of the test above
            form = page.locator(".own-sentence")
            _, reference = _fisherman_at_layer_2_head_9(form)
            _show(page, form)
            np.testing.assert_allclose(_drawn_weights(form), reference, atol=0.005)
            # a run after the maps' waits until the worker has kept the files
            messages = page.evaluate("code => attnLive.python(code)", _WEIGHTS_FROM)
            path = "".join(m["text"] for m in messages if m["type"] == "stream").strip()
            model = [u for u in requests if "/live/model/" in urlparse(u).path]
            if visit == "next":
                assert model == [], model
                assert path.startswith("/home/pyodide/book/_live/kept/"), path
            assert len(page.evaluate(_KEPT_JS)) == 2, "both files are kept"
            assert not errors, errors
        finally:
            stop()
            page.close()


@pytest.mark.skipif(
    not FULL_MATRIX, reason="nightly (make test-all): the weights-only path"
)
def test_weights_kept_when_a_cell_reads_only_them(fresh_context, site_url):
    """A cell that reads the weights but not the tokenizer: the weights alone are kept,
    and the next visit reads them from the browser's storage (not downloaded again)."""
    _live_or_fail()
    load = (
        "from attnlib.models import minilm\nprint(type(minilm.load_weights()).__name__)"
    )
    for visit in ("first", "second"):
        page, requests, errors, stop = watched_page(fresh_context)
        try:
            page.goto(site_url + PAGE, wait_until="load")
            page.get_by_role("button", name="Make this page live").click()
            page.wait_for_function("() => attnLive.cells() !== null", timeout=60_000)
            page.evaluate("() => attnLive.ready().then(() => true)")
            messages = page.evaluate("code => attnLive.python(code)", load)
            messages += page.evaluate("code => attnLive.python(code)", _WEIGHTS_FROM)
            text = {"stdout": "", "stderr": ""}
            for m in messages:
                if m["type"] == "stream":
                    text[m["name"]] += m["text"]
            kept = "MiniLMWeights\n/home/pyodide/book/_live/kept/"
            assert text["stdout"].startswith(kept), text
            weights = [u for u in requests if urlparse(u).path.endswith(".safetensors")]
            if visit == "first":
                assert "from the website" in text["stderr"], text
                assert weights, "the first visit downloads the weights"
            else:
                assert "from this browser's storage" in text["stderr"], text
                assert weights == [], weights
            assert not errors, errors
        finally:
            stop()
            page.close()
