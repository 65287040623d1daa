"""The gated recurrent unit (GRU) of Cho et al. (2014) and its backward pass.

Forward, for every sequence of a batch (row vectors, as everywhere in attnlib; ``*`` is
element-wise, ``sigma`` the logistic sigmoid)::

    z_t = sigma(x_t W_xz + h_{t-1} W_hz + b_z)                update gate   (..., h)
    r_t = sigma(x_t W_xr + h_{t-1} W_hr + b_r)                reset gate    (..., h)
    n_t = tanh(x_t W_xn + (r_t * h_{t-1}) W_hn + b_n)         candidate     (..., h)
    h_t = z_t * h_{t-1} + (1 - z_t) * n_t                     new state     (..., h)

The three blocks of each weight are stored side by side, in the order z, r, n:
``W_x = [W_xz | W_xr | W_xn]`` (m, 3h), ``W_h = [W_hz | W_hr | W_hn]`` (h, 3h), ``b``
(3h,). A GRU has three times the parameters of the tanh cell of
:mod:`attnlib.models.recurrent` with the same ``h``. When ``z_t`` is near 1 the state is
copied unchanged, so old information need not shrink step by step as it does in the
tanh cell; that is why the gate was introduced.

:func:`init_gru` gives seeded parameters, :func:`gru_encode` runs the cell over a
sequence, :func:`gru_backward` is backpropagation through time.

Source: Cho et al. (2014), section 2.3, equations (5)-(8) (their ``z`` weights the
old state, as here; biases are added). Werbos (1990) for backpropagation through time.
"""

from __future__ import annotations

import math

import numpy as np

from attnlib.core._validation import (
    as_float_array,
    as_generator,
    as_real_number,
    as_width,
    compute_dtype,
    finite_arrays,
    fits,
    require_ndim,
)
from attnlib.models.recurrent import _initial_state

__all__ = ["init_gru", "gru_encode", "gru_backward"]


def _sigmoid(a):
    """The logistic function, written with tanh: it never overflows."""
    return 0.5 * (1.0 + np.tanh(0.5 * a))


def init_gru(rng, input_size: int, hidden_size: int, *, input_scale: float = 1.0):
    """Seeded random parameters for a GRU (float64).

    Each of the three recurrent blocks of ``W_h`` is a random orthogonal (h, h) matrix;
    ``W_x`` has independent normal entries with standard deviation ``input_scale /
    sqrt(input_size)``; ``b`` is zero.

    Parameters
    ----------
    rng : numpy.random.Generator, or a seed
    input_size, hidden_size : int >= 1 (``m`` and ``h``)
    input_scale : float >= 0

    Returns
    -------
    W_x (m, 3h), W_h (h, 3h), b (3h,), float64 -- the order ``gru_encode`` takes.

    Raises
    ------
    TypeError
        If a size is not an integer, ``input_scale`` not a number, or ``rng`` neither
        a Generator nor a seed (each named).
    ValueError
        If a size is below 1 or ``input_scale`` is negative or not finite.

    Source: orthogonal recurrent matrices as in Saxe et al. (2014); the cell is Cho et
    al.'s (2014).
    """
    rng = as_generator(rng)
    m, h = as_width(input_size, "input_size"), as_width(hidden_size, "hidden_size")
    if not (
        math.isfinite(as_real_number(input_scale, "input_scale")) and input_scale >= 0
    ):
        raise ValueError(f"input_scale must be a finite number >= 0; got {input_scale}")
    blocks = []
    for _ in range(3):
        q, r = np.linalg.qr(rng.standard_normal((h, h)))
        blocks.append(q * np.where(np.diag(r) < 0, -1.0, 1.0))
    W_x = rng.standard_normal((m, 3 * h)) * (input_scale / np.sqrt(m))
    return W_x, np.concatenate(blocks, axis=1), np.zeros(3 * h)


