"""The checkers' common rules (issue 15): known faults fixed, typical slips diagnosed
before any expected value is shown, placeholders reported as unanswered, wrong kinds as
sentences.

Every expected value below is worked out independently of attnlib (by hand or with plain
numpy), and every test also checks that the expected value is NOT printed without
``show_answer=True``.
"""

from __future__ import annotations

import math
import warnings

import cost_exercises as cost
import heads_exercises as heads
import interpretability_exercises as interpretability
import masks_exercises as masks
import numpy as np
import pytest
import scoring_exercises as scoring
import softmax_exercises as softmax
import summary_exercises as summary
import values_exercises as values
import word_in_context_exercises as why_attention

from book_support.exercises import check_close

BANK_VALUES = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])


def _out(capsys) -> str:
    return capsys.readouterr().out


# --- the four known faults
# -----------------------------------------------------------------


def min_shifted_softmax(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.min(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def test_fault_softmax_that_subtracts_the_minimum_is_rejected_and_diagnosed(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no RuntimeWarning leaks out
        assert not softmax.check_softmax(min_shifted_softmax)
    out = _out(capsys)
    assert "[800, 1, 0]" in out
    assert "subtract the minimum; subtract the maximum" in out
    # the chapter's own hard case really breaks it
    with np.errstate(all="ignore"):
        assert np.isnan(min_shifted_softmax(np.array([800.0, 1.0, 0.0]))).any()


@pytest.mark.parametrize(
    "order",
    [
        ["project", "score", "scale", "mask", "softmax", "weighted sum"],
        ["project", "score", "mask", "scale", "softmax", "weighted sum"],
    ],
)
def test_fault_both_orders_of_mask_and_scale_are_accepted(order, capsys):
    assert summary.check_pipeline_order(order)
    out = _out(capsys)
    assert out.startswith("Correct")
    if order[2] == "mask":
        assert "commute" in out and "the book scales first" in out


def test_masking_and_scaling_commute_numerically():
    rng = np.random.default_rng(0)
    s = rng.normal(size=(4, 4))
    keep = np.tril(np.ones((4, 4), dtype=bool))
    a = np.where(keep, s / 2.0, -np.inf)  # scale, then mask
    b = np.where(keep, s, -np.inf) / 2.0  # mask, then scale
    assert np.array_equal(a, b)


def test_fault_equal_infinities_are_equal_without_warnings(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_close([-np.inf, 0.5], [-np.inf, 0.5])
    assert _out(capsys).startswith("Correct")
    assert not check_close([np.inf, 0.5], [-np.inf, 0.5])


def test_fault_uniform_mixture_given_as_text_gets_a_sentence(capsys):
    assert not why_attention.check_uniform_mixture("1,1")
    out = _out(capsys)
    assert out.startswith("Not yet:") and "not the text '1,1'" in out


def test_fault_naive_exp_in_the_merge_overflows_with_a_hint(capsys):
    def naive(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return m, (l_a * math.exp(m_a) + l_b * math.exp(m_b)) / math.exp(m)

    assert not cost.check_merge(naive)
    out = _out(capsys)
    assert "OverflowError" in out and "Hint: an exponential overflowed" in out


# --- the typical slips, each diagnosed before the expected value
# -------------------------


def test_slip_unscaled_dot_product(capsys):
    assert not scoring.check_score_function(lambda Q, K: Q @ K.T, kind="scaled")
    out = _out(capsys)
    assert "unscaled dot products" in out and "Expected" not in out
    assert not scoring.check_scaled_score(24, raw_score=24, d_k=16)
    out = _out(capsys)
    assert "not scaled" in out and "6" not in out.replace("16", "")


def test_slip_unscaled_in_a_whole_attention_function(capsys):
    def unscaled(Q, K, V):
        S = Q @ K.T
        E = np.exp(S - S.max(axis=-1, keepdims=True))
        return E / E.sum(axis=-1, keepdims=True) @ V

    assert not values.check_attention(unscaled)
    out = _out(capsys)
    assert "not scaled" in out and "Expected" not in out and "show_answer=True" in out


def test_slip_sum_instead_of_mean(capsys):
    assert not why_attention.check_uniform_mixture([3, 3])
    out = _out(capsys)
    assert "sum of the value vectors" in out and "[1, 1]" not in out
    assert not values.check_output(
        BANK_VALUES.sum(axis=0), [0.2, 0.3, 0.5], BANK_VALUES
    )
    assert "plain sum" in _out(capsys)


def test_slip_counting_from_one(capsys):
    # the strongest head computed with plain numpy from the model's stored weights
    from attnlib.models import minilm

    sentence = "The animal didn't cross the street because it was too tired."
    out = minilm.forward(sentence)
    w = out.attention[:, :, out.index("it"), out.index("animal")]
    layer, head = (int(i) for i in np.unravel_index(np.argmax(w), w.shape))
    assert not interpretability.strongest_head_answer(
        sentence, "it", "animal", layer + 1, head + 1
    )
    text = _out(capsys)
    assert "counted from 1" in text and "Expected" not in text


def test_slip_transposed_causal_mask(capsys):
    assert not masks.check_causal_mask(lambda n: np.triu(np.ones((n, n), dtype=bool)))
    out = _out(capsys)
    assert "transposed (upper-triangular)" in out and "Expected" not in out

    def upper(Q, K, V, causal):
        S = Q @ K.T / np.sqrt(Q.shape[1])
        if causal:
            S = np.where(np.triu(np.ones(S.shape, dtype=bool)), S, -np.inf)
        E = np.exp(S - S.max(axis=1, keepdims=True))
        return E / E.sum(axis=1, keepdims=True) @ V

    assert not summary.check_attention_function(upper)
    out = _out(capsys)
    assert "causal=True" in out and "transposed" in out


def test_slip_masking_after_the_softmax(capsys):
    def mask_after(Q, K, V, causal):
        S = Q @ K.T / np.sqrt(Q.shape[1])
        E = np.exp(S - S.max(axis=1, keepdims=True))
        W = E / E.sum(axis=1, keepdims=True)
        if causal:
            W = W * np.tril(np.ones(W.shape))
        return W @ V

    assert not summary.check_attention_function(mask_after)
    out = _out(capsys)
    assert "mask after the softmax" in out and "causal=True" in out
    assert "Expected" not in out


def test_slip_percent_instead_of_fraction(capsys):
    assert not softmax.check_weights([73.11, 26.89], scores=[1.0, 0.0])
    out = _out(capsys)
    assert "percentages" in out and "0.7311" not in out


def test_slip_gb_instead_of_gib(capsys):
    gb = 32 * 4096**2 * 2 / 1e9  # 1.0737 GB = exactly 1 GiB
    assert not cost.check_score_memory(gb, n=4096, heads=32, bytes_per_entry=2)
    out = _out(capsys)
    assert "in GB (10^9 bytes)" in out and "Expected" not in out


def test_slip_forgetting_a_head(capsys):
    one_head = 4096**2 * 2 / 2**30
    assert not cost.check_score_memory(one_head, n=4096, heads=32, bytes_per_entry=2)
    assert "forget the other heads" in _out(capsys)
    assert not heads.check_head_weights(
        [[0.6652, 0.2447, 0.09], [0.2447, 0.6652, 0.09]],
        [[2, 1, 0], [1, 2, 0], [0, 0, 2]],
    )
    assert "forget a head" in _out(capsys)


# --- expected value only on request
# ---------------------------------------------------------


def test_expected_value_only_with_show_answer(capsys):
    e = math.e
    assert not softmax.check_weights([0.7, 0.3], scores=[1.0, 0.0])
    assert "Expected" not in _out(capsys)
    assert not softmax.check_weights([0.7, 0.3], scores=[1.0, 0.0], show_answer=True)
    out = _out(capsys)
    assert f"{e / (e + 1):.4f}" in out and out.index("Not yet") < out.index("Expected")


def test_function_failure_names_the_case_with_short_aligned_arrays(capsys):
    assert not summary.check_attention_function(lambda Q, K, V, causal: V * 2)
    out = _out(capsys)
    assert "Q, K of shape (3, 2), V of shape (3, 2), no mask (causal=False)" in out
    assert "..." not in out
    assert max(len(line) for line in out.splitlines()) <= 200


# --- placeholders and wrong kinds
# -----------------------------------------------------------


def test_placeholders_are_reported_as_unanswered(capsys):
    assert not softmax.check_weights(..., scores=[1.0, 0.0])
    assert _out(capsys) == (
        "Not answered yet: replace `...` with your weights for the scores [1, 0].\n"
    )

    def my_softmax(x, axis=-1):
        raise NotImplementedError

    assert not softmax.check_softmax(my_softmax)
    assert _out(capsys).startswith(
        "Not answered yet: replace `raise NotImplementedError` in my_softmax"
    )
    assert not values.check_shapes({"X": ..., "Z": (10, 4)}, n=10, d=16, d_k=8, d_v=4)
    assert _out(capsys).startswith("Not answered yet")


@pytest.mark.parametrize(
    "call",
    [
        lambda: softmax.check_weights("0.73, 0.27", scores=[1.0, 0.0]),
        lambda: softmax.check_weights(["0.73", "x"], scores=[1.0, 0.0]),
        lambda: softmax.check_weights([0.5, 0.3, 0.2], scores=[1.0, 0.0]),
        lambda: cost.check_score_entries("4 million", n=2048),
        lambda: masks.check_visible(
            "The bank", "bank", tokens=["The", "bank"], mask=np.ones((2, 2), dtype=bool)
        ),
        lambda: summary.check_pipeline_order("project score scale mask softmax"),
        lambda: values.check_shapes([(10, 16)], n=10, d=16, d_k=8, d_v=4),
    ],
)
def test_wrong_kinds_get_a_sentence(call, capsys):
    assert call() is False
    out = _out(capsys)
    assert (
        out.startswith("Not yet:") and out.count("\n") == 1 and "Traceback" not in out
    )


# --- a new learner on chapters 5 and 8: every typical mistake gets a diagnosis first
# ------

# Two of the slips the softmax checker knows by name, as a learner would write them.
_textbook = softmax._unshifted
_whole_array = softmax._whole_array


def _no_keepdims(x, axis=-1):
    x = np.asarray(x, dtype=float)
    e = np.exp(x - x.max(axis=axis))
    return e / e.sum(axis=axis)


FLOOD = ["The", "bank", "flooded", "after", "the", "storm", "."]
RIGHT_PADDING = np.array(
    [[True, True, True, False, False], [True, True, True, True, True]]
)

LEARNER_MISTAKES = [
    # the softmax chapter: the weights of [1, 0] worked by hand, then a home-made
    # softmax
    (
        "rounded too early",
        lambda: softmax.check_weights([0.73, 0.27], scores=[1.0, 0.0]),
        "round too early",
    ),
    (
        "scores over their total",
        lambda: softmax.check_weights([1.0, 0.0], scores=[1.0, 0.0]),
        "divided by their total",
    ),
    (
        "percentages",
        lambda: softmax.check_weights([73.11, 26.89], scores=[1.0, 0.0]),
        "percentages",
    ),
    (
        "reverse order",
        lambda: softmax.check_weights([0.2689, 0.7311], scores=[1.0, 0.0]),
        "reverse order",
    ),
    (
        "powers not normalised",
        lambda: softmax.check_weights([2.7183, 1.0], scores=[1.0, 0.0]),
        "always sum to 1",
    ),
    (
        "any other wrong pair",
        lambda: softmax.check_weights([0.5, 0.5], scores=[1.0, 0.0]),
        "exponentiate each score",
    ),
    ("textbook formula", lambda: softmax.check_softmax(_textbook), "textbook formula"),
    (
        "minimum subtracted",
        lambda: softmax.check_softmax(min_shifted_softmax),
        "subtract the minimum",
    ),
    (
        "whole array normalised",
        lambda: softmax.check_softmax(_whole_array),
        "whole array",
    ),
    ("no keepdims", lambda: softmax.check_softmax(_no_keepdims), "keepdims=True"),
    # the masks chapter: visible tokens, a causal mask, a padding mask
    (
        "forgot itself",
        lambda: masks.check_visible(
            FLOOD[:3], "after", tokens=FLOOD, mask=np.tril(np.ones((7, 7), dtype=bool))
        ),
        "attend itself",
    ),
    (
        "the later tokens",
        lambda: masks.check_visible(
            FLOOD[3:], "after", tokens=FLOOD, mask=np.tril(np.ones((7, 7), dtype=bool))
        ),
        "from the query onwards",
    ),
    (
        "upper-triangular mask",
        lambda: masks.check_causal_mask(lambda n: np.triu(np.ones((n, n), dtype=bool))),
        "transposed",
    ),
    (
        "strictly earlier",
        lambda: masks.check_causal_mask(
            lambda n: np.arange(n)[None, :] < np.arange(n)[:, None]
        ),
        "attend itself",
    ),
    (
        "integer mask",
        lambda: masks.check_causal_mask(lambda n: np.tril(np.ones((n, n)))),
        "boolean",
    ),
    (
        "left padding",
        lambda: masks.check_padding_mask(RIGHT_PADDING[:, ::-1], [3, 5], 5),
        "left padding",
    ),
    (
        "inverted padding",
        lambda: masks.check_padding_mask(~RIGHT_PADDING, [3, 5], 5),
        "inverted",
    ),
]


@pytest.mark.parametrize(
    "name, attempt, diagnosis", LEARNER_MISTAKES, ids=[m[0] for m in LEARNER_MISTAKES]
)
def test_a_new_learner_gets_a_diagnosis_before_any_expected_value(
    name, attempt, diagnosis, capsys
):
    assert attempt() is False
    out = _out(capsys)
    assert out.startswith("Not yet"), out
    assert diagnosis in out, out
    assert "Expected" not in out
    for secret in ("0.7311", "0.2689"):  # the right weights of [1, 0]
        assert secret not in out or name == "reverse order", out
