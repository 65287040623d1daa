"""Reading the reader's answer (numbers, shapes, words) and comparing it with the
expected one.

Every reader turns an answer of the wrong kind into :class:`WrongKind`, whose message
the checker prints as a sentence; none lets another exception through.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from book_support.exercises._display import fmt, number, shown
from book_support.exercises._rules import WrongKind, reveal, show_answer


def as_floats(answer, name: str, *, shape: tuple | None = None) -> np.ndarray:
    """Convert the reader's answer to a float array, or raise :class:`WrongKind` with a
    sentence.

    Parameters
    ----------
    answer : the reader's answer: a number, a (nested) list of numbers or an array of
        real numbers (booleans count as 0 and 1)
    name : str, how to call it in the message
    shape : tuple, optional; when given, a different shape is also of the wrong kind

    Returns
    -------
    numpy.ndarray of float64.

    Raises
    ------
    WrongKind
        For text, complex numbers, ragged lists, numbers too large for a float, any
        other object, or a shape other than ``shape``.
    """
    if isinstance(answer, (str, bytes)):
        example = "0.5" if shape == () else "[1.0, 0.5]"
        raise WrongKind(
            f"{name} should be a number or a list of numbers, not the text "
            f"{shown(answer)}; write e.g. {example} without quotes."
        )
    got = _float_array(answer)
    if got is None:
        raise WrongKind(f"{name} should contain numbers only; got {shown(answer)}.")
    if isinstance(got, str):
        raise WrongKind(f"{name} should hold real numbers; got {got} {shown(answer)}.")
    if shape is not None and got.shape != tuple(shape):
        if shape == ():
            need = "one number"
        elif len(shape) == 1:
            need = f"{shape[0]} numbers"
        else:
            need = f"an array of shape {shape}"
        why = shape_relation(got.shape, shape)
        raise WrongKind(
            f"{name} should be {need}; yours has shape {got.shape}"
            + (f": {why}." if why else ".")
        )
    return got


def _float_array(answer):
    """``answer`` as float64, ``None`` if it is not numbers, or a reason as a str."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            raw = np.asarray(answer)
            kind = raw.dtype.kind
            if kind == "c":
                return "the complex number(s)"
            if kind in "biuf":
                return raw.astype(np.float64)
            if kind != "O":  # text, dates, bytes, records
                return None
            if any(isinstance(x, (str, bytes, complex)) for x in raw.flat):
                return None
            return raw.astype(np.float64)
    except Exception:  # the reader's object: any failure means "not numbers"
        return None


def shape_relation(got, want, *, sizes: bool = True) -> str | None:
    """What relates a wrong shape ``got`` to the expected ``want``, as a clause, or
    ``None`` when nothing simple does.

    Recognised: two axes swapped (a transpose), the same sizes in another order, one
    axis too many or too few (of size 1: a squeeze or ``keepdims``; otherwise an axis
    kept that should have gone, or dropped that should stay), one size wrong. With
    ``sizes=False`` the answer is a shape the reader typed (not an array): the clause
    names axes but not the expected sizes, gives no numpy calls and has no parentheses
    (the caller puts it in some).
    """
    got, want = tuple(int(n) for n in got), tuple(int(n) for n in want)
    if got == want:
        return None
    if len(got) == len(want):
        return _same_rank_relation(got, want, sizes)
    if len(got) == len(want) + 1:
        for i in range(len(got)):
            if got[:i] + got[i + 1 :] == want:
                return _extra_axis(got, i, sizes)
    if len(got) + 1 == len(want):
        for i in range(len(want)):
            if want[:i] + want[i + 1 :] == got:
                return _missing_axis(want, i, sizes)
    return f"it has {len(got)} axes where {len(want)} are expected"


def _same_rank_relation(got: tuple, want: tuple, sizes: bool) -> str | None:
    """:func:`shape_relation` for two shapes with as many axes."""
    diff = [i for i in range(len(got)) if got[i] != want[i]]
    if sorted(got) == sorted(want):
        product = "the order of the factors of a product"
        if len(diff) == 2 and got[diff[0]] == want[diff[1]]:
            axes = (
                "the two axes are"
                if len(got) == 2
                else f"axes {diff[0]} and {diff[1]} are"
            )
            # a product's factors in the wrong order swap the last two axes only;
            # other swapped axes (heads and positions, say) come from a layout
            last_two = diff == [len(got) - 2, len(got) - 1]
            if not sizes:
                check = product if last_two else "which of the two comes first"
                return f"{axes} swapped: check {check}"
            calls = ".T" if len(got) == 2 else "swapaxes or transpose"
            which = "" if len(got) == 2 else " of those two axes"
            also = f", and {product}" if last_two else ""
            return f"{axes} swapped: a transpose{which} (check {calls}{also})"
        if not sizes:
            return f"it has the right sizes in another order: check {product}"
        return (
            "it has the right sizes in another order: the axes are permuted "
            f"(check transposes, and {product})"
        )
    if len(diff) == 1:
        i = diff[0]
        size = f" ({got[i]} instead of {want[i]})" if sizes else ""
        return f"only axis {i} has the wrong size{size}"
    return None


