"""Checkers of the learned-and-computed chapter's exercises accept right answers and
explain wrong ones."""

from __future__ import annotations

import learned_and_computed_exercises as learning
import numpy as np


def test_learned_or_computed(capsys):
    right = dict(learning.LEARNED_OR_COMPUTED)
    assert learning.check_learned_or_computed(right)
    assert "Correct" in capsys.readouterr().out
    wrong = dict(right, **{"0.6652": "learned"})
    assert not learning.check_learned_or_computed(wrong)
    out = capsys.readouterr().out
    assert "sorted wrong: '0.6652'" in out and "is computed" not in out
    assert not learning.check_learned_or_computed(wrong, show_answer=True)
    assert "'0.6652' is computed" in capsys.readouterr().out
    assert not learning.check_learned_or_computed({"W_Q": "learned"})
    assert "missing" in capsys.readouterr().out
    assert not learning.check_learned_or_computed(dict(right, W_Q="maybe"))
    capsys.readouterr()
    assert not learning.check_learned_or_computed(["W_Q"])
    assert "give a dict" in capsys.readouterr().out
    # the intended categories, stated independently of the module's table
    for name in ("W_Q", "W_K", "W_V", "W_out", "b_out"):
        assert right[name] == "learned"
    for name in ("scores", "attention weights", "0.6652"):
        assert right[name] == "computed"


def test_score_gradient_by_hand(capsys):
    p = np.exp([2.0, 1.0, 0.0]) / np.exp([2.0, 1.0, 0.0]).sum()
    # p_0 * (e_0 - p), worked by hand with p = (0.6652, 0.2447, 0.0900)
    hand = [0.6652 * (1 - 0.6652), -0.6652 * 0.2447, -0.6652 * 0.0900]
    assert learning.check_score_gradient(hand, p, [1.0, 0.0, 0.0])
    assert not learning.check_score_gradient([1.0, 0.0, 0.0], p, [1.0, 0.0, 0.0])
    assert "Jacobian" in capsys.readouterr().out
    assert not learning.check_score_gradient([0.2, 0.2, 0.2], p, [1.0, 0.0, 0.0])
    assert "sum to 0" in capsys.readouterr().out


def test_a_right_gradient_from_the_printed_weights_is_told_its_sum_is_rounding(capsys):
    # ex-score-gradient as a reader works it: the weights as printed, four decimals
    # (they sum to 0.9999), the upstream gradient (0, 1, 0), products left unrounded
    p = np.exp([2.0, 1.0, 0.0]) / np.exp([2.0, 1.0, 0.0]).sum()
    printed = [0.6652, 0.2447, 0.0900]
    hand = [-0.6652 * 0.2447, 0.2447 * (1 - 0.2447), -0.0900 * 0.2447]
    assert abs(sum(hand) - 0.2447 * (1 - sum(printed))) < 1e-12  # about 2.4e-5, not 0
    assert learning.check_score_gradient(hand, p, [0.0, 1.0, 0.0])
    out = capsys.readouterr().out
    assert out.startswith("Correct")
    assert "sum to 2.4e-05 rather than exactly 0" in out
    assert "rounding, not a mistake" in out and "sum to 0.9999, not 1" in out
    # the solution's rounded entries sum to 0 exactly: no remark
    assert learning.check_score_gradient([-0.1628, 0.1848, -0.0220], p, [0, 1, 0])
    assert "rounding" not in capsys.readouterr().out


def test_entries_rounded_from_full_precision_weights_are_not_blamed_on_the_printed_ones(
    capsys,
):
    # worked from the weights in full precision, entries rounded to five places
    p = np.exp([2.0, 1.0, 0.0]) / np.exp([2.0, 1.0, 0.0]).sum()
    exact = p * (np.array([0.0, 1.0, 0.0]) - p[1])
    hand = [-0.1628, 0.18484, -0.02203]
    assert np.allclose(hand, exact, atol=1e-4) and abs(sum(hand) - 1e-5) < 1e-12
    assert learning.check_score_gradient(hand, p, [0.0, 1.0, 0.0])
    out = capsys.readouterr().out
    assert "sum to 1.0e-05 rather than exactly 0" in out
    assert "your entries are rounded" in out and "0.9999" not in out


def test_softmax_jacobian_function(capsys):
    assert learning.check_softmax_jacobian(lambda a: np.diag(a) - np.outer(a, a))
    assert not learning.check_softmax_jacobian(lambda a: np.diag(a))
    assert "subtract the outer product" in capsys.readouterr().out
    assert not learning.check_softmax_jacobian(lambda a: np.outer(a, a).T - np.diag(a))
    assert not learning.check_softmax_jacobian(lambda p: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert not learning.check_softmax_jacobian(lambda p: np.zeros(3))
    capsys.readouterr()
    assert not learning.check_softmax_jacobian("diag(a) - a^T a")
    assert "give the function itself" in capsys.readouterr().out
