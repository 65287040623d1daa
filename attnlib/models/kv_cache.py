"""The KV cache: keep every layer's keys and values while generating, so each new token
costs one position of work instead of the whole prefix.

Under a causal mask the keys and values of a position never change once computed: later
tokens cannot reach back into them. So after the prompt has been read, each generation
step needs only the new token's query, key and value in every layer; its attention
reads the stored keys and values of all earlier positions. Per generated token and
layer that is ``O(d^2)`` for the projections and the feed-forward network plus
``O(n d)`` for attention over ``n`` cached positions, against ``O(n d^2 + n^2 d)`` to
run the whole prefix again.

The price is memory. Each layer keeps one key and one value vector of width ``d_k``
for each of its ``H_kv`` key/value heads and every position::

    bytes per token = 2 * N * H_kv * d_k * (bytes per number)

(:func:`kv_bytes_per_token`). Fewer key/value heads (grouped-query or multi-query
attention) shrink it by ``H / H_kv``; a sliding window of ``w`` positions caps the
cache at ``w`` positions however long the text grows (:class:`LayerCache` then keeps a
ring of ``w`` slots).

Source: Pope et al. (2023), section 2 (the KV cache and its size); Shazeer (2019),
section 2.4 (the memory traffic of incremental decoding); Ainslie et al. (2023).
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import as_width
from attnlib.core.masks import causal_mask
from attnlib.core.sliding_window import sliding_window_mask

__all__ = ["kv_bytes_per_token", "LayerCache", "KVCache"]


def kv_bytes_per_token(
    num_layers: int, num_kv_heads: int, d_head: int, itemsize: int
) -> int:
    """``2 * N * H_kv * d_k * itemsize``: the cache's bytes for one position (keys and
    values of every layer and key/value head). ``itemsize`` is 4 for float32, 8 for
    float64, 2 for float16.

    Raises ``TypeError`` for a size that is not an integer and ``ValueError`` (naming
    it) for one below 1.

    Source: Pope et al. (2023), section 2.
    """
    sizes = dict(
        num_layers=num_layers,
        num_kv_heads=num_kv_heads,
        d_head=d_head,
        itemsize=itemsize,
    )
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer; got {value!r}")
        if value < 1:
            raise ValueError(f"{name} must be at least 1; got {value}")
    return int(2 * num_layers * num_kv_heads * d_head * itemsize)


class LayerCache:
    """The stored keys and values of one layer, for ``B`` sequences.

    Parameters
    ----------
    batch, num_kv_heads, d_head : int, the shapes (B, H_kv, ., d_k) of the arrays
    capacity : int, the most positions the cache must hold (the model's context)
    dtype : the float dtype of the keys and values
    window : int or None; with a sliding window the cache keeps only the last
        ``window`` positions, in a ring of ``window`` slots (position ``t`` in slot
        ``t % window``), and never grows beyond them

    ``keys`` and ``values`` are allocated once, shape (B, H_kv, capacity or window,
    d_k); ``length`` counts the positions seen so far.
    """

    def __init__(self, batch, num_kv_heads, d_head, capacity, dtype, window=None):
        batch, num_kv_heads = (
            as_width(batch, "batch"),
            as_width(num_kv_heads, "num_kv_heads"),
        )
        d_head, capacity = as_width(d_head, "d_head"), as_width(capacity, "capacity")
        window = None if window is None else as_width(window, "window")
        if np.dtype(dtype).kind != "f":
            raise TypeError(f"dtype must be a float dtype; got {np.dtype(dtype)}")
        slots = capacity if window is None else min(window, capacity)
        shape = (batch, num_kv_heads, slots, d_head)  # (B, H_kv, slots, d_k)
        self.keys = np.zeros(shape, dtype)
        self.values = np.zeros(shape, dtype)
        self.capacity, self.window, self.length = capacity, window, 0

    @property
    def nbytes(self) -> int:
        """The bytes the two arrays occupy."""
        return self.keys.nbytes + self.values.nbytes

    def update(self, k, v):
        """Store the new positions' keys and values and return what their queries read.

        Parameters: ``k``, ``v`` of shape (B, H_kv, L_new, d_k), the keys and values of
        the ``L_new`` new positions (computed by the block).

        Returns ``(keys, values, mask)``: every key and value the new queries may use,
        oldest first, shape (B, H_kv, L_k, d_k), and the (L_new, L_k) mask of the new
        queries against them (causal, or causal within the window).

        Raises ``ValueError`` when a cache without a window would exceed its capacity
        (a sliding window's ring never fills: past keys leave it).
        """
        n_new, start = k.shape[2], self.length
        if start + n_new > self.capacity and self.window is None:
            raise ValueError(
                f"the cache holds {self.capacity} positions; "
                f"{start} + {n_new} do not fit"
            )
        self.length = start + n_new
        if self.window is None:
            self.keys[:, :, start : self.length] = k
            self.values[:, :, start : self.length] = v
            keys = self.keys[:, :, : self.length]  # (B, H_kv, L_k, d_k), a view
            values = self.values[:, :, : self.length]
            return keys, values, causal_mask(n_new, self.length, align="end")
        w = self.keys.shape[2]
        past = np.arange(max(0, start - w), start) % w  # slots of kept positions
        keys = np.concatenate([self.keys[:, :, past], k], axis=2)  # oldest first
        values = np.concatenate([self.values[:, :, past], v], axis=2)
        for i in range(max(0, n_new - w), n_new):  # the last w new positions
            self.keys[:, :, (start + i) % w] = k[:, :, i]
            self.values[:, :, (start + i) % w] = v[:, :, i]
        n_keys = keys.shape[2]
        mask = sliding_window_mask(n_new, n_keys, window=self.window, align="end")
        return keys, values, mask


class KVCache:
    """One :class:`LayerCache` per layer of a language model.

    Parameters
    ----------
    config : attnlib.models.language_model.LMConfig (layers, key/value heads, window)
    batch : int, sequences generated side by side
    capacity : int, positions to hold (at most ``config.context``)
    dtype : the parameters' float dtype

    Pass ``cache.layers`` (as ``caches=``) to
    :func:`attnlib.models.language_model.forward` to run only the new tokens.
    """

    def __init__(self, config, batch: int, capacity: int, dtype=np.float32):
        H_kv = config.num_kv_heads
        if as_width(capacity, "capacity") > config.context:
            raise ValueError(
                f"capacity={capacity} exceeds the model's context of {config.context}"
            )
        self.layers = [
            LayerCache(batch, H_kv, config.d_head, capacity, dtype, config.window)
            for _ in range(config.num_layers)
        ]

    @property
    def length(self) -> int:
        """Positions seen so far."""
        return self.layers[0].length

    @property
    def nbytes(self) -> int:
        """The bytes all layers' keys and values occupy (allocated once)."""
        return sum(layer.nbytes for layer in self.layers)

    def bytes_per_slot(self) -> float:
        """``nbytes`` divided by the batch and by the positions the cache has room for:
        :func:`kv_bytes_per_token` measured on the arrays."""
        first = self.layers[0].keys
        return self.nbytes / (first.shape[0] * first.shape[2])
