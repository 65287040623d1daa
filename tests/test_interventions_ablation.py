"""Zero and mean ablation of one MiniLM head (the interventions chapter's
``interventions_ablation``), against a forward pass written out by hand here: plain
numpy, the checkpoint's weights, each head's output before W_O replaced as described.
Only the GELU is the model's own (``minilm.gelu``, whose erf is a polynomial accurate
to 1.5e-7; ``math.erf`` would move the final states by about 1e-6), so that the
comparisons can be tight."""

from __future__ import annotations

import math

import interventions_ablation as ia
import numpy as np
import pytest

from attnlib.models import minilm

RIVER = "The fisherman repaired his net beside the bank."
TELLER = "The teller counted the money inside the bank."  # also 11 tokens
CASHIER = "The cashier counted the money inside the bank."  # 12 tokens


def _layer_norm(x, gain, bias):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-12) * gain + bias


def _by_hand(text, replace=None):
    """Final states (L, 384) and every head's output before W_O (6, 12, L, 32);
    ``replace = (layer, head, f)`` puts ``f(z)`` in place of that head's output z."""
    ids = minilm.encode(text)[1]
    w = minilm.load_weights()
    x = minilm.embed(ids)
    n_tok = len(ids)
    outputs = []
    for n, p in enumerate(w.layers):
        a = p.attn

        def heads(y):
            return y.reshape(n_tok, 12, 32).transpose(1, 0, 2)  # (12, L, 32)

        q, k, v = (
            heads(x @ W + b)
            for W, b in ((a.W_Q, a.b_Q), (a.W_K, a.b_K), (a.W_V, a.b_V))
        )
        s = q @ k.transpose(0, 2, 1) / math.sqrt(32)
        e = np.exp(s - s.max(-1, keepdims=True))
        z = (e / e.sum(-1, keepdims=True)) @ v  # (12, L, 32)
        outputs.append(z.copy())
        if replace is not None and replace[0] == n:
            z[replace[1]] = replace[2](z[replace[1]])
        attended = z.transpose(1, 0, 2).reshape(n_tok, 384) @ a.W_O + a.b_O
        h = _layer_norm(x + attended, p.ln1_gain, p.ln1_bias)
        u = h @ p.W_1 + p.b_1
        ff = minilm.gelu(u) @ p.W_2 + p.b_2
        x = _layer_norm(h + ff, p.ln2_gain, p.ln2_bias)
    return x, np.stack(outputs)


HEADS = [(0, 10), (3, 4), (5, 7)]


@pytest.fixture(scope="module")
def zero_run():
    return ia.final_states_with_each_head_replaced(RIVER)


@pytest.mark.parametrize("layer, head", HEADS)
def test_zero_ablation_equals_zeroing_the_heads_slice_before_W_O(zero_run, layer, head):
    expected, _ = _by_hand(RIVER, (layer, head, np.zeros_like))
    np.testing.assert_allclose(zero_run[layer, head], expected, atol=1e-9)


def test_zero_ablation_equals_minilm_head_mask(zero_run):
    masks = np.ones((12, 6, 12), dtype=bool)
    masks[np.arange(12), 2, np.arange(12)] = False  # run k removes head k of layer 2
    expected = minilm.forward(RIVER, head_mask=masks).hidden_states[:, -1]
    np.testing.assert_allclose(zero_run[2], expected, atol=1e-10)


def test_head_outputs_before_projection_are_the_weighted_values():
    _, expected = _by_hand(RIVER)
    got = ia.head_outputs_before_projection(minilm.forward(RIVER))
    np.testing.assert_allclose(got, expected, atol=1e-10)


def test_mean_over_a_reference_set_counts_every_position_once():
    _, river = _by_hand(RIVER)  # 11 positions
    _, cashier = _by_hand(CASHIER)  # 12 positions
    expected = (river.sum(axis=2) + cashier.sum(axis=2)) / (11 + 12)
    got = ia.mean_head_outputs([RIVER, CASHIER])
    np.testing.assert_allclose(got, expected, atol=1e-10)


@pytest.mark.parametrize("layer, head", HEADS)
def test_mean_ablation_with_one_reference_sentence_equals_patching_its_mean(
    layer, head
):
    """Reference set = the teller sentence: every position of the head gets the
    teller sentence's output of that head, averaged over its positions."""
    _, teller = _by_hand(TELLER)
    m = teller[layer, head].mean(axis=0)  # (32,)
    expected, _ = _by_hand(RIVER, (layer, head, lambda z: np.broadcast_to(m, z.shape)))
    means = ia.mean_head_outputs([TELLER])
    got = ia.final_states_with_each_head_replaced(RIVER, means)[layer, head]
    np.testing.assert_allclose(got, expected, atol=1e-9)


@pytest.mark.parametrize("layer, head", HEADS)
def test_patching_from_another_sentence_equals_by_hand(layer, head):
    _, teller = _by_hand(TELLER)  # same length as RIVER: patch position by position
    expected, _ = _by_hand(RIVER, (layer, head, lambda z: teller[layer, head]))
    got = ia.final_states_with_each_head_replaced(RIVER, teller)[layer, head]
    np.testing.assert_allclose(got, expected, atol=1e-9)


def test_patching_each_heads_own_output_changes_nothing():
    clean = minilm.forward(RIVER)
    own = ia.head_outputs_before_projection(clean)
    got = ia.final_states_with_each_head_replaced(RIVER, own)
    np.testing.assert_allclose(
        got, np.broadcast_to(clean.hidden_states[-1], got.shape), atol=1e-10
    )


def test_change_of_token_is_one_minus_cosine_of_the_ablated_vector(zero_run):
    clean = minilm.forward(RIVER)
    i = clean.index("bank")
    u, v = clean.hidden_states[-1, i], zero_run[5, 7, i]
    expected = 1 - u @ v / (np.linalg.norm(u) * np.linalg.norm(v))
    assert ia.change_of_token(RIVER, i)[5, 7] == pytest.approx(expected, abs=1e-12)


def test_replacement_of_the_wrong_shape_is_refused_with_both_shapes():
    with pytest.raises(ValueError, match=r"replacement must have shape.*11 tokens"):
        ia.final_states_with_each_head_replaced(RIVER, np.zeros((6, 12, 12, 32)))


def test_replacement_with_nan_is_refused():
    bad = np.zeros((6, 12, 32))
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="replacement holds NaN"):
        ia.final_states_with_each_head_replaced(RIVER, bad)


def test_empty_reference_set_is_refused():
    with pytest.raises(ValueError, match="reference must hold at least one sentence"):
        ia.mean_head_outputs([])
