"""The recurrent (Elman) tanh cell and its backward pass, for training encoders by hand.

Forward, for every sequence of a batch (row vectors, as everywhere in attnlib)::

    h_t = tanh(x_t W_x + h_{t-1} W_h + b),      t = 1 .. T,   h_0 given

is :func:`attnlib.bottleneck.rnn_encode` (re-exported here as :func:`rnn_forward`).
:func:`rnn_step` is one step of it; :func:`rnn_backward` is backpropagation through time:
given ``dL/dh_t`` for every step it returns the gradients of the inputs, the initial state
and the three parameters.

Sources: Elman (1990) for the recurrence; Cho et al. (2014), section 2.1, for its use as
the encoder of a translation model; Werbos (1990), "Backpropagation through time".
"""
from __future__ import annotations

import numpy as np

from .bottleneck import RNNParams, rnn_encode

rnn_forward = rnn_encode

__all__ = ["RNNParams", "rnn_forward", "rnn_step", "rnn_backward"]


def rnn_step(x_t, h_prev, W_x, W_h, b) -> np.ndarray:
    """One step of the cell: ``tanh(x_t W_x + h_prev W_h + b)``.

    Shapes: ``x_t`` (..., m), ``h_prev`` (..., h), ``W_x`` (m, h), ``W_h`` (h, h),
    ``b`` (h,); returns (..., h), float64. No checks beyond numpy's own shape errors:
    this is the inner loop; :func:`attnlib.bottleneck.rnn_encode` checks its arguments.
    """
    return np.tanh(x_t @ W_x + h_prev @ W_h + b)


def rnn_backward(inputs, states, h0, W_x, W_h, grad_states):
    """Backpropagation through time for :func:`rnn_forward`.

    With ``a_t = x_t W_x + h_{t-1} W_h + b`` and ``h_t = tanh(a_t)``, going from ``t = T``
    down to 1 and carrying ``g`` = the total gradient reaching ``h_t``::

        g     = grad_states[t] + (gradient from step t+1)
        da_t  = g * (1 - h_t^2)
        dW_x += x_t^T da_t,   dW_h += h_{t-1}^T da_t,   db += sum over the batch of da_t
        dx_t  = da_t W_x^T,   (gradient to h_{t-1}) = da_t W_h^T

    Parameters
    ----------
    inputs : (B, T, m) -- the ``x_t`` of the forward pass
    states : (B, T, h) -- the ``h_t`` the forward pass returned
    h0 : (B, h) -- the initial state used in the forward pass
    W_x : (m, h), W_h : (h, h)
    grad_states : (B, T, h) -- ``dL/dh_t`` from whatever used the states directly
        (the decoder, attention); the recurrence's own contribution is added here.

    Returns
    -------
    dict with ``"inputs"`` (B, T, m), ``"h0"`` (B, h), ``"W_x"`` (m, h), ``"W_h"`` (h, h),
    ``"b"`` (h,), all float64.

    Raises
    ------
    ValueError
        If the shapes do not fit together (the shapes involved are named).
    """
    x = np.asarray(inputs, dtype=np.float64)
    H = np.asarray(states, dtype=np.float64)
    G = np.asarray(grad_states, dtype=np.float64)
    h0 = np.asarray(h0, dtype=np.float64)
    if x.ndim != 3 or H.ndim != 3 or H.shape[:2] != x.shape[:2] or G.shape != H.shape:
        raise ValueError("inputs (B, T, m), states and grad_states (B, T, h) must agree; "
                         f"got {x.shape}, {H.shape}, {G.shape}")
    if h0.shape != (H.shape[0], H.shape[2]) or W_x.shape != (x.shape[2], H.shape[2]) \
            or W_h.shape != (H.shape[2], H.shape[2]):
        raise ValueError(f"h0 {h0.shape}, W_x {W_x.shape}, W_h {W_h.shape} do not fit "
                         f"inputs {x.shape} and states {H.shape}")
    T = x.shape[1]
    d_x = np.zeros_like(x)
    d_Wx, d_Wh, d_b = np.zeros_like(W_x), np.zeros_like(W_h), np.zeros(H.shape[2])
    carry = np.zeros_like(h0)                       # (B, h): gradient from step t+1
    for t in range(T - 1, -1, -1):
        h_prev = H[:, t - 1] if t > 0 else h0       # (B, h)
        d_a = (G[:, t] + carry) * (1.0 - H[:, t] ** 2)   # (B, h)
        d_Wx += x[:, t].T @ d_a
        d_Wh += h_prev.T @ d_a
        d_b += d_a.sum(axis=0)
        d_x[:, t] = d_a @ W_x.T
        carry = d_a @ W_h.T
    return {"inputs": d_x, "h0": carry, "W_x": d_Wx, "W_h": d_Wh, "b": d_b}