def _extra_axis(got: tuple, i: int, sizes: bool) -> str:
    """:func:`shape_relation` when ``got`` has axis ``i`` too many."""
    if got[i] == 1:
        if not sizes:
            return f"it has an extra axis of size 1 at position {i}: leave it out"
        return (
            f"it has an extra axis of size 1 at position {i}: drop it (np.squeeze, "
            "or index that axis with 0), or do not wrap the result in a list"
        )
    where = (
        f"at position {i} (of size {got[i]})"
        if sizes
        else f"of size {got[i]} at position {i}"
    )
    return (
        f"it has an extra axis {where}: keep only the axes asked "
        "for; did an axis stay that should be summed, averaged or indexed away?"
    )


def _missing_axis(want: tuple, i: int, sizes: bool) -> str:
    """:func:`shape_relation` when ``got`` lacks axis ``i`` of ``want``."""
    if want[i] == 1:
        if not sizes:
            return (
                f"it lacks an axis of size 1 at position {i}: an axis of size 1 "
                "still counts"
            )
        add = "x[..., None]" if i == len(want) - 1 else f"np.expand_dims(x, {i})"
        return (
            f"it lacks an axis of size 1 at position {i} (keepdims=True keeps it "
            f"after a sum or a mean; {add} adds it)"
        )
    size = f" (of size {want[i]})" if sizes else ""
    return (
        f"it lacks axis {i}{size}: did a sum, a mean or an index drop an axis that "
        "should stay?"
    )


def as_shape(value, name: str) -> tuple:
    """A shape written by the reader as a tuple of ints, or :class:`WrongKind`.

    An int ``n`` is the shape ``(n,)``; a tuple, list or 1-D array of whole numbers is
    a shape. Booleans, text and other objects are of the wrong kind.
    """
    wrong = WrongKind(
        f"the shape of {name} should be a tuple of integers such as (3, 2); "
        f"got {shown(value)}."
    )
    if isinstance(value, (bool, np.bool_)):
        raise wrong
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    if not isinstance(value, (tuple, list, np.ndarray)):
        raise wrong
    if isinstance(value, np.ndarray) and value.ndim != 1:
        raise wrong
    sizes = []
    for s in value:
        if isinstance(s, (bool, np.bool_)):
            raise wrong
        if isinstance(s, (int, np.integer)):
            sizes.append(int(s))
        elif isinstance(s, (float, np.floating)) and math.isfinite(s) and s == int(s):
            sizes.append(int(s))
        else:
            raise wrong
    return tuple(sizes)


def as_texts(answer, name: str, example: str) -> list:
    """The reader's list of words (str), or :class:`WrongKind` naming what to give.

    Parameters
    ----------
    answer : a list or tuple of str
    name : str, what the words are ("the tokens", "the steps")
    example : str, an example to show, e.g. ``"['The', 'bank']"``
    """
    if isinstance(answer, (str, bytes)):
        raise WrongKind(
            f"give {name} as a list of strings, e.g. {example}, not one string."
        )
    if not isinstance(answer, (list, tuple, np.ndarray)) or (
        isinstance(answer, np.ndarray) and answer.ndim != 1
    ):
        raise WrongKind(
            f"give {name} as a list of strings, e.g. {example}; got {shown(answer)}."
        )
    items = list(answer)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise WrongKind(
                f"give {name} as a list of strings, e.g. {example}; item {i} is "
                f"{shown(item)}."
            )
    return [str(item) for item in items]


def as_word(value):
    """A one-word answer, stripped and in lower case; ``None`` if it is not a str."""
    return value.strip().lower() if isinstance(value, str) else None


#: The hint for a percentage given where a fraction is asked for.
PERCENTAGES = (
    "these look like percentages; give fractions between 0 and 1 (0.25, not 25)."
)


def diagnose_close(got, want, *, atol: float) -> str | None:
    """Hints that apply to any numeric answer: a percentage given for a fraction."""
    if got.shape == want.shape and np.any(want != 0) and np.all(np.isfinite(want)):
        with np.errstate(all="ignore"):
            if np.allclose(got, 100 * want, atol=100 * atol):
                return PERCENTAGES
    return None


