"""Input checks shared by every attnlib function (private module).

Errors name what is wrong: both shapes for a shape mismatch, the dtype for a wrong dtype.
The helpers here also fix the one numerical policy of the library: float16 is upcast to
float32, float32 and float64 are computed in their own precision, and results are handed back
in the caller's floating dtype (:func:`compute_dtype`, :func:`to_dtype`).
"""
from __future__ import annotations

import operator

import numpy as np

#: The narrowest dtype attnlib computes in. float16 is upcast to float32, so a dot product
#: of large float16 numbers cannot overflow and softmax keeps float32 accuracy; float32 stays
#: float32 (its stability comes from subtracting the row maximum, not from extra bits, and
#: it keeps attention as fast as the hardware's float32 matrix products); float64 stays float64.
WORK_DTYPE = np.dtype(np.float32)


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a floating-point array, keeping float16/32/64 as they are.

    Integers become float64. Booleans, complex numbers, strings and objects raise
    ``TypeError`` naming ``name`` and the dtype (a boolean array passed as scores or values
    is almost always a mask passed in the wrong place).
    """
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        return arr
    if arr.dtype.kind in "iu":
        return arr.astype(np.float64)
    raise TypeError(f"{name} must hold real numbers (a float or integer dtype); "
                    f"got dtype {arr.dtype}")


def compute_dtype(*dtypes) -> np.dtype:
    """The dtype attnlib computes in: float32 for float16/float32, else the inputs' own dtype."""
    return np.promote_types(np.result_type(*dtypes), WORK_DTYPE)


def to_dtype(x: np.ndarray, dtype, what: str) -> np.ndarray:
    """Cast a result back to ``dtype``; ``OverflowError`` if it does not fit.

    Casting 70000.0 to float16 would silently give ``inf`` (and a RuntimeWarning); attnlib
    refuses instead and says which result is too large for which dtype.
    """
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    limit = np.finfo(dtype).max
    finite = np.isfinite(x)
    if np.any(np.abs(x[finite]) > limit):
        raise OverflowError(
            f"{what} exceed the largest {dtype} number ({limit:g}); "
            f"pass the inputs as float32 or float64 instead")
    return x.astype(dtype)


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """Check that ``mask`` is boolean (``True`` = may attend) and return it as an array.

    Raises ``TypeError`` naming the dtype for float or integer masks: a float mask is
    ambiguous (is 0 "blocked", or an additive bias of zero?), and an integer mask may use
    either polarity (1 = keep in some libraries, 1 = block in others), so attnlib refuses both.
    """
    arr = np.asarray(mask)
    if arr.dtype != np.bool_:
        raise TypeError(
            f"{name} must be boolean (True = may attend); got dtype {arr.dtype}. "
            f"Convert it explicitly, e.g. {name}.astype(bool), after checking its polarity."
        )
    return arr


def check_mask_shape(mask: np.ndarray, target_shape: tuple, what: str = "scores") -> None:
    """Require ``mask`` to broadcast to ``target_shape`` without enlarging it."""
    try:
        shape = np.broadcast_shapes(mask.shape, target_shape)
    except ValueError:
        shape = None
    if shape != tuple(target_shape):
        raise ValueError(
            f"mask of shape {mask.shape} does not broadcast to the {what} shape "
            f"{tuple(target_shape)}"
        )


def broadcast_batch(shape_a: tuple, shape_b: tuple, name_a: str, name_b: str) -> tuple:
    """Broadcast the leading (batch, head) axes of two arrays; ``ValueError`` names both shapes."""
    try:
        return np.broadcast_shapes(shape_a[:-2], shape_b[:-2])
    except ValueError:
        raise ValueError(
            f"the leading (batch/head) axes of {name_a} {shape_a} and {name_b} {shape_b} "
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
        raise TypeError(f"{name} must be an integer; got {n!r} of type {type(n).__name__}") from None
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
        raise ValueError(f"queries {q.shape} and keys {k.shape} must have the same d_k (last axis)")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"keys {k.shape} and values {v.shape} must have the same number of "
                         "positions L_k (second-to-last axis)")
    batch = broadcast_batch(q.shape, k.shape, "queries", "keys")
    batch = broadcast_batch(batch + (1, 1), v.shape, "queries/keys", "values")
    return q, k, v, batch
