"""The explorers of the chapters "Order and position" and "From attention to a
Transformer layer": pure states against independent computations, widgets driven
through their controls."""

from __future__ import annotations

import math

import numpy as np
import order_and_position_explorer
import pytest

from book_support.figures import explorers as X


def test_position_state_rotation_and_offset_only_similarity():
    st = order_and_position_explorer.position_state(5, 3, 8)
    np.testing.assert_allclose(st["pe_p"][:2], [math.sin(5), math.cos(5)], atol=1e-15)
    np.testing.assert_allclose(st["rotated"], st["pe_pk"], atol=1e-12)
    assert st["max_error"] < 1e-12
    np.testing.assert_allclose(st["angles"][0], 3.0)
    # PE(p) . PE(p + j) = sum_i cos(j omega_i), whatever p
    j = np.arange(st["similarity"].size)
    want = np.cos(j[:, None] * st["omega"][None, :]).sum(axis=1)
    np.testing.assert_allclose(st["similarity"], want, atol=1e-12)
    np.testing.assert_allclose(st["similarity_from_0"], want, atol=1e-12)


def test_position_state_errors():
    with pytest.raises(ValueError, match="non-negative"):
        order_and_position_explorer.position_state(2, -3)
    with pytest.raises(ValueError, match="pair"):
        order_and_position_explorer.position_state(2, 1, 8, pair=4)


def test_position_explorer_controls():
    ex = order_and_position_explorer.PositionExplorer(live_figure=False)
    ex.offset.value = 7
    assert ex.state["offset"] == 7
    assert "True" in ex.readout.value
    ex.d_model.value = 4
    ex.pair.value = 31  # clipped to the last pair of d_model = 4
    assert ex.state["pair"] == 1


def test_layer_state_matches_the_model():
    from attnlib.models import minilm

    st = X.layer_state("The dog bit the man.", 1)
    out = minilm.forward("The dog bit the man.")
    assert st["tokens"] == out.tokens and st["norms"].shape == (4, len(out.tokens))
    np.testing.assert_allclose(
        st["norms"][0], np.linalg.norm(out.hidden_states[1], axis=-1)
    )
    np.testing.assert_allclose(
        st["norms"][3], np.linalg.norm(out.hidden_states[2], axis=-1)
    )
    assert st["max_error"] < 1e-10 and np.all(np.abs(st["change"]) <= 1 + 1e-12)
    with pytest.raises(ValueError, match="0..5"):
        X.layer_state("The dog.", 6)


def test_layer_explorer_controls():
    ex = X.LayerExplorer(live_figure=False)
    ex.layer.value = 5
    assert ex.state["layer"] == 5
    ex.sentence.value = ex.sentence.options[1]
    assert ex.state["tokens"][2] == "man"


@pytest.mark.parametrize(
    "cls", [order_and_position_explorer.PositionExplorer, X.LayerExplorer]
)
def test_figure_and_widget(cls):
    import matplotlib.pyplot as plt

    ex = cls(live_figure=False)
    fig = ex.figure()
    assert isinstance(fig, plt.Figure)
    plt.close(fig)
    assert ex.widget is not None


def test_layer_explorer_takes_the_readers_sentences():
    mine = ["A cat sat on the mat.", "Birds fly."]
    explorer = X.LayerExplorer(mine, live_figure=False)
    assert list(explorer.sentence.options) == mine
    assert explorer.rows()[0][1] == "[CLS] | a | cat | sat | on | the | mat | . | [SEP]"
