"""Issue 26, item 2: no checker raises on a learner's answer.

Every checker of :mod:`book_support.exercises` is found by introspection (the
:func:`~book_support.exercises.checker` decorator marks it), so a new checker is covered
without editing this file; only the book's own arguments of a new checker (the scores
an exercise is about, say) must be added to :data:`BOOK_ARGUMENTS`, and the test says
so. Hypothesis then feeds every answer argument random objects: numbers (NaN, inf,
-0.0, 1e308, integers too large for a float), complex numbers, text, bytes, None,
arrays of every dtype and shape, ragged and nested lists, dicts (with the right keys
and random values too), objects that refuse every conversion, and functions of the
wrong arity, that raise, return None, the wrong kind, the wrong number of values or
NaN. The checker must print a verdict sentence and return a bool: never a traceback,
never a warning.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import warnings

import numpy as np
import pytest
from book_files import exercise_modules
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as npst

VERDICTS = ("Correct", "Not yet", "Not answered yet")

#: The flooding sentence of the masks chapter and its causal mask.
FLOOD = ["The", "bank", "flooded", "after", "the", "storm", "."]

#: The book's own arguments of every checker that needs some (what the chapter passes
#: besides the reader's answer), by qualified name.
BOOK_ARGUMENTS = {
    "learned_and_computed_exercises.check_score_gradient": {
        "weights": [0.6652, 0.2447, 0.0900],
        "upstream": [1.0, 0.0, -1.0],
    },
    "query_key_value_exercises.check_projection_shapes": {
        "n": 5,
        "d": 6,
        "d_k": 4,
        "d_v": 3,
    },
    "query_key_value_exercises.check_head_output": {
        "query": [1.0, 0.0],
        "keys": [[1.0, 0.0], [0.0, 1.0]],
        "values": [[1.0, 2.0], [3.0, 4.0]],
    },
    "scoring_exercises.check_dot_product": {"q": [1.0, 2.0], "k": [3.0, -1.0]},
    "scoring_exercises.check_scaled_score": {"raw_score": 24.0, "d_k": 16},
    "scoring_exercises.check_raw_score_std": {"d_k": 16, "raw_score": 24},
    "scoring_exercises.check_additive_score": {
        "q": [1.0, 0.0],
        "k": [0.0, 1.0],
        "W_q": np.eye(2),
        "W_k": np.eye(2),
        "w_v": [1.0, 1.0],
    },
    "softmax_exercises.check_weights": {"scores": [2.0, 1.0, 0.0]},
    "values_exercises.check_output": {
        "weights": [0.2, 0.3, 0.5],
        "values": [[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]],
    },
    "values_exercises.check_shapes": {"n": 10, "d": 16, "d_k": 8, "d_v": 4},
    "heads_exercises.check_head_weights": {
        "scores": [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]]
    },
    "heads_exercises.check_head_shapes": {
        "batch": 2,
        "length": 5,
        "d_model": 12,
        "num_heads": 3,
    },
    "masks_exercises.check_visible": {
        "query": "after",
        "tokens": FLOOD,
        "mask": np.tril(np.ones((7, 7), dtype=bool)),
    },
    "masks_exercises.check_padding_mask": {"valid_lens": [3, 5], "n_keys": 5},
    "order_and_position_exercises.check_encoding_entries": {
        "entries": [(1, 0), (2, 1), (3, 2)]
    },
    "order_and_position_exercises.check_reordered_output": {
        "tokens": "the dog bit the man".split(),
        "reordered": "the man bit the dog".split(),
    },
    "layer.check_layer_shapes": {
        "batch": 2,
        "length": 5,
        "d_model": 12,
        "num_heads": 3,
        "d_ff": 24,
    },
    "layer.check_parameter_count": {"d_model": 384, "d_ff": 1536},
    "layer.check_crossover": {"d": 512},
    "cost_exercises.check_score_entries": {"n": 2048},
    "cost_exercises.check_score_memory": {"n": 4096, "heads": 32, "bytes_per_entry": 2},
    "cost_exercises.check_skipped_tiles": {"n": 16, "block": 4},
    "learning_exercises.check_one_step": {
        "x": 2.0,
        "y": 1,
        "w": 0.0,
        "b": 0.0,
        "learning_rate": 0.5,
    },
    "interpretability_exercises.strongest_head_answer": {
        "sentence": "The animal didn't cross the street because it was too tired.",
        "query": "it",
        "key": "animal",
    },
}


def checker_modules():
    """Every module of exercise checkers: each chapter's ``<name>_exercises.py`` beside
    its notebook, and the shared ones of book_support.exercises (not the framework,
    not quiz)."""
    yield from exercise_modules()


def all_checkers() -> dict:
    found = {}
    for module in checker_modules():
        for name, obj in vars(module).items():
            if getattr(obj, "is_checker", False) and obj.__module__ == module.__name__:
                found[f"{module.__name__.rsplit('.', 1)[-1]}.{name}"] = obj
    return found


CHECKERS = all_checkers()


def book_arguments(qualname: str, fn) -> dict:
    """The arguments a chapter passes besides the answer; fails for a new checker."""
    given_args = BOOK_ARGUMENTS.get(qualname, {})
    needed = [
        p.name
        for p in inspect.signature(fn).parameters.values()
        if p.default is p.empty
        and p.name not in fn.answer_names
        and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    missing = [n for n in needed if n not in given_args]
    assert not missing, (
        f"{qualname} is a new checker: add its book arguments {missing} to "
        "BOOK_ARGUMENTS in tests/test_exercises_never_raise.py"
    )
    return given_args


# --- random answers ---------------------------------------------------------------


class Refuses:
    """An object that refuses every conversion, comparison and description."""

    def _no(self, *args, **kwargs):
        raise RuntimeError("this object refuses")

    __float__ = __int__ = __index__ = __len__ = __iter__ = __array__ = _no
    __bool__ = __eq__ = __lt__ = __str__ = __repr__ = __format__ = __getitem__ = _no
    __hash__ = object.__hash__


def _words() -> list:
    """Every word a chapter module names in a tuple or dict (step names, shape names,
    quantities, cases), and the words its checkers expect."""
    words = {"self", "cross", "learned", "computed", "Q", "K", "V", "scores", "output"}
    for module in checker_modules():
        for key, value in vars(module).items():
            if isinstance(value, (tuple, dict)) and not key.startswith("_"):
                words |= {w for w in value if isinstance(w, str) and len(w) < 20}
    return sorted(words)


WORDS = _words()
SPECIAL_NUMBERS = [math.nan, math.inf, -math.inf, -0.0, 1e308, -1e308, 5e-324, 10**400]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(),
    st.sampled_from(SPECIAL_NUMBERS),
    st.complex_numbers(),
    st.text(max_size=8),
    st.sampled_from(WORDS),
    st.binary(max_size=4),
    st.builds(Refuses),
    st.just(Ellipsis),
)
arrays = npst.arrays(
    dtype=st.one_of(
        npst.floating_dtypes(),
        npst.integer_dtypes(),
        npst.boolean_dtypes(),
        npst.complex_number_dtypes(),
        npst.unicode_string_dtypes(max_len=3),
        npst.datetime64_dtypes(),
    ),
    shape=npst.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
)


def _with_a_refusing_object(items) -> np.ndarray:
    out = np.empty(len(items) + 1, dtype=object)
    out[:-1] = items
    out[-1] = Refuses()
    return out


object_arrays = st.builds(
    _with_a_refusing_object, st.lists(st.integers(-3, 3), max_size=3)
)
shapes = st.tuples(*[st.integers(0, 12)] * 2) | st.tuples(*[st.integers(0, 12)] * 4)
leaves = st.one_of(scalars, arrays, object_arrays, shapes)
values = st.recursive(
    leaves,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.tuples(children, children),
        st.dictionaries(
            st.sampled_from(WORDS) | st.text(max_size=3) | st.integers(0, 3),
            children,
            max_size=8,
        ),
        st.lists(st.sampled_from(WORDS), max_size=8),
    ),
    max_leaves=10,
)
full_dicts = st.builds(
    dict, st.lists(st.tuples(st.sampled_from(WORDS), leaves), min_size=5, max_size=12)
)


def _returning(value):
    return lambda *args, **kwargs: value


def _raising(error):
    def fn(*args, **kwargs):
        raise error

    return fn


def _like_first(fill):
    return lambda *args, **kwargs: np.full(np.shape(args[0]) if args else (), fill)


def _repeat_first(times):
    return lambda *args, **kwargs: tuple([args[0] if args else 0.0] * times)


def no_arguments():
    return 0.0


def one_argument(x):
    return x


def seven_arguments(a, b, c, d, e, f, g):
    return a


functions = st.one_of(
    st.builds(_returning, values),
    st.builds(
        _raising,
        st.sampled_from(
            [ZeroDivisionError("zero"), ValueError("bad"), KeyError("k"), MemoryError()]
        ),
    ),
    st.builds(_like_first, st.floats() | st.sampled_from(SPECIAL_NUMBERS)),
    st.builds(_repeat_first, st.integers(2, 3)),
    st.sampled_from([no_arguments, one_argument, seven_arguments, Refuses, len]),
)
answers = st.one_of(values, full_dicts, functions)


@pytest.mark.parametrize("qualname", sorted(CHECKERS))
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_no_checker_raises_on_any_answer(qualname, data):
    fn = CHECKERS[qualname]
    kwargs = dict(book_arguments(qualname, fn))
    for name in fn.answer_names:
        kwargs[name] = data.draw(answers, label=name)
    out = io.StringIO()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with contextlib.redirect_stdout(out):
            result = fn(**kwargs)
    text = out.getvalue()
    assert isinstance(result, bool), (qualname, result)
    assert text.startswith(VERDICTS), (qualname, text)
    if result:
        assert "Correct" in text and "Not yet" not in text, (qualname, text)
    else:
        assert "Not yet" in text or "Not answered yet" in text, (qualname, text)
    assert "Traceback" not in text


def test_every_checker_is_found_and_every_book_argument_is_used():
    assert len(CHECKERS) >= 40
    for qualname in BOOK_ARGUMENTS:
        fn = CHECKERS[qualname]
        assert set(BOOK_ARGUMENTS[qualname]) <= set(inspect.signature(fn).parameters)


def test_every_public_checker_of_a_chapter_module_carries_the_decorator():
    """A checker written without :func:`checker` would escape the test above."""
    for module in checker_modules():
        for name, obj in vars(module).items():
            if (
                inspect.isfunction(obj)
                and obj.__module__ == module.__name__
                and (
                    name.startswith("check_") or name.endswith(("_answer", "_function"))
                )
            ):
                assert getattr(obj, "is_checker", False), f"{module.__name__}.{name}"
