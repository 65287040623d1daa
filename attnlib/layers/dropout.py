"""Residual dropout: during training, zero a random fraction of a sub-layer's output
before it is added to the residual stream.

Each entry is kept with probability ``1 - p`` and set to 0 otherwise; the kept entries
are divided by ``1 - p`` ("inverted" dropout), so the expected value of every entry is
unchanged and evaluation simply skips the step: nothing is rescaled at test time, and
evaluation is exact and deterministic. A network trained this way cannot rely on any
single unit being present, which reduces overfitting.

The keep-mask and the scaling are the attention core's own
(:mod:`attnlib.core.dropout`, which drops attention weights the same way): one draw
``rng.random(shape) >= p``, then ``x * keep / (1 - p)``. The backward pass applies the
same factor to the upstream gradient.

Source: Srivastava et al. (2014), "Dropout: A Simple Way to Prevent Neural Networks from
Overfitting", section 4; Vaswani et al. (2017), section 5.4 ("residual dropout": "to
the output of each sub-layer, before it is added to the sub-layer input").
"""

from __future__ import annotations

from attnlib.core._validation import finite_array
from attnlib.core.dropout import _drop, as_dropout_rate, dropout_keep_mask

__all__ = ["residual_dropout"]


def residual_dropout(x, p: float, rng, *, training: bool):
    """Inverted dropout of a sub-layer's output ``x``; returns ``(y, keep)``.

    Parameters
    ----------
    x : array_like of floats, any shape (integers give float64)
    p : float in [0, 1), the probability that an entry is dropped
    rng : numpy.random.Generator, drawn from only when ``training`` and ``p > 0``
    training : bool; when False (evaluation) ``y`` is ``x`` itself and nothing is drawn

    Returns
    -------
    y : numpy.ndarray, ``x * keep / (1 - p)`` (``x`` unchanged in evaluation)
    keep : numpy.ndarray of bool of the shape of ``x``, or None when nothing was
        dropped;
        the backward pass is ``drop_weights(dy, keep, p)``

    Raises
    ------
    TypeError, ValueError naming ``x`` (not real, NaN or inf) or ``p`` (outside
    [0, 1)), in evaluation too; as :func:`attnlib.core.dropout.dropout_keep_mask` for
    a missing ``rng`` or one that is not a Generator.

    Source: Srivastava et al. (2014), section 4; Vaswani et al. (2017), section 5.4.
    """
    x, p = finite_array(x, "x"), as_dropout_rate(p, "p")  # checked in evaluation too
    if not training:
        return x, None
    keep = dropout_keep_mask(p, rng, None, x.shape)  # None when p == 0
    return _drop(x, keep, p), keep
