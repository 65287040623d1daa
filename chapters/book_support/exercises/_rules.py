"""The rules every public checker follows: the :func:`checker` decorator, its verdicts.

See the package docstring (:mod:`book_support.exercises`) for the rules themselves.
"""

from __future__ import annotations

import contextvars
import functools
import inspect

import numpy as np

from book_support.exercises._display import fmt, placeholder_text

_SHOW = contextvars.ContextVar("show_answer", default=False)


class WrongKind(Exception):
    """An answer of the wrong kind; the checker prints the message as a sentence."""


class Unanswered(Exception):
    """The reader's answer is still the placeholder (``...`` or
    ``NotImplementedError``)."""


def show_answer() -> bool:
    """True while a checker runs with ``show_answer=True`` (the reader asked for the
    answer)."""
    return _SHOW.get()


def is_placeholder(answer) -> bool:
    """True if ``answer`` is ``...`` or a list, tuple or dict holding ``...``.

    Containers are searched to a depth of 4 (a list that contains itself is not
    followed for ever).
    """
    return _holds_ellipsis(answer, 4)


def _holds_ellipsis(answer, depth: int) -> bool:
    if answer is Ellipsis:
        return True
    if depth == 0:
        return False
    if isinstance(answer, dict):
        return any(_holds_ellipsis(v, depth - 1) for v in answer.values())
    if isinstance(answer, (list, tuple)):
        return any(_holds_ellipsis(v, depth - 1) for v in answer)
    if isinstance(answer, np.ndarray) and answer.dtype == object:
        return any(v is Ellipsis for v in answer.flat)
    return False


def reveal(expected, *, name: str = "the answer") -> None:
    """Print the expected value, only when the reader asked for it
    (``show_answer=True``)."""
    if show_answer():
        print(fmt(expected, f"Expected ({name}): "))


def checker(placeholder: str, answers: tuple = ()):
    """Decorate a public checker with the book's common rules (package docstring).

    Parameters
    ----------
    placeholder : str
        What the reader should put in place of ``...``; formatted with the checker's
        bound arguments, e.g. ``"your weights for the scores {scores}"``.
    answers : tuple of str
        Names of the arguments that hold the reader's answer (default: the first one).

    The decorated checker takes an extra keyword ``show_answer=False``. It runs with
    numpy's floating-point warnings off (an answer of 1e308 is judged, not warned
    about), and it carries two attributes the tests use to find every checker:
    ``is_checker`` (True) and ``answer_names`` (the names above).
    """

    def wrap(fn):
        sig = inspect.signature(fn)
        names = tuple(answers) or (next(iter(sig.parameters)),)

        @functools.wraps(fn)
        def inner(*args, show_answer: bool = False, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as exc:
                print(
                    f"Not yet: {fn.__name__} was called with the wrong arguments "
                    f"({exc})."
                )
                return False
            bound.apply_defaults()
            given = [bound.arguments[n] for n in names]
            token = _SHOW.set(bool(show_answer))
            try:
                if any(is_placeholder(a) for a in given):
                    raise Unanswered()
                with np.errstate(all="ignore"):
                    return fn(*args, **kwargs)
            except Unanswered:
                _unanswered(given[0], placeholder_text(placeholder, bound.arguments))
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
        inner.is_checker = True
        inner.answer_names = names
        return inner

    return wrap


def _unanswered(first, what: str) -> None:
    if callable(first):
        name = getattr(first, "__name__", None)
        name = name if isinstance(name, str) else "your function"
        print(
            f"Not answered yet: replace `raise NotImplementedError` in {name} "
            f"with your code ({what})."
        )
    else:
        print(f"Not answered yet: replace `...` with {what}.")
