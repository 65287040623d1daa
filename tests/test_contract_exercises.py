"""Issue 26: the contract of the public functions of ``book_support.exercises`` that are
not checkers (the checking framework, the reference ``norm_share``, the self-check
questions' helpers).

The checkers' own contract (never a traceback on a learner's answer; every named slip
caught) is ``tests/test_exercises_never_raise.py`` and
``tests/test_exercises_slips.py``.
Here, one row per function (:data:`ROWS`): a valid call gives the documented result; a
learner's answer of the wrong kind raises :class:`~book_support.exercises.WrongKind`
with a sentence naming what was expected (the checker prints it), the book's own bad
arguments the documented error; extreme finite answers (1e308, 1e-300) are judged
without a warning.
"""

from __future__ import annotations

import functools

import interpretability_exercises as interpretability
import learning_exercises as primer
import numpy as np
import pytest
from contract_rows import Row, check_row, f64

import book_support.exercises as ex
from book_support.exercises import WrongKind, quiz

BIG, TINY = 1e308, 1e-300


class Refuses:
    def __repr__(self):
        raise RuntimeError("no repr")


def _always_true(*args) -> bool:
    return True


@ex.checker("a number")
def sample_checker(answer, target=1.0):
    return ex.check_close(answer, target)


def quietly(call):
    """``call()`` with the checkers' printing swallowed."""

    def run():
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):
            return call()

    return run


@functools.cache
def river():
    from attnlib.models import minilm

    return minilm.forward("The fisherman repaired his net beside the bank.")


