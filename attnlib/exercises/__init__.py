"""Checking helpers for the book's exercises.

Each chapter's exercises have a module here (named for the chapter's topic) whose
functions compute the expected answer with attnlib and compare it with the reader's.
They print a one-line verdict and return ``True``/``False``, so a reader can call them in a
notebook cell; they never raise on a wrong answer, only on an answer of the wrong kind.
"""
from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np


def try_reader(thunk, *, label: str, where: str = ""):
    """Run the reader's code (``thunk()``); on any exception print a verdict instead of crashing.

    Returns ``(True, value)`` on success, ``(False, None)`` after printing
    ``"Not yet: <label> raised <Error>: <message><where>."``.
    """
    try:
        return True, thunk()
    except Exception as exc:  # the reader's code: report, do not crash the notebook
        print(f"Not yet: {label} raised {type(exc).__name__}: {exc}{where}.")
        return False, None


def check_close(answer, expected, *, name: str = "your answer", atol: float = 1e-3) -> bool:
    """Compare a number or array with the expected value and say what is wrong, if anything.

    Parameters
    ----------
    answer, expected : scalar or array_like of real numbers
    name : str, how to call the answer in the message
    atol : float, the absolute tolerance (default 1e-3: answers worked by hand)

    Returns
    -------
    bool
        True if ``answer`` has the expected shape and every entry is within ``atol``.
    """
    got = np.asarray(answer, dtype=float)
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape:
        print(f"Not yet: {name} has shape {got.shape}, but the answer has shape {want.shape}.")
        return False
    if np.isnan(got).any():
        print(f"Not yet: {name} contains NaN.")
        return False
    err = np.abs(got - want)
    if np.all(err <= atol):
        print(f"Correct: {name} = {np.round(got, 4).tolist()}.")
        return True
    worst = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    where = f" at index {tuple(int(i) for i in worst)}" if worst else ""
    print(f"Not yet: {name}{where} is {np.round(got[worst], 4)}, expected "
          f"{np.round(want[worst], 4)} (tolerance {atol}).")
    return False


def check_function(fn, reference, cases, *, name: str | None = None, atol: float = 1e-6) -> bool:
    """Call the reader's ``fn`` and attnlib's ``reference`` on each case and compare.

    Parameters
    ----------
    fn, reference : callables taking the arguments in ``cases``
    cases : sequence of tuples of positional arguments
    name : str, how to call the function in the message (default: ``fn.__name__``)
    atol : float, absolute tolerance

    Returns
    -------
    bool, True when every case matches; the first failing case is printed otherwise.
    """
    label = name or getattr(fn, "__name__", "your function")
    for args in cases:
        want = np.asarray(reference(*args), dtype=float)
        ok, got = try_reader(lambda: np.asarray(fn(*args), dtype=float), label=label,
                             where=f" for input {_short(args)}")
        if not ok:
            return False
        if got.shape != want.shape or not np.allclose(got, want, atol=atol, equal_nan=False):
            print(f"Not yet: for input {_short(args)}, {label} returned {np.round(got, 4).tolist()}, "
                  f"expected {np.round(want, 4).tolist()}.")
            return False
    print(f"Correct: {label} matches attnlib on all {len(cases)} test inputs.")
    return True


def check_labelled_cases(fn, reference, cases, *, name: str) -> bool:
    """Run :func:`check_function` on named inputs, quietly, and explain the first failure.

    Parameters
    ----------
    fn, reference : callables
    cases : sequence of ``(label, args, hint)``: a description of the input for the reader,
        the tuple of positional arguments, and a hint (or None) printed when ``fn`` fails there
    name : str, how to call ``fn`` in the messages

    Returns
    -------
    bool, True when ``fn`` matches ``reference`` on every case. numpy's warnings are silenced
    while the reader's function runs: the verdict says what went wrong instead.
    """
    for label, args, hint in cases:
        verdict = io.StringIO()
        with np.errstate(all="ignore"), warnings.catch_warnings(), \
                contextlib.redirect_stdout(verdict):
            warnings.simplefilter("ignore", RuntimeWarning)
            ok = check_function(fn, reference, [args], name=name)
        if not ok:
            print(f"Input: {label}.")
            print(verdict.getvalue().strip())
            if hint:
                print(f"Hint: {hint}")
            return False
    return True


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
    TypeError if ``answer`` is not a dict.
    """
    if not isinstance(answer, dict):
        raise TypeError(f"{what} expects a dict of shapes; got {type(answer).__name__}")
    problems = []
    for name, want in expected.items():
        if name not in answer:
            problems.append(f"{name} is missing")
            continue
        got = tuple(int(s) for s in np.atleast_1d(answer[name]))
        if got != want:
            problems.append(f"{name} has shape {want}, not {got}")
    extra = sorted(set(answer) - set(expected))
    if extra:
        problems.append(f"unexpected names {extra}")
    if problems:
        print("Not yet: " + "; ".join(problems) + ".")
        return False
    print(f"Correct: all {len(expected)} shapes are right for {context}.")
    return True


def _short(args) -> str:
    text = ", ".join(np.array2string(np.asarray(a), precision=3, threshold=8) for a in args)
    return text if len(text) < 120 else text[:117] + "..."
