"""Rotary position embeddings as the attention functions apply them (RoFormer).

Row ``m`` of ``x`` has each coordinate pair ``(x_{2i}, x_{2i+1})`` turned by the angle
``m theta_i``, ``theta_i = base^(-2i/d)``. The public, checked entry point is
:func:`attnlib.rotary_embedding`; this is the computation it shares with
``multi_head_attention(..., rotary=True)``, ``grouped_query_attention(...,
rotary=True)`` and the causal block, which rotate in their own dtype.

Source: Su et al. (2021), RoFormer, section 3.4.
"""

from __future__ import annotations

import numpy as np

BASE = 10_000.0


def positions_of(positions, L: int, name: str) -> np.ndarray:
    """``positions`` as float64 of shape (L,) (default ``0 .. L-1``); ``TypeError`` for
    non-integers and ``ValueError`` for another shape, both naming ``name`` (negative
    positions are fine: RoPE is defined for every integer)."""
    if positions is None:
        return np.arange(L, dtype=np.float64)
    pos = np.asarray(positions)
    if pos.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integers; got dtype {pos.dtype}")
    if pos.shape != (L,):
        raise ValueError(f"{name} must have shape ({L},), one per row; got {pos.shape}")
    return pos.astype(np.float64)


def rotate(x: np.ndarray, positions: np.ndarray, base: float = BASE) -> np.ndarray:
    """``x`` (..., L, d), d even, with row ``m`` rotated by ``positions[m] theta_i``,
    in the dtype of ``x``; ``-positions`` undoes it (the backward pass)."""
    d = x.shape[-1]
    if d % 2:
        raise ValueError(
            "rotary embeddings need an even head width (the last axis of the queries "
            f"and keys); got {d}"
        )
    theta = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)  # (d/2,)
    angles = positions[:, None] * theta  # (L, d/2)
    c, s = np.cos(angles).astype(x.dtype), np.sin(angles).astype(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., L, d/2) each
    out = np.empty_like(x)
    out[..., 0::2] = even * c - odd * s
    out[..., 1::2] = even * s + odd * c
    return out  # (..., L, d)
