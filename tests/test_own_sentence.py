"""The reader's own sentence in the interpretability chapter's page
(book_support.figures.explorers.minilm: check_own_sentence, own_sentence_html,
OwnSentenceForm): the messages for bad input, the escaping of the reader's text, and
the maps' numbers against Hugging Face's attention weights (tests/data/
minilm_reference.npz, computed by transformers, not by attnlib) and against the
norm-based view recomputed by a loop from the model's transformed vectors.

The page's side (typing into the form, the maps appearing in the browser) is
tests/browser/test_own_sentence_page.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from attnlib.models import minilm
from book_support.figures.explorers.minilm import (
    MAX_DRAWN_TOKENS,
    ModelExplorer,
    OwnSentenceForm,
    check_own_sentence,
    head_summary,
    model_state,
    own_sentence_html,
    show_own_sentence,
)

REFERENCE = Path(__file__).resolve().parent / "data" / "minilm_reference.npz"


class _Elements(HTMLParser):
    """Every element of an HTML text: (tag, attributes), and the text between them."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def _message(sentence) -> str:
    html = own_sentence_html(sentence)
    parsed = _Elements(html)
    assert [tag for tag, _ in parsed.elements] == ["p"], html
    assert parsed.elements[0][1] == {"class": "own-sentence-message", "role": "alert"}
    return "".join(parsed.text)


@pytest.mark.parametrize("sentence", ["", "   ", "\n\t"])
def test_empty_sentence_gets_the_empty_box_message(sentence):
    assert _message(sentence).startswith("The box is empty")


def test_sentence_beyond_512_positions_gets_the_model_length_message():
    # "word" is one token: 600 words + [CLS] + [SEP] = 602 tokens
    text = _message("word " * 600)
    assert "602 tokens" in text and "512 positions" in text


def test_sentence_longer_than_the_maps_names_both_limits():
    n_words = MAX_DRAWN_TOKENS  # + [CLS] and [SEP]: two more than the maps show
    text = _message("word " * n_words)
    assert f"{n_words + 2} tokens" in text
    assert "up to 512" in text and f"at most {MAX_DRAWN_TOKENS}" in text


def test_longest_drawn_sentence_is_drawn():
    state = own_sentence_html("word " * (MAX_DRAWN_TOKENS - 2))
    assert "own-sentence-message" not in state and "explorer-heatmap" in state


def test_unknown_characters_are_named_in_the_message():
    text = _message("I like 😀 and ☃ today")
    assert "“😀”, “☃”" in text and "[UNK]" in text and "them" in text
    one = _message("a 😀 here")
    assert "“😀”" in one and "read it as [UNK]" in one


def test_typed_unk_token_is_refused_too():
    assert "“[UNK]”" in _message("a [UNK] here")


def test_lone_surrogate_gets_a_message_not_an_exception():
    assert _message("a \ud800 b").startswith("The sentence cannot be read")


def test_non_str_sentence_raises_type_error_naming_sentence():
    with pytest.raises(TypeError, match="sentence must be a str; got list"):
        check_own_sentence(["a", "b"])


def test_check_returns_the_tokenizers_tokens():
    assert check_own_sentence("The bank flooded.") == [
        "[CLS]",
        "the",
        "bank",
        "flooded",
        ".",
        "[SEP]",
    ]


HOSTILE = "<script>alert(1)</script> <img src=x onerror='alert(2)'> & \"q\""


def test_reader_text_is_escaped_in_the_maps_and_table():
    html = own_sentence_html(HOSTILE, 1, 3)
    assert "<script" not in html.lower()
    parsed = _Elements(html)
    # the only images are the overview's small maps, never the reader's <img>
    sources = [a["src"] for t, a in parsed.elements if t == "img"]
    assert len(sources) == 72
    assert all(s.startswith("data:image/png;base64,") for s in sources)
    tags = {tag for tag, _ in parsed.elements}
    assert tags <= {
        "div",
        "svg",
        "title",
        "text",
        "image",
        "rect",
        "g",
        "line",
        "table",
        "tr",
        "th",
        "td",
        "code",
        "defs",
        "lineargradient",
        "stop",
        # every head at a glance: small maps as buttons in a table
        "figure",
        "figcaption",
        "button",
        "img",
    }, tags
    for tag, attrs in parsed.elements:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    # the sentence comes back as text, character for character, in the table
    assert HOSTILE in "".join(parsed.text)


