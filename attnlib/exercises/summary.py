"""Checkers for the exercises of the chapter "Summary".

Each function prints a one-line verdict and returns True or False.
"""
from __future__ import annotations

import numpy as np

from . import check_function
from ..attention import attention
from ..masks import causal_mask

#: The steps of one attention head, in order (the reader puts a shuffled copy back in order).
PIPELINE_STEPS = ("project", "score", "scale", "mask", "softmax", "weighted sum")


def check_pipeline_order(answer) -> bool:
    """Check that ``answer`` lists :data:`PIPELINE_STEPS` in the order a head applies them."""
    got = [str(s).strip().lower() for s in answer]
    if sorted(got) != sorted(PIPELINE_STEPS):
        print(f"Not yet: use exactly these steps once each: {', '.join(sorted(PIPELINE_STEPS))}.")
        return False
    for i, (g, w) in enumerate(zip(got, PIPELINE_STEPS)):
        if g != w:
            print(f"Not yet: step {i + 1} should be '{w}', not '{g}'.")
            return False
    print("Correct: " + " -> ".join(PIPELINE_STEPS) + ".")
    return True


def _reference(Q, K, V, causal):
    mask = causal_mask(Q.shape[0], K.shape[0]) if causal else None
    return attention(Q, K, V, mask)[0]


def check_attention_function(fn) -> bool:
    """Check the reader's ``fn(Q, K, V, causal) -> output`` against :func:`attnlib.attention`.

    ``causal`` is a bool: when True, query ``i`` may only use keys ``0..i``. Cases are seeded
    random inputs, with and without the causal mask, including ``d_v != d_k``.
    """
    rng = np.random.default_rng(12)
    cases = []
    for n, d_k, d_v in ((3, 2, 2), (5, 4, 3), (7, 8, 8)):
        for causal in (False, True):
            cases.append((rng.normal(size=(n, d_k)), rng.normal(size=(n, d_k)),
                          rng.normal(size=(n, d_v)), causal))
    return check_function(fn, _reference, cases)
