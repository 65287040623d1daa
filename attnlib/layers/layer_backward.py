"""Backward passes of the layer pieces: layer normalisation and GELU.

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
and a change of its scale).

Source: Ba, Kiros & Hinton (2016), section 3 (the forward pass); the derivatives are
the chain rule.
"""

from __future__ import annotations

import numpy as np

from attnlib.layers.feed_forward import erf
from attnlib.layers.layer_norm import DEFAULT_EPS

__all__ = ["layer_norm_stats", "layer_norm_backward", "gelu_backward"]

# Abramowitz & Stegun 7.1.26, the approximation :func:`attnlib.layers.feed_forward.erf`
# computes: erf(a) = 1 - t (c1 + c2 t + ... + c5 t^4) exp(-a^2), t = 1 / (1 + P a).
_P = 0.3275911
_C = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def layer_norm_stats(x, eps: float = DEFAULT_EPS):
    """``(xhat, r)``: the normalised rows of ``x`` and ``r = 1 / sqrt(var + eps)``.

    ``x`` has shape (..., d); ``xhat`` has its shape, ``r`` shape (..., 1). ``xhat *
    gain + bias`` equals :func:`attnlib.layer_norm` to rounding. Raises
    ``OverflowError`` naming ``x`` for rows whose squares would overflow (the forward
    pass rescales those; the backward pass of a model never meets them).

    Source: Ba, Kiros & Hinton (2016), section 3, equation (4).
    """
    x = np.asarray(x)
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

    Raises ``OverflowError`` (naming ``dy``) when the gradients do not fit the dtype,
    and numpy's broadcasting errors for shapes that do not fit.

    Source: Ba, Kiros & Hinton (2016), section 3, differentiated.
    """
    dy = np.asarray(dy)
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
    Returns: numpy.ndarray of that shape. Raises nothing of its own.

    Source: Hendrycks & Gimpel (2016), section 2 (the function).
    """
    x = np.asarray(x)
    s = x / np.sqrt(2.0)
    with np.errstate(over="ignore", under="ignore"):  # exp(-s^2) -> 0 far out: exact
        slope = 0.5 * (1.0 + erf(s)) + 0.5 * s * _erf_derivative(s)
    return dy * slope
