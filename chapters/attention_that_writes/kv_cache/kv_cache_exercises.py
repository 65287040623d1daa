"""Checkers for the exercises of the chapter on generation's cost: one step of a KV
cache, and grouped-query attention built from multi-head pieces.

* :func:`check_cache_step`        the reader's ``fn(cache_k, cache_v, q, k, v)`` ->
  ``(output, cache_k, cache_v)``, run token by token over a sequence and compared with
  causal attention over the whole sequence (:func:`attnlib.attention`)
* :func:`check_grouped_attention` the reader's ``fn(q, k, v)`` for ``H`` query heads
  and ``H_kv`` key/value heads, against
  :func:`attnlib.core.grouped_query.grouped_query_attention` with a causal mask
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention
from attnlib.core.grouped_query import grouped_query_attention
from attnlib.core.masks import causal_mask
from book_support.exercises import (
    WrongKind,
    check_function,
    checker,
    fmt,
    shown,
    try_reader,
)


def _as_arrays(result, n: int, label: str, names: str):
    if not isinstance(result, (tuple, list)) or len(result) != n:
        raise WrongKind(
            f"{label} should return {n} arrays ({names}); got {shown(result)}."
        )
    try:
        return [np.asarray(a, dtype=float) for a in result]
    except (TypeError, ValueError):
        raise WrongKind(f"{label} should return arrays of numbers ({names}).") from None


def _step_without_self(cache_k, cache_v, q, k, v):
    """The slip: attend to the old cache, then append the new key and value."""
    if len(cache_k) == 0:
        return np.zeros_like(v), k[None], v[None]
    out, _ = attention(q[None], cache_k, cache_v)
    return out[0], np.vstack([cache_k, k]), np.vstack([cache_v, v])


@checker("your cache step")
def check_cache_step(fn) -> bool:
    """Run the reader's cache step over 6 tokens and compare with causal attention.

    ``fn(cache_k, cache_v, q, k, v)`` receives the cached keys and values (L, d_k) and
    (L, d_v) of the earlier positions (L = 0 at the first token) and the new position's
    query, key and value (vectors); it returns the new position's attention output
    (d_v,) and the caches with the new key and value appended: (L + 1, d_k), (L + 1,
    d_v).

    Returns
    -------
    bool, True when every step's output equals row ``t`` of causal attention over the
    whole sequence and the caches equal the keys and values so far (within 1e-9).
    """
    if not callable(fn):
        raise WrongKind(f"give the function itself; got a {type(fn).__name__}.")
    rng = np.random.default_rng(7)
    Q, K, V = rng.normal(size=(6, 4)), rng.normal(size=(6, 4)), rng.normal(size=(6, 3))
    want, _ = attention(Q, K, V, causal_mask(6))  # (6, 3)
    cache_k, cache_v = np.zeros((0, 4)), np.zeros((0, 3))
    for t in range(6):
        ok, result = try_reader(
            lambda: fn(cache_k.copy(), cache_v.copy(), Q[t], K[t], V[t]),
            label="your cache step",
            where=f" at token {t}",
        )
        if not ok:
            return False
        out, new_k, new_v = _as_arrays(
            result, 3, "your cache step", "output, keys, values"
        )
        if new_k.shape != (t + 1, 4) or new_v.shape != (t + 1, 3):
            print(
                f"Not yet: after token {t} the caches should have shapes {(t + 1, 4)} "
                f"and {(t + 1, 3)} (one row per position so far); yours have "
                f"{new_k.shape} and {new_v.shape}."
            )
            print("Hint: append the new key and value as new rows (np.vstack).")
            return False
        if not (
            np.allclose(new_k, K[: t + 1], atol=1e-9)
            and np.allclose(new_v, V[: t + 1], atol=1e-9)
        ):
            print(
                f"Not yet: after token {t} the caches do not hold the keys and values "
                "so far, oldest first."
            )
            print("Hint: keep the old rows and add the new key and value at the end.")
            return False
        if out.shape != (3,) or not np.allclose(out, want[t], atol=1e-9):
            print(
                f"Not yet: the output at token {t} is {fmt(out)}, which is not row {t} "
                "of causal attention over the whole sequence."
            )
            slip = _step_without_self(cache_k, cache_v, Q[t], K[t], V[t])[0]
            if out.shape == slip.shape and np.allclose(out, slip, atol=1e-9):
                print(
                    "Hint: the new token attended only to the old cache. Append its "
                    "key and value first: under a causal mask a position sees itself."
                )
            else:
                print(
                    "Hint: the new query is compared with every cached key (its own "
                    "included), scaled by 1 / sqrt(d_k), softmaxed, and mixes the "
                    "values."
                )
            return False
        cache_k, cache_v = new_k, new_v
    print(
        "Correct: token by token, your cache step reproduces causal attention over the "
        "whole sequence, and the caches hold every key and value."
    )
    return True


def _tiled_heads(q, k, v):
    """The slip: key/value heads repeated with np.tile (head h reads h % H_kv)."""
    reps = q.shape[-3] // k.shape[-3]
    return attention(
        q, np.tile(k, (reps, 1, 1)), np.tile(v, (reps, 1, 1)), causal_mask(q.shape[-2])
    )[0]


def _no_mask(q, k, v):
    return grouped_query_attention(q, k, v)[0]


@checker("your grouped-query attention")
def check_grouped_attention(fn) -> bool:
    """Compare the reader's ``fn(q, k, v)`` with grouped-query attention.

    ``q`` has shape (H, L, d_k), ``k`` and ``v`` (H_kv, L, d_k) with ``H_kv`` dividing
    ``H``; query head ``h`` uses key/value head ``h // (H / H_kv)``, under a causal
    mask. ``fn`` returns the heads' outputs (H, L, d_k).

    Returns
    -------
    bool; a wrong grouping (``np.tile`` where ``np.repeat`` is meant) and a missing
    causal mask are recognised.
    """
    rng = np.random.default_rng(11)
    cases = []
    for H, H_kv, L in ((4, 2, 5), (6, 3, 4), (4, 1, 3), (2, 2, 4)):
        q = rng.normal(size=(H, L, 3))
        k, v = rng.normal(size=(H_kv, L, 3)), rng.normal(size=(H_kv, L, 3))
        cases.append((f"H={H}, H_kv={H_kv}, L={L}", (q, k, v), None))

    def reference(q, k, v):
        return grouped_query_attention(q, k, v, causal_mask(q.shape[-2]))[0]

    return check_function(
        fn,
        reference,
        cases,
        name="your grouped-query attention",
        atol=1e-9,
        slips=[
            (
                _tiled_heads,
                "np.tile repeats the whole stack of key/value heads, so head h reads "
                "h % H_kv; consecutive query heads share one key/value head: "
                "np.repeat(k, H // H_kv, axis=0), so head h reads h // G.",
            ),
            (
                _no_mask,
                "a language model's attention is causal: pass causal_mask(L) "
                "(position i reads positions 0 .. i).",
            ),
        ],
    )
