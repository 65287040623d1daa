"""What takes part in attention, and what overflows: the contract's numerics (private).

:func:`taking_part` refuses NaN and inf where a query, key or value takes part and puts
0 where it does not; :func:`check_no_overflow` refuses inputs whose allowed scores would
overflow the compute dtype before any score is computed; :func:`check_row_maxima` is the
last check, on the rows' maxima that the softmax computes anyway. Used by
:func:`attnlib.core._validation.check_attention` and the attention bodies.
"""

from __future__ import annotations

import math

import numpy as np

#: Queries per chunk when a check must look at allowed scores row by row (bounded
#: memory).
_CHECK_ROWS = 256


def _allowed_rows(allowed, offset, n_keys: int, q0: int, q1: int):
    """The allowed entries of query rows ``q0:q1``: (mask) & (causal), or None if all
    are allowed."""
    rows = None if allowed is None else allowed[..., q0:q1, :]
    if offset is not None:
        i = np.arange(q0, q1)[:, None]
        causal = np.arange(n_keys)[None, :] <= i + offset  # (q1 - q0, L_k)
        rows = causal if rows is None else rows & causal
    return rows


def _used_rows(mask, offset, scores_shape):
    """Which queries ask for something ``(..., L_q)`` and which keys are used ``(...,
       L_k)``.

    ``mask`` is the mask as given (not broadcast) or None, ``offset`` the causal
    pattern's or None. Linear in the lengths for a causal pattern, a mask, or a causal
    pattern with a key mask ``(..., 1, L_k)``; any other mask is read a few query rows
    at a time.
    """
    n_q, n_k = scores_shape[-2:]
    key_shape = scores_shape[:-2] + (n_k,)
    i, j = np.arange(n_q), np.arange(n_k)
    if mask is not None:
        mask = mask.reshape((1,) * max(0, 2 - mask.ndim) + mask.shape)  # at least 2-D
    if offset is None:  # reduce the mask before broadcasting it: no L_q x L_k work
        return (
            np.broadcast_to(mask.any(axis=-1), scores_shape[:-1]),
            np.broadcast_to(mask.any(axis=-2), key_shape),
        )
    last_key = np.minimum(i + offset, n_k - 1)  # query i may attend keys 0..last_key
    if mask is None:
        return (
            np.broadcast_to(i + offset >= 0, scores_shape[:-1]),
            np.broadcast_to(j <= n_q - 1 + offset, key_shape),
        )
    if mask.shape[-2] == 1:  # a key mask with a causal pattern: prefix "any"
        keys = np.broadcast_to(mask[..., 0, :], mask.shape[:-2] + (n_k,))
        seen = np.logical_or.accumulate(
            keys, axis=-1
        )  # (..., L_k): some key <= j allowed
        asks = np.where(i + offset >= 0, seen[..., np.maximum(last_key, 0)], False)
        return (
            np.broadcast_to(asks, scores_shape[:-1]),
            np.broadcast_to(keys & (j <= n_q - 1 + offset), key_shape),
        )
    allowed = np.broadcast_to(mask, scores_shape)
    asks = np.zeros(scores_shape[:-1], dtype=bool)
    used = np.zeros(key_shape, dtype=bool)
    for q0 in range(0, n_q, _CHECK_ROWS):
        rows = _allowed_rows(allowed, offset, n_k, q0, min(q0 + _CHECK_ROWS, n_q))
        asks[..., q0 : q0 + rows.shape[-2]] = rows.any(axis=-1)
        used |= rows.any(axis=-2)
    return asks, used


def check_no_overflow(q, k, v, mask, allowed, scores_shape, offset, scale: float, work):
    """``OverflowError`` if an allowed score, ``q . k`` before scaling or ``scale * q``
    lies beyond the largest ``work`` number; returns ``(q, k, v)``.

    Three tests, from cheapest to exact. Every ``|q . k|`` is at most ``d_k * max|q| *
    max|k|``, which settles the usual case with four reductions over Q and K (no
    temporary array). Next, Cauchy-Schwarz bounds it by ``||q_i|| ||k_j||`` (norms in
    float64). Only when both bounds are too large are the queries, keys and values that
    take no part set to 0 (so that a huge number where it is masked cannot overflow
    anything) and the allowed scores computed, in float64 and a few query rows at a
    time.
    """
    limit = float(np.finfo(work).max)
    if q.size == 0 or k.size == 0:
        return q, k, v
    q_max, k_max = _largest_magnitude(q), _largest_magnitude(k)  # finite by now
    factor = max(abs(scale), 1.0)  # bounds both q . k and scale * q . k
    if q.shape[-1] * q_max * k_max * factor < limit and abs(scale) * q_max < limit:
        return q, k, v  # (a huge bound is inf in Python floats, not an error)
    with np.errstate(over="ignore", invalid="ignore"):
        q64, k64 = q.astype(np.float64), k.astype(np.float64)
        bound = float(
            np.linalg.norm(q64, axis=-1).max() * np.linalg.norm(k64, axis=-1).max()
        )
        if bound * factor < limit and abs(scale) * q_max < limit:
            return q, k, v
        q, k, v = _zero_unused(q, k, v, mask, scores_shape, offset)
        q64, k64 = q.astype(np.float64), k.astype(np.float64)
        if not np.all(np.abs(q64) * abs(scale) < limit):
            raise OverflowError(
                f"queries times scale = {scale:g} overflow {work}; "
                "pass float64 inputs or smaller queries"
            )
        n_q, n_k = q.shape[-2], k.shape[-2]
        for q0 in range(0, n_q, _CHECK_ROWS):
            q1 = min(q0 + _CHECK_ROWS, n_q)
            dots = q64[..., q0:q1, :] @ np.swapaxes(k64, -1, -2)  # (..., rows, L_k)
            big = ~(np.abs(dots) < limit) | ~(np.abs(dots * scale) < limit)
            rows = _allowed_rows(allowed, offset, n_k, q0, q1)
            if rows is not None:
                big &= rows
            if big.any():
                raise score_overflow(work)
    return q, k, v


