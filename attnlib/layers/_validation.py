"""The layers' contract, checked in one place (private module).

Each layer's function starts with one call here, so that its body reads like the
equation it implements. The rules are those of :mod:`attnlib.core._validation`: errors
name the argument (``TypeError`` for a wrong type or dtype, ``ValueError`` for a wrong
shape or value, NaN or inf), results come back in the documented dtype, and a result
too large for its dtype raises ``OverflowError`` (never inf, NaN or a RuntimeWarning).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnlib.core._validation import (  # noqa: F401 (shared with the layers)
    as_float_array,
    as_positive,
    compute_dtype,
    finite_array,
    finite_arrays,
    fits,
)


def check_param_shapes(params, expected: dict, d_model: int, d_ff: int) -> None:
    """Convert each array of a layer's parameter dataclass to a float array and check
    its shape against ``expected`` (name -> shape); ``ValueError`` naming the array and
    both shapes, ``TypeError`` for an array that is not real."""
    for name, shape in expected.items():
        value = as_float_array(getattr(params, name), name)
        if value.shape != shape:
            raise ValueError(
                f"{name} must have shape {shape} for d_model={d_model}, d_ff={d_ff}; "
                f"got {value.shape}"
            )
        object.__setattr__(params, name, value)  # frozen dataclass


def add(a, b, what: str) -> np.ndarray:
    """``a + b`` (a residual connection, a bias), ``OverflowError`` instead of inf."""
    with np.errstate(over="ignore", invalid="ignore"):
        return fits(a + b, what)


def params_dtype(params) -> np.dtype:
    """The common float dtype of every array of a (nested) parameter dataclass."""
    dtypes = []
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        if dataclasses.is_dataclass(value):
            dtypes.append(params_dtype(value))
        elif isinstance(value, np.ndarray):
            dtypes.append(value.dtype)
    return np.result_type(*dtypes)


def check_layer_input(
    x, name: str, d_model: int, params, width: str = "d_model"
) -> np.ndarray:
    """A layer's input: finite, shape ``(..., L, d_model)``, cast to the common dtype of
    the input and the parameters (the dtype of the layer's results). The messages name
    ``name`` and the width ``d_model`` it must have."""
    x = finite_array(x, name, "(..., L, d_model)", 2)
    if x.shape[-1] != d_model:
        raise ValueError(
            f"{name} {x.shape} does not fit a layer of width {width}={d_model}"
        )
    return x.astype(np.result_type(x.dtype, params_dtype(params)), copy=False)


def check_layer_norm(x, gain, bias, eps):
    """The contract of :func:`attnlib.layer_norm`; returns ``(x, gain, bias, eps,
    out_dtype)`` with ``x`` in the compute dtype."""
    x = finite_array(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., d) with d >= 1; got {x.shape}")
    eps = as_positive(eps, "eps")
    params = []
    for name, value in (("gain", gain), ("bias", bias)):
        if value is not None:
            value = finite_array(value, name)
            if value.shape != x.shape[-1:]:
                raise ValueError(
                    f"{name} must have shape ({x.shape[-1]},) to match x {x.shape}; "
                    f"got {value.shape}"
                )
        params.append(value)
    dtypes = [x.dtype] + [p.dtype for p in params if p is not None]
    out_dtype = np.result_type(*dtypes)
    work = compute_dtype(*dtypes)
    return x.astype(work, copy=False), *params, eps, out_dtype


def check_params(params, kind: type, init: str) -> None:
    """``TypeError`` naming ``params`` unless it is a ``kind`` (made by ``init``)."""
    if not isinstance(params, kind):
        raise TypeError(
            f"params must be {kind.__name__} (from attnlib.{init}); got "
            f"{type(params).__name__}"
        )


def check_activation(activation, activations) -> None:
    """``ValueError`` naming ``activation`` unless it is one of ``activations``."""
    if not isinstance(activation, str) or activation not in activations:
        raise ValueError(
            f"activation must be one of {sorted(activations)}; got {activation!r}"
        )


def check_feed_forward(x, W_1, b_1, W_2, b_2, activation, activations):
    """The contract of :func:`attnlib.feed_forward`; returns ``(x, W_1, b_1, W_2, b_2,
    out_dtype)``, the arrays finite and ``x``, ``W_1``, ``W_2`` in the compute dtype."""
    check_activation(activation, activations)
    x = finite_array(x, "x", "(..., d_model)", 1)
    W_1, W_2 = finite_array(W_1, "W_1"), finite_array(W_2, "W_2")
    if W_1.ndim != 2 or W_2.ndim != 2:
        raise ValueError(f"W_1 {W_1.shape} and W_2 {W_2.shape} must be matrices")
    if x.shape[-1] != W_1.shape[0]:
        raise ValueError(
            f"x {x.shape} does not fit W_1 {W_1.shape}: its last axis must equal "
            "the rows of W_1 (d_model)"
        )
    if W_1.shape[1] != W_2.shape[0]:
        raise ValueError(f"W_1 {W_1.shape} and W_2 {W_2.shape} must agree on d_ff")
    b_1 = None if b_1 is None else finite_array(b_1, "b_1")
    b_2 = None if b_2 is None else finite_array(b_2, "b_2")
    for name, b, W_name, W in (("b_1", b_1, "W_1", W_1), ("b_2", b_2, "W_2", W_2)):
        if b is not None and b.shape != W.shape[1:]:
            raise ValueError(
                f"{name} {b.shape} does not fit {W_name} {W.shape}: a bias has one "
                f"number per column of its matrix, shape {W.shape[1:]}"
            )
    out_dtype = np.result_type(*(a for a in (x, W_1, b_1, W_2, b_2) if a is not None))
    work = compute_dtype(out_dtype)
    x, W_1, W_2 = (a.astype(work, copy=False) for a in (x, W_1, W_2))
    return x, W_1, b_1, W_2, b_2, out_dtype
