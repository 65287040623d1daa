"""Checkers for the exercises of chapter 11 (interpretability, on all-MiniLM-L6-v2).

Each function recomputes the answer with attnlib (``attnlib.minilm``), prints a one-line verdict
and returns ``True`` or ``False``. A wrong answer never raises; an answer of the wrong kind
(say, a string where a number is expected) raises ``TypeError`` saying what was expected.
"""
from __future__ import annotations

import numbers

import numpy as np

from .. import minilm
from . import check_close, try_reader

#: The exercise's two keys: weights and transformed vectors f(x).
NORM_EXERCISE_WEIGHTS = np.array([0.6, 0.1])
NORM_EXERCISE_VECTORS = np.array([[0.3, 0.4], [3.0, 4.0]])


def weighted_norms_answer(answer) -> bool:
    """Check the two lengths ``||alpha_1 f(x_1)||`` and ``||alpha_2 f(x_2)||`` of the exercise.

    Parameters
    ----------
    answer : sequence of 2 real numbers

    Returns
    -------
    bool
    """
    want = minilm.weighted_norms(NORM_EXERCISE_WEIGHTS[None, :], NORM_EXERCISE_VECTORS)[0]
    got = np.asarray(answer, dtype=float)
    if got.shape == want.shape and np.allclose(got, NORM_EXERCISE_WEIGHTS, atol=1e-9):
        print("Not yet: these are the weights themselves; multiply each by the length "
              "of its vector f(x).")
        return False
    return check_close(got, want, name="your two lengths")


def _as_index(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
        raise TypeError(f"{name} must be an integer (counted from 0); got {type(value).__name__}")
    return int(value)


def strongest_head_answer(sentence: str, query: str, key: str, layer, head) -> bool:
    """Check the (layer, head) in which ``query`` puts the most weight on ``key``.

    Parameters
    ----------
    sentence : str
    query, key : str, tokens of the sentence (their first occurrence is used)
    layer, head : int, counted from 0

    Returns
    -------
    bool
    """
    layer, head = _as_index(layer, "layer"), _as_index(head, "head")
    if not (0 <= layer < minilm.NUM_LAYERS and 0 <= head < minilm.NUM_HEADS):
        print(f"Not yet: layers run from 0 to {minilm.NUM_LAYERS - 1} and heads from 0 to "
              f"{minilm.NUM_HEADS - 1}; got layer {layer}, head {head}.")
        return False
    out = minilm.forward(sentence)
    w = out.attention[:, :, out.index(query), out.index(key)]
    best = np.unravel_index(int(np.argmax(w)), w.shape)
    if (layer, head) == (int(best[0]), int(best[1])):
        print(f"Correct: layer {layer}, head {head} gives '{key}' a weight of {w[layer, head]:.3f}.")
        return True
    print(f"Not yet: in layer {layer}, head {head} the weight from '{query}' to '{key}' is "
          f"{w[layer, head]:.3f}; another head gives more (up to {w.max():.3f}). "
          "Take np.argmax over the (6, 12) table of weights and unravel it.")
    return False


def norm_share(out, layer: int, key: int) -> float:
    """Reference: mean over heads and queries of ``||a_ij f(x_j)|| / sum_k ||a_ik f(x_k)||``, j = key.

    Source: Kobayashi et al. (2020), section 3.
    """
    n = out.weighted_norms()[layer]
    return float((n / n.sum(axis=-1, keepdims=True))[:, :, key].mean())


def norm_share_function(fn) -> bool:
    """Check the reader's ``norm_share(out, layer, key)`` on a few layers and keys.

    Returns
    -------
    bool, True when every case agrees with :func:`norm_share` to 1e-6.
    """
    out = minilm.forward("The fisherman repaired his net beside the bank.")
    last = len(out.tokens) - 1
    for layer, key in ((2, 0), (0, 2), (5, last), (3, 8)):
        want = norm_share(out, layer, key)
        ok, got = try_reader(lambda: float(fn(out, layer, key)),
                             label=f"norm_share(out, {layer}, {key})")
        if not ok:
            return False
        if not abs(got - want) <= 1e-6:
            weight = float(out.attention[layer, :, :, key].mean())
            hint = (" That is the weight share; use out.weighted_norms() instead."
                    if abs(got - weight) <= 1e-6 else "")
            print(f"Not yet: for layer {layer}, key {key} ('{out.tokens[key]}') your function "
                  f"returned {got:.4f}, expected {want:.4f}.{hint}")
            return False
    print("Correct: your norm_share matches on all 4 test cases.")
    return True
