"""Softmax: turn scores into attention weights that are non-negative and sum to one.

``softmax(s)_j = exp(s_j) / sum_i exp(s_i)``, computed as ``exp(s_j - m) / sum_i exp(s_i
- m)`` with ``m`` the largest score, which is the same number but never overflows. An
optional boolean mask removes entries *before* any arithmetic, so masked entries get
exactly 0 and may hold anything (NaN, inf) without effect.

Source: Bahdanau, Cho & Bengio (2015), equation (6); Vaswani et al. (2017), section
3.2.1.
"""

from __future__ import annotations

import numpy as np

from attnlib.core._numerics import check_row_maxima
from attnlib.core._validation import (
    as_axis,
    as_bool_mask,
    as_float_array,
    check_mask_shape,
    compute_dtype,
    to_dtype,
)

__all__ = ["softmax"]


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
        Broadcastable to ``scores.shape`` without enlarging it. ``True`` means "may
        attend". Masked entries get weight exactly 0 and may hold any value (even NaN or
        inf).

    Returns
    -------
    numpy.ndarray
        Same shape as ``scores`` and the same float dtype (float16 in gives float16 out;
        computed in float32 for float16/float32, else float64). Each slice along
        ``axis`` sums to 1, or is all zeros when every entry of it is masked (no NaN, no
        warning). An empty axis gives an empty result.

    Raises
    ------
    TypeError
        If ``mask`` is not boolean, or ``scores`` is not a float or integer array
        (the dtype is named).
    ValueError
        If ``mask`` does not broadcast to ``scores`` (both shapes are named), or an
        allowed score is NaN or +inf. A score of -inf is allowed and receives weight 0.
    numpy.exceptions.AxisError
        If ``axis`` does not exist (a subclass of ``ValueError``); ``TypeError`` if it
        is not an integer.

    Source: Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1;
    Bahdanau et al. (2015), equation (6).
    """
    s, top, axis, out_dtype = _check_softmax(scores, mask, axis)  # 1. s masked, checked
    weights = exp_normalise(s, top, axis)  # 2.-3. exp(s - top), divided by its sum
    return to_dtype(weights, out_dtype, "softmax weights")


def attention_softmax(scores: np.ndarray, checked) -> np.ndarray:
    """The softmax of attention scores over the keys, in place, with the overflow
    check.

    ``scores`` are ``scale * Q K^T`` computed from ``checked`` (the
    :class:`attnlib.core._validation.AttentionInputs` of the call); batch axes that
    only the values have are broadcast in (a writable copy). Masked scores become
    ``-inf``, every allowed one is checked for overflow through its row's maximum
    (:func:`attnlib.core._numerics.check_row_maxima`: ``OverflowError``), and the rows
    become weights that sum to 1, or to 0 when nothing is allowed.
    """
    if scores.shape != checked.scores_shape:  # batch axes may come from v alone
        scores = np.array(np.broadcast_to(scores, checked.scores_shape))
    top = mask_and_max(scores, -1, checked.mask)  # (..., L_q, 1); mask unbroadcast
    check_row_maxima(top, checked.scores_shape[-1], checked.allowed, checked.work)
    return exp_normalise(scores, top)  # (..., L_q, L_k)


def mask_and_max(s: np.ndarray, axis: int = -1, allowed=None) -> np.ndarray:
    """Step 1 of the softmax, in place: mask ``s``, then return each slice's largest
       score.

    ``s`` is a float array the caller owns; ``allowed`` is a boolean array that
    broadcasts to ``s.shape`` (``True`` = may attend), or None for "everything". Masked
    entries of ``s`` become ``-inf`` *before* any arithmetic: ``exp(-inf)`` is exactly
    0, so no "large negative constant" is needed, and NaN or inf stored there cannot
    leak.

    Returns the maximum of each slice along ``axis`` (kept as an axis of length 1). It
    is NaN if the slice holds a NaN (``max`` propagates NaN), ``+inf`` if it holds
    ``+inf``, and ``-inf`` if nothing in it is allowed or every allowed entry is
    ``-inf``. Checking these few numbers is how callers check every allowed score
    without a pass over ``s``.
    """
    if allowed is not None:
        # The complement of the mask as given: if it broadcasts (one (L_q, L_k) mask for
        # every head), so does this temporary; copyto broadcasts it for free.
        np.copyto(s, -np.inf, where=np.logical_not(allowed))
    return np.max(s, axis=axis, keepdims=True, initial=-np.inf)


def exp_normalise(s: np.ndarray, top: np.ndarray, axis: int = -1) -> np.ndarray:
    """Steps 2 and 3 of the softmax, in place: ``s <- exp(s - top) / sum(exp(s -
       top))``.

    ``top`` is :func:`mask_and_max`'s result for the same ``s``, finite or ``-inf`` (the
    caller has rejected NaN and ``+inf``). Returns ``s``, now holding the weights: each
    slice sums to 1, or is all zeros where ``top`` is ``-inf`` (no NaN, no warning).
    """
    # 2. Subtract each slice's largest score, so every exponent is <= 0 and exp cannot
    # overflow. A slice with nothing allowed has maximum -inf: use 0 (its entries stay
    # -inf).
    top = np.where(top == -np.inf, 0.0, top).astype(s.dtype, copy=False)
    with np.errstate(
        over="ignore"
    ):  # s - top <= 0 can only overflow to -inf: weight 0, exact
        s -= top
    np.exp(s, out=s)
    # 3. Normalise. A slice with nothing allowed sums to 0: divide it by 1, so it stays
    # zeros.
    total = np.sum(s, axis=axis, keepdims=True)
    total[total == 0] = 1.0
    s /= total
    return s


# --- the contract's checks ------------------------------------------------------


def _check_softmax(scores, mask, axis: int = -1):
    """The contract of :func:`attnlib.softmax`, and its step 1; returns ``(s, top,
    axis, out_dtype)``.

    ``s`` is a copy of the scores in the compute dtype (the softmax works in it in
    place) with masked entries set to ``-inf``, ``top`` each slice's largest score
    (:func:`mask_and_max`), ``axis`` the axis as a non-negative int, ``out_dtype`` the
    scores' float dtype. A 0-d score has no axis to normalise over:
    ``numpy.exceptions.AxisError`` (a ``ValueError``) says so, as it does for an axis
    the scores do not have. ``TypeError`` for non-real scores, a non-boolean mask or an
    axis that is not an integer; ``ValueError`` for a mask that does not broadcast or
    NaN or ``+inf`` among the allowed scores (:func:`check_allowed_scores`).
    """
    x = as_float_array(scores, "scores")
    if x.ndim == 0:
        raise np.exceptions.AxisError(
            f"scores is a single number ({x.item()!r}) with no axis to normalise over; "
            "softmax needs at least one axis, e.g. softmax([3.0]) (which is [1.0])"
        )
    axis = as_axis(axis, x.ndim)
    s = x.astype(compute_dtype(x.dtype))  # a copy: float16 -> float32, else same dtype
    allowed = None
    if mask is not None:
        allowed = as_bool_mask(mask)
        check_mask_shape(allowed, s.shape)
    top = mask_and_max(s, axis, allowed)  # mask, and each slice's largest score
    check_allowed_scores(top, s)  # NaN or +inf among the allowed scores: ValueError
    return s, top, axis, x.dtype


def check_allowed_scores(top: np.ndarray, s: np.ndarray) -> None:
    """``ValueError`` if an allowed score is NaN or ``+inf``, read from the maxima
    ``top`` of the masked scores ``s`` (``max`` propagates NaN); names the first."""
    if not (top < np.inf).all():
        bad = np.isnan(s) | (s == np.inf)  # masked entries are -inf by now
        raise ValueError(
            "scores contain NaN or +inf at positions that may be attended "
            f"(first at index {tuple(int(i) for i in np.argwhere(bad)[0])}); "
            "mask them out or fix the scores"
        )
