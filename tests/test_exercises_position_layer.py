"""Checkers of the chapters "Order and position" and "From attention to a Transformer
layer":
right answers (worked independently) pass, wrong ones and placeholders fail with a
reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from order_and_position_exercises import (
    check_encoding_entries,
    check_reordered_output,
    check_shift_matrix,
)

from book_support.exercises.layer import (
    LAYER_SHAPE_NAMES,
    check_crossover,
    check_layer_norm,
    check_layer_shapes,
    check_parameter_count,
)

DOG = "the dog bit the man".split()
MAN = "the man bit the dog".split()


def test_encoding_entries_by_hand(capsys):
    entries = [(1, 0), (2, 1), (3, 2)]  # d_model = 4: omega = 1, 1/100
    answer = [math.sin(1), math.cos(2), math.sin(0.03)]
    assert check_encoding_entries(answer, entries)
    assert not check_encoding_entries(
        [math.cos(1), math.sin(2), math.cos(0.03)], entries
    )
    assert "sine" in capsys.readouterr().out
    assert not check_encoding_entries(None, entries)
    assert "Not answered yet" in capsys.readouterr().out


@pytest.mark.parametrize("perm", [[0, 4, 2, 3, 1], [3, 4, 2, 0, 1]])
def test_reordering_accepts_both_copies_of_the(perm):
    assert check_reordered_output(perm, DOG, MAN)


def test_reordering_rejects_identity_and_bad_input(capsys):
    assert not check_reordered_output([0, 1, 2, 3, 4], DOG, MAN)
    assert "belongs to 'man'" in capsys.readouterr().out
    assert not check_reordered_output([0, 1, 2], DOG, MAN)
    assert not check_reordered_output([0, 1, 2, 3, 9], DOG, MAN)
    assert not check_reordered_output(None, DOG, MAN)
    with pytest.raises(ValueError, match="not a reordering"):
        check_reordered_output([0], DOG, ["the"])


def _my_shift(k, d):
    R = np.zeros((d, d))
    for i in range(d // 2):
        a = k * 10000 ** (-2 * i / d)
        R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [
            [math.cos(a), math.sin(a)],
            [-math.sin(a), math.cos(a)],
        ]
    return R


def test_shift_matrix_checker(capsys):
    assert check_shift_matrix(_my_shift)
    assert "PE(p + 5): True" in capsys.readouterr().out
    assert not check_shift_matrix(lambda k, d: _my_shift(k, d).T)  # turns the wrong way

    def todo(k, d):
        raise NotImplementedError("your code here")

    assert not check_shift_matrix(todo)
    assert "NotImplementedError" in capsys.readouterr().out
    assert not check_shift_matrix(3)
    assert capsys.readouterr().out.startswith("Not yet: give the function itself")


def _shapes(B, L, d, H, f):
    return {
        "X": (B, L, d),
        "Q_heads": (B, H, L, d // H),
        "weights": (B, H, L, L),
        "attended": (B, L, d),
        "h": (B, L, d),
        "ff_hidden": (B, L, f),
        "output": (B, L, d),
    }


def test_layer_shapes(capsys):
    assert check_layer_shapes(
        _shapes(2, 10, 12, 3, 48), batch=2, length=10, d_model=12, num_heads=3, d_ff=48
    )
    wrong = _shapes(2, 10, 12, 3, 48)
    wrong["ff_hidden"] = (2, 10, 12)
    assert not check_layer_shapes(
        wrong, batch=2, length=10, d_model=12, num_heads=3, d_ff=48
    )
    assert "ff_hidden does not have shape (2, 10, 12)" in capsys.readouterr().out
    assert not check_layer_shapes(
        None, batch=1, length=2, d_model=4, num_heads=2, d_ff=8
    )
    assert len(LAYER_SHAPE_NAMES) == 7


def test_layer_norm_checker():
    def mine(x, g, b, eps):
        x = np.asarray(x, float)
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b

    assert check_layer_norm(mine)

    def sample_var(x, g, b, eps):
        return (x - x.mean(-1, keepdims=True)) / np.sqrt(
            x.var(-1, ddof=1, keepdims=True) + eps
        ) * g + b

    assert not check_layer_norm(sample_var)

    def whole_array(x, g, b, eps):
        return (x - x.mean()) / np.sqrt(x.var() + eps) * g + b

    assert not check_layer_norm(whole_array)


def test_parameter_count_by_formula(capsys):
    d, f = 384, 1536
    total = 4 * (d * d + d) + (d * f + f) + (f * d + d) + 4 * d
    assert total == 1_774_464
    assert check_parameter_count(total, d_model=d, d_ff=f)
    assert not check_parameter_count(total - 4 * d, d_model=d, d_ff=f)
    assert "layer norms" in capsys.readouterr().out
    assert not check_parameter_count(total - 5 * d - f, d_model=d, d_ff=f)
    assert "bias" in capsys.readouterr().out
    assert not check_parameter_count(None, d_model=d, d_ff=f)


def test_crossover():
    assert check_crossover(512, d=512)
    assert not check_crossover(64, d=512)
    assert not check_crossover(None, d=512)
