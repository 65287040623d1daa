"""The cost chapter's checkers accept right answers and reject wrong ones with a
reason."""

from __future__ import annotations

import math

import pytest

from attnlib.exercises.cost import (
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
