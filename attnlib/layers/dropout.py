"""Dropout: during training, set a random fraction of a layer's numbers to zero.

Each entry is kept with probability ``1 - rate`` and set to 0 otherwise; the kept
entries are divided by ``1 - rate`` ("inverted" dropout), so the expected value of every
entry is unchanged and evaluation simply skips the step: there is nothing to rescale at
test time, and evaluation is exact and deterministic. A network trained this way cannot
rely on any single unit being present, which reduces overfitting.

In a Transformer, dropout acts on each sub-layer's output before it is added to the
residual stream (Vaswani et al. 2017, section 5.4) and, in GPT-style models, on the
attention weights after the softmax (the ``dropout`` argument of
:func:`attnlib.attention`).

Source: Srivastava et al. (2014), "Dropout: A Simple Way to Prevent Neural Networks from
Overfitting", sections 2 and 10 (the scaling by the keep probability); Vaswani et al.
(2017), section 5.4 ("residual dropout").
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import as_float_array

__all__ = ["check_rate", "dropout_mask", "dropout"]


def check_rate(rate) -> float:
    """``rate`` as a float in [0, 1); ``ValueError`` (naming it) otherwise."""
    try:
        rate = float(rate)
    except (TypeError, ValueError):
        raise TypeError(f"dropout rate must be a number; got {rate!r}") from None
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout rate must lie in [0, 1); got {rate}")
    return rate


def dropout_mask(rng, shape, rate: float, dtype=np.float64) -> np.ndarray:
    """The multiplier of inverted dropout: 0 with probability ``rate``, else
    ``1 / (1 - rate)``.

    Parameters
    ----------
    rng : numpy.random.Generator (the only source of randomness; seed it to repeat a
        draw exactly)
    shape : tuple, the shape of the array to drop from
    rate : float in [0, 1)
    dtype : the float dtype of the result

    Returns
    -------
    numpy.ndarray of ``shape`` and ``dtype``; its mean is 1 in expectation.
    """
    rate = check_rate(rate)
    keep = rng.random(shape) >= rate  # (shape), True with probability 1 - rate
    return keep.astype(dtype) / dtype(1.0 - rate) if rate else np.ones(shape, dtype)


def dropout(x, rate: float, rng, *, training: bool):
    """Inverted dropout of ``x``; returns ``(y, multiplier)``.

    Parameters
    ----------
    x : array_like of floats, any shape
    rate : float in [0, 1), the probability that an entry is dropped
    rng : numpy.random.Generator, used only when ``training`` and ``rate > 0``
    training : bool; when False (evaluation) ``y`` is ``x`` itself, exactly

    Returns
    -------
    y : numpy.ndarray, ``x * multiplier`` (``x`` unchanged in evaluation)
    multiplier : numpy.ndarray of the shape of ``x``, or None when nothing was dropped;
        the backward pass multiplies the upstream gradient by it

    Raises
    ------
    ValueError if ``rate`` is outside [0, 1); TypeError if ``x`` is not real.

    Source: Srivastava et al. (2014), section 2.
    """
    x = as_float_array(x, "x")
    rate = check_rate(rate)
    if not training or rate == 0.0:
        return x, None
    multiplier = dropout_mask(rng, x.shape, rate, x.dtype.type)
    return x * multiplier, multiplier