ROWS = {
    "book_support.exercises.as_floats": Row(
        ok=lambda: ex.as_floats([1, 2], "x"),
        check=lambda a: f64(a) and a.tolist() == [1.0, 2.0],
        bad=[
            (lambda: ex.as_floats("1, 2", "x"), WrongKind, "x should be a number"),
            (lambda: ex.as_floats([1j], "x"), WrongKind, "x should hold real numbers"),
            (
                lambda: ex.as_floats([1, "a"], "x"),
                WrongKind,
                "x should contain numbers",
            ),
            (lambda: ex.as_floats([1, 2], "x", shape=(3,)), WrongKind, "x should be 3"),
            (lambda: ex.as_floats(10**400, "x"), WrongKind, "x should contain numbers"),
        ],
        extreme=lambda: ex.as_floats([BIG, -BIG, TINY], "x"),
    ),
    "book_support.exercises.as_shape": Row(
        ok=lambda: ex.as_shape([3, 2.0], "Q"),
        check=lambda s: s == (3, 2),
        bad=[
            (lambda: ex.as_shape("3x2", "Q"), WrongKind, "the shape of Q"),
            (lambda: ex.as_shape((True, 2), "Q"), WrongKind, "the shape of Q"),
            (lambda: ex.as_shape((2.5,), "Q"), WrongKind, "the shape of Q"),
        ],
        extreme=lambda: ex.as_shape((10**18, 1e15), "Q"),
    ),
    "book_support.exercises.as_texts": Row(
        ok=lambda: ex.as_texts(("The", "bank"), "the tokens", "['The']"),
        check=lambda t: t == ["The", "bank"],
        bad=[
            (lambda: ex.as_texts("The bank", "the tokens", "[]"), WrongKind, "not one"),
            (lambda: ex.as_texts(["The", 3], "the tokens", "[]"), WrongKind, "item 1"),
            (lambda: ex.as_texts(None, "the tokens", "[]"), WrongKind, "the tokens"),
        ],
    ),
    "book_support.exercises.as_word": Row(
        ok=lambda: (ex.as_word(" Self "), ex.as_word(3)),
        check=lambda r: r == ("self", None),
    ),
    "book_support.exercises.check_close": Row(
        ok=quietly(lambda: ex.check_close([0.5, 0.25], [0.5, 0.25])),
        check=lambda r: r is True,
        bad=[
            (
                lambda: ex.check_close("half", 0.5, name="the weight"),
                WrongKind,
                "the weight",
            )
        ],
        extreme=quietly(lambda: ex.check_close([BIG, -BIG], [TINY, 1.0], rtol=0.5)),
    ),
    "book_support.exercises.check_shape_dict": Row(
        ok=quietly(
            lambda: ex.check_shape_dict(
                {"X": (2, 3)}, {"X": (2, 3)}, what="c", context="n=2"
            )
        ),
        check=lambda r: r is True,
        bad=[
            (
                lambda: ex.check_shape_dict(
                    [(2, 3)], {"X": (2, 3)}, what="c", context=""
                ),
                WrongKind,
                "c expects a dict",
            ),
            (
                lambda: ex.check_shape_dict(
                    {"X": "2x3"}, {"X": (2, 3)}, what="c", context=""
                ),
                WrongKind,
                "shape of X",
            ),
        ],
    ),
    "book_support.exercises.diagnose_close": Row(
        ok=lambda: ex.diagnose_close(
            np.array([25.0, 75.0]), np.array([0.25, 0.75]), atol=1e-3
        ),
        check=lambda h: "percentages" in h,
        extreme=lambda: ex.diagnose_close(np.array([BIG]), np.array([BIG]), atol=1e-3),
    ),
    "book_support.exercises.shape_relation": Row(
        ok=lambda: (
            ex.shape_relation((3, 2), (2, 3)),
            ex.shape_relation((2, 3), (2, 3)),
        ),
        check=lambda r: "transpose" in r[0] and r[1] is None,
    ),
    "book_support.exercises.describe": Row(
        ok=lambda: ex.describe((np.ones((2, 3)), 3.0, True), ["x", "n"]),
        check=lambda s: s == "inputs x of shape (2, 3), n=3, argument 3=True",
        extreme=lambda: ex.describe((BIG,), ["x"]),
    ),
    "book_support.exercises.fmt": Row(
        ok=lambda: ex.fmt([0.5, 1.0, -0.0], "w = "),
        check=lambda s: s == "w = [0.5, 1, 0]",
        extreme=lambda: ex.fmt(np.array([[BIG, TINY], [-BIG, np.inf]])),
    ),
    "book_support.exercises.shown": Row(
        ok=lambda: (ex.shown("abc"), ex.shown("x" * 100), ex.shown(Refuses())),
        check=lambda r: r[0] == "'abc'" and len(r[1]) == 60 and r[2] == "a Refuses",
    ),
    "book_support.exercises.try_reader": Row(
        ok=quietly(
            lambda: (
                ex.try_reader(lambda: 3, label="f"),
                ex.try_reader(lambda: 1 / 0, label="f"),
            )
        ),
        check=lambda r: r == ((True, 3), (False, None)),
        bad=[
            (
                lambda: ex.try_reader(_raise_not_implemented, label="f"),
                ex.Unanswered,
                "",
            )
        ],
    ),
    "book_support.exercises.require_function": Row(
        ok=lambda: ex.require_function(len),
        check=lambda r: r is None,
        bad=[(lambda: ex.require_function("f"), WrongKind, "give the function itself")],
    ),
    "book_support.exercises.function_name": Row(
        ok=lambda: (
            ex.function_name(len),
            ex.function_name(lambda: 0),
            ex.function_name(3, "x"),
        ),
        check=lambda r: r == ("len", "your function", "x"),
    ),
    "book_support.exercises.returned_floats": Row(
        ok=lambda: ex.returned_floats([1, 2], "f"),
        check=lambda a: f64(a),
        bad=[
            (
                lambda: ex.returned_floats(None, "f", " for x"),
                WrongKind,
                "f returned None for x",
            ),
            (
                lambda: ex.returned_floats((np.ones(2), np.ones(3)), "f"),
                WrongKind,
                "2 values",
            ),
            (lambda: ex.returned_floats("a", "f"), WrongKind, "what f returned"),
        ],
        extreme=lambda: ex.returned_floats((BIG, TINY), "f"),
    ),
    "book_support.exercises.returned_array": Row(
        ok=lambda: ex.returned_array([[True]], "f"),
        check=lambda a: a.dtype == bool,
        bad=[
            (lambda: ex.returned_array(None, "f"), WrongKind, "f returned None"),
            (lambda: ex.returned_array([[1], [1, 2]], "f"), WrongKind, "not an array"),
        ],
    ),
    "book_support.exercises.check_function": Row(
        ok=quietly(
            lambda: ex.check_function(np.tanh, np.tanh, [(np.ones(2),)], name="tanh")
        ),
        check=lambda r: r is True,
        bad=[
            (
                lambda: ex.check_function("tanh", np.tanh, []),
                WrongKind,
                "give the function",
            )
        ],
        extreme=quietly(
            lambda: ex.check_function(np.exp, np.tanh, [(np.full(2, 1e3),)])
        ),
    ),
    "book_support.exercises.check_labelled_cases": Row(
        ok=quietly(
            lambda: ex.check_labelled_cases(
                abs, abs, [("-1", (-1.0,), None)], name="abs"
            )
        ),
        check=lambda r: r is True,
        bad=[
            (
                lambda: ex.check_labelled_cases(None, abs, [], name="abs"),
                WrongKind,
                "give the function",
            )
        ],
    ),
    "book_support.exercises.checker": Row(
        ok=lambda: (
            sample_checker.is_checker,
            sample_checker.answer_names,
            quietly(lambda: sample_checker(1.0))(),
        ),
        check=lambda r: r == (True, ("answer",), True),
        extreme=quietly(lambda: sample_checker(BIG, target=-BIG)),
    ),
    "book_support.exercises.is_placeholder": Row(
        ok=lambda: (ex.is_placeholder([1, ...]), ex.is_placeholder({"a": 1})),
        check=lambda r: r == (True, False),
        extreme=lambda: ex.is_placeholder(_self_containing()),
    ),
    "book_support.exercises.reveal": Row(
        ok=quietly(lambda: ex.reveal([1.0])),
        check=lambda r: r is None,
    ),
    "book_support.exercises.show_answer": Row(
        ok=lambda: (
            ex.show_answer(),
            quietly(lambda: sample_checker(0.0, show_answer=True))(),
        ),
        check=lambda r: r == (False, False),
    ),
    "interpretability_exercises.norm_share": Row(
        ok=lambda: interpretability.norm_share(river(), 2, 0),
        check=lambda v: isinstance(v, float) and 0 < v < 1,
        bad=[(lambda: interpretability.norm_share(river(), 9, 0), IndexError, "9")],
    ),
    "learning_exercises.one_step": Row(
        ok=lambda: primer.one_step(2.0, 1, 0.0, 0.0, 0.5),
        check=lambda r: r == [0.5, 0.25],  # p = 0.5, dL/dz = -0.5, by hand
        bad=[
            (
                lambda: primer.one_step("x", 1, 0.0, 0.0, 0.5),
                TypeError,
                "x must be a number",
            )
        ],
        extreme=lambda: primer.one_step(BIG, 1, 0.0, 0.0, 1.0),
    ),
    "book_support.exercises.quiz.numeric": Row(
        ok=lambda: quiz.numeric("Q?", 0.25, tolerance=1e-3, hint="h"),
        check=lambda q: q["type"] == "numeric" and q["question"].startswith("Q?"),
        bad=[
            (
                lambda: quiz.numeric("Q?", "a", tolerance=1e-3, hint="h"),
                TypeError,
                "answer",
            ),
            (
                lambda: quiz.numeric("Q?", np.inf, tolerance=1e-3, hint="h"),
                ValueError,
                "answer",
            ),
        ],
        extreme=lambda: quiz.numeric("Q?", BIG, tolerance=TINY, hint="h"),
    ),
    "book_support.exercises.quiz.choice": Row(
        ok=lambda: quiz.choice("Q?", [("a", True, "why"), ("b", False, "why not")]),
        check=lambda q: q["type"] == "multiple_choice" and len(q["answers"]) == 2,
        bad=[
            (lambda: quiz.choice("Q?", [("a", True, "x")]), ValueError, "two options")
        ],
    ),
    "book_support.exercises.quiz.quiz_id": Row(
        ok=lambda: quiz.quiz_id("softmax.a"),
        check=lambda s: s == "attnquiz_softmax_a",
    ),
    "book_support.exercises.quiz.rounded": Row(
        ok=lambda: quiz.rounded(np.float32(0.123456)),
        check=lambda v: type(v) is float and v == 0.1235,
        bad=[(lambda: quiz.rounded("x"), ValueError, "x")],
        extreme=lambda: quiz.rounded(BIG),
    ),
}


def _raise_not_implemented():
    raise NotImplementedError


def _self_containing() -> list:
    a = [1]
    a.append(a)
    return a


@pytest.mark.parametrize("qualname", sorted(ROWS))
def test_contract(qualname):
    check_row(qualname, ROWS[qualname])
