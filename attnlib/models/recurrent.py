"""The recurrent (Elman) tanh cell and its backward pass, for training encoders by hand.

Forward, for every sequence of a batch (row vectors, as everywhere in attnlib)::

    h_t = tanh(x_t W_x + h_{t-1} W_h + b),      t = 1 .. T,   h_0 given

is :func:`rnn_encode` (with :func:`init_rnn` for seeded parameters). :func:`rnn_step` is
one step of it; :func:`rnn_backward` is backpropagation through time: given ``dL/dh_t``
for every step it returns the gradients of the inputs, the initial state and the three
parameters.

Sources: Elman (1990) for the recurrence; Cho et al. (2014), section 2.1, for its use as
the encoder of a translation model; Werbos (1990), "Backpropagation through time".
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from attnlib.core._validation import (
    as_float_array,
    as_generator,
    as_real_number,
    as_width,
    compute_dtype,
    finite_array,
    finite_arrays,
    fits,
    require_ndim,
)

__all__ = ["RNNParams", "init_rnn", "rnn_encode", "rnn_step", "rnn_backward"]


class RNNParams(NamedTuple):
    """Parameters of a tanh RNN: ``W_x`` (m, h), ``W_h`` (h, h), ``b`` (h,).

    A named tuple, so ``rnn_encode(x, *params)`` works.
    """

    W_x: np.ndarray
    W_h: np.ndarray
    b: np.ndarray


def _initial_state(h0, x: np.ndarray, h: int, dtype=float) -> np.ndarray:
    """The state before the first step: zeros of shape ``(..., h)`` for the batch axes
    of ``x`` (``(..., L, m)``) when ``h0`` is None, else ``h0`` checked: a finite-typed
    array whose last axis is ``h`` and whose batch axes broadcast with ``x``'s
    (ValueError otherwise). Shared by the tanh RNN and the GRU."""
    if h0 is None:
        return np.zeros(x.shape[:-2] + (h,), dtype=dtype)
    h_prev = as_float_array(h0, "h0")
    if h_prev.shape[-1:] != (h,):
        raise ValueError(
            f"h0 must have shape (..., h) = (..., {h}); got {h_prev.shape}"
        )
    try:
        np.broadcast_shapes(h_prev.shape[:-1], x.shape[:-2])
    except ValueError:
        raise ValueError(
            f"the batch axes of h0 {h_prev.shape} and inputs {x.shape} do not broadcast"
        ) from None
    return h_prev


def init_rnn(
    rng: np.random.Generator,
    input_size: int,
    hidden_size: int,
    *,
    spectral_radius: float = 0.9,
    input_scale: float = 0.5,
) -> RNNParams:
    """Seeded random parameters for a tanh RNN (float64).

    ``W_h`` is a random orthogonal matrix times ``spectral_radius``: every eigenvalue
    then has modulus exactly ``spectral_radius``, so below 1 the linear part of the
    recurrence shrinks old information by that factor per step. ``W_x`` has independent
    normal entries with standard deviation ``input_scale / sqrt(input_size)``; ``b`` is
    zero.

    Parameters
    ----------
    rng : numpy.random.Generator, e.g. ``np.random.default_rng(0)``, or a seed
    input_size, hidden_size : int >= 1 (``m`` and ``h``)
    spectral_radius : float >= 0
    input_scale : float >= 0

    Returns
    -------
    RNNParams with ``W_x`` (m, h), ``W_h`` (h, h), ``b`` (h,)

    Raises
    ------
    TypeError
        If a size is not an integer, a scale not a number, or ``rng`` neither a
        Generator nor a seed (each named).
    ValueError
        If a size is below 1 or a scale is negative or not finite.

    Source: the orthogonal recurrent matrix follows Saxe et al. (2014); the RNN is
    Elman's.
    """
    rng = as_generator(rng)
    m, h = as_width(input_size, "input_size"), as_width(hidden_size, "hidden_size")
    for name, value in (
        ("spectral_radius", spectral_radius),
        ("input_scale", input_scale),
    ):
        if not (math.isfinite(as_real_number(value, name)) and value >= 0):
            raise ValueError(f"{name} must be a finite number >= 0; got {value}")
    a = rng.standard_normal((h, h))
    q, r = np.linalg.qr(a)
    q = q * np.where(np.diag(r) < 0, -1.0, 1.0)  # a uniformly random orthogonal matrix
    W_x = rng.standard_normal((m, h)) * (input_scale / np.sqrt(m))
    return RNNParams(W_x=W_x, W_h=spectral_radius * q, b=np.zeros(h))


def _check_rnn(inputs, W_x, W_h, b, h0):
    x = as_float_array(inputs, "inputs")
    Wx = as_float_array(W_x, "W_x")
    Wh = as_float_array(W_h, "W_h")
    bb = as_float_array(b, "b")
    require_ndim(x, 2, "inputs", "(..., T, m)")
    if x.shape[-2] < 1:
        raise ValueError(
            f"inputs must hold at least one time step; got shape {x.shape}"
        )
    if Wx.ndim != 2 or Wx.shape[0] != x.shape[-1]:
        raise ValueError(
            f"W_x must have shape (m, h) = ({x.shape[-1]}, h) for inputs {x.shape}; "
            f"got {Wx.shape}"
        )
    h = Wx.shape[1]
    if Wh.shape != (h, h):
        raise ValueError(
            f"W_h must have shape (h, h) = ({h}, {h}) to match W_x {Wx.shape}; "
            f"got {Wh.shape}"
        )
    if bb.shape != (h,):
        raise ValueError(
            f"b must have shape (h,) = ({h},) to match W_x {Wx.shape}; got {bb.shape}"
        )
    h_prev = _initial_state(h0, x, h, np.result_type(x.dtype, Wx.dtype))
    for name, a in (("inputs", x), ("W_x", Wx), ("W_h", Wh), ("b", bb), ("h0", h_prev)):
        if not np.all(np.isfinite(a)):
            raise ValueError(
                f"{name} holds NaN or inf; the RNN would silently propagate it"
            )
    out_dtype = np.result_type(x.dtype, Wx.dtype, Wh.dtype, bb.dtype, h_prev.dtype)
    work = compute_dtype(out_dtype)
    return tuple(a.astype(work, copy=False) for a in (x, Wx, Wh, bb, h_prev)) + (
        out_dtype,
    )


def rnn_encode(inputs, W_x, W_h, b, h0=None):
    """Run a tanh (Elman) RNN over a sequence: ``h_t = tanh(x_t W_x + h_{t-1} W_h +
       b)``.

    Parameters
    ----------
    inputs : array_like, shape (..., T, m), real; T >= 1
        One row ``x_t`` per time step; leading axes are independent sequences.
    W_x : array_like, shape (m, h)
    W_h : array_like, shape (h, h)
    b : array_like, shape (h,)
    h0 : array_like, shape (..., h), optional
        The state before the first step; zeros by default.

    Returns
    -------
    states : numpy.ndarray, shape (..., T, h)
        Every hidden state ``h_1 ... h_T`` (what attention may look at).
    final : numpy.ndarray, shape (..., h)
        ``h_T``, the single fixed-size context vector of an encoder-decoder without
        attention (equal to ``states[..., -1, :]``).
        Both are computed in float64 and returned in the arguments' common float dtype
        (integers give float64).

    Raises
    ------
    ValueError
        If a shape does not fit (the shapes involved are named), ``T`` is 0, or an
        argument holds NaN or inf (named).
    TypeError
        If an argument does not hold real numbers (its dtype is named).
    OverflowError
        If a pre-activation ``x_t W_x + h_(t-1) W_h + b`` exceeds the largest float64
        number (tanh would be fed inf, or inf - inf).

    Source: Cho et al. (2014), section 2.1 (the encoder's last hidden state is the
    summary ``c``); Sutskever et al. (2014), section 2; Elman (1990) for the simple
    recurrence.
    """
    x, Wx, Wh, bb, h_prev, out_dtype = _check_rnn(inputs, W_x, W_h, b, h0)
    T = x.shape[-2]
    h_prev = np.broadcast_to(
        h_prev, np.broadcast_shapes(h_prev.shape, x.shape[:-2] + h_prev.shape[-1:])
    )
    with np.errstate(over="ignore", invalid="ignore"):
        drive = x @ Wx + bb  # (..., T, h): x_t W_x + b for every t at once
    _check_preactivation(drive)
    states = []
    for t in range(T):
        # h_prev @ W_h, written with einsum: for these small matrices it avoids
        # multithreaded BLAS, which is many times slower than one thread when the CPU is
        # shared.
        with np.errstate(over="ignore", invalid="ignore"):
            a = drive[..., t, :] + np.einsum("...i,ij->...j", h_prev, Wh)  # (..., h)
        _check_preactivation(a)
        h_prev = np.tanh(a)
        states.append(h_prev)
    states = np.stack(states, axis=-2).astype(out_dtype, copy=False)  # (..., T, h)
    return states, states[..., -1, :].copy()


def _check_preactivation(a) -> None:
    if not np.isfinite(a).all():
        raise OverflowError(
            "the RNN's pre-activation x_t W_x + h_(t-1) W_h + b exceeds the largest "
            "float64 number; scale the inputs or the weights down"
        )


def rnn_step(x_t, h_prev, W_x, W_h, b) -> np.ndarray:
    """One step of the cell: ``tanh(x_t W_x + h_prev W_h + b)``.

    Shapes: ``x_t`` (..., m), ``h_prev`` (..., h), ``W_x`` (m, h), ``W_h`` (h, h),
    ``b`` (h,); returns (..., h) in the arguments' common float dtype (integers give
    float64). It is :func:`rnn_encode` on a sequence of one step, with its checks and
    errors (shapes, NaN and inf named as ValueError, an overflowing pre-activation as
    OverflowError).
    """
    x, h_prev = _check_step(x_t, h_prev, W_x, W_h)
    return rnn_encode(x[..., None, :], W_x, W_h, b, h0=h_prev)[1]


def _check_step(x_t, h_prev, W_x, W_h):
    """:func:`rnn_step`'s own arguments, named as it names them (``rnn_encode`` would
    call them ``inputs`` and ``h0``): finite real arrays whose last axes fit ``W_x``
    and ``W_h``."""
    x = finite_array(x_t, "x_t", "(..., m)", 1)
    h = finite_array(h_prev, "h_prev", "(..., h)", 1)
    for name, a, W_name, W in (("x_t", x, "W_x", W_x), ("h_prev", h, "W_h", W_h)):
        if np.ndim(W) != 2 or a.shape[-1] != np.shape(W)[0]:
            raise ValueError(
                f"{name} {a.shape} does not fit {W_name} {np.shape(W)}: its last axis "
                f"must equal the rows of {W_name}"
            )
    return x, h


def rnn_backward(inputs, states, h0, W_x, W_h, grad_states):
    """Backpropagation through time for :func:`rnn_encode`.

    With ``a_t = x_t W_x + h_{t-1} W_h + b`` and ``h_t = tanh(a_t)``, going from ``t =
    T`` down to 1 and carrying ``g`` = the total gradient reaching ``h_t``::

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
    dict with ``"inputs"`` (B, T, m), ``"h0"`` (B, h), ``"W_x"`` (m, h), ``"W_h"`` (h,
    h), ``"b"`` (h,), all float64.

    Raises
    ------
    ValueError
        If the shapes do not fit together (the shapes involved are named), or an array
        holds NaN or inf (named).
    TypeError
        If an array is not real (named).
    OverflowError
        If a gradient does not fit float64.
    """
    x, H, G, h0, W_x, W_h = (
        a.astype(np.float64, copy=False)
        for a in finite_arrays(
            inputs=inputs,
            states=states,
            grad_states=grad_states,
            h0=h0,
            W_x=W_x,
            W_h=W_h,
        )
    )
    if x.ndim != 3 or H.ndim != 3 or H.shape[:2] != x.shape[:2] or G.shape != H.shape:
        raise ValueError(
            "inputs (B, T, m), states and grad_states (B, T, h) must agree; "
            f"got {x.shape}, {H.shape}, {G.shape}"
        )
    if (
        h0.shape != (H.shape[0], H.shape[2])
        or W_x.shape != (x.shape[2], H.shape[2])
        or W_h.shape != (H.shape[2], H.shape[2])
    ):
        raise ValueError(
            f"h0 {h0.shape}, W_x {W_x.shape}, W_h {W_h.shape} do not fit "
            f"inputs {x.shape} and states {H.shape}"
        )
    T = x.shape[1]
    d_x = np.zeros_like(x)
    d_Wx, d_Wh, d_b = np.zeros_like(W_x), np.zeros_like(W_h), np.zeros(H.shape[2])
    carry = np.zeros_like(h0)  # (B, h): gradient from step t+1
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits below
        for t in range(T - 1, -1, -1):
            h_prev = H[:, t - 1] if t > 0 else h0  # (B, h)
            d_a = (G[:, t] + carry) * (1.0 - H[:, t] ** 2)  # (B, h)
            d_Wx += x[:, t].T @ d_a
            d_Wh += h_prev.T @ d_a
            d_b += d_a.sum(axis=0)
            d_x[:, t] = d_a @ W_x.T
            carry = d_a @ W_h.T
    grads = {"inputs": d_x, "h0": carry, "W_x": d_Wx, "W_h": d_Wh, "b": d_b}
    return {name: fits(g, "the RNN's gradients") for name, g in grads.items()}
