"""Gradients of a stack of untrained encoder layers, post-LN and pre-LN (the chapter
"From attention to a Transformer layer", section on post-LN and pre-LN).

A stack of ``L`` layers of :func:`attnlib.init_encoder_layer` parameters is run on
``n`` tokens of width ``d`` in one of two arrangements::

    post-LN:  h = LN_1(x + MHA(x)),       y = LN_2(h + FFN(h))
    pre-LN:   h = x + MHA(LN_1(x)),       y = h + FFN(LN_2(h)),   LN_f after the last

followed by a readout ``logits = y W_out`` (``W_out`` of shape (d, C)) and the mean
softmax cross-entropy against one target class per token. :func:`stack_gradients`
returns the loss and the gradient of every layer's parameters and of every layer's
input, by the chain rule through the stack (attnlib's backward passes of attention,
layer normalisation and GELU; tested against finite differences in
``tests/test_transformer_layer_gradients.py``). :func:`gradient_norms` measures, layer
by layer, the quantity that Xiong et al. (2020) analyse: the size of the gradient of a
layer's weights at initialisation.

Source: Xiong et al. (2020), sections 3.2-3.3 (post-LN and pre-LN at initialisation);
Vaswani et al. (2017), section 3.1 (the layer); the derivatives are the chain rule.
"""

from __future__ import annotations

import numpy as np

import attnlib
from attnlib.core.backward import attention_backward
from attnlib.core.heads import merge_heads, split_heads
from attnlib.layers.encoder_layer import self_attention_block
from attnlib.layers.layer_backward import (
    gelu_backward,
    layer_norm_backward,
    layer_norm_stats,
)

ARRANGEMENTS = ("post-LN", "pre-LN")
#: the weight matrices of one layer whose gradient :func:`gradient_norms` measures
WEIGHTS = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")


def _check_arrangement(arrangement) -> None:
    if arrangement not in ARRANGEMENTS:
        raise ValueError(
            f"arrangement must be 'post-LN' or 'pre-LN'; got {arrangement!r}"
        )


def _norm(x, gain, bias, eps):
    """Layer normalisation and what its backward pass needs."""
    xhat, r = layer_norm_stats(x, eps)
    return xhat * gain + bias, (xhat, r, gain)


def _attention(a, q):
    """The attention sub-layer on ``a`` (n, d) and what its backward pass needs."""
    block = self_attention_block(a, q.attn)
    return block["attended"], (a, block)


def _attention_backward(d_out, saved, q):
    """``(d_a, grads)`` of the attention sub-layer, ``d_out`` of shape (n, d)."""
    a, block = saved
    H = q.attn.num_heads
    g = {"W_O": block["merged"].T @ d_out, "b_O": d_out.sum(axis=0)}
    d_heads = split_heads(d_out @ q.attn.W_O.T, H)  # (H, n, d_k)
    dq, dk, dv = attention_backward(block["q"], block["k"], block["v"], d_heads)
    dq, dk, dv = merge_heads(dq), merge_heads(dk), merge_heads(dv)  # (n, d)
    for name, d in (("Q", dq), ("K", dk), ("V", dv)):
        g[f"W_{name}"], g[f"b_{name}"] = a.T @ d, d.sum(axis=0)
    d_a = dq @ q.attn.W_Q.T + dk @ q.attn.W_K.T + dv @ q.attn.W_V.T
    return d_a, g


def _feed_forward(f, q):
    pre = f @ q.W_1 + q.b_1  # (n, d_ff)
    return attnlib.gelu(pre) @ q.W_2 + q.b_2, (f, pre)


def _feed_forward_backward(d_out, saved, q):
    f, pre = saved
    g = {"W_2": attnlib.gelu(pre).T @ d_out, "b_2": d_out.sum(axis=0)}
    d_pre = gelu_backward(pre, d_out @ q.W_2.T)  # (n, d_ff)
    g["W_1"], g["b_1"] = f.T @ d_pre, d_pre.sum(axis=0)
    return d_pre @ q.W_1.T, g


def _layer(x, q, arrangement):
    """One layer forward: ``(y, saved)``."""
    if arrangement == "post-LN":
        a_out, s_a = _attention(x, q)
        h, s_ln1 = _norm(x + a_out, q.ln1_gain, q.ln1_bias, q.eps)
        f_out, s_f = _feed_forward(h, q)
        y, s_ln2 = _norm(h + f_out, q.ln2_gain, q.ln2_bias, q.eps)
    else:
        a, s_ln1 = _norm(x, q.ln1_gain, q.ln1_bias, q.eps)
        a_out, s_a = _attention(a, q)
        h = x + a_out
        f, s_ln2 = _norm(h, q.ln2_gain, q.ln2_bias, q.eps)
        f_out, s_f = _feed_forward(f, q)
        y = h + f_out
    return y, (s_a, s_ln1, s_f, s_ln2)


