"""Checker for the exercise of the chapter on induction heads: an induction score.

* :func:`check_induction_score`  the reader's ``fn(weights, half)`` -> one score per
  head, against :func:`book_support.experiments.induction.induction_scores`
"""

from __future__ import annotations

import numpy as np

from attnlib.core.softmax import softmax
from book_support.exercises import check_function, checker
from book_support.experiments.induction import InductionTask, induction_scores


def _reference(weights, half):
    return induction_scores([weights[None]], InductionTask(half=half))[0]


def _offset_score(offset, first):
    """Mean weight on key ``i - offset`` over queries ``first .. L - 1``."""

    def score(weights, half):
        L = weights.shape[-1]
        rows = np.arange(first(half), L)
        return weights[:, rows, rows - offset(half)].mean(axis=-1)

    return score


@checker("your induction score")
def check_induction_score(fn) -> bool:
    """Compare ``fn(weights, half)`` with the book's induction score.

    ``weights`` are one layer's attention weights for one sequence, shape (H, L, L),
    whose second half repeats the first (``half`` tokens, ``L = 2 * half - 1`` inputs);
    ``fn`` returns, for each head, the mean weight that the queries of the repeated half
    (positions ``half .. L - 1``) put on the position after their token's earlier
    occurrence (``t - half + 1``). Shape (H,).

    Returns
    -------
    bool; three slips are recognised: the earlier occurrence itself (``t - half``),
    the previous token (``t - 1``), and queries taken from the first half too.
    """
    rng = np.random.default_rng(4)
    cases = []
    for H, half in ((2, 4), (3, 6), (1, 8)):
        L = 2 * half - 1
        scores = rng.normal(size=(H, L, L)) * 2
        weights = softmax(scores, mask=np.tril(np.ones((L, L), bool)))  # (H, L, L)
        cases.append((f"{H} heads, half = {half}", (weights, half), None))
    return check_function(
        fn,
        _reference,
        cases,
        name="your induction score",
        atol=1e-9,
        slips=[
            (
                _offset_score(lambda h: h, lambda h: h),
                "that is the weight on the earlier occurrence of the same token "
                "(t - half), a 'duplicate-token' pattern; an induction head looks one "
                "further, at the token that followed it (t - half + 1).",
            ),
            (
                _offset_score(lambda h: 1, lambda h: h),
                "that is the previous-token score (key t - 1).",
            ),
            (
                _offset_score(lambda h: h - 1, lambda h: h - 1),
                "only queries in the repeated half count (t >= half): before it, no "
                "token has occurred earlier.",
            ),
        ],
    )
