"""Dropout on the attention weights, the inverted form.

During training each attention weight is kept with probability ``1 - p`` and set to 0
otherwise; the kept ones are divided by ``1 - p``, so that every weight keeps its
expected value::

    keep ~ Bernoulli(1 - p)                    (..., L_q, L_k), True = kept
    P~   = P * keep / (1 - p)                  E[P~] = P
    O    = P~ V                                (..., L_q, d_v)

The keep-mask is drawn as ``rng.random(shape) >= p``: one call of ``rng.random`` with
the weights' shape, so two generators in the same state draw the same mask. That is how
the backward pass can replay it (FlashAttention regenerates its mask from the random
state the same way); the mask can also be passed back explicitly (``keep=``).

Sources: Srivastava et al. (2014), "Dropout: a simple way to prevent neural networks
from overfitting", section 4 (scaling by the retention probability; here at training
time, the inverted form); Vaswani et al. (2017), section 5.4 (``P_drop = 0.1``; dropout
on the attention weights is in the authors' tensor2tensor implementation).
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import check_dropout

__all__ = ["dropout_keep_mask", "drop_weights"]


def dropout_keep_mask(dropout, rng=None, keep=None, shape: tuple = ()):
    """The keep-mask of attention dropout (True = kept), or None when nothing is
    dropped.

    Parameters
    ----------
    dropout : float in [0, 1), the probability ``p`` of dropping a weight
    rng : numpy.random.Generator, needed when ``p > 0`` and ``keep`` is not given
        The mask is ``rng.random(shape) >= p``: each entry kept with probability
        ``1 - p``, one call of ``rng.random``.
    keep : array_like of bool, optional
        A keep-mask drawn before (to replay a forward pass exactly); it must broadcast
        to ``shape``. Returned as given.
    shape : tuple, the attention weights' shape ``(..., L_q, L_k)``

    Returns
    -------
    numpy.ndarray of bool (``shape``, or the shape of ``keep``), or None if ``p = 0``.

    Raises
    ------
    TypeError, ValueError
        As :func:`attnlib.core._validation.check_dropout`: the message names
        ``dropout``, ``rng`` or ``keep``.

    Source: Srivastava et al. (2014), section 4.
    """
    p, source = check_dropout(dropout, rng, keep, shape)
    if source is None or isinstance(source, np.ndarray):
        return source  # no dropout, or a keep-mask given
    return source.random(shape) >= p  # (..., L_q, L_k)


def drop_weights(weights: np.ndarray, keep, dropout: float) -> np.ndarray:
    """Inverted dropout: ``weights * keep / (1 - p)``, in the dtype of ``weights``.

    ``keep`` is a boolean array that broadcasts to ``weights`` (from
    :func:`dropout_keep_mask`) or None, in which case ``weights`` is returned as it is.
    The backward pass multiplies its gradient by the same factor, where kept.
    """
    if keep is None:
        return weights
    factor = weights.dtype.type(1.0 / (1.0 - dropout))
    return np.where(keep, weights * factor, weights.dtype.type(0))  # (..., L_q, L_k)
