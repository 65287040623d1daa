"""Input checks shared by every attnlib function (private module).

Errors name what is wrong: both shapes for a shape mismatch, the dtype for a wrong
dtype. :func:`check_attention` is the one contract of every entry point that takes
queries, keys, values and a mask (``attention``, ``tiled_attention``,
``attention_backward``, and ``multi_head_attention`` through ``attention`` and
:func:`taking_part`): what they accept, what they refuse with which error class, and the
prepared arrays their computation starts from. :func:`as_scale` is the one rule for
``scale``. The helpers here also fix the one numerical policy of the library: float16 is
upcast to float32, float32 and float64 are computed in their own precision, and results
are handed back in the caller's floating dtype (:func:`compute_dtype`,
:func:`to_dtype`).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import numpy as np

#: The narrowest dtype attnlib computes in. float16 is upcast to float32, so a dot
#: product of large float16 numbers cannot overflow and softmax keeps float32 accuracy;
#: float32 stays float32 (its stability comes from subtracting the row maximum, not from
#: extra bits, and it keeps attention as fast as the hardware's float32 matrix
#: products); float64 stays float64.
WORK_DTYPE = np.dtype(np.float32)


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a floating-point array, keeping float16/32/64 as they are.

    Integers become float64. Booleans, complex numbers, strings and objects raise
    ``TypeError`` naming ``name`` and the dtype (a boolean array passed as scores or
    values is almost always a mask passed in the wrong place).
    """
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.float64)
    raise TypeError(
        f"{name} must hold real numbers (a float or integer dtype); "
        f"got dtype {arr.dtype}"
    )


def compute_dtype(*dtypes) -> np.dtype:
    """The dtype attnlib computes in: float32 for float16/float32, else the inputs' own dtype."""
    return np.promote_types(np.result_type(*dtypes), WORK_DTYPE)


def to_dtype(x: np.ndarray, dtype, what: str) -> np.ndarray:
    """Cast a result back to ``dtype``; ``OverflowError`` if it does not fit.

    Casting 70000.0 to float16 would silently give ``inf`` (and a RuntimeWarning);
    attnlib refuses instead and says which result is too large for which dtype.
    """
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    limit = np.finfo(dtype).max
    finite = np.isfinite(x)
    if np.any(np.abs(x[finite]) > limit):
        raise OverflowError(
            f"{what} exceed the largest {dtype} number ({limit:g}); "
            f"pass the inputs as float32 or float64 instead"
        )
    return x.astype(dtype)


def as_bool_mask(
    mask, name: str = "mask", meaning: str = "True = may attend"
) -> np.ndarray:
    """Check that ``mask`` is boolean (``True`` = may attend) and return it as an array.

    Raises ``TypeError`` naming the dtype for float or integer masks: a float mask is
    ambiguous (is 0 "blocked", or an additive bias of zero?), and an integer mask may
    use either polarity (1 = keep in some libraries, 1 = block in others), so attnlib
    refuses both.
    """
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be boolean ({meaning}); got dtype {arr.dtype}. "
            f"Convert it explicitly, e.g. {name}.astype(bool), after checking "
            "its polarity."
        )
    return arr


def check_mask_shape(
    mask: np.ndarray, target_shape: tuple, what: str = "scores", name: str = "mask"
) -> None:
    """Require ``mask`` to broadcast to ``target_shape`` without enlarging it."""
    try:
        shape = np.broadcast_shapes(mask.shape, target_shape)
    except ValueError:
        shape = None
    if shape != tuple(target_shape):
        raise ValueError(
            f"{name} of shape {mask.shape} does not broadcast to the {what} shape "
            f"{tuple(target_shape)}"
        )


