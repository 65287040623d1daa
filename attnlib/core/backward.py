"""Backward passes: how a small change of the loss flows back through softmax and
   attention.

Training needs, for every learned number, the derivative of the loss with respect to it.
Attention is built from matrix products and a softmax, and both have simple derivatives,
so the gradient can be written down exactly (no approximation). This module gives the
two vector-Jacobian products a training loop needs, and a central finite-difference
gradient used to check them.

Notation (one attention head, any leading batch/head axes)::

    S = scale * Q K^T          scores,   shape (..., L_q, L_k)
    P = softmax(S, mask)       weights,  shape (..., L_q, L_k)
    O = P V                    output,   shape (..., L_q, d_v)

Given ``dO = dLoss/dO``:

* ``dV = P^T dO`` and ``dP = dO V^T`` (product rule for a matrix product);
* ``dS = P * (dP - sum_j P dP)`` row by row: the softmax Jacobian ``diag(p) - p p^T``
  applied to ``dP``; masked entries have ``P = 0`` and so receive exactly zero gradient;
* ``dQ = scale * dS K`` and ``dK = scale * dS^T Q``.

Sources: Vaswani et al. (2017), section 3.2.1, equation (1) for the forward pass; the
derivatives are ordinary calculus (chain rule), as used for training by
back-propagation.
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import (
    as_axis,
    as_bool_mask,
    as_float_array,
    as_positive,
    check_attention,
    check_mask_shape,
    finite_array,
    fits,
)
from attnlib.core.attention import attention
from attnlib.core.dropout import _drop, dropout_keep_mask


def softmax_backward(weights, grad_weights, axis: int = -1, mask=None) -> np.ndarray:
    """Gradient with respect to the scores, given the softmax output and its gradient.

    For one slice ``p = softmax(s)`` along ``axis`` the Jacobian is ``dp/ds = diag(p) -
    p p^T``; multiplying it by the upstream gradient ``g = dLoss/dp`` gives ``dLoss/ds =
    p * (g - sum(p * g))``, computed here without forming the Jacobian.

    Parameters
    ----------
    weights : array_like, any shape, float
        The softmax output ``p`` (e.g. attention weights), as returned by
        :func:`attnlib.softmax` with the same ``axis`` and ``mask``.
    grad_weights : array_like, same shape as ``weights``
        The upstream gradient ``dLoss/dp``.
    axis : int
        The axis that softmax normalised. Default: the last.
    mask : array_like of bool, optional
        The mask used in the forward pass (``True`` = may attend), broadcastable to
        ``weights.shape``. Masked entries get gradient exactly 0 (they already do when
        ``weights`` is 0 there; the mask makes it explicit even if ``grad_weights``
        holds NaN or inf at masked entries).

    Returns
    -------
    numpy.ndarray, the shape of ``weights``, float64 (or the inputs' common float
    dtype):
        ``dLoss/dscores``. Each unmasked slice sums to zero: adding a constant to every
        score of a row does not change softmax, so the gradient has no component along
        it.

    Raises
    ------
    ValueError
        If the two shapes differ (both named), the mask does not broadcast, an
        allowed entry of either array is NaN or inf (named), or ``axis`` does not
        exist (``numpy.exceptions.AxisError``).
    TypeError
        If the mask is not boolean or an array is not real (its dtype is named), or
        ``axis`` is not an integer.
    OverflowError
        If a gradient does not fit the dtype.

    Source: derivative of softmax (Vaswani et al. 2017, section 3.2.1, for the
    function).
    """
    p, g, axis = _check_softmax_backward(weights, grad_weights, axis, mask)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        inner = np.sum(p * g, axis=axis, keepdims=True)  # sum_j p_j g_j, per slice
        grad_scores = p * (g - inner)
    return fits(grad_scores, "the gradients of the scores")


def _check_softmax_backward(weights, grad_weights, axis, mask):
    """The contract of :func:`softmax_backward`: ``(p, g, axis)`` with masked entries
    of both set to 0 and the allowed ones finite (``ValueError`` naming the array)."""
    p = as_float_array(weights, "weights")
    g = as_float_array(grad_weights, "grad_weights")
    if p.shape != g.shape:
        raise ValueError(
            f"weights {p.shape} and grad_weights {g.shape} must have the same shape"
        )
    axis = as_axis(axis, p.ndim)
    if mask is not None:
        m = as_bool_mask(mask)
        check_mask_shape(m, p.shape, "weights")
        allowed = np.broadcast_to(m, p.shape)
        p = np.where(allowed, p, 0.0)
        g = np.where(allowed, g, 0.0)
    return finite_array(p, "weights"), finite_array(g, "grad_weights"), axis


def _sum_to_shape(grad: np.ndarray, shape: tuple) -> np.ndarray:
    """Sum a gradient over the axes that broadcasting added or stretched, back to
    ``shape``."""
    extra = grad.ndim - len(shape)
    if extra:
        grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    if stretched:
        grad = grad.sum(axis=stretched, keepdims=True)
    return grad


def attention_backward(
    queries,
    keys,
    values,
    grad_output,
    mask=None,
    *,
    scale: float | None = None,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
    keep=None,
):
    """Gradients of scaled dot-product attention with respect to Q, K and V.

    Runs :func:`attnlib.attention` forward (to get the weights ``P``) and then applies
    the chain rule::

        dV = P^T dO,   dP = dO V^T,   dS = P * (dP - rowsum(P * dP)),
        dQ = scale * dS K,   dK = scale * dS^T Q

    With dropout the output is ``P~ V`` with ``P~ = P * keep / (1 - p)``, so ``dV =
    P~^T dO`` and ``dP = (dO V^T) * keep / (1 - p)``; the rest is unchanged.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_k)
    keys : array_like, shape (..., L_k, d_k)
    values : array_like, shape (..., L_k, d_v)
    grad_output : array_like, shape (..., L_q, d_v)
        ``dLoss/dOutput``, broadcast to the output's shape.
    mask : array_like of bool, optional
        The forward pass's mask (``True`` = may attend), broadcastable to ``(..., L_q,
        L_k)``. Masked scores get zero gradient, so a key or value that no query may
        attend gets ``dK = dV = 0`` and a query that may attend nothing gets ``dQ = 0``.
    scale : float, optional
        The forward pass's scale; default ``1 / sqrt(d_k)``.
    dropout, rng, keep
        The forward pass's dropout (see :func:`attnlib.attention`): the same
        ``dropout`` with either the keep-mask it used (``keep``, from
        ``return_keep=True``) or a generator in the state the forward pass's was in
        (``rng``: the same draw gives the same mask). Off by default.

    Returns
    -------
    grad_queries, grad_keys, grad_values : numpy.ndarray
        float64 arrays (computed in float64 whatever the input dtype) with the shapes of
        ``queries``, ``keys`` and ``values``: gradients of leading axes that
        broadcasting added or stretched, in any of the three, are summed back.

    Raises
    ------
    ValueError, TypeError, OverflowError
        Exactly as :func:`attnlib.attention` (the same shared check,
        :func:`attnlib.core._validation.check_attention`, on the inputs as given, so
        float32 inputs whose scores overflow float32 are refused here too);
        ``ValueError`` naming both shapes if ``grad_output`` does not broadcast to the
        output's shape, or naming it if it holds NaN or inf; the dropout arguments'
        errors exactly as :func:`attnlib.attention`.

    Source: Vaswani et al. (2017), equation (1), differentiated by the chain rule;
    Srivastava et al. (2014) for dropout.
    """
    # The forward pass's contract, checked on the inputs as given (same errors as
    # attention, including OverflowError for float32 scores); the gradients are then
    # computed in float64 on the checked arrays, in which masked-out queries, keys and
    # values are already 0.
    checked = check_attention(queries, keys, values, mask, scale)
    shapes = [np.shape(x) for x in (queries, keys, values)]
    q_used, k_used, v_used = (
        x.astype(np.float64) for x in (checked.queries, checked.keys, checked.values)
    )
    allowed, scale = checked.allowed, checked.scale
    keep = dropout_keep_mask(dropout, rng, keep, checked.scores_shape)
    d_out = finite_array(grad_output, "grad_output", "(..., L_q, d_v)", 2)
    d_out = d_out.astype(np.float64)
    out, p = attention(q_used, k_used, v_used, mask=allowed, scale=scale)
    try:
        d_out = np.broadcast_to(d_out, out.shape)  # (..., L_q, d_v)
    except ValueError:
        raise ValueError(
            f"grad_output {d_out.shape} does not match the attention output "
            f"shape {out.shape}"
        ) from None

    p_used = _drop(p, keep, dropout)  # (..., L_q, L_k), P~ (P if no dropout)
    d_v = np.swapaxes(p_used, -1, -2) @ d_out  # (..., L_k, d_v)
    d_p = _drop(d_out @ np.swapaxes(v_used, -1, -2), keep, dropout)  # dP
    d_s = softmax_backward(p, d_p, axis=-1, mask=allowed)  # (..., L_q, L_k)
    d_q = scale * (d_s @ k_used)  # (..., L_q, d_k)
    d_k = scale * (np.swapaxes(d_s, -1, -2) @ q_used)  # (..., L_k, d_k)
    return tuple(_sum_to_shape(g, shape) for g, shape in zip((d_q, d_k, d_v), shapes))


def numerical_gradient(f, x, *, eps: float = 1e-5) -> np.ndarray:
    """Central finite-difference gradient of a scalar function: ``(f(x+h) - f(x-h)) /
       2h``.

    Slow (two calls of ``f`` per entry of ``x``) but independent of any derivation,
    which is what makes it a check: the error of the central difference shrinks like
    ``eps**2``.

    Parameters
    ----------
    f : callable taking an array shaped like ``x`` and returning a real number
    x : array_like of float (float64 recommended: float32 cannot reach 1e-6 agreement)
    eps : float, the step ``h``
        1e-5 balances the truncation error, about eps**2, against float64 rounding,
        about 1e-16 / eps.

    Returns
    -------
    numpy.ndarray, float64, shape of ``x``

    Raises
    ------
    ValueError
        If ``f`` does not return a single finite number, ``x`` holds NaN or inf, or
        ``eps`` is not a positive finite number (``TypeError`` if it is not a number).
    """
    h = as_positive(eps, "eps")
    x = np.array(finite_array(x, "x"), dtype=np.float64)  # a copy we may perturb
    grad = np.zeros_like(x)
    flat, gflat = x.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + h
        up = np.asarray(f(x), dtype=np.float64)
        flat[i] = keep - h
        down = np.asarray(f(x), dtype=np.float64)
        flat[i] = keep
        if (
            up.shape != ()
            or down.shape != ()
            or not (np.isfinite(up) and np.isfinite(down))
        ):
            raise ValueError(
                f"f must return one finite number; got {up!r} and {down!r}"
            )
        gflat[i] = (up - down) / (2.0 * h)
    return grad


def relative_error(analytic, numeric) -> float:
    """Relative difference of two gradients: ``||a - n|| / max(||a||, ||n||)``
       (Euclidean norms).

    One number for the whole array. Entries where the true gradient is zero (for example
    masked scores) enter through the norm of the difference, so the tiny rounding noise
    of a finite difference there cannot blow up into a large "relative" error.

    Parameters
    ----------
    analytic, numeric : array_like of the same shape

    Returns
    -------
    float: 0.0 if both are exactly zero (or empty); otherwise the ratio above.

    Raises
    ------
    ValueError
        If the shapes differ (both named), or either holds NaN or inf (named).
    TypeError
        If either is not real.
    """
    a = np.asarray(as_float_array(analytic, "analytic"), dtype=np.float64)
    n = np.asarray(as_float_array(numeric, "numeric"), dtype=np.float64)
    if a.shape != n.shape:
        raise ValueError(
            f"analytic {a.shape} and numeric {n.shape} must have the same shape"
        )
    for name, g in (("analytic", a), ("numeric", n)):
        if not np.isfinite(g).all():
            raise ValueError(f"{name} {g.shape} holds NaN or inf")
    # Divide by the largest magnitude first (the ratio is unchanged) so the norms of
    # gradients near 1e200 do not overflow.
    top = max(float(np.abs(a).max(initial=0.0)), float(np.abs(n).max(initial=0.0)))
    if top == 0.0:
        return 0.0
    a, n = a / top, n / top
    scale = max(float(np.linalg.norm(a)), float(np.linalg.norm(n)))
    return float(np.linalg.norm(a - n) / scale)
