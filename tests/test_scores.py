"""Tests of attnlib.core.scores: dot product, scaled dot product and additive (Bahdanau)
   scores.

Every expected value is an explicit loop over batch, query and key, written here.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import (
    additive_scores,
    dot_product_scores,
    padding_mask,
    scaled_dot_product_scores,
    softmax,
    weighted_sum,
)
from attnlib.data import examples

SETTINGS = settings(max_examples=30, deadline=None)


def loop_dot(q, k):
    """S[b, i, j] = sum_f q[b, i, f] * k[b, j, f] for 3-D q and k, as plain loops."""
    B, Lq, d = q.shape
    Lk = k.shape[1]
    s = np.zeros((B, Lq, Lk))
    for b in range(B):
        for i in range(Lq):
            for j in range(Lk):
                s[b, i, j] = sum(q[b, i, f] * k[b, j, f] for f in range(d))
    return s


def loop_additive(q, k, Wq, Wk, wv):
    """e[b, i, j] = sum_h wv[h] tanh(sum_f q[b,i,f] Wq[f,h] + sum_g k[b,j,g]
    Wk[g,h])."""
    B, Lq, _ = q.shape
    Lk = k.shape[1]
    e = np.zeros((B, Lq, Lk))
    for b in range(B):
        for i in range(Lq):
            for j in range(Lk):
                for h in range(len(wv)):
                    pre = sum(q[b, i, f] * Wq[f, h] for f in range(q.shape[2]))
                    pre += sum(k[b, j, g] * Wk[g, h] for g in range(k.shape[2]))
                    e[b, i, j] += wv[h] * math.tanh(pre)
    return e


sizes = st.integers(1, 4)


# --- the documents' numbers
# ----------------------------------------------------------------------


def test_dot_product_of_the_worked_example_is_11():
    got = dot_product_scores(examples.DOT_PRODUCT_Q[None], examples.DOT_PRODUCT_K[None])
    assert got.shape == (1, 1)
    assert got[0, 0] == 1 * 3 + 2 * 4


def test_raw_score_40_with_d_k_64_scales_to_5():
    d = examples.RAW_SCORE_D_K
    q = np.zeros((1, d))
    q[0, 0] = examples.RAW_SCORE
    k = np.zeros((1, d))
    k[0, 0] = 1.0
    assert dot_product_scores(q, k)[0, 0] == 40.0
    assert scaled_dot_product_scores(q, k)[0, 0] == 40.0 / 8.0


def test_bank_scores_are_2_1_0():
    ex = examples.BANK
    np.testing.assert_allclose(
        scaled_dot_product_scores(ex.query[None], ex.keys),
        [[2.0, 1.0, 0.0]],
        atol=1e-15,
    )


# --- batched equals loops
# ------------------------------------------------------------------------


@SETTINGS
@given(sizes, sizes, sizes, sizes, st.integers(0, 2**32 - 1))
def test_dot_and_scaled_equal_loops(B, Lq, Lk, d, seed):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(B, Lq, d)), rng.normal(size=(B, Lk, d))
    expected = loop_dot(q, k)
    np.testing.assert_allclose(dot_product_scores(q, k), expected, atol=1e-12)
    np.testing.assert_allclose(
        scaled_dot_product_scores(q, k), expected / math.sqrt(d), atol=1e-12
    )


def test_leading_axes_broadcast_shared_keys_for_every_batch_element():
    rng = np.random.default_rng(1)
    q, k = rng.normal(size=(3, 2, 4)), rng.normal(size=(5, 4))
    got = dot_product_scores(q, k)
    assert got.shape == (3, 2, 5)
    np.testing.assert_allclose(
        got, loop_dot(q, np.broadcast_to(k, (3, 5, 4))), atol=1e-12
    )


@SETTINGS
@given(sizes, sizes, sizes, sizes, sizes, sizes, st.integers(0, 2**32 - 1))
def test_additive_equals_an_explicit_loop_over_several_queries_and_batches(
    B, Lq, Lk, dq, dk, h, seed
):
    rng = np.random.default_rng(seed)
    q, k = rng.normal(size=(B, Lq, dq)), rng.normal(size=(B, Lk, dk))
    Wq, Wk, wv = rng.normal(size=(dq, h)), rng.normal(size=(dk, h)), rng.normal(size=h)
    got = additive_scores(q, k, Wq, Wk, wv)
    assert got.shape == (B, Lq, Lk)
    np.testing.assert_allclose(got, loop_additive(q, k, Wq, Wk, wv), atol=1e-12)


def test_additive_row_of_each_query_equals_asking_that_query_alone():
    rng = np.random.default_rng(2)
    q, k = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 5, 6))
    Wq, Wk, wv = rng.normal(size=(3, 7)), rng.normal(size=(6, 7)), rng.normal(size=7)
    together = additive_scores(q, k, Wq, Wk, wv)
    for b in range(2):
        for i in range(4):
            alone = additive_scores(q[b, i : i + 1], k[b], Wq, Wk, wv)
            np.testing.assert_allclose(together[b, i], alone[0], atol=1e-12)


def test_additive_with_unbatched_keys_broadcasts():
    rng = np.random.default_rng(3)
    q, k = rng.normal(size=(2, 3, 2)), rng.normal(size=(4, 2))
    Wq, Wk, wv = rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=3)
    got = additive_scores(q, k, Wq, Wk, wv)
    np.testing.assert_allclose(
        got, loop_additive(q, np.broadcast_to(k, (2, 4, 2)), Wq, Wk, wv), atol=1e-12
    )


@pytest.mark.parametrize("side", ["left", "right"])
def test_additive_attention_over_several_queries_batches_and_padded_keys(side):
    # Bahdanau attention: softmax of additive scores over the real keys, then the
    # weighted sum.
    rng = np.random.default_rng(6)
    B, Lq, Lk, dq, dk, h = 2, 3, 4, 2, 3, 5
    q, k, v = (
        rng.normal(size=(B, Lq, dq)),
        rng.normal(size=(B, Lk, dk)),
        rng.normal(size=(B, Lk, 2)),
    )
    Wq, Wk, wv = rng.normal(size=(dq, h)), rng.normal(size=(dk, h)), rng.normal(size=h)
    lens = [4, 2]
    mask = padding_mask(lens, Lk, side=side)
    # padded keys hold garbage (finite: a score function refuses NaN by name, and only
    # attention, which takes the mask, may ignore NaN where it is masked)
    k[~mask[:, 0]] = 1e6
    w = softmax(additive_scores(q, k, Wq, Wk, wv), mask=mask)
    context = weighted_sum(w, v)
    for b in range(B):
        real = (
            range(Lk)
            if lens[b] == Lk
            else (range(lens[b]) if side == "right" else range(Lk - lens[b], Lk))
        )
        for i in range(Lq):
            e = {
                j: sum(
                    wv[u] * math.tanh(q[b, i] @ Wq[:, u] + k[b, j] @ Wk[:, u])
                    for u in range(h)
                )
                for j in real
            }
            total = sum(math.exp(x) for x in e.values())
            for j in range(Lk):
                assert w[b, i, j] == pytest.approx(
                    math.exp(e[j]) / total if j in e else 0.0, abs=1e-12
                )
            expected = sum(math.exp(e[j]) / total * v[b, j] for j in real)
            np.testing.assert_allclose(context[b, i], expected, atol=1e-12)


# --- dtypes
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [dot_product_scores, scaled_dot_product_scores])
@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_in_gives_low_precision_out_without_warnings(fn, dtype):
    rng = np.random.default_rng(4)
    q, k = (
        rng.normal(size=(2, 3, 8)).astype(dtype),
        rng.normal(size=(2, 4, 8)).astype(dtype),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = fn(q, k)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got.astype(float), fn(q.astype(float), k.astype(float)), rtol=2e-3, atol=2e-3
    )


def test_float16_accumulates_in_high_precision():
    # 2048 products of 1 * 1: float16 cannot count past 2048 by ones, float64 can.
    q = np.ones((1, 4096), dtype=np.float16)
    got = dot_product_scores(q, q)
    assert got.dtype == np.float16 and got[0, 0] == 4096


def test_float16_scores_too_large_raise_overflow_error_not_inf():
    q = np.full((1, 4), 200.0, dtype=np.float16)  # q . q = 160000 > 65504
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(OverflowError, match="float16"):
            dot_product_scores(q, q)


def test_integers_give_float64():
    got = dot_product_scores(np.array([[1, 2]]), np.array([[3, 4]]))
    assert got.dtype == np.float64 and got[0, 0] == 11.0


def test_additive_keeps_float32():
    rng = np.random.default_rng(5)
    got = additive_scores(
        rng.normal(size=(2, 3)).astype(np.float32),
        rng.normal(size=(4, 3)).astype(np.float32),
        rng.normal(size=(3, 2)),
        rng.normal(size=(3, 2)),
        rng.normal(size=2),
    )
    assert got.dtype == np.float32 and got.shape == (2, 4)


# --- errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [dot_product_scores, scaled_dot_product_scores])
def test_feature_mismatch_names_both_shapes(fn):
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        fn(np.zeros((2, 3)), np.zeros((4, 5)))


@pytest.mark.parametrize("fn", [dot_product_scores, scaled_dot_product_scores])
def test_batch_axes_that_do_not_broadcast_name_both_shapes(fn):
    with pytest.raises(ValueError, match=r"\(2, 3, 4\).*\(5, 3, 4\)"):
        fn(np.zeros((2, 3, 4)), np.zeros((5, 3, 4)))


@pytest.mark.parametrize("fn", [dot_product_scores, scaled_dot_product_scores])
def test_a_single_vector_is_a_rank_error(fn):
    with pytest.raises(ValueError, match=r"\(3,\)"):
        fn(np.zeros(3), np.zeros((2, 3)))


def test_zero_features_are_an_error_not_a_division_by_zero():
    with pytest.raises(ValueError, match="d_k = 0"):
        scaled_dot_product_scores(np.zeros((2, 0)), np.zeros((3, 0)))


def test_boolean_inputs_are_refused():
    with pytest.raises(TypeError, match="bool"):
        dot_product_scores(np.ones((2, 2), dtype=bool), np.ones((2, 2)))


@pytest.mark.parametrize(
    "Wq,Wk,wv,pattern",
    [
        (np.zeros((4, 5)), np.zeros((2, 5)), np.zeros(5), r"W_q.*\(4, 5\)"),
        (np.zeros((3, 5)), np.zeros((3, 5)), np.zeros(5), r"W_k.*\(3, 5\)"),
        (np.zeros((3, 5)), np.zeros((2, 4)), np.zeros(5), "hidden sizes"),
        (np.zeros((3, 5)), np.zeros((2, 5)), np.zeros((5, 1)), "hidden sizes"),
        (np.zeros(3), np.zeros((2, 5)), np.zeros(5), r"W_q"),
    ],
)
def test_additive_weights_of_the_wrong_shape(Wq, Wk, wv, pattern):
    with pytest.raises(ValueError, match=pattern):
        additive_scores(np.zeros((1, 3)), np.zeros((4, 2)), Wq, Wk, wv)
