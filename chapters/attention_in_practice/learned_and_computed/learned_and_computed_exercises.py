"""Checkers for the exercises of the chapter "What is learned, what is computed".

* :func:`check_learned_or_computed`  sort quantities into learned parameters and
                                     computed results
* :func:`check_score_gradient`       a softmax backward pass worked out by hand
* :func:`check_softmax_jacobian`     the reader's own function for ``diag(p) - p p^T``

Expected answers come from :mod:`attnlib.core.backward` (the softmax derivative) and
from the model description in :mod:`book_support.experiments.context_classifier`. Every
checker takes ``show_answer=True`` to print the expected answer after the diagnosis (see
:mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.backward import softmax_backward
from attnlib.core.softmax import softmax
from book_support.exercises import (
    WrongKind,
    as_floats,
    as_word,
    check_close,
    checker,
    fmt,
    require_function,
    returned_floats,
    show_answer,
    shown,
    try_reader,
)

#: The quantities of the chapter's classifier and whether each is learned or computed.
LEARNED_OR_COMPUTED = {
    "W_Q": "learned",
    "W_K": "learned",
    "W_V": "learned",
    "W_out": "learned",
    "b_out": "learned",
    "scores": "computed",
    "attention weights": "computed",
    "attention output": "computed",
    "0.6652": "computed",
}

_WHY = {
    "learned": (
        "it is a parameter: training adjusts it, and it stays fixed while "
        "the model reads."
    ),
    "computed": (
        "it is worked out afresh from the input each time; no training step stores it."
    ),
}


@checker("'learned' or 'computed' for every quantity")
def check_learned_or_computed(answers) -> bool:
    """Check a dict mapping quantity names to ``"learned"`` or ``"computed"``.

    Parameters
    ----------
    answers : dict
        Keys among :data:`LEARNED_OR_COMPUTED` (all of them are required); values the
        strings ``"learned"`` or ``"computed"`` (case and surrounding spaces ignored).

    Returns
    -------
    bool: True when every quantity is sorted correctly; otherwise each mistake is
    printed with the reason.

    An answer that is not a dict gets a sentence saying what to give.
    """
    if not isinstance(answers, dict):
        raise WrongKind(
            "give a dict such as {'W_Q': 'learned', ...}; got a "
            f"{type(answers).__name__}."
        )
    missing = [k for k in LEARNED_OR_COMPUTED if k not in answers]
    if missing:
        print(f"Not yet: please sort every quantity; missing {missing}.")
        return False
    wrong = []
    for name, want in LEARNED_OR_COMPUTED.items():
        got = as_word(answers[name])
        if got not in ("learned", "computed"):
            print(
                f"Not yet: the answer for {name!r} must be 'learned' or 'computed'; "
                f"got {shown(answers[name])}."
            )
            return False
        if got != want:
            wrong.append(name)
    if wrong:
        print(
            f"Not yet: {len(wrong)} of {len(LEARNED_OR_COMPUTED)} are sorted wrong: "
            f"{', '.join(repr(w) for w in wrong)}. Ask of each: does training "
            "store it, or is "
            "it worked out afresh from every input?"
        )
        if show_answer():
            for name in wrong:
                print(
                    f"Expected: {name!r} is {LEARNED_OR_COMPUTED[name]}: "
                    f"{_WHY[LEARNED_OR_COMPUTED[name]]}"
                )
        return False
    print(f"Correct: all {len(LEARNED_OR_COMPUTED)} quantities are sorted right.")
    return True


@checker("your three score gradients")
def check_score_gradient(answer, weights, upstream, *, atol: float = 1e-3) -> bool:
    """Check ``dLoss/dscores`` worked out by hand from softmax weights and
       ``dLoss/dweights``.

    Parameters
    ----------
    answer : array_like, shape (L,) -- the reader's gradient with respect to the scores
    weights : array_like, shape (L,) -- softmax weights ``p``
    upstream : array_like, shape (L,) -- ``g = dLoss/dp``
    atol : float -- absolute tolerance (default 1e-3, for hand-rounded answers)

    Returns
    -------
    bool. When wrong, a hint is printed if the answer does not sum to zero (every
    softmax score gradient does) or if it equals the upstream gradient (the Jacobian was
    forgotten). A right answer whose entries sum to a small remainder (worked from the
    four-decimal weights, say) is told that the remainder is rounding.
    """
    p = np.asarray(weights, dtype=float)
    g = np.asarray(upstream, dtype=float)
    expected = softmax_backward(p, g)
    got = as_floats(answer, "your score gradient", shape=expected.shape)
    hint = (
        (
            f"your entries sum to {got.sum():.4f}; a softmax score gradient "
            "always sums to 0."
        )
        if abs(got.sum()) > 10 * atol
        else None
    )
    ok = check_close(
        got,
        expected,
        name="your score gradient",
        atol=atol,
        hint=hint,
        slips=(
            (
                g,
                (
                    "that is dLoss/dweights itself; multiply by the softmax Jacobian "
                    "diag(p) - p p^T."
                ),
            ),
            (
                p * g,
                "you forgot to subtract <p, g> = sum(p * g) before multiplying by p.",
            ),
        ),
    )
    if ok and abs(got.sum()) > 1e-9:
        _explain_rounded_sum(got, p, g)
    return ok


def _explain_rounded_sum(got: np.ndarray, p: np.ndarray, g: np.ndarray) -> None:
    """A right gradient whose entries, as given, do not sum to exactly 0: say that the
    remainder is rounding. The four-decimal weights the exercise prints are named only
    when the sum is the one a gradient worked from them leaves."""
    rp = np.round(p, 4)
    from_printed = float(np.sum(rp * (g - rp @ g)))
    why = (
        f"the weights rounded to four decimals sum to {rp.sum():.4f}, not 1"
        if abs(rp.sum() - 1.0) > 1e-9 and abs(got.sum() - from_printed) < 1e-6
        else "your entries are rounded"
    )
    print(
        f"Your entries, as you gave them, sum to {got.sum():.1e} rather than exactly "
        f"0. That remainder is rounding, not a mistake: {why}. In exact arithmetic "
        "(or from the weights in full precision) the sum is 0."
    )


def _reference_jacobian(p: np.ndarray) -> np.ndarray:
    """Column j of the Jacobian is the softmax backward pass of the unit vector e_j."""
    return np.stack(
        [softmax_backward(p, np.eye(len(p))[j]) for j in range(len(p))], axis=1
    )


@checker("your Jacobian function")
def check_softmax_jacobian(fn) -> bool:
    """Try the reader's ``fn(a)`` (returning the (L, L) softmax Jacobian) on several
       rows.

    The expected matrix is built from :func:`attnlib.core.backward.softmax_backward`,
    one column per unit vector, so it does not reuse the formula the reader is asked to
    write.

    Returns
    -------
    bool: True when ``fn`` matches on every test row within 1e-9.
    """
    require_function(fn)
    rows = [
        softmax(np.array([2.0, 1.0, 0.0])),
        softmax(np.array([2.0, 4.0, 1.0])),
        np.array([1.0, 0.0]),
        softmax(np.array([0.3, -1.2, 2.5, 0.0])),
    ]
    for a in rows:
        want = _reference_jacobian(a)
        where = f" for a = {np.round(a, 4).tolist()}"
        ok, value = try_reader(lambda: fn(a.copy()), label="your function", where=where)
        if not ok:
            return False
        got = returned_floats(value, "your function", where)
        if got.shape != want.shape:
            print(
                f"Not yet: for a of length {len(a)} the Jacobian has shape "
                f"{want.shape}; "
                f"yours has {got.shape}."
            )
            return False
        if not np.allclose(got, want, atol=1e-9):
            hint = ""
            if np.allclose(got, np.diag(a), atol=1e-9):
                hint = " Hint: you have diag(a); subtract the outer product a^T a."
            elif np.allclose(got, -np.outer(a, a), atol=1e-9):
                hint = " Hint: you have -a^T a; add diag(a)."
            print(f"Not yet: wrong result for a = {np.round(a, 4).tolist()}.{hint}")
            print(fmt(got, "  you returned: "))
            if show_answer():
                print(fmt(want, "  Expected:     "))
            return False
    print(f"Correct: your Jacobian matches on all {len(rows)} test rows.")
    return True
