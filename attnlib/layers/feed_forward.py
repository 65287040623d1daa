"""The position-wise feed-forward network of a Transformer layer, and its activations.

``FFN(x) = act(x W_1 + b_1) W_2 + b_2``, applied to every position separately and
identically (the same ``W_1``, ``W_2`` for all positions; positions never mix here, only
in attention). The inner width ``d_ff`` is usually four times the model width (2048 for
512 in Vaswani et al.; 1536 for 384 in all-MiniLM-L6-v2). Vaswani et al. use ReLU; BERT
and its descendants use GELU.

The gated variant of LLaMA, :func:`swiglu`, multiplies two projections, one through
SiLU: ``SwiGLU(x) = (SiLU(x W_1) * x W_3) W_2``, without biases.

Source: Vaswani et al. (2017), section 3.3, equation (2); Hendrycks & Gimpel (2016) for
GELU; Shazeer (2020), "GLU Variants Improve Transformer", section 2, for SwiGLU.
"""

from __future__ import annotations

import sys

import numpy as np

from attnlib.core._validation import as_generator, as_width, to_dtype
from attnlib.layers._validation import check_feed_forward, finite_array, fits


def erf(x) -> np.ndarray:
    """The error function, elementwise (numpy has none).

    Parameters: ``x``, array_like of any shape (floats). Returns: numpy.ndarray of the
    same shape and float dtype (integers give float64), ``erf(x)`` with absolute error
    below 1.5e-7. Raises: ``TypeError`` naming ``x`` for non-real input, ``ValueError``
    for NaN or inf.

    Source: Abramowitz & Stegun (1964), formula 7.1.26.
    """
    return _erf(finite_array(x, "x"))


def _erf(x: np.ndarray) -> np.ndarray:
    """:func:`erf` of a checked float array."""
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (
        0.254829592
        + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    with np.errstate(over="ignore"):  # a * a = inf for |x| > 1e154: exp(-inf) = 0
        return s * (1.0 - poly * np.exp(-a * a))


def gelu(x) -> np.ndarray:
    """GELU with the normal CDF: ``x * (1 + erf(x / sqrt 2)) / 2``, elementwise.

    Parameters: ``x``, array_like of any shape. Returns: numpy.ndarray of the same shape
    and float dtype (integers give float64). Raises: ``TypeError`` for non-real input,
    ``ValueError`` for NaN or inf (each naming ``x``).

    Source: Hendrycks & Gimpel (2016), section 2 (the exact form, not the tanh
    approximation).
    """
    x = finite_array(x, "x")
    return (0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))).astype(x.dtype, copy=False)


def relu(x) -> np.ndarray:
    """``max(x, 0)``, elementwise: the activation of the original Transformer.

    Parameters: ``x``, array_like of any shape. Returns: numpy.ndarray of the same shape
    and float dtype. Raises: ``TypeError`` for non-real input, ``ValueError`` for NaN
    or inf (each naming ``x``).

    Source: Vaswani et al. (2017), section 3.3, equation (2).
    """
    x = finite_array(x, "x")
    return np.maximum(x, 0.0).astype(x.dtype, copy=False)


def sigmoid(x) -> np.ndarray:
    """``1 / (1 + exp(-x))``, elementwise, from ``exp(-|x|)`` so that nothing overflows.

    Parameters: ``x``, array_like of any shape. Returns: numpy.ndarray of that shape
    and float dtype (integers give float64), in [0, 1]. Raises: ``TypeError`` for
    non-real input, ``ValueError`` for NaN or inf (each naming ``x``).

    Source: the logistic function; Elfwing, Uchibe & Doya (2018), section 2.1.
    """
    return _sigmoid(finite_array(x, "x"))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """:func:`sigmoid` of a checked float array."""
    e = np.exp(-np.abs(x))  # in [0, 1]
    return np.where(x >= 0, 1.0, e) / (1.0 + e)


def silu(x) -> np.ndarray:
    """SiLU (Swish-1): ``x * sigmoid(x)``, elementwise.

    Parameters: ``x``, array_like of any shape. Returns: numpy.ndarray of the same shape
    and float dtype (integers give float64). Raises: ``TypeError`` for non-real input,
    ``ValueError`` for NaN or inf (each naming ``x``).

    Source: Elfwing, Uchibe & Doya (2018), section 2.1; Ramachandran et al. (2017).
    """
    x = finite_array(x, "x")
    return (x * _sigmoid(x)).astype(x.dtype, copy=False)


ACTIVATIONS = {"gelu": gelu, "relu": relu, "silu": silu}


def init_feed_forward(rng, d_model: int, d_ff: int):
    """Random float64 parameters ``(W_1, b_1, W_2, b_2)`` for :func:`feed_forward`.

    Matrices are Glorot-uniform, ``U(-a, a)`` with ``a = sqrt(6 / (n_in + n_out))``;
    biases 0.

    Parameters: ``rng``, a numpy Generator or int seed; ``d_model``, ``d_ff``: ints >=
    1. Returns: ``W_1`` (d_model, d_ff), ``b_1`` (d_ff,), ``W_2`` (d_ff, d_model),
    ``b_2`` (d_model,). Raises: ``TypeError`` for a width that is not an integer,
    ``ValueError`` for one below 1 (each named).

    Source: Glorot & Bengio (2010), equation (16); Vaswani et al. (2017), section 3.3.
    """
    d_model, d_ff = as_width(d_model, "d_model"), as_width(d_ff, "d_ff")
    rng = as_generator(rng)
    a_1 = np.sqrt(6.0 / (d_model + d_ff))
    W_1 = rng.uniform(-a_1, a_1, size=(d_model, d_ff))
    W_2 = rng.uniform(-a_1, a_1, size=(d_ff, d_model))
    return W_1, np.zeros(d_ff), W_2, np.zeros(d_model)


