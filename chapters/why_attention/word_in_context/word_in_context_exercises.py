"""Checkers for the exercises of the chapter "Why attention".

Each function prints a verdict and returns True or False; ``show_answer=True`` prints
the expected answer after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.data.examples import BANK
from book_support.exercises import (
    WrongKind,
    as_floats,
    as_word,
    check_close,
    checker,
    show_answer,
    shown,
)

#: Situations for the exercise "self-attention or cross-attention?". In each, the
#: queries come from the first sequence named and the keys and values from the second.
ATTENTION_KIND_CASES = {
    "a": ("the sentence being read", "the same sentence"),
    "b": ("the French words generated so far", "the encoded English source sentence"),
    "c": ("the words of a question", "the words of a document"),
    "d": ("the tokens a language model has written so far", "the same tokens"),
}
_KINDS = {"a": "self", "b": "cross", "c": "cross", "d": "self"}


@checker("the equal-weight mixture, a list of two numbers")
def check_uniform_mixture(answer, values=None) -> bool:
    """Check the equal-weight average of value vectors (the "no attention" baseline).

    Parameters
    ----------
    answer : array_like, shape (d_v,), the reader's average
    values : array_like, shape (L, d_v), optional; default: the bank example's values
        ``[2, 0], [0, 2], [1, 1]``.

    Returns
    -------
    bool
    """
    v = np.asarray(BANK.values if values is None else values, dtype=float)
    if v.ndim != 2:
        raise ValueError(f"values must have shape (L, d_v); got {v.shape}")
    expected = v.sum(axis=0) / v.shape[0]  # the plain average, written without attnlib
    got = as_floats(answer, "the equal-weight mixture", shape=expected.shape)
    return check_close(
        got,
        expected,
        name="the equal-weight mixture",
        slips=(
            (
                v.sum(axis=0),
                "that is the sum of the value vectors; a mean divides the sum by the "
                f"number of positions ({v.shape[0]}).",
            ),
        ),
    )


@checker("'self' or 'cross' for each case")
def check_attention_kind(answers) -> bool:
    """Check a dict mapping each case of :data:`ATTENTION_KIND_CASES` to "self" or
       "cross".

    An answer that is not a dict gets a sentence saying what to give.
    """
    if not isinstance(answers, dict):
        raise WrongKind(
            f"give a dict such as {{'a': 'self', ...}}; got a {type(answers).__name__}."
        )
    missing = [case for case in sorted(_KINDS) if case not in answers]
    if missing:
        print(f"Not yet: no answer for case(s) {', '.join(missing)}.")
        return False
    for case in sorted(_KINDS):
        given = (as_word(answers[case]) or "").replace("-attention", "")
        if given not in ("self", "cross"):
            print(
                f"Not yet: case {case}: answer 'self' or 'cross', not "
                f"{shown(answers[case])}."
            )
            return False
        if given != _KINDS[case]:
            q_from, kv_from = ATTENTION_KIND_CASES[case]
            same = _KINDS[case] == "self"
            print(
                f"Not yet: case {case}: queries come from {q_from} and keys/values "
                "from "
                f"{kv_from}. Are these one sequence or two different sequences?"
            )
            if show_answer():
                print(
                    f"Expected: case {case} is {_KINDS[case]}-attention "
                    f"({'one sequence' if same else 'two different sequences'})."
                )
            return False
    print(f"Correct: all {len(_KINDS)} cases classified.")
    return True