def _check_gru(inputs, W_x, W_h, b, h0):
    x = as_float_array(inputs, "inputs")
    Wx, Wh, bb = (
        as_float_array(a, n) for a, n in ((W_x, "W_x"), (W_h, "W_h"), (b, "b"))
    )
    require_ndim(x, 2, "inputs", "(..., T, m)")
    if x.shape[-2] < 1:
        raise ValueError(
            f"inputs must hold at least one time step; got shape {x.shape}"
        )
    if Wh.ndim != 2 or Wh.shape[1] != 3 * Wh.shape[0] or Wh.shape[0] < 1:
        raise ValueError(f"W_h must have shape (h, 3h), h >= 1; got {Wh.shape}")
    h = Wh.shape[0]
    if Wx.shape != (x.shape[-1], 3 * h):
        raise ValueError(
            f"W_x must have shape (m, 3h) = ({x.shape[-1]}, {3 * h}) for inputs "
            f"{x.shape} and W_h {Wh.shape}; got {Wx.shape}"
        )
    if bb.shape != (3 * h,):
        raise ValueError(f"b must have shape (3h,) = ({3 * h},); got {bb.shape}")
    h_prev = _initial_state(h0, x, h)
    for name, a in (("inputs", x), ("W_x", Wx), ("W_h", Wh), ("b", bb), ("h0", h_prev)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} holds NaN or inf; the GRU would propagate it")
    out_dtype = np.result_type(x.dtype, Wx.dtype, Wh.dtype, bb.dtype, h_prev.dtype)
    work = compute_dtype(out_dtype)
    return tuple(a.astype(work, copy=False) for a in (x, Wx, Wh, bb, h_prev)) + (
        out_dtype,
    )


def _finite(a) -> None:
    if not np.isfinite(a).all():
        raise OverflowError(
            "a GRU pre-activation (x_t W_x + h_(t-1) W_h + b) exceeds the largest "
            "float64 number; scale the inputs or the weights down"
        )


def _step(drive_t, h_prev, Wh):
    """One step from the precomputed ``x_t W_x + b`` (..., 3h): z, r, n and h_t."""
    h = h_prev.shape[-1]
    with np.errstate(over="ignore", invalid="ignore"):
        zr = drive_t[..., : 2 * h] + np.einsum("...i,ij->...j", h_prev, Wh[:, : 2 * h])
        _finite(zr)
        z, r = _sigmoid(zr[..., :h]), _sigmoid(zr[..., h:])
        a_n = drive_t[..., 2 * h :] + np.einsum(
            "...i,ij->...j", r * h_prev, Wh[:, 2 * h :]
        )
        _finite(a_n)
    n = np.tanh(a_n)
    return z, r, n, z * h_prev + (1.0 - z) * n


def gru_encode(inputs, W_x, W_h, b, h0=None):
    """Run a GRU over a sequence (the equations of the module docstring).

    Parameters
    ----------
    inputs : array_like, shape (..., T, m), real; T >= 1
    W_x : array_like, shape (m, 3h) -- blocks z, r, n side by side
    W_h : array_like, shape (h, 3h)
    b : array_like, shape (3h,)
    h0 : array_like, shape (..., h), optional -- zeros by default

    Returns
    -------
    states : numpy.ndarray, shape (..., T, h) -- ``h_1 ... h_T``
    final : numpy.ndarray, shape (..., h) -- ``h_T``, the context vector of an
        encoder-decoder without attention.
        Computed in float64, returned in the arguments' common float dtype.

    Raises
    ------
    ValueError
        If a shape does not fit (named with the shapes involved), ``T`` is 0, or an
        argument holds NaN or inf (named).
    TypeError
        If an argument does not hold real numbers (named).
    OverflowError
        If a pre-activation exceeds the largest float64 number.

    Source: Cho et al. (2014), section 2.3 (the unit) and section 2.1 (the encoder's
    last state is the summary ``c``).
    """
    x, Wx, Wh, bb, h_prev, out_dtype = _check_gru(inputs, W_x, W_h, b, h0)
    h_prev = np.broadcast_to(
        h_prev, np.broadcast_shapes(h_prev.shape, x.shape[:-2] + h_prev.shape[-1:])
    )
    with np.errstate(over="ignore", invalid="ignore"):
        drive = x @ Wx + bb  # (..., T, 3h)
    _finite(drive)
    states = []
    for t in range(x.shape[-2]):
        h_prev = _step(drive[..., t, :], h_prev, Wh)[3]
        states.append(h_prev)
    states = np.stack(states, axis=-2).astype(out_dtype, copy=False)  # (..., T, h)
    return states, states[..., -1, :].copy()


