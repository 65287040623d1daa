"""Checkers for the exercises of the chapter "Values travel: the weighted sum".

* :func:`check_output`     one query's output, worked out by hand from weights and
                           values
* :func:`check_shapes`     the shapes of X, W_Q, W_K, W_V, Q, K, V, the scores and Z
* :func:`check_attention`  the reader's own ``attention(Q, K, V)`` function

Every expected answer is computed with attnlib (:func:`attnlib.weighted_sum`,
:func:`attnlib.attention`); source: Vaswani et al. (2017), section 3.2.1, equation (1).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention as _attention
from attnlib.core.attention import weighted_sum as _weighted_sum
from book_support.exercises import (
    as_floats,
    check_close,
    check_labelled_cases,
    check_shape_dict,
    checker,
)

#: The names :func:`check_shapes` expects, in the order of the computation.
SHAPE_NAMES = ("X", "W_Q", "W_K", "W_V", "Q", "K", "V", "scores", "weights", "Z")


@checker("your output vector for the weights {weights}")
def check_output(answer, weights, values, *, atol: float = 1e-3) -> bool:
    """Check one query's output ``sum_j weights[j] * values[j]`` worked out by hand.

    Parameters
    ----------
    answer : array_like of float, shape (d_v,)
    weights : array_like of float, shape (L,)
        The query's attention weights (one per position).
    values : array_like of float, shape (L, d_v)
    atol : float, absolute tolerance (default 1e-3)

    Returns
    -------
    bool, True when ``answer`` matches :func:`attnlib.weighted_sum` within ``atol``.

    Raises
    ------
    ValueError
        If ``weights`` and ``values`` disagree on the number of positions.
    """
    w = np.asarray(weights, dtype=float)
    expected = _weighted_sum(w[None, :], values)[0]
    got = as_floats(answer, "your output", shape=expected.shape)
    v = np.asarray(values, dtype=float)
    return check_close(
        got,
        expected,
        name="your output",
        atol=atol,
        slips=(
            (
                v.mean(axis=0),
                "that is the plain average of the values (a mean instead of a "
                "weighted sum); weight each value by its attention weight instead.",
            ),
            (
                v.sum(axis=0),
                "that is the plain sum of the values; multiply each value by its "
                "weight before adding.",
            ),
        ),
        hint="multiply each value vector by its weight, then add the vectors "
        "coordinate by "
        "coordinate.",
    )


def _expected_shapes(n: int, d: int, d_k: int, d_v: int) -> dict:
    """Shapes produced by really running the computation on arrays of the given
    sizes."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    W = {
        "W_Q": rng.normal(size=(d, d_k)),
        "W_K": rng.normal(size=(d, d_k)),
        "W_V": rng.normal(size=(d, d_v)),
    }
    Q, K, V = X @ W["W_Q"], X @ W["W_K"], X @ W["W_V"]
    Z, A = _attention(Q, K, V)
    scores = Q @ K.T
    arrays = {
        "X": X,
        **W,
        "Q": Q,
        "K": K,
        "V": V,
        "scores": scores,
        "weights": A,
        "Z": Z,
    }
    return {name: tuple(arrays[name].shape) for name in SHAPE_NAMES}


@checker("the shape of every array, e.g. (10, 16)")
def check_shapes(answer: dict, *, n: int, d: int, d_k: int, d_v: int) -> bool:
    """Check the shapes of every array of one attention head.

    Parameters
    ----------
    answer : dict
        Maps each name in :data:`SHAPE_NAMES` ("X", "W_Q", ..., "Z") to a tuple of ints.
    n, d, d_k, d_v : int
        Number of positions, input width, query/key width, value width.

    Returns
    -------
    bool, True when every shape is right; otherwise each wrong or missing one is named.

    A dict of the wrong kind gets a sentence (see :mod:`book_support.exercises`).
    """
    return check_shape_dict(
        answer,
        _expected_shapes(n, d, d_k, d_v),
        what="check_shapes",
        context=f"n={n}, d={d}, d_k={d_k}, d_v={d_v}",
    )


def _attention_cases():
    rng = np.random.default_rng(1)
    return [
        (
            "the bank query (one position)",
            (
                np.array([[np.sqrt(2.0), 0.0]]),
                np.array([[2.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
                np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]),
            ),
        ),
        (
            "self-attention, n=4, d_k=3, d_v=2",
            (rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), rng.normal(size=(4, 2))),
        ),
        (
            "cross-attention, 2 queries and 5 keys, d_v=3 differs from d_k=4",
            (rng.normal(size=(2, 4)), rng.normal(size=(5, 4)), rng.normal(size=(5, 3))),
        ),
        (
            "large scores (every entry times 40)",
            (
                40 * rng.normal(size=(3, 2)),
                40 * rng.normal(size=(3, 2)),
                rng.normal(size=(3, 2)),
            ),
        ),
    ]


_HINTS = {
    "cross-attention, 2 queries and 5 keys, d_v=3 differs from d_k=4": (
        "the scores are Q @ K.T, of shape (L_q, L_k); normalise each row, "
        "then multiply by V."
    ),
    "large scores (every entry times 40)": (
        "use a stable softmax (subtract each row's maximum)."
    ),
}


def _unscaled(q, k, v):
    return _attention(q * np.sqrt(q.shape[-1]), k, v)[0]


def _softmax_over_queries(q, k, v):
    s = q @ k.T / np.sqrt(q.shape[-1])
    e = np.exp(s - s.max(axis=0, keepdims=True))
    return (e / e.sum(axis=0, keepdims=True)) @ v


#: Typical slips of a home-made attention and their diagnosis.
ATTENTION_SLIPS = (
    (
        _unscaled,
        "the scores are not scaled: divide Q K^T by sqrt(d_k) = sqrt(Q.shape[-1]) "
        "before the softmax.",
    ),
    (
        _softmax_over_queries,
        "you normalise each column (over the queries); each query's row "
        "of scores must sum to 1: softmax along axis=-1.",
    ),
)


@checker("your attention function")
def check_attention(fn) -> bool:
    """Compare the reader's ``fn(Q, K, V) -> output`` with :func:`attnlib.attention`.

    ``fn`` returns the output ``softmax(Q K^T / sqrt(d_k)) V`` only (not the weights).
    The inputs include a cross-attention case with ``L_q != L_k`` and ``d_v != d_k`` and
    a case with large scores. Numpy's warnings are silenced while ``fn`` runs.

    Returns
    -------
    bool, True when every case matches within 1e-6; otherwise the first failure is
    printed.
    """

    def reference(q, k, v):
        return _attention(q, k, v)[0]

    cases = _attention_cases()
    labelled = [(label, args, _HINTS.get(label)) for label, args in cases]
    if not check_labelled_cases(
        fn, reference, labelled, name="your attention", slips=ATTENTION_SLIPS
    ):
        return False
    print(
        f"Correct: your attention matches attnlib.attention on all {len(cases)} "
        "inputs, "
        "including cross-attention and large scores."
    )
    return True
