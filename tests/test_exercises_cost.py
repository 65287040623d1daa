"""The cost chapter's checkers accept right answers and reject wrong ones with a
reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cost_exercises import (
    check_merge,
    check_score_entries,
    check_score_memory,
    check_skipped_tiles,
)


def test_score_entries(capsys):
    assert check_score_entries(1_000_000, 1000)  # 1000 x 1000, by hand
    assert not check_score_entries(2000, 1000)
    assert "every key" in capsys.readouterr().out
    assert not check_score_entries(1000 * 1001 // 2, 1000)
    assert "causal" in capsys.readouterr().out
    with pytest.raises(ValueError):
        check_score_entries(1, 10_000)


def test_score_memory(capsys):
    # 32 heads x 4096^2 x 2 bytes = 2^5 * 2^24 * 2 = 2^30 bytes = 1 GiB
    assert check_score_memory(1.0, 4096, heads=32, bytes_per_entry=2)
    assert capsys.readouterr().out.startswith("Correct")
    assert not check_score_memory(2**30 / 1e9, 4096, heads=32, bytes_per_entry=2)
    assert "GB (10^9" in capsys.readouterr().out
    assert not check_score_memory(1 / 32, 4096, heads=32, bytes_per_entry=2)
    assert "heads" in capsys.readouterr().out
    assert not check_score_memory(1024, 4096, heads=32, bytes_per_entry=2)
    assert "that is in MiB" in capsys.readouterr().out  # 2^30 bytes = 1,024 MiB
    # 100,000 positions, float32: 4e10 bytes = 37.25 GiB
    assert check_score_memory(4e10 / 2**30, 100_000)


def test_skipped_tiles(capsys):
    # 16 positions, blocks of 4: a 4 x 4 grid of tiles, 6 lie strictly above the
    # diagonal
    assert check_skipped_tiles(6, 16, 4)
    assert not check_skipped_tiles(10, 16, 4)
    assert "computed" in capsys.readouterr().out
    assert not check_skipped_tiles(3, 16, 4)
    # blocks of 5 on 16 positions: 4 x 4 tiles again, still 6 above the diagonal
    assert check_skipped_tiles(6, 16, 5)


def test_merge_right_and_wrong(capsys):
    def good(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return m, l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)

    def forgets_rescaling(m_a, l_a, m_b, l_b):
        return max(m_a, m_b), l_a + l_b

    def overflows(m_a, l_a, m_b, l_b):
        total = l_a * math.exp(m_a) + l_b * math.exp(m_b)
        m = max(m_a, m_b)
        return m, total / math.exp(m)

    assert check_merge(good)
    assert capsys.readouterr().out.startswith("Correct")
    assert not check_merge(forgets_rescaling)
    assert "Hint" in capsys.readouterr().out
    assert not check_merge(overflows)
    assert "Not yet" in capsys.readouterr().out
    assert not check_merge(lambda *a: None)
    assert "returned None; did you forget `return m, l`?" in capsys.readouterr().out


# ---- expert read 4b, error 3 and suggestions: counts are not rounded -----------------


def test_check_close_count_drops_the_rounding_diagnosis(capsys):
    from book_support.exercises import check_close

    # without count (the default, as before): 7 against 6 with a tolerance of 0.5 is
    # within 20 tolerances, so the rounding diagnosis is printed
    assert not check_close(7, 6, atol=0.5, hint="count the tiles.")
    assert "round too early" in capsys.readouterr().out
    # with count: the checker's own hint instead
    assert not check_close(7, 6, atol=0.5, hint="count the tiles.", count=True)
    out = capsys.readouterr().out
    assert "round too early" not in out and "Hint: count the tiles." in out
    assert check_close(6, 6, atol=0.5, count=True)
    # a slip still wins over the hint
    assert not check_close(10, 6, atol=0.5, slips=((10, "ten."),), count=True)
    assert "Hint: ten." in capsys.readouterr().out


@pytest.mark.parametrize("answer", [0, 3, 5, 7, 8, 9, 11])
def test_skipped_tiles_never_says_round_too_early(answer, capsys):
    assert not check_skipped_tiles(answer, 16, 4)
    out = capsys.readouterr().out
    assert "round too early" not in out and "Hint:" in out


def test_skipped_tiles_names_the_diagonal_and_all_tiles(capsys):
    # 16 positions in tiles of 4: a 4 x 4 grid, 4 tiles on the diagonal, 16 in all
    assert not check_skipped_tiles(4, 16, 4)
    assert "on the diagonal" in capsys.readouterr().out
    assert not check_skipped_tiles(16, 16, 4)
    assert "every tile" in capsys.readouterr().out


def test_score_entries_near_the_answer_is_not_a_rounding_slip(capsys):
    assert not check_score_entries(2048 * 2048 + 3, 2048)
    out = capsys.readouterr().out
    assert "round too early" not in out and "one score per (query, key)" in out


def test_merge_accepts_an_array_and_names_the_inverted_exponent(capsys):
    def as_array(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return np.array([m, l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)])

    def inverted(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return m, l_a * math.exp(m - m_a) + l_b * math.exp(m - m_b)

    assert check_merge(as_array)
    assert capsys.readouterr().out.startswith("Correct")
    assert not check_merge(inverted)
    assert "upside down" in capsys.readouterr().out
    assert not check_merge(lambda *a: np.array([1.0, 2.0, 3.0]))
    assert "returned 3 values" in capsys.readouterr().out


def test_tiled_attention_in_float32_is_judged_alike_on_every_input(capsys):
    from online_softmax_exercises import check_tiled_attention

    def in_float32(Q, K, V, block):
        Q, K, V = (np.asarray(a, dtype=np.float32) for a in (Q, K, V))
        m = np.full((len(Q), 1), -np.inf, dtype=np.float32)
        total = np.zeros((len(Q), 1), dtype=np.float32)
        acc = np.zeros((len(Q), V.shape[1]), dtype=np.float32)
        for s in range(0, len(K), block):
            S = Q @ K[s : s + block].T / np.float32(math.sqrt(Q.shape[1]))
            m_new = np.maximum(m, S.max(axis=1, keepdims=True))
            E, rescale = np.exp(S - m_new), np.exp(m - m_new)
            total = rescale * total + E.sum(axis=1, keepdims=True)
            acc = rescale * acc + E @ V[s : s + block]
            m = m_new
        return acc / total

    assert check_tiled_attention(in_float32)
    assert capsys.readouterr().out.startswith("Correct")


def _online(Q, K, V, block):
    m = np.full((len(Q), 1), -np.inf)
    total = np.zeros((len(Q), 1))
    acc = np.zeros((len(Q), V.shape[1]))
    for s in range(0, len(K), block):
        S = Q @ K[s : s + block].T / math.sqrt(Q.shape[1])  # (L_q, block)
        m_new = np.maximum(m, S.max(axis=1, keepdims=True))
        E, rescale = np.exp(S - m_new), np.exp(m - m_new)
        total = rescale * total + E.sum(axis=1, keepdims=True)
        acc = rescale * acc + E @ V[s : s + block]
        m = m_new
    return acc / total  # (L_q, d_v)


def _query_blocks(Q, K, V, block):
    """Plain softmax over whole rows, ``block`` queries at a time: no online softmax."""
    out = []
    for s in range(0, len(Q), block):
        S = Q[s : s + block] @ K.T / math.sqrt(Q.shape[1])  # (block, L_k)
        E = np.exp(S - S.max(axis=1, keepdims=True))
        out.append(E @ V / E.sum(axis=1, keepdims=True))
    return np.vstack(out)  # (L_q, d_v)


def _row_at_a_time(Q, K, V, block):
    """Plain softmax over one whole row per query; ``block`` is ignored."""
    out = []
    for q in Q:
        s = K @ q / math.sqrt(Q.shape[1])  # (L_k,)
        e = np.exp(s - s.max())
        out.append(e @ V / e.sum())
    return np.array(out)  # (L_q, d_v)


def test_tiled_attention_rejects_a_softmax_over_whole_rows(capsys):
    """Expert read 6b, error 1: both variants avoid the full table and give the right
    values, so only the case with 4 queries and 65,536 keys separates them from an
    online softmax over blocks of keys."""
    from online_softmax_exercises import check_tiled_attention

    assert check_tiled_attention(_online)
    out = capsys.readouterr().out
    assert out.startswith("Correct") and "4 queries and 65,536 keys" in out
    for wrong in (_query_blocks, _row_at_a_time):
        assert not check_tiled_attention(wrong)
        out = capsys.readouterr().out
        assert "4 queries and 65,536 keys" in out
        assert "You hold a whole row of scores per query" in out
        assert "visit the keys block at a time" in out


def test_merge_diagnoses_a_swapped_pair(capsys):
    """Expert read 5b: (l, m) returned for (m, l) is named; e^-700 is no underflow."""

    def swapped(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m), m

    assert not check_merge(swapped)
    assert "return (m, l) in" in capsys.readouterr().out

    def merge(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return m, l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)

    assert check_merge(merge)
    assert math.exp(-700) > 1e-305  # scores near 700 need the shift; e^-700 does not


def test_tiled_attention_diagnoses_unscaled_scores(capsys):
    from online_softmax_exercises import check_tiled_attention

    def unscaled(Q, K, V, block):
        m = np.full((Q.shape[0], 1), -np.inf)
        total = np.zeros((Q.shape[0], 1))
        acc = np.zeros((Q.shape[0], V.shape[1]))
        for start in range(0, K.shape[0], block):
            S = Q @ K[start : start + block].T  # no 1/sqrt(d_k)
            m_new = np.maximum(m, S.max(axis=1, keepdims=True))
            E = np.exp(S - m_new)
            rescale = np.exp(m - m_new)
            total = rescale * total + E.sum(axis=1, keepdims=True)
            acc = rescale * acc + E @ V[start : start + block]
            m = m_new
        return acc / total

    assert not check_tiled_attention(unscaled)
    assert "unscaled dot products" in capsys.readouterr().out
