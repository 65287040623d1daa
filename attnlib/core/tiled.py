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

Queries are tiled too, so one tile of scores (``block_q x block_k`` per head) stays in
the processor's cache while it is exponentiated, summed and multiplied by the values,
and several threads (``workers``) can work on different query blocks at once.

Sources: the running maximum and sum (the "online softmax" normaliser) are Milakov &
Gimelshein (2018), "Online normalizer calculation for softmax", algorithm 3;
accumulating the weighted sum of values block by block with the same rescaling is Rabe &
Staats (2021), "Self-attention does not need O(n^2) memory", sections 2 and 3, and Dao
et al. (2022), "FlashAttention", section 3.1 and algorithm 1, who also tile the queries.
"""

from __future__ import annotations

import functools
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import threadpoolctl

from attnlib.core._validation import (
    as_bool_mask,
    as_float_array,
    as_length,
    check_attention,
    check_mask_shape,
    score_overflow,
)
from attnlib.core.masks import _up_to_diagonal

#: Target number of score entries in one tile: 262,144 float32 numbers are 1 MB, the
#: size of a typical per-core L2 cache, so a tile is exponentiated, summed and
#: multiplied by the values while it is still in the cache.
TILE_ENTRIES = 262_144


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
    block_k = min(max(int(n_keys), 1), 1024)
    block_q = 256 if block_k >= 512 else TILE_ENTRIES // block_k
    block_q = min(max(int(n_queries), 1), block_q)
    return block_q, block_k


@functools.cache
def _blas() -> threadpoolctl.ThreadpoolController:
    """numpy's BLAS (OpenBLAS, MKL, ...), found once by threadpoolctl."""
    return threadpoolctl.ThreadpoolController().select(user_api="blas")


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """The worker threads of :func:`tiled_attention`, started once per size and then reused
    (starting and joining two threads at every call cost about 1 ms)."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="attnlib-tiled")


def default_workers() -> int:
    """As many threads as numpy's BLAS uses for a matrix product (1 if it cannot be
       told).

    That is the number of cores unless the user limited it (``OPENBLAS_NUM_THREADS`` or
    ``threadpoolctl``), so :func:`tiled_attention` by default uses the processors that
    ``Q @ K.T`` would use, for the exponentials too.
    """
    threads = [lib["num_threads"] for lib in _blas().info()]
    return max(1, min(threads)) if threads else 1


def _block_sizes(block_size, n_queries, n_keys):
    if block_size is None:
        return default_block_sizes(n_queries, n_keys)
    sizes = (block_size, block_size) if np.ndim(block_size) == 0 else tuple(block_size)
    if len(sizes) != 2:
        raise ValueError(
            f"block_size must be an int or a pair (block_q, block_k); got {block_size!r}"
        )
    for s in sizes:
        if (
            isinstance(s, (bool, np.bool_))
            or not isinstance(s, (int, np.integer))
            or s < 1
        ):
            raise ValueError(
                f"block sizes must be positive integers; got {block_size!r}"
            )
    return int(sizes[0]), int(sizes[1])


def _causal_offset(causal: bool, align, n_queries: int, n_keys: int) -> int | None:
    """Query ``i`` may attend key ``j`` when ``j <= i + offset`` (as in :func:`causal_mask`)."""
    if align is not None and align not in ("start", "end"):
        raise ValueError(f"align must be 'start' or 'end'; got {align!r}")
    if not causal:
        if align is not None:
            raise ValueError(
                "align only applies to causal attention; pass causal=True or drop align"
            )
        return None
    if n_queries != n_keys and align is None:
        raise ValueError(
            f"causal attention with L_q={n_queries} != L_k={n_keys}: say which "
            "positions the "
            "queries occupy with align='end' (queries are the last L_q positions) or "
            "align='start' (queries are the first L_q positions)"
        )
    return n_keys - n_queries if align == "end" else 0


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
        Broadcastable to ``(..., L_q, L_k)``; ``True`` = may attend. It is sliced one tile at
        a time (a broadcast mask such as ``(B, 1, L_k)`` costs no extra memory).
    causal : bool
        Also apply a causal mask, generated tile by tile (no ``L_q x L_k`` array is built).
        Tiles that lie entirely above the diagonal are skipped, and a tile the diagonal
        crosses is computed only up to the last key its queries may see.
    align : {"start", "end"}, required when ``causal`` and ``L_q != L_k``
        Where the queries sit among the keys, exactly as in :func:`attnlib.causal_mask`.
    scale : float, optional
        Multiplies ``Q K^T``; default ``1 / sqrt(d_k)``.
    block_size : int or (int, int), optional
        ``block_q`` and ``block_k``, the tile's height (queries) and width (keys). Any positive
        sizes work, including sizes that do not divide the lengths or exceed them. Default:
        :func:`default_block_sizes` (a tile that fits the L2 cache).
    workers : int, optional
        Number of threads that share the query blocks. Default: :func:`default_workers`, as
        many as numpy's BLAS uses (the number of cores, unless limited with
        ``OPENBLAS_NUM_THREADS`` or ``threadpoolctl``). numpy releases the GIL in matrix
        products and element-wise functions, so 2 threads use 2 cores for the exponentials
        too, which numpy alone computes on one. While more than one worker runs, numpy's
        BLAS is limited to one thread per call (``threadpoolctl``), so that BLAS threads do
        not compete with the workers for the cores; this applies to the whole process for
        the duration of the call. Each query block's arithmetic is the same for any number of
        workers.
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
        If ``mask`` is not boolean (its dtype is named), an input is not real, or ``scale``
        is not a real number (``True`` is not a number here), exactly as
        :func:`attnlib.attention`.
    ValueError
        If shapes disagree (both shapes named), a block size is not a positive integer,
        ``causal`` with ``L_q != L_k`` lacks ``align``, ``d_k = 0`` comes without ``scale``,
        ``scale`` is NaN or inf, or a query, key or value that takes part in attention
        holds NaN or inf.
    OverflowError
        If an allowed score does not fit the compute dtype, as in :func:`attnlib.attention`
        (checked before any tile is computed, so no warning is emitted).

    Sources: Milakov & Gimelshein (2018), algorithm 3 (the online softmax normaliser);
    Rabe & Staats (2021), sections 2-3, and Dao et al. (2022), "FlashAttention",
    algorithm 1 (the weighted sum of values accumulated block by block, and tiling);
    Vaswani et al. (2017), equation (1).
    """
    q, k, v = (np.asarray(x) for x in (queries, keys, values))
    n_q, n_k = (q.shape[-2], k.shape[-2]) if q.ndim > 1 and k.ndim > 1 else (0, 0)
    offset = _causal_offset(causal, align, n_q, n_k)
    checked = check_attention(
        q, k, v, mask, scale, causal_offset=offset
    )  # shared contract
    q, k, v, allowed = checked.queries, checked.keys, checked.values, checked.allowed
    scale, batch = checked.scale, checked.batch
    n_q, n_k, d_v = q.shape[-2], k.shape[-2], v.shape[-1]
    block_q, block_k = _block_sizes(block_size, n_q, n_k)
    if workers is None:
        workers = default_workers()
    if (
        isinstance(workers, bool)
        or not isinstance(workers, (int, np.integer))
        or workers < 1
    ):
        raise ValueError(f"workers must be a positive integer; got {workers!r}")

    out_dtype = checked.out_dtype
    # float16 is computed in float32 and float32/float64 in their own precision, as
    # FlashAttention does: the running maximum keeps every exponential <= 1, so float32
    # is stable, and a tile of float32 scores takes half the cache of float64 ones.
    work = checked.work
    # One (L, d) matrix per batch/head element: broadcast the leading axes, then flatten
    # them. Only the O(L * d) inputs are copied, never anything of size L_q * L_k.
    # check_attention has refused NaN and inf where they take part and replaced them by
    # 0 where they do not, so every tile below is finite and no tile needs cleaning.
    n_batch = math.prod(batch)

    def flat(x):  # (..., L, d) -> (n_batch, L, d)
        x = np.broadcast_to(x.astype(work, copy=False), batch + x.shape[-2:])
        return x.reshape((n_batch,) + x.shape[-2:])

    q = flat(
        q.astype(work, copy=False) * work.type(scale)
    )  # (n_batch, L_q, d_k), scaled
    k = flat(k)  # (n_batch, L_k, d_k)
    v = flat(v)  # (n_batch, L_k, d_v)

    output = np.zeros((n_batch, n_q, d_v), dtype=work)
    lse = np.full((n_batch, n_q), -np.inf, dtype=work)

    def one_query_block(b, q0):
        """Attend queries q0 .. q0 + block_q - 1 of batch element b to all keys, block by block."""
        q1 = min(q0 + block_q, n_q)
        where = np.unravel_index(b, batch) if allowed is not None else None
        m = np.full(
            q1 - q0, -np.inf, dtype=work
        )  # running maximum of each query's scores
        l = np.zeros(q1 - q0, dtype=work)  # running sum of exp(score - m)
        acc = np.zeros(
            (q1 - q0, d_v), dtype=work
        )  # running sum of exp(score - m) * value
        # Under a causal mask no query of this block may see a key after q1 - 1 +
        # offset: the loop stops there, and a tile the diagonal crosses is cut short at
        # it.
        keys_end = n_k if offset is None else max(0, min(n_k, q1 + offset))
        for k0 in range(0, keys_end, block_k):
            k1 = min(k0 + block_k, keys_end)
            tile = _tile_mask(allowed, where, offset, q0, q1, k0, k1)
            if tile is False:
                continue  # every entry of this tile is masked: it cannot change anything
            q_t, k_t, v_t = q[b, q0:q1], k[b, k0:k1], v[b, k0:k1]
            with np.errstate(
                over="ignore", invalid="ignore"
            ):  # allowed ones are checked
                s = q_t @ k_t.T  # 1. this tile's (already scaled) scores
            if tile is not True:
                np.copyto(s, -np.inf, where=~tile)  # selection, not a large constant
            tile_max = s.max(axis=-1)
            if not (tile_max < np.inf).all():  # NaN (max propagates it) or +inf
                raise score_overflow(work)
            m_new = np.maximum(m, tile_max)  # 2. the new running maximum
            # A query with no allowed key so far keeps m = -inf: use 0 there (no -inf -
            # -inf).
            m_safe = np.where(m_new > -np.inf, m_new, 0.0).astype(work, copy=False)
            alpha = np.exp(m - m_safe)  # 3. re-expresses the old sums w.r.t. m_new
            s -= m_safe[:, None]
            np.exp(s, out=s)  # masked entries: exp(-inf) = 0
            l *= alpha  # 4. update the running sum ...
            l += s.sum(axis=-1)
            acc *= alpha[:, None]  # 5. ... and the running weighted values
            acc += s @ v_t
            m = m_new
        seen = l > 0  # 6. normalise once, at the end
        np.divide(acc, l[:, None], out=output[b, q0:q1], where=seen[:, None])
        lse[b, q0:q1] = np.where(seen, m + np.log(np.where(seen, l, 1.0)), -np.inf)

    blocks = [(b, q0) for b in range(n_batch) for q0 in range(0, n_q, block_q)]
    if workers > 1 and len(blocks) > 1:
        # Query blocks are independent; numpy releases the GIL inside matmul and ufuncs,
        # so threads spread all the work, exponentials included, over the cores. Each
        # thread's matrix products use one BLAS thread: BLAS threads on top of these
        # would only compete with them for the same cores.
        with _blas().limit(limits=1):
            list(_pool(workers).map(lambda block: one_query_block(*block), blocks))
    else:
        for b, q0 in blocks:
            one_query_block(b, q0)
    output = output.reshape(batch + (n_q, d_v)).astype(out_dtype, copy=False)
    lse = lse.reshape(batch + (n_q,))
    return (output, lse) if return_lse else output


