"""Position information: sinusoidal encodings, rotary embeddings and linear biases.

Attention by itself treats its keys as a set: permuting the input rows permutes the
output rows the same way (permutation equivariance). A model that must tell "the dog bit
the man" from "the man bit the dog" therefore needs position put back in. Three ways are
implemented here:

* **absolute, added to the input**: :func:`sinusoidal_encoding` (Vaswani et al. 2017,
  section 3.5). Within each pair of coordinates the encoding of position ``p + k`` is
  the one of ``p`` turned by a fixed angle, so a fixed matrix
  (:func:`sinusoidal_shift_matrix`) maps every position to the one ``k`` further on;
* **relative, inside the scores by rotation**: :func:`rotary_embedding` (Su et al. 2021,
  section 3.4, RoFormer): queries and keys are rotated by an angle proportional to their
  position, so the score of query ``m`` and key ``n`` depends on ``m - n`` only;
* **relative, added to the scores**: :func:`alibi_bias` (Press et al. 2022, section 3):
  a penalty proportional to the distance between query and key, one slope per head.

:func:`similarity_by_distance` measures any table of position vectors (for example a
trained model's learned absolute position embeddings): the mean cosine similarity of two
positions as a function of how far apart they are.

Shapes: a table of encodings is ``(L, d)``, one row per position; queries and keys are
``(..., L, d)``. Every function returns float64 unless it says otherwise.
"""

from __future__ import annotations

import numpy as np

from attnlib.core._rotary import positions_of, rotate
from attnlib.core._validation import as_float_array, as_length, as_real_number
from attnlib.layers._validation import finite_array, fits

#: The base of the wavelengths in Vaswani et al. (2017), section 3.5 (and of RoFormer).
BASE = 10_000.0


def _even_width(d_model, name: str = "d_model") -> int:
    d = as_length(d_model, name)
    if d == 0 or d % 2:
        raise ValueError(
            f"{name} must be a positive even number (coordinates come in sine/"
            f"cosine pairs); got {d}"
        )
    return d


def _check_base(base) -> float:
    """``base`` as a float: ``TypeError`` naming it for a non-number (1j, "2",
    ``True``), ``ValueError`` unless finite and greater than 1."""
    base = as_real_number(base, "base")
    if not np.isfinite(base) or base <= 1.0:
        raise ValueError(f"base must be a finite number greater than 1; got {base}")
    return base


def frequencies(d_model: int, base: float = BASE) -> np.ndarray:
    """The angular frequencies of the coordinate pairs: ``omega_i = base^(-2i /
       d_model)``.

    Parameters
    ----------
    d_model : int, positive and even
    base : float > 1, default 10,000

    Returns
    -------
    numpy.ndarray, shape (d_model / 2,), float64: from 1 (pair 0, wavelength ``2 pi``)
    down to ``base^(-(d_model - 2) / d_model)`` (wavelength nearly ``2 pi base``).

    Raises
    ------
    ValueError
        If ``d_model`` is not a positive even integer or ``base <= 1``.
    TypeError
        If ``d_model`` is not an integer.

    Source: Vaswani et al. (2017), section 3.5; Su et al. (2021), section 3.4 (the same
    frequencies ``theta_i``).
    """
    d = _even_width(d_model)
    base = _check_base(base)
    return base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)


def sinusoidal_encoding(
    num_positions: int, d_model: int, base: float = BASE
) -> np.ndarray:
    """The Transformer's fixed position encodings, one row per position.

    ``PE[p, 2i] = sin(p * omega_i)`` and ``PE[p, 2i + 1] = cos(p * omega_i)`` with
    ``omega_i = base^(-2i / d_model)``: coordinate pairs are points on circles, turning
    at wavelengths from ``2 pi`` to about ``2 pi * base``. They are added to the token
    embeddings.

    Parameters
    ----------
    num_positions : int >= 0, the number of positions ``L``
    d_model : int, positive and even
    base : float > 1, default 10,000

    Returns
    -------
    numpy.ndarray, shape (L, d_model), float64, every entry in [-1, 1].

    Raises
    ------
    ValueError
        If ``num_positions`` is negative, ``d_model`` is not a positive even integer or
        ``base <= 1``.
    TypeError
        If a length is not an integer.

    Source: Vaswani et al. (2017), section 3.5 (the formulas for ``PE(pos, 2i)`` and
    ``PE(pos, 2i+1)``).
    """
    L = as_length(num_positions, "num_positions")
    omega = frequencies(d_model, base)  # (d/2,)
    angles = np.arange(L, dtype=np.float64)[:, None] * omega  # (L, d/2)
    pe = np.empty((L, omega.size * 2))  # (L, d)
    pe[:, 0::2] = np.sin(angles)
    pe[:, 1::2] = np.cos(angles)
    return pe


