"""The interpretability chapter's checkers accept right answers and reject wrong ones
with a reason."""

from __future__ import annotations

import math

import interpretability_exercises as check
import numpy as np
import pytest

from attnlib.models import minilm

TIRED = "The animal didn't cross the street because it was too tired."


def test_lengths_worked_by_hand_are_accepted(capsys):
    answer = [0.6 * math.hypot(0.3, 0.4), 0.1 * math.hypot(3.0, 4.0)]  # 0.3 and 0.5
    assert check.weighted_norms_answer(answer)
    assert capsys.readouterr().out.startswith("Correct")


def test_giving_the_weights_gets_a_hint(capsys):
    assert not check.weighted_norms_answer([0.6, 0.1])
    assert "weights themselves" in capsys.readouterr().out


def test_the_lengths_in_swapped_order_get_a_diagnosis(capsys):
    assert not check.weighted_norms_answer([0.1 * 5.0, 0.6 * 0.5])  # 0.5 and 0.3
    assert "swapped order" in capsys.readouterr().out


def test_unweighted_lengths_are_rejected(capsys):
    assert not check.weighted_norms_answer([0.5, 5.0])
    assert capsys.readouterr().out.startswith("Not yet")


def _strongest_by_loop(sentence, query, key):
    out = minilm.forward(sentence)
    i, j = out.index(query), out.index(key)
    best, where = -1.0, None
    for layer in range(6):
        for head in range(12):
            if out.attention[layer, head, i, j] > best:
                best, where = out.attention[layer, head, i, j], (layer, head)
    return where


def test_strongest_head_found_by_a_loop_is_accepted(capsys):
    layer, head = _strongest_by_loop(TIRED, "it", "animal")
    assert check.strongest_head_answer(TIRED, "it", "animal", layer, head)
    assert capsys.readouterr().out.startswith("Correct")


def test_another_head_is_rejected_with_the_best_weight(capsys):
    layer, head = _strongest_by_loop(TIRED, "it", "animal")
    assert not check.strongest_head_answer(TIRED, "it", "animal", (layer + 2) % 6, head)
    assert "another head gives more" in capsys.readouterr().out
    # counted from 1: one past in both layer and head
    assert not check.strongest_head_answer(TIRED, "it", "animal", layer + 1, head + 1)
    out = capsys.readouterr().out
    assert "counted from 1" in out and f"layer {layer}, head {head}" not in out
    assert not check.strongest_head_answer(
        TIRED, "it", "animal", layer + 1, head + 1, show_answer=True
    )
    assert f"Expected: layer {layer}, head {head}" in capsys.readouterr().out
    # one step off in one number only: a near miss, not counting from 1
    for near in (
        (layer + 1, head),
        (layer, head + 1),
        (layer - 1, head),
        (layer, head - 1),
    ):
        assert not check.strongest_head_answer(TIRED, "it", "animal", *near)
        out = capsys.readouterr().out
        assert "neighbour" in out and "counted from 1" not in out


def test_out_of_range_and_wrong_kind(capsys):
    assert not check.strongest_head_answer(TIRED, "it", "animal", 6, 0)
    assert "layers run from 0 to 5" in capsys.readouterr().out
    assert not check.strongest_head_answer(TIRED, "it", "animal", 1.5, 0)
    assert "whole number counted from 0" in capsys.readouterr().out
    assert not check.strongest_head_answer(TIRED, "it", "animal", 3.0, 1)
    assert "must be an int" in capsys.readouterr().out


def _norm_share_by_loop(out, layer, key):
    L = len(out.tokens)
    total = 0.0
    for h in range(12):
        for i in range(L):
            lengths = [
                abs(out.attention[layer, h, i, j])
                * np.linalg.norm(out.transformed[layer, h, j].astype(np.float64))
                for j in range(L)
            ]
            total += lengths[key] / sum(lengths)
    return total / (12 * L)


def test_reference_norm_share_equals_a_loop():
    out = minilm.forward("The fisherman repaired his net beside the bank.")
    for layer, key in ((2, 0), (5, 10)):
        assert check.norm_share(out, layer, key) == pytest.approx(
            _norm_share_by_loop(out, layer, key), rel=1e-6
        )


def test_a_loop_implementation_is_accepted(capsys):
    assert check.norm_share_function(_norm_share_by_loop)
    assert capsys.readouterr().out.startswith("Correct")


def test_weight_share_instead_of_norm_share_gets_a_hint(capsys):
    def weight_share(out, layer, key):
        return float(out.attention[layer, :, :, key].mean())

    assert not check.norm_share_function(weight_share)
    assert "weight share" in capsys.readouterr().out


def _lengths(out, layer):
    """||alpha_ij f(x_j)|| for every head, query i and key j of one layer, (12, L, L),
    from the weights and the transformed vectors (not from weighted_norms())."""
    f = np.linalg.norm(out.transformed[layer].astype(np.float64), axis=-1)  # (12, L)
    return np.abs(out.attention[layer].astype(np.float64)) * f[:, None, :]


@pytest.mark.parametrize(
    "learner, words",
    [
        # the mean length at the key, never divided by the total over the keys
        (
            lambda out, layer, key: float(_lengths(out, layer)[:, :, key].mean()),
            "not a share: divide each query's lengths by their sum over the keys",
        ),
        # one ratio of totals instead of the mean of the per-query shares
        (
            lambda out, layer, key: float(
                _lengths(out, layer)[:, :, key].sum() / _lengths(out, layer).sum()
            ),
            "take the share for each head and query first, then the mean",
        ),
        # normalised over the queries (axis -2) instead of the keys
        (
            lambda out, layer, key: float(
                (
                    _lengths(out, layer)
                    / _lengths(out, layer).sum(axis=-2, keepdims=True)
                )[:, :, key].mean()
            ),
            "whatever the key: you normalised over the queries (axis -2)",
        ),
        # the row of query `key` instead of the column of key `key`
        (
            lambda out, layer, key: float(
                (
                    _lengths(out, layer)
                    / _lengths(out, layer).sum(axis=-1, keepdims=True)
                )[:, key, :].mean()
            ),
            "or took the row of query `key`. Normalise over the keys",
        ),
        # one layer on, as if weighted_norms() began with the embeddings like
        # hidden_states (the first case asks for layer 2)
        (
            lambda out, layer, key: _norm_share_by_loop(out, layer + 1, key),
            "the share in layer 3: unlike hidden_states, which starts with the "
            "embeddings, weighted_norms() has no extra first entry",
        ),
        # the layer taken as counted from 1: index [layer - 1]
        (
            lambda out, layer, key: _norm_share_by_loop(out, layer - 1, key),
            "the share in layer 1: the argument already counts from 0, so index "
            "[layer], not [layer - 1]",
        ),
        # a share worked out some other way: the formula is said
        (
            lambda out, layer, key: 0.5,
            "divided by the sum of ||alpha_ik f(x_k)|| over all keys k",
        ),
    ],
)
def test_a_wrong_norm_share_is_told_its_likely_mistake(learner, words, capsys):
    assert not check.norm_share_function(learner)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and "Hint: " in out and words in out, out
    assert "Expected" not in out


def test_a_crashing_function_is_reported(capsys):
    def broken(out, layer, key):
        raise IndexError("oops")

    assert not check.norm_share_function(broken)
    assert "raised IndexError" in capsys.readouterr().out
