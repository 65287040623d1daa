"""One pre-LN causal Transformer block, as in GPT-2, and its backward pass.

For the inputs ``x`` of ``L`` positions (the residual stream)::

    a = LayerNorm_1(x)                            (B, L, d)
    Q, K, V = a W_Q, a W_K, a W_V, cut into heads (B, H, L, d_k), (B, H_kv, L, d_k)
    heads = CausalAttention(Q, K, V)              (B, H, L, d_k)  grouped-query
    x1 = x + Dropout(Concat(heads) W_O)           (B, L, d)       residual
    f = LayerNorm_2(x1)                           (B, L, d)
    y = x1 + Dropout(act(f W_1 + b_1) W_2 + b_2)  (B, L, d)       residual

Each sub-layer reads a normalised copy of the stream and adds its result back; the
stream itself is never normalised (that is "pre-LN", the transformer-layer chapter).
Dropout acts, in training only, on the attention weights and on each sub-layer's output
before it is added. The causal mask (or a sliding window) lets position ``t`` read
positions up to ``t`` only. With ``H_kv = H`` the attention is multi-head attention; the
projections have no biases, the feed-forward network has.

The modern (LLaMA-style) choices are keyword arguments: ``norm="rms"`` (RMSNorm: no
centring, no ``ln*_bias``), ``rotary=True`` (queries and keys rotated by their
positions ``start, start + 1, ...`` before attention, instead of learned position
vectors at the input) and ``activation="swiglu"`` (the gated network ``(SiLU(f W_1 +
b_1) * (f W_3 + b_3)) W_2 + b_2``). Any bias may be left out of ``p`` (``bias=False``
in the language model).

Parameters are a dict of arrays named as in :data:`BLOCK_PARAMETERS`; the same names
key the gradients that :func:`causal_block_backward` returns. A block without ``W_1``
(and ``ln2_*``, ``b_1``, ``W_2``, ``b_2``) has no feed-forward sub-layer: the
attention-only blocks of the induction-head model (chapter on induction heads).

Source: Radford et al. (2019), section 2.3 (layer normalisation moved to the input of
each sub-block, a final one after the last block); Vaswani et al. (2017), sections 3.1,
3.2.3 and 5.4; Ainslie et al. (2023) for grouped-query attention; Zhang & Sennrich
(2019), Su et al. (2021) and Shazeer (2020) for RMSNorm, RoPE and SwiGLU (Touvron et
al. 2023, section 2.2: LLaMA's block).
"""

from __future__ import annotations

import numpy as np

from attnlib.core._rotary import rotate
from attnlib.core._validation import as_length, finite_array
from attnlib.core.backward import softmax_backward
from attnlib.core.dropout import _drop, as_dropout_rate
from attnlib.core.grouped_query import group_size, grouped_query_attention
from attnlib.core.heads import merge_heads, split_heads
from attnlib.core.masks import causal_mask
from attnlib.core.sliding_window import sliding_window_mask
from attnlib.layers._validation import check_activation
from attnlib.layers.dropout import residual_dropout
from attnlib.layers.feed_forward import ACTIVATIONS, silu
from attnlib.layers.layer_backward import (
    gelu_backward,
    layer_norm_backward,
    layer_norm_stats,
    rms_norm_backward,
    rms_norm_stats,
    silu_backward,
)
from attnlib.layers.layer_norm import layer_norm, rms_norm

__all__ = [
    "BLOCK_PARAMETERS",
    "self_attention_mask",
    "norm",
    "norm_backward",
    "causal_block",
    "causal_block_backward",
]

#: The learned arrays of one block and their shapes (d = model width, H heads of
#: width d_k, H_kv key/value heads, d_ff the feed-forward width).
BLOCK_PARAMETERS = {
    "ln1_gain": "(d,)",
    "ln1_bias": "(d,)",
    "W_Q": "(d, H * d_k)",
    "W_K": "(d, H_kv * d_k)",
    "W_V": "(d, H_kv * d_k)",
    "W_O": "(H * d_k, d)",
    "ln2_gain": "(d,)",
    "ln2_bias": "(d,)",
    "W_1": "(d, d_ff)",
    "b_1": "(d_ff,)",
    "W_2": "(d_ff, d)",
    "b_2": "(d,)",
    "W_3": "(d, d_ff)",  # SwiGLU only: the value projection
    "b_3": "(d_ff,)",
}


