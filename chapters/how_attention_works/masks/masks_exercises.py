"""Checkers for the exercises of the chapter "Masks, self- and cross-attention".

* :func:`check_visible`       which tokens one query may attend under a given mask
* :func:`check_causal_mask`   the reader's own causal-mask function
* :func:`check_padding_mask`  a key padding mask written out by hand

Masks are boolean and ``True`` means "may attend", as everywhere in attnlib. Expected
answers come from :mod:`attnlib.core.masks`; source: Vaswani et al. (2017), section
3.2.3. Every checker takes ``show_answer=True`` to print the expected answer after the
diagnosis.
"""

from __future__ import annotations

import numpy as np

from attnlib.core.masks import causal_mask, padding_mask
from book_support.exercises import (
    WrongKind,
    as_texts,
    checker,
    fmt,
    require_function,
    returned_array,
    show_answer,
    shown,
    try_reader,
)


@checker("the list of tokens that '{query}' may attend")
def check_visible(answer, query, *, tokens, mask) -> bool:
    """Check the list of tokens that ``query`` may attend under ``mask``.

    Parameters
    ----------
    answer : sequence of str
        The tokens the reader thinks the query may attend, in sentence order.
    query : int or str
        The querying position, or its token (the first occurrence is used).
    tokens : sequence of str
        The sentence, one token per position (keys and queries).
    mask : array_like of bool, shape (L, L)
        ``True`` = may attend.

    Returns
    -------
    bool, True when ``answer`` lists exactly the allowed tokens in order; otherwise the
    missing and the forbidden tokens are named.

    Raises
    ------
    TypeError if the mask is not boolean; ValueError if
    the query is not in the sentence or the mask does not match the tokens.
    """
    tokens = [str(t) for t in tokens]
    m = np.asarray(mask)
    if m.dtype != np.bool_:
        raise TypeError(
            f"mask must be boolean (True = may attend); got dtype {m.dtype}"
        )
    if m.shape != (len(tokens), len(tokens)):
        raise ValueError(f"mask of shape {m.shape} does not match {len(tokens)} tokens")
    if isinstance(query, str):
        if query not in tokens:
            raise ValueError(f"query {query!r} is not one of the tokens {tokens}")
        query = tokens.index(query)
    query = int(query)
    expected = [tokens[j] for j in range(len(tokens)) if m[query, j]]
    got = as_texts(answer, "the tokens", "['The', 'bank']")
    if got == expected:
        print(f"Correct: '{tokens[query]}' may attend {expected}.")
        return True
    missing = [t for t in expected if t not in got]
    forbidden = [t for t in got if t not in expected]
    parts = []
    if missing:
        parts.append(f"'{tokens[query]}' may also attend {missing}")
    if forbidden:
        parts.append(f"it may not attend {forbidden}")
    if not parts:
        parts.append(
            f"list the tokens in sentence order, with repeats: {len(expected)} tokens"
        )
    print("Not yet: " + "; ".join(parts) + ".")
    if missing == [tokens[query]] and not forbidden:
        print(
            "Hint: a position may attend itself (the diagonal of the mask is allowed)."
        )
    if np.array_equal(m, np.tril(np.ones_like(m))) and got == [
        tokens[j] for j in range(len(tokens)) if j >= query
    ]:
        print(
            "Hint: these are the tokens from the query onwards; under the "
            "causal mask a "
            "query sees itself and the tokens before it."
        )
    if show_answer():
        print(f"Expected: {expected}.")
    return False


def _first_difference(got: np.ndarray, want: np.ndarray) -> str:
    i, j = (int(k) for k in np.argwhere(got != want)[0])
    should = "may attend" if want[i, j] else "may not attend"
    return f"query {i} {should} key {j}"


