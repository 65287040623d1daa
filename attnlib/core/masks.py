"""Masks: which keys each query may attend to.

Every mask in attnlib is boolean and ``True`` means "may attend". Masks broadcast
against scores of shape ``(..., L_q, L_k)``. Combine masks with ``&`` (e.g. causal &
padding).

Broadcasting aligns axes from the right, so a key-padding mask of shape ``(B, 1, L_k)``
fits scores ``(B, L_q, L_k)``; for scores with a head axis ``(B, H, L_q, L_k)`` insert
it first (``mask[:, None]``), or let :func:`attnlib.multi_head_attention` do it.

* ``causal_mask``         a position sees itself and earlier positions (decoders,
                          language models)
* ``bidirectional_mask``  every position sees every position (encoders such as BERT)
* ``padding_mask``        only the first (or last) ``valid_len`` keys are real tokens
* ``query_padding_mask``  only the real queries produce output (padding queries get
                          zeros)

Source: Vaswani et al. (2017), section 3.2.3 (masking illegal connections in the
decoder).
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import as_length


def causal_mask(
    n_queries: int, n_keys: int | None = None, *, align: str | None = None
) -> np.ndarray:
    """Causal (look-ahead) mask: query ``i`` may attend key ``j`` only if ``j`` is not
       later.

    Parameters
    ----------
    n_queries : int
        ``L_q``, the number of queries.
    n_keys : int, optional
        ``L_k``; defaults to ``n_queries`` (self-attention). The diagonal is allowed.
    align : {"start", "end"}, required when ``n_keys != n_queries``
        Which positions the queries occupy among the keys. ``"end"``: the queries are
        the *last* ``L_q`` positions of the ``L_k`` keys (decoding new tokens after a
        cached prefix: query ``i`` sees keys ``j <= i + L_k - L_q``). ``"start"``: the
        queries are the *first* ``L_q`` positions (query ``i`` sees keys ``j <= i``).
        There is no silent default because the two conventions disagree (different
        libraries chose differently).

    Returns
    -------
    numpy.ndarray of bool, shape (L_q, L_k)

    Raises
    ------
    TypeError
        If a length is not an integer.
    ValueError
        If a length is negative, ``align`` is unknown, or the lengths differ and
        ``align`` is not given.

    Example: ``causal_mask(3)`` is ``[[T, F, F], [T, T, F], [T, T, T]]``;
    ``causal_mask(2, 4, align="end")`` is ``[[T, T, T, F], [T, T, T, T]]``.

    Source: Vaswani et al. (2017), section 3.2.3 ("preventing leftward information
    flow").
    """
    n_queries = as_length(n_queries, "n_queries")
    n_keys = n_queries if n_keys is None else as_length(n_keys, "n_keys")
    offset = _causal_offset(n_queries, n_keys, align)  # ValueError without align
    return _up_to_diagonal(n_queries, n_keys, offset)


def _causal_offset(n_queries: int, n_keys: int, align, what: str = "mask") -> int:
    """Where a causal pattern's queries sit: query ``i`` may attend key ``j`` when ``j
    <= i + offset``.

    ``align="end"``: the queries are the last ``L_q`` of the ``L_k`` positions (offset
    ``L_k - L_q``); ``"start"`` or equal lengths: offset 0. ``ValueError`` for another
    ``align``, or for ``L_q != L_k`` without one (there is no silent default: libraries
    disagree).
    """
    if align is not None and align not in ("start", "end"):
        raise ValueError(f"align must be 'start' or 'end'; got {align!r}")
    if n_queries != n_keys and align is None:
        raise ValueError(
            f"causal {what} with L_q={n_queries} != L_k={n_keys}: say which positions "
            "the queries occupy with align='end' (queries are the last L_q positions, "
            "as when decoding after a prefix) or align='start' (queries are the first "
            "L_q positions)"
        )
    return n_keys - n_queries if align == "end" else 0


def _up_to_diagonal(n_rows: int, n_cols: int, shift: int) -> np.ndarray:
    """The causal rule on a grid: entry (i, j) is allowed when ``j <= i + shift``.

    :func:`causal_mask` is this with ``shift`` = the queries' offset among the keys;
    :func:`attnlib.tiled_attention` uses it for one tile the diagonal crosses. Returns a
    bool array of shape ``(n_rows, n_cols)``; the lengths are not checked here.
    """
    i = np.arange(n_rows)[:, None]  # (n_rows, 1), query
    j = np.arange(n_cols)[None, :]  # (1, n_cols), key
    return j <= i + shift  # (n_rows, n_cols)


def bidirectional_mask(n_queries: int, n_keys: int | None = None) -> np.ndarray:
    """All-``True`` mask of shape ``(L_q, L_k)``: every query may attend every key.

    Parameters: ``n_queries`` (``L_q``) and ``n_keys`` (``L_k``, default ``L_q``),
    integers. Returns a bool array of shape ``(L_q, L_k)``. Raises ``TypeError`` for a
    non-integer and ``ValueError`` for a negative length.

    Source: Devlin et al. (2019), section 3 (BERT's bidirectional encoder); Vaswani et
    al. (2017), section 3.2.3 (encoder self-attention).
    """
    n_queries = as_length(n_queries, "n_queries")
    n_keys = n_queries if n_keys is None else as_length(n_keys, "n_keys")
    return np.ones((n_queries, n_keys), dtype=bool)


def _valid_lengths(valid_lens, n: int, name: str) -> np.ndarray:
    lens = np.asarray(valid_lens)
    if lens.size == 0 and lens.dtype.kind == "f":  # np.asarray([]) is float64
        lens = lens.astype(np.int64)
    if lens.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integers; got dtype {lens.dtype}")
    if lens.size and (lens.min() < 0 or lens.max() > n):
        raise ValueError(f"{name} must lie between 0 and {n}; got {lens.tolist()}")
    return lens


def padding_mask(valid_lens, n_keys: int, *, side: str = "right") -> np.ndarray:
    """Key padding mask from valid lengths: padding keys may not be attended.

    Parameters
    ----------
    valid_lens : array_like of int
        Shape ``(B,)``: one length per sequence, the same for all its queries; or shape
        ``(B, L_q)``: one length per query (as in D2L's ``masked_softmax``).
    n_keys : int
        ``L_k``, the padded length.
    side : {"right", "left"}
        Where the padding sits. ``"right"``: keys ``j < valid_len`` are real.
        ``"left"``: keys ``j >= L_k - valid_len`` are real.

    Returns
    -------
    numpy.ndarray of bool
        Shape ``(B, 1, L_k)`` for ``(B,)`` lengths (broadcasts over queries), or ``(B,
        L_q, L_k)`` for per-query lengths. A length of 0 gives an all-``False`` row,
        which attention turns into all-zero weights and a zero output.

    Raises
    ------
    TypeError
        If the lengths are not integers (their dtype is named).
    ValueError
        If a length is negative or larger than ``n_keys``, ``valid_lens`` has more than
        two axes, or ``side`` is unknown.

    Example: ``padding_mask([2, 0], 4)[:, 0]`` is ``[[T, T, F, F], [F, F, F, F]]``;
    with ``side="left"`` the first row becomes ``[F, F, T, T]``.

    Source: Zhang et al., "Dive into Deep Learning" (2023), section 11.3
    (``masked_softmax`` with valid lengths); the key-padding masks of Vaswani et al.
    (2017) implementations.
    """
    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left'; got {side!r}")
    n_keys = as_length(n_keys, "n_keys")
    lens = _valid_lengths(valid_lens, n_keys, "valid_lens")
    j = np.arange(n_keys)
    if lens.ndim == 1:
        lens = lens[:, None]
    elif lens.ndim != 2:
        raise ValueError(
            f"valid_lens must have shape (B,) or (B, L_q); got {lens.shape}"
        )
    lens = lens[..., None]  # (B, 1 or L_q, 1)
    return j < lens if side == "right" else j >= n_keys - lens


def query_padding_mask(
    valid_lens, n_queries: int, *, side: str = "right"
) -> np.ndarray:
    """Query padding mask of shape ``(B, L_q, 1)``: padding queries attend nothing.

    Combine with a key mask by ``&``. Padding queries then get all-zero weights and a
    zero output, so they cannot leak anything into later layers.

    Parameters
    ----------
    valid_lens : array_like of int, shape (B,)
    n_queries : int, ``L_q``, the padded query length
    side : {"right", "left"}, where the padding sits

    Returns
    -------
    numpy.ndarray of bool, shape (B, L_q, 1): ``True`` for real queries.

    Raises
    ------
    TypeError
        If the lengths are not integers (their dtype is named).
    ValueError
        If a length is negative or larger than ``n_queries``, ``valid_lens`` is not 1-D,
        or ``side`` is unknown.

    Source: Zhang et al., "Dive into Deep Learning" (2023), section 11.3; the padding
    masks of Vaswani et al. (2017) implementations.
    """
    if side not in ("right", "left"):
        raise ValueError(f"side must be 'right' or 'left'; got {side!r}")
    n_queries = as_length(n_queries, "n_queries")
    lens = _valid_lengths(valid_lens, n_queries, "valid_lens")
    if lens.ndim != 1:
        raise ValueError(f"valid_lens must have shape (B,); got {lens.shape}")
    i = np.arange(n_queries)[None, :]
    real = i < lens[:, None] if side == "right" else i >= n_queries - lens[:, None]
    return real[..., None]
