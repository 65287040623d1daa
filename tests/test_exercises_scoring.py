"""Checkers of the chapter "Scoring"."""

import math

import numpy as np
import pytest
from scoring_exercises import (
    check_additive_score,
    check_dot_product,
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