def self_attention_mask(n: int, window: int | None = None) -> np.ndarray:
    """The mask of causal self-attention, or of a sliding window of ``window``
    positions.

    Returns a bool array of shape (n, n); raises what :func:`attnlib.causal_mask` and
    :func:`attnlib.core.sliding_window.sliding_window_mask` raise (a length or window
    that is not a positive integer). Source: Vaswani et al. (2017), section 3.2.3;
    Beltagy et al. (2020), section 3.1.
    """
    return causal_mask(n) if window is None else sliding_window_mask(n, window=window)


def _check_norm(kind, name: str = "kind") -> None:
    """``ValueError`` naming ``name`` unless ``kind`` is "layer" or "rms"."""
    if not isinstance(kind, str) or kind not in ("layer", "rms"):
        raise ValueError(f"{name} must be 'layer' or 'rms'; got {kind!r}")


def _check_block(norm_kind, activation, dropout_rate, start) -> None:
    """The block's settings, each refused by name: an unknown ``norm_kind`` or
    ``activation``, a ``dropout_rate`` outside [0, 1), a negative or non-integer
    ``start``."""
    _check_norm(norm_kind, "norm_kind")
    check_activation(activation, (*ACTIVATIONS, "swiglu"))
    as_dropout_rate(dropout_rate, "dropout_rate")
    as_length(start, "start")


def norm(x, p: dict, which: str, kind: str = "layer"):
    """The block's normalisation ``which`` ("ln1", "ln2", "lnf") of ``x`` (B, L, d):
    :func:`attnlib.layer_norm` (its bias if ``p`` has one) or, for ``kind="rms"``,
    :func:`attnlib.rms_norm`. Raises ``ValueError`` naming ``kind`` for another
    value, and what they raise. Source: Ba, Kiros & Hinton (2016); Zhang &
    Sennrich (2019).
    """
    _check_norm(kind)
    if kind == "rms":
        return rms_norm(x, p[f"{which}_gain"])
    return layer_norm(x, p[f"{which}_gain"], p.get(f"{which}_bias"))


def norm_backward(dy, x, p: dict, which: str, kind: str = "layer"):
    """``(dx, grads)``: the backward pass of :func:`norm`, ``grads`` keyed
    ``<which>_gain`` (and ``<which>_bias`` if ``p`` has one); the shapes of ``x`` (B, L,
    d) and of the parameters. Raises ``OverflowError`` as the layer-norm backward
    passes do, and ``ValueError`` as :func:`norm`. Source: Ba, Kiros & Hinton (2016);
    Zhang & Sennrich (2019).
    """
    _check_norm(kind)
    gain = p[f"{which}_gain"]
    if kind == "rms":
        dx, dgain = rms_norm_backward(dy, *rms_norm_stats(x), gain)
        return dx, {f"{which}_gain": dgain}
    dx, dgain, dbias = layer_norm_backward(dy, *layer_norm_stats(x), gain)
    grads = {f"{which}_gain": dgain}
    return dx, grads | ({f"{which}_bias": dbias} if f"{which}_bias" in p else {})


def _affine(x, p, W, b):
    """``x p[W] + p[b]``, the bias only if ``p`` has one."""
    return x @ p[W] + p[b] if b in p else x @ p[W]


def _rows(a):
    """``(B, L, m) -> (B * L, m)``: every position as one row of a matrix product."""
    return a.reshape(-1, a.shape[-1])


