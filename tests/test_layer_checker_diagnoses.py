"""The diagnoses of the layer chapters' checkers (expert read 4c of the
transformer-layer chapter).

Each wrong answer is written here as a learner would write it, independently of the
checkers' own slip functions; the expected counts come from the formula, worked out by
hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from book_support.exercises.layer import (
    check_crossover,
    check_layer_norm,
    check_layer_shapes,
    check_parameter_count,
)


def _said(capsys, check, *args, **kwargs):
    ok = check(*args, **kwargs)
    return ok, capsys.readouterr().out


def _x_hat(x, eps):
    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


# ---- layer normalisation: a forgotten gain or bias is named as such ------------------


@pytest.mark.parametrize(
    "attempt, words",
    [
        (lambda x, g, b, eps: _x_hat(x, eps), "without the learned gain and bias"),
        (lambda x, g, b, eps: _x_hat(x, eps) * g, "leave out the bias"),
        (lambda x, g, b, eps: _x_hat(x, eps) + b, "leave out the gain"),
    ],
    ids=["neither", "gain only", "bias only"],
)
def test_layer_norm_without_gain_or_bias_is_diagnosed(capsys, attempt, words):
    ok, said = _said(capsys, check_layer_norm, attempt)
    assert not ok
    assert words in said and "gain * x_hat + bias" in said
    assert "normalise each row (each position) on its own" not in said


def test_layer_norm_with_gain_and_bias_passes(capsys):
    ok, said = _said(capsys, check_layer_norm, lambda x, g, b, e: _x_hat(x, e) * g + b)
    assert ok and "Correct" in said


# ---- the parameter count: whole numbers in full, the right hint ----------------------

D, F = 512, 2048
ATTENTION = 4 * (D * D + D)  # W_Q, W_K, W_V, W_O with a bias each
FFN = D * F + F + F * D + D
NORMS = 2 * (D + D)
TOTAL = ATTENTION + FFN + NORMS


def test_the_count_by_hand_is_the_solution_s():
    assert (ATTENTION, FFN, NORMS, TOTAL) == (1_050_624, 2_099_712, 2_048, 3_152_384)


@pytest.mark.parametrize("answer", [TOTAL, float(TOTAL), np.int64(TOTAL)])
def test_parameter_count_accepts_the_count(capsys, answer):
    ok, said = _said(capsys, check_parameter_count, answer, d_model=D, d_ff=F)
    assert ok and "3,152,384" in said


@pytest.mark.parametrize("off", [-10, -1, 1, 7])
def test_a_count_a_few_off_is_not_told_to_keep_decimals(capsys, off):
    ok, said = _said(capsys, check_parameter_count, TOTAL + off, d_model=D, d_ff=F)
    assert not ok
    assert f"{TOTAL + off:,}" in said  # written in full, not as 3.15e+06
    assert "decimals" not in said and "round" not in said and "e+06" not in said


@pytest.mark.parametrize(
    "answer, words",
    [
        # no layer norms, or (the same number) the paper's projections without biases
        (TOTAL - NORMS, "4 x d_model short"),
        (float(TOTAL - 5 * D - F), "a bias vector as well"),  # a float gets hints too
        (TOTAL - NORMS - 5 * D - F, "two layer norms have a gain and a bias"),
        (FFN, "the feed-forward network alone"),
    ],
)
def test_parameter_count_slips_are_named(capsys, answer, words):
    ok, said = _said(capsys, check_parameter_count, answer, d_model=D, d_ff=F)
    assert not ok and words in said and "3,152,384" not in said


def test_parameter_count_shows_the_answer_in_full_only_when_asked(capsys):
    ok, said = _said(
        capsys, check_parameter_count, TOTAL - 1, d_model=D, d_ff=F, show_answer=True
    )
    assert not ok and "3152384" in said.replace(",", "")


# ---- the crossover: only d - 1 is "one below" ---------------------------------------


@pytest.mark.parametrize("answer", [511, 511.0, 511.4])
def test_crossover_names_one_below(capsys, answer):
    ok, said = _said(capsys, check_crossover, answer, d=512)
    assert not ok and "one below" in said


@pytest.mark.parametrize("answer", [506, 510, 513, 516, 64, 1024])
def test_crossover_other_lengths_are_not_one_below(capsys, answer):
    ok, said = _said(capsys, check_crossover, answer, d=512)
    assert not ok
    assert "one below" not in said and "decimals" not in said
    assert "n^2 d = n d^2" in said


def test_crossover_accepts_d(capsys):
    assert _said(capsys, check_crossover, 512, d=512)[0]
    assert _said(capsys, check_crossover, 512.0, d=512)[0]


# ---- the shapes: the heads axis left after the positions ---------------------------

SHAPES = {
    "X": (2, 10, 12),
    "Q_heads": (2, 3, 10, 4),
    "weights": (2, 3, 10, 10),
    "attended": (2, 10, 12),
    "h": (2, 10, 12),
    "ff_hidden": (2, 10, 48),
    "output": (2, 10, 12),
}
SIZES = dict(batch=2, length=10, d_model=12, num_heads=3, d_ff=48)


def test_heads_axis_not_moved_is_diagnosed(capsys):
    ok, said = _said(capsys, check_layer_shapes, dict(SHAPES), **SIZES)
    assert ok and "heads axis" not in said
    ok, said = _said(
        capsys, check_layer_shapes, {**SHAPES, "Q_heads": (2, 10, 3, 4)}, **SIZES
    )
    assert not ok and "heads axis after the positions" in said


def test_no_heads_axis_hint_when_q_heads_is_right(capsys):
    # with as many heads as positions, (batch, length, heads, d_k) is the right shape
    sizes = {**SIZES, "length": 3}
    shapes = {k: (2, 3, v[-1]) for k, v in SHAPES.items()}
    shapes.update(Q_heads=(2, 3, 3, 4), weights=(2, 3, 3, 3), output=(2, 3, 5))
    ok, said = _said(capsys, check_layer_shapes, shapes, **sizes)
    assert not ok and "output does not have shape" in said and "heads axis" not in said


@pytest.mark.parametrize(
    "name, wrong, words",
    [
        # Q before it is cut into heads: (batch, length, d_model)
        ("Q_heads", (2, 10, 12), "that is Q before split_heads"),
        # every head given all 12 columns instead of 12 / 3 = 4
        ("Q_heads", (2, 3, 10, 12), "each head gets d_model / num_heads columns"),
        # one head's block, the heads axis gone
        ("Q_heads", (2, 10, 4), "keep a heads axis"),
        # one weight matrix for all heads
        ("weights", (2, 10, 10), "every head computes its own weights"),
        # weights written like the queries, d_k = 4 last
        ("weights", (2, 3, 10, 4), "every query with every key"),
        # attended before the heads are merged and projected by W_O
        ("attended", (2, 3, 10, 4), "attended is taken after W_O"),
        ("attended", (2, 10, 4), "not d_k"),
        # h given the feed-forward network's hidden width 48
        ("h", (2, 10, 48), "each row has the width d, as in X (d_model in the call)"),
        # the hidden layer of the feed-forward network as narrow as the model
        ("ff_hidden", (2, 10, 12), "widens each row to d_ff numbers"),
        # the output left at the hidden width 48
        (
            "output",
            (2, 10, 48),
            "so that it can be added to h (the second residual connection)",
        ),
    ],
)
def test_a_likely_wrong_layer_shape_is_told_what_it_misses(name, wrong, words, capsys):
    ok, said = _said(capsys, check_layer_shapes, {**SHAPES, name: wrong}, **SIZES)
    assert not ok and f"Hint: {name}: " in said and words in said, said
    assert str(SHAPES[name]) not in said  # the expected shape is not given away


# ---- the batch axis left out everywhere; keepdims left out (expert read 5c) ---------


def test_shapes_without_the_batch_axis_get_one_hint(capsys):
    # what a learner who forgets the batch axis types
    without = {k: v[1:] for k, v in SHAPES.items()}
    ok, said = _said(capsys, check_layer_shapes, without, **SIZES)
    assert not ok and "keeps the batch axis first" in said
    assert "X is (2, 10, 12), not (10, 12)" in said


def test_no_batch_hint_when_only_some_shapes_lack_it(capsys):
    ok, said = _said(capsys, check_layer_shapes, {**SHAPES, "X": (10, 12)}, **SIZES)
    assert not ok and "X does not have shape (10, 12)" in said
    assert "batch axis" not in said


def test_layer_norm_without_keepdims_is_told_about_keepdims(capsys):
    def no_keepdims(x, gain, bias, eps):
        mean = x.mean(axis=-1)  # (...,): cannot be subtracted from a (3, 5) array
        var = ((x - mean) ** 2).mean(axis=-1)
        return (x - mean) / np.sqrt(var + eps) * gain + bias

    ok, said = _said(capsys, check_layer_norm, no_keepdims)
    assert not ok and "ValueError" in said and "keepdims=True" in said
