"""Checking helpers for the book's exercises.

Each chapter's exercises have a module here (named for the chapter's topic) whose
functions compute the expected answer with attnlib and compare it with the reader's.
They print a verdict and return ``True``/``False``, so a reader can call them in a
notebook cell. Every public checker follows the same rules (see :func:`checker`):

* **Unanswered.** An answer that is still the placeholder ``...`` (Python's
  ``Ellipsis``), or a function whose body still raises ``NotImplementedError``, gets one
  stable line, ``"Not answered yet: ..."``, and ``False``.
* **Diagnosis first.** A wrong answer gets ``"Not yet: ..."`` and, where the checker
  recognises it, a ``"Hint: ..."`` naming the likely slip (an unscaled dot product, a
  percentage instead of a fraction, a transposed mask, ...). The expected value is never
  printed unless the reader asks for it: every checker takes ``show_answer=True``, which
  adds an ``"Expected: ..."`` line after the diagnosis.
* **Wrong kind.** An answer of the wrong kind (a string where numbers are expected, a
  list of the wrong length, ...) gets a sentence saying what was expected, never a
  traceback.
"""

from __future__ import annotations

import contextvars
import functools
import inspect

import numpy as np

_SHOW = contextvars.ContextVar("show_answer", default=False)


class WrongKind(Exception):
    """An answer of the wrong kind; the checker prints the message as a sentence."""


class Unanswered(Exception):
    """The reader's answer is still the placeholder (``...`` or ``NotImplementedError``)."""


def show_answer() -> bool:
    """True while a checker runs with ``show_answer=True`` (the reader asked for the answer)."""
    return _SHOW.get()


def is_placeholder(answer) -> bool:
    """True if ``answer`` is ``...`` or a list, tuple or dict holding ``...``."""
    if answer is Ellipsis:
        return True
    if isinstance(answer, dict):
        return any(is_placeholder(v) for v in answer.values())
    if isinstance(answer, (list, tuple)):
        return any(is_placeholder(v) for v in answer)
    if isinstance(answer, np.ndarray) and answer.dtype == object:
        return any(v is Ellipsis for v in answer.flat)
    return False


