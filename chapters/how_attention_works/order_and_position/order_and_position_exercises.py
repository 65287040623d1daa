"""Checkers for the exercises of the chapter "Order and position".

* :func:`check_encoding_entries`   entries of the sinusoidal encoding table, worked by
                                   hand
* :func:`check_reordered_output`   which rows of the self-attention output a reordering
                                   gives
* :func:`check_shift_matrix`       the reader's own ``shift_matrix(k, d_model)``

Expected answers come from attnlib
(:func:`attnlib.layers.positional_encoding.sinusoidal_encoding`,
:func:`attnlib.layers.positional_encoding.sinusoidal_shift_matrix`,
:func:`attnlib.attention`); source: Vaswani et al. (2017), section 3.5.
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention
from attnlib.layers.positional_encoding import (
    sinusoidal_encoding,
    sinusoidal_shift_matrix,
)
from book_support.exercises import (
    Unanswered,
    as_floats,
    check_close,
    check_labelled_cases,
    checker,
    returned_floats,
    try_reader,
)


@checker("your numbers for the entries {entries} (position, coordinate)")
def check_encoding_entries(
    answer, entries, *, d_model: int = 4, atol: float = 1e-3
) -> bool:
    """Check ``PE[p, i]`` for a list of ``(p, i)`` pairs, worked by hand.

    Parameters
    ----------
    answer : sequence of float, one per entry (``None`` = not answered yet)
    entries : sequence of (position, coordinate) pairs
    d_model : int, even (default 4)

    Returns
    -------
    bool, True when every value is within ``atol``. A wrong value is named; if sine and
    cosine look swapped, a hint says so.
    """
    if answer is None:  # None as well as ... means "not answered yet"
        raise Unanswered()
    positions = [p for p, _ in entries]
    pe = sinusoidal_encoding(max(positions) + 1, d_model)
    expected = np.array([pe[p, i] for p, i in entries])
    got = as_floats(answer, "your encoding entries")
    ok = check_close(got, expected, name="your encoding entries", atol=atol)
    if not ok and got.shape == expected.shape:
        swapped = np.array([pe[p, i ^ 1] for p, i in entries])
        if np.allclose(got, swapped, atol=atol):
            print(
                "Hint: even coordinates (0, 2, ...) hold the sine, odd ones the cosine."
            )
    return ok


@checker("the list of row numbers")
def check_reordered_output(answer, tokens, reordered) -> bool:
    """Which rows of the original self-attention output give the output of a reordered
       sentence.

    Without position information, self-attention output row ``i`` of the reordered
    sentence equals row ``answer[i]`` of the original's output. Any answer that maps
    each token to a row with the same word is right (two copies of "the" have identical
    rows).

    Parameters
    ----------
    answer : sequence of int, length L (``None`` = not answered yet)
    tokens, reordered : sequences of str, the same words in two orders

    Returns
    -------
    bool, checked numerically: rows of ``attention`` on seeded random word vectors (one
    per distinct word) are compared.

    Raises
    ------
    ValueError
        If ``reordered`` is not a reordering of ``tokens``.
    """
    if sorted(tokens) != sorted(reordered):
        raise ValueError(f"{reordered} is not a reordering of {tokens}")
    if answer is None:  # None as well as ... means "not answered yet"
        raise Unanswered()
    perm = _as_row_numbers(answer)
    if perm is None or perm.shape != (len(tokens),):
        print(
            f"Not yet: give {len(tokens)} whole row numbers, one per token "
            "of the new order."
        )
        return False
    if perm.min() < 0 or perm.max() >= len(tokens):
        print(f"Not yet: row numbers go from 0 to {len(tokens) - 1}.")
        return False
    rng = np.random.default_rng(0)
    vocab = {w: rng.normal(size=8) for w in sorted(set(tokens))}
    X = np.array([vocab[w] for w in tokens])  # (L, 8)
    Y = np.array([vocab[w] for w in reordered])
    out, _ = attention(X, X, X)
    out_re, _ = attention(Y, Y, Y)
    if np.allclose(out_re, out[perm], atol=1e-12):
        print(
            "Correct: the reordered sentence's outputs are the original rows, "
            "reordered the "
            "same way."
        )
        return True
    bad = int(np.argmax(np.abs(out_re - out[perm]).max(axis=1)))
    print(
        f"Not yet: row {bad} of the reordered output belongs to {reordered[bad]!r}, "
        "but your "
        f"row {int(perm[bad])} of the original belongs to {tokens[int(perm[bad])]!r}."
    )
    return False


def _as_row_numbers(answer):
    """The reader's row numbers as an int array, or None if they are not whole
    numbers."""
    if isinstance(answer, (str, bytes, dict)):
        return None
    try:
        perm = np.asarray(answer)
    except Exception:  # ragged lists, objects that refuse to become arrays
        return None
    return perm if perm.dtype.kind in "iu" else None


def _shift_cases():
    return [
        (
            "k = 1, d_model = 2",
            (1, 2),
            "one pair: the block [[cos w, sin w], [-sin w, cos w]].",
        ),
        (
            "k = 3, d_model = 4",
            (3, 4),
            "the second pair turns more slowly: w_1 = 10000^(-2/4).",
        ),
        ("k = -2, d_model = 6", (-2, 6), "a negative offset turns the other way."),
        ("k = 0, d_model = 8", (0, 8), "offset 0 must give the identity."),
    ]


def _blocks(angles) -> np.ndarray:
    """The block-diagonal matrix of 2 x 2 blocks [[cos a, sin a], [-sin a, cos a]]."""
    R = np.zeros((2 * len(angles), 2 * len(angles)))
    for i, a in enumerate(angles):
        R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [np.cos(a), np.sin(a)],
            [-np.sin(a), np.cos(a)],
        ]
    return R


#: Typical slips of a home-made shift matrix and their diagnosis.
SHIFT_SLIPS = (
    (
        lambda k, d: sinusoidal_shift_matrix(k, d).T,
        "your matrix shifts by -k (it is the transpose): with the sine first in each "
        "pair, the block is [[cos(k w), sin(k w)], [-sin(k w), cos(k w)]].",
    ),
    (
        lambda k, d: _blocks([k] * (d // 2)),
        "every pair turns by k radians; pair i turns at its own frequency, "
        "w_i = 10000^(-2i/d_model), so by k * w_i.",
    ),
    (
        lambda k, d: _blocks(k * 10000.0 ** (-np.arange(d // 2) / d)),
        "the frequencies are w_i = 10000^(-2i/d_model): the exponent has 2i, "
        "twice the pair's index.",
    ),
)


@checker("your shift matrix")
def check_shift_matrix(fn) -> bool:
    """Compare the reader's ``fn(k, d_model)`` with :func:`sinusoidal_shift_matrix`.

    Also checks the defining property on the reader's matrix: ``fn(k, d) @ PE(p) =
    PE(p + k)`` for ``k = 5, d = 8``. The typical slips (:data:`SHIFT_SLIPS`: the
    transpose, one frequency for every pair, ``i`` for ``2i`` in the exponent) are
    named when the reader's function matches one.

    Returns
    -------
    bool, True when every case matches within 1e-6 (``numpy.allclose``).
    """
    cases = _shift_cases()
    if not check_labelled_cases(
        fn, sinusoidal_shift_matrix, cases, name="your shift matrix", slips=SHIFT_SLIPS
    ):
        return False
    pe = sinusoidal_encoding(20, 8)  # (20, 8)
    where = " for k = 5, d_model = 8"
    ok, value = try_reader(lambda: fn(5, 8), label="your shift matrix", where=where)
    if not ok:
        return False
    R = returned_floats(value, "your shift matrix", where)
    if R.shape != (8, 8) or not np.allclose(pe[:15] @ R.T, pe[5:], atol=1e-9):
        print(
            f"Not yet: your matrix matches attnlib on all {len(cases)} cases, but "
            "for k = 5, d_model = 8 it does not map PE(p) to PE(p + 5)."
        )
        return False
    print(
        f"Correct: your matrix matches attnlib on all {len(cases)} cases, and it "
        "maps PE(p) to PE(p + 5): True."
    )
    return True
