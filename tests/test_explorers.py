"""Explorers: the arithmetic (pure functions) and the widgets driven through their
   controls.

Expected values are computed here by hand formulas, independently of attnlib.
"""

import math

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import cost_explorer
import learned_and_computed_explorer
import masks_explorer
import matplotlib.pyplot as plt  # noqa: E402
import query_key_value_explorer

from book_support.figures import explorers as X  # noqa: E402

pytest.importorskip("ipywidgets")


def hand_softmax(s):
    e = [math.exp(x) for x in s]
    return [x / sum(e) for x in e]


def test_scores_state_matches_hand_computation():
    state = X.scores_state([2.0, 4.0, 1.0], [[1, 0], [0, 2], [1, 1]])
    w = hand_softmax([2, 4, 1])
    np.testing.assert_allclose(state["weights"], w, atol=1e-12)
    np.testing.assert_allclose(
        state["output"], [w[0] + w[2], 2 * w[1] + w[2]], atol=1e-12
    )
    assert np.round(state["output"], 3).tolist() == [0.156, 1.730]


def test_scores_explorer_follows_its_sliders():
    ex = X.ScoresExplorer(live_figure=False)
    assert "0.1142" in ex.readout.value and "0.8438" in ex.readout.value
    ex.sliders[1].value = 2.0  # Learning now ties with Machine
    w = hand_softmax([2, 2, 1])
    assert f"{w[0]:.4f}" in ex.readout.value
    np.testing.assert_allclose(ex.state["weights"], w, atol=1e-12)
    for s in ex.sliders:  # extreme values never raise and stay finite
        s.value = s.max
    ex.sliders[0].value = ex.sliders[0].min
    assert np.isfinite(ex.state["output"]).all()
    assert abs(ex.state["weights"].sum() - 1) < 1e-12


def test_scale_state_sharpens_and_flattens():
    raw = [2 * math.sqrt(2), math.sqrt(2), 0.0]
    at_2 = X.scale_state(raw, d_k=2, n_samples=100)
    np.testing.assert_allclose(at_2["weights"], hand_softmax([2, 1, 0]), atol=1e-12)
    hot = X.scale_state(raw, d_k=2, temperature=10.0, n_samples=100)
    cold = X.scale_state(raw, d_k=2, temperature=0.1, n_samples=100)
    assert hot["entropy"] > at_2["entropy"] > cold["entropy"]
    assert cold["max_weight"] > 0.99
    with pytest.raises(ValueError, match="temperature"):
        X.scale_state(raw, temperature=0.0)
    with pytest.raises(ValueError, match="d_k"):
        X.scale_state(raw, d_k=0)


def test_scale_state_variance_grows_with_d_k_unless_scaled():
    var = X.scale_state([0.0], variance_dims=(4, 64, 256), n_samples=40_000)["variance"]
    # Var(q·k) = d_k for independent standard-normal components; scaled, it is 1.
    np.testing.assert_allclose(var["unscaled"] / var["d_k"], 1.0, rtol=0.05)
    np.testing.assert_allclose(var["scaled"], 1.0, rtol=0.05)


def test_scale_explorer_controls():
    ex = X.ScaleExplorer(live_figure=False)
    assert (
        "[2.0000, 1.0000, 0.0000]" in ex.readout.value
    )  # d_k = 2 gives the book's scores
    ex.d_k.value = 1024
    assert ex.state["max_weight"] < 0.4  # almost flat
    ex.d_k.value = 1
    ex.temperature.value = ex.temperature.min * 1.0001  # extreme: very peaked, finite
    assert ex.state["max_weight"] > 0.99 and np.isfinite(ex.state["weights"]).all()


def test_query_key_state_is_the_bank_example():
    st = query_key_value_explorer.query_key_state(
        [math.sqrt(2), 0], [[2, 0], [1, 1], [0, 1]], [[2, 0], [0, 2], [1, 1]]
    )
    np.testing.assert_allclose(st["scores"], [2, 1, 0], atol=1e-12)
    w = hand_softmax([2, 1, 0])
    np.testing.assert_allclose(
        st["output"], [2 * w[0] + w[2], 2 * w[1] + w[2]], atol=1e-12
    )
    unscaled = query_key_value_explorer.query_key_state(
        [1, 2], [[3, 4]], [[1.0]], scaled=False
    )
    assert unscaled["scores"].tolist() == [11.0]


