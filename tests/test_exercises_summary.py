"""Checkers of the chapter "Summary"."""

import math

import numpy as np
from summary_exercises import (
    PIPELINE_STEPS,
    check_attention_function,
    check_pipeline_order,
)


def test_pipeline_order():
    assert check_pipeline_order(list(PIPELINE_STEPS))
    assert check_pipeline_order(
        ["Project", "score", "scale", "mask", "softmax", "weighted sum"]
    )
    assert not check_pipeline_order(
        ["project", "score", "softmax", "scale", "mask", "weighted sum"]
    )
    assert not check_pipeline_order(["score", "softmax"])


def test_attention_function_written_with_loops():
    def loop_attention(Q, K, V, causal):
        n_q, n_k = Q.shape[0], K.shape[0]
        out = np.zeros((n_q, V.shape[1]))
        for i in range(n_q):
            allowed = [j for j in range(n_k) if not causal or j <= i]
            s = [float(Q[i] @ K[j]) / math.sqrt(Q.shape[1]) for j in allowed]
            m = max(s)
            e = [math.exp(x - m) for x in s]
            for j, ej in zip(allowed, e):
                out[i] += ej / sum(e) * V[j]
        return out

    def ignores_mask(Q, K, V, causal):
        return loop_attention(Q, K, V, False)

    assert check_attention_function(loop_attention)
    assert not check_attention_function(ignores_mask)


def test_pipeline_orders_that_give_the_same_weights_are_accepted():
    # scaling the queries first is right: (Q / sqrt(d_k)) K^T = Q K^T / sqrt(d_k), and
    # scaling after masking leaves -inf at -inf
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(5, 4)), rng.normal(size=(6, 4))
    np.testing.assert_allclose((Q / 2.0) @ K.T, Q @ K.T / 2.0, rtol=1e-13)
    for order in (
        ["project", "score", "scale", "mask", "softmax", "weighted sum"],
        ["project", "scale", "score", "mask", "softmax", "weighted sum"],
        ["project", "score", "mask", "scale", "softmax", "weighted sum"],
    ):
        assert check_pipeline_order(order), order


def test_pipeline_orders_that_change_the_result_are_diagnosed(capsys):
    for order, says in (
        (["scale", "project", "score", "mask", "softmax", "weighted sum"], "values"),
        (
            ["project", "score", "mask", "softmax", "scale", "weighted sum"],
            "not linear",
        ),
        (
            ["project", "score", "scale", "softmax", "mask", "weighted sum"],
            "before the",
        ),
    ):
        capsys.readouterr()
        assert not check_pipeline_order(order), order
        assert says in capsys.readouterr().out, order
