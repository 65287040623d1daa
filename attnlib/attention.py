"""Attention: scores -> weights -> weighted sum of values.

``attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V`` (Vaswani et al. 2017, equation (1)).
"""
from __future__ import annotations

import math

import numpy as np

from ._validation import (as_bool_mask, as_float_array, broadcast_batch, check_mask_shape,
                          compute_dtype, require_ndim)
from .softmax import softmax


def weighted_sum(weights, values) -> np.ndarray:
    """The attention output: each query's weighted sum of the value vectors.

    Parameters
    ----------
    weights : array_like, shape (..., L_q, L_k)
    values : array_like, shape (..., L_k, d_v)

    Returns
    -------
    numpy.ndarray, shape (..., L_q, d_v): ``out[..., i, :] = sum_j weights[..., i, j] * values[..., j, :]``

    Raises
    ------
    ValueError
        If ``L_k`` differs between the two (both shapes named).

    Source: Vaswani et al. (2017), section 3.2 ("a weighted sum of the values").
    """
    w = as_float_array(weights, "weights")
    v = as_float_array(values, "values")
    require_ndim(w, 2, "weights", "(..., L_q, L_k)")
    require_ndim(v, 2, "values", "(..., L_k, d_v)")
    if w.shape[-1] != v.shape[-2]:
        raise ValueError(f"weights {w.shape} and values {v.shape} disagree on the number of keys L_k")
    broadcast_batch(w.shape, v.shape, "weights", "values")
    out_dtype = np.result_type(w.dtype, v.dtype)
    work = compute_dtype(out_dtype)
    return (w.astype(work, copy=False) @ v.astype(work, copy=False)).astype(out_dtype, copy=False)


def attention(queries, keys, values, mask=None, *, scale: float | None = None):
    """Scaled dot-product attention, returning the output and the attention weights.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_k)
    keys : array_like, shape (..., L_k, d_k)
    values : array_like, shape (..., L_k, d_v)
        Leading (batch, head) axes broadcast. ``L_q`` may differ from ``L_k``
        (cross-attention) and ``d_v`` may differ from ``d_k``.
    mask : array_like of bool, optional
        Broadcastable to ``(..., L_q, L_k)``; ``True`` = may attend. A query with no allowed
        key gets all-zero weights and a zero output. Masked keys never influence the output,
        whatever their keys or values hold (even NaN or inf).
    scale : float, optional
        Multiplies ``Q K^T``. Default ``1 / sqrt(d_k)``; use ``scale=1.0`` for plain
        dot-product attention.

    Returns
    -------
    output : numpy.ndarray, shape (..., L_q, d_v)
    weights : numpy.ndarray, shape (..., L_q, L_k)
        One row per query, each summing to 1 (or 0 if fully masked). Both in the inputs'
        float dtype (float16 is computed in float32 and returned as float16).

    Raises
    ------
    TypeError
        If ``mask`` is not boolean (its dtype is named).
    ValueError
        If shapes disagree (both shapes are named), or a key or value that some query may
        attend holds NaN or inf.

    Source: Vaswani et al. (2017), "Attention Is All You Need", section 3.2.1, equation (1).
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    require_ndim(q, 2, "queries", "(..., L_q, d_k)")
    require_ndim(k, 2, "keys", "(..., L_k, d_k)")
    require_ndim(v, 2, "values", "(..., L_k, d_v)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"queries {q.shape} and keys {k.shape} must have the same d_k (last axis)")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"keys {k.shape} and values {v.shape} must have the same number of "
                         "positions L_k (second-to-last axis)")
    batch = broadcast_batch(q.shape, k.shape, "queries", "keys")
    batch = broadcast_batch(batch + (1, 1), v.shape, "queries/keys", "values")
    out_dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    work = compute_dtype(out_dtype)
    q, k, v = (a.astype(work, copy=False) for a in (q, k, v))
    scores_shape = batch + (q.shape[-2], k.shape[-2])
    if scale is None:
        scale = 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0

    if mask is None:
        allowed = None
    else:
        allowed = as_bool_mask(mask)
        check_mask_shape(allowed, scores_shape)
        # A key that no query may attend cannot influence anything: zero it before use,
        # so NaN or inf stored there cannot leak through 0 * NaN = NaN.
        used = np.any(np.broadcast_to(allowed, scores_shape), axis=-2)[..., :, None]
        k = np.where(used, k, 0.0)
        v = np.where(used, v, 0.0)
        asking = np.any(np.broadcast_to(allowed, scores_shape), axis=-1)[..., :, None]
        q = np.where(asking, q, 0.0)  # a query that may attend nothing is never used
    if not (np.isfinite(k).all() and np.isfinite(v).all() and np.isfinite(q).all()):
        raise ValueError("queries, keys or values that take part in attention hold NaN or inf")
    scores = (q @ np.swapaxes(k, -1, -2)) * scale
    weights = softmax(scores, axis=-1, mask=allowed)
    output = weights @ v
    return output.astype(out_dtype, copy=False), weights.astype(out_dtype, copy=False)
