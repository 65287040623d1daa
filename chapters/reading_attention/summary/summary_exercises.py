"""Checkers for the exercises of the chapter "Summary".

* :func:`check_pipeline_order`      the steps of one head, in order
* :func:`check_attention_function`  the reader's whole head, with an optional causal
                                    mask

Each function prints a verdict and returns True or False; ``show_answer=True`` prints
the expected answer after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention
from attnlib.core.masks import causal_mask
from attnlib.core.softmax import softmax
from book_support.exercises import (
    as_texts,
    check_function,
    checker,
    function_name,
    show_answer,
)

#: The steps of one attention head, in the order the book uses (the reader puts a
#: shuffled copy back in order).
PIPELINE_STEPS = ("project", "score", "scale", "mask", "softmax", "weighted sum")

#: Every order a head may use. Scaling is linear, so it may act on the queries before
#: the scores are formed (``(Q / sqrt(d_k)) K^T``, as ``attnlib.attention`` does), on
#: the scores, or after the mask (a blocked score stays blocked whatever its scale); it
#: must come after the projection (scaling the inputs would scale the values as well)
#: and before the softmax, which is not linear.
PIPELINE_ORDERS = (
    PIPELINE_STEPS,
    ("project", "score", "mask", "scale", "softmax", "weighted sum"),
    ("project", "scale", "score", "mask", "softmax", "weighted sum"),
)

_OTHER_ORDER = {
    PIPELINE_ORDERS[1]: (
        "Masking and scaling commute (a blocked score stays blocked whatever its "
        "scale), so this order gives the same weights; the book scales first, as "
        "Figure 2 of the Transformer paper does (MatMul, Scale, Mask, SoftMax, MatMul)."
    ),
    PIPELINE_ORDERS[2]: (
        "Scaling the queries before the dot products gives the same scores, "
        "(Q / sqrt(d_k)) K^T = Q K^T / sqrt(d_k), and costs one division per query "
        "entry instead of one per score: attnlib.attention folds the scale into the "
        "queries this way. The book's diagram scales the scores instead, as Figure 2 "
        "of the Transformer paper does (MatMul, Scale, Mask, SoftMax, MatMul)."
    ),
}


@checker("the six steps in order, e.g. ['project', ...]")
def check_pipeline_order(answer) -> bool:
    """Check that ``answer`` lists :data:`PIPELINE_STEPS` in an order a head may apply
       them.

    Every order of :data:`PIPELINE_ORDERS` is accepted: the scale may act on the queries
    (before the scores), on the scores, or after the mask.

    Parameters
    ----------
    answer : sequence of str, the six step names
    show_answer : bool, keyword; print the book's order after the diagnosis

    Returns
    -------
    bool
    """
    steps = as_texts(answer, "the steps", "['project', 'score', ...]")
    got = tuple(s.strip().lower() for s in steps)
    if sorted(got) != sorted(PIPELINE_STEPS):
        print(
            "Not yet: use exactly these steps once each: "
            f"{', '.join(sorted(PIPELINE_STEPS))}."
        )
        return False
    if got == PIPELINE_STEPS:
        print("Correct: " + " -> ".join(got) + ".")
        return True
    if got in PIPELINE_ORDERS:
        print("Correct: " + " -> ".join(got) + ". " + _OTHER_ORDER[got])
        return True
    if got.index("scale") < got.index("project"):
        print(
            "Not yet: scale after projecting. Dividing the inputs by sqrt(d_k) before "
            "the projections would divide the values too, and with them the output."
        )
    elif got.index("scale") > got.index("softmax"):
        print(
            "Not yet: scale before the softmax. The softmax is not linear: dividing "
            "its output by sqrt(d_k) does not sharpen or flatten the weights, it "
            "only breaks their sum of one."
        )
    elif got.index("softmax") < got.index("mask"):
        print(
            "Not yet: the mask acts before the softmax. Masked after, the "
            "blocked positions "
            "have already taken part of the total weight of one."
        )
    elif got.index("softmax") > got.index("weighted sum"):
        print(
            "Not yet: the weighted sum needs the weights, which the softmax produces."
        )
    else:
        i = next(i for i, (g, w) in enumerate(zip(got, PIPELINE_STEPS)) if g != w)
        print(
            f"Not yet: step {i + 1} ('{got[i]}') comes too "
            f"{'early' if PIPELINE_STEPS.index(got[i]) > i else 'late'}."
        )
    if show_answer():
        print("Expected: " + " -> ".join(PIPELINE_STEPS) + ".")
    return False


def _reference(Q, K, V, causal):
    mask = causal_mask(Q.shape[0], K.shape[0]) if causal else None
    return attention(Q, K, V, mask)[0]


def _unscaled(Q, K, V, causal):
    return _reference(Q * np.sqrt(Q.shape[-1]), K, V, causal)


def _mask_after_softmax(Q, K, V, causal):
    w = softmax(Q @ K.T / np.sqrt(Q.shape[-1]), axis=-1)
    if causal:
        w = np.where(causal_mask(Q.shape[0], K.shape[0]), w, 0.0)
    return w @ V


def _transposed_mask(Q, K, V, causal):
    mask = causal_mask(Q.shape[0], K.shape[0]).T if causal else None
    return attention(Q, K, V, mask)[0]


#: Typical slips of a whole head and their diagnosis.
ATTENTION_SLIPS = (
    (
        _unscaled,
        "the scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax.",
    ),
    (
        _mask_after_softmax,
        "you mask after the softmax: the blocked positions have already taken "
        "part of the weight, so the rows no longer sum to 1. Set blocked "
        "scores to -inf before the softmax.",
    ),
    (
        _transposed_mask,
        "your causal mask is transposed (upper-triangular): query i may use keys "
        "0..i, so keep the lower triangle, np.tril.",
    ),
)


def _cases():
    rng = np.random.default_rng(12)
    cases = []
    for n, d_k, d_v in ((3, 2, 2), (5, 4, 3), (7, 8, 8)):
        for causal in (False, True):
            label = (
                f"Q, K of shape ({n}, {d_k}), V of shape ({n}, {d_v}), "
                f"{'causal mask' if causal else 'no mask'} (causal={causal})"
            )
            cases.append(
                (
                    label,
                    (
                        rng.normal(size=(n, d_k)),
                        rng.normal(size=(n, d_k)),
                        rng.normal(size=(n, d_v)),
                        causal,
                    ),
                    None,
                )
            )
    return cases


@checker("your attention function")
def check_attention_function(fn) -> bool:
    """Check the reader's ``fn(Q, K, V, causal) -> output`` against
       :func:`attnlib.attention`.

    ``causal`` is a bool: when True, query ``i`` may only use keys ``0..i``. Cases are
    seeded random inputs, with and without the causal mask, including ``d_v != d_k``. A
    failure names the case (shapes, causal or not) and diagnoses
    :data:`ATTENTION_SLIPS`.
    """
    return check_function(
        fn,
        _reference,
        _cases(),
        name=function_name(fn, "your function"),
        slips=ATTENTION_SLIPS,
    )
