"""Tiled attention: the same result as :func:`attnlib.attention`, without the n x n
   scores.

Plain attention builds every score ``Q K^T`` at once: ``L_q * L_k`` numbers per head,
which for 65,536 positions is 16 GiB in float32. Tiled attention visits the keys one
block at a time and keeps, for every query, only three running quantities:

* ``m``   the largest score seen so far (the running maximum),
* ``l``   the sum of ``exp(score - m)`` over the keys seen so far (the running sum),
* ``acc`` the sum of ``exp(score - m) * value`` over the keys seen so far.

When a new block of keys arrives with a larger maximum ``m_new``, the old sums were
computed relative to the old ``m``; multiplying them by ``exp(m - m_new)`` re-expresses
them relative to ``m_new``. After the last block, ``acc / l`` is exactly
``softmax(scores) @ V``. Memory grows with ``L_q * block`` instead of ``L_q * L_k``.

Queries are tiled too, so one tile of scores (``block_q x block_k`` per head) is small
enough that it may stay in the processor's cache while it is exponentiated, summed and
multiplied by the values (not measured: it depends on the processor's cache sizes), and
several threads (``workers``) can work on different query blocks at once.

Sources: the running maximum and sum (the "online softmax" normaliser) are Milakov &
Gimelshein (2018), "Online normalizer calculation for softmax", algorithm 3;
accumulating the weighted sum of values block by block with the same rescaling is Rabe &
Staats (2021), "Self-attention does not need O(n^2) memory", sections 2 and 3, and Dao
et al. (2022), "FlashAttention", section 3.1 and algorithm 1, who also tile the queries.
The loop order is FlashAttention-2's (Dao 2023, "FlashAttention-2", algorithm 1): query
blocks outside, key blocks inside, one division by ``l`` at the end and the log-sum-exp
``m + log(l)`` kept; FlashAttention-1 loops over the key blocks outside and rescales and
writes back each block of outputs at every step, keeping ``m`` and ``l``.
"""

from __future__ import annotations

import math

import numpy as np

from attnlib.core._numerics import check_tile_maxima
from attnlib.core._validation import (
    as_bool_mask,
    as_float_array,
    as_length,
    check_attention,
    check_mask_shape,
    to_dtype,
)
from attnlib.core.softmax import mask_and_max
from attnlib.core.tiles import (
    TILE_ENTRIES,
    as_block_sizes,
    as_workers,
    check_causal,
    default_workers,
    key_tiles,
    run_blocks,
    tile_mask,
)


def default_block_sizes(n_queries: int, n_keys: int) -> tuple[int, int]:
    """Block sizes ``(block_q, block_k)`` for one tile of at most :data:`TILE_ENTRIES`
       scores.

    Keys get the longer side (up to 1,024), so each query block needs few rescalings.
    From 512 keys on, a block holds 256 queries: short enough for a causal mask to cut
    each row of tiles at the diagonal (at n = 512 a quarter of the scores are then never
    computed), and enough blocks for the worker threads to share. With fewer keys the
    query side fills the tile instead (fewer, larger blocks cost fewer numpy calls).
    Blocks never exceed the lengths.
    """
    n_queries, n_keys = as_length(n_queries, "n_queries"), as_length(n_keys, "n_keys")
    block_k = min(max(n_keys, 1), 1024)
    block_q = 256 if block_k >= 512 else TILE_ENTRIES // block_k
    block_q = min(max(n_queries, 1), block_q)
    return block_q, block_k