@checker("your causal-mask function")
def check_causal_mask(fn, sizes=(1, 2, 5, 7)) -> bool:
    """Compare the reader's ``fn(n)`` with :func:`attnlib.causal_mask` for several
       ``n``.

    ``fn(n)`` must return a boolean array of shape ``(n, n)`` with ``True`` where query
    ``i`` may attend key ``j`` (the key is not later than the query, the diagonal
    included).

    Returns
    -------
    bool, True when every size matches; otherwise the first wrong cell is described.
    """
    require_function(fn)
    for n in sizes:
        want = causal_mask(n)
        ok, value = try_reader(
            lambda: fn(n), label="your function", where=f" for n={n}"
        )
        if not ok:
            return False
        got = returned_array(value, "your function", f" for n={n}")
        if got.shape != want.shape:
            print(
                f"Not yet: for n={n} your mask has shape {got.shape}, expected "
                f"{want.shape}."
            )
            return False
        if got.dtype != np.bool_:
            print(
                f"Not yet: for n={n} your mask has dtype {got.dtype}; attnlib masks "
                "are boolean "
                "(True = may attend). Hint: compare positions, e.g. j <= i, or "
                "use astype(bool)."
            )
            return False
        if not np.array_equal(got, want):
            hint = ""
            if np.array_equal(got, want.T):
                hint = (
                    " Hint: your mask is transposed (upper-triangular): it lets each "
                    "query "
                    "see the later keys. Rows are queries, columns are keys, and query "
                    "i "
                    "may attend key j when j <= i (np.tril, not np.triu)."
                )
            elif np.array_equal(got, want & ~np.eye(n, dtype=bool)):
                hint = " Hint: a position may attend itself (the diagonal is allowed)."
            print(f"Not yet: for n={n}, {_first_difference(got, want)}.{hint}")
            print(fmt(got, f"  your mask for n={n}: "))
            if show_answer():
                print(fmt(want, "  Expected:        "))
            return False
    print(
        "Correct: your causal mask matches attnlib.causal_mask for n = "
        f"{', '.join(map(str, sizes))}."
    )
    return True


def _as_mask(answer) -> np.ndarray:
    """The reader's mask as an array, or :class:`WrongKind` for text and objects."""
    example = "[[True, True, False], [True, True, True]]"
    if isinstance(answer, (str, bytes)):
        raise WrongKind(
            f"write the mask with True and False, e.g. {example}, not text."
        )
    try:
        return np.asarray(answer)
    except Exception:  # ragged rows, objects that refuse to become arrays
        raise WrongKind(
            f"write the mask as rows of True/False of one length, e.g. {example}; "
            f"got {shown(answer)}."
        ) from None


@checker("your padding mask, one row of True/False per sequence")
def check_padding_mask(answer, valid_lens, n_keys: int, *, side: str = "right") -> bool:
    """Check a key padding mask written by hand, one row per sequence of the batch.

    Parameters
    ----------
    answer : array_like of bool, shape (B, n_keys) (or (B, 1, n_keys) as attnlib
        returns)
    valid_lens : sequence of int, length B
    n_keys : int, the padded length
    side : {"right", "left"}, where the padding sits

    Returns
    -------
    bool, True when ``answer`` equals :func:`attnlib.padding_mask` (without its query
    axis).
    """
    want = padding_mask(np.asarray(valid_lens), n_keys, side=side)[:, 0, :]
    got = _as_mask(answer)
    if got.ndim == 3 and got.shape[1] == 1:
        got = got[:, 0, :]
    if got.shape != want.shape:
        print(
            f"Not yet: your mask has shape {got.shape}, expected {want.shape} "
            "(one row per sequence, one column per key)."
        )
        return False
    if got.dtype != np.bool_:
        print(
            f"Not yet: your mask has dtype {got.dtype}; attnlib masks are boolean "
            "(True = real token that may be attended)."
        )
        return False
    if not np.array_equal(got, want):
        b, j = (int(k) for k in np.argwhere(got != want)[0])
        what = "a real token" if want[b, j] else "padding"
        extra = ""
        other = "left" if side == "right" else "right"
        if np.array_equal(
            got, padding_mask(np.asarray(valid_lens), n_keys, side=other)[:, 0, :]
        ):
            extra = (
                f" Hint: that is {other} padding; here the padding sits on the {side}."
            )
        elif np.array_equal(got, ~want):
            extra = (
                " Hint: your mask is inverted: True marks a real token that may be "
                "attended, False the padding."
            )
        print(
            f"Not yet: in sequence {b}, key {j} is {what}, so it should be "
            f"{bool(want[b, j])}.{extra}"
        )
        if show_answer():
            print(fmt(want, "Expected: "))
        return False
    print(
        f"Correct: the padding mask for lengths {list(map(int, valid_lens))} "
        f"({side} padding)."
    )
    return True