def check_close(
    answer,
    expected,
    *,
    name: str = "your answer",
    atol: float = 1e-3,
    rtol: float = 0.0,
    slips=(),
    hint: str | None = None,
    count: bool = False,
) -> bool:
    """Compare a number or array with the expected value and say what is wrong, if
    anything.

    Parameters
    ----------
    answer, expected : scalar or array_like of real numbers (``inf`` allowed: equal
        infinities of the same sign are equal)
    name : str, how to call the answer in the message
    atol : float, the absolute tolerance (default 1e-3: answers worked by hand)
    rtol : float, a tolerance relative to the expected value, added to ``atol``
        (default 0; e.g. 0.01 for "within 1%", where slips also differ by a few %)
    slips : sequence of ``(wrong_value, hint)``: the results of typical mistakes; when
        the answer matches one (within the tolerance, or 1% for large values), its hint
        is printed
    hint : str, optional; printed when no slip is recognised
    count : bool, default False; True when the answer is a count of whole things
        (scores, tiles), where nothing is rounded: a wrong answer near the right one
        then gets ``hint``, never the "did you round too early?" diagnosis

    Returns
    -------
    bool
        True if ``answer`` has the expected shape and every entry is within
        ``atol + rtol * |expected|``. A
        wrong answer names the first entry that is off, without the expected value
        unless the calling checker runs with ``show_answer=True``.

    Raises
    ------
    WrongKind if ``answer`` is not numeric (reported as a sentence by :func:`checker`).
    """
    got = as_floats(answer, name)
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape:
        why = shape_relation(got.shape, want.shape)
        print(
            f"Not yet: {name} has shape {got.shape}, but the answer has shape "
            f"{want.shape}" + (f": {why}." if why else ".")
        )
        return False
    if np.isnan(got).any():
        print(f"Not yet: {name} contains NaN.")
        return False
    with np.errstate(all="ignore"):
        err = np.where(got == want, 0.0, np.abs(got - want))  # inf == inf: no error
        tol = atol + rtol * np.abs(np.where(np.isfinite(want), want, 0.0))
        if np.all(err <= tol):
            print(f"Correct: {fmt(got, name + ' = ')}.")
            return True
        worst = (
            np.unravel_index(int(np.argmax(err - tol)), err.shape) if err.ndim else ()
        )
        where = f" at index {tuple(int(i) for i in worst)}" if worst else ""
        print(
            f"Not yet: {name}{where} is {number(float(got[worst]))}, which is off by "
            f"more than the tolerance {_tolerance(atol, rtol)}."
        )
        found = diagnose_close(got, want, atol=atol)
        for value, slip_hint in slips:
            if found:
                break
            alt = np.asarray(value, dtype=float)
            if alt.shape == got.shape and np.allclose(
                got, alt, atol=atol, rtol=max(rtol, 1e-2)
            ):
                found = slip_hint
        near = np.all(err <= 20 * tol) and np.all(np.isfinite(want))
        if not found and near and not count:
            found = (
                "you are close; did you round too early? Keep more decimals in the "
                f"intermediate steps (the tolerance is {_tolerance(atol, rtol)})."
            )
    if found or hint:
        print(f"Hint: {found or hint}")
    reveal(want, name="the answer")
    return False


def _tolerance(atol: float, rtol: float) -> str:
    if not rtol:
        return f"{atol:g}"
    relative = f"{100 * rtol:g}% of the answer"
    return relative if not atol else f"{atol:g} + {relative}"


def check_shape_dict(answer, expected: dict, *, what: str, context: str) -> bool:
    """Compare a dict of shapes written by the reader with the expected shapes.

    Parameters
    ----------
    answer : dict mapping each name of ``expected`` to a tuple of ints
    expected : dict mapping names to the true shapes (computed with attnlib)
    what : str, the checker's name for error messages
    context : str, the sizes the shapes were asked for (printed on success)

    Returns
    -------
    bool, True if every name is present with the right shape and nothing else is given.

    Raises
    ------
    WrongKind if ``answer`` is not a dict or a shape is not a tuple of integers.
    """
    if not isinstance(answer, dict):
        raise WrongKind(
            f"{what} expects a dict of shapes such as {{'X': (2, 3), ...}}; "
            f"got a {type(answer).__name__}."
        )
    problems = []
    for name, want in expected.items():
        if name not in answer:
            problems.append(f"{name} is missing")
            continue
        got = as_shape(answer[name], name)
        if got != want:
            why = shape_relation(got, want, sizes=False)
            problems.append(
                f"{name} does not have shape {got}" + (f" ({why})" if why else "")
            )
    extra = sorted((shown(k) for k in answer if k not in expected), key=str)
    if extra:
        problems.append(f"unexpected names [{', '.join(extra)}]")
    if problems:
        print("Not yet: " + "; ".join(problems) + ".")
        if show_answer():
            print(
                "Expected: " + ", ".join(f"{k} {v}" for k, v in expected.items()) + "."
            )
        return False
    print(f"Correct: all {len(expected)} shapes are right for {context}.")
    return True


def heads_after_positions_hint(answer, expected, names=("Q_heads",)) -> None:
    """Print a hint for each array of ``names`` in ``answer`` given with the heads axis
    after the positions, ``(batch, length, heads, d_k)``, where ``expected`` (which
    holds ``Q_heads``, ``(batch, heads, length, d_k)``) wants it before them:
    ``split_heads``' reshape without its transpose. Reads shapes that
    :func:`check_shape_dict` has already accepted as shapes."""
    batch, heads, length, d_k = expected["Q_heads"]
    after_positions = (batch, length, heads, d_k)
    for name in names:
        if name not in answer or expected[name] == after_positions:
            continue
        if as_shape(answer[name], name) == after_positions:
            kept = (
                ", and the heads' outputs keep that layout until merge_heads."
                if name == "head_outputs"
                else "."
            )
            print(
                f"Hint: {name} has the heads axis after the positions; split_heads "
                "moves it before them, (batch, heads, length, d_k), so that every "
                f"head attends over its own (length, d_k) block{kept}"
            )
