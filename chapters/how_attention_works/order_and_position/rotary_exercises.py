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
    def per_dim(x, positions):  # theta_i = 10000^(-i/d) instead of 10000^(-2i/d)
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
            "your frequencies use 10000^(-i/d) for pair i; RoPE uses 10000^(-2i/d), "
            "the exponent of the sinusoidal encoding (pair i holds coordinates 2i, "
            "2i+1).",
        ),
        (
            backwards,
            "you rotate by -t theta_i (clockwise); out_2i = x_2i cos - x_2i+1 sin, "
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


#: A probe for a function that ignores the positions: one row repeated at four
#: positions, so that a right RoPE returns four different rows.
_PROBE_POSITIONS = [2, 0, 3, 5]


def _pair_angles(x, y):
    """The angle by which each coordinate pair of ``x`` was turned into ``y``."""
    xe, xo, ye, yo = x[..., 0::2], x[..., 1::2], y[..., 0::2], y[..., 1::2]
    return np.arctan2(xe * yo - xo * ye, xe * ye + xo * yo)


def _position_diagnosis(fn):
    """A ``diagnose`` for :func:`check_function`: run ``fn`` on one row repeated at
    positions 2, 0, 3 and 5 and say whether it ignores the positions (no rotation at
    all, or the same one at every position), uses 0, 1, 2, ... instead of them, or
    turns every pair of a row by the same angle. ``None`` when none explains the
    mistake."""

    def diagnose(args, got):
        row = np.random.default_rng(17).normal(size=(1, 8))
        probe = np.repeat(row, len(_PROBE_POSITIONS), axis=0)  # (4, 8)
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(fn(probe.copy(), list(_PROBE_POSITIONS)), dtype=float)
        except Exception:  # the reader's code: no diagnosis, the verdict stands
            return None
        if out.shape != probe.shape or not np.all(np.isfinite(out)):
            return None
        if np.allclose(out, probe, atol=1e-8):
            return (
                "your function returns its input unchanged: nothing is rotated. The "
                "row at position t turns each pair (x_2i, x_2i+1) by the angle "
                "t theta_i, so only the row at position 0 stays as it is."
            )
        if np.allclose(out, out[:1], atol=1e-8):
            return (
                "your function ignores the positions: the same row at positions 2, 0, "
                "3 and 5 comes out transformed alike. The angle must grow with the "
                "row's own position t (t theta_i), and position 0 is not turned at "
                "all."
            )
        if np.allclose(out, rotary_embedding(probe, np.arange(len(probe))), atol=1e-8):
            return (
                "you use the positions 0, 1, 2, ... instead of the positions given: "
                "row r sits at positions[r]."
            )
        angles = _pair_angles(probe, out)  # (4, 4): position, pair
        norms_kept = np.allclose(
            np.hypot(out[:, 0::2], out[:, 1::2]),
            np.hypot(probe[:, 0::2], probe[:, 1::2]),
            atol=1e-8,
        )
        if norms_kept and np.allclose(angles, angles[:, :1], atol=1e-8):
            return (
                "every pair of a row turns by the same angle; pair i must turn by "
                "t theta_i with its own frequency theta_i = 10000^(-2i/d), so the "
                "later pairs turn more slowly."
            )
        return None

    return diagnose


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

    Diagnosed slips: frequencies ``10000^(-i/d)`` instead of ``10000^(-2i/d)``, rotation
    by the negative angle, coordinate ``i`` paired with ``i + d/2`` instead of ``2i``
    with ``2i + 1``, positions counted from 1; and, on a probe of one row repeated at
    several positions, a function that ignores the positions (no rotation, or the same
    at every position), uses the row numbers 0, 1, 2, ... as positions or turns every
    pair of a row by one angle.

    Source: Su et al. (2021), RoFormer, section 3.4.
    """
    cases = [(label, (x, list(p)), hint) for label, (x, p), hint in _cases()]
    if not check_function(
        fn,
        _reference,
        cases,
        atol=1e-8,
        slips=_slips(),
        diagnose=_position_diagnosis(fn),
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
