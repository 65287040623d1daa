"""Checker for the harder exercise of the chapter on order and position: rotary position
embedding (RoPE), written by the reader in numpy.

* :func:`check_rotary`  the reader's ``fn(x, positions)`` against
  :func:`attnlib.layers.positional_encoding.rotary_embedding`, then the relative
  property: scores of rotated queries and keys depend on the offset only
"""

from __future__ import annotations

import numpy as np

from attnlib.layers.positional_encoding import frequencies, rotary_embedding
from book_support.exercises import check_function, checker, try_reader


def _reference(x, positions):
    return rotary_embedding(x, np.asarray(positions))


def _rotate(x, positions, *, theta, sign=1.0, halves=False):
    x = np.asarray(x, dtype=float)
    angles = sign * np.asarray(positions, float)[:, None] * theta  # (L, d/2)
    c, s = np.cos(angles), np.sin(angles)
    out = np.empty_like(x)
    if halves:  # pairs (x_i, x_{i + d/2}) instead of neighbours
        h = x.shape[-1] // 2
        a, b = x[..., :h], x[..., h:]
        out[..., :h], out[..., h:] = a * c - b * s, a * s + b * c
        return out
    even, odd = x[..., 0::2], x[..., 1::2]
    out[..., 0::2], out[..., 1::2] = even * c - odd * s, even * s + odd * c
    return out


def _slips():
    def per_dim(x, positions):  # theta_i = base^(-i/d) instead of base^(-2i/d)
        d = np.shape(x)[-1]
        theta = 10000.0 ** (-np.arange(d // 2) / d)
        return _rotate(x, positions, theta=theta)

    def backwards(x, positions):
        return _rotate(x, positions, theta=frequencies(np.shape(x)[-1]), sign=-1.0)

    def halves(x, positions):
        return _rotate(x, positions, theta=frequencies(np.shape(x)[-1]), halves=True)

    def from_one(x, positions):
        return rotary_embedding(x, np.asarray(positions) + 1)

    return [
        (
            per_dim,
            "your frequencies use base^(-i/d) for pair i; RoPE uses base^(-2i/d), the "
            "exponent of the sinusoidal encoding (pair i holds coordinates 2i, 2i+1).",
        ),
        (
            backwards,
            "you rotate by -m theta_i (clockwise); out_2i = x_2i cos - x_2i+1 sin, "
            "out_2i+1 = x_2i sin + x_2i+1 cos turns counter-clockwise.",
        ),
        (
            halves,
            "you pair coordinate i with coordinate i + d/2 (the 'rotate half' layout "
            "of some libraries); here pairs are neighbours (2i, 2i+1), as in "
            "RoFormer.",
        ),
        (
            from_one,
            "your positions start at 1; the first row sits at the given position "
            "(position 0 is not rotated at all).",
        ),
    ]


def _cases():
    rng = np.random.default_rng(5)
    return [
        ("one row of width 2 at position 3", (rng.normal(size=(1, 2)), [3]), None),
        (
            "6 rows of width 8 at positions 0..5",
            (rng.normal(size=(6, 8)), range(6)),
            None,
        ),
        (
            "4 rows of width 16 at positions 7, 2, 100, 0",
            (rng.normal(size=(4, 16)), [7, 2, 100, 0]),
            "positions are not always 0, 1, 2, ...: use the positions you are given.",
        ),
        (
            "a batch of 2 x 3 rows of width 4 at positions 0, 1, 2",
            (rng.normal(size=(2, 3, 4)), [0, 1, 2]),
            "leading batch axes should pass through: rotate along the last axis.",
        ),
    ]


@checker("your function", answers=("fn",))
def check_rotary(fn) -> bool:
    """Check the reader's RoPE ``fn(x, positions)`` (``x`` of shape (..., L, d), d even;
    ``positions`` L integers) on four inputs, then show the relative property with it.

    Diagnosed slips: frequencies ``base^(-i/d)`` instead of ``base^(-2i/d)``, rotation
    by the negative angle, coordinate ``i`` paired with ``i + d/2`` instead of ``2i``
    with ``2i + 1``, positions counted from 1.

    Source: Su et al. (2021), RoFormer, section 3.4.
    """
    cases = [(label, (x, list(p)), hint) for label, (x, p), hint in _cases()]
    if not check_function(
        fn,
        _reference,
        cases,
        atol=1e-8,
        slips=_slips(),
    ):
        return False
    rng = np.random.default_rng(9)
    q, k = rng.normal(size=(1, 8)), rng.normal(size=(1, 8))
    ok, scores = try_reader(
        lambda: [float(fn(q, [m])[0] @ fn(k, [m - 3])[0]) for m in (3, 10, 50)],
        label="your function",
    )
    if not ok:
        return False
    print(
        "With your function, one query and one key three positions apart score "
        + ", ".join(f"{s:.4f}" for s in scores)
        + " at positions (3, 0), (10, 7) and (50, 47): the offset alone decides."
    )
    return True
