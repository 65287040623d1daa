"""The exact answer to the adversarial-attention search, for a two-class model.

:func:`adversarial_attention.search_alternative_attention` is a
local search (Adam from a few starts); when it fails, or stops short, nothing says how
far the best alternative really is. For a model with two classes the question has an
exact answer, computed here by enumeration, so that a search can be checked against it.

Source: the problem of Jain & Wallace (2019), "Attention is not Explanation", NAACL,
section 4.2.
"""

from __future__ import annotations

import numpy as np
from adversarial_attention import (
    AlternativeAttention,
    _readout,
    _result,
    jensen_shannon,
)

from attnlib.data.context_task import ContextBatch
from book_support.experiments.context_classifier import ContextClassifier

__all__ = ["exact_alternative_attention"]


def exact_alternative_attention(
    model: ContextClassifier,
    batch: ContextBatch,
    index: int = 0,
    *,
    epsilon: float = 0.01,
) -> AlternativeAttention:
    """The attention row furthest from the model's (JSD) that keeps a two-class
    prediction within ``epsilon``: the global maximum the search looks for.

    With two classes the prediction depends on ``a`` only through the logit margin
    ``g(a) = sum_j a_j s_j`` (``s_j`` the margin with all weight on token ``j``), and
    ``TVD(p(a), p0) <= epsilon`` holds exactly when ``g(a)`` lies in an interval
    ``[lo, hi]``. The feasible rows form a polytope (the simplex cut by two
    hyperplanes), and ``JSD(a, a0)`` is convex in ``a``, so its maximum lies at a
    vertex of that polytope: a token ``j`` with ``s_j`` in ``[lo, hi]``, or the point
    of an edge between two tokens where ``g`` crosses ``lo`` or ``hi`` (taken a
    step inside that moves the prediction by at most 1e-3 ``epsilon``, so that the
    point passes the test for any ``epsilon`` down to about 1e-12). All of them are
    enumerated, ``O(n^2)`` for ``n`` tokens.

    Returns
    -------
    AlternativeAttention. For ``epsilon > 0`` and two or more tokens ``feasible`` is
    always True: ``a0`` passes with a margin of ``epsilon`` to spare, so rows near it
    pass as well. Only ``jsd``, how far the furthest such row lies, is informative.

    Raises
    ------
    ValueError
        If the model does not have two classes, ``epsilon <= 0`` or ``index`` is out
        of range.

    Source: the problem of Jain & Wallace (2019), section 4.2; convexity of the KL
    divergence, hence of JSD (Cover & Thomas, *Elements of Information Theory*, 2nd
    ed., Theorem 2.7.2), and the maximum of a convex function over a polytope at a
    vertex.
    """
    classes = model.W_out.shape[1]
    if classes != 2:
        raise ValueError(
            f"the exact maximum needs a model with 2 classes; got {classes} "
            "(model.W_out's columns)"
        )
    if not epsilon > 0:
        raise ValueError(f"need epsilon > 0; got {epsilon}")
    readout, a0 = _readout(model, batch, index)  # (n, 2), (n,)
    logits0 = a0 @ readout + model.b_out
    win = int(np.argmax(logits0))
    s = readout[:, win] - readout[:, 1 - win] + model.b_out[win] - model.b_out[1 - win]
    lose0 = _losing(float(a0 @ s))  # the losing class's probability
    lo = (
        np.log((1 - lose0 - epsilon) / (lose0 + epsilon))
        if lose0 + epsilon < 1
        else -np.inf
    )
    hi = (
        np.log((1 - lose0 + epsilon) / (lose0 - epsilon)) if lose0 > epsilon else np.inf
    )
    n = a0.size
    eye = np.eye(n)
    candidates = [eye[j] for j in range(n) if lo <= s[j] <= hi]
    for c, inward in ((lo, 1.0), (hi, -1.0)):
        if not np.isfinite(c):
            continue
        c = c + inward * _inward_step(c, epsilon)
        for i in range(n):
            for j in range(n):
                if s[i] < c < s[j]:
                    t = (c - s[i]) / (s[j] - s[i])
                    candidates.append((1 - t) * eye[i] + t * eye[j])
    # two classes: TVD = |change of the losing probability|, computed from the margin
    # (1 - p_win would lose the digits of a tiny epsilon to rounding)
    kept = [a for a in candidates if abs(_losing(a @ s) - lose0) <= epsilon]
    best = max(kept, key=lambda a: float(jensen_shannon(a, a0)), default=a0)
    return _result(model, batch, index, a0, best, epsilon)


def _losing(margin: float) -> float:
    """The losing class's probability ``1 / (1 + e^g)`` for a logit margin ``g``."""
    return float(np.exp(-np.logaddexp(0.0, margin)))


def _inward_step(c: float, epsilon: float) -> float:
    """A step of the margin, taken inside a bound ``c``, that changes the losing
    probability (slope ``p (1 - p)`` at ``c``) by at most ``1e-3 * epsilon``."""
    p = _losing(c)
    return min(1e-9, 1e-3 * epsilon / max(p * (1.0 - p), 1e-300))
