"""Checker for the harder exercise of the chapter on what is learned: the backward pass
of ``Z = softmax(Q K^T / sqrt(d_k)) V`` to ``Q``, ``K`` and ``V``, written by the
reader in numpy.

* :func:`check_attention_backward`  the reader's ``fn(Q, K, V, dZ)`` ->
  ``(dQ, dK, dV)`` against :func:`attnlib.core.backward.attention_backward`
"""

from __future__ import annotations

import numpy as np

from attnlib.core.backward import attention_backward
from attnlib.core.softmax import softmax
from book_support.exercises import (
    WrongKind,
    checker,
    fmt,
    function_name,
    require_function,
    returned_floats,
    show_answer,
    try_reader,
)

_NAMES = ("dQ", "dK", "dV")


def _variant(Q, K, V, dZ, *, slip: str):
    """The backward pass with one step done wrong."""
    scale = 1.0 / np.sqrt(Q.shape[-1])
    A = softmax(Q @ K.T * scale)  # (L_q, L_k)
    dV = (A @ dZ) if slip == "dV_no_T" else A.T @ dZ
    dA = dZ @ V.T  # (L_q, L_k)
    if slip == "no_jacobian":
        dS = A * dA
    else:
        dS = A * (dA - (A * dA).sum(axis=-1, keepdims=True))
    if slip != "no_scale":
        dS = dS * scale
    dQ = dS @ K
    dK = (dS @ Q) if slip == "dK_no_T" else dS.T @ Q
    return dQ, dK, dV


_SLIPS = [
    (
        "no_jacobian",
        "dS = A * dA leaves out the softmax's coupling: every weight of a row moves "
        "when one score moves, so dS = A * (dA - sum over the row of A * dA).",
    ),
    (
        "no_scale",
        "the scores are Q K^T / sqrt(d_k), so dQ and dK carry the factor "
        "1 / sqrt(d_k) too.",
    ),
    (
        "dV_no_T",
        "dV = A^T dZ: each value j collects dZ from every query i, weighted by "
        "A[i, j], so the transpose of A.",
    ),
    (
        "dK_no_T",
        "dK = dS^T Q: key j collects from every query, so the transpose of dS.",
    ),
]


def _cases():
    rng = np.random.default_rng(21)
    out = []
    # the square case first: a transposition slip (A for A^T) only runs, and so can
    # only be diagnosed, where L_q = L_k
    for L_q, L_k, d_k, d_v in ((4, 4, 3, 3), (1, 3, 2, 2), (3, 5, 4, 2)):
        Q, K = rng.normal(size=(L_q, d_k)), rng.normal(size=(L_k, d_k))
        V, dZ = rng.normal(size=(L_k, d_v)), rng.normal(size=(L_q, d_v))
        out.append((f"L_q={L_q}, L_k={L_k}, d_k={d_k}, d_v={d_v}", (Q, K, V, dZ)))
    return out


def _as_three(result, label, where):
    if not isinstance(result, (tuple, list)) or len(result) != 3:
        raise WrongKind(
            f"{label} should return three arrays (dQ, dK, dV); got "
            f"{type(result).__name__}."
        )
    return [
        returned_floats(g, f"{label} ({name})", where)
        for name, g in zip(_NAMES, result)
    ]


@checker("your function", answers=("fn",))
def check_attention_backward(fn) -> bool:
    """Check the reader's ``fn(Q, K, V, dZ)`` -> ``(dQ, dK, dV)`` on three inputs
    (one with ``L_q != L_k`` and ``d_k != d_v``, where a transposition slip changes the
    shape).

    Diagnosed slips, named for the gradient they spoil: the softmax Jacobian left out
    (``dS = A * dA``), the 1/sqrt(d_k) scale forgotten, ``A`` instead of ``A^T`` in
    ``dV``, ``dS`` instead of ``dS^T`` in ``dK``.

    Source: Vaswani et al. (2017), equation (1), differentiated by the chain rule.
    """
    require_function(fn)
    label = function_name(fn)
    for case, args in _cases():
        want = attention_backward(*args)
        with np.errstate(all="ignore"):
            ok, result = try_reader(
                lambda a=args: fn(*(x.copy() for x in a)),
                label=label,
                where=f" for {case}",
            )
        if not ok:
            return False
        got = _as_three(result, label, f" for {case}")
        for name, g, w in zip(_NAMES, got, want):
            if g.shape != w.shape:
                print(
                    f"Not yet: for {case}, your {name} has shape {g.shape}; it must "
                    f"have the shape of {name[1]}, {w.shape}."
                )
                break
            if not np.allclose(g, w, atol=1e-8):
                print(f"Not yet: for {case}, your {name} is wrong.")
                print(fmt(g, f"  your {name}: "))
                break
        else:
            continue
        for slip, hint in _SLIPS:
            try:
                alt = _variant(*args, slip=slip)
            except ValueError:  # a slip whose shapes do not fit this case
                continue
            if all(
                a.shape == g.shape and np.allclose(a, g, atol=1e-8)
                for a, g in zip(alt, got)
            ):
                print(f"Hint: {hint}")
                break
        else:
            print(
                "Hint: check dV = A^T dZ first, then dA = dZ V^T, the softmax step, "
                "and the two products for dQ and dK."
            )
        if show_answer():
            for name, w in zip(_NAMES, want):
                print(fmt(w, f"  Expected {name}: "))
        return False
    print(f"Correct: {label} gives dQ, dK and dV as attnlib does on all 3 inputs.")
    return True
