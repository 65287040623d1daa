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

from attnlib.core._numerics import check_no_overflow, taking_part

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


def finite_real_array(x, name: str) -> np.ndarray:
    """``x`` as an array of finite real numbers with its dtype kept (integers stay
    integers): ``TypeError`` naming ``name`` and the dtype for booleans, complex
    numbers, strings and objects, ``ValueError`` for NaN or inf. For functions that
    move numbers without computing with them (:func:`attnlib.split_heads`)."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "iuf":
        raise TypeError(
            f"{name} must hold real numbers (a float or integer dtype); "
            f"got dtype {arr.dtype}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} {arr.shape} holds NaN or inf")
    return arr


def finite_array(x, name: str, layout: str | None = None, ndim: int = 1):
    """``x`` as a float array (integers give float64) with no NaN or inf and, when
    ``layout`` is given, at least ``ndim`` axes; ``TypeError`` (dtype) or
    ``ValueError`` (axes, NaN, inf) naming ``name`` otherwise."""
    a = as_float_array(x, name)
    if layout is not None:
        require_ndim(a, ndim, name, layout)
    if not np.isfinite(a).all():
        raise ValueError(f"{name} {a.shape} holds NaN or inf")
    return a


def finite_arrays(layout: str | None = None, ndim: int = 1, **arrays) -> tuple:
    """:func:`finite_array` of each keyword argument, in order, named by its keyword:
    ``dy, x = finite_arrays(dy=dy, x=x)``."""
    return tuple(finite_array(a, name, layout, ndim) for name, a in arrays.items())


def compute_dtype(*dtypes) -> np.dtype:
    """The dtype attnlib computes in: float32 for float16/float32, else the inputs'
    own dtype."""
    return np.promote_types(np.result_type(*dtypes), WORK_DTYPE)


def to_dtype(x: np.ndarray, dtype, what: str) -> np.ndarray:
    """Cast a result back to ``dtype``; ``OverflowError`` if it does not fit.

    Casting 70000.0 to float16 would silently give ``inf`` (and a RuntimeWarning);
    attnlib refuses instead and says which result is too large for which dtype. A
    number that rounds to the largest finite value fits: float32 65504.004 becomes
    float16 65504 (only from 65520 on does the cast give inf).
    """
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    with np.errstate(over="ignore"):  # checked: a finite number that became inf
        y = x.astype(dtype)
    if not np.array_equal(np.isfinite(y), np.isfinite(x)):
        limit = np.finfo(dtype).max
        raise OverflowError(
            f"{what} exceed the largest {dtype} number ({limit:g}); "
            f"pass the inputs as float32 or float64 instead"
        )
    return y


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


def broadcast_batch(shape_a: tuple, shape_b: tuple, name_a: str, name_b: str) -> tuple:
    """Broadcast the leading (batch, head) axes of two arrays; ``ValueError`` names
    both shapes."""
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


def _as_int(value, name: str) -> int:
    """``value`` as a Python int: ``TypeError`` naming ``name`` for 2.5, "3" or ``True``
    (a switch, never a count); numpy integers are accepted."""
    try:
        if isinstance(value, (bool, np.bool_)):
            raise TypeError
        return operator.index(value)
    except TypeError:
        raise TypeError(
            f"{name} must be an integer; got {value!r} of type {type(value).__name__}"
        ) from None


def as_length(n, name: str) -> int:
    """A sequence length: a non-negative integer (``TypeError`` for 2.5 or ``True``,
    ``ValueError`` for -1); numpy integers are accepted."""
    n = _as_int(n, name)
    if n < 0:
        raise ValueError(f"{name} must be non-negative; got {n}")
    return n


def as_axis(axis, ndim: int, name: str = "axis") -> int:
    """An axis of an array with ``ndim`` axes, as a non-negative int: ``TypeError``
    naming ``name`` for 2.5 or ``True``, ``numpy.exceptions.AxisError`` (a
    ``ValueError``) naming it when the array has no such axis."""
    axis = _as_int(axis, name)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(
            f"{name}={axis} does not exist in an array of {ndim} axes"
        )
    return axis % ndim


def as_positive(value, name: str) -> float:
    """A positive finite real number (``eps``, a learning rate); ``TypeError`` or
    ``ValueError`` naming ``name`` otherwise (``True`` is not a number here)."""
    value = as_real_number(value, name)
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number; got {value}")
    return value


def fits(y: np.ndarray, what: str) -> np.ndarray:
    """``y`` if every entry is finite, else ``OverflowError`` naming ``what``.

    Callers compute ``y`` from finite inputs inside ``np.errstate(over="ignore",
    invalid="ignore")``, so a non-finite entry can only be an overflow.
    """
    if not np.isfinite(y).all():
        advice = "smaller inputs" if y.dtype == np.float64 else "float64 inputs"
        raise OverflowError(f"{what} overflow {y.dtype}; pass {advice}")
    return y


def as_generator(rng, name: str = "rng") -> np.random.Generator:
    """A numpy Generator from ``rng``: a Generator, or a non-negative integer seed
    (numpy integers too). Anything else, a float or a bool included, raises
    ``TypeError`` naming ``name``; a negative seed ``ValueError``."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(as_length(rng, name))


