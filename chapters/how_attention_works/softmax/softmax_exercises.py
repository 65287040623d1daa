"""Checkers for the exercises of the chapter "Softmax: from scores to weights".

* :func:`check_weights`  a row of weights worked out by hand for given scores
* :func:`check_softmax`  the reader's own softmax function, tried on hard inputs

Every expected answer is computed with :func:`attnlib.softmax` (Vaswani et al. 2017,
section 3.2.1). Every checker takes ``show_answer=True`` to print the expected value
after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.softmax import softmax as _softmax
from book_support.exercises import as_floats, check_close, check_labelled_cases, checker

#: The inputs a home-made softmax must survive, in the order they are tried, with the
#: hint printed when the reader's function fails on them.
SOFTMAX_CASES = (
    ("the bank scores [2, 1, 0]", (np.array([2.0, 1.0, 0.0]),), None),
    ("the Machine/Learning/Rocks scores [2, 4, 1]", (np.array([2.0, 4.0, 1.0]),), None),
    ("negative scores [-3, -1, -7.5]", (np.array([-3.0, -1.0, -7.5]),), None),
    (
        "a single score [5]",
        (np.array([5.0]),),
        "one score alone must receive the whole weight 1.",
    ),
    (
        "large scores [1000, 999, 998]",
        (np.array([1000.0, 999.0, 998.0]),),
        (
            "exp(1000) overflows to inf in float64; subtract the largest score "
            "before exponentiating."
        ),
    ),
    (
        "very negative scores [-1000, -1001, -1002]",
        (np.array([-1000.0, -1001.0, -1002.0]),),
        (
            "exp(-1000) underflows to 0 and 0/0 is nan; subtracting the largest "
            "score fixes this too."
        ),
    ),
    (
        "the chapter's hard case [800, 1, 0]",
        (np.array([800.0, 1.0, 0.0]),),
        "after the shift every exponent must be <= 0, so that exp never overflows.",
    ),
    (
        "a 2-D array of shape (2, 3), one row per query",
        (np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]]),),
        "normalise each row on its own: sum over the last axis with keepdims=True.",
    ),
    (
        "a 2-D array of shape (3, 2) with axis=0",
        (np.array([[2.0, 1.0], [0.0, 3.0], [1.0, 1.0]]), 0),
        (
            "your function must accept an axis argument, softmax(x, axis=-1), "
            "and normalise along it."
        ),
    ),
)


def _min_shifted(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _unshifted(x, axis=-1):
    e = np.exp(np.asarray(x, dtype=float))
    return e / e.sum(axis=axis, keepdims=True)


def _whole_array(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max())
    return e / e.sum()


#: Typical slips of a home-made softmax and their diagnosis.
SOFTMAX_SLIPS = (
    (
        _min_shifted,
        "you subtract the minimum; subtract the maximum instead. After subtracting "
        "the minimum the largest exponent is (max - min), here 800, and exp(800) "
        "overflows to inf, so inf/inf gives nan.",
    ),
    (
        _unshifted,
        "the textbook formula exp(x) / sum(exp(x)) overflows or underflows here; "
        "subtract the largest score first (it does not change the weights).",
    ),
    (
        _whole_array,
        "you normalise over the whole array; each row (each slice along `axis`) "
        "needs its own maximum and its own total.",
    ),
)


@checker("your weights for the scores {scores}")
def check_weights(answer, scores, *, atol: float = 1e-3) -> bool:
    """Check a row of weights worked out by hand for ``scores``.

    Parameters
    ----------
    answer : array_like of float, shape (L,)
        The reader's weights, in the order of ``scores``.
    scores : array_like of float, shape (L,)
    atol : float
        Absolute tolerance (default 1e-3, for weights rounded to three or four
        decimals).
    show_answer : bool, keyword
        Print the expected weights after the diagnosis.

    Returns
    -------
    bool
        True when every weight is within ``atol`` of ``attnlib.softmax(scores)``. A
        wrong answer prints which weight is off, and a hint naming the likely slip:
        weights that do not sum to one, percentages, or the scores normalised without
        exponentiating.
    """
    s = np.asarray(scores, dtype=float)
    expected = _softmax(s)
    got = as_floats(answer, "your weights", shape=expected.shape)
    if np.allclose(got, expected, atol=atol):
        return check_close(got, expected, name="your weights", atol=atol)
    if np.all(s >= 0) and s.sum() > 0 and np.allclose(got, s / s.sum(), atol=atol):
        print(
            "Not yet: these are the scores divided by their total. Softmax "
            "exponentiates "
            "first: w_i = e^(s_i) / sum_j e^(s_j)."
        )
        return False
    total = (
        f"your weights sum to {got.sum():.4f}; softmax weights always sum to 1."
        if abs(got.sum() - 1.0) > 0.01
        else (
            "exponentiate each score, then divide each power by the total "
            "of the powers."
        )
    )
    slips = []
    if expected.size > 1 and not np.allclose(expected, expected[::-1], atol=atol):
        slips.append(
            (
                expected[::-1],
                "your weights are in the reverse order: the largest "
                "score gets the largest weight.",
            )
        )
    return check_close(
        got, expected, name="your weights", atol=atol, hint=total, slips=slips
    )


@checker("your softmax function")
def check_softmax(fn) -> bool:
    """Try the reader's ``fn(x, axis=-1)`` against :func:`attnlib.softmax` on hard
       inputs.

    The inputs (:data:`SOFTMAX_CASES`) include large and very negative scores, where the
    textbook formula overflows or divides 0 by 0, the chapter's hard case ``[800, 1,
    0]`` (where subtracting the minimum instead of the maximum overflows), and 2-D
    arrays normalised along an axis. Numpy's overflow warnings are silenced while the
    reader's function runs; the verdict says what went wrong instead.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` for 1-D and row-wise 2-D inputs, ``fn(x, axis)`` for the last case.
    show_answer : bool, keyword
        Print the expected weights of the failing case.

    Returns
    -------
    bool
        True when ``fn`` matches attnlib within 1e-6 on every input; otherwise the first
        failing input is printed with a diagnosis (:data:`SOFTMAX_SLIPS`) or a hint.
    """
    if not check_labelled_cases(
        fn, _softmax, SOFTMAX_CASES, name="your softmax", slips=SOFTMAX_SLIPS
    ):
        return False
    print(
        f"Correct: your softmax matches attnlib.softmax on all {len(SOFTMAX_CASES)} "
        "inputs, "
        "including large and very negative scores and axis=0."
    )
    return True
