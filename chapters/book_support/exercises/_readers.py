"""Running the reader's own function on test inputs and judging what it returns."""

from __future__ import annotations

import numpy as np

from book_support.exercises._answers import as_floats, shape_relation
from book_support.exercises._display import describe, fmt, parameter_names, shown
from book_support.exercises._rules import Unanswered, WrongKind, show_answer


def require_function(fn) -> None:
    """Raise :class:`WrongKind` unless the reader gave a function (a callable)."""
    if not callable(fn):
        raise WrongKind(
            "give the function itself (its name, without calling it); "
            f"got a {type(fn).__name__}."
        )


def function_name(fn, default: str = "your function") -> str:
    """The name the reader gave ``fn`` (``default`` for a lambda or an object)."""
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) and name != "<lambda>" else default


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
                "Hint: an exponential overflowed (e^710 is already too large for a "
                "float); only exponentiate differences such as m_a - m, which are "
                "never positive when m is the largest score."
            )
        return False, None


def returned_floats(value, label: str, where: str = "") -> np.ndarray:
    """What the reader's function returned, as a float array, or :class:`WrongKind`.

    ``None`` (a missing ``return``) and a tuple of several arrays (the output and the
    weights, say, where only one array is asked for) get their own sentences.
    """
    if value is None:
        raise WrongKind(f"{label} returned None{where}; did you forget `return`?")
    if isinstance(value, tuple) and len(value) > 1 and any(map(_array_like, value)):
        raise WrongKind(
            f"{label} returned {len(value)} values (a tuple){where}; return one array."
        )
    return as_floats(value, f"what {label} returned{where}")


def _array_like(value) -> bool:
    return isinstance(value, (list, tuple)) or (
        isinstance(value, np.ndarray) and value.ndim > 0
    )


def returned_array(value, label: str, where: str = "") -> np.ndarray:
    """What the reader's function returned, as an array of any dtype, or
    :class:`WrongKind`."""
    if value is None:
        raise WrongKind(f"{label} returned None{where}; did you forget `return`?")
    try:
        return np.asarray(value)
    except Exception:  # ragged lists, objects that refuse to become arrays
        raise WrongKind(
            f"{label} returned {shown(value)}{where}, which is not an array."
        ) from None


def _run_cases(
    fn, reference, cases, *, name: str, atol: float, slips=(), diagnose=None
) -> bool:
    """Run ``fn`` on every case; print the first failure with its input and any slip
    found (or, failing a slip, what ``diagnose(args, got)`` says)."""
    for case in cases:
        if len(case) == 3 and isinstance(case[0], str):
            label, args, hint = case
        else:
            label, args, hint = describe(case, parameter_names(reference)), case, None
        want = np.asarray(reference(*args), dtype=float)
        where = f" for {label}"
        ok, value = try_reader(lambda: fn(*args), label=name, where=where)
        if not ok:
            if hint:
                print(f"Hint: {hint}")
            return False
        got = returned_floats(value, name, where)
        if got.shape == want.shape and np.allclose(
            got, want, atol=atol, equal_nan=False
        ):
            continue
        print(f"Not yet: wrong result{where}.")
        if got.shape != want.shape:
            why = shape_relation(got.shape, want.shape)
            print(
                f"  {name} returned shape {got.shape}; the result has shape "
                f"{want.shape}" + (f": {why}." if why else ".")
            )
        else:
            print(fmt(got, f"  {name} returned: "))
        found = None
        for alt, slip_hint in slips:
            try:
                other = np.asarray(alt(*args), dtype=float)
            except Exception:  # a slip that does not apply to this case
                continue
            if other.shape == got.shape and np.allclose(
                got, other, atol=atol, equal_nan=True
            ):
                found = slip_hint
                break
        if not found and diagnose is not None:
            found = diagnose(args, got)
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
    fn,
    reference,
    cases,
    *,
    name: str | None = None,
    atol: float = 1e-6,
    slips=(),
    diagnose=None,
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
    diagnose : callable ``(args, got) -> str | None``, optional; asked when no slip
        agrees, for mistakes that no single wrong function describes (``got`` is what
        ``fn`` returned on the failing case, as floats); its sentence is the hint

    Returns
    -------
    bool, True when every case matches; the first failing case is described otherwise
    (its input shapes, what ``fn`` returned, and a diagnosis when a slip is recognised;
    a wrong shape is compared with the expected one: a transpose, an axis too many or
    too few).

    Raises
    ------
    WrongKind if ``fn`` is not a function or returns something that is not numbers.
    """
    require_function(fn)
    label = name or function_name(fn)
    if not _run_cases(
        fn, reference, cases, name=label, atol=atol, slips=slips, diagnose=diagnose
    ):
        return False
    print(f"Correct: {label} matches attnlib on all {len(cases)} test inputs.")
    return True


def check_labelled_cases(fn, reference, cases, *, name: str, slips=()) -> bool:
    """Like :func:`check_function` on ``(label, args, hint)`` cases, without the
    success line.

    Returns
    -------
    bool, True when ``fn`` matches ``reference`` on every case (the caller prints
    "Correct").

    Raises
    ------
    WrongKind if ``fn`` is not a function or returns something that is not numbers.
    """
    require_function(fn)
    return _run_cases(fn, reference, cases, name=name, atol=1e-6, slips=slips)