def test_form_escapes_its_sentences_and_offers_every_layer_and_head():
    form = OwnSentenceForm([HOSTILE, "The bank flooded."], layer=2, head=9)
    parsed = _Elements(form._repr_html_())
    assert "script" not in {tag for tag, _ in parsed.elements}
    selects = [
        [a.get("value") for t, a in parsed.elements[i + 1 :] if t == "option"]
        for i, (t, _) in enumerate(parsed.elements)
        if t == "select"
    ]
    # three selects: the sentences, the layer, the head (options run to the end, so
    # the first list holds all of them; its first two are the sentences)
    assert selects[0][:2] == [HOSTILE, "The bank flooded."]
    assert selects[1][:6] == [str(n) for n in range(6)]
    assert selects[2] == [str(n) for n in range(12)]
    chosen = [a.get("value") for t, a in parsed.elements if "selected" in a]
    assert chosen == [HOSTILE, "2", "9"]
    kinds = [(t, a.get("type")) for t, a in parsed.elements if t in ("input", "button")]
    assert kinds == [("input", "text"), ("button", "button")]
    roles = {a.get("role") for _, a in parsed.elements}
    assert {"group", "status"} <= roles
    assert repr(form).startswith("own-sentence explorer: 2 example sentences")


def test_form_refuses_layer_out_of_range():
    with pytest.raises(ValueError, match="layer must be in 0..5"):
        OwnSentenceForm(["a"], layer=6)


def test_model_explorer_form_offers_the_explorer_sentences():
    explorer = ModelExplorer(live_figure=False)
    form = explorer.own_sentence_form()
    assert form.sentences == list(explorer.sentence.options)
    assert (form.layer, form.head) == (explorer.layer.value, explorer.head.value)


def _values(map_html: str) -> np.ndarray:
    raw = re.search(r"data-values='([^']*)'", map_html).group(1)
    return np.array([[float(v) for v in row.split(",")] for row in raw.split(";")])


@pytest.mark.parametrize("which", [0, 1, 2])
def test_weights_equal_hugging_face_attention(which):
    ref = np.load(REFERENCE)
    sentence = str(ref["sentences"][which])
    expected = ref[f"attention_{which}"]  # (6, 12, L, L), from transformers
    for layer in range(6):
        for head in range(12):
            state = model_state(sentence, layer, head)
            np.testing.assert_allclose(
                state["weights"], expected[layer, head], atol=1e-5, rtol=0
            )
    # and the page's hover values are those weights to two decimals
    html = own_sentence_html(sentence, 2, 9)
    first_map = html.split("explorer-heatmap")[1]
    np.testing.assert_allclose(_values(first_map), expected[2, 9], atol=0.005)


def test_norm_share_equals_a_loop_over_the_transformed_vectors():
    sentence = "The fisherman repaired his net beside the bank."
    out = minilm.forward(sentence)
    layer, head = 2, 9
    a = out.attention[layer, head]
    f = out.transformed[layer, head]  # (L, d_head): f(x_j) for each key j
    L = len(out.tokens)
    expected = np.zeros((L, L))
    for i in range(L):
        row = [a[i, j] * np.sqrt(sum(v * v for v in f[j])) for j in range(L)]
        total = sum(row)
        expected[i] = [r / total for r in row]
    state = model_state(sentence, layer, head)
    np.testing.assert_allclose(state["norm_share"], expected, rtol=1e-10, atol=1e-12)
    second_map = own_sentence_html(sentence, layer, head).split("explorer-heatmap")[2]
    np.testing.assert_allclose(_values(second_map), expected, atol=0.005)


def test_show_own_sentence_displays_the_html(monkeypatch):
    shown = []
    import IPython.display

    monkeypatch.setattr(IPython.display, "display", lambda obj: shown.append(obj))
    show_own_sentence("", 0, 0)
    assert len(shown) == 1
    assert shown[0]._repr_html_() == own_sentence_html("", 0, 0)


def _picks(html: str) -> list[dict]:
    return [a for t, a in _Elements(html).elements if t == "button"]


def _png_values(src: str) -> np.ndarray:
    """A small map's cells as the values of their colour steps (index / 100)."""
    import base64
    import io

    from PIL import Image

    raw = base64.b64decode(src.split("base64,", 1)[1])
    image = Image.open(io.BytesIO(raw))
    assert image.mode == "P"
    return np.asarray(image, dtype=float) / 100


def test_overview_offers_every_layer_and_head_with_the_chosen_one_pressed():
    picks = _picks(own_sentence_html("The bank flooded after the storm.", 2, 9))
    assert sorted((int(a["data-layer"]), int(a["data-head"])) for a in picks) == [
        (layer, head) for layer in range(6) for head in range(12)
    ]
    pressed = [
        (a["data-layer"], a["data-head"]) for a in picks if a["aria-pressed"] == "true"
    ]
    assert pressed == [("2", "9")]
    assert all(
        a["class"] == "own-sentence-pick" and a["type"] == "button" for a in picks
    )


