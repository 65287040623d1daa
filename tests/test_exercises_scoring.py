"""Checkers of the chapter "Scoring"."""

import math

import numpy as np
import pytest
from scoring_exercises import (
    check_additive_score,
    check_dot_product,
    check_raw_score_std,
    check_scaled_score,
    check_score_function,
)


def test_dot_product():
    assert check_dot_product(11, [1, 2], [3, 4])  # 1*3 + 2*4
    assert not check_dot_product(10, [1, 2], [3, 4])
    with pytest.raises(ValueError):
        check_dot_product(1, [1, 2], [3, 4, 5])


def test_scaled_score():
    assert check_scaled_score(5, 40, 64)  # 40 / 8
    assert not check_scaled_score(40 / 64, 40, 64)
    with pytest.raises(ValueError):
        check_scaled_score(1, 40, 0)


@pytest.mark.parametrize(
    "answer, words",
    [
        (16, "that is the variance, d_k = 16"),  # d_k itself, not its square root
        (1, "standard deviation of the scaled scores"),
        (2, "square root twice"),  # sqrt(sqrt(16))
        # 6 with the raw score unknown to the checker: the general hint
        (6, "add up the variances of the d_k products"),
    ],
)
def test_raw_score_std_names_the_mistake(answer, words, capsys):
    # ex-scoring-scale: d_k = 16 products q_i k_i of variance 1 each, so the raw
    # variance is 16 and its standard deviation 4
    assert check_raw_score_std(4, d_k=16)
    assert capsys.readouterr().out.startswith("Correct")
    assert not check_raw_score_std(answer, d_k=16)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and words in out and "Expected" not in out


def test_raw_score_std_names_the_scaled_score_given_instead(capsys):
    # ex-scoring-scale: the raw score 24 divided by sqrt(16), the first answer of the
    # exercise, given again as the standard deviation
    assert not check_raw_score_std(24 / 4, d_k=16, raw_score=24)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and "that is the scaled score" in out
    assert check_raw_score_std(4, d_k=16, raw_score=24)


def test_raw_score_std_with_one_component_accepts_one(capsys):
    # d_k = 1: variance 1, standard deviation 1; no slip may claim the right answer
    assert check_raw_score_std(1, d_k=1)
    with pytest.raises(ValueError, match="d_k"):
        check_raw_score_std(1, d_k=0)


def test_score_function():
    def loop_scaled(Q, K):
        return np.array(
            [
                [sum(a * b for a, b in zip(q, k)) / math.sqrt(len(q)) for k in K]
                for q in Q
            ]
        )

    assert check_score_function(loop_scaled, "scaled")
    assert not check_score_function(loop_scaled, "dot")
    assert check_score_function(lambda Q, K: Q @ K.T, "dot")
    with pytest.raises(ValueError):
        check_score_function(loop_scaled, "cosine")


def test_additive_score_by_hand():
    q, k = [1.0, 0.0], [0.0, 1.0]
    W_q = [[0.5, -1.0], [2.0, 0.0]]
    W_k = [[1.0, 1.0], [0.5, 0.25]]
    w_v = [1.0, -2.0]
    # q W_q = [0.5, -1.0]; k W_k = [0.5, 0.25]; tanh([1.0, -0.75]) . [1, -2]
    expected = math.tanh(1.0) - 2 * math.tanh(-0.75)
    assert check_additive_score(expected, q, k, W_q, W_k, w_v)
    assert not check_additive_score(0.0, q, k, W_q, W_k, w_v)
