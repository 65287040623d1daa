"""The softmax chapter's checkers accept right answers and reject wrong ones with a
reason."""

from __future__ import annotations

import math

import numpy as np
from softmax_exercises import SOFTMAX_CASES, check_softmax, check_weights


def loop_softmax(x, axis=-1):
    """An independent reference: plain Python loops, shifted by the maximum."""
    x = np.moveaxis(np.asarray(x, dtype=float), axis, -1)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        m = max(row)
        powers = [math.exp(v - m) for v in row]
        total = sum(powers)
        out[idx] = [p / total for p in powers]
    return np.moveaxis(out, -1, axis)


def textbook_softmax(x, axis=-1):
    powers = np.exp(x)
    return powers / powers.sum(axis=axis, keepdims=True)


def test_hand_worked_weights_are_accepted(capsys):
    # e / (e + 1) and 1 / (e + 1), worked by hand
    e = math.e
    assert check_weights([e / (e + 1), 1 / (e + 1)], [1.0, 0.0])
    assert capsys.readouterr().out.startswith("Correct")


def test_bank_weights_rounded_to_four_decimals_are_accepted():
    assert check_weights([0.6652, 0.2447, 0.0900], [2.0, 1.0, 0.0])
    assert check_weights([0.114, 0.844, 0.042], [2.0, 4.0, 1.0])


def test_wrong_weights_are_rejected_with_the_index_and_a_sum_hint(capsys):
    assert not check_weights([0.5, 0.3, 0.3], [2.0, 1.0, 0.0])
    out = capsys.readouterr().out
    assert out.startswith("Not yet")
    assert "index (2,)" in out
    assert "sum to 1.1000" in out


def test_weights_of_the_wrong_length_are_rejected(capsys):
    assert not check_weights([0.7, 0.3], [2.0, 1.0, 0.0])
    assert "shape (2,)" in capsys.readouterr().out


def test_a_correct_function_passes_every_case(capsys):
    assert check_softmax(loop_softmax)
    assert f"all {len(SOFTMAX_CASES)} inputs" in capsys.readouterr().out


def test_the_textbook_formula_fails_on_large_scores_without_warnings(capsys, recwarn):
    assert not check_softmax(textbook_softmax)
    out = capsys.readouterr().out
    assert "large scores" in out
    assert "subtract the largest score" in out
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_a_function_without_axis_fails_on_the_axis_case(capsys):
    def no_axis(x):
        return loop_softmax(x)

    assert not check_softmax(no_axis)
    out = capsys.readouterr().out
    assert "axis=0" in out and "TypeError" in out


def test_normalising_the_whole_array_fails_on_rows(capsys):
    def whole_array(x, axis=-1):
        x = np.asarray(x, dtype=float)
        p = np.exp(x - x.max())
        return p / p.sum()

    assert not check_softmax(whole_array)
    assert "one row per query" in capsys.readouterr().out


def test_a_function_that_raises_is_reported_not_propagated(capsys):
    def broken(x, axis=-1):
        raise RuntimeError("not written yet")

    assert not check_softmax(broken)
    assert "RuntimeError: not written yet" in capsys.readouterr().out


def test_something_that_is_not_a_function_gets_a_sentence(capsys):
    assert not check_softmax([0.1, 0.9])
    assert capsys.readouterr().out.startswith("Not yet: give the function itself")


def test_the_cases_themselves_match_the_loop_reference():
    from attnlib import softmax

    for _, args, _ in SOFTMAX_CASES:
        np.testing.assert_allclose(softmax(*args), loop_softmax(*args), atol=1e-12)
