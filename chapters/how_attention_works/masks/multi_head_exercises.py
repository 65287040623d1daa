"""Checker for the harder exercise of the chapter on masks: full multi-head attention
with a mask, written by the reader in numpy.

* :func:`check_masked_multi_head`  the reader's ``fn(X_q, X_kv, W_Q, W_K, W_V, W_O,
  num_heads, mask)`` against :func:`attnlib.core.heads.multi_head_attention`

The cases are a causal self-attention, a padded batch (key padding) and a
cross-attention with a mask per example. The expected output comes from attnlib; the
diagnosed slips are computed by the same formula with one step done wrong.
"""

from __future__ import annotations

import numpy as np

from attnlib.core.heads import MultiHeadParams, multi_head_attention
from attnlib.core.masks import causal_mask, padding_mask
from book_support.exercises import check_function, checker


def _reference(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask):
    params = MultiHeadParams(W_Q, W_K, W_V, W_O, num_heads=int(num_heads))
    out, _ = multi_head_attention(X_q, X_kv, X_kv, params, mask=mask)
    return out


def _variant(
    X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, *, slip: str
) -> np.ndarray:
    """Multi-head attention written out, with one named step done wrong."""
    H = int(num_heads)
    d = W_Q.shape[1]
    d_k = d // H

    def split(x):  # (..., L, d) -> (..., H, L, d_k)
        return np.swapaxes(x.reshape(x.shape[:-1] + (H, d_k)), -3, -2)

    Q, K, V = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
    scale = np.sqrt(d if slip == "sqrt_d" else d_k)
    S = Q @ np.swapaxes(K, -1, -2) / scale  # (..., H, L_q, L_k)
    m = np.asarray(mask, dtype=bool)[..., None, :, :]  # same mask for every head
    if slip == "inverted":
        m = ~m
    if slip == "after":
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        A = E / E.sum(axis=-1, keepdims=True) * m  # masked after the softmax
    else:
        S = np.where(m, S, -np.inf)
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        A = E / E.sum(axis=-1, keepdims=True)
    Z = A @ V  # (..., H, L_q, d_k)
    if slip == "reshape":
        merged = Z.reshape(Z.shape[:-3] + (Z.shape[-2], d))  # mixes positions
    else:
        merged = np.swapaxes(Z, -3, -2).reshape(Z.shape[:-3] + (Z.shape[-2], d))
    return merged if slip == "no_W_O" else merged @ W_O


def _cases():
    rng = np.random.default_rng(11)
    d, H = 8, 2

    def weights(d_in=d):
        return [rng.normal(size=(d_in, d)) / np.sqrt(d_in) for _ in range(3)] + [
            rng.normal(size=(d, d)) / np.sqrt(d)
        ]

    X = rng.normal(size=(5, d))  # (L, d)
    causal = causal_mask(5)  # (5, 5)
    batch = rng.normal(size=(2, 4, d))  # (B, L, d)
    pad = padding_mask([4, 2], 4)  # (2, 1, 4)
    src = rng.normal(size=(2, 6, d))  # (B, L_k, d)
    tgt = rng.normal(size=(2, 3, d))  # (B, L_q, d)
    cross = padding_mask([6, 3], 6)  # (2, 1, 6)
    return [
        (
            "causal self-attention, 5 positions, 2 heads",
            (X, X, *weights(), H, causal),
            None,
        ),
        (
            "a batch of 2 padded to 4 positions (valid lengths 4 and 2), 2 heads",
            (batch, batch, *weights(), H, pad),
            "a padding mask has shape (B, 1, L_k): it broadcasts over the queries "
            "and must also broadcast over the head axis.",
        ),
        (
            "cross-attention: 3 queries, 6 keys (valid lengths 6 and 3), 2 heads",
            (tgt, src, *weights(), H, cross),
            "in cross-attention the keys and values come from X_kv, the queries from "
            "X_q; L_q and L_k differ.",
        ),
    ]


_SLIPS = [
    (
        "after",
        "you masked the weights after the softmax; the kept weights then no longer "
        "sum to one. Put -inf into the masked scores before the softmax.",
    ),
    (
        "inverted",
        "your mask is the wrong way round: in attnlib True means 'may attend', so "
        "masked scores are where the mask is False.",
    ),
    (
        "sqrt_d",
        "you divided by sqrt(d), the model width; each head's scores are divided by "
        "sqrt(d_k) with d_k = d / num_heads.",
    ),
    (
        "reshape",
        "a plain reshape of (..., H, L, d_k) into (..., L, d) mixes positions; move "
        "the head axis behind the position axis first (np.swapaxes), then reshape.",
    ),
    (
        "no_W_O",
        "you returned the merged heads; multi-head attention ends with the output "
        "projection W_O.",
    ),
]


@checker("your function", answers=("fn",))
def check_masked_multi_head(fn) -> bool:
    """Check the reader's masked multi-head attention on three cases.

    ``fn(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask)`` must return the output of
    shape ``(..., L_q, d)``: project (``X_q @ W_Q``, ``X_kv @ W_K``, ``X_kv @ W_V``),
    split into ``num_heads`` heads, scaled dot-product attention per head with the
    boolean ``mask`` (True = may attend, broadcasting to ``(..., L_q, L_k)``, shared by
    every head), merge the heads and multiply by ``W_O``. Diagnosed slips: the mask
    applied after the softmax, the mask inverted, scores divided by sqrt(d) instead of
    sqrt(d_k), heads merged by a plain reshape, ``W_O`` left out.

    Source: Vaswani et al. (2017), sections 3.2.2 and 3.2.3.
    """

    def slip_fn(name):
        return lambda *args: _variant(*args, slip=name)

    return check_function(
        fn,
        _reference,
        _cases(),
        atol=1e-8,
        slips=[(slip_fn(name), hint) for name, hint in _SLIPS],
    )
