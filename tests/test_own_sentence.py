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
    assert "<script" not in html.lower() and "<img" not in html.lower()
    parsed = _Elements(html)
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
