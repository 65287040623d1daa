"""Layer normalisation: each position's vector rescaled to mean 0 and variance 1, then
scaled and shifted by learned numbers.

``LayerNorm(x) = (x - mean(x)) / sqrt(var(x) + eps) * gain + bias``, the mean and the
(population) variance taken over the features of one position, never across positions or
batch elements. In a Transformer layer it follows each residual connection (the
"post-LN" layout of Vaswani et al. 2017 and BERT) or precedes each sub-layer ("pre-LN").

RMS normalisation (:func:`rms_norm`, LLaMA's choice) drops the centring and the bias:
``RMSNorm(x) = x / sqrt(mean(x^2) + eps) * gain``.

Source: Ba, Kiros & Hinton (2016), section 3, equation (4); Vaswani et al. (2017),
section 3.1; Zhang & Sennrich (2019), equation (4), for RMSNorm.
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import to_dtype
from attnlib.layers._validation import check_layer_norm, fits

#: PyTorch's default; BERT-style checkpoints such as all-MiniLM-L6-v2 use 1e-12.
DEFAULT_EPS = 1e-5


def layer_norm(x, gain=None, bias=None, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Normalise every row of ``x`` over its last axis, then scale by ``gain`` and add
       ``bias``.

    Parameters
    ----------
    x : array_like, shape (..., d), floats or integers
    gain : array_like, shape (d,), optional (default: ones)
    bias : array_like, shape (d,), optional (default: zeros)
    eps : float > 0, added to the variance (default 1e-5)

    Returns
    -------
    numpy.ndarray, shape (..., d), in the dtype of ``x`` (integers give float64),
    computed in float32 (float16/float32 input) or float64. Without gain and bias every
    row has mean 0 and variance ``var / (var + eps)``, i.e. 1 up to ``eps``.

    Raises
    ------
    ValueError
        If ``x`` has no axis or an empty last axis, ``gain`` or ``bias`` does not have
        shape ``(d,)`` (both shapes named), ``eps`` is not a positive finite number, or
        an input holds NaN or inf.
    TypeError
        If an input is not a real array, or ``eps`` is not a real number.
    OverflowError
        If ``gain`` or ``bias`` lift an output beyond the largest number of the dtype.
        Large inputs themselves are fine: float32 ``[1e20, -1e20]`` gives ``[1, -1]``
        (rows that could overflow are rescaled by a power of 2 first, which is exact).

    Source: Ba, Kiros & Hinton (2016), section 3, equation (4) (statistics over the
    hidden units of one position).
    """
    x, gain, bias, eps, out_dtype = check_layer_norm(x, gain, bias, eps)  # contract
    x, eps = _rescaled(x, eps)  # exact powers of 2, so that no square overflows
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = x - mean  # (..., d)
    var = (centred * centred).mean(axis=-1, keepdims=True)  # (..., 1), population
    out = centred / np.sqrt(var + eps)  # (..., d)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        out = out if gain is None else out * gain
        out = out if bias is None else out + bias
    return to_dtype(fits(out, "layer-norm outputs"), out_dtype, "layer-norm outputs")


def rms_norm(x, gain=None, eps: float = DEFAULT_EPS) -> np.ndarray:
    """``x / sqrt(mean(x^2) + eps) * gain`` over the last axis: layer normalisation
    without the mean and the bias.

    Parameters: ``x`` (..., d), floats or integers; ``gain`` (d,), optional (default
    ones); ``eps`` > 0 (default 1e-5). Returns: numpy.ndarray of shape (..., d), in
    the dtype of ``x`` (integers give float64), computed as :func:`layer_norm` is.

    Raises
    ------
    ValueError if ``x`` has no features, ``gain`` is not of shape (d,) (shapes named),
    ``eps`` is not positive or an input holds NaN or inf; TypeError for non-real input;
    OverflowError if ``gain`` lifts an output beyond the dtype.

    Source: Zhang & Sennrich (2019), "Root Mean Square Layer Normalization", eq. (4).
    """
    x, gain, _, eps, out_dtype = check_layer_norm(x, gain, None, eps)  # contract
    x, eps = _rescaled(x, eps)  # exact powers of 2, so that no square overflows
    ms = (x * x).mean(axis=-1, keepdims=True)  # (..., 1), the mean square
    out = x / np.sqrt(ms + eps)  # (..., d)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        out = out if gain is None else out * gain
    return to_dtype(fits(out, "rms-norm outputs"), out_dtype, "rms-norm outputs")


def _rescaled(x: np.ndarray, eps: float):
    """Rows of ``x`` so large that ``(x - mean)^2`` could overflow, divided by a power
    of 2 (exact), and ``eps`` divided by its square for those rows.

    Layer normalisation does not change when a row and ``sqrt(eps)`` are scaled
    together, and a power of 2 changes no digit, so the result is the same number; rows
    that cannot overflow (all usual inputs) are left exactly as they are. Returns ``(x,
    eps)``, ``eps`` a float or an array of shape ``(..., 1)``.
    """
    top = np.max(np.abs(x), axis=-1, keepdims=True)  # (..., 1)
    safe = np.sqrt(np.finfo(x.dtype).max / (4.0 * x.shape[-1]))  # |x - mean| < 2 top
    if not (top > safe).any():
        return x, eps
    shift = np.where(top > safe, np.frexp(top)[1], 0)  # top < 2^shift
    return np.ldexp(x, -shift), np.ldexp(x.dtype.type(eps), -2 * shift)