def causal_block(
    x,
    p: dict,
    *,
    num_heads: int,
    num_kv_heads: int,
    window: int | None = None,
    dropout_rate: float = 0.0,
    rng=None,
    training: bool = False,
    head_mask=None,
    cache=None,
    activation: str = "relu",
    norm_kind: str = "layer",
    rotary: bool = False,
    start: int = 0,
    keep_for_backward: bool = False,
):
    """One pre-LN causal block: attention sub-layer, then feed-forward sub-layer.

    Parameters
    ----------
    x : array, shape (B, L, d), float32 or float64 (the parameters' dtype)
    p : dict of the arrays named in :data:`BLOCK_PARAMETERS`
    num_heads, num_kv_heads : int, ``H`` and ``H_kv`` (``H_kv`` dividing ``H``)
    window : int, optional; a sliding window of this many positions instead of the
        full causal mask
    dropout_rate : float in [0, 1); used only when ``training``
    rng : numpy.random.Generator, draws the dropout masks (training only)
    training : bool; False (evaluation) drops nothing and draws nothing
    head_mask : array of shape (H,), optional; multiplies each head's output (0 removes
        a head: an ablation)
    cache : object with ``update(k, v) -> (keys, values, mask)``, optional: the
        block's KV cache during generation (see :mod:`attnlib.models.kv_cache`). ``x``
        then holds only the new positions; ``k, v`` are their keys and values, shape
        (B, H_kv, L, d_k), and the cache returns every kept key and value with the
        mask of the new queries against them.
    activation : "relu" (Vaswani et al.), "gelu" (GPT-2) or "swiglu" (LLaMA: needs
        ``W_3``), the feed-forward network's
    norm_kind : "layer" (layer norm) or "rms" (RMSNorm), both normalisations
    rotary : bool, rotate queries and keys by their positions ``start + 0 .. L - 1``
        (RoPE); the cache then stores rotated keys
    start : int, the position of ``x[:, 0]`` (the tokens already cached)
    keep_for_backward : bool, also return what :func:`causal_block_backward` needs

    Returns
    -------
    y : array, shape (B, L, d)
    weights : array, shape (B, H, L, L_k), every head's attention weights (before
        dropout); ``L_k = L`` without a cache
    saved : dict, only with ``keep_for_backward``

    Raises
    ------
    ValueError, TypeError naming ``norm_kind``, ``activation``, ``dropout_rate`` or
    ``start`` when it is not one of its values, and from the attnlib functions it calls
    (shapes, head counts, dropout arguments), naming what is wrong.

    Source: Radford et al. (2019), section 2.3; Vaswani et al. (2017), sections 3.2-3.3
    and 5.4.
    """
    H, H_kv = num_heads, num_kv_heads
    group_size(H, H_kv)
    _check_block(norm_kind, activation, dropout_rate, start)
    rate = dropout_rate if training else 0.0
    a = norm(x, p, "ln1", norm_kind)  # (B, L, d)
    q = split_heads(a @ p["W_Q"], H)  # (B, H, L, d_k)
    k = split_heads(a @ p["W_K"], H_kv)  # (B, H_kv, L, d_k)
    v = split_heads(a @ p["W_V"], H_kv)  # (B, H_kv, L, d_k)
    positions = start + np.arange(x.shape[-2], dtype=np.float64)  # (L,)
    if rotary:  # RoPE: q_m -> R_m q_m, k_n -> R_n k_n (Su et al. 2021)
        q, k = rotate(q, positions), rotate(k, positions)
    if cache is None:
        keys, values, mask = k, v, self_attention_mask(x.shape[-2], window)
    else:
        keys, values, mask = cache.update(k, v)  # (B, H_kv, L_k, d_k), (L, L_k)
    heads, weights, keep = grouped_query_attention(
        q, keys, values, mask, dropout=rate, rng=rng, return_keep=True
    )  # (B, H, L, d_k), (B, H, L, L_k); keep: the dropout mask or None
    if head_mask is not None:
        heads = heads * np.asarray(head_mask, dtype=heads.dtype)[:, None, None]
    merged = merge_heads(heads)  # (B, L, H d_k)
    attn_out, drop1 = residual_dropout(merged @ p["W_O"], rate, rng, training=training)
    x1 = x + attn_out  # (B, L, d)
    saved = dict(x=x, a=a, q=q, k=k, v=v, mask=mask, weights=weights, keep=keep)
    saved |= dict(rate=rate, head_mask=head_mask, merged=merged, drop1=drop1, x1=x1)
    saved |= dict(norm_kind=norm_kind, positions=positions if rotary else None)
    if "W_1" in p:  # the feed-forward sub-layer (absent in an attention-only model)
        f = norm(x1, p, "ln2", norm_kind)  # (B, L, d)
        pre = _affine(f, p, "W_1", "b_1")  # (B, L, d_ff), before the activation
        if activation == "swiglu":  # gated: SiLU(f W_1 + b_1) * (f W_3 + b_3)
            up = _affine(f, p, "W_3", "b_3")  # (B, L, d_ff)
            act = silu(pre) * up  # (B, L, d_ff)
            saved["up"] = up
        else:
            act = ACTIVATIONS[activation](pre)  # (B, L, d_ff)
        ff_out = _affine(act, p, "W_2", "b_2")  # (B, L, d)
        ff_out, drop2 = residual_dropout(ff_out, rate, rng, training=training)
        y = x1 + ff_out  # (B, L, d)
        saved |= dict(f=f, pre=pre, act=act, drop2=drop2, activation=activation)
    else:
        y = x1
    return (y, weights, saved) if keep_for_backward else (y, weights)