# Python in the book's pages (Pyodide) runs a numpy built without BLAS, whose matmul is
# a plain loop: there einsum computes the same product 2 to 9 times faster for a
# Transformer's matrices (measured under Node: (12, 384) @ (384, 1536) 21 ms against
# 2.6 ms), but up to 2 times slower for small ones (e.g. (2048, 16) @ (16, 16)).
# Elsewhere matmul calls BLAS and is the faster (4 to 8 times einsum's speed).
# einsum only in float32 and float64: in float16 it sums in float16 (ten times the
# error of matmul, which sums in float32).
_WITHOUT_BLAS = sys.platform == "emscripten"
# the entries of W from which einsum is about as fast there, or faster
_EINSUM_FROM = 64 * 64


def _einsum_product(a, b):
    return np.einsum("ri,io->ro", a, b)


def _product(a, b):
    """``a @ b`` for a of shape (rows, d_in) and b of shape (d_in, d_out)."""
    if (
        _WITHOUT_BLAS
        and b.size >= _EINSUM_FROM
        and np.result_type(a, b) in (np.float32, np.float64)
    ):
        return _einsum_product(a, b)
    return a @ b


def _affine(x, W, b):
    """``x @ W + b`` for x of shape (..., d_in), as one matrix product over all rows;
    ``OverflowError`` if a result does not fit the dtype (finite inputs assumed)."""
    flat = np.ascontiguousarray(x).reshape(-1, x.shape[-1])  # (rows, d_in)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        y = _product(flat, W)  # (rows, d_out): flat @ W
        if b is not None:
            y += b
    y = fits(y, "affine maps (x W + b)")
    return y.reshape(x.shape[:-1] + (W.shape[1],))  # (..., d_out)


def feed_forward(
    x, W_1, b_1, W_2, b_2, activation: str = "gelu", *, return_hidden: bool = False
):
    """The position-wise feed-forward network ``act(x W_1 + b_1) W_2 + b_2``.

    Parameters
    ----------
    x : array_like, shape (..., L, d_model)
        Any leading axes; only the last one is mixed.
    W_1 : array_like, shape (d_model, d_ff);  b_1 : shape (d_ff,) or None
    W_2 : array_like, shape (d_ff, d_model_out);  b_2 : shape (d_model_out,) or None
    activation : "gelu" (default, BERT) or "relu" (Vaswani et al.)
    return_hidden : bool, also return the activated inner layer ``act(x W_1 + b_1)``

    Returns
    -------
    numpy.ndarray, shape (..., L, d_model_out), in the inputs' common float dtype,
    computed in float32 (float16/float32) or float64; with ``return_hidden``, the pair
    ``(output, hidden)``, ``hidden`` of shape (..., L, d_ff) in the working dtype.

    Raises
    ------
    ValueError
        If a shape does not fit (the shapes are named), the activation is unknown, or an
        input holds NaN or inf.
    TypeError
        If an input is not a real array.
    OverflowError
        If a hidden or output number does not fit the compute or the result dtype.

    Source: Vaswani et al. (2017), section 3.3, equation (2); Hendrycks & Gimpel (2016).
    """
    x, W_1, b_1, W_2, b_2, out_dtype = check_feed_forward(
        x, W_1, b_1, W_2, b_2, activation, ACTIVATIONS
    )  # the contract: finite arrays, shapes that fit
    hidden = ACTIVATIONS[activation](_affine(x, W_1, b_1))  # (..., L, d_ff)
    out = _affine(hidden, W_2, b_2)  # (..., L, d_model_out)
    out = to_dtype(out, out_dtype, "feed-forward outputs")
    return (out, hidden) if return_hidden else out


def swiglu(x, W_1, W_3, W_2) -> np.ndarray:
    """The gated feed-forward network ``(SiLU(x W_1) * x W_3) W_2`` (no biases).

    Parameters: ``x`` (..., d_model); ``W_1``, ``W_3`` (d_model, d_ff), the gate and
    the value; ``W_2`` (d_ff, d_model_out). Returns: numpy.ndarray of shape (...,
    d_model_out) in the inputs' common float dtype.

    Raises
    ------
    ValueError if a shape does not fit (shapes named) or an input holds NaN or inf;
    TypeError for non-real input; OverflowError if a number does not fit the dtype.

    Source: Shazeer (2020), "GLU Variants Improve Transformer", equation (6) (FFN_SwiGLU
    with Swish_1); Touvron et al. (2023), section 2.2 (LLaMA).
    """
    x, W_1, _, W_2, _, out_dtype = check_feed_forward(
        x, W_1, None, W_2, None, "silu", ACTIVATIONS
    )  # the contract for x, W_1, W_2
    W_3 = finite_array(W_3, "W_3").astype(W_1.dtype, copy=False)
    if W_3.shape != W_1.shape:
        raise ValueError(f"W_3 {W_3.shape} must have the shape of W_1 {W_1.shape}")
    gate, value = _affine(x, W_1, None), _affine(x, W_3, None)  # (..., d_ff) each
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        hidden = fits(silu(gate) * value, "SwiGLU hidden units")  # (..., d_ff)
    out = _affine(hidden, W_2, None)  # (..., d_model_out)
    return to_dtype(out, out_dtype, "SwiGLU outputs")
