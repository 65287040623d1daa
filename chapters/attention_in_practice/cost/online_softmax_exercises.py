"""Checker for the harder exercise of the chapter on cost: a complete tiled attention
with the online softmax, written by the reader in numpy.

* :func:`check_tiled_attention`  the reader's ``fn(Q, K, V, block)`` against
  :func:`attnlib.attention`, on inputs with large scores and blocks that do not divide
  the number of keys, then a memory check: the largest block of memory the function
  holds at once, measured with :mod:`tracemalloc`, must stay well below the full table
  of scores, and, for a few queries against many keys, below one row of scores per
  query (which a softmax over whole rows, query by query or in blocks of queries,
  cannot do).
"""

from __future__ import annotations

import tracemalloc

import numpy as np

from attnlib.core.attention import attention
from book_support.exercises import (
    check_labelled_cases,
    checker,
    function_name,
    require_function,
    returned_floats,
    try_reader,
)


def _reference(Q, K, V, block):
    return attention(Q, K, V)[0]


def _blocks(Q, K, V, block, *, scaled=True):
    scale = 1.0 / np.sqrt(Q.shape[-1]) if scaled else 1.0
    for start in range(0, K.shape[0], int(block)):
        stop = start + int(block)
        yield Q @ K[start:stop].T * scale, V[start:stop]  # (L_q, b), (b, d_v)


def _variant(Q, K, V, block, *, slip: str):
    """The online softmax with one step done wrong (see the slips below)."""
    L_q, d_v = Q.shape[0], V.shape[1]
    m = np.full((L_q, 1), -np.inf)
    ell = np.zeros((L_q, 1))
    acc = np.zeros((L_q, d_v))
    parts = []
    for S, Vb in _blocks(Q, K, V, block, scaled=slip != "no_scale"):
        if slip == "no_max":
            E = np.exp(S)
            ell, acc = ell + E.sum(1, keepdims=True), acc + E @ Vb
            continue
        if slip == "per_block":
            E = np.exp(S - S.max(1, keepdims=True))
            parts.append(E / E.sum(1, keepdims=True) @ Vb)
            continue
        m_new = np.maximum(m, S.max(1, keepdims=True))
        E = np.exp(S - m_new)
        rescale = 1.0 if slip == "no_rescale" else np.exp(m - m_new)
        ell = ell * rescale + E.sum(1, keepdims=True)
        acc = acc * rescale + E @ Vb
        m = m_new
    if slip == "per_block":
        return np.mean(parts, axis=0)
    return acc if slip == "no_divide" else acc / ell


_SLIPS = [
    (
        "no_rescale",
        "when a block brings a larger maximum, the running sum and the accumulated "
        "values were computed against the old maximum: multiply both by "
        "exp(m_old - m_new) before adding the new block.",
    ),
    (
        "per_block",
        "you normalised each block on its own and averaged the blocks; one softmax "
        "runs over all keys, so carry the running maximum and sum across blocks.",
    ),
    (
        "no_divide",
        "you returned the accumulated values without dividing by the running sum l "
        "at the end.",
    ),
    (
        "no_scale",
        "the scores are unscaled dot products; divide Q @ K_block.T by sqrt(d_k), "
        "as attnlib.attention does (scaled dot-product attention).",
    ),
    (
        "no_max",
        "exp of the raw scores overflows for large scores (e^710 is inf); subtract the "
        "running maximum before exponentiating.",
    ),
]


def _cases():
    rng = np.random.default_rng(3)
    small = [rng.normal(size=s) for s in ((4, 3), (10, 3), (10, 2))]
    big = [rng.normal(size=s) for s in ((5, 4), (12, 4), (12, 3))]
    rising = [rng.normal(size=s) for s in ((3, 2), (9, 2), (9, 2))]
    rising[1] = rising[1] * np.arange(1, 10)[:, None]  # later keys score higher
    return [
        (
            "4 queries, 10 keys, blocks of 4 (the last block has 2 keys)",
            (*small, 4),
            None,
        ),
        (
            "5 queries, 12 keys whose largest scores are above 1,000, blocks of 5",
            (big[0] * 30, big[1] * 30, big[2], 5),
            None,
        ),
        (
            "3 queries, 9 keys whose scores grow from block to block, blocks of 3",
            (*rising, 3),
            None,
        ),
        (
            "the same with one block holding every key",
            (*rising, 9),
            "with one block, the online softmax is an ordinary softmax.",
        ),
    ]


_MANY_KEYS = 65_536


def _peak(fn, args, label):
    """Run ``fn(*args)`` under tracemalloc: (ran without error, result, peak bytes)."""
    tracemalloc.start()
    try:
        ok, out = try_reader(lambda: fn(*args), label=label)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return ok, out, peak