def _rotation_blocks(angles: np.ndarray) -> np.ndarray:
    """Block-diagonal matrix of 2 x 2 rotations ``[[cos a, sin a], [-sin a, cos
    a]]``."""
    d = 2 * angles.size
    R = np.zeros((d, d))
    c, s = np.cos(angles), np.sin(angles)
    i = np.arange(0, d, 2)
    R[i, i], R[i, i + 1] = c, s
    R[i + 1, i], R[i + 1, i + 1] = -s, c
    return R


def sinusoidal_shift_matrix(
    offset: int, d_model: int, base: float = BASE
) -> np.ndarray:
    """The fixed matrix ``R_k`` with ``PE(p + k) = R_k PE(p)`` for every position ``p``.

    It is block-diagonal: for pair ``i`` the block ``[[cos k omega_i, sin k omega_i],
    [-sin k omega_i, cos k omega_i]]`` acting on ``(sin p omega_i, cos p omega_i)``, a
    rotation by ``k omega_i`` (the addition formulas of sine and cosine). It does not
    depend on ``p``: this is the property Vaswani et al. give for choosing sinusoids
    ("for any fixed offset k, PE_{pos+k} can be represented as a linear function of
    PE_pos"). For a whole table of row vectors, ``PE[k:] = PE[:-k] @ R_k.T``.

    Parameters
    ----------
    offset : int (any sign), the shift ``k``
    d_model : int, positive and even
    base : float > 1, default 10,000

    Returns
    -------
    numpy.ndarray, shape (d_model, d_model), float64, orthogonal (``R_k R_k^T = I``)
    with ``R_{-k} = R_k^T`` and ``R_j R_k = R_{j+k}``.

    Raises
    ------
    TypeError
        If ``offset`` or ``d_model`` is not an integer.
    ValueError
        If ``d_model`` is not a positive even integer or ``base <= 1``.

    Source: Vaswani et al. (2017), section 3.5.
    """
    if isinstance(offset, bool) or not isinstance(offset, (int, np.integer)):
        raise TypeError(f"offset must be an integer; got {offset!r}")
    return _rotation_blocks(int(offset) * frequencies(d_model, base))


def rotary_embedding(x, positions=None, base: float = BASE) -> np.ndarray:
    """Rotate each coordinate pair of every row by an angle proportional to its
       position.

    Row ``m`` of ``x`` has pair ``(x_{2i}, x_{2i+1})`` turned by the angle ``m *
    theta_i`` with ``theta_i = base^(-2i/d)``::

        out_{2i}   = x_{2i} cos(m theta_i) - x_{2i+1} sin(m theta_i)
        out_{2i+1} = x_{2i} sin(m theta_i) + x_{2i+1} cos(m theta_i)

    Applied to queries and keys (not to values) before the dot product, it makes the
    score of query ``m`` and key ``n`` a function of ``q``, ``k`` and ``m - n`` only,
    because ``(R_m q) . (R_n k) = q . (R_{n-m} k)``.

    Parameters
    ----------
    x : array_like, shape (..., L, d), d even; floats or integers
    positions : array_like of int, shape (L,), optional
        The position of each row; default ``0, 1, ..., L - 1``.
    base : float > 1, default 10,000

    Returns
    -------
    numpy.ndarray, shape (..., L, d), float64; norms of the pairs are unchanged.

    Raises
    ------
    ValueError
        If ``x`` has fewer than 2 axes, an odd or zero last axis, holds NaN or inf,
        ``positions`` is not one integer per row, or ``base <= 1``.
    TypeError
        If ``x`` is not a real array or ``positions`` are not integers.
    OverflowError
        If a rotated coordinate exceeds the largest float64 (inputs near 1.8e308).

    Source: Su et al. (2021), RoFormer, section 3.4 (the rotation matrix and its
    efficient pairwise form).
    """
    x = finite_array(x, "x", "(..., L, d)", 2).astype(np.float64)
    _even_width(x.shape[-1], "the last axis of x")
    pos = positions_of(positions, x.shape[-2], "positions")  # (L,)
    with np.errstate(over="ignore", invalid="ignore"):  # checked by fits
        out = rotate(x, pos, _check_base(base))  # (..., L, d)
    return fits(out, "rotated coordinates")