def tiled_attention(
    queries,
    keys,
    values,
    mask=None,
    *,
    causal: bool = False,
    align=None,
    scale: float | None = None,
    block_size=None,
    return_lse: bool = False,
    workers: int | None = None,
):
    """Scaled dot-product attention computed tile by tile with an online softmax.

    Gives the same output as ``attnlib.attention(queries, keys, values, mask)[0]`` (up
    to rounding), but never holds more than one ``block_q x block_k`` tile of scores per
    head.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_k)
    keys : array_like, shape (..., L_k, d_k)
    values : array_like, shape (..., L_k, d_v)
        Leading (batch, head) axes broadcast, as in :func:`attnlib.attention`.
    mask : array_like of bool, optional
        Broadcastable to ``(..., L_q, L_k)``; ``True`` = may attend. It is sliced one
        tile at a time (a broadcast mask such as ``(B, 1, L_k)`` costs no extra memory).
    causal : bool
        Also apply a causal mask, generated tile by tile (no ``L_q x L_k`` array is
        built). Tiles that lie entirely above the diagonal are skipped, and a tile the
        diagonal crosses is computed only up to the last key its queries may see.
    align : {"start", "end"}, required when ``causal`` and ``L_q != L_k``
        Where the queries sit among the keys, exactly as in :func:`attnlib.causal_mask`.
    scale : float, optional
        Multiplies ``Q K^T``; default ``1 / sqrt(d_k)``.
    block_size : int or (int, int), optional
        ``block_q`` and ``block_k``, the tile's height (queries) and width (keys). Any
        positive sizes work, including sizes that do not divide the lengths or exceed
        them. Default: :func:`default_block_sizes` (a tile of at most 262,144
        scores, meant to stay in a cache; untested).
    workers : int, optional
        Number of threads that share the query blocks. Default: :func:`default_workers`,
        as many as numpy's BLAS uses (the number of cores, unless limited with
        ``OPENBLAS_NUM_THREADS`` or ``threadpoolctl``). numpy releases the GIL in matrix
        products and element-wise functions, so 2 threads use 2 cores for the
        exponentials too, which numpy alone computes on one. While more than one worker
        runs, numpy's BLAS is limited to one thread per call (``threadpoolctl``), so
        that BLAS threads do not compete with the workers for the cores; this applies to
        the whole process for the duration of the call. Each query block's arithmetic is
        the same for any number of workers.
    return_lse : bool
        Also return the log-sum-exp of each query's allowed scaled scores,
        ``log(sum_j exp(s_j))``, shape ``(..., L_q)`` in the compute dtype (float32 for
        float16/float32 inputs); ``-inf`` for a query with no allowed key.

    Returns
    -------
    output : numpy.ndarray, shape (..., L_q, d_v), in the inputs' float dtype
        A query with no allowed key gets a zero output (no NaN, no warning). float16 is
        computed in float32, float32 and float64 in their own precision, as in
        :func:`attnlib.attention`; the two agree to about 1e-6 in float32 and 1e-15 in
        float64 (the order of the additions differs).
    lse : numpy.ndarray, shape (..., L_q), only if ``return_lse``

    Raises
    ------
    TypeError
        If ``mask`` is not boolean (its dtype is named), an input is not real, or
        ``scale`` is not a real number (``True`` is not a number here), exactly as
        :func:`attnlib.attention`.
    ValueError
        If shapes disagree (both shapes named), a block size is not a positive integer,
        ``causal`` with ``L_q != L_k`` lacks ``align``, ``d_k = 0`` comes without
        ``scale``, ``scale`` is NaN or inf, or a query, key or value that takes part in
        attention holds NaN or inf.
    OverflowError
        If an allowed score does not fit the compute dtype, as in
        :func:`attnlib.attention` (checked before any tile is computed, so no warning is
        emitted).

    Sources: Milakov & Gimelshein (2018), algorithm 3 (the online softmax normaliser);
    Rabe & Staats (2021), sections 2-3, and Dao et al. (2022), "FlashAttention",
    algorithm 1 (the weighted sum of values accumulated block by block, and tiling);
    Vaswani et al. (2017), equation (1).
    """
    q, k, v = (np.asarray(a) for a in (queries, keys, values))
    n_q, n_k = (q.shape[-2], k.shape[-2]) if q.ndim > 1 and k.ndim > 1 else (0, 0)
    offset = check_causal(causal, align, n_q, n_k)  # None, or the causal diagonal's
    x = check_attention(q, k, v, mask, scale, causal_offset=offset)  # the contract
    n_q, n_k, d_v = x.queries.shape[-2], x.keys.shape[-2], x.values.shape[-1]
    block_q, block_k = as_block_sizes(block_size) or default_block_sizes(n_q, n_k)
    workers = as_workers(workers) or default_workers()

    # One (L, d) matrix per batch/head element, in the compute dtype (float32 for
    # float16/float32: the running maximum keeps every exponential <= 1, as in
    # FlashAttention). Only the O(L * d) inputs are copied, never anything L_q x L_k.
    q = _flat_batch(x.queries * x.work.type(x.scale), x)  # (n_batch, L_q, d_k), scaled
    k, v = _flat_batch(x.keys, x), _flat_batch(x.values, x)  # (n_batch, L_k, d_k / d_v)
    output = np.zeros(q.shape[:2] + (d_v,), dtype=x.work)  # (n_batch, L_q, d_v)
    lse = np.full(q.shape[:2], -np.inf, dtype=x.work)  # (n_batch, L_q)

    def one_query_block(b, q0):
        q1 = min(q0 + block_q, n_q)
        where = np.unravel_index(b, x.batch) if x.allowed is not None else None
        tiles = key_tiles(x.allowed, where, offset, q0, q1, n_k, block_k)
        m, l, acc = online_softmax(q[b, q0:q1], k[b], v[b], tiles, x.work)
        seen = l > 0  # normalise once, at the end: acc / l (zero if nothing allowed)
        np.divide(acc, l[:, None], out=output[b, q0:q1], where=seen[:, None])
        lse[b, q0:q1] = np.where(seen, m + np.log(np.where(seen, l, 1.0)), -np.inf)

    blocks = [(b, q0) for b in range(q.shape[0]) for q0 in range(0, n_q, block_q)]
    run_blocks(one_query_block, blocks, workers)  # on `workers` threads
    output = output.reshape(x.batch + (n_q, d_v))
    output = to_dtype(output, x.out_dtype, "attention outputs")
    lse = lse.reshape(x.batch + (n_q,))
    return (output, lse) if return_lse else output


