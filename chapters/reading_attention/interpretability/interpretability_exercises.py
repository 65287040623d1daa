"""Checkers for the exercises of the interpretability chapter (on all-MiniLM-L6-v2).

Each function recomputes the answer with attnlib (``attnlib.models.minilm``), prints a
one-line verdict and returns ``True`` or ``False``. A wrong answer never raises; an
answer of the wrong kind (say, a string where a number is expected) gets a sentence
saying what was expected. ``show_answer=True`` prints the expected answer after the
diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import copy
import functools
import numbers

import numpy as np

from attnlib.models import minilm
from book_support.exercises import (
    WrongKind,
    as_floats,
    check_close,
    checker,
    require_function,
    show_answer,
    shown,
    try_reader,
)

#: The exercise's two keys: weights and transformed vectors f(x).
NORM_EXERCISE_WEIGHTS = np.array([0.6, 0.1])
NORM_EXERCISE_VECTORS = np.array([[0.3, 0.4], [3.0, 4.0]])


@checker("your two lengths")
def weighted_norms_answer(answer) -> bool:
    """Check the two lengths ``||alpha_1 f(x_1)||`` and ``||alpha_2 f(x_2)||`` of the
       exercise.

    Parameters
    ----------
    answer : sequence of 2 real numbers

    Returns
    -------
    bool
    """
    want = minilm.weighted_norms(NORM_EXERCISE_WEIGHTS[None, :], NORM_EXERCISE_VECTORS)[
        0
    ]
    got = as_floats(answer, "your two lengths", shape=want.shape)
    if np.allclose(got, NORM_EXERCISE_WEIGHTS, atol=1e-9):
        print(
            "Not yet: these are the weights themselves; multiply each by the length "
            "of its vector f(x)."
        )
        return False
    return check_close(
        got,
        want,
        name="your two lengths",
        slips=(
            (
                np.linalg.norm(NORM_EXERCISE_VECTORS, axis=-1),
                "these are the lengths of f(x) alone; multiply each by its weight.",
            ),
            (want[::-1], "these are the two lengths in swapped order."),
        ),
    )


@functools.lru_cache(maxsize=4)
def _forward(sentence: str):
    """One forward pass of the model per sentence (the reader's function gets a copy,
    so that nothing it changes reaches the next case)."""
    return minilm.forward(sentence)


def _as_index(value, name: str) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (numbers.Integral, np.integer)
    ):
        raise WrongKind(
            f"{name} must be an int, a whole number counted from 0 (write 3, not "
            f"3.0); got {shown(value)}."
        )
    return int(value)


@checker("your layer and head, counted from 0", answers=("layer", "head"))
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
    out = _forward(sentence)
    w = out.attention[:, :, out.index(query), out.index(key)]
    best = tuple(int(i) for i in np.unravel_index(int(np.argmax(w)), w.shape))
    if (layer, head) == best:
        print(
            f"Correct: layer {layer}, head {head} gives '{key}' a weight of "
            f"{w[layer, head]:.3f}."
        )
        return True
    if (layer - 1, head - 1) == best:
        print(
            f"Not yet: layer {layer}, head {head} is one past the strongest head in "
            "both numbers. Hint: attnlib counts layers and heads from 0, like numpy; "
            "if you counted from 1, subtract 1."
        )
    elif abs(layer - best[0]) + abs(head - best[1]) == 1:  # one step off, either way
        print(
            f"Not yet, but close: the strongest head is a neighbour of layer {layer}, "
            f"head {head}. Check the neighbouring layer and head, and that both "
            "numbers count from 0."
        )
    elif not (0 <= layer < minilm.NUM_LAYERS and 0 <= head < minilm.NUM_HEADS):
        print(
            f"Not yet: layers run from 0 to {minilm.NUM_LAYERS - 1} and heads "
            "from 0 to "
            f"{minilm.NUM_HEADS - 1}; got layer {layer}, head {head}."
        )
    else:
        print(
            f"Not yet: in layer {layer}, head {head} the weight from '{query}' "
            f"to '{key}' is "
            f"{w[layer, head]:.3f}; another head gives more. "
            "Take np.argmax over the (6, 12) table of weights and unravel it."
        )
    if show_answer():
        print(f"Expected: layer {best[0]}, head {best[1]} (weight {w[best]:.3f}).")
    return False


def norm_share(out, layer: int, key: int) -> float:
    """Reference: mean over heads and queries of ``||a_ij f(x_j)|| / sum_k ||a_ik
       f(x_k)||``, j = key.

    Source: Kobayashi et al. (2020), section 3.
    """
    n = out.weighted_norms()[layer]
    return float((n / n.sum(axis=-1, keepdims=True))[:, :, key].mean())


def _norm_share_hint(got: float, out, layer: int, key: int) -> str:
    """The likely mistake behind a wrong ``norm_share``, recomputed from ``out``."""
    n = out.weighted_norms()  # (layers, heads, L, L): query i, key j
    w = out.attention
    heads = w.shape[1]
    share = n[layer] / n[layer].sum(axis=-1, keepdims=True)  # (heads, L, L)
    candidates = [
        (
            float(w[layer, :, :, key].mean()),
            "that is the weight share; use out.weighted_norms() instead.",
        ),
        (
            float(share[:, :, key].mean()) * heads,
            f"that is a sum over the {heads} heads; the question asks for the mean.",
        ),
        (
            float(n[layer, :, :, key].mean()),
            "that is the mean length ||alpha_ij f(x_j)|| itself, not a share: divide "
            "each query's lengths by their sum over the keys (the last axis) first.",
        ),
        (
            float(n[layer, :, :, key].sum() / n[layer].sum()),
            "that divides the total length at the key by the total over all keys, "
            "which weights the queries and heads by their lengths; take the share "
            "for each head and query first, then the mean.",
        ),
        (
            1.0 / n.shape[-1],
            f"that is 1/{n.shape[-1]} whatever the key: you normalised over the "
            "queries (axis -2) or took the row of query `key`. Normalise over the "
            "keys and take the key's column.",
        ),
    ]
    if layer + 1 < len(n):
        next_share = n[layer + 1] / n[layer + 1].sum(axis=-1, keepdims=True)
        candidates.append(
            (
                float(next_share[:, :, key].mean()),
                f"that is the share in layer {layer + 1}: unlike hidden_states, "
                "which starts with the embeddings, weighted_norms() has no extra "
                "first entry.",
            )
        )
    if layer >= 1:  # the layer counted from 1
        previous = n[layer - 1] / n[layer - 1].sum(axis=-1, keepdims=True)
        candidates.append(
            (
                float(previous[:, :, key].mean()),
                f"that is the share in layer {layer - 1}: the argument already "
                "counts from 0, so index [layer], not [layer - 1].",
            )
        )
    if layer < n.shape[1]:
        by_head = n[:, layer] / n[:, layer].sum(axis=-1, keepdims=True)
        candidates.append(
            (
                float(by_head[:, :, key].mean()),
                "you indexed the heads axis with the layer; weighted_norms() has the "
                "layers first: weighted_norms()[layer] is (heads, queries, keys).",
            )
        )
    for value, hint in candidates:
        if abs(got - value) <= 1e-6 * max(1.0, abs(value)) and abs(value) > 0:
            return hint
    return (
        "the share is ||alpha_ij f(x_j)|| divided by the sum of ||alpha_ik f(x_k)|| "
        "over all keys k, for the same layer, head and query i; take it for j = key, "
        "then the mean over the heads and the queries."
    )


@checker("your norm_share function")
def norm_share_function(fn) -> bool:
    """Check the reader's ``norm_share(out, layer, key)`` on a few layers and keys.

    Returns
    -------
    bool, True when every case agrees with :func:`norm_share` to 1e-6.
    """
    require_function(fn)
    out = _forward("The fisherman repaired his net beside the bank.")
    last = len(out.tokens) - 1
    for layer, key in ((2, 0), (0, 2), (5, last), (3, 8)):
        want = norm_share(out, layer, key)
        label = f"norm_share(out, {layer}, {key})"
        ok, value = try_reader(lambda: fn(copy.deepcopy(out), layer, key), label=label)
        if not ok:
            return False
        got = float(as_floats(value, f"what {label} returned", shape=()))
        if not abs(got - want) <= 1e-6:
            hint = _norm_share_hint(got, out, layer, key)
            print(
                f"Not yet: for layer {layer}, key {key} ('{out.tokens[key]}') your "
                f"function returned {got:.4f}. Hint: {hint}"
            )
            if show_answer():
                print(f"Expected: {want:.4f}.")
            return False
    print("Correct: your norm_share matches on all 4 test cases.")
    return True
