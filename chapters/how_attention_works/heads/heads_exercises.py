"""Checkers for the exercises of the chapter "Several heads".

* :func:`check_head_weights`  every head's weights for given scores, one row per head
* :func:`check_head_shapes`   the shapes along multi-head attention, from input to
                              output
* :func:`check_merge_heads`   the reader's own ``merge_heads`` function

Expected answers are computed with attnlib (:func:`attnlib.softmax`,
:func:`attnlib.multi_head_attention`, :func:`attnlib.merge_heads`); source: Vaswani et
al. (2017), section 3.2.2. Every checker takes ``show_answer=True`` to print the
expected answer after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention
from attnlib.core.heads import init_multi_head, split_heads
from attnlib.core.heads import merge_heads as _merge_heads
from attnlib.core.softmax import softmax
from book_support.exercises import (
    as_floats,
    check_close,
    check_labelled_cases,
    check_shape_dict,
    checker,
    heads_after_positions_hint,
)

#: The names :func:`check_head_shapes` expects, in the order of the computation.
HEAD_SHAPE_NAMES = ("X", "Q", "Q_heads", "weights", "head_outputs", "merged", "output")


@checker("the weights of all three heads, one row per head")
def check_head_weights(answer, scores, *, atol: float = 1e-3) -> bool:
    """Check every head's attention weights, worked out by hand.

    Parameters
    ----------
    answer : array_like of float, shape (H, L)
        Row ``h`` holds head ``h``'s weights over the ``L`` positions.
    scores : array_like of float, shape (H, L)
        Row ``h`` holds head ``h``'s scores.
    atol : float, absolute tolerance (default 1e-3)

    Returns
    -------
    bool
        True when every row matches ``attnlib.softmax(scores, axis=-1)``. A wrong answer
        names the head and position; if the rows do not each sum to one, it says so.
    """
    s = np.asarray(scores, dtype=float)
    expected = softmax(s, axis=-1)
    got = as_floats(answer, "your weights")
    if (
        got.ndim == 2
        and got.shape[0] < expected.shape[0]
        and got.shape[1:] == expected.shape[1:]
    ):
        print(
            f"Not yet: you give {got.shape[0]} rows, but there are {expected.shape[0]} "
            "heads; "
            "did you forget a head? Each head has its own row of weights."
        )
        return False
    hint = None
    if got.shape == expected.shape:
        if abs(got.sum() - 1.0) < 0.01 and expected.shape[0] > 1:
            hint = (
                "your weights sum to 1 over all heads together; each head distributes "
                "its "
                "own total of one, so every row must sum to 1."
            )
        elif not np.allclose(got.sum(axis=-1), 1.0, atol=0.01):
            hint = "a row of yours does not sum to 1; apply softmax to each head's row."
    return check_close(
        got,
        expected,
        name="your weights",
        atol=atol,
        hint=hint,
        slips=(
            (
                softmax(s, axis=0),
                "you normalised each column (across heads); each head's row must "
                "sum to 1.",
            ),
        ),
    )


def _expected_head_shapes(
    batch: int, length: int, d_model: int, num_heads: int
) -> dict:
    rng = np.random.default_rng(0)
    params = init_multi_head(rng, d_model, num_heads)
    X = rng.normal(size=(batch, length, d_model))
    Q = X @ params.W_Q
    qh = split_heads(Q, num_heads)
    kh = split_heads(X @ params.W_K, num_heads)
    vh = split_heads(X @ params.W_V, num_heads)
    heads, weights = attention(qh, kh, vh)
    merged = _merge_heads(heads)
    output = merged @ params.W_O
    arrays = {
        "X": X,
        "Q": Q,
        "Q_heads": qh,
        "weights": weights,
        "head_outputs": heads,
        "merged": merged,
        "output": output,
    }
    return {name: tuple(arrays[name].shape) for name in HEAD_SHAPE_NAMES}


@checker("the shape of every array, e.g. (2, 10, 12)")
def check_head_shapes(
    answer: dict, *, batch: int, length: int, d_model: int, num_heads: int
) -> bool:
    """Check the shapes along one multi-head self-attention layer.

    Parameters
    ----------
    answer : dict
        Maps each name of :data:`HEAD_SHAPE_NAMES` to a tuple of ints: ``X`` (the
        input), ``Q`` (``X W_Q``), ``Q_heads`` (after ``split_heads``), ``weights``
        (every head's weights), ``head_outputs``, ``merged`` (after ``merge_heads``) and
        ``output`` (after ``W_O``).
    batch, length, d_model, num_heads : int

    Returns
    -------
    bool, True when every shape is right; otherwise each wrong or missing one is named.

    Raises
    ------
    ValueError
        If ``d_model`` is not divisible by ``num_heads`` (from attnlib).
    """
    expected = _expected_head_shapes(batch, length, d_model, num_heads)
    ok = check_shape_dict(
        answer,
        expected,
        what="check_head_shapes",
        context=f"batch={batch}, length={length}, d_model={d_model}, "
        f"num_heads={num_heads}",
    )
    if not ok:
        heads_after_positions_hint(answer, expected, ("Q_heads", "head_outputs"))
    return ok


def _merge_cases():
    x = np.arange(2 * 3 * 4, dtype=float).reshape(2, 3, 4)  # (h=2, n=3, d_k=4)
    rng = np.random.default_rng(2)
    return [
        ("x of shape (2, 3, 4): 2 heads, 3 positions, d_k = 4", (x,)),
        (
            "x of shape (4, 5, 2): 4 heads, 5 positions, d_k = 2",
            (rng.normal(size=(4, 5, 2)),),
        ),
        (
            "x of shape (2, 3, 4, 2): a batch of 2, 3 heads, 4 positions, d_k = 2",
            (rng.normal(size=(2, 3, 4, 2)),),
        ),
    ]


def _reshape_only(x):
    x = np.asarray(x)
    return x.reshape(x.shape[:-3] + (x.shape[-2], x.shape[-3] * x.shape[-1]))


@checker("your merge_heads function")
def check_merge_heads(fn) -> bool:
    """Compare the reader's ``fn(x)``, ``(..., h, n, d_k) -> (..., n, h * d_k)``,
    with :func:`attnlib.merge_heads`.

    A function that reshapes without first moving the head axis behind the positions
    returns the right shape with the wrong numbers (it mixes tokens); the verdict says
    so.

    Returns
    -------
    bool, True when every case matches exactly (within 1e-12).
    """
    cases = [(label, args, None) for label, args in _merge_cases()]
    slips = (
        (
            _reshape_only,
            "the shape is right but the numbers are not: reshaping "
            "(h, n, d_k) straight to (n, h * d_k) mixes positions. Swap "
            "the head and position axes first.",
        ),
    )
    if not check_labelled_cases(
        fn, _merge_heads, cases, name="your merge_heads", slips=slips
    ):
        return False
    print(
        "Correct: your merge_heads matches attnlib.merge_heads on all "
        f"{len(_merge_cases())} inputs."
    )
    return True