def alibi_slopes(num_heads: int) -> np.ndarray:
    """ALiBi's head slopes: the geometric sequence ``2^(-8/H), 2^(-16/H), ..., 2^(-8)``.

    Parameters
    ----------
    num_heads : int >= 1

    Returns
    -------
    numpy.ndarray, shape (num_heads,), float64, decreasing from ``2^(-8/H)`` to
    ``2^(-8)``.

    Raises
    ------
    ValueError
        If ``num_heads < 1``.
    TypeError
        If ``num_heads`` is not an integer.

    Source: Press et al. (2022), section 3 (the slopes for ``H`` heads, ``H`` a power of
    two; the same formula is used here for any ``H``).
    """
    H = as_length(num_heads, "num_heads")
    if H < 1:
        raise ValueError(f"num_heads must be at least 1; got {H}")
    return 2.0 ** (-8.0 * np.arange(1, H + 1) / H)


def alibi_bias(
    num_queries: int, num_keys: int | None = None, num_heads: int = 1
) -> np.ndarray:
    """The linear biases added to the scores: ``-slope_h * |i - j|`` for query ``i`` and
       key ``j``.

    Press et al. use it with a causal mask (keys ``j <= i``, so the bias is ``-slope (i
    - j)``); the absolute distance makes the table usable without one. Queries and keys
    are aligned at the start (query ``i`` sits at key position ``i``).

    Parameters
    ----------
    num_queries, num_keys : int >= 0 (``num_keys`` defaults to ``num_queries``)
    num_heads : int >= 1

    Returns
    -------
    numpy.ndarray, shape (num_heads, L_q, L_k), float64, zero on the diagonal, at most
    0.

    Raises
    ------
    ValueError, TypeError
        For negative or non-integer sizes.

    Source: Press et al. (2022), section 3, figure 3.
    """
    Lq = as_length(num_queries, "num_queries")
    Lk = Lq if num_keys is None else as_length(num_keys, "num_keys")
    distance = np.abs(np.arange(Lq)[:, None] - np.arange(Lk)[None, :])  # (L_q, L_k)
    return -alibi_slopes(num_heads)[:, None, None] * distance  # (H, L_q, L_k)


def similarity_by_distance(embeddings, max_distance: int) -> np.ndarray:
    """Mean cosine similarity of two rows of a position table, by their distance.

    ``out[k] = mean over p of cos(E[p], E[p + k])`` for ``k = 0 .. max_distance``
    (``out[0] = 1``).

    Parameters
    ----------
    embeddings : array_like, shape (L, d), one row per position, no zero row
    max_distance : int, ``0 <= max_distance < L``

    Returns
    -------
    numpy.ndarray, shape (max_distance + 1,), float64.

    Raises
    ------
    ValueError
        If ``embeddings`` is not 2-D, has a zero row or NaN/inf, or ``max_distance`` is
        out of range.
    TypeError
        If ``embeddings`` is not real or ``max_distance`` not an integer.

    Source: the book's own measurement (chapter "Order and position"); the encodings it
    is applied to are those of Vaswani et al. (2017), section 3.5, and Devlin et al.
    (2019).
    """
    E = as_float_array(embeddings, "embeddings").astype(np.float64)
    if E.ndim != 2:
        raise ValueError(f"embeddings must have shape (L, d); got {E.shape}")
    if not np.isfinite(E).all():
        raise ValueError("embeddings hold NaN or inf")
    K = as_length(max_distance, "max_distance")
    if K >= E.shape[0]:
        raise ValueError(
            f"max_distance must be below the number of positions {E.shape[0]}; got {K}"
        )
    if np.any(np.all(E == 0, axis=1)):
        raise ValueError(
            "embeddings have a zero row: its cosine similarity is undefined"
        )
    E = E / np.max(np.abs(E), axis=1, keepdims=True)  # the same directions; no overflow
    U = E / np.linalg.norm(E, axis=1)[:, None]  # (L, d), unit rows
    return np.array(
        [np.mean(np.sum(U[: E.shape[0] - k] * U[k:], axis=1)) for k in range(K + 1)]
    )
