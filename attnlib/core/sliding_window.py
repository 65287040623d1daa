"""Sliding-window attention: a causal mask that also forgets keys older than a window.

Query ``i`` may attend key ``j`` when ``i - w < j <= i``: itself and the ``w - 1``
positions before it. Each layer then reads at most ``w`` keys per query, so the scores
cost ``n * w`` instead of about ``n^2 / 2``, and a generating model needs to keep only
the last ``w`` keys and values of every layer (its cache stops growing). Information
from further back can still arrive, but only through several layers: after ``N``
layers a position can depend on about ``N * (w - 1)`` positions before it.

Source: Child et al. (2019), section 4.2 (attention to a fixed band of previous
positions, "strided" patterns); Beltagy et al. (2020), section 3.1 (Longformer's
sliding window); Vaswani et al. (2017), Table 1 (self-attention restricted to a
neighbourhood).
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import as_length, as_width
from attnlib.core.masks import causal_mask

__all__ = ["sliding_window_mask"]


def sliding_window_mask(
    n_queries: int, n_keys: int | None = None, *, window: int, align: str | None = None
) -> np.ndarray:
    """Causal mask restricted to the last ``window`` positions (the query's own
    included).

    Parameters
    ----------
    n_queries : int, ``L_q``
    n_keys : int, optional, ``L_k`` (default ``L_q``)
    window : int >= 1, how many positions a query sees: itself and ``window - 1`` before
        it. ``window >= L_k`` gives the plain causal mask.
    align : {"start", "end"}, required when ``L_q != L_k``, as in
        :func:`attnlib.causal_mask` (``"end"``: the queries are the last ``L_q``
        positions, as when decoding after a cached prefix)

    Returns
    -------
    numpy.ndarray of bool, shape (L_q, L_k): entry (i, j) is True when
    ``i + s - window < j <= i + s``, with ``s`` the queries' offset among the keys.

    Raises
    ------
    TypeError if a length or ``window`` is not an integer; ValueError if ``window`` is
    below 1, a length is negative, ``align`` is unknown or missing (as for
    :func:`attnlib.causal_mask`).

    Example: ``sliding_window_mask(4, window=2)`` allows (0, 0), (1, 0), (1, 1),
    (2, 1), (2, 2), (3, 2), (3, 3).

    Source: Beltagy et al. (2020), section 3.1; Child et al. (2019), section 4.2.
    """
    window = as_width(window, "window")  # at least 1: the query itself
    allowed = causal_mask(n_queries, n_keys, align=align)  # (L_q, L_k)
    n_q = as_length(n_queries, "n_queries")
    n_k = n_q if n_keys is None else as_length(n_keys, "n_keys")
    shift = n_k - n_q if align == "end" else 0
    i = np.arange(n_q)[:, None]  # (L_q, 1), query
    j = np.arange(n_k)[None, :]  # (1, L_k), key
    return allowed & (j > i + shift - window)  # (L_q, L_k)