def test_query_key_explorer_moves_the_query():
    ex = query_key_value_explorer.QueryKeyExplorer(live_figure=False)
    assert "1.4205" in ex.readout.value and "0.5795" in ex.readout.value
    # The live sliders set the query as the static page's controls do: direction
    # (degrees from the x axis), then length.
    static = ex.precomputed()
    assert [s.description for s in ex.query_sliders] == [
        c.description for c in static.controls
    ]
    ex.query_sliders[0].value = 90.0
    ex.query_sliders[1].value = 1.5  # the query [0, 1.5]
    np.testing.assert_allclose(ex.query, [0.0, 1.5], atol=1e-12)
    up = 1.5 / math.sqrt(2)  # its scaled dot product with the keys [1, 1] and [0, 1]
    np.testing.assert_allclose(ex.state["scores"], [0.0, up, up], atol=1e-12)
    assert "[0.0000, 1.5000]" in ex.readout.value
    ex.query_sliders[1].value = 0.0  # a zero query scores every key 0: equal weights
    np.testing.assert_allclose(ex.state["weights"], [1 / 3] * 3, atol=1e-12)
    assert "[1.0000, 1.0000]" in ex.readout.value
    for s in ex.controls:
        s.value = s.min
    assert np.isfinite(ex.state["output"]).all()


def test_mask_state_kinds():
    toks = ["The", "bank", "flooded", "after", "the", "storm", "."]
    causal = masks_explorer.mask_state(toks, "causal")
    assert causal["mask"].sum(axis=1).tolist() == [1, 2, 3, 4, 5, 6, 7]
    bank, storm = 1, 5
    assert not causal["mask"][bank, storm] and causal["mask"][storm, bank]
    assert causal["weights"][bank, storm] == 0.0
    both = masks_explorer.mask_state(toks, "bidirectional")
    assert both["mask"].all()
    padded = masks_explorer.mask_state(toks, "padding", pad_to=9)
    assert padded["tokens"][-2:] == ("[PAD]", "[PAD]")
    assert padded["weights"][:, 7:].sum() == 0.0  # nobody attends padding
    assert padded["weights"][7:].sum() == 0.0  # padding queries attend nothing
    np.testing.assert_allclose(padded["weights"][:7].sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="kind"):
        masks_explorer.mask_state(toks, "diagonal")
    with pytest.raises(ValueError, match="no tokens"):
        masks_explorer.mask_state([], "causal")


def test_mask_explorer_controls():
    ex = masks_explorer.MaskExplorer(live_figure=False)
    assert "[1, 2, 3, 4, 5, 6, 7]" in ex.readout.value  # keys allowed per query
    ex.kind.value = "bidirectional"
    assert ex.state["mask"].all()
    ex.sentence.value = "The cat sat"
    ex.kind.value = "padding"
    ex.pad_to.value = ex.pad_to.min  # shorter than the sentence: no padding
    assert ex.state["tokens"] == ("The", "cat", "sat")
    ex.sentence.value = "   "  # empty sentence does not raise
    assert ex.state["tokens"] == ("(empty)",)


def test_heads_state_two_heads():
    values = np.stack(
        [np.array([[2.0, 0], [0, 2], [1, 1]]), np.array([[1.0, 0], [0, 1], [1, 1]])]
    )
    W_O = np.eye(4)[:, :3]
    st = X.heads_state([[2, 1, 0], [1, 2, 0]], values, W_O)
    w = hand_softmax([2, 1, 0])
    np.testing.assert_allclose(st["weights"][0], w)
    np.testing.assert_allclose(
        st["weights"][1], [w[1], w[0], w[2]]
    )  # swapped scores, swapped weights
    h1 = [2 * w[0] + w[2], 2 * w[1] + w[2]]
    h2 = [w[1] + w[2], w[0] + w[2]]
    np.testing.assert_allclose(st["concatenated"], h1 + h2)
    np.testing.assert_allclose(st["output"], (h1 + h2)[:3])
    with pytest.raises(ValueError, match="rows"):
        X.heads_state([[2, 1, 0], [1, 2, 0]], values, np.eye(3))


