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
