"""Scoring functions: how well each query matches each key.

Three ways to score, each batched over many queries and keys:

* ``dot_product_scores``        ``q · k``, Luong et al. (2015), eq. (8)
* ``scaled_dot_product_scores`` ``q · k / sqrt(d_k)``, Vaswani et al. (2017), eq. (1)
* ``additive_scores``           ``w_v · tanh(q W_q + k W_k)``, Bahdanau et al. (2015),
                                eq. (6)

Arrays follow the row-vector convention of the book: a query is a row ``q`` of length
``d_k`` and a projection is ``q @ W`` (the papers' ``W q`` with ``W`` transposed).
All three compute in float32 for float16/float32 inputs and in float64 otherwise, and
return the inputs' common float dtype (integers give float64).
"""

from __future__ import annotations

import math

import numpy as np

from attnlib.core._validation import (
    broadcast_batch,
    compute_dtype,
    finite_array,
    finite_arrays,
    to_dtype,
)


def _queries_and_keys(queries, keys):
    """Check queries (..., L_q, d_k) and keys (..., L_k, d_k); return them and the
    output dtype."""
    q = finite_array(queries, "queries", "(..., L_q, d_k)", 2)
    k = finite_array(keys, "keys", "(..., L_k, d_k)", 2)
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries {q.shape} and keys {k.shape} must have the same feature size d_k "
            "(their last axis)"
        )
    if q.shape[-1] == 0:
        raise ValueError(
            f"queries {q.shape} and keys {k.shape} have no features (d_k = 0)"
        )
    broadcast_batch(q.shape, k.shape, "queries", "keys")
    out_dtype = np.result_type(q.dtype, k.dtype)
    work = compute_dtype(out_dtype)
    return q.astype(work), k.astype(work), out_dtype


def _dot(q, k):
    """``q @ k^T`` over the last two axes, batched over the leading ones, in q's
    dtype."""
    with np.errstate(over="ignore", invalid="ignore"):  # reported just below, by name
        s = q @ np.swapaxes(k, -1, -2)
    if not np.isfinite(s).all():  # q and k are finite: an overflow
        raise OverflowError(f"a dot product of queries and keys overflows {s.dtype}")
    return s


def dot_product_scores(queries, keys) -> np.ndarray:
    """Dot-product scores ``S = Q K^T``.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_k), real
    keys : array_like, shape (..., L_k, d_k), real
        Leading axes broadcast with ``queries``.

    Returns
    -------
    numpy.ndarray, shape (..., L_q, L_k)
        ``S[..., i, j] = q_i · k_j``, in the inputs' common float dtype (integers give
        float64). Computed in float32 for float16/float32 inputs, else float64.

    Raises
    ------
    TypeError
        If an input is not a float or integer array (its dtype is named).
    ValueError
        If the feature sizes differ, are 0, or the leading axes do not broadcast (both
        shapes named), an input has fewer than 2 axes, or holds NaN or inf (named).
    OverflowError
        If a score does not fit the output dtype (e.g. float16 scores above 65504).

    Source: Luong, Pham & Manning (2015), "Effective Approaches to Attention-based
    Neural Machine Translation", section 3.1, equation (8) ("dot"); Vaswani et al.
    (2017), section 3.2.1.
    """
    q, k, out_dtype = _queries_and_keys(queries, keys)
    return to_dtype(_dot(q, k), out_dtype, "dot-product scores")