def mask_for_scores(
    mask, batch: tuple, n_queries: int, n_keys: int, num_heads: int | None = None
) -> np.ndarray | None:
    """The one mask rule: a mask's meaning is decided by its number of axes, never by
    its sizes.

    The scores of inputs with leading (batch) axes ``batch`` are ``batch + (L_q,
    L_k)``; a mask's axes align with them from the right (numpy broadcasting), so it may
    have at most that many axes. A function that makes a head axis itself
    (``num_heads``, for :func:`attnlib.multi_head_attention` and the layers) reads a
    mask with at most ``len(batch) + 2`` axes as one per example, shared by the heads,
    and a mask with exactly one axis more as one per head, ``batch + (H, L_q, L_k)``
    (the head axis third from the end). A mask is never read one way or the other
    because one of its sizes happens to equal the number of heads or the batch size.

    Returns the boolean mask (None stays None), for a head axis with that axis written
    (size 1 when shared), so that it broadcasts to ``batch + (H, L_q, L_k)``.

    Raises ``TypeError`` for a mask that is not boolean, and ``ValueError`` naming the
    mask's shape and the layouts it could have when it has too many axes or does not
    broadcast to its layout without enlarging it.
    """
    if mask is None:
        return None
    mask = as_bool_mask(mask)
    scores = tuple(batch) + (n_queries, n_keys)
    if num_heads is None:
        if mask.ndim > len(scores):
            raise ValueError(
                f"mask of shape {mask.shape} does not broadcast to the scores shape "
                f"{scores}: it has too many axes (a mask's axes align with the "
                "scores' from the right)"
            )
        check_mask_shape(mask, scores)
        return mask
    heads = tuple(batch) + (num_heads, n_queries, n_keys)
    if mask.ndim > len(heads):
        raise ValueError(
            f"mask of shape {mask.shape} has too many axes for inputs with batch axes "
            f"{tuple(batch)}: use at most {len(scores)} axes (one mask per example, "
            f"shared by the heads: {scores}) or exactly {len(heads)} (one per head: "
            f"{heads})"
        )
    if mask.ndim == len(heads):  # one axis more than the scores: per head
        if mask.shape[-3] not in (1, num_heads):
            raise ValueError(
                f"mask of shape {mask.shape} has one axis more than the scores "
                f"{scores}, so it is per head, but it has {mask.shape[-3]} at the head "
                f"axis (third from the end) for {num_heads} heads"
            )
        check_mask_shape(mask, heads, "per-head scores")
        return mask
    try:
        check_mask_shape(mask, scores)
    except ValueError:
        raise ValueError(
            f"mask of shape {mask.shape} has at most as many axes as the scores "
            f"{scores}, so it is one mask per example, shared by the heads, and it "
            f"does not broadcast to them; a mask per head has one axis more, {heads} "
            "(e.g. mask[None] for one per-head mask used by every example)"
        ) from None
    return mask if mask.ndim < 2 else np.expand_dims(mask, -3)  # (..., 1, L_q, L_k)


def as_dropout_rate(dropout, name: str = "dropout") -> float:
    """The probability ``p`` of dropping an attention weight: a real number in [0, 1).

    ``True`` is not a rate (``TypeError``, as for any non-number); NaN, inf, a negative
    number, 1 or more, or an array raise ``ValueError``. Every message names ``name``.
    """
    kind = "U" if isinstance(dropout, (str, bytes)) else np.asarray(dropout).dtype.kind
    if kind not in "iuf":
        raise TypeError(
            f"{name} must be a real number in [0, 1) (a bool is not a rate); got "
            f"{dropout!r} of type {type(dropout).__name__}"
        )
    if np.ndim(dropout) != 0:
        raise ValueError(
            f"{name} must be a single number; got an array of shape {np.shape(dropout)}"
        )
    p = float(dropout)
    if not (0.0 <= p < 1.0):
        raise ValueError(f"{name} must lie in [0, 1); got {dropout!r}")
    return p


def check_dropout(dropout, rng, keep, scores_shape: tuple):
    """Check attention dropout's arguments; return ``(p, keep)`` with ``keep`` checked.

    ``p`` comes from :func:`as_dropout_rate`. With ``p = 0`` nothing is dropped: ``rng``
    may be given (nothing is drawn from it) and ``keep`` must be None. With ``p > 0``
    exactly one of ``rng`` (a ``numpy.random.Generator``, which draws a new keep-mask)
    and ``keep`` (a boolean keep-mask that broadcasts to ``scores_shape``, replayed) is
    needed. Errors name the argument: ``ValueError`` for a missing or superfluous one or
    a keep-mask that does not fit, ``TypeError`` for an ``rng`` that is not a Generator
    (an integer seed would drop the same weights at every call) or a keep-mask that is
    not boolean.
    """
    p = as_dropout_rate(dropout)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)); got "
            f"{type(rng).__name__}. A seed is refused: it would drop the same weights "
            "at every call"
        )
    if p == 0.0:
        if keep is not None:
            raise ValueError("keep is a dropout keep-mask: pass dropout=p > 0 with it")
        return p, None
    if keep is not None:
        if rng is not None:
            raise ValueError(
                "pass rng (draw a new keep-mask) or keep (replay one), not both"
            )
        keep = as_bool_mask(keep, "keep", "True = kept")
        check_mask_shape(keep, scores_shape, "attention weights", "keep")
        return p, keep
    if rng is None:
        raise ValueError(
            f"dropout={p:g} needs rng, a numpy.random.Generator that draws which "
            "weights are dropped (or keep, a keep-mask to replay)"
        )
    return p, rng


