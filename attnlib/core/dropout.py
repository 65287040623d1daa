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

from attnlib.core._validation import (
    as_bool_mask,
    as_real_number,
    check_mask_shape,
    compute_dtype,
    finite_array,
    to_dtype,
)

__all__ = ["dropout_keep_mask", "drop_weights", "as_dropout_rate"]


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
        As :func:`check_dropout`: the message names
        ``dropout``, ``rng`` or ``keep``.

    Source: Srivastava et al. (2014), section 4.
    """
    p, source = check_dropout(dropout, rng, keep, shape)
    if source is None or isinstance(source, np.ndarray):
        return source  # no dropout, or a keep-mask given
    return source.random(shape) >= p  # (..., L_q, L_k)


def drop_weights(weights, keep, dropout: float) -> np.ndarray:
    """Inverted dropout: ``weights * keep / (1 - p)``, in the dtype of ``weights``.

    ``keep`` is a boolean array that broadcasts to ``weights`` (from
    :func:`dropout_keep_mask`) or None, in which case ``weights`` is returned as it is.
    The backward pass multiplies its gradient by the same factor, where kept.
    float16 weights are scaled in float32; a kept weight that the factor lifts beyond
    the dtype (``p`` near 1) raises ``OverflowError``, never an inf and a warning.

    Raises ``TypeError`` naming ``weights`` (not real) or ``keep`` (not boolean), and
    ``ValueError`` naming ``weights`` (NaN or inf), ``keep`` (does not broadcast) or
    ``dropout`` (outside [0, 1)), whether or not ``keep`` is given.
    """
    p = as_dropout_rate(dropout)
    weights = finite_array(weights, "weights")
    if keep is not None:
        keep = as_bool_mask(keep, "keep", "True = kept")
        check_mask_shape(keep, weights.shape, "weights", "keep")
    return _drop(weights, keep, p)


def _drop(weights: np.ndarray, keep, p: float) -> np.ndarray:
    """:func:`drop_weights` of arrays the caller has checked (attention and the
    backward passes, whose keep-mask comes from :func:`dropout_keep_mask`)."""
    if keep is None:
        return weights
    work = compute_dtype(weights.dtype)
    factor = work.type(1.0 / (1.0 - p))
    kept = weights.astype(work, copy=False) * factor
    dropped = np.where(keep, kept, work.type(0))  # (..., L_q, L_k)
    return to_dtype(dropped, weights.dtype, "dropped attention weights")


# --- the arguments' checks ------------------------------------------------------


def as_dropout_rate(dropout, name: str = "dropout") -> float:
    """The probability ``p`` of dropping an attention weight: a real number in [0, 1).

    ``True`` is not a rate (``TypeError``, as for any non-number); NaN, inf, a negative
    number, 1 or more, or an array raise ``ValueError``. Every message names ``name``.
    """
    p = as_real_number(dropout, name)
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
