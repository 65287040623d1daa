"""Checkers for the exercises of the chapter "Softmax: from scores to weights".

* :func:`check_weights`  a row of weights worked out by hand for given scores
* :func:`check_softmax`  the reader's own softmax function, tried on hard inputs

Every expected answer is computed with :func:`attnlib.softmax`
(Vaswani et al. 2017, section 3.2.1).
"""
from __future__ import annotations

import numpy as np

from ..softmax import softmax as _softmax
from . import check_close, check_labelled_cases

#: The inputs a home-made softmax must survive, in the order they are tried, with the hint
#: printed when the reader's function fails on them.
SOFTMAX_CASES = (
    ("the bank scores", (np.array([2.0, 1.0, 0.0]),), None),
    ("the Machine/Learning/Rocks scores", (np.array([2.0, 4.0, 1.0]),), None),
    ("negative scores", (np.array([-3.0, -1.0, -7.5]),), None),
    ("a single score", (np.array([5.0]),), "one score alone must receive the whole weight 1."),
    ("large scores", (np.array([1000.0, 999.0, 998.0]),),
     "exp(1000) overflows to inf in float64; subtract the largest score before exponentiating."),
    ("very negative scores", (np.array([-1000.0, -1001.0, -1002.0]),),
     "exp(-1000) underflows to 0 and 0/0 is nan; subtracting the largest score fixes this too."),
    ("a 2-D array, one row per query", (np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]]),),
     "normalise each row on its own: sum over the last axis with keepdims=True."),
    ("a 2-D array with axis=0", (np.array([[2.0, 1.0], [0.0, 3.0], [1.0, 1.0]]), 0),
     "your function must accept an axis argument, softmax(x, axis=-1), and normalise along it."),
)


def check_weights(answer, scores, *, atol: float = 1e-3) -> bool:
    """Check a row of weights worked out by hand for ``scores``.

    Parameters
    ----------
    answer : array_like of float, shape (L,)
        The reader's weights, in the order of ``scores``.
    scores : array_like of float, shape (L,)
    atol : float
        Absolute tolerance (default 1e-3, for weights rounded to three or four decimals).

    Returns
    -------
    bool
        True when every weight is within ``atol`` of ``attnlib.softmax(scores)``. A wrong
        answer prints which weight is off, and a hint when the weights do not sum to one.
    """
    expected = _softmax(np.asarray(scores, dtype=float))
    ok = check_close(answer, expected, name="your weights", atol=atol)
    got = np.asarray(answer, dtype=float)
    if not ok and got.shape == expected.shape and abs(got.sum() - 1.0) > 0.01:
        print(f"Hint: your weights sum to {got.sum():.4f}; softmax weights always sum to 1.")
    return ok


def check_softmax(fn) -> bool:
    """Try the reader's ``fn(x, axis=-1)`` against :func:`attnlib.softmax` on hard inputs.

    The inputs (:data:`SOFTMAX_CASES`) include large and very negative scores, where the
    textbook formula overflows or divides 0 by 0, and 2-D arrays normalised along an axis.
    Numpy's overflow warnings are silenced while the reader's function runs; the verdict
    says what went wrong instead.

    Parameters
    ----------
    fn : callable
        ``fn(x)`` for 1-D and row-wise 2-D inputs, ``fn(x, axis)`` for the last case.

    Returns
    -------
    bool
        True when ``fn`` matches attnlib within 1e-6 on every input; otherwise the first
        failing input is printed with a hint.
    """
    if not callable(fn):
        raise TypeError(f"check_softmax expects a function; got {type(fn).__name__}")
    if not check_labelled_cases(fn, _softmax, SOFTMAX_CASES, name="your softmax"):
        return False
    print(f"Correct: your softmax matches attnlib.softmax on all {len(SOFTMAX_CASES)} inputs, "
          "including large and very negative scores and axis=0.")
    return True
