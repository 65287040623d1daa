"""Backward passes of the layer pieces: layer and RMS normalisation, GELU, SiLU and
SwiGLU.

Each function receives the upstream gradient ``dy = dLoss/dy`` of its forward
function's output and returns the gradients of that function's inputs (and
parameters), with the same shapes. They are what a Transformer's training needs beside
the attention backward of :mod:`attnlib.core.backward`; ``tests/test_causal_block.py``
checks them against finite differences.

Layer normalisation, for one row ``x`` of ``d`` numbers, ``xhat = (x - mean) * r`` with
``r = 1 / sqrt(var + eps)`` and ``y = xhat * gain + bias``::

    dgain = sum over rows of dy * xhat,   dbias = sum over rows of dy
    dxhat = dy * gain
    dx = r * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))

(the two means remove the directions that normalising takes away: a shift of the row
and a change of its scale). RMS normalisation, ``xhat = x * r`` with ``r = 1 /
sqrt(mean(x^2) + eps)``, has no shift to remove::

    dx = r * (dxhat - xhat * mean(dxhat * xhat))

Source: Ba, Kiros & Hinton (2016), section 3; Zhang & Sennrich (2019) (the forward
passes); the derivatives are the chain rule.
"""

from __future__ import annotations

import numpy as np

from attnlib.layers._validation import as_positive, finite_array, finite_arrays, fits
from attnlib.layers.feed_forward import _erf, _sigmoid
from attnlib.layers.layer_norm import DEFAULT_EPS

__all__ = [
    "layer_norm_stats",
    "layer_norm_backward",
    "rms_norm_stats",
    "rms_norm_backward",
    "gelu_backward",
    "silu_backward",
    "swiglu_backward",
]

# Abramowitz & Stegun 7.1.26, the approximation :func:`attnlib.layers.feed_forward.erf`
# computes: erf(a) = 1 - t (c1 + c2 t + ... + c5 t^4) exp(-a^2), t = 1 / (1 + P a).
_P = 0.3275911
_C = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def layer_norm_stats(x, eps: float = DEFAULT_EPS):
    """``(xhat, r)``: the normalised rows of ``x`` and ``r = 1 / sqrt(var + eps)``.

    ``x`` has shape (..., d); ``xhat`` has its shape, ``r`` shape (..., 1). ``xhat *
    gain + bias`` equals :func:`attnlib.layer_norm` to rounding. Raises
    ``OverflowError`` naming ``x`` for rows whose squares would overflow (the forward
    pass rescales those; the backward pass of a model never meets them), and
    ``TypeError`` or ``ValueError`` naming ``x`` or ``eps`` as
    :func:`attnlib.layer_norm` does.

    Source: Ba, Kiros & Hinton (2016), section 3, equation (4).
    """
    x, eps = _check_stats(x, eps)
    if x.size and np.abs(x).max() > np.sqrt(
        np.finfo(x.dtype).max / (4.0 * x.shape[-1])
    ):
        raise OverflowError(
            f"x holds numbers so large ({np.abs(x).max():.3g}) that their squares "
            "overflow; the backward pass expects the forward pass's activations"
        )
    centred = x - x.mean(axis=-1, keepdims=True)  # (..., d)
    r = 1.0 / np.sqrt((centred * centred).mean(axis=-1, keepdims=True) + eps)
    return centred * r, r  # (..., d), (..., 1)


def layer_norm_backward(dy, xhat, r, gain):
    """Gradients of ``y = xhat * gain + bias`` with respect to ``x``, ``gain`` and
    ``bias``.

    Parameters
    ----------
    dy : array, shape (..., d), the upstream gradient
    xhat, r : from :func:`layer_norm_stats` of the forward input
    gain : array, shape (d,)

    Returns
    -------
    dx : shape (..., d);  dgain, dbias : shape (d,) (summed over every leading axis)

    Raises ``OverflowError`` (naming ``dy``) when the gradients do not fit the dtype;
    ``TypeError`` or ``ValueError`` naming the argument for one that is not a finite
    real array of its shape, or an ``r`` that is not positive.

    Source: Ba, Kiros & Hinton (2016), section 3, differentiated.
    """
    dy, xhat, r, gain = _check_norm_backward(dy, xhat, r, gain)
    lead = tuple(range(dy.ndim - 1))
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        dgain = (dy * xhat).sum(axis=lead)  # (d,)
        dbias = dy.sum(axis=lead)  # (d,)
        dxhat = dy * gain  # (..., d)
        dx = r * (
            dxhat
            - dxhat.mean(axis=-1, keepdims=True)
            - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True)
        )
    if not all(np.isfinite(a).all() for a in (dx, dgain, dbias)):
        raise OverflowError("dy is so large that the layer-norm gradients overflow")
    return dx, dgain, dbias


