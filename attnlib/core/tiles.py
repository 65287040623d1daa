"""How :func:`attnlib.tiled_attention` cuts the work: tiles of keys, and threads.

The attention itself is in :mod:`attnlib.core.tiled`; this module holds the machinery
around it: which part of a tile a mask or the causal diagonal allows (:func:`tile_mask`,
:func:`key_tiles`), the causal tiles kept for reuse, and the worker threads that share
the query blocks (with numpy's BLAS limited to one thread meanwhile, via
``threadpoolctl`` where it is installed: it is imported only when threads are used).
"""

from __future__ import annotations

import contextlib
import functools
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from attnlib.core._validation import as_length
from attnlib.core.masks import _causal_offset, _up_to_diagonal

#: Target number of score entries in one tile: 262,144 float32 numbers are 1 MiB (2 MiB
#: in float64), chosen so that a tile may stay in a cache while it is exponentiated,
#: summed and multiplied by the values. Whether it does is not measured: per-core L2
#: caches are often 256 KiB to 1 MiB, and the benchmark recorded no cache sizes.
TILE_ENTRIES = 262_144


@functools.cache
def _blas():
    """numpy's BLAS (OpenBLAS, MKL, ...), found once by threadpoolctl; None without
    threadpoolctl (then the thread count cannot be told or limited)."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl.ThreadpoolController().select(user_api="blas")


@functools.cache
def _pool(workers: int) -> ThreadPoolExecutor:
    """The worker threads of :func:`attnlib.tiled_attention`, started once per size
    and then reused (starting and joining two threads at every call cost about 1
    ms)."""
    return ThreadPoolExecutor(max_workers=workers, thread_name_prefix="attnlib-tiled")


def default_workers() -> int:
    """As many threads as numpy's BLAS uses for a matrix product (1 if it cannot be
       told).

    That is the number of cores unless the user limited it (``OPENBLAS_NUM_THREADS`` or
    ``threadpoolctl``), so :func:`tiled_attention` by default uses the processors that
    ``Q @ K.T`` would use, for the exponentials too.
    """
    threads = [lib["num_threads"] for lib in _blas().info()] if _blas() else []
    return max(1, min(threads)) if threads else 1


def run_blocks(one_block, blocks: list, workers: int) -> None:
    """Call ``one_block(*block)`` for every block, on ``workers`` threads if more than
    one.

    Query blocks are independent; numpy releases the GIL inside matmul and ufuncs, so
    threads spread all the work, exponentials included, over the cores. Each thread's
    matrix products use one BLAS thread: BLAS threads on top of these would only compete
    with them for the same cores.
    """
    if workers > 1 and len(blocks) > 1:
        blas = _blas()
        with blas.limit(limits=1) if blas else contextlib.nullcontext():
            list(_pool(workers).map(lambda block: one_block(*block), blocks))
    else:
        for block in blocks:
            one_block(*block)


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


def tile_mask(allowed, where, offset, q0, q1, k0, k1):
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


def key_tiles(allowed, where, offset, q0: int, q1: int, n_keys: int, block_k: int):
    """The key tiles that queries ``q0:q1`` attend: ``(k0, k1, mask)`` for each.

    ``mask`` is ``True`` (every entry allowed) or a boolean tile; tiles whose every
    entry is masked are skipped, and under a causal pattern (``offset``) no query of the
    block may see a key after ``q1 - 1 + offset``, so the keys stop there and a tile
    the diagonal crosses is cut short at it. ``allowed`` is the broadcast mask or None,
    ``where`` the batch index of the block.
    """
    keys_end = n_keys if offset is None else max(0, min(n_keys, q1 + offset))
    for k0 in range(0, keys_end, block_k):
        k1 = min(k0 + block_k, keys_end)
        tile = tile_mask(allowed, where, offset, q0, q1, k0, k1)
        if tile is not False:
            yield k0, k1, tile


# --- the arguments' checks ------------------------------------------------------


def check_causal(causal: bool, align, n_queries: int, n_keys: int) -> int | None:
    """The causal offset of :func:`attnlib.core.masks._causal_offset` when ``causal``,
    else None (and then ``align`` must not be given: ``ValueError``). The lengths are
    non-negative integers either way (:func:`attnlib.core._validation.as_length`)."""
    n_queries, n_keys = as_length(n_queries, "n_queries"), as_length(n_keys, "n_keys")
    if not causal:
        if align is not None:
            raise ValueError(
                "align only applies to causal attention; pass causal=True or drop align"
            )
        return None
    return _causal_offset(n_queries, n_keys, align, "attention")


def as_block_sizes(block_size) -> tuple[int, int] | None:
    """``(block_q, block_k)`` from an int or a pair of positive integers (None stays
    None); ``ValueError`` naming ``block_size`` otherwise."""
    if block_size is None:
        return None
    sizes = (block_size, block_size) if np.ndim(block_size) == 0 else tuple(block_size)
    if len(sizes) != 2:
        raise ValueError(
            "block_size must be an int or a pair (block_q, block_k); "
            f"got {block_size!r}"
        )
    for n in sizes:
        integer = isinstance(n, (int, np.integer)) and not isinstance(
            n, (bool, np.bool_)
        )
        if not integer or n < 1:
            raise ValueError(
                f"block_size must hold positive integers; got {block_size!r}"
            )
    return int(sizes[0]), int(sizes[1])


def as_workers(workers) -> int | None:
    """A positive number of threads (None stays None); ``ValueError`` naming
    ``workers`` otherwise."""
    if workers is None:
        return None
    if (
        isinstance(workers, (bool, np.bool_))
        or not isinstance(workers, (int, np.integer))
        or workers < 1
    ):
        raise ValueError(f"workers must be a positive integer; got {workers!r}")
    return int(workers)