def test_heads_explorer_controls():
    ex = X.HeadsExplorer(live_figure=False)
    assert ex.readout.value.count("0.6652") == 2  # each head gives its favourite 0.6652
    ex.score_sliders[1][0].value = 2.0  # head 2's scores become [2, 1, 0] ...
    ex.score_sliders[1][1].value = 1.0
    np.testing.assert_allclose(
        ex.state["weights"][0], ex.state["weights"][1]
    )  # ... as head 1's
    with pytest.raises(ValueError, match="between 1 and 4"):
        X.HeadsExplorer(num_heads=5, live_figure=False)
    assert X.HeadsExplorer(num_heads=3, live_figure=False).state["weights"].shape == (
        3,
        3,
    )


@pytest.mark.parametrize(
    "cls",
    [
        X.ScoresExplorer,
        X.ScaleExplorer,
        query_key_value_explorer.QueryKeyExplorer,
        masks_explorer.MaskExplorer,
        X.HeadsExplorer,
        cost_explorer.CostExplorer,
        learned_and_computed_explorer.LearnedExplorer,
        X.ModelExplorer,
    ],
)
def test_every_explorer_draws_a_figure_and_is_one_widget(cls):
    ex = cls(live_figure=False)
    fig = ex.figure()
    assert isinstance(fig, plt.Figure) and fig.axes
    plt.close(fig)
    assert len(ex.widget.children) == 3


def test_cost_state_counts():
    st = cost_explorer.cost_state(100_000, 64)
    assert st["score_entries"] == 10_000_000_000
    assert st["plain_scores_bytes"] == 40_000_000_000
    assert st["flops"] == 4 * 100_000**2 * 64
    # the default tile is attnlib.tiled_attention's: 256 queries x 1,024 keys for long
    # inputs
    assert (st["block_q"], st["block_k"]) == (256, 1024)
    assert st["tile_bytes"] == 256 * 1024 * 4 == 2**20
    assert st["running_max_bytes"] == st["running_sum_bytes"] == 100_000 * 4
    assert st["running_weighted_sum_bytes"] == 100_000 * 64 * 4
    assert st["tiled_scores_bytes"] == 2**20 + 2 * 100_000 * 4
    small = cost_explorer.cost_state(
        10, 8, heads=2, block=256
    )  # the tile is never bigger than n x n
    assert small["tiled_scores_bytes"] == 2 * (10 * 10 + 2 * 10) * 4
    assert (
        cost_explorer.cost_state(1_000, 64)["block_q"] == 256
    )  # from 512 keys on: 256 queries
    assert (
        cost_explorer.cost_state(400, 64)["block_q"] == 400
    )  # fewer keys: the tile's rest
    assert (
        cost_explorer.cost_state(2_000, 64)["score_entries"]
        == 4 * cost_explorer.cost_state(1_000, 64)["score_entries"]
    )
    with pytest.raises(ValueError, match="block"):
        cost_explorer.cost_state(10, block=0)


def test_cost_explorer_controls():
    ex = cost_explorer.CostExplorer(live_figure=False)
    assert "1,048,576" in ex.readout.value  # starts at n = 1,024, as the precomputed
    ex.n.value = 100_000
    assert "10,000,000,000" in ex.readout.value
    assert "256 × 1,024 = 1.000 MiB" in ex.readout.value
    assert "running maximum" in ex.readout.value and "running sum" in ex.readout.value
    ex.block.value = 64
    assert "64 × 64" in ex.readout.value
    for s in (ex.n, ex.d, ex.heads):
        s.value = s.min
    assert ex.state["score_entries"] == 1
    fig = ex.figure()
    plt.close(fig)


def test_live_figure_is_redrawn_as_png_when_a_control_moves():
    ex = X.ScoresExplorer()
    first = bytes(ex.image.value)
    assert first.startswith(b"\x89PNG")
    ex.sliders[0].value = -5.0
    assert (
        bytes(ex.image.value).startswith(b"\x89PNG") and bytes(ex.image.value) != first
    )