def checker(placeholder: str, answers: tuple = ()):
    """Decorate a public checker with the book's common rules (module docstring).

    Parameters
    ----------
    placeholder : str
        What the reader should put in place of ``...``; formatted with the checker's bound
        arguments, e.g. ``"your weights for the scores {scores}"``.
    answers : tuple of str
        Names of the arguments that hold the reader's answer (default: the first one).

    The decorated checker takes an extra keyword ``show_answer=False``.
    """

    def wrap(fn):
        sig = inspect.signature(fn)
        names = answers or (next(iter(sig.parameters)),)

        @functools.wraps(fn)
        def inner(*args, show_answer: bool = False, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                print(
                    f"Not yet: {fn.__name__} was called with the wrong arguments ({exc})."
                )
                return False
            bound.apply_defaults()
            given = [bound.arguments[n] for n in names]
            token = _SHOW.set(bool(show_answer))
            try:
                if any(is_placeholder(a) for a in given):
                    raise Unanswered()
                return fn(*args, **kwargs)
            except Unanswered:
                first = given[0]
                if callable(first):
                    what = getattr(first, "__name__", "your function")
                    print(
                        f"Not answered yet: replace `raise NotImplementedError` in {what} "
                        f"with your code ({_format(placeholder, bound.arguments)})."
                    )
                else:
                    print(
                        "Not answered yet: replace `...` with "
                        f"{_format(placeholder, bound.arguments)}."
                    )
                return False
            except WrongKind as exc:
                print(f"Not yet: {exc}")
                return False
            finally:
                _SHOW.reset(token)

        params = list(sig.parameters.values())
        params.append(
            inspect.Parameter(
                "show_answer",
                inspect.Parameter.KEYWORD_ONLY,
                default=False,
                annotation="bool",
            )
        )
        inner.__signature__ = sig.replace(parameters=params)
        return inner

    return wrap


def _format(text: str, arguments: dict) -> str:
    values = {k: _plain(v) for k, v in arguments.items()}
    try:
        return text.format(**values)
    except (KeyError, IndexError, ValueError):
        return text


def _plain(value):
    """A short, readable form of an argument for messages (lists, not numpy reprs)."""
    if isinstance(value, (np.ndarray, list, tuple)) and np.size(value) <= 12:
        try:
            a = np.asarray(value, dtype=float)
        except (TypeError, ValueError):
            return value
        return _as_list(a)
    return value


def _as_list(a: np.ndarray):
    """Nested lists of numbers with at most 4 decimals; whole numbers without ".0"."""
    if a.ndim == 0:
        x = round(float(a), 4) + 0.0
        return int(x) if x.is_integer() else x
    return [_as_list(x) for x in a]


def fmt(array, prefix: str = "") -> str:
    """Print an array short and aligned: 4 decimals, columns lined up, never a number
       cut.

    ``prefix`` is the text that precedes the array on its first line (continuation lines
    are indented to line up under it).
    """
    a = np.asarray(array)
    if a.dtype == object:
        return prefix + repr(a.tolist())
    if a.ndim <= 1 and a.dtype.kind in "fiub":
        return prefix + str(
            _as_list(a.astype(float)) if a.dtype.kind != "b" else a.tolist()
        )
    if a.dtype.kind in "fc":
        a = np.round(a, 4) + 0.0  # + 0.0 turns -0.0 into 0.0
    text = np.array2string(
        a,
        separator=", ",
        threshold=24,
        edgeitems=3,
        max_line_width=88,
        floatmode="maxprec",
        suppress_small=True,
        prefix=prefix,
    )
    return prefix + text


def as_floats(answer, name: str, *, shape: tuple | None = None):
    """Convert the reader's answer to a float array, or raise :class:`WrongKind` with a
       sentence.

    Parameters
    ----------
    answer : the reader's answer
    name : str, how to call it in the message
    shape : tuple, optional; when given, a different shape is also of the wrong kind
    """
    if isinstance(answer, str):
        example = "0.5" if shape == () else "[1.0, 0.5]"
        raise WrongKind(
            f"{name} should be a number or a list of numbers, not the text "
            f"{answer!r}; write e.g. {example} without quotes."
        )
    try:
        got = np.asarray(answer, dtype=float)
    except (TypeError, ValueError):
        raise WrongKind(
            f"{name} should contain numbers only; got {answer!r}."
        ) from None
    if shape is not None and got.shape != tuple(shape):
        need = (
            "one number"
            if shape == ()
            else f"{shape[0]} numbers"
            if len(shape) == 1
            else f"an array of shape {shape}"
        )
        raise WrongKind(f"{name} should be {need}; yours has shape {got.shape}.")
    return got


def try_reader(thunk, *, label: str, where: str = ""):
    """Run the reader's code (``thunk()``); on any exception print a verdict instead of
       crashing.

    Returns ``(True, value)`` on success, ``(False, None)`` after printing
    ``"Not yet: <label> raised <Error>: <message><where>."``. A ``NotImplementedError``
    (the placeholder body) raises :class:`Unanswered`, which :func:`checker` reports.
    An ``OverflowError`` from ``math.exp`` gets a hint about subtracting a maximum.
    """
    try:
        return True, thunk()
    except NotImplementedError:
        raise Unanswered() from None
    except Exception as exc:  # the reader's code: report, do not crash the notebook
        print(f"Not yet: {label} raised {type(exc).__name__}: {exc}{where}.")
        if isinstance(exc, (OverflowError, FloatingPointError)):
            print(
                "Hint: an exponential overflowed (e^710 is already too large for "
                "a float); "
                "only exponentiate differences such as m_a - m, which are never "
                "positive "
                "when m is the largest score."
            )
        return False, None


def diagnose_close(got, want, *, atol: float) -> str | None:
    """Hints that apply to any numeric answer: a percentage given for a fraction."""
    if got.shape == want.shape and np.any(want != 0) and np.all(np.isfinite(want)):
        with np.errstate(all="ignore"):
            if np.allclose(got, 100 * want, atol=100 * atol):
                return (
                    "these look like percentages; give fractions between 0 and 1 "
                    "(0.25, not 25)."
                )
    return None


def _num(x: float) -> str:
    return f"{x:.4g}"


def check_close(
    answer,
    expected,
    *,
    name: str = "your answer",
    atol: float = 1e-3,
    slips=(),
    hint: str | None = None,
) -> bool:
    """Compare a number or array with the expected value and say what is wrong, if
       anything.

    Parameters
    ----------
    answer, expected : scalar or array_like of real numbers (``inf`` allowed: equal
        infinities of the same sign are equal)
    name : str, how to call the answer in the message
    atol : float, the absolute tolerance (default 1e-3: answers worked by hand)
    slips : sequence of ``(wrong_value, hint)``: the results of typical mistakes; when the
        answer matches one (within ``atol``, or 1% for large values), its hint is printed
    hint : str, optional; printed when no slip is recognised

    Returns
    -------
    bool
        True if ``answer`` has the expected shape and every entry is within ``atol``. A wrong
        answer names the first entry that is off, without the expected value unless the
        calling checker runs with ``show_answer=True``.

    Raises
    ------
    WrongKind if ``answer`` is not numeric (reported as a sentence by :func:`checker`).
    """
    got = as_floats(answer, name)
    want = np.asarray(expected, dtype=float)
    if got.shape != want.shape:
        print(
            f"Not yet: {name} has shape {got.shape}, but the answer has shape "
            f"{want.shape}."
        )
        return False
    if np.isnan(got).any():
        print(f"Not yet: {name} contains NaN.")
        return False
    with np.errstate(invalid="ignore"):
        err = np.where(got == want, 0.0, np.abs(got - want))  # inf == inf: no error
    if np.all(err <= atol):
        print(f"Correct: {fmt(got, name + ' = ')}.")
        return True
    worst = np.unravel_index(int(np.argmax(err)), err.shape) if err.ndim else ()
    where = f" at index {tuple(int(i) for i in worst)}" if worst else ""
    print(
        f"Not yet: {name}{where} is {_num(float(got[worst]))}, which is "
        "off by more than "
        f"the tolerance {atol:g}."
    )
    found = diagnose_close(got, want, atol=atol)
    for value, slip_hint in slips:
        if found:
            break
        alt = np.asarray(value, dtype=float)
        if alt.shape == got.shape and np.allclose(got, alt, atol=atol, rtol=1e-2):
            found = slip_hint
    if not found and np.all(err <= 20 * atol) and np.all(np.isfinite(want)):
        found = (
            f"you are close; did you round too early? Keep more decimals in the "
            f"intermediate steps (the tolerance is {atol:g})."
        )
    if found or hint:
        print(f"Hint: {found or hint}")
    reveal(want, name="the answer")
    return False


def reveal(expected, *, name: str = "the answer") -> None:
    """Print the expected value, only when the reader asked for it (``show_answer=True``)."""
    if show_answer():
        print(fmt(expected, f"Expected ({name}): "))


def describe(args, names=()) -> str:
    """A short description of a case's arguments: shapes of arrays, values of scalars.

    ``names`` are the parameter names (e.g. of the reference function), used as labels.
    """
    names = list(names) + [f"argument {i + 1}" for i in range(len(names), len(args))]
    parts = []
    for name, a in zip(names, args):
        if isinstance(a, (bool, np.bool_)):
            parts.append(f"{name}={bool(a)}")
        elif np.ndim(a) == 0:
            parts.append(f"{name}={float(a):g}")
        else:
            parts.append(f"{name} of shape {np.shape(a)}")
    return "inputs " + ", ".join(parts)


def _parameter_names(fn) -> list:
    try:
        return [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return []


def _run_cases(fn, reference, cases, *, name: str, atol: float, slips=()) -> bool:
    """Run ``fn`` on every case; print the first failure with its input and any slip found."""
    for case in cases:
        if len(case) == 3 and isinstance(case[0], str):
            label, args, hint = case
        else:
            label, args, hint = describe(case, _parameter_names(reference)), case, None
        want = np.asarray(reference(*args), dtype=float)
        with np.errstate(all="ignore"):
            ok, got = try_reader(
                lambda: np.asarray(fn(*args), dtype=float),
                label=name,
                where=f" for {label}",
            )
        if not ok:
            if hint:
                print(f"Hint: {hint}")
            return False
        if got.shape == want.shape and np.allclose(
            got, want, atol=atol, equal_nan=False
        ):
            continue
        print(f"Not yet: wrong result for {label}.")
        if got.shape != want.shape:
            print(
                f"  {name} returned shape {got.shape}; the result has shape {want.shape}."
            )
        else:
            print(fmt(got, f"  {name} returned: "))
        found = None
        for alt, slip_hint in slips:
            with np.errstate(all="ignore"):
                try:
                    other = np.asarray(alt(*args), dtype=float)
                except Exception:  # a slip that does not apply to this case
                    continue
            if other.shape == got.shape and np.allclose(
                got, other, atol=atol, equal_nan=True
            ):
                found = slip_hint
                break
        if found or hint:
            print(f"Hint: {found or hint}")
        if show_answer():
            print(fmt(want, "  Expected: "))
        else:
            print(
                "  (Call the checker again with show_answer=True to see the expected "
                "result.)"
            )
        return False
    return True


def check_function(
    fn, reference, cases, *, name: str | None = None, atol: float = 1e-6, slips=()
) -> bool:
    """Call the reader's ``fn`` and attnlib's ``reference`` on each case and compare.

    Parameters
    ----------
    fn, reference : callables taking the arguments in ``cases``
    cases : sequence of tuples of positional arguments, or of ``(label, args, hint)``
    name : str, how to call the function in the message (default: ``fn.__name__``)
    atol : float, absolute tolerance
    slips : sequence of ``(wrong_fn, hint)``: typical mistakes; when ``fn`` agrees with
        ``wrong_fn`` on the failing case, the hint is printed

    Returns
    -------
    bool, True when every case matches; the first failing case is described otherwise
    (its input shapes, what ``fn`` returned, and a diagnosis when a slip is recognised).
    """
    if not callable(fn):
        raise WrongKind(
            f"give the function itself (its name, without calling it); "
            f"got a {type(fn).__name__}."
        )
    label = name or getattr(fn, "__name__", "your function")
    if not _run_cases(fn, reference, cases, name=label, atol=atol, slips=slips):
        return False
    print(f"Correct: {label} matches attnlib on all {len(cases)} test inputs.")
    return True


def check_labelled_cases(fn, reference, cases, *, name: str, slips=()) -> bool:
    """Like :func:`check_function` on ``(label, args, hint)`` cases, without the success
       line.

    Returns
    -------
    bool, True when ``fn`` matches ``reference`` on every case (the caller prints "Correct").
    numpy's warnings are silenced while the reader's function runs.
    """
    if not callable(fn):
        raise WrongKind(
            f"give the function itself (its name, without calling it); "
            f"got a {type(fn).__name__}."
        )
    return _run_cases(fn, reference, cases, name=name, atol=1e-6, slips=slips)


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
            problems.append(f"{name} does not have shape {got}")
    extra = sorted(set(answer) - set(expected))
    if extra:
        problems.append(f"unexpected names {extra}")
    if problems:
        print("Not yet: " + "; ".join(problems) + ".")
        if show_answer():
            print(
                "Expected: " + ", ".join(f"{k} {v}" for k, v in expected.items()) + "."
            )
        return False
    print(f"Correct: all {len(expected)} shapes are right for {context}.")
    return True


def as_shape(value, name: str) -> tuple:
    """A shape written by the reader as a tuple of ints, or :class:`WrongKind`."""
    if isinstance(value, (int, np.integer)):
        return (int(value),)
    try:
        got = tuple(value)
        if not all(isinstance(s, (int, np.integer)) or float(s) == int(s) for s in got):
            raise ValueError
        return tuple(int(s) for s in got)
    except (TypeError, ValueError):
        raise WrongKind(
            f"the shape of {name} should be a tuple of integers such as (3, 2); "
            f"got {value!r}."
        ) from None
