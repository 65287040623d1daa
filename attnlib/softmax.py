"""Softmax: turn scores into attention weights that are non-negative and sum to one.

Source: Vaswani et al. (2017), section 3.2.1; Bahdanau et al. (2015), equation (6).
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
    scores : array_like, any shape, real dtype
        Raw scores. Integers are converted to float64.
    axis : int
        The axis that is normalised (the keys, for attention scores). Default: the last.
    mask : array_like of bool, optional
        Broadcastable to ``scores.shape`` without enlarging it. ``True`` means "may attend".
        Masked entries get weight exactly 0 and may hold any value (even NaN or inf).

    Returns
    -------
    numpy.ndarray
        Same shape as ``scores`` and the same float dtype (float16 in gives float16 out;
        float16 is computed in float32 inside). Each slice along ``axis`` sums to 1, or is
        all zeros when every entry of it is masked (no NaN, no warning).

    Raises
    ------
    TypeError
        If ``mask`` is not boolean (its dtype is named) or ``scores`` is not real.
    ValueError
        If ``mask`` does not broadcast to ``scores`` (both shapes are named), or an allowed
        score is NaN or +inf. A score of -inf is allowed and receives weight 0.

    Source: Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1.
    """
    x = as_float_array(scores, "scores")
    out_dtype = x.dtype
    work = x.astype(compute_dtype(x.dtype), copy=False)
    if mask is None:
        allowed = np.ones(work.shape, dtype=bool)
    else:
        m = as_bool_mask(mask)
        check_mask_shape(m, work.shape)
        allowed = np.broadcast_to(m, work.shape)
    bad = allowed & (np.isnan(work) | (work == np.inf))
    if bad.any():
        raise ValueError("scores contain NaN or +inf at positions that may be attended")
    allowed = allowed & (work != -np.inf)
    safe = np.where(allowed, work, 0.0)  # masked entries replaced before any arithmetic
    row_max = np.max(np.where(allowed, safe, -np.inf), axis=axis, keepdims=True)
    row_max = np.where(np.isfinite(row_max), row_max, 0.0)  # fully masked rows
    exps = np.exp(np.where(allowed, safe - row_max, -np.inf))
    total = np.sum(exps, axis=axis, keepdims=True)
    weights = np.divide(exps, total, out=np.zeros_like(exps), where=total > 0)
    return weights.astype(out_dtype, copy=False)