def online_softmax(q, k, v, tiles, work):
    """One block of queries attends every key, one tile of keys at a time.

    Keeps, for every query, the running maximum ``m`` of its scores, the running sum
    ``l`` of ``exp(score - m)`` and the running sum ``acc`` of ``exp(score - m) *
    value``. ``q`` (already scaled) is ``(rows, d_k)``, ``k`` and ``v`` are ``(L_k,
    d)``, ``tiles`` yields ``(k0, k1, mask)`` (:func:`attnlib.core.tiles.key_tiles`).
    Returns ``(m, l, acc)``; the attention output is ``acc / l``.

    Sources: Milakov & Gimelshein (2018), algorithm 3; Dao et al. (2022), algorithm 1.
    """
    m = np.full(len(q), -np.inf, dtype=work)  # running maximum of each query's scores
    l = np.zeros(len(q), dtype=work)  # running sum of exp(score - m)
    acc = np.zeros((len(q), v.shape[-1]), dtype=work)  # running sum, exp(s - m) * v
    for k0, k1, tile in tiles:
        with np.errstate(over="ignore", invalid="ignore"):  # checked on the maxima
            s = q @ k[k0:k1].T  # 1. this tile's scores (rows, k1 - k0)
        top = mask_and_max(s, -1, None if tile is True else tile)[:, 0]  # masked: -inf
        check_tile_maxima(top, work)  # OverflowError for NaN or +inf
        m_new = np.maximum(m, top)  # 2. the new running maximum
        m_safe = np.where(m_new > -np.inf, m_new, 0.0).astype(work, copy=False)
        alpha = np.exp(m - m_safe)  # 3. re-expresses the old sums w.r.t. m_new
        s -= m_safe[:, None]
        np.exp(s, out=s)  # masked entries: exp(-inf) = 0
        l *= alpha  # 4. update the running sum ...
        l += s.sum(axis=-1)
        acc *= alpha[:, None]  # 5. ... and the running weighted values
        acc += s @ v[k0:k1]
        m = m_new
    return m, l, acc


def _flat_batch(a: np.ndarray, checked) -> np.ndarray:
    """``(..., L, d) -> (n_batch, L, d)``: the leading axes broadcast to the call's
    batch and flattened, in the compute dtype."""
    a = np.broadcast_to(
        a.astype(checked.work, copy=False), checked.batch + a.shape[-2:]
    )
    return a.reshape((math.prod(checked.batch),) + a.shape[-2:])


#: Codes of :func:`tile_plan`.
SKIPPED, PARTLY_MASKED, FULL = 0, 1, 2