def _attention_backward(d_heads, s, H, H_kv):
    """``dQ, dK, dV`` of grouped-query attention with dropout on the weights.

    With ``P`` the weights, ``P~ = P * keep / (1 - rate)`` the weights used and
    ``O = P~ V``: ``dV = P~^T dO``, ``dP = (dO V^T) * keep / (1 - rate)``,
    ``dS = P * (dP - rowsum(P * dP))``, ``dQ = scale dS K``, ``dK = scale dS^T Q``;
    the key/value gradients are summed over the ``G`` query heads of each group.
    """
    G = H // H_kv
    B, _, L, d_k = s["q"].shape
    scale = 1.0 / np.sqrt(d_k)

    def grouped(a):  # (B, H, ...) -> (B, H_kv, G, ...)
        return a.reshape((B, H_kv, G) + a.shape[2:])

    P = grouped(s["weights"])  # (B, H_kv, G, L, L)
    dO = grouped(d_heads)  # (B, H_kv, G, L, d_k)
    q = grouped(s["q"])  # (B, H_kv, G, L, d_k)
    k, v = s["k"][:, :, None], s["v"][:, :, None]  # (B, H_kv, 1, L, d_k)
    keep = None if s["keep"] is None else grouped(s["keep"])
    P_used = _drop(P, keep, s["rate"])  # (B, H_kv, G, L, L), the weights used
    dv = (np.swapaxes(P_used, -1, -2) @ dO).sum(axis=2)  # (B, H_kv, L, d_k)
    dP = _drop(dO @ np.swapaxes(v, -1, -2), keep, s["rate"])  # (.., G, L, L)
    dS = softmax_backward(P, dP, mask=s["mask"])  # (B, H_kv, G, L, L)
    dq = scale * (dS @ k)  # (B, H_kv, G, L, d_k)
    dk = scale * (np.swapaxes(dS, -1, -2) @ q).sum(axis=2)  # (B, H_kv, L, d_k)
    return dq.reshape(B, H, L, d_k), dk, dv


def causal_block_backward(
    dy, p: dict, saved: dict, *, num_heads: int, num_kv_heads: int
):
    """The backward pass of :func:`causal_block` (without a cache).

    Parameters
    ----------
    dy : array, shape (B, L, d), ``dLoss/dy``
    p : the block's parameters
    saved : from ``causal_block(..., keep_for_backward=True)``
    num_heads, num_kv_heads : as in the forward pass

    Returns
    -------
    dx : array, shape (B, L, d)
    grads : dict with one gradient per name of :data:`BLOCK_PARAMETERS`, each of its
        parameter's shape

    The steps are the forward pass's in reverse, each by the chain rule; the residual
    additions pass ``dy`` through unchanged, which is why deep pre-LN stacks train (the
    transformer-layer chapter). Raises ``OverflowError`` (naming ``dy``) when a gradient
    does not fit the dtype; ``TypeError`` or ``ValueError`` naming ``dy`` (not finite,
    real, or of the saved input's shape) or a head count (as the forward pass); the
    other shapes are those the forward pass saved (a ``saved`` from another block or
    model gives numpy's shape errors).

    Source: the forward pass of Radford et al. (2019), section 2.3, differentiated by
    the chain rule (checked against finite differences in tests/test_language_model.py).
    """
    dy = _check_block_backward(dy, saved, num_heads, num_kv_heads)
    with np.errstate(over="ignore", invalid="ignore"):  # checked at the end
        d_x, g = _block_backward(dy, p, saved, num_heads, num_kv_heads)
    if not (np.isfinite(d_x).all() and all(np.isfinite(v).all() for v in g.values())):
        raise OverflowError("dy is so large that the block's gradients overflow")
    return d_x, g