def rms_norm_stats(x, eps: float = DEFAULT_EPS):
    """``(xhat, r)``: the rows of ``x`` (..., d) divided by their root mean square, and
    ``r = 1 / sqrt(mean(x^2) + eps)`` of shape (..., 1). ``xhat * gain`` equals
    :func:`attnlib.rms_norm` to rounding. Raises ``OverflowError`` naming ``x`` when its
    squares would overflow (as :func:`layer_norm_stats`).

    Source: Zhang & Sennrich (2019), equation (4).
    """
    x, eps = _check_stats(x, eps)
    if x.size and np.abs(x).max() > np.sqrt(np.finfo(x.dtype).max / x.shape[-1]):
        raise OverflowError("x holds numbers so large that their squares overflow")
    r = 1.0 / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps)  # (..., 1)
    return x * r, r  # (..., d), (..., 1)


def rms_norm_backward(dy, xhat, r, gain):
    """Gradients of ``y = xhat * gain`` (RMS normalisation) with respect to ``x`` and
    ``gain``: ``dx = r (dxhat - xhat mean(dxhat xhat))``, ``dxhat = dy gain``.

    Parameters: ``dy`` (..., d); ``xhat``, ``r`` from :func:`rms_norm_stats`; ``gain``
    (d,). Returns ``(dx, dgain)`` of shapes (..., d) and (d,). Raises
    ``OverflowError`` (naming ``dy``) when the gradients do not fit the dtype, and
    the errors of :func:`layer_norm_backward` for its arguments.

    Source: Zhang & Sennrich (2019), equation (4), differentiated.
    """
    dy, xhat, r, gain = _check_norm_backward(dy, xhat, r, gain)
    with np.errstate(over="ignore", invalid="ignore"):  # checked below
        dgain = (dy * xhat).sum(axis=tuple(range(dy.ndim - 1)))  # (d,)
        dxhat = dy * gain  # (..., d)
        dx = r * (dxhat - xhat * (dxhat * xhat).mean(axis=-1, keepdims=True))
    if not (np.isfinite(dx).all() and np.isfinite(dgain).all()):
        raise OverflowError("dy is so large that the rms-norm gradients overflow")
    return dx, dgain


def _erf_derivative(x) -> np.ndarray:
    """The derivative of the erf approximation that attnlib computes (not of erf
    itself).

    Differentiating the approximation, rather than using ``2 / sqrt(pi) exp(-x^2)``,
    makes the gradient that of the function the forward pass computes, so a
    finite-difference check agrees to rounding; the two differ by less than 1e-6.
    """
    a = np.abs(x)
    t = 1.0 / (1.0 + _P * a)
    poly = t * (_C[0] + t * (_C[1] + t * (_C[2] + t * (_C[3] + t * _C[4]))))
    dpoly = _C[0] + t * (2 * _C[1] + t * (3 * _C[2] + t * (4 * _C[3] + t * 5 * _C[4])))
    return np.exp(-a * a) * (_P * t * t * dpoly + 2.0 * a * poly)


def gelu_backward(x, dy):
    """Gradient of :func:`attnlib.gelu` at ``x`` times the upstream gradient ``dy``.

    ``gelu(x) = x (1 + erf(x / sqrt 2)) / 2``, so
    ``gelu'(x) = (1 + erf(x / sqrt 2)) / 2 + x erf'(x / sqrt 2) / (2 sqrt 2)``.

    Parameters: ``x``, the forward input (any shape); ``dy``, the same shape.
    Returns: numpy.ndarray of that shape. Raises ``TypeError`` or ``ValueError`` naming
    ``x`` or ``dy`` for one that is not a finite real array, or shapes that differ.

    Source: Hendrycks & Gimpel (2016), section 2 (the function).
    """
    x, dy = _same_shape(x=x, dy=dy)
    s = x / np.sqrt(2.0)
    with np.errstate(over="ignore", under="ignore"):  # exp(-s^2) -> 0 far out: exact
        slope = 0.5 * (1.0 + _erf(s)) + 0.5 * s * _erf_derivative(s)
    return dy * slope


def silu_backward(x, dy):
    """``dy * silu'(x)``, with ``silu'(x) = s (1 + x (1 - s))``, ``s = sigmoid(x)``.

    Parameters: ``x``, the forward input (any shape); ``dy``, the same shape. Returns:
    numpy.ndarray of that shape. Raises ``TypeError`` or ``ValueError`` naming ``x`` or
    ``dy`` for one that is not a finite real array, or shapes that differ.

    Source: Elfwing, Uchibe & Doya (2018), section 2.1 (the function and its
    derivative).
    """
    x, dy = _same_shape(x=x, dy=dy)
    return dy * _silu_slope(x)


def _silu_slope(x: np.ndarray) -> np.ndarray:
    """``silu'(x)`` of a checked float array."""
    s = _sigmoid(x)
    return s * (1.0 + x * (1.0 - s))  # s is exactly 0 or 1 far out: no overflow


