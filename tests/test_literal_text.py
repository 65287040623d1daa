"""Issue 12, fault 3: every text a plot or an explorer draws is drawn exactly as typed.

matplotlib reads a text with two unescaped dollar signs as mathematics ("$x$" becomes an
italic x; "Ba$$in" raises ValueError when drawn). These tests draw the figures (not only
build them) and check, for every text object, that matplotlib's own preprocessing gives
back the typed string and no mathematics.
"""

import warnings

import masks_explorer
import matplotlib.pyplot as plt
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from matplotlib.text import Text

from book_support.figures import (
    access_map,
    attention_heatmap,
    literal,
    mixture_bars,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def drawn_texts(fig) -> list[str]:
    """Draw ``fig`` and return every text as matplotlib renders it (after its math
    check)."""
    with warnings.catch_warnings():
        # a glyph missing from the font is drawn as a box: a font matter, not ours
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.canvas.draw()
    out = []
    for t in fig.findobj(Text):
        s, is_math = t._preprocess_math(t.get_text())
        assert is_math is False, f"{t.get_text()!r} is drawn as mathematics"
        out.append(s)
    return out


def test_literal_escapes_only_dollars():
    assert literal("US$$5") == r"US\$\$5"
    assert literal("plain") == "plain" and literal(3) == "3"


@pytest.mark.parametrize(
    "label", ["Ba$$in", "$_$", "$x$", "I paid US$$5 today", r"\$$", "a$b$c$d", "$"]
)
def test_the_issue_labels_are_drawn_as_typed(label):
    texts = drawn_texts(mixture_bars([0.5, 0.5], [label, "x"], title=label))
    assert texts.count(label) >= 2  # the tick label and the title
    texts = drawn_texts(
        attention_heatmap(np.eye(2), [label, "q"], [label, "k"], titles=[label])
    )
    assert texts.count(label) >= 3
    texts = drawn_texts(access_map(np.eye(2, dtype=bool), [label, "y"], title=label))
    assert texts.count(label) >= 3


@settings(max_examples=10, deadline=None)
@given(
    st.lists(
        st.text(st.characters(exclude_categories=["Cs", "Cc"]), max_size=8),
        min_size=1,
        max_size=4,
    )
)
def test_random_unicode_labels_are_drawn_as_typed(labels):
    n = len(labels)
    weights = np.full(n, 1.0 / n)
    texts = drawn_texts(mixture_bars(weights, labels, title=" ".join(labels)))
    for label in labels:
        assert label in texts
    assert " ".join(labels) in texts
    title = " | ".join(labels)
    texts = drawn_texts(attention_heatmap(np.eye(n), labels, labels, titles=[title]))
    assert all(texts.count(label) >= 2 for label in labels) and title in texts
    plt.close("all")


@settings(max_examples=6, deadline=None)
@given(
    st.lists(
        st.text(
            st.characters(exclude_categories=["Cs", "Cc", "Z"]), min_size=1, max_size=6
        ),
        min_size=1,
        max_size=5,
    )
)
def test_the_mask_explorer_draws_a_typed_sentence_as_typed(words):
    """The explorer's text box: words split at spaces, each drawn exactly as typed."""
    explorer = masks_explorer.MaskExplorer(live_figure=False)
    explorer.sentence.value = " ".join(words)
    assert tuple(explorer.state["tokens"][: len(words)]) == tuple(words)
    texts = drawn_texts(explorer.figure())
    for word in words:
        assert texts.count(word) >= 2  # on both panels' axes


def test_the_mask_explorer_keeps_updating_after_a_dollar_sentence():
    explorer = masks_explorer.MaskExplorer()  # live figure, as in the book
    explorer.sentence.value = "I paid US$$5 today"
    assert "US$$5" in explorer.readout.value
    first = explorer.image.value
    explorer.kind.value = "bidirectional"
    assert explorer.image.value != first and "US$$5" in drawn_texts(explorer.figure())