def _check_block_backward(dy, saved, num_heads, num_kv_heads):
    """``dy`` finite and real, with the shape of the block's input ``saved["x"]``; the
    head counts as :func:`causal_block` checks them. Each refusal names its argument."""
    group_size(num_heads, num_kv_heads)
    dy = finite_array(dy, "dy", "(B, L, d)", 3)
    if dy.shape != np.shape(saved["x"]):
        raise ValueError(
            f"dy {dy.shape} must have the shape of the block's input "
            f"{np.shape(saved['x'])} (the saved forward pass)"
        )
    return dy


def _block_backward(dy, p, saved, num_heads, num_kv_heads):
    """The steps of :func:`causal_block_backward`, in reverse order of the forward."""
    s, g = saved, {}
    H, H_kv = num_heads, num_kv_heads
    d_x1 = dy  # the residual path
    if "W_1" in p:  # feed-forward sub-layer: y = x1 + drop2 * (act W_2 + b_2)
        d_ff = _drop(dy, s["drop2"], s["rate"])  # (B, L, d)
        g["W_2"] = _rows(s["act"]).T @ _rows(d_ff)  # (d_ff, d)
        g["b_2"] = d_ff.sum(axis=(0, 1))
        d_act = d_ff @ p["W_2"].T  # (B, L, d_ff)
        d_f = 0.0
        if s["activation"] == "swiglu":  # act = SiLU(pre) * up
            d_up = d_act * silu(s["pre"])  # (B, L, d_ff)
            d_pre = silu_backward(s["pre"], d_act * s["up"])  # (B, L, d_ff)
            g["W_3"], g["b_3"] = _rows(s["f"]).T @ _rows(d_up), d_up.sum(axis=(0, 1))
            d_f = d_up @ p["W_3"].T  # (B, L, d)
        elif s["activation"] == "gelu":
            d_pre = gelu_backward(s["pre"], d_act)  # (B, L, d_ff)
        else:
            d_pre = d_act * (s["pre"] > 0)  # ReLU passes the gradient where x > 0
        g["W_1"] = _rows(s["f"]).T @ _rows(d_pre)  # (d, d_ff)
        g["b_1"] = d_pre.sum(axis=(0, 1))
        d_f = d_f + d_pre @ p["W_1"].T  # (B, L, d)
        d_x1_f, g_ln2 = norm_backward(d_f, s["x1"], p, "ln2", s["norm_kind"])
        d_x1, g = d_x1 + d_x1_f, g | g_ln2
    # attention sub-layer: x1 = x + drop1 * (merged W_O)
    d_attn = _drop(d_x1, s["drop1"], s["rate"])  # (B, L, d)
    g["W_O"] = _rows(s["merged"]).T @ _rows(d_attn)  # (H d_k, d)
    d_heads = split_heads(d_attn @ p["W_O"].T, H)  # (B, H, L, d_k)
    if s["head_mask"] is not None:
        d_heads = (
            d_heads * np.asarray(s["head_mask"], dtype=d_heads.dtype)[:, None, None]
        )
    dq, dk, dv = _attention_backward(d_heads, s, H, H_kv)
    if s["positions"] is not None:  # RoPE: R_m^T = R_{-m} turns the gradient back
        dq, dk = rotate(dq, -s["positions"]), rotate(dk, -s["positions"])
    dq, dk, dv = merge_heads(dq), merge_heads(dk), merge_heads(dv)  # (B, L, ...)
    a = _rows(s["a"])
    g["W_Q"], g["W_K"], g["W_V"] = (a.T @ _rows(d) for d in (dq, dk, dv))
    d_a = dq @ p["W_Q"].T + dk @ p["W_K"].T + dv @ p["W_V"].T  # (B, L, d)
    d_x, g_ln1 = norm_backward(d_a, s["x"], p, "ln1", s["norm_kind"])
    g |= g_ln1
    return d_x + d_x1, {name: g[name] for name in BLOCK_PARAMETERS if name in p}