def gru_backward(inputs, states, h0, W_x, W_h, b, grad_states):
    """Backpropagation through time for :func:`gru_encode`.

    The gates of every step are recomputed from ``h_{t-1}`` (the stored states). Going
    from ``t = T`` down to 1 with ``g`` the total gradient reaching ``h_t`` (``sigma' =
    s (1 - s)``, ``tanh' = 1 - n^2``)::

        g      = grad_states[t] + (gradient from step t+1)
        dn     = g * (1 - z)              dz = g * (h_{t-1} - n)
        da_n   = dn * (1 - n^2)           dq = da_n W_hn^T        (q = r * h_{t-1})
        da_r   = dq * h_{t-1} * r (1 - r)           da_z = dz * z (1 - z)
        da     = [da_z | da_r | da_n]               (B, 3h)
        dW_x  += x_t^T da    db += sum over the batch of da    dx_t = da W_x^T
        dW_h  += [h_{t-1}^T da_z | h_{t-1}^T da_r | q^T da_n]
        (gradient to h_{t-1}) = g * z + dq * r + [da_z | da_r] [W_hz | W_hr]^T

    Parameters
    ----------
    inputs : (B, T, m); states : (B, T, h) from the forward pass; h0 : (B, h);
    W_x : (m, 3h); W_h : (h, 3h); b : (3h,);
    grad_states : (B, T, h) -- ``dL/dh_t`` from whatever used the states directly

    Returns
    -------
    dict with ``"inputs"`` (B, T, m), ``"h0"`` (B, h), ``"W_x"`` (m, 3h), ``"W_h"``
    (h, 3h), ``"b"`` (3h,), all float64.

    Raises
    ------
    ValueError
        If the shapes do not fit together (named), or an array holds NaN or inf.
    TypeError
        If an array is not real (named).
    OverflowError
        If a gradient does not fit float64.
    """
    arrays = finite_arrays(
        inputs=inputs, states=states, h0=h0, W_x=W_x, W_h=W_h, b=b,
        grad_states=grad_states,
    )  # fmt: skip
    x, H, h0, W_x, W_h, b, G = (a.astype(np.float64, copy=False) for a in arrays)
    if x.ndim != 3 or H.ndim != 3 or H.shape[:2] != x.shape[:2] or G.shape != H.shape:
        raise ValueError(
            "inputs (B, T, m), states and grad_states (B, T, h) must agree; "
            f"got {x.shape}, {H.shape}, {G.shape}"
        )
    B, T, h = H.shape
    if (
        h0.shape != (B, h)
        or W_x.shape != (x.shape[2], 3 * h)
        or W_h.shape != (h, 3 * h)
        or b.shape != (3 * h,)
    ):
        raise ValueError(
            f"h0 {h0.shape}, W_x {W_x.shape}, W_h {W_h.shape}, b {b.shape} do not fit "
            f"inputs {x.shape} and states {H.shape}"
        )
    drive = x @ W_x + b  # (B, T, 3h)
    d_x, d_Wx = np.zeros_like(x), np.zeros_like(W_x)
    d_Wh, d_b = np.zeros_like(W_h), np.zeros_like(b)
    carry = np.zeros_like(h0)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits below
        for t in range(T - 1, -1, -1):
            h_prev = H[:, t - 1] if t > 0 else h0
            z, r, n, _ = _step(drive[:, t], h_prev, W_h)
            g = G[:, t] + carry
            d_an = g * (1.0 - z) * (1.0 - n**2)
            d_q = d_an @ W_h[:, 2 * h :].T
            d_az = g * (h_prev - n) * z * (1.0 - z)
            d_ar = d_q * h_prev * r * (1.0 - r)
            d_a = np.concatenate([d_az, d_ar, d_an], axis=1)  # (B, 3h)
            d_Wx += x[:, t].T @ d_a
            d_b += d_a.sum(axis=0)
            d_x[:, t] = d_a @ W_x.T
            d_Wh[:, : 2 * h] += h_prev.T @ d_a[:, : 2 * h]
            d_Wh[:, 2 * h :] += (r * h_prev).T @ d_an
            carry = g * z + d_q * r + d_a[:, : 2 * h] @ W_h[:, : 2 * h].T
    grads = {"inputs": d_x, "h0": carry, "W_x": d_Wx, "W_h": d_Wh, "b": d_b}
    return {name: fits(g, "the GRU's gradients") for name, g in grads.items()}
