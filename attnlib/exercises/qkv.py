"""Checkers for the exercises of the chapter "Query, key and value".

Each function prints a one-line verdict and returns True or False.
"""
from __future__ import annotations

import numpy as np

from . import check_close, check_function
from ..attention import attention


def check_projection_shapes(answer, n: int, d: int, d_k: int, d_v: int) -> bool:
    """Check the shapes of ``Q = X W_Q``, ``K = X W_K``, ``V = X W_V`` and of the output.

    Parameters
    ----------
    answer : dict with keys "Q", "K", "V", "scores", "output", each a tuple of ints
    n, d, d_k, d_v : int, the sizes of ``X (n, d)``, ``W_Q, W_K (d, d_k)``, ``W_V (d, d_v)``

    Returns
    -------
    bool

    Raises
    ------
    TypeError if ``answer`` is not a dict.

    Source: Vaswani et al. (2017), section 3.2.
    """
    if not isinstance(answer, dict):
        raise TypeError(f"answer must be a dict such as {{'Q': (n, d_k), ...}}; got {type(answer).__name__}")
    expected = {"Q": (n, d_k), "K": (n, d_k), "V": (n, d_v), "scores": (n, n), "output": (n, d_v)}
    for name, shape in expected.items():
        if name not in answer:
            print(f"Not yet: give the shape of {name} too.")
            return False
        try:
            got = tuple(int(s) for s in answer[name])
        except TypeError:
            print(f"Not yet: the shape of {name} should be a tuple such as (3, 2); got {answer[name]!r}.")
            return False
        if got != shape:
            print(f"Not yet: {name} has shape {shape}, not {got}.")
            return False
    print(f"Correct: all five shapes for n={n}, d={d}, d_k={d_k}, d_v={d_v}.")
    return True


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
    out, _ = attention(np.asarray(query, dtype=float)[None, :], keys, values)
    return check_close(answer, out[0], name="the head's output")


def _reference_head(X, W_Q, W_K, W_V):
    X = np.asarray(X, dtype=float)
    out, _ = attention(X @ W_Q, X @ W_K, X @ W_V)
    return out


def check_one_head(fn) -> bool:
    """Check the reader's ``fn(X, W_Q, W_K, W_V) -> output`` (shape (n, d_v)) against attnlib.

    The cases are seeded random inputs of several sizes, including ``d_v != d_k``.
    """
    rng = np.random.default_rng(3)
    cases = []
    for n, d, d_k, d_v in ((3, 2, 2, 2), (4, 5, 3, 2), (6, 4, 4, 7)):
        cases.append((rng.normal(size=(n, d)), rng.normal(size=(d, d_k)),
                      rng.normal(size=(d, d_k)), rng.normal(size=(d, d_v))))
    return check_function(fn, _reference_head, cases, name=getattr(fn, "__name__", "your function"))
