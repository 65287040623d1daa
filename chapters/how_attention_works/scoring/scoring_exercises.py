"""Checkers for the exercises of the chapter "Scoring".

Each function prints a verdict and returns True or False; ``show_answer=True`` prints
the expected answer after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import math

import numpy as np

from attnlib.core.scores import (
    additive_scores,
    dot_product_scores,
    scaled_dot_product_scores,
)
from book_support.exercises import check_close, check_function, checker


@checker("your dot product of q and k (one number)")
def check_dot_product(answer, q, k) -> bool:
    """Check a dot product ``q · k`` worked by hand (q, k: shape (d,))."""
    q = np.asarray(q, dtype=float)
    k = np.asarray(k, dtype=float)
    if q.shape != k.shape or q.ndim != 1:
        raise ValueError(
            f"q {q.shape} and k {k.shape} must be vectors of the same length"
        )
    expected = sum(float(a) * float(b) for a, b in zip(q, k))  # written out, no attnlib
    return check_close(
        answer,
        expected,
        name="the dot product",
        slips=(
            (
                float(np.sum(q + k)),
                "that is the sum of all coordinates; multiply matching "
                "coordinates, then add the products.",
            ),
            (
                float(np.sum(np.abs(q * k))),
                "mind the signs: a negative coordinate times a positive "
                "one gives a negative product.",
            ),
        ),
    )


@checker("your scaled score (one number)")
def check_scaled_score(answer, raw_score: float, d_k: int) -> bool:
    """Check ``raw_score / sqrt(d_k)`` worked by hand."""
    if d_k < 1:
        raise ValueError(f"d_k must be a positive integer; got {d_k}")
    return check_close(
        answer,
        raw_score / math.sqrt(d_k),
        name="the scaled score",
        slips=(
            (raw_score, "that is the raw score, not scaled: divide it by sqrt(d_k)."),
            (raw_score / d_k, "you divided by d_k; the scale is sqrt(d_k)."),
        ),
    )


@checker("your standard deviation of the raw scores (one number)")
def check_raw_score_std(answer, d_k: int, raw_score: float | None = None) -> bool:
    """Check the standard deviation of raw scores ``q . k`` under the chapter's
    assumptions (components independent, mean 0, variance 1): ``sqrt(d_k)``.

    Diagnosed slips: the variance ``d_k`` itself, the standard deviation 1 of the
    scaled scores, the square root taken twice, and (when the exercise's
    ``raw_score`` is given) the scaled score ``raw_score / sqrt(d_k)``.
    """
    if d_k < 1:
        raise ValueError(f"d_k must be a positive integer; got {d_k}")
    variance = float(d_k)  # d_k products q_i k_i of variance 1 each
    slips = [
        (
            variance,
            f"that is the variance, d_k = {d_k}; the standard deviation is its "
            "square root.",
        ),
        (
            1.0,
            "that is the standard deviation of the scaled scores (divided by "
            "sqrt(d_k)); the question asks about the raw scores q . k.",
        ),
        (
            math.sqrt(math.sqrt(d_k)),
            "you took the square root twice; the variance is d_k, so the standard "
            "deviation is sqrt(d_k).",
        ),
    ]
    if raw_score is not None:
        slips.append(
            (
                raw_score / math.sqrt(d_k),
                "that is the scaled score; the standard deviation of raw scores "
                "depends on d_k alone, not on one score.",
            )
        )
    # where two readings coincide (d_k = 1), the right answer wins
    slips = [(v, h) for v, h in slips if abs(v - math.sqrt(variance)) > 1e-9]
    return check_close(
        answer,
        math.sqrt(variance),
        name="the standard deviation",
        slips=slips,
        hint="add up the variances of the d_k products q_i k_i (each 1), then take "
        "the square root.",
    )


@checker("your score function")
def check_score_function(fn, kind: str = "scaled") -> bool:
    """Check the reader's ``fn(Q, K) -> scores`` (shape (L_q, L_k)) against attnlib.

    Parameters
    ----------
    fn : callable taking queries (L_q, d_k) and keys (L_k, d_k)
    kind : "dot" or "scaled", which attnlib function to compare with

    Raises
    ------
    ValueError if ``kind`` is not one of the two.
    """
    references = {"dot": dot_product_scores, "scaled": scaled_dot_product_scores}
    if kind not in references:
        raise ValueError(f"kind must be 'dot' or 'scaled'; got {kind!r}")
    rng = np.random.default_rng(4)
    cases = [(np.array([[1.0, 2.0]]), np.array([[3.0, 4.0]]))]
    for lq, lk, d in ((2, 3, 4), (5, 4, 16)):
        cases.append((rng.normal(size=(lq, d)), rng.normal(size=(lk, d))))
    slips = ()
    if kind == "scaled":
        slips = (
            (
                dot_product_scores,
                "these are unscaled dot products: divide Q @ K.T by "
                "sqrt(d_k) = sqrt(Q.shape[-1]).",
            ),
            (
                lambda Q, K: Q @ K.T / Q.shape[-1],
                "you divided by d_k; the scale is sqrt(d_k).",
            ),
        )
    return check_function(fn, references[kind], cases, slips=slips)


@checker("your additive score (one number)")
def check_additive_score(answer, q, k, W_q, W_k, w_v) -> bool:
    """Check one additive score ``w_v · tanh(q W_q + k W_k)`` worked by hand."""
    expected = additive_scores(
        np.asarray(q, dtype=float)[None, :],
        np.asarray(k, dtype=float)[None, :],
        W_q,
        W_k,
        w_v,
    )[0, 0]
    return check_close(answer, expected, name="the additive score")
