"""Checkers for the exercises of the chapter "The cost of attention".

* :func:`check_score_entries`  how many scores one head computes for ``n`` positions
* :func:`check_score_memory`   how much memory those scores take, in GiB
* :func:`check_skipped_tiles`  how many tiles causal tiled attention never computes
* :func:`check_merge`          the reader's rescaling step of the online softmax

Expected answers come from attnlib (:func:`attnlib.scaled_dot_product_scores` for the
shape of the score matrix, :func:`attnlib.core.tiled.tile_plan` for the tiles) or, for
the online softmax, from the scores themselves. Sources: Vaswani et al. (2017), section
4 (the quadratic cost of self-attention); Milakov & Gimelshein (2018); Dao et al.
(2022). Every checker takes ``show_answer=True`` to print the expected answer after the
diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import math

import numpy as np

from attnlib.core.scores import scaled_dot_product_scores
from attnlib.core.tiled import SKIPPED, tile_plan
from book_support.exercises import (
    WrongKind,
    as_floats,
    check_close,
    checker,
    function_name,
    require_function,
    show_answer,
    shown,
    try_reader,
)

GIB = 2**30


def _entries(n: int) -> int:
    """Entries of one head's score matrix for ``n`` positions (the shape of a real
    one)."""
    shape = scaled_dot_product_scores(np.zeros((n, 1)), np.zeros((n, 1))).shape
    return math.prod(shape)


@checker("your number of scores for n = {n}")
def check_score_entries(answer, n: int) -> bool:
    """Check the number of attention scores one head computes for ``n`` positions.

    Parameters
    ----------
    answer : int
    n : int, the sequence length (kept small enough to build the score matrix: n <=
        4096)

    Returns
    -------
    bool, True when ``answer`` equals ``n * n``; a hint otherwise.
    """
    if not 0 <= int(n) <= 4096:
        raise ValueError(f"n must lie between 0 and 4096 for this checker; got {n}")
    expected = _entries(int(n))
    got = as_floats(answer, "your number of scores", shape=())
    return check_close(
        got,
        expected,
        name="your number of scores",
        atol=0.5,
        count=True,
        slips=(
            (
                2 * n,
                "every query is compared with every key, not only with its neighbours.",
            ),
            (
                n * (n + 1) / 2,
                "that counts a causal mask's allowed pairs; the full matrix has n x n.",
            ),
        ),
        hint="one score per (query, key) pair, and there are n queries and n keys.",
    )


@checker("your memory in GiB (one number)")
def check_score_memory(
    answer_gib, n: int, *, heads: int = 1, bytes_per_entry: int = 4
) -> bool:
    """Check the memory, in GiB (2**30 bytes), of ``heads`` score matrices of ``n x n``.

    Parameters
    ----------
    answer_gib : float
    n, heads : int
    bytes_per_entry : int, 4 for float32, 2 for float16, 8 for float64

    Returns
    -------
    bool, True when ``answer_gib`` is within 1% of ``heads * n**2 * bytes_per_entry /
    2**30``.
    """
    expected = heads * n * n * bytes_per_entry / GIB
    got = as_floats(answer_gib, "your memory in GiB", shape=())
    slips = [
        (
            expected * GIB / 1e9,
            "that is in GB (10^9 bytes); the exercise asks for GiB "
            "(2^30 bytes), which is about 7% more than a GB.",
        )
    ]
    if heads > 1:
        slips.append(
            (
                expected / heads,
                "that is one head's score matrix; did you forget the "
                "other heads? Every head has its own: multiply by the "
                "number of heads.",
            )
        )
        slips.append(
            (
                expected / heads * GIB / 1e9,
                "that is one head, in GB: multiply by the "
                "number of heads and divide by 2^30, not 10^9.",
            )
        )
    if bytes_per_entry != 4:
        slips.append(
            (
                expected * 4 / bytes_per_entry,
                "that assumes 4 bytes per score (float32); "
                f"here each score takes {bytes_per_entry}.",
            )
        )
    slips.append(
        (expected * 1024, "that is in MiB (2^20 bytes); divide by 1,024 for GiB.")
    )
    slips.append((expected * GIB, "that is in bytes; divide by 2^30 for GiB."))
    return check_close(
        got,
        expected,
        name="your memory in GiB",
        atol=0.0,
        rtol=0.01,
        slips=slips,
        hint="entries x bytes per entry x heads, then divide by 2^30.",
    )


@checker("your number of skipped tiles")
def check_skipped_tiles(answer, n: int, block: int) -> bool:
    """Check how many tiles causal tiled attention skips for ``n`` positions in blocks
       of ``block``.

    Parameters
    ----------
    answer : int
    n, block : int

    Returns
    -------
    bool, True when ``answer`` equals the number of :data:`attnlib.core.tiled.SKIPPED`
    tiles of :func:`attnlib.core.tiled.tile_plan` ``(n, n, block, causal=True)``.
    """
    plan = tile_plan(n, n, block, causal=True)
    expected = int((plan == SKIPPED).sum())
    got = as_floats(answer, "your number of skipped tiles", shape=())
    t = plan.shape[0]
    return check_close(
        got,
        expected,
        name="your number of skipped tiles",
        atol=0.5,
        count=True,
        slips=(
            (
                t * (t + 1) // 2,
                "that counts the tiles that are computed; the question asks for the "
                "skipped ones.",
            ),
            (
                t,
                "those are the tiles on the diagonal: they are computed, with their "
                "mask. Count the tiles strictly above it.",
            ),
            (
                t * t,
                "that is every tile of the grid; only the tiles strictly above the "
                "diagonal are skipped.",
            ),
            (
                (n * n - n * (n + 1) // 2),
                "that counts skipped score entries; count whole tiles of "
                f"{block} x {block}.",
            ),
        ),
        hint=f"there are {t} x {t} tiles; a tile is skipped when every key in "
        "it comes after "
        "every query in it.",
    )


def _block_summary(scores):
    s = np.asarray(scores, dtype=float)
    m = float(s.max())
    return m, float(np.exp(s - m).sum())


_MERGE_CASES = [
    ([2.0, 4.0], [1.0]),  # the second block has the smaller maximum
    ([1.0], [2.0, 4.0]),  # the second block has the larger maximum
    ([0.5, 0.5], [0.5]),  # equal maxima
    ([-700.0, -701.0], [-699.0]),  # large negative scores (exp(m) is about 1e-304)
    ([700.0], [710.0, 705.0]),  # exp(m) alone would overflow to inf
]


def _as_pair(value, label: str) -> tuple:
    """The reader's ``(m, l)`` as two floats, or :class:`WrongKind` saying what came
    back instead."""
    if value is None:
        raise WrongKind(f"{label} returned None; did you forget `return m, l`?")
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = tuple(value)  # np.array([m, l]) is a pair too
    if isinstance(value, (tuple, list)) and len(value) != 2:
        raise WrongKind(
            f"{label} returned {len(value)} values; return the pair (m, l): the "
            "merged maximum and the merged sum."
        )
    if not isinstance(value, (tuple, list)):
        raise WrongKind(
            f"{label} returned {shown(value)}; return the pair (m, l): the merged "
            "maximum and the merged sum."
        )
    m, l = (
        as_floats(x, f"the {n} that {label} returned", shape=())
        for n, x in zip(("m", "l"), value)
    )
    return float(m), float(l)


def _inverted(got_l: float, m_a, l_a, m_b, l_b) -> bool:
    """True if ``got_l`` is ``l_a e^(m - m_a) + l_b e^(m - m_b)``: each exponent
    upside down."""
    m = max(m_a, m_b)
    if m_a == m_b or max(m - m_a, m - m_b) > 700:  # equal maxima: no factor at all
        return False
    wrong = l_a * math.exp(m - m_a) + l_b * math.exp(m - m_b)
    return math.isclose(got_l, wrong, rel_tol=1e-9)


def _close(x: float, y: float) -> bool:
    return math.isfinite(x) and math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def _merge_sum_hint(got_l, want_l, m_a, l_a, m_b, l_b) -> str:
    """What a merged sum that is wrong (the maximum being right) most likely did."""
    m = max(m_a, m_b)
    if m_a != m_b and abs(m_a - m_b) < 700:
        if _close(got_l, l_a + l_b * math.exp(m_b - m_a)):
            return (
                "you always rescale block b to block a's maximum, which is right only "
                "when m_a is the larger; here m_b is larger. Rescale each block to "
                "the common maximum m = max(m_a, m_b): the factor exp(its max - m) "
                "is 1 for the block that holds it."
            )
        if _close(got_l, l_a * math.exp(m_a - m_b) + l_b):
            return (
                "you always rescale block a to block b's maximum, which is right only "
                "when m_b is the larger; here m_a is larger. Rescale each block to "
                "the common maximum m = max(m_a, m_b): the factor exp(its max - m) "
                "is 1 for the block that holds it."
            )
    if want_l > 0:
        itself = (
            "return l itself, the sum of exp(s - m) over the scores of both blocks."
        )
        if _close(got_l, m + math.log(want_l)):
            return f"that is the log-sum-exp m + log l of the merged block; {itself}"
        if _close(got_l, math.log(want_l)):
            return f"that is log l, the logarithm of the merged sum; {itself}"
    if _close(got_l, (l_a + l_b) / 2) or _close(
        got_l, (l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)) / 2
    ):
        return (
            "that is an average; the merged l is a sum: it adds the two blocks' "
            "rescaled sums."
        )
    return (
        "the merged maximum is right, the sum is not. l must equal the sum of "
        "exp(s - m) over the scores of both blocks listed above: work it out from "
        "them and compare with what your function returns."
    )


@checker("your merge function")
def check_merge(fn) -> bool:
    """Check the reader's ``fn(m_a, l_a, m_b, l_b) -> (m, l)``, the online-softmax
       merge.

    ``(m_a, l_a)`` summarises block a of scores: its maximum and ``sum exp(s - m_a)``.
    The merged pair must summarise both blocks together: ``m = max`` of all scores and
    ``l = sum exp(s - m)`` over all of them. The expected pair is computed from the
    scores themselves, not from a merge formula.

    Returns
    -------
    bool, True when every case matches within 1e-9 (relative); the first failure is
    printed. An overflow (``math.exp`` raising ``OverflowError``, or numpy's exp
    overflowing) is reported with a hint rather than a traceback.
    """
    require_function(fn)
    name = function_name(fn)
    for a, b in _MERGE_CASES:
        m_a, l_a = _block_summary(a)
        m_b, l_b = _block_summary(b)
        want_m, want_l = _block_summary(a + b)

        def call():
            with np.errstate(all="raise"):
                return fn(m_a, l_a, m_b, l_b)

        label = f"{name}{(m_a, round(l_a, 4), m_b, round(l_b, 4))}"
        ok, got = try_reader(call, label=label)
        if not ok:
            return False
        got_m, got_l = _as_pair(got, label)
        if not (
            math.isclose(got_m, want_m, rel_tol=1e-9)
            and math.isclose(got_l, want_l, rel_tol=1e-9)
        ):
            print(
                f"Not yet: for blocks {a} and {b}, your (m, l) is ({got_m:.4f}, "
                f"{got_l:.4f})."
            )
            if math.isclose(got_m, want_l, rel_tol=1e-9) and math.isclose(
                got_l, want_m, rel_tol=1e-9
            ):
                print(
                    "Hint: your two numbers are right but swapped; return (m, l) in "
                    "that order: the merged maximum first, then the merged sum."
                )
            elif not math.isclose(got_m, want_m, rel_tol=1e-9):
                print("Hint: the merged maximum m is the larger of m_a and m_b.")
            elif math.isclose(got_l, l_a + l_b, rel_tol=1e-9) and m_a != m_b:
                print(
                    "Hint: l_a and l_b are measured from different maxima; multiply "
                    "each by "
                    "exp(its max - the new max) before adding."
                )
            elif _inverted(got_l, m_a, l_a, m_b, l_b):
                print(
                    "Hint: the exponent is upside down. Each factor is exp(its max - "
                    "the new max), at most 1: it shrinks the sum of the block whose "
                    "maximum was smaller."
                )
            else:
                print(f"Hint: {_merge_sum_hint(got_l, want_l, m_a, l_a, m_b, l_b)}")
            if show_answer():
                print(f"Expected: ({want_m:.4f}, {want_l:.4f}).")
            return False
    print(
        f"Correct: your merge agrees on all {len(_MERGE_CASES)} pairs of "
        "blocks, including "
        "scores near 700, where exp alone overflows, and near -700."
    )
    return True
