"""The masks chapter's checkers accept right answers and reject wrong ones with a
reason."""

from __future__ import annotations

import numpy as np
import pytest
from masks_exercises import (
    check_causal_mask,
    check_padding_mask,
    check_visible,
)

FLOOD = ["The", "bank", "flooded", "after", "the", "storm", "."]


def loop_causal(n):
    """Independent reference: query i may attend key j iff j <= i, written as loops."""
    m = np.zeros((n, n), dtype=bool)
    for i in range(n):
        for j in range(i + 1):
            m[i, j] = True
    return m


def test_visible_tokens_under_the_causal_mask(capsys):
    mask = loop_causal(7)
    assert check_visible(["The", "bank"], "bank", tokens=FLOOD, mask=mask)
    assert check_visible(
        FLOOD[:6], 5, tokens=FLOOD, mask=mask
    )  # storm sees up to itself
    assert capsys.readouterr().out.count("Correct") == 2


def test_a_forbidden_later_token_is_named(capsys):
    assert not check_visible(
        ["The", "bank", "storm"], "bank", tokens=FLOOD, mask=loop_causal(7)
    )
    assert "may not attend ['storm']" in capsys.readouterr().out


def test_a_missing_token_is_named(capsys):
    full = np.ones((7, 7), dtype=bool)
    assert not check_visible(["The", "bank"], "bank", tokens=FLOOD, mask=full)
    assert (
        "may also attend ['flooded', 'after', 'the', 'storm', '.']"
        in capsys.readouterr().out
    )


def test_order_and_repeats_matter(capsys):
    full = np.ones((7, 7), dtype=bool)
    shuffled = ["bank", "The", "flooded", "after", "the", "storm", "."]
    assert not check_visible(shuffled, "bank", tokens=FLOOD, mask=full)
    assert "in sentence order, with repeats" in capsys.readouterr().out
    assert not check_visible(FLOOD + ["storm"], "bank", tokens=FLOOD, mask=full)
    assert "in sentence order, with repeats: 7 tokens" in capsys.readouterr().out


def test_visible_rejects_bad_inputs(capsys):
    assert not check_visible("The bank", "bank", tokens=FLOOD, mask=loop_causal(7))
    assert "not one string" in capsys.readouterr().out
    with pytest.raises(TypeError, match="boolean"):
        check_visible(["The"], "The", tokens=FLOOD, mask=loop_causal(7).astype(float))
    with pytest.raises(ValueError, match="not one of the tokens"):
        check_visible(["The"], "river", tokens=FLOOD, mask=loop_causal(7))
    with pytest.raises(ValueError, match="does not match"):
        check_visible(["The"], "The", tokens=FLOOD, mask=loop_causal(6))


def test_a_correct_causal_mask_passes(capsys):
    assert check_causal_mask(loop_causal)
    assert "Correct" in capsys.readouterr().out


def test_a_strict_mask_gets_the_diagonal_hint(capsys):
    assert not check_causal_mask(lambda n: np.tri(n, k=-1, dtype=bool))
    assert "may attend itself" in capsys.readouterr().out


def test_a_transposed_mask_gets_the_transpose_hint(capsys):
    assert not check_causal_mask(lambda n: loop_causal(n).T)
    out = capsys.readouterr().out
    assert "transposed" in out and "query 0 may not attend key 1" in out


def test_a_float_mask_is_rejected(capsys):
    assert not check_causal_mask(lambda n: np.tril(np.ones((n, n))))
    assert "dtype float64" in capsys.readouterr().out


def test_a_wrong_shape_and_a_crash_are_reported(capsys):
    assert not check_causal_mask(lambda n: np.ones((n, n + 1), dtype=bool))
    assert "shape (1, 2)" in capsys.readouterr().out
    assert not check_causal_mask(lambda n: 1 / 0)
    assert "ZeroDivisionError" in capsys.readouterr().out
    assert not check_causal_mask(np.ones((3, 3), dtype=bool))
    assert "give the function itself" in capsys.readouterr().out


def test_padding_masks_written_by_hand(capsys):
    right = [[True, True, True, False, False], [True] * 5]
    left = [[False, False, True, True, True], [True] * 5]
    assert check_padding_mask(np.array(right), [3, 5], 5, side="right")
    assert check_padding_mask(np.array(left), [3, 5], 5, side="left")
    assert check_padding_mask(
        np.array(right)[:, None, :], [3, 5], 5
    )  # attnlib's own shape


def test_padding_on_the_wrong_side_gets_a_hint(capsys):
    left = np.array([[False, False, True, True, True], [True] * 5])
    assert not check_padding_mask(left, [3, 5], 5, side="right")
    out = capsys.readouterr().out
    assert "sequence 0, key 0 is a real token" in out and "left padding" in out


def test_padding_mask_shape_and_dtype_errors(capsys):
    assert not check_padding_mask(np.ones((5, 2), dtype=bool), [3, 5], 5)
    assert "expected (2, 5)" in capsys.readouterr().out
    assert not check_padding_mask(np.ones((2, 5)), [3, 5], 5)
    assert "dtype float64" in capsys.readouterr().out