def _zero_unused(q, k, v, mask, scores_shape: tuple, causal_offset: int | None):
    """Replace the queries, keys and values that take no part by 0 (see
    :func:`taking_part`)."""
    n_q, n_k = scores_shape[-2:]
    zero = q.dtype.type(0)
    if n_q == 0 or n_k == 0:
        # No key: no query takes part; no query: no key is used (and nothing is
        # computed).
        q = np.zeros_like(q) if n_k == 0 else q
        k, v = (np.zeros_like(k), np.zeros_like(v)) if n_q == 0 else (k, v)
    elif mask is not None or causal_offset is not None:
        asks, used = _used_rows(mask, causal_offset, scores_shape)
        q = np.where(asks[..., None], q, zero)  # (..., L_q, d_k)
        k = np.where(used[..., None], k, zero)  # (..., L_k, d_k)
        v = np.where(used[..., None], v, zero)  # (..., L_k, d_v)
    return q, k, v


def score_overflow(work) -> OverflowError:
    """The error every attention form raises when an allowed score overflows
    ``work``."""
    return OverflowError(
        f"an allowed attention score overflows {work}; "
        "pass float64 inputs or smaller queries and keys"
    )


def _largest_magnitude(a: np.ndarray) -> float:
    """``max |a|`` from ``a.max()`` and ``a.min()``, without a temporary array.

    NaN if ``a`` holds a NaN (``max`` and ``min`` propagate it), inf if it holds an inf,
    so the result is finite exactly when every entry is; 0 for an empty array.
    """
    if a.size == 0:
        return 0.0
    return float(np.maximum(a.max(), -a.min()))


def _all_finite(*arrays) -> bool:
    return all(math.isfinite(_largest_magnitude(a)) for a in arrays)


def taking_part(q, k, v, mask, scores_shape: tuple, causal_offset: int | None = None):
    """Refuse non-finite queries, keys and values that take part; zero those that do
       not.

    A query takes part when it may attend some key, a key (and its value) when some
    query may attend it (``mask``: a boolean mask that broadcasts to ``scores_shape``,
    or None; plus the causal pattern of ``causal_offset``). When every number is finite
    the arrays come back as they are (a query or key that takes no part cannot change a
    result: its scores are masked). Otherwise the ones that take no part are replaced by
    0 *before* any arithmetic, so NaN or inf stored there cannot leak through ``0 * NaN
    = NaN``, and the arrays come back broadcast to the leading axes of ``scores_shape``.

    Raises ``ValueError`` if a query, key or value that takes part holds NaN or inf.
    """
    if _all_finite(q, k, v):
        return q, k, v
    q, k, v = _zero_unused(q, k, v, mask, scores_shape, causal_offset)
    for name, arr in (("queries", q), ("keys", k), ("values", v)):
        if not np.isfinite(arr).all():
            raise ValueError(
                f"{name} that take part in attention hold NaN or inf "
                "(mask such positions out)"
            )
    return q, k, v


def check_row_maxima(top, n_keys: int, allowed, work) -> None:
    """``OverflowError`` if an allowed score overflowed, read from the rows' maxima
    alone.

    ``top`` holds each row's largest score after masking (masked scores are ``-inf``):
    NaN or ``+inf`` there means an allowed score is NaN or ``+inf``, and ``-inf`` in a
    row that has an allowed key (``allowed``: the broadcast mask, or None when all
    ``n_keys`` keys are allowed) means all of them overflowed to ``-inf``. (A single
    allowed ``-inf`` in a row with a finite maximum gets weight 0, which is its weight
    to float precision.)
    """
    overflow = ~(top < np.inf)
    no_max = top == -np.inf
    if no_max.any():
        has_keys = (
            n_keys > 0 if allowed is None else allowed.any(axis=-1, keepdims=True)
        )
        overflow |= no_max & has_keys
    if overflow.any():
        raise score_overflow(work)


def check_tile_maxima(top, work) -> None:
    """``OverflowError`` if a tile's row maximum is NaN or ``+inf`` (an allowed score
    overflowed; ``max`` propagates NaN)."""
    if not (top < np.inf).all():
        raise score_overflow(work)