@pytest.fixture(scope="module")
def trained():
    from book_support.experiments.context_classifier import train_context_classifier

    return train_context_classifier(seed=0)


def test_learned_state_changes_with_the_input_not_the_parameters(trained):
    before = {k: v.copy() for k, v in trained.params().items()}
    river = learned_and_computed_explorer.learned_state(
        trained, "The fisherman repaired his net beside the bank."
    )
    money = learned_and_computed_explorer.learned_state(
        trained, "The cashier was waiting with the money in the bank."
    )
    assert river["ambiguous"] == money["ambiguous"] == "bank"
    assert river["sense"] == "river" and money["sense"] == "money"
    np.testing.assert_allclose(river["weights"].sum(), 1.0)
    assert not np.allclose(
        river["weights"][-2], money["weights"][-2]
    )  # weight on "bank" itself
    for k, v in trained.params().items():
        np.testing.assert_array_equal(v, before[k])
    with pytest.raises(ValueError, match="vocabulary"):
        learned_and_computed_explorer.learned_state(
            trained, "The zebra sat by the bank."
        )


def test_learned_explorer_text_box(trained):
    ex = learned_and_computed_explorer.LearnedExplorer(trained, live_figure=False)
    assert "river" in ex.readout.value
    ex.sentence.value = "They withdraw money in the bank."
    assert "money (p =" in ex.readout.value
    ex.sentence.value = (
        "They withdraw money in the zebra."  # unknown word: keeps the last result
    )
    assert "not understood" in ex.readout.value and "money (p =" in ex.readout.value


def test_model_state_norms_are_weights_times_vector_lengths():
    from attnlib.models import minilm

    st = X.model_state("The fisherman repaired his net beside the bank.", 0, 10)
    out = minilm.forward("The fisherman repaired his net beside the bank.")
    f = out.transformed[0, 10]
    i, j = st["tokens"].index("bank"), st["tokens"].index("fisherman")
    # ||alpha_ij f(x_j)|| written out for one cell
    assert np.isclose(
        st["norms"][i, j], st["weights"][i, j] * np.sqrt((f[j] ** 2).sum())
    )
    np.testing.assert_allclose(st["norm_share"].sum(axis=1), 1.0)
    np.testing.assert_allclose(st["weights"].sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="layer must be in 0..5"):
        X.model_state("a bank", 6, 0)


def test_model_explorer_controls():
    ex = X.ModelExplorer(live_figure=False)
    before = ex.state["weights"].copy()
    ex.head.value = 3
    assert ex.state["head"] == 3 and not np.allclose(before, ex.state["weights"])
    ex.layer.value = ex.layer.max
    ex.head.value = ex.head.max
    ex.sentence.value = ex.sentence.options[-1]
    assert ex.state["tokens"][0] == "[CLS]" and "[CLS]" in ex.readout.value
    ex.sentence.value = "A sentence of my own."  # free input, not only the list
    assert ex.state["tokens"][:3] == ["[CLS]", "a", "sentence"]


def test_cost_figure_draws_the_points_its_alt_text_needs_from_the_start_state():
    """Expert reads 4b and 6b: the explorer starts at n = 1,024 (one head, d = 64) and
    its drawn tiled curve has points at 512 and 1,024 (sampled with np.rint)."""
    from attnlib.core.tiled import default_block_sizes

    ex = cost_explorer.CostExplorer(live_figure=False)
    assert ex.START in ex.LENGTHS and ex.n.value == ex.START == 1024
    state = ex.state
    assert (state["n"], state["heads"], state["d"]) == (1024, 1, 64)
    ns, plain, tiled = cost_explorer._cost_curves(state)
    at = dict(zip(ns.tolist(), tiled))
    for n in (512, 1024, 131_072):  # one tile plus a running max and sum per query
        block_q, block_k = default_block_sizes(n, n)
        assert at[n] == pytest.approx((block_q * block_k + 2 * n) * 4 / 2**20)
    assert abs(at[512] - 0.5) < 0.01 and abs(at[1024] - 1) < 0.01
    assert at[131_072] == 2.0
    below = list(ns).index(512)  # the tiled curve follows the plain one below ~500
    assert np.allclose(tiled[:below], plain[:below], rtol=0.15)