def _layer_backward(dy, q, saved, arrangement):
    """One layer backward: ``(dx, grads)``."""
    s_a, s_ln1, s_f, s_ln2 = saved
    g = {}
    if arrangement == "post-LN":
        dt, g["ln2_gain"], g["ln2_bias"] = layer_norm_backward(dy, *s_ln2)
        dh, g_f = _feed_forward_backward(dt, s_f, q)
        ds, g["ln1_gain"], g["ln1_bias"] = layer_norm_backward(dt + dh, *s_ln1)
        dx, g_a = _attention_backward(ds, s_a, q)
        dx = dx + ds
    else:
        df, g_f = _feed_forward_backward(dy, s_f, q)
        dh_f, g["ln2_gain"], g["ln2_bias"] = layer_norm_backward(df, *s_ln2)
        dh = dy + dh_f
        da, g_a = _attention_backward(dh, s_a, q)
        dx_a, g["ln1_gain"], g["ln1_bias"] = layer_norm_backward(da, *s_ln1)
        dx = dh + dx_a
    return dx, g | g_f | g_a


def stack_gradients(x, stack, W_out, targets, arrangement: str):
    """Loss and gradients of a stack of encoder layers with a softmax readout.

    Parameters
    ----------
    x : array (n, d), float64, the stack's input
    stack : list of :class:`attnlib.EncoderLayerParams` (GELU layers)
    W_out : array (d, C), the readout;  targets : int array (n,), classes in [0, C)
    arrangement : "post-LN" or "pre-LN" (pre-LN adds a final layer normalisation,
        gain 1 and bias 0, after the last layer)

    Returns
    -------
    loss : float, the mean cross-entropy over the ``n`` tokens
    grads : list of dicts, one per layer, a gradient for every parameter
        (``W_Q`` ... ``b_O`` of the attention, ``W_1`` ... ``b_2``, ``ln*_gain``,
        ``ln*_bias``), each of its parameter's shape
    input_grads : list of arrays (n, d), the gradient of each layer's input

    Raises ``ValueError`` naming ``arrangement`` for another value, and what the
    attnlib functions raise for shapes that do not fit.
    Source: Xiong et al. (2020), section 3 (the two arrangements); the chain rule.
    """
    _check_arrangement(arrangement)
    x = np.asarray(x, dtype=np.float64)
    saved, inputs = [], []
    for q in stack:
        inputs.append(x)
        x, s = _layer(x, q, arrangement)
        saved.append(s)
    d = x.shape[-1]
    if arrangement == "pre-LN":
        x, s_final = _norm(x, np.ones(d), np.zeros(d), stack[-1].eps)
    logits = x @ W_out  # (n, C)
    weights = attnlib.softmax(logits, axis=-1)  # (n, C)
    rows = np.arange(len(targets))
    loss = float(-np.log(weights[rows, targets]).mean())
    d_logits = weights.copy()
    d_logits[rows, targets] -= 1.0
    d_logits /= len(targets)
    dy = d_logits @ W_out.T  # (n, d)
    if arrangement == "pre-LN":
        dy = layer_norm_backward(dy, *s_final)[0]
    grads, input_grads = [], []
    for q, s in zip(reversed(stack), reversed(saved)):
        dy, g = _layer_backward(dy, q, s, arrangement)
        grads.append(g)
        input_grads.append(dy)
    return loss, grads[::-1], input_grads[::-1]


def init_stack(seed: int, n_layers: int, d: int, heads: int, d_ff: int, n: int, C: int):
    """``(x, stack, W_out, targets)``: ``n_layers`` untrained layers
    (:func:`attnlib.init_encoder_layer`), an input of ``n`` standard normal rows, a
    Glorot-uniform readout to ``C`` classes and random targets, all from ``seed``."""
    rng = np.random.default_rng(seed)
    stack = [attnlib.init_encoder_layer(rng, d, heads, d_ff) for _ in range(n_layers)]
    x = rng.normal(size=(n, d))  # (n, d)
    limit = np.sqrt(6.0 / (d + C))
    W_out = rng.uniform(-limit, limit, size=(d, C))  # (d, C)
    targets = rng.integers(0, C, size=n)  # (n,)
    return x, stack, W_out, targets


def gradient_norms(
    seed: int,
    n_layers: int = 12,
    d: int = 64,
    heads: int = 4,
    d_ff: int = 256,
    n: int = 10,
    C: int = 50,
) -> dict:
    """Per-layer gradient norms of one untrained stack, post-LN and pre-LN.

    Both arrangements use the same parameters, input, readout and targets (from
    ``seed``). Returns ``{arrangement: {"weights": (n_layers,), "input": (n_layers,),
    "loss": float}}``: the Frobenius norm of the gradient of the layer's six weight
    matrices together (:data:`WEIGHTS`), and of the gradient of the layer's input.
    """
    x, stack, W_out, targets = init_stack(seed, n_layers, d, heads, d_ff, n, C)
    out = {}
    for arrangement in ARRANGEMENTS:
        loss, grads, input_grads = stack_gradients(
            x, stack, W_out, targets, arrangement
        )
        out[arrangement] = {
            "weights": np.array(
                [np.sqrt(sum((g[w] ** 2).sum() for w in WEIGHTS)) for g in grads]
            ),
            "input": np.array([np.linalg.norm(g) for g in input_grads]),
            "loss": loss,
        }
    return out
