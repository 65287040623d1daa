"""Softmax: turn scores into attention weights that are non-negative and sum to one.

``softmax(s)_j = exp(s_j) / sum_i exp(s_i)``, computed as ``exp(s_j - m) / sum_i exp(s_i - m)``
with ``m`` the largest score, which is the same number but never overflows. An optional
boolean mask removes entries *before* any arithmetic, so masked entries get exactly 0 and
may hold anything (NaN, inf) without effect.

Source: Bahdanau, Cho & Bengio (2015), equation (6); Vaswani et al. (2017), section 3.2.1.
"""
from __future__ import annotations

import numpy as np

from ._validation import as_bool_mask, as_float_array, check_mask_shape, compute_dtype


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
        Same shape as ``scores`` and the same float dtype (float16 in gives float16 out).
        Computed in float64 inside. Each slice along ``axis`` sums to 1, or is all zeros
        when every entry of it is masked (no NaN, no warning). An empty axis gives an empty
        result.

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
    s = x.astype(compute_dtype(x.dtype))          # float64 inside, whatever comes in

    if mask is None:
        allowed = np.ones(s.shape, dtype=bool)
    else:
        given = as_bool_mask(mask)
        check_mask_shape(given, s.shape)
        allowed = np.broadcast_to(given, s.shape)
    bad = allowed & (np.isnan(s) | (s == np.inf))
    if bad.any():
        raise ValueError(
            "scores contain NaN or +inf at positions that may be attended "
            f"(first at index {tuple(int(i) for i in np.argwhere(bad)[0])}); "
            "mask them out or fix the scores")
    allowed = allowed & (s != -np.inf)             # exp(-inf) = 0: such a key simply gets 0

    # 1. Replace every masked entry by -inf *before* any arithmetic (no "large negative
    #    constant": -inf is exact, and NaN or inf stored there can no longer leak).
    s = np.where(allowed, s, -np.inf)
    # 2. Subtract the largest allowed score of each slice (a fully masked slice has none:
    #    use 0 there; its entries are all -inf anyway).
    m = np.max(s, axis=axis, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0.0)
    # s - m can overflow to -inf only for float64 scores near 1e308; exp(-inf) = 0 is then
    # exactly the right weight, so that overflow is expected and silenced.
    with np.errstate(over="ignore"):
        e = np.exp(s - m)
    # 3. Normalise. A slice with nothing allowed has total 0 and stays all zeros.
    total = np.sum(e, axis=axis, keepdims=True)
    weights = np.divide(e, total, out=np.zeros_like(e), where=total > 0)
    return weights.astype(out_dtype)
