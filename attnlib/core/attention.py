"""Attention: scores -> weights -> weighted sum of values.

``attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V`` (Vaswani et al. 2017, equation
(1)), with an optional boolean mask applied inside the softmax.

Source: Vaswani et al. (2017), section 3.2.1; Bahdanau et al. (2015), equations (5)-(6).
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import (
    as_float_array,
    broadcast_batch,
    check_attention,
    compute_dtype,
    require_ndim,
    to_dtype,
)
from attnlib.core.dropout import _drop, dropout_keep_mask
from attnlib.core.softmax import attention_softmax

__all__ = ["attention", "weighted_sum"]


def weighted_sum(weights, values) -> np.ndarray:
    """The attention output: each query's weighted sum of the value vectors.

    ``out[..., i, :] = sum_j weights[..., i, j] * values[..., j, :]``

    Parameters
    ----------
    weights : array_like, shape (..., L_q, L_k), or (L_k,) for a single query
    values : array_like, shape (..., L_k, d_v); leading axes broadcast with ``weights``
        (1-D weights are shared by every leading index of ``values``)

    Returns
    -------
    numpy.ndarray, shape (..., L_q, d_v) (or (..., d_v) for 1-D weights), in the inputs'
    common float dtype (integers give float64); computed in float32 for float16/float32
    inputs, else float64.

    Raises
    ------
    TypeError
        If an input is not a float or integer array (its dtype is named).
    ValueError
        If ``L_k`` differs between the two or the leading axes do not broadcast (both
        shapes named), or ``weights`` or ``values`` hold NaN or inf (a weight of 0 does
        not cancel NaN: 0 * NaN is NaN. To exclude poisoned positions use
        :func:`attention` with a mask).

    Source: Vaswani et al. (2017), section 3.2 ("a weighted sum of the values");
    Bahdanau et al. (2015), equation (5) (the context vector ``c_i = sum_j a_ij h_j``).
    """
    w, v, single_query = check_weighted_sum(weights, values)  # the contract
    work = compute_dtype(w.dtype, v.dtype)
    out = w.astype(work) @ v.astype(work)  # (..., L_q, d_v)
    out = to_dtype(out, np.result_type(w.dtype, v.dtype), "weighted sums")
    return out[..., 0, :] if single_query else out  # drop the query axis we added


def attention(
    queries,
    keys,
    values,
    mask=None,
    *,
    scale: float | None = None,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
    keep=None,
    return_keep: bool = False,
):
    """Scaled dot-product attention, returning the output and the attention weights.

    ``weights = softmax(scale * Q K^T, mask)``, ``output = weights V``; with dropout,
    ``output = (weights * keep / (1 - dropout)) V``.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_k)
    keys : array_like, shape (..., L_k, d_k)
    values : array_like, shape (..., L_k, d_v)
        Leading (batch, head) axes broadcast. ``L_q`` may differ from ``L_k``
        (cross-attention) and ``d_v`` may differ from ``d_k``. Any length may be 0.
    mask : array_like of bool, optional
        Broadcastable to ``(..., L_q, L_k)`` without enlarging it; ``True`` = may
        attend. A query with no allowed key gets all-zero weights and a zero output.
        Masked keys never influence the output, whatever their keys or values hold (even
        NaN or inf).
    scale : float, optional
        Multiplies ``Q K^T``. Default ``1 / sqrt(d_k)``; use ``scale=1.0`` for plain
        dot-product attention.
    dropout : float in [0, 1), default 0
        The probability of dropping each attention weight (inverted dropout, for
        training: kept weights are divided by ``1 - dropout``, so the output keeps its
        expected value). 0 drops nothing and draws nothing: the results are exactly
        those without dropout.
    rng : numpy.random.Generator, required when ``dropout > 0`` (unless ``keep``)
        Draws the keep-mask, ``rng.random(weights.shape) >= dropout`` (one call, so a
        generator in the same state draws the same mask again).
    keep : array_like of bool, optional
        A keep-mask to use instead of drawing one (``True`` = kept), broadcastable to
        ``(..., L_q, L_k)``: it replays a forward pass exactly, as a backward pass or a
        finite-difference check needs. Only with ``dropout > 0`` and without ``rng``.
    return_keep : bool
        Also return the keep-mask used (None without dropout).

    Returns
    -------
    output : numpy.ndarray, shape (..., L_q, d_v)
    weights : numpy.ndarray, shape (..., L_q, L_k)
        The softmax weights *before* dropout: one row per query, each summing to 1 (or
        0 if fully masked), with or without dropout (the weights the output used are
        ``weights * keep / (1 - dropout)``; PyTorch's ``nn.MultiheadAttention`` returns
        those instead). Both in the inputs' common float dtype (float16 in, float16
        out; integers give float64). float16 is computed in float32, float32 and
        float64 in their own precision.
    keep : numpy.ndarray of bool or None, only with ``return_keep=True``

    Notes
    -----
    The computation is the textbook one, done in place to stay close to what numpy can
    do: the scale multiplies the queries (``L_q * d_k`` numbers, not ``L_q * L_k``
    scores); the ``(..., L_q, L_k)`` scores are computed once and become the weights in
    place (masked entries set to ``-inf``, the row maximum subtracted, exponentiated,
    divided by the row sum); and every allowed score is checked for overflow through its
    row's maximum alone. The contract's checks on the inputs cost passes over Q, K and
    V, never over the scores: their largest and smallest entries say whether all are
    finite and bound every score. Beyond the scores themselves (which are returned as
    the weights) it allocates only arrays of size ``L_q * d`` or ``L_k * d``, plus, with
    a mask, one boolean array of the mask's own (unbroadcast) shape.

    Raises
    ------
    TypeError
        If ``mask`` is not boolean or an input is not a float or integer array (the
        dtype is named), or ``scale`` is not a real number (``True`` is not a number
        here).
    ValueError
        If shapes disagree (both shapes are named), ``d_k`` is 0 without an explicit
        ``scale``, ``scale`` is NaN, inf or an array, or a query, key or value that
        takes part (is allowed by the mask) holds NaN or inf. With dropout: ``dropout``
        outside [0, 1), ``dropout > 0`` without ``rng`` or ``keep``, both given, or a
        ``keep`` that does not fit (each message names the argument; ``TypeError`` for a
        ``dropout`` that is not a number, an ``rng`` that is not a Generator or a
        ``keep`` that is not boolean).
    OverflowError
        If an allowed score overflows the compute dtype: float32 for float16 and float32
        inputs (scores beyond about 3.4e38), float64 otherwise; or an output does not
        fit the inputs' dtype (dropout can raise an output above the largest value).

    Source: Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1, equation
    (1); dropout: Srivastava et al. (2014), Vaswani et al. (2017), section 5.4.
    """
    x = check_attention(queries, keys, values, mask, scale)  # the contract, checked
    keep = dropout_keep_mask(dropout, rng, keep, x.scores_shape)  # None: no dropout

    with np.errstate(over="ignore", invalid="ignore"):  # checked in the softmax
        q = x.queries * x.work.type(x.scale)  # (..., L_q, d_k): scale Q, not S
        scores = q @ np.swapaxes(x.keys, -1, -2)  # (..., L_q, L_k)
    weights = attention_softmax(scores, x)  # (..., L_q, L_k), rows sum to 1 or 0
    output = _drop(weights, keep, dropout) @ x.values  # (..., L_q, d_v)

    results = (
        to_dtype(output, x.out_dtype, "attention outputs"),
        to_dtype(weights, x.out_dtype, "attention weights"),
    )
    return results + (keep,) if return_keep else results


# --- the contract's checks ------------------------------------------------------


def check_weighted_sum(weights, values):
    """The contract of :func:`attnlib.weighted_sum`; returns ``(w, v, single_query)``.

    ``w`` has a query axis (added for 1-D weights, ``single_query`` True). Raises
    ``TypeError`` for non-real inputs, ``ValueError`` naming both shapes when ``L_k``
    differs or the leading axes do not broadcast, and ``ValueError`` for NaN or inf.
    """
    w = as_float_array(weights, "weights")
    v = as_float_array(values, "values")
    require_ndim(w, 1, "weights", "(..., L_q, L_k) or (L_k,)")
    single_query = w.ndim == 1
    if single_query:
        w = w[None, :]
    require_ndim(v, 2, "values", "(..., L_k, d_v)")
    if w.shape[-1] != v.shape[-2]:
        raise ValueError(
            f"weights {w.shape} and values {v.shape} disagree on the number of "
            "keys L_k (last axis of weights, second-to-last of values)"
        )
    broadcast_batch(w.shape, v.shape, "weights", "values")
    if not np.isfinite(w).all():
        raise ValueError(f"weights {w.shape} hold NaN or inf")
    if not np.isfinite(v).all():
        raise ValueError(f"values {v.shape} hold NaN or inf")
    return w, v, single_query