def as_width(n, name: str) -> int:
    """A feature width: a positive integer (``TypeError`` for 4.0, ``ValueError`` for
    0), named ``name``."""
    n = as_length(n, name)
    if n < 1:
        raise ValueError(f"{name} must be at least 1; got {n}")
    return n


def keys_values_batch(q, k, v) -> tuple:
    """The broadcast leading axes of queries, keys and values, after checking that keys
    and values have the same number of positions (``ValueError`` naming both shapes)."""
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(
            f"keys {k.shape} and values {v.shape} must have the same number of "
            "positions L_k (second-to-last axis)"
        )
    batch = broadcast_batch(q.shape, k.shape, "queries", "keys")
    return broadcast_batch(batch + (1, 1), v.shape, "queries/keys", "values")


def check_qkv(queries, keys, values):
    """Validate attention inputs; return ``(q, k, v, batch)`` with ``batch`` the
    broadcast leading axes of all three.

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
    batch = keys_values_batch(q, k, v)
    return q, k, v, batch


def as_real_number(value, name: str) -> float:
    """A single real number as a float: a Python ``int`` or ``float``, a numpy integer
    or floating scalar, or a 0-d array of one. Booleans, complex numbers, strings and
    other objects raise ``TypeError`` naming ``name`` and the type (a boolean is a mask
    or a switch, never a number here); an array with axes raises ``ValueError``."""
    kind = "U" if isinstance(value, (str, bytes)) else np.asarray(value).dtype.kind
    if kind not in "iuf":
        raise TypeError(
            f"{name} must be a real number (int or float; a bool is not a number "
            f"here); got {value!r} of type {type(value).__name__}"
        )
    if np.ndim(value) != 0:
        raise ValueError(
            f"{name} must be a single number; got an array of shape {np.shape(value)}"
        )
    return float(value)


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
    value = as_real_number(scale, "scale")
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
    queries, keys, values : array_like
        Shapes (..., L_q, d_k), (..., L_k, d_k) and (..., L_k, d_v).
        Real (float or integer) arrays; leading axes broadcast, from any of the three.
    mask : array_like of bool, optional
        Broadcastable to ``batch + (L_q, L_k)`` without enlarging it; ``True`` = may
        attend.
    scale : real number, optional (see :func:`as_scale`)
    causal_offset : int, optional
        A causal pattern applied on top of ``mask`` (query ``i`` may attend key ``j``
        when ``j <= i + causal_offset``), as :func:`attnlib.tiled_attention` generates
        it.

    Returns
    -------
    AttentionInputs

    Raises
    ------
    TypeError
        A non-real input, a non-boolean mask (dtype named), or a scale that is not a
        number.
    ValueError
        Shapes that disagree (both named), a mask that does not fit, a bad scale, or NaN
        or inf in a query, key or value that takes part.
    OverflowError
        If an allowed score (or ``q . k`` before scaling, or ``scale * q``) lies beyond
        the largest number of the compute dtype (float32 for float16/float32 inputs).
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
    q, k, v = check_no_overflow(
        q, k, v, mask, allowed, scores_shape, causal_offset, scale, work
    )
    return AttentionInputs(
        q, k, v, mask, allowed, scale, batch, scores_shape, out_dtype, work
    )