def _few_queries_many_keys(fn, block, label):
    """4 queries against 65,536 keys: a whole row of scores per query shows here.

    Returns the peak in bytes, or None (after printing why) when ``fn`` fails."""
    rng = np.random.default_rng(1)
    Q = rng.normal(size=(4, 1))  # (L_q, d_k)
    K, V = (rng.normal(size=(_MANY_KEYS, 1)) for _ in range(2))  # (L_k, 1) each
    row = _MANY_KEYS * 8  # bytes of one row of float64 scores
    allowed = K.nbytes + V.nbytes + row / 4  # a copy of the inputs may be made
    where = f" for 4 queries and {_MANY_KEYS:,} keys"
    ok, out, peak = _peak(fn, (Q, K, V, block), label)
    if not ok:
        return None
    got = returned_floats(out, label, where)
    if got.shape != (4, 1) or not np.allclose(
        got, _reference(Q, K, V, block), atol=1e-6
    ):
        print(f"Not yet: wrong result{where} in blocks of {block}.")
        return None
    if peak > allowed:
        print(
            f"Not yet: the result is right, but{where} {label} held "
            f"{peak / 2**20:.2f} MiB at once, more than a copy of K and V "
            f"({(K.nbytes + V.nbytes) / 2**20:.0f} MiB) plus a quarter of one row of "
            f"{_MANY_KEYS:,} scores ({row / 4 / 2**20:.3f} MiB). You hold a whole row "
            "of scores per query: a softmax over whole rows, not an online one."
        )
        print(
            "Hint: visit the keys block at a time, Q @ K[start:stop].T, and carry the "
            "running maximum, the running sum and the running weighted sum of values "
            "from one block of keys to the next."
        )
        return None
    return peak


@checker("your function", answers=("fn",))
def check_tiled_attention(fn, *, n: int = 2048, block: int = 64) -> bool:
    """Check the reader's ``fn(Q, K, V, block)``: scaled dot-product attention of ``Q``
    (L_q, d_k), ``K`` (L_k, d_k), ``V`` (L_k, d_v), computed ``block`` keys at a time.

    First four inputs against :func:`attnlib.attention` (diagnosed slips: no rescaling
    when the maximum grows, each block normalised on its own, no final division by the
    running sum, no 1/sqrt(d_k) scale, no maximum subtracted); then ``n`` queries and
    keys in blocks of ``block``: the peak memory traced while ``fn`` runs must stay
    below a quarter of the ``n x n`` float64 scores; then 4 queries against 65,536
    keys (``d_k = d_v = 1``): the peak may hold a copy of ``K`` and ``V`` but no more
    than a quarter of one row of 65,536 float64 scores besides, which rejects a softmax
    over whole rows (one query at a time, or in blocks of queries) written with
    ordinary temporaries; one that works on a single row entirely in place can still
    pass. Every result is compared with the
    same tolerance (``atol=1e-6`` plus numpy's default ``rtol``), so float32 arithmetic
    passes or fails alike on all inputs. (tracemalloc sees numpy's allocations; it
    cannot see what a compiled library does internally.)

    Source: Milakov & Gimelshein (2018), algorithm 3; Dao et al. (2022), algorithm 1.
    """
    slips = [(lambda *a, s=name: _variant(*a, slip=s), hint) for name, hint in _SLIPS]
    require_function(fn)
    label = function_name(fn)
    if not check_labelled_cases(fn, _reference, _cases(), name=label, slips=slips):
        return False
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(n, 16)) for _ in range(3))  # (n, 16) each
    full = n * n * 8  # bytes of the n x n float64 scores
    ok, out, peak = _peak(fn, (Q, K, V, block), label)
    if not ok:
        return False
    got = returned_floats(out, label, f" for {n} queries and keys")
    # the tolerance of the four cases above (check_labelled_cases), so that an answer
    # computed in float32 is judged alike on all of them
    if got.shape != (n, 16):
        print(
            f"Not yet: for {n} queries and keys, {label} returned shape {got.shape}; "
            f"the result has shape {(n, 16)}."
        )
        return False
    if not np.allclose(got, _reference(Q, K, V, block), atol=1e-6):
        print(f"Not yet: wrong result for {n} queries and keys in blocks of {block}.")
        return False
    if peak > full / 4:
        print(
            f"Not yet: the result is right, but {label} held {peak / 2**20:.1f} MiB at "
            f"once, as much as a quarter of the {full / 2**20:.0f} MiB of scores or "
            "more."
        )
        print(
            "Hint: build only one block of scores at a time, Q @ K[start:stop].T, "
            "never Q @ K.T."
        )
        return False
    few = _few_queries_many_keys(fn, block, label)
    if few is None:
        return False
    print(
        f"Correct: {label} matches attnlib on all {len(_cases())} test inputs; with "
        f"{n} queries and keys in blocks of {block} it held at most "
        f"{peak / 2**20:.1f} MiB at once; the full scores would take "
        f"{full / 2**20:.0f} MiB; with 4 queries and {_MANY_KEYS:,} keys it held "
        f"{few / 2**20:.2f} MiB."
    )
    return True
