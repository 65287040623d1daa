"""Checkers for the exercises of the chapter "Query, key and value".

Each function prints a verdict and returns True or False; ``show_answer=True`` prints
the expected answer after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention
from book_support.exercises import (
    WrongKind,
    as_floats,
    as_shape,
    check_close,
    check_function,
    checker,
    function_name,
    show_answer,
)


@checker("the five shapes, e.g. (5, 4)")
def check_projection_shapes(answer, n: int, d: int, d_k: int, d_v: int) -> bool:
    """Check the shapes of ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V`` and of the
       output.

    Parameters
    ----------
    answer : dict with keys "Q", "K", "V", "scores", "output", each a tuple of ints
    n, d, d_k, d_v : int, the sizes of ``X (n, d)``, ``W_Q, W_K (d, d_k)``, ``W_V (d,
        d_v)``

    Returns
    -------
    bool

    An answer of the wrong kind (not a dict, a shape that is not a tuple) gets a
    sentence.

    Source: Vaswani et al. (2017), section 3.2.
    """
    if not isinstance(answer, dict):
        raise WrongKind(
            f"give a dict such as {{'Q': (5, 4), ...}}; got a {type(answer).__name__}."
        )
    expected = {
        "Q": (n, d_k),
        "K": (n, d_k),
        "V": (n, d_v),
        "scores": (n, n),
        "output": (n, d_v),
    }
    for name, shape in expected.items():
        if name not in answer:
            print(f"Not yet: give the shape of {name} too.")
            return False
        got = as_shape(answer[name], name)
        if got != shape:
            hint = ""
            if name == "V" and got == (n, d_k) or name == "output" and got == (n, d_k):
                hint = " Its width is set by d_v, the width of the values, not by d_k."
            elif name == "scores" and got in ((n, d_k), (d_k, d_k)):
                hint = " The scores compare every query with every key: one per pair."
            print(f"Not yet: {name} does not have shape {got}.{hint}")
            if show_answer():
                print(f"Expected: {name} has shape {shape}.")
            return False
    print(f"Correct: all five shapes for n={n}, d={d}, d_k={d_k}, d_v={d_v}.")
    return True


@checker("your output vector (two numbers)")
def check_head_output(answer, query, keys, values) -> bool:
    """Check one query's attention output (scaled dot-product, one head) worked by hand.

    Parameters
    ----------
    answer : array_like, shape (d_v,)
    query : array_like, shape (d_k,); keys : (L, d_k); values : (L, d_v)

    Returns
    -------
    bool
    """
    q = np.asarray(query, dtype=float)[None, :]
    out, _ = attention(q, keys, values)
    unscaled, _ = attention(q * np.sqrt(q.shape[-1]), keys, values)
    got = as_floats(answer, "your output", shape=out[0].shape)
    return check_close(
        got,
        out[0],
        name="the head's output",
        slips=(
            (
                unscaled[0],
                "the dot products were not scaled: divide each score by sqrt(d_k) "
                "before the softmax.",
            ),
        ),
    )


def _reference_head(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    out, _ = attention(X @ W_Q, X @ W_K, X @ W_V)
    return out


def _unscaled_head(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    Q = X @ W_Q
    return attention(Q * np.sqrt(Q.shape[-1]), X @ W_K, X @ W_V)[0]


@checker("your one_head function")
def check_one_head(fn) -> bool:
    """Check the reader's ``fn(X, W_Q, W_K, W_V) -> output`` (shape (n, d_v)) against
       attnlib.

    The cases are seeded random inputs of several sizes, including ``d_v != d_k``.
    """
    rng = np.random.default_rng(3)
    cases = []
    for n, d, d_k, d_v in ((3, 2, 2, 2), (4, 5, 3, 2), (6, 4, 4, 7)):
        cases.append(
            (
                rng.normal(size=(n, d)),
                rng.normal(size=(d, d_k)),
                rng.normal(size=(d, d_k)),
                rng.normal(size=(d, d_v)),
            )
        )
    return check_function(
        fn,
        _reference_head,
        cases,
        name=function_name(fn, "your function"),
        slips=(
            (
                _unscaled_head,
                "the scores are not scaled: divide Q K^T by "
                "sqrt(d_k) before the softmax.",
            ),
        ),
    )
