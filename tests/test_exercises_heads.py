"""The heads chapter's checkers accept right answers and reject wrong ones with a
reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from heads_exercises import (
    HEAD_SHAPE_NAMES,
    check_head_shapes,
    check_head_weights,
    check_merge_heads,
)

TWO_HEADS = [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]]


def _by_hand(row):
    powers = [math.exp(s) for s in row]
    return [p / sum(powers) for p in powers]


def test_hand_worked_weights_of_each_head_are_accepted(capsys):
    answer = [_by_hand(r) for r in TWO_HEADS]
    assert check_head_weights(answer, TWO_HEADS, atol=1e-12)
    assert capsys.readouterr().out.startswith("Correct")
    assert abs(answer[1][1] - 0.6652) < 5e-5  # net in head 2


def test_normalising_over_all_heads_together_is_rejected_with_a_hint(capsys):
    powers = np.exp(np.array(TWO_HEADS))
    joint = powers / powers.sum()  # one budget for both heads: wrong
    assert not check_head_weights(joint, TWO_HEADS)
    assert "each head distributes its own total of one" in capsys.readouterr().out


def test_rows_that_do_not_sum_to_one_get_a_hint(capsys):
    assert not check_head_weights([[0.7, 0.3, 0.3], [0.2, 0.7, 0.1]], TWO_HEADS)
    assert "does not sum to 1" in capsys.readouterr().out


def test_one_row_for_two_heads_is_a_shape_error(capsys):
    assert not check_head_weights([0.6652, 0.2447, 0.09], TWO_HEADS)
    assert "shape (3,)" in capsys.readouterr().out


def _right_shapes(B, L, d_model, H):
    dh = d_model // H
    return {
        "X": (B, L, d_model),
        "Q": (B, L, d_model),
        "Q_heads": (B, H, L, dh),
        "weights": (B, H, L, L),
        "head_outputs": (B, H, L, dh),
        "merged": (B, L, d_model),
        "output": (B, L, d_model),
    }


@pytest.mark.parametrize("sizes", [(2, 10, 12, 3), (1, 4, 8, 8), (3, 1, 6, 1)])
def test_right_head_shapes_are_accepted(sizes):
    B, L, d, H = sizes
    assert check_head_shapes(
        _right_shapes(*sizes), batch=B, length=L, d_model=d, num_heads=H
    )


def test_a_wrong_head_shape_is_named(capsys):
    answer = _right_shapes(2, 10, 12, 3)
    answer["Q_heads"] = (2, 10, 3, 4)  # heads after positions: not attnlib's layout
    assert not check_head_shapes(answer, batch=2, length=10, d_model=12, num_heads=3)
    out = capsys.readouterr().out
    assert "Q_heads does not have shape (2, 10, 3, 4)" in out
    assert "(2, 3, 10, 4)" not in out  # the expected shape only on request
    assert not check_head_shapes(
        answer, batch=2, length=10, d_model=12, num_heads=3, show_answer=True
    )
    assert "Q_heads (2, 3, 10, 4)" in capsys.readouterr().out


def test_heads_after_the_positions_are_told_it_is_the_layout_not_a_product(capsys):
    # split_heads' reshape without its transpose: (batch, length, heads, d_k)
    answer = _right_shapes(2, 10, 12, 3)
    answer["Q_heads"] = answer["head_outputs"] = (2, 10, 3, 4)
    assert not check_head_shapes(answer, batch=2, length=10, d_model=12, num_heads=3)
    out = capsys.readouterr().out
    for name in ("Q_heads", "head_outputs"):
        assert f"Hint: {name} has the heads axis after the positions" in out
    assert "keep that layout until merge_heads" in out
    assert "(2, 3, 10, 4)" not in out  # the expected shape only on request
    # another wrong shape of Q_heads gets no such hint
    answer = _right_shapes(2, 10, 12, 3)
    answer["Q_heads"] = (2, 10, 12)
    assert not check_head_shapes(answer, batch=2, length=10, d_model=12, num_heads=3)
    assert "heads axis after the positions" not in capsys.readouterr().out


def test_unexpected_names_are_reported(capsys):
    answer = _right_shapes(1, 2, 4, 2)
    answer["K_heads"] = (1, 2, 2, 2)
    assert not check_head_shapes(answer, batch=1, length=2, d_model=4, num_heads=2)
    assert "unexpected names ['K_heads']" in capsys.readouterr().out


def test_an_indivisible_width_raises():
    with pytest.raises(ValueError, match="not divisible"):
        check_head_shapes(
            _right_shapes(1, 2, 4, 2), batch=1, length=2, d_model=10, num_heads=3
        )


def test_head_shapes_need_a_dict(capsys):
    assert not check_head_shapes([(1, 2)], batch=1, length=2, d_model=4, num_heads=2)
    assert "expects a dict of shapes" in capsys.readouterr().out
    assert len(HEAD_SHAPE_NAMES) == 7


def loop_merge(x):
    """Independent reference: build each position's row by concatenating the heads in
    order."""
    x = np.asarray(x, dtype=float)
    H, L, dh = x.shape[-3:]
    out = np.empty(x.shape[:-3] + (L, H * dh))
    for idx in np.ndindex(x.shape[:-3]):
        for pos in range(L):
            out[idx + (pos,)] = np.concatenate([x[idx + (h, pos)] for h in range(H)])
    return out


def test_a_correct_merge_passes(capsys):
    assert check_merge_heads(loop_merge)
    assert "all 3 inputs" in capsys.readouterr().out


def test_the_plain_reshape_bug_is_caught_with_a_hint(capsys):
    def reshape_only(x):
        H, L, dh = x.shape[-3:]
        return x.reshape(x.shape[:-3] + (L, H * dh))

    assert not check_merge_heads(reshape_only)
    assert "mixes positions" in capsys.readouterr().out


def test_a_merge_in_the_wrong_head_order_fails(capsys):
    def reversed_heads(x):
        return loop_merge(np.asarray(x)[..., ::-1, :, :])

    assert not check_merge_heads(reversed_heads)
    out = capsys.readouterr().out
    assert "Not yet" in out and "mixes positions" not in out


def test_merge_checker_needs_a_function(capsys):
    assert not check_merge_heads("reshape")
    assert capsys.readouterr().out.startswith("Not yet: give the function itself")