def swiglu_backward(dy, x, W_1, W_3, W_2):
    """Gradients of ``y = (SiLU(x W_1) * x W_3) W_2`` (:func:`attnlib.swiglu`).

    With ``g = x W_1``, ``u = x W_3``, ``h = SiLU(g) * u``::

        dW_2 = h^T dy,   dh = dy W_2^T
        du = dh * SiLU(g),   dg = dh * u * SiLU'(g)
        dW_1 = x^T dg,   dW_3 = x^T du,   dx = dg W_1^T + du W_3^T

    Parameters: ``dy`` (..., d_out); ``x`` (..., d); ``W_1``, ``W_3`` (d, d_ff);
    ``W_2`` (d_ff, d_out). Returns ``(dx, dW_1, dW_3, dW_2)`` with the shapes of ``x``
    and the matrices (summed over every leading axis). Raises ``TypeError`` or
    ``ValueError`` naming the argument that is not a finite real array or whose shape
    does not fit, and ``OverflowError`` when a gradient does not fit the dtype.

    Source: Shazeer (2020), equation (6), differentiated by the chain rule.
    """
    dy, x, W_1, W_3, W_2 = _check_swiglu_backward(dy, x, W_1, W_3, W_2)
    rows, drows = x.reshape(-1, x.shape[-1]), dy.reshape(-1, dy.shape[-1])
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        g, u = rows @ W_1, rows @ W_3  # (n, d_ff) each
        silu_g = g * _sigmoid(g)  # (n, d_ff)
        dh = drows @ W_2.T  # (n, d_ff)
        du = dh * silu_g  # (n, d_ff)
        dg = dh * u * _silu_slope(g)  # (n, d_ff)
        dx = (dg @ W_1.T + du @ W_3.T).reshape(x.shape)  # (..., d)
        grads = dx, rows.T @ dg, rows.T @ du, (silu_g * u).T @ drows
    return tuple(fits(grad, "SwiGLU gradients") for grad in grads)


# --- the arguments' checks ------------------------------------------------------


def _check_stats(x, eps):
    """``x`` finite with shape (..., d), d >= 1, and ``eps`` positive, each named."""
    x = finite_array(x, "x", "(..., d)", 1)
    if x.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., d) with d >= 1; got {x.shape}")
    return x, as_positive(eps, "eps")


def _same_shape(**arrays):
    """The named arrays, finite and real, all of the first one's shape."""
    checked = finite_arrays(**arrays)
    (first, a), *rest = zip(arrays, checked)
    for name, b in rest:
        if b.shape != a.shape:
            raise ValueError(
                f"{name} {b.shape} must have the shape of {first} {a.shape}"
            )
    return checked


def _check_norm_backward(dy, xhat, r, gain):
    """A normalisation's backward arguments: ``dy`` and ``xhat`` of one shape (..., d),
    ``r`` positive of shape (..., 1), ``gain`` of shape (d,); each named."""
    dy, xhat = _same_shape(dy=dy, xhat=xhat)
    if dy.ndim == 0:
        raise ValueError(f"dy must have shape (..., d); got {dy.shape}")
    r, gain = finite_arrays(r=r, gain=gain)
    if r.shape != xhat.shape[:-1] + (1,) or not (r > 0).all():
        raise ValueError(
            f"r must be positive with shape {xhat.shape[:-1] + (1,)} (one "
            f"1 / sqrt(var + eps) per row of xhat {xhat.shape}); got shape {r.shape}"
        )
    if gain.shape != xhat.shape[-1:]:
        raise ValueError(f"gain {gain.shape} must have shape {xhat.shape[-1:]}")
    return dy, xhat, r, gain


def _check_swiglu_backward(dy, x, W_1, W_3, W_2):
    """SwiGLU's backward arguments, finite and real, with shapes that fit (named)."""
    dy, x = finite_arrays("(..., d)", 1, dy=dy, x=x)
    W_1, W_3, W_2 = finite_arrays("(d_in, d_out)", 2, W_1=W_1, W_3=W_3, W_2=W_2)
    for name, a, want in (
        ("W_1", W_1, (x.shape[-1], W_1.shape[-1])),
        ("W_3", W_3, W_1.shape),
        ("W_2", W_2, (W_1.shape[-1], dy.shape[-1])),
    ):
        if a.shape != want:
            raise ValueError(
                f"{name} {a.shape} does not fit x {x.shape}, W_1 {W_1.shape} and dy "
                f"{dy.shape}: it must have shape {want}"
            )
    if dy.shape[:-1] != x.shape[:-1]:
        raise ValueError(f"dy {dy.shape} and x {x.shape} must have the same rows")
    return dy, x, W_1, W_3, W_2
