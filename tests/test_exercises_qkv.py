"""Checkers of the chapter "Query, key and value"."""

import math

import numpy as np
from query_key_value_exercises import (
    check_head_output,
    check_one_head,
    check_projection_shapes,
)


def test_projection_shapes(capsys):
    good = {"Q": (5, 3), "K": (5, 3), "V": (5, 2), "scores": (5, 5), "output": (5, 2)}
    assert check_projection_shapes(good, n=5, d=4, d_k=3, d_v=2)
    assert not check_projection_shapes({**good, "V": (5, 3)}, n=5, d=4, d_k=3, d_v=2)
    assert not check_projection_shapes(
        {k: v for k, v in good.items() if k != "scores"}, 5, 4, 3, 2
    )
    assert not check_projection_shapes({**good, "Q": 5}, 5, 4, 3, 2)
    capsys.readouterr()
    assert not check_projection_shapes([(5, 3)], 5, 4, 3, 2)
    assert "give a dict" in capsys.readouterr().out


def test_head_output_on_the_bank_example():
    # Scores 2, 1, 0 -> weights e^s / sum e^s, computed here with math.exp.
    e = [math.exp(2), math.exp(1), math.exp(0)]
    w = [x / sum(e) for x in e]
    expected = [2 * w[0] + w[2], 2 * w[1] + w[2]]
    q, k, v = [math.sqrt(2), 0], [[2, 0], [1, 1], [0, 1]], [[2, 0], [0, 2], [1, 1]]
    assert check_head_output(expected, q, k, v)
    assert check_head_output([1.4205, 0.5795], q, k, v)
    assert not check_head_output([1.0, 1.0], q, k, v)


def test_one_head_accepts_a_loop_implementation_and_rejects_a_wrong_one():
    def loop_head(X, W_Q, W_K, W_V):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        out = np.zeros((X.shape[0], V.shape[1]))
        for i in range(X.shape[0]):
            s = np.array([Q[i] @ K[j] for j in range(X.shape[0])]) / math.sqrt(
                Q.shape[1]
            )
            w = np.exp(s - s.max())
            w /= w.sum()
            out[i] = sum(w[j] * V[j] for j in range(X.shape[0]))
        return out

    def unscaled_head(X, W_Q, W_K, W_V):
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V
        s = Q @ K.T
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        return w @ V

    def crashing_head(X, W_Q, W_K, W_V):
        raise RuntimeError("oops")

    assert check_one_head(loop_head)
    assert not check_one_head(unscaled_head)
    assert not check_one_head(crashing_head)
