"""Input checks shared by every attnlib function.

Errors name what is wrong: both shapes for a shape mismatch, the dtype for a wrong dtype.
"""
from __future__ import annotations

import numpy as np


def as_float_array(x, name: str) -> np.ndarray:
    """Return ``x`` as a floating-point array, keeping float16/32/64 as they are.

    Integers and booleans become float64. Complex numbers, strings and objects raise
    ``TypeError`` naming ``name`` and the dtype.
    """
    arr = np.asarray(x)
    if arr.dtype.kind == "f":
        return arr
    if arr.dtype.kind in "iub":
        return arr.astype(np.float64)
    raise TypeError(f"{name} must hold real numbers; got dtype {arr.dtype}")


def compute_dtype(*dtypes) -> np.dtype:
    """The dtype attnlib computes in: float16 is upcast to float32, float32 and float64 stay."""
    return np.promote_types(np.result_type(*dtypes), np.float32)


def as_bool_mask(mask, name: str = "mask") -> np.ndarray:
    """Check that ``mask`` is boolean (``True`` = may attend) and return it as an array.

    Raises ``TypeError`` naming the dtype for float or integer masks: a float mask is
    ambiguous (is 0 "blocked" or "an additive bias of zero"?), so attnlib refuses it.
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
            f"mask of shape {mask.shape} does not broadcast to the {what} shape {tuple(target_shape)}"
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