@pytest.mark.parametrize("which", [0, 2])
def test_overview_maps_are_hugging_face_weights_to_two_decimals(which):
    ref = np.load(REFERENCE)
    sentence = str(ref["sentences"][which])
    expected = ref[f"attention_{which}"]  # (6, 12, L, L), from transformers
    parsed = _Elements(own_sentence_html(sentence, 0, 0))
    images = [a for t, a in parsed.elements if t == "img"]
    picks = _picks(own_sentence_html(sentence, 0, 0))
    assert len(images) == len(picks) == 72
    for pick, image in zip(picks, images):
        layer, head = int(pick["data-layer"]), int(pick["data-head"])
        np.testing.assert_allclose(
            _png_values(image["src"]), expected[layer, head], atol=0.005 + 1e-9
        )


def _expected_summary(w, tokens):
    """Where a head's weights go on average, by loops over the reference's weights."""
    L = len(tokens)
    columns = [sum(w[i, k] for i in range(L)) / L for k in range(L)]
    k = max(range(L), key=lambda c: columns[c])
    lines = {
        "the token itself": sum(w[i, i] for i in range(L)) / L,
        "the previous token": sum(w[i, i - 1] for i in range(1, L)) / (L - 1),
        "the next token": sum(w[i, i + 1] for i in range(L - 1)) / (L - 1),
    }
    line = max(lines, key=lines.get)
    return tokens[k], k, columns[k], line, lines[line], 1 / L


_DESCRIBED = re.compile(
    r"Layer (\d+), head (\d+): most weight on \u201c(.+)\u201d \(position (\d+)\): "
    r"([0-9.]+) on average over the queries, where an even spread gives ([0-9.]+); "
    r"of the diagonal lines, ([0-9.]+) on (.+)$"
)


def test_overview_descriptions_give_the_reference_heads_averages():
    ref = np.load(REFERENCE)
    sentence = str(ref["sentences"][1])
    expected = ref["attention_1"]  # (6, 12, L, L), from transformers
    tokens = minilm.forward(sentence).tokens
    html = own_sentence_html(sentence, 0, 0)
    images = [a for t, a in _Elements(html).elements if t == "img"]
    assert len(images) == 72
    for image in images:
        found = _DESCRIBED.match(image["alt"])
        assert found, image["alt"]
        layer, head = int(found[1]), int(found[2])
        key, k, key_mean, line, line_mean, even = _expected_summary(
            expected[layer, head], tokens
        )
        assert (found[3], int(found[4]), found[8]) == (key, k, line), image["alt"]
        for shown, value in (
            (found[5], key_mean),
            (found[6], even),
            (found[7], line_mean),
        ):
            assert abs(float(shown) - value) <= 0.005 + 1e-6, (image["alt"], value)


def test_readout_describes_the_chosen_head_as_its_small_map_does():
    parsed = _Elements(own_sentence_html("The bank flooded after the storm.", 3, 11))
    alt = next(
        a["alt"]
        for t, a in parsed.elements
        if t == "img" and a["alt"].startswith("Layer 3, head 11: ")
    )
    text = parsed.text
    row = text.index("this head on average")
    assert text[row + 1] == alt.removeprefix("Layer 3, head 11: ")


def test_overview_keeps_the_sentence_it_shows():
    hostile = "<b>bold</b> 'quoted' bank"
    parsed = _Elements(own_sentence_html(hostile, 0, 0))
    figures = [a for t, a in parsed.elements if t == "figure"]
    assert [f["data-sentence"] for f in figures] == [hostile]


def test_head_summary_finds_the_brightest_column_and_the_diagonal_line():
    tokens = ["[CLS]", "a", "b", "[SEP]"]
    previous = np.array(
        [[1.0, 0, 0, 0], [0.9, 0.1, 0, 0], [0, 0.8, 0.2, 0], [0, 0, 0.7, 0.3]]
    )
    s = head_summary(previous, tokens)
    # column means (1.9, 0.9, 0.9, 0.3) / 4: [CLS] first; previous-token line
    # (0.9 + 0.8 + 0.7) / 3 = 0.8 beats the token itself, (1 + 0.1 + 0.2 + 0.3) / 4
    assert (s["key"], s["key_index"]) == ("[CLS]", 0)
    assert s["key_mean"] == pytest.approx(1.9 / 4)
    assert (s["line"], s["line_mean"]) == ("the previous token", pytest.approx(0.8))
    assert s["even"] == pytest.approx(0.25)
    with pytest.raises(ValueError, match="one token per key: 3 tokens for 4 keys"):
        head_summary(previous, tokens[:3])


def test_overview_titles_repeat_the_text_alternative():
    html = own_sentence_html("A short one.", 4, 4)
    picks = _picks(html)
    images = [a for t, a in _Elements(html).elements if t == "img"]
    assert [p["title"] for p in picks] == [i["alt"] for i in images]
