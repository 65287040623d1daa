"""Softmax: turn scores into attention weights that are non-negative and sum to one.

``softmax(s)_j = exp(s_j) / sum_i exp(s_i)``, computed as ``exp(s_j - m) / sum_i exp(s_i - m)``
with ``m`` the largest score, which is the same number but never overflows. An optional
boolean mask removes entries *before* any arithmetic, so masked entries get exactly 0 and
may hold anything (NaN, inf) without effect.

Source: Bahdanau, Cho & Bengio (2015), equation (6); Vaswani et al. (2017), section 3.2.1.
"""
from __future__ import annotations

import numpy as np

from ._validation import as_bool_mask, as_float_array, check_mask_shape, compute_dtype, to_dtype


def softmax(scores, axis: int = -1, mask=None) -> np.ndarray:
    """Numerically stable softmax along ``axis``, with an optional boolean mask.

    ``softmax(s)_j = exp(s_j - m) / sum_i exp(s_i - m)`` with ``m`` the largest allowed
    score, so no exponential ever overflows, whatever the magnitude of the scores.

    Parameters
    ----------
    scores : array_like, any shape, float or integer dtype
        Raw scores. Integers are converted to float64; booleans are refused.
    axis : int
        The axis that is normalised (the keys, for attention scores). Default: the last.
    mask : array_like of bool, optional
        Broadcastable to ``scores.shape`` without enlarging it. ``True`` means "may attend".
        Masked entries get weight exactly 0 and may hold any value (even NaN or inf).

    Returns
    -------
    numpy.ndarray
        Same shape as ``scores`` and the same float dtype (float16 in gives float16 out;
        computed in float32 for float16/float32, else float64). Each slice along ``axis``
        sums to 1, or is all zeros when every entry of it is masked (no NaN, no warning).
        An empty axis gives an empty result.

    Raises
    ------
    TypeError
        If ``mask`` is not boolean, or ``scores`` is not a float or integer array
        (the dtype is named).
    ValueError
        If ``mask`` does not broadcast to ``scores`` (both shapes are named), or an allowed
        score is NaN or +inf. A score of -inf is allowed and receives weight 0.
    numpy.exceptions.AxisError
        If ``axis`` does not exist (a subclass of ``ValueError``).

    Source: Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1;
    Bahdanau et al. (2015), equation (6).
    """
    x = as_float_array(scores, "scores")
    out_dtype = x.dtype
    s = x.astype(compute_dtype(x.dtype))          # a copy: float16 -> float32, else same dtype
    allowed = None
    if mask is not None:
        given = as_bool_mask(mask)
        check_mask_shape(given, s.shape)
        allowed = np.broadcast_to(given, s.shape)
    bad = np.isnan(s) | (s == np.inf)
    if allowed is not None:
        bad &= allowed
    if bad.any():
        raise ValueError(
            "scores contain NaN or +inf at positions that may be attended "
            f"(first at index {tuple(int(i) for i in np.argwhere(bad)[0])}); "
            "mask them out or fix the scores")
    return to_dtype(softmax_inplace(s, axis, allowed), out_dtype, "softmax weights")


def softmax_inplace(s: np.ndarray, axis: int = -1, allowed=None) -> np.ndarray:
    """The softmax arithmetic itself, overwriting ``s`` (a float array the caller owns).

    ``s`` must hold no NaN and no +inf where ``allowed`` (a boolean array of ``s``'s shape,
    or None for "everything") is True; :func:`softmax` and :func:`attnlib.attention` check
    that before calling. Returns ``s``, now holding the weights.
    """
    # 1. Masked entries become -inf *before* any arithmetic: exp(-inf) is exactly 0, so no
    #    "large negative constant" is needed, and NaN or inf stored there cannot leak.
    if allowed is not None:
        np.copyto(s, -np.inf, where=~allowed)
    # 2. Subtract each slice's largest score, so every exponent is <= 0 and exp cannot
    #    overflow. A slice with nothing allowed has maximum -inf: use 0 (its entries stay -inf).
    m = np.max(s, axis=axis, keepdims=True, initial=-np.inf)
    m[~np.isfinite(m)] = 0.0
    with np.errstate(over="ignore"):   # s - m <= 0 can only overflow to -inf: weight 0, exact
        s -= m
    np.exp(s, out=s)
    # 3. Normalise. A slice with nothing allowed sums to 0 and stays all zeros.
    total = np.sum(s, axis=axis, keepdims=True)
    np.divide(s, total, out=s, where=total > 0)
    return s