def broadcast_batch(shape_a: tuple, shape_b: tuple, name_a: str, name_b: str) -> tuple:
    """Broadcast the leading (batch, head) axes of two arrays; ``ValueError`` names both shapes."""
    try:
        return np.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) axes of {name_a} {shape_a} and {name_b} "
            f"{shape_b} "
            "do not broadcast"
        ) from None


def require_ndim(arr: np.ndarray, ndim: int, name: str, layout: str) -> None:
    """Require at least ``ndim`` axes, naming the expected layout."""
    if arr.ndim < ndim:
        raise ValueError(f"{name} must have shape {layout}; got shape {arr.shape}")


def as_length(n, name: str) -> int:
    """A sequence length: a non-negative integer (``TypeError`` for 2.5, ``ValueError`` for -1)."""
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(
            f"{name} must be an integer; got {n!r} of type {type(n).__name__}"
        ) from None
    if n < 0:
        raise ValueError(f"{name} must be non-negative; got {n}")
    return n


def check_qkv(queries, keys, values):
    """Validate attention inputs; return ``(q, k, v, batch)`` with ``batch`` the broadcast
    leading axes of all three.

    Raises ``TypeError`` for non-real inputs and ``ValueError`` naming both shapes when
    ``d_k`` or ``L_k`` disagree or the leading axes do not broadcast.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    require_ndim(q, 2, "queries", "(..., L_q, d_k)")
    require_ndim(k, 2, "keys", "(..., L_k, d_k)")
    require_ndim(v, 2, "values", "(..., L_k, d_v)")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(
            f"queries {q.shape} and keys {k.shape} must have the same d_k (last axis)"
        )
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"keys {k.shape} and values {v.shape} must have the same number of "
            "positions L_k (second-to-last axis)"
        )
    batch = broadcast_batch(q.shape, k.shape, "queries", "keys")
    batch = broadcast_batch(batch + (1, 1), v.shape, "queries/keys", "values")
    return q, k, v, batch


def as_scale(scale, d_k: int) -> float:
    """The factor that multiplies ``Q K^T``: ``1 / sqrt(d_k)`` by default, else
       ``scale``.

    One rule for every entry point. A scale is a single real number: a Python ``int`` or
    ``float``, a numpy integer or floating scalar, or a 0-d array of one. ``True`` and
    ``False`` are not numbers here (a boolean is a mask or a switch, never a factor):
    booleans, complex numbers, strings and other objects raise ``TypeError`` naming the
    type; an array with axes, NaN or inf raises ``ValueError``. Zero and negative scales
    are accepted (zero gives uniform weights over the allowed keys). Without ``scale``,
    ``d_k = 0`` raises ``ValueError`` (``1 / sqrt(0)`` is undefined).
    """
    if scale is None:
        if d_k == 0:
            raise ValueError(
                "the queries have no features (d_k = 0): 1/sqrt(d_k) "
                "is undefined; pass scale= explicitly"
            )
        return 1.0 / math.sqrt(d_k)
    kind = np.asarray(scale).dtype.kind if not isinstance(scale, (str, bytes)) else "U"
    if kind not in "iuf":
        raise TypeError(
            f"scale must be a real number (int or float; a bool is not a "
            f"number here); got {scale!r} of type {type(scale).__name__}"
        )
    if np.ndim(scale) != 0:
        raise ValueError(
            f"scale must be a single number; got an array of shape {np.shape(scale)}"
        )
    value = float(scale)
    if not math.isfinite(value):
        raise ValueError(f"scale must be a finite real number; got {scale!r}")
    return value


@dataclass(frozen=True)
class AttentionInputs:
    """What :func:`check_attention` hands to an attention body, checked and prepared.

    ``queries``, ``keys`` and ``values`` are in the compute dtype ``work`` and finite
    wherever they take part. When some number is not finite, or is so large that a score
    might overflow, every query that may attend nothing and every key and value that no
    query may attend has been replaced by 0 (the arrays are then broadcast to the
    leading axes ``batch``), so that nothing stored there can leak through ``0 * NaN =
    NaN`` or overflow; otherwise they are the inputs, unchanged. ``mask`` is the boolean
    mask as given (not broadcast: one ``(L_q, L_k)`` mask may serve every head),
    ``allowed`` the same mask broadcast (a view) to ``scores_shape``; both None without
    a mask.
    """

    queries: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    mask: np.ndarray | None
    allowed: np.ndarray | None
    scale: float
    batch: tuple
    scores_shape: tuple
    out_dtype: np.dtype
    work: np.dtype


#: Queries per chunk when a check must look at allowed scores row by row (bounded
#: memory).
_CHECK_ROWS = 256


def _allowed_rows(allowed, offset, n_keys: int, q0: int, q1: int):
    """The allowed entries of query rows ``q0:q1``: (mask) & (causal), or None if all allowed."""
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


def _check_no_overflow(
    q, k, v, mask, allowed, scores_shape, offset, scale: float, work
):
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
    """Replace the queries, keys and values that take no part by 0 (see :func:`taking_part`)."""
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
    """The error every attention form raises when an allowed score overflows ``work``."""
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


def check_attention(
    queries, keys, values, mask=None, scale=None, *, causal_offset: int | None = None
) -> AttentionInputs:
    """The one contract of every attention entry point, checked in one place.

    Used by :func:`attnlib.attention`, :func:`attnlib.tiled_attention`,
    :func:`attnlib.attention_backward` and (per head)
    :func:`attnlib.multi_head_attention`, so that they accept the same inputs, refuse
    the same inputs with the same error class, and hand the same prepared arrays to
    their computation.

    Parameters
    ----------
    queries, keys, values : array_like, shapes (..., L_q, d_k), (..., L_k, d_k), (..., L_k, d_v)
        Real (float or integer) arrays; leading axes broadcast, from any of the three.
    mask : array_like of bool, optional
        Broadcastable to ``batch + (L_q, L_k)`` without enlarging it; ``True`` = may attend.
    scale : real number, optional (see :func:`as_scale`)
    causal_offset : int, optional
        A causal pattern applied on top of ``mask`` (query ``i`` may attend key ``j`` when
        ``j <= i + causal_offset``), as :func:`attnlib.tiled_attention` generates it.

    Returns
    -------
    AttentionInputs

    Raises
    ------
    TypeError
        A non-real input, a non-boolean mask (dtype named), or a scale that is not a number.
    ValueError
        Shapes that disagree (both named), a mask that does not fit, a bad scale, or NaN or
        inf in a query, key or value that takes part.
    OverflowError
        If an allowed score (or ``q . k`` before scaling, or ``scale * q``) lies beyond the
        largest number of the compute dtype (float32 for float16/float32 inputs).
    """
    q, k, v, batch = check_qkv(queries, keys, values)
    scores_shape = batch + (q.shape[-2], k.shape[-2])  # (..., L_q, L_k)
    scale = as_scale(scale, q.shape[-1])
    mask = mask_for_scores(mask, batch, q.shape[-2], k.shape[-2])  # the one mask rule
    allowed = None if mask is None else np.broadcast_to(mask, scores_shape)  # a view
    out_dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    work = compute_dtype(out_dtype)
    q, k, v = (
        q.astype(work, copy=False),
        k.astype(work, copy=False),
        v.astype(work, copy=False),
    )
    q, k, v = taking_part(q, k, v, mask, scores_shape, causal_offset)
    q, k, v = _check_no_overflow(
        q, k, v, mask, allowed, scores_shape, causal_offset, scale, work
    )
    return AttentionInputs(
        q, k, v, mask, allowed, scale, batch, scores_shape, out_dtype, work
    )
