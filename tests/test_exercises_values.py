"""The values chapter's checkers accept right answers and reject wrong ones with a
reason."""

from __future__ import annotations

import math

import numpy as np
import pytest
from values_exercises import (
    SHAPE_NAMES,
    check_attention,
    check_output,
    check_shapes,
)

BANK_VALUES = [[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]


def test_hand_worked_output_is_accepted(capsys):
    # 0.2*[2,0] + 0.3*[0,2] + 0.5*[1,1] = [0.9, 1.1], by hand
    assert check_output([0.9, 1.1], [0.2, 0.3, 0.5], BANK_VALUES)
    assert capsys.readouterr().out.startswith("Correct")


def test_bank_output_from_exact_weights():
    e = math.e
    total = e * e + e + 1
    w = [e * e / total, e / total, 1 / total]
    z = [2 * w[0] + w[2], 2 * w[1] + w[2]]
    assert check_output(z, w, BANK_VALUES, atol=1e-9)
    assert abs(z[0] - 1.4205) < 5e-5 and abs(z[1] - 0.5795) < 5e-5


def test_plain_average_gets_its_own_hint(capsys):
    assert not check_output([1.0, 1.0], [0.2, 0.3, 0.5], BANK_VALUES)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and "plain average" in out


def test_other_wrong_output_gets_the_general_hint(capsys):
    assert not check_output([0.4, 0.6], [0.2, 0.3, 0.5], BANK_VALUES)
    assert "coordinate by coordinate" in capsys.readouterr().out


def test_mismatched_weights_and_values_raise():
    with pytest.raises(ValueError):
        check_output([1.0, 1.0], [0.5, 0.5], BANK_VALUES)


def _right_shapes(n, d, d_k, d_v):
    return {
        "X": (n, d),
        "W_Q": (d, d_k),
        "W_K": (d, d_k),
        "W_V": (d, d_v),
        "Q": (n, d_k),
        "K": (n, d_k),
        "V": (n, d_v),
        "scores": (n, n),
        "weights": (n, n),
        "Z": (n, d_v),
    }


@pytest.mark.parametrize("sizes", [(10, 16, 8, 4), (3, 5, 2, 7), (1, 1, 1, 1)])
def test_right_shapes_are_accepted(sizes):
    assert check_shapes(
        _right_shapes(*sizes), n=sizes[0], d=sizes[1], d_k=sizes[2], d_v=sizes[3]
    )


def test_wrong_and_missing_shapes_are_named(capsys):
    answer = _right_shapes(10, 16, 8, 4)
    answer["Z"] = (10, 8)  # the classic slip: d_k instead of d_v
    del answer["K"]
    assert not check_shapes(answer, n=10, d=16, d_k=8, d_v=4)
    out = capsys.readouterr().out
    assert "Z does not have shape (10, 8)" in out
    assert "(10, 4)" not in out
    assert "K is missing" in out


def test_shape_answer_must_be_a_dict(capsys):
    assert not check_shapes([(10, 16)], n=10, d=16, d_k=8, d_v=4)
    assert "expects a dict of shapes" in capsys.readouterr().out


def test_shape_names_cover_the_whole_computation():
    assert (
        SHAPE_NAMES[0] == "X" and SHAPE_NAMES[-1] == "Z" and len(set(SHAPE_NAMES)) == 10
    )


def loop_attention(Q, K, V):
    """Independent reference: one query at a time, with math.exp."""
    Q, K, V = (np.asarray(a, dtype=float) for a in (Q, K, V))
    out = np.zeros((Q.shape[0], V.shape[1]))
    for i, q in enumerate(Q):
        s = [float(q @ k) / math.sqrt(Q.shape[1]) for k in K]
        m = max(s)
        p = [math.exp(x - m) for x in s]
        for j, pj in enumerate(p):
            out[i] += pj / sum(p) * V[j]
    return out


def test_a_correct_attention_passes(capsys):
    assert check_attention(loop_attention)
    assert "all 4 inputs" in capsys.readouterr().out


def test_forgetting_the_scale_fails_with_a_hint(capsys):
    def unscaled(Q, K, V):
        s = Q @ K.T
        p = np.exp(s - s.max(axis=-1, keepdims=True))
        return p / p.sum(axis=-1, keepdims=True) @ V

    assert not check_attention(unscaled)
    assert "sqrt(d_k)" in capsys.readouterr().out


def test_an_unstable_softmax_fails_on_large_scores_without_warnings(capsys, recwarn):
    def unstable(Q, K, V):
        p = np.exp(Q @ K.T / np.sqrt(Q.shape[-1]))
        return p / p.sum(axis=-1, keepdims=True) @ V

    assert not check_attention(unstable)
    assert "large scores" in capsys.readouterr().out
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_normalising_columns_fails(capsys):
    def columns(Q, K, V):
        s = Q @ K.T / np.sqrt(Q.shape[-1])
        p = np.exp(s - s.max(axis=0, keepdims=True))
        return p / p.sum(axis=0, keepdims=True) @ V

    assert not check_attention(columns)
    assert "Not yet" in capsys.readouterr().out


def test_check_attention_needs_a_function(capsys):
    assert not check_attention(None)
    assert "give the function itself" in capsys.readouterr().out