def scaled_dot_product_scores(queries, keys) -> np.ndarray:
    """Scaled dot-product scores ``S = Q K^T / sqrt(d_k)``.

    Dividing by ``sqrt(d_k)`` keeps the variance of a score near 1 when the components
    of queries and keys are independent with mean 0 and variance 1 (the raw dot product
    has variance ``d_k``).

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_k), float or integer
    keys : array_like, shape (..., L_k, d_k); leading axes broadcast with ``queries``

    Returns
    -------
    numpy.ndarray, shape (..., L_q, L_k)
        ``S[..., i, j] = q_i · k_j / sqrt(d_k)``, in the inputs' common float dtype
        (integers give float64). Computed in float32 for float16/float32 inputs, else
        float64.

    Raises
    ------
    TypeError
        If an input is not a float or integer array (its dtype is named).
    ValueError
        If the feature sizes differ or are 0 (no ``sqrt(0)`` division), the leading axes
        do not broadcast (both shapes named), an input has fewer than 2 axes, or holds
        NaN or inf (named).
    OverflowError
        If a score does not fit the output dtype.

    Source: Vaswani et al. (2017), section 3.2.1, equation (1) and footnote 4.
    """
    q, k, out_dtype = _queries_and_keys(queries, keys)
    d_k = q.shape[-1]
    return to_dtype(_dot(q, k) / math.sqrt(d_k), out_dtype, "scaled dot-product scores")


def additive_scores(queries, keys, W_q, W_k, w_v) -> np.ndarray:
    """Additive (Bahdanau) scores ``e_ij = w_v^T tanh(q_i W_q + k_j W_k)``.

    A small feed-forward network with one hidden layer of size ``h`` compares each query
    with each key. Queries and keys may have different feature sizes.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_q)
    keys : array_like, shape (..., L_k, d_kin); leading axes broadcast with ``queries``
    W_q : array_like, shape (d_q, h)
    W_k : array_like, shape (d_kin, h)
    w_v : array_like, shape (h,)

    Returns
    -------
    numpy.ndarray, shape (..., L_q, L_k)
        ``e[..., i, j]`` for every query ``i`` and key ``j``, in the common float dtype
        of ``queries`` and ``keys`` (integers give float64). Computed in float32 for
        float16/float32 inputs, else float64.

    Raises
    ------
    TypeError
        If an input is not a float or integer array (its dtype is named).
    ValueError
        If a weight's shape does not fit the queries, the keys or the hidden size (the
        shapes involved are named), the leading axes do not broadcast, or an input
        holds NaN or inf (named).
    OverflowError
        If a score does not fit the output dtype.

    Source: Bahdanau, Cho & Bengio (2015), equation (6) and appendix A.1.2
    (``e_ij = v_a^T tanh(W_a s_{i-1} + U_a h_j)``).
    """
    q = finite_array(queries, "queries", "(..., L_q, d_q)", 2)
    k = finite_array(keys, "keys", "(..., L_k, d_k)", 2)
    Wq, Wk, wv = finite_arrays(W_q=W_q, W_k=W_k, w_v=w_v)
    if Wq.ndim != 2 or Wq.shape[0] != q.shape[-1]:
        raise ValueError(
            f"W_q must have shape (d_q, h) = ({q.shape[-1]}, h); got {Wq.shape} "
            f"for queries {q.shape}"
        )
    if Wk.ndim != 2 or Wk.shape[0] != k.shape[-1]:
        raise ValueError(
            f"W_k must have shape (d_k, h) = ({k.shape[-1]}, h); got {Wk.shape} "
            f"for keys {k.shape}"
        )
    if Wq.shape[1] != Wk.shape[1] or wv.shape != (Wq.shape[1],):
        raise ValueError(
            f"hidden sizes differ: W_q {Wq.shape}, W_k {Wk.shape}, w_v {wv.shape}"
        )
    broadcast_batch(q.shape, k.shape, "queries", "keys")
    out_dtype = np.result_type(q.dtype, k.dtype)
    work = compute_dtype(out_dtype, Wq.dtype, Wk.dtype, wv.dtype)
    pq = q.astype(work) @ Wq.astype(work)  # (..., L_q, h): every query projected once
    pk = k.astype(work) @ Wk.astype(work)  # (..., L_k, h): every key projected once
    # Every (query, key) pair: broadcast queries along a new key axis and keys along a
    # new query axis, then one hidden layer and the output vector w_v.
    hidden = np.tanh(pq[..., :, None, :] + pk[..., None, :, :])  # (..., L_q, L_k, h)
    return to_dtype(hidden @ wv.astype(work), out_dtype, "additive scores")