def tile_plan(
    n_queries: int,
    n_keys: int | None = None,
    block_size=1,
    *,
    causal: bool = False,
    align=None,
    mask=None,
) -> np.ndarray:
    """What :func:`tiled_attention` does with each tile: skip it, mask part of it, or
       use all of it.

    Parameters
    ----------
    n_queries, n_keys : int
        ``L_q`` and ``L_k`` (``n_keys`` defaults to ``n_queries``).
    block_size, causal, align, mask
        As for :func:`tiled_attention`; ``mask`` must be 2-D, ``(L_q, L_k)``.

    Returns
    -------
    numpy.ndarray of int, shape (ceil(L_q / block_q), ceil(L_k / block_k))
        :data:`SKIPPED` (0) for a tile whose every entry is masked (never computed),
        :data:`PARTLY_MASKED` (1) for a tile that needs its mask, :data:`FULL` (2)
        otherwise.

    Raises
    ------
    ValueError
        For a negative length, a bad block size, alignment or mask shape (as
        :func:`tiled_attention`).
    TypeError
        If a length is not an integer (``tile_plan(2.5, 2)``, as ``causal_mask(2.5)``)
        or ``mask`` is not boolean.
    """
    n_queries = as_length(n_queries, "n_queries")
    n_keys = n_queries if n_keys is None else as_length(n_keys, "n_keys")
    sizes = as_block_sizes(block_size)
    block_q, block_k = sizes or default_block_sizes(n_queries, n_keys)
    offset = check_causal(causal, align, n_queries, n_keys)
    allowed = None
    if mask is not None:
        allowed = as_bool_mask(mask)
        if allowed.ndim != 2:
            raise ValueError(
                f"tile_plan takes a 2-D mask (L_q, L_k); got shape {allowed.shape}"
            )
        check_mask_shape(allowed, (n_queries, n_keys))
        allowed = np.broadcast_to(allowed, (n_queries, n_keys))
    q_starts, k_starts = range(0, n_queries, block_q), range(0, n_keys, block_k)
    plan = np.zeros((len(q_starts), len(k_starts)), dtype=int)
    for a, q0 in enumerate(q_starts):
        for b, k0 in enumerate(k_starts):
            tile = tile_mask(
                allowed,
                (),
                offset,
                q0,
                min(q0 + block_q, n_queries),
                k0,
                min(k0 + block_k, n_keys),
            )
            plan[a, b] = (
                SKIPPED if tile is False else FULL if tile is True else PARTLY_MASKED
            )
    return plan


def online_softmax_trace(scores, values, block_size: int = 1) -> list[dict]:
    """The online softmax of one query, step by step: what the running quantities hold.

    Parameters
    ----------
    scores : array_like, shape (L,)
        One query's (already scaled) scores, all allowed.
    values : array_like, shape (L, d_v)
    block_size : int
        Keys per block.

    Returns
    -------
    list of dict, one per block, with keys ``"keys"`` (the positions in the block),
    ``"block max"``, ``"running max m"``, ``"rescale exp(m_old - m)"``, ``"running sum
    l"`` and ``"output so far"`` (``acc / l``: the attention output over the keys seen
    so far). After the last block, ``m + log(l)`` is the log-sum-exp of the scores and
    the output is ``softmax(scores) @ values``.

    Raises
    ------
    ValueError
        If the lengths disagree, ``scores`` is not 1-D or is empty, or holds NaN or inf.

    Sources: Milakov & Gimelshein (2018), algorithm 3 (the running maximum and sum);
    Rabe & Staats (2021), sections 2-3, and Dao et al. (2022), algorithm 1 (the output).
    """
    s = as_float_array(scores, "scores").astype(np.float64)
    v = as_float_array(values, "values").astype(np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"scores must be a non-empty 1-D array; got shape {s.shape}")
    if v.ndim != 2 or v.shape[0] != s.shape[0]:
        raise ValueError(
            f"values must have shape (L, d_v) with L = {s.shape[0]}; got {v.shape}"
        )
    if not np.isfinite(s).all() or not np.isfinite(v).all():
        raise ValueError("scores and values must be finite")
    block, _ = as_block_sizes(block_size) or (1, 1)
    m, l, acc, steps = -np.inf, 0.0, np.zeros(v.shape[1]), []
    for k0 in range(0, s.size, block):
        blk = s[k0 : k0 + block]
        m_new = max(m, float(blk.max()))
        alpha = math.exp(m - m_new)
        p = np.exp(blk - m_new)
        l = l * alpha + float(p.sum())
        acc = acc * alpha + p @ v[k0 : k0 + block]
        m = m_new
        steps.append(
            {
                "keys": list(range(k0, min(k0 + block, s.size))),
                "block max": float(blk.max()),
                "running max m": m,
                "rescale exp(m_old - m)": alpha,
                "running sum l": l,
                "output so far": acc / l,
            }
        )
    return steps