def _causal_tile(n_rows: int, n_cols: int, shift: int) -> np.ndarray:
    """A tile the causal diagonal crosses: entry (i, j) is allowed when ``j <= i +
       shift``.

    Every head, and every row of tiles with the same geometry, needs the same tile:
    tiles of up to :data:`TILE_ENTRIES` entries (the default size) are built once and
    kept (read-only, shared by the worker threads; at most 16 of them); larger ones,
    which only an explicit ``block_size`` asks for, are built for each use and not kept.
    """
    if n_rows * n_cols <= TILE_ENTRIES:
        return _kept_causal_tile(n_rows, n_cols, shift)
    return _up_to_diagonal(n_rows, n_cols, shift)


@functools.lru_cache(maxsize=16)
def _kept_causal_tile(n_rows, n_cols, shift):
    tile = _up_to_diagonal(n_rows, n_cols, shift)  # (n_rows, n_cols)
    tile.setflags(write=False)
    return tile


def _tile_mask(allowed, where, offset, q0, q1, k0, k1):
    """The tile's boolean mask, or ``True`` (all allowed) / ``False`` (all masked)."""
    tile = True
    if offset is not None:
        if k0 > q1 - 1 + offset:  # every key lies after every query's last allowed key
            return False
        if k1 - 1 > q0 + offset:  # the diagonal crosses the tile
            tile = _causal_tile(q1 - q0, k1 - k0, q0 + offset - k0)
    if allowed is None:
        return tile  # all allowed, or crossed by the diagonal: some allowed, some not
    sub = allowed[where + (slice(q0, q1), slice(k0, k1))]
    tile = sub if tile is True else sub & tile
    if not tile.any():
        return False
    if tile.all():
        return True
    return tile


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
        :data:`PARTLY_MASKED` (1) for a tile that needs its mask, :data:`FULL` (2) otherwise.

    Raises
    ------
    ValueError
        For a negative length, a bad block size, alignment or mask shape (as
        :func:`tiled_attention`).
    TypeError
        If a length is not an integer (``tile_plan(2.5, 2)``, as ``causal_mask(2.5)``) or
        ``mask`` is not boolean.
    """
    n_queries = as_length(n_queries, "n_queries")
    n_keys = n_queries if n_keys is None else as_length(n_keys, "n_keys")
    block_q, block_k = _block_sizes(block_size, n_queries, n_keys)
    offset = _causal_offset(causal, align, n_queries, n_keys)
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
            tile = _tile_mask(
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
    ``"block max"``, ``"running max m"``, ``"rescale exp(m_old - m)"``, ``"running sum l"``
    and ``"output so far"`` (``acc / l``: the attention output over the keys seen so far).
    After the last block, ``m + log(l)`` is the log-sum-exp of the scores and the output is
    ``softmax(scores) @ values``.

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
    block, _ = _block_sizes(block_size, 1, 1)
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
