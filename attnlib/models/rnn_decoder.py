"""One decoder step of a recurrent encoder-decoder, with or without attention, and its
   backward.

The decoder writes the translation one word at a time. Step ``i`` reads the previous
state ``s_{i-1}`` (shape (B, d)), the vector ``y`` of the previous target word (B, m)
and a context vector ``c_i`` (B, h) made from the encoder states ``H`` (B, T, h)::

    with attention:   e_ij = w_v . tanh(s_{i-1} W_q + h_j W_k)   additive scores
                      alpha_i = softmax(e_i)                     (B, T) weights
                      c_i = sum_j alpha_ij h_j                   the states themselves
    without:          c_i = c                                    the same every step

    s_i      = tanh(y W_y + c_i W_c + s_{i-1} W_s + b)           new state (B, d)
    logits_i = s_i W_os + c_i W_oc + b_o                         next-word scores (B, V)

This is the decoder of Bahdanau, Cho & Bengio (2015, section 3.1 and appendix A.1.2:
``s_i = f(s_{i-1}, y_{i-1}, c_i)`` with ``c_i`` computed from ``s_{i-1}``), with a plain
tanh cell instead of their gated unit and a linear read-out instead of their maxout
layer. Without attention it is the decoder of Cho et al. (2014, section 2.2), which sees
one summary vector ``c`` of the source sentence at every step. Note that the values
mixed are the encoder states ``h_j`` themselves (no value projection), as in the paper.

These are the three formulas of :func:`attnlib.models.bottleneck.decoder_context`
(additive scores, :func:`attnlib.softmax`, the weighted sum), written out here so that
the projected keys ``h_j W_k``, the same at every step of a sentence, are computed once
per sentence, as Bahdanau et al. (appendix A.1.2) suggest; the tests check the step
against ``decoder_context``. The backward pass uses
:func:`attnlib.core.backward.softmax_backward`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core.backward import softmax_backward
from attnlib.core.softmax import softmax

#: Parameters of the decoder step: the recurrent cell and the read-out.
STEP_PARAMETERS = ("W_y", "W_c", "W_s", "b", "W_os", "W_oc", "b_o")
#: Extra parameters of additive attention.
ATTENTION_PARAMETERS = ("W_q", "W_k", "w_v")


@dataclass
class StepCache:
    """What one forward step computed, kept for its backward pass.

    s_prev : (B, d); y : (B, m); c : (B, h); s : (B, d); logits : (B, V);
    weights : (B, T) attention weights, or None without attention; hidden : (B, T, a)
    the scoring layer ``tanh(s_prev W_q + h_j W_k)``, or None without attention.
    """

    s_prev: np.ndarray
    y: np.ndarray
    c: np.ndarray
    s: np.ndarray
    logits: np.ndarray
    weights: np.ndarray | None
    hidden: np.ndarray | None = None


def decoder_step(
    p: dict, s_prev, y, memory, attend: bool, keys_projected=None
) -> StepCache:
    """One decoder step (see the module docstring for the equations).

    Parameters
    ----------
    p : dict of float64 arrays -- ``W_y`` (m, d), ``W_c`` (h, d), ``W_s`` (d, d),
        ``b`` (d,), ``W_os`` (d, V), ``W_oc`` (h, V), ``b_o`` (V,); with ``attend``
        also ``W_q`` (d, a), ``W_k`` (h, a), ``w_v`` (a,).
    s_prev : (B, d) -- previous decoder state
    y : (B, m) -- vector of the previous target word
    memory : with ``attend``, the encoder states ``H`` (B, T, h), which additive
        attention scores and mixes; without, the fixed context vector ``c`` (B, h),
        used as it is.
    attend : bool
    keys_projected : (B, T, a), optional -- ``H W_k``, the same for every step of a
        sentence; computed here if not given

    Returns
    -------
    StepCache with the new state ``s`` (B, d), the ``logits`` (B, V) of the next word,
    the context ``c`` (B, h) and the attention ``weights`` (B, T) (None without
    attention).

    Raises
    ------
    KeyError
        If a parameter is missing (named). Shape errors come from numpy.
    """
    u = None
    if attend:
        if keys_projected is None:
            keys_projected = memory @ p["W_k"]  # (B, T, a)
        u = np.tanh((s_prev @ p["W_q"])[:, None, :] + keys_projected)  # (B, T, a)
        w = softmax(u @ p["w_v"])  # (B, T): additive scores -> weights
        c = np.einsum("bt,bth->bh", w, memory)  # (B, h): sum_j alpha_j h_j
    else:
        c, w = memory, None  # (B, h): every step
    s = np.tanh(y @ p["W_y"] + c @ p["W_c"] + s_prev @ p["W_s"] + p["b"])  # (B, d)
    logits = s @ p["W_os"] + c @ p["W_oc"] + p["b_o"]  # (B, V)
    return StepCache(s_prev, y, c, s, logits, w, u)


def decoder_step_backward(
    p: dict,
    cache: StepCache,
    memory,
    d_logits,
    d_s,
    grads: dict,
    d_memory: np.ndarray,
    keys_projected=None,
    d_keys_projected=None,
):
    """Backward pass of :func:`decoder_step`.

    Parameters
    ----------
    p : the parameters used in the forward step
    cache : its :class:`StepCache`
    memory : what the forward step got: encoder states ``H`` (B, T, h) with attention,
        the fixed context ``c`` (B, h) without
    d_logits : (B, V) -- ``dL/dlogits`` of this step
    d_s : (B, d) -- ``dL/ds_i`` arriving from the next step (zeros after the last step)
    grads : dict -- parameter gradients, **accumulated in place** (same keys as ``p``)
    d_memory : gradient of ``memory`` (its shape), **accumulated in place**
    keys_projected : (B, T, a), optional -- ``H W_k``, the same for every step of a
        sentence (pass it to avoid recomputing it at every step)
    d_keys_projected : (B, T, a), optional -- if given, the gradient of
        ``keys_projected`` is **accumulated** here instead of being taken back through
        ``W_k`` into ``grads["W_k"]`` and ``d_memory`` at every step; the caller then
        does that once for all steps (``dW_k = H^T dK``, ``dH += dK W_k^T``)

    Returns
    -------
    d_s_prev : (B, d) -- ``dL/ds_{i-1}`` through this step
    d_y : (B, m) -- ``dL/dy`` (the previous word's vector)

    The chain rule, written out (``*`` is element-wise)::

        d s      = d_logits W_os^T + d_s          d c = d_logits W_oc^T + d a W_c^T
        d a      = d s * (1 - s^2)                (a: the argument of tanh)
        with attention, u_j = tanh(s_{i-1} W_q + h_j W_k):
            d h_j      += alpha_j d c             d alpha_j = h_j . d c
            d e         = softmax_backward(alpha, d alpha)
            d u_j       = d e_j w_v * (1 - u_j^2)
            d w_v      += sum_j d e_j u_j         d W_k += sum_j h_j^T d u_j
            d W_q      += s_{i-1}^T sum_j d u_j   d h_j += d u_j W_k^T
            d s_{i-1}  += sum_j d u_j W_q^T
        without attention: d c (fixed) += d c
    """
    s, c = cache.s, cache.c
    grads["W_os"] += s.T @ d_logits
    grads["W_oc"] += c.T @ d_logits
    grads["b_o"] += d_logits.sum(axis=0)
    d_s = d_logits @ p["W_os"].T + d_s  # (B, d)
    d_a = d_s * (1.0 - s**2)  # (B, d)
    grads["W_y"] += cache.y.T @ d_a
    grads["W_c"] += c.T @ d_a
    grads["W_s"] += cache.s_prev.T @ d_a
    grads["b"] += d_a.sum(axis=0)
    d_y = d_a @ p["W_y"].T  # (B, m)
    d_s_prev = d_a @ p["W_s"].T  # (B, d)
    d_c = d_logits @ p["W_oc"].T + d_a @ p["W_c"].T  # (B, h)
    if cache.weights is None:
        d_memory += d_c
        return d_s_prev, d_y
    H, d_H = memory, d_memory
    w = cache.weights  # (B, T)
    B, T, h = H.shape
    d_H += w[:, :, None] * d_c[:, None, :]  # c = sum_j w_j h_j
    d_w = (H @ d_c[:, :, None])[:, :, 0]  # (B, T): h_j . d c
    d_e = softmax_backward(w, d_w)  # (B, T)
    u = cache.hidden  # (B, T, a)
    if u is None:
        if keys_projected is None:
            keys_projected = H @ p["W_k"]  # (B, T, a)
        u = np.tanh((cache.s_prev @ p["W_q"])[:, None, :] + keys_projected)
    a = u.shape[-1]
    grads["w_v"] += d_e.reshape(-1) @ u.reshape(-1, a)
    d_pre = d_e[:, :, None] * p["w_v"] * (1.0 - u**2)  # (B, T, a)
    if d_keys_projected is None:
        grads["W_k"] += H.reshape(-1, h).T @ d_pre.reshape(-1, a)
        d_H += d_pre @ p["W_k"].T
    else:
        d_keys_projected += d_pre
    d_q = d_pre.sum(axis=1)  # (B, a)
    grads["W_q"] += cache.s_prev.T @ d_q
    d_s_prev += d_q @ p["W_q"].T
    return d_s_prev, d_y
