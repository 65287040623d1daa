"""Layer normalisation: each position's vector rescaled to mean 0 and variance 1, then scaled
and shifted by learned numbers.

``LayerNorm(x) = (x - mean(x)) / sqrt(var(x) + eps) * gain + bias``, the mean and the
(population) variance taken over the features of one position, never across positions or
batch elements. In a Transformer layer it follows each residual connection (the
"post-LN" layout of Vaswani et al. 2017 and BERT) or precedes each sub-layer ("pre-LN").

Source: Ba, Kiros & Hinton (2016), section 3, equation (4); Vaswani et al. (2017),
section 3.1.
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import as_float_array, compute_dtype, to_dtype

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
    numpy.ndarray, shape (..., d), in the dtype of ``x`` (integers give float64), computed in
    float32 (float16/float32 input) or float64. Without gain and bias every row has mean 0 and
    variance ``var / (var + eps)``, i.e. 1 up to ``eps``.

    Raises
    ------
    ValueError
        If ``x`` has no axis or an empty last axis, ``gain`` or ``bias`` does not have shape
        ``(d,)`` (both shapes named), ``eps`` is not a positive finite number, or an input
        holds NaN or inf.
    TypeError
        If an input is not a real array.

    Source: Ba, Kiros & Hinton (2016), section 3, equation (4) (statistics over the
    hidden units of one position).
    """
    x = as_float_array(x, "x")
    if x.ndim == 0 or x.shape[-1] == 0:
        raise ValueError(f"x must have shape (..., d) with d >= 1; got {x.shape}")
    d = x.shape[-1]
    eps = float(eps)
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a positive finite number; got {eps}")
    params = []
    for name, value in (("gain", gain), ("bias", bias)):
        if value is not None:
            value = as_float_array(value, name)
            if value.shape != (d,):
                raise ValueError(
                    f"{name} must have shape ({d},) to match x {x.shape}; "
                    f"got {value.shape}"
                )
            if not np.isfinite(value).all():
                raise ValueError(f"{name} holds NaN or inf")
        params.append(value)
    if not np.isfinite(x).all():
        raise ValueError(f"x {x.shape} holds NaN or inf")
    out_dtype = x.dtype
    work = compute_dtype(out_dtype, *(p.dtype for p in params if p is not None))
    xw = x.astype(work, copy=False)
    mean = xw.mean(axis=-1, keepdims=True)  # (..., 1)
    centred = xw - mean  # (..., d)
    var = (centred * centred).mean(
        axis=-1, keepdims=True
    )  # (..., 1), population variance
    out = centred / np.sqrt(var + eps)  # (..., d)
    gain, bias = params
    if gain is not None:
        out = out * gain
    if bias is not None:
        out = out + bias
    return to_dtype(
        out,
        np.result_type(out_dtype, *(p.dtype for p in params if p is not None)),
        "layer-norm outputs",
    )
