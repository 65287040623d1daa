"""The gradients of the transformer-layer chapter's post-LN / pre-LN stacks
(``transformer_layer_gradients.py``, beside the chapter) equal finite differences of the
loss on a tiny stack, and its post-LN forward pass is ``attnlib.encoder_layer``'s."""

from __future__ import annotations

import numpy as np
import pytest
import transformer_layer_gradients as tg
from conftest import central_difference

import attnlib

# 2 layers of width 8, 2 heads, feed-forward width 16, 3 tokens, 5 classes
TINY = dict(n_layers=2, d=8, heads=2, d_ff=16, n=3, C=5)


def tiny(seed=0):
    return tg.init_stack(seed, **TINY)


def _parameter(layer, name):
    """The array of ``name`` in one layer (attention arrays live in ``layer.attn``)."""
    return getattr(layer.attn if name[-1] in "QKVO" else layer, name)


@pytest.mark.parametrize("arrangement", tg.ARRANGEMENTS)
@pytest.mark.parametrize(
    "name", ["W_Q", "W_K", "W_V", "W_O", "b_V", "W_1", "b_1", "W_2", "ln1_gain"]
)
@pytest.mark.parametrize("index", [0, 1])
def test_weight_gradients_equal_finite_differences(arrangement, name, index):
    x, stack, W_out, targets = tiny()
    _, grads, _ = tg.stack_gradients(x, stack, W_out, targets, arrangement)
    array = _parameter(stack[index], name)
    original = array.copy()

    def loss(values):
        array[...] = values
        return tg.stack_gradients(x, stack, W_out, targets, arrangement)[0]

    expected = central_difference(loss, original)
    array[...] = original
    np.testing.assert_allclose(grads[index][name], expected, atol=1e-7, rtol=1e-5)


@pytest.mark.parametrize("arrangement", tg.ARRANGEMENTS)
def test_input_gradients_of_every_layer_equal_finite_differences(arrangement):
    x, stack, W_out, targets = tiny(1)
    _, _, input_grads = tg.stack_gradients(x, stack, W_out, targets, arrangement)
    # layer 0's input is x; layer 1's input is layer 0's output, so differentiate the
    # loss of the stack without its first layer at that input
    h, _ = tg._layer(x, stack[0], arrangement)
    for index, start in ((0, x), (1, h)):
        rest = stack[index:]
        expected = central_difference(
            lambda v, rest=rest: tg.stack_gradients(
                v, rest, W_out, targets, arrangement
            )[0],
            start,
        )
        np.testing.assert_allclose(input_grads[index], expected, atol=1e-7, rtol=1e-5)


def test_post_ln_forward_is_attnlibs_encoder_layer():
    x, stack, _, _ = tiny(2)
    ours, theirs = x, x
    for layer in stack:
        ours, _ = tg._layer(ours, layer, "post-LN")
        theirs, _ = attnlib.encoder_layer(theirs, layer)
    np.testing.assert_allclose(ours, theirs, atol=1e-12)


def test_loss_is_the_mean_cross_entropy_of_the_readout():
    x, stack, W_out, targets = tiny(3)
    loss, _, _ = tg.stack_gradients(x, stack, W_out, targets, "pre-LN")
    y = x
    for layer in stack:
        y, _ = tg._layer(y, layer, "pre-LN")
    y = attnlib.layer_norm(y, eps=stack[-1].eps)  # the final normalisation
    logits = y @ W_out
    log_probs = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    assert loss == pytest.approx(-log_probs[np.arange(3), targets].mean(), abs=1e-12)


def test_gradient_norms_are_the_norms_of_the_six_weight_gradients():
    norms = tg.gradient_norms(4, **TINY)
    x, stack, W_out, targets = tg.init_stack(4, **TINY)
    _, grads, _ = tg.stack_gradients(x, stack, W_out, targets, "post-LN")
    flat = np.concatenate([grads[1][w].ravel() for w in tg.WEIGHTS])
    assert norms["post-LN"]["weights"][1] == pytest.approx(np.linalg.norm(flat))
    assert norms["pre-LN"]["weights"].shape == (2,)


def test_an_unknown_arrangement_is_refused_by_name():
    x, stack, W_out, targets = tiny()
    with pytest.raises(ValueError, match="arrangement"):
        tg.stack_gradients(x, stack, W_out, targets, "sandwich-LN")
