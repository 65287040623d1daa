"""Dropout on the attention weights (inverted dropout, Srivastava et al. 2014).

Off by default and then exact: every result is bit for bit the one without the new
arguments, and the generator is not touched. With ``p > 0`` the expected output is the
output without dropout (checked against the analytic standard error of a mean of many
independent draws), fully masked rows stay zero, bad arguments raise errors that name
them, and the backward pass matches finite differences with the keep-mask fixed.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import central_difference

import attnlib
from attnlib import (
    attention,
    attention_backward,
    decoder_layer,
    encoder_layer,
    init_decoder_layer,
    init_encoder_layer,
    init_multi_head,
    multi_head_attention,
)
from attnlib.core.dropout import drop_weights, dropout_keep_mask

rng0 = np.random.default_rng(20240601)
Q = rng0.normal(size=(2, 3, 4))  # (B, L_q, d_k)
K = rng0.normal(size=(2, 5, 4))  # (B, L_k, d_k)
V = rng0.normal(size=(2, 5, 3))  # (B, L_k, d_v)
MASK = rng0.random((2, 3, 5)) < 0.7
MASK[0, 1] = False  # one query that may attend nothing


def state(rng):
    return rng.bit_generator.state


# --- off: exactly today's results


def test_dropout_off_is_bit_for_bit_the_call_without_it_and_draws_nothing():
    rng = np.random.default_rng(3)
    before = state(rng)
    plain = attention(Q, K, V, MASK)
    off = attention(Q, K, V, MASK, dropout=0.0, rng=rng)
    for a, b in zip(plain, off):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert state(rng) == before  # p = 0 draws no random number
    out, w, keep = attention(Q, K, V, MASK, return_keep=True)
    assert keep is None and np.array_equal(out, plain[0])

    params = init_multi_head(0, 8, 2)
    x = rng0.normal(size=(2, 4, 8))
    for a, b in zip(
        multi_head_attention(x, x, x, params),
        multi_head_attention(x, x, x, params, dropout=0, rng=rng),
    ):
        assert np.array_equal(a, b)
    g = rng0.normal(size=(2, 3, 3))
    for a, b in zip(
        attention_backward(Q, K, V, g, MASK),
        attention_backward(Q, K, V, g, MASK, dropout=0.0, rng=rng),
    ):
        assert np.array_equal(a, b)
    enc = init_encoder_layer(1, 8, 2, 16)
    assert np.array_equal(
        encoder_layer(x, enc)[0],
        encoder_layer(x, enc, attention_dropout=0.0, rng=rng)[0],
    )
    dec = init_decoder_layer(2, 8, 2, 16)
    assert np.array_equal(
        decoder_layer(x, x, dec)[0],
        decoder_layer(x, x, dec, attention_dropout=0.0, rng=rng)[0],
    )
    assert state(rng) == before


# --- on: the definition, the expectation, the masked rows


def test_dropout_is_the_weights_times_the_keep_mask_over_one_minus_p():
    p = 0.3
    out, w, keep = attention(
        Q, K, V, MASK, dropout=p, rng=np.random.default_rng(5), return_keep=True
    )
    plain_out, plain_w = attention(Q, K, V, MASK)
    assert np.array_equal(w, plain_w)  # the weights returned are before dropout
    assert keep.shape == (2, 3, 5) and keep.dtype == np.bool_
    # independent: the draw documented (one rng.random call of the weights' shape)
    assert np.array_equal(keep, np.random.default_rng(5).random((2, 3, 5)) >= p)
    want = np.einsum("bij,bjd->bid", np.where(keep, plain_w / (1 - p), 0.0), V)
    np.testing.assert_allclose(out, want, rtol=1e-13, atol=1e-15)
    # replaying: the same keep-mask, or a generator in the same state, gives the same
    again = attention(Q, K, V, MASK, dropout=p, keep=keep)[0]
    assert np.array_equal(again, out)
    assert np.array_equal(
        attention(Q, K, V, MASK, dropout=p, rng=np.random.default_rng(5))[0], out
    )


def test_dropout_preserves_the_expected_output_and_weights():
    # N independent draws in one call (one keep-mask per batch element). For one output
    # entry O_id = sum_j P_ij V_jd keep_j / (1 - p), the draws are independent
    # Bernoulli(1 - p), so Var(O_id) = p / (1 - p) * sum_j P_ij^2 V_jd^2 exactly; the
    # mean of N draws has standard error sqrt(Var / N). A deviation beyond 5 standard
    # errors has probability below 1e-6 per entry (normal approximation, N = 20,000),
    # so the test fails only if the expectation is wrong. The seed is fixed.
    p, N = 0.25, 20_000
    q, k, v, m = Q[0], K[0], V[0], MASK[0]
    qb = np.broadcast_to(q, (N,) + q.shape)
    out, w, keep = attention(
        qb, k, v, m, dropout=p, rng=np.random.default_rng(11), return_keep=True
    )
    exact_out, exact_w = attention(q, k, v, m)
    var = p / (1 - p) * (exact_w**2) @ (v**2)  # (L_q, d_v)
    se = np.sqrt(var / N)
    assert np.all(np.abs(out.mean(axis=0) - exact_out) <= 5 * se + 1e-15)
    dropped = drop_weights(w, keep, p)
    se_w = np.sqrt(p / (1 - p) * exact_w**2 / N)
    assert np.all(np.abs(dropped.mean(axis=0) - exact_w) <= 5 * se_w + 1e-15)
    # the fraction kept: binomial, standard error sqrt(p (1 - p) / n)
    n = keep.size
    assert abs(keep.mean() - (1 - p)) <= 5 * np.sqrt(p * (1 - p) / n)
    assert not np.array_equal(out[0], exact_out)  # it does drop something


def test_fully_masked_rows_stay_zero_with_dropout():
    out, w = attention(Q, K, V, MASK, dropout=0.5, rng=np.random.default_rng(0))
    assert np.all(out[0, 1] == 0) and np.all(w[0, 1] == 0)
    assert np.isfinite(out).all()
    nothing = np.zeros((2, 3, 5), dtype=bool)
    out, w = attention(Q, K, V, nothing, dropout=0.9, rng=np.random.default_rng(1))
    assert np.all(out == 0) and np.all(w == 0)


def test_dropout_keeps_the_dtype_and_overflows_clearly():
    q, k, v = (a.astype(np.float32) for a in (Q, K, V))
    out, w = attention(q, k, v, dropout=0.1, rng=np.random.default_rng(0))
    assert out.dtype == w.dtype == np.float32
    # dropout divides by 1 - p: float16 values at the largest float16 number then give
    # outputs beyond it, which is an OverflowError, never inf
    big = np.full((3, 2), 65504, dtype=np.float16)
    zero = np.zeros((1, 2), dtype=np.float16)
    keep = np.ones((1, 3), dtype=bool)
    with pytest.raises(OverflowError, match="float16"):
        attention(zero, np.zeros((3, 2), np.float16), big, dropout=0.5, keep=keep)


def test_multi_head_dropout_equals_a_loop_over_heads_with_their_keep_masks():
    params = init_multi_head(4, 8, 2)
    x = rng0.normal(size=(3, 4, 8))
    m = attnlib.padding_mask([4, 2, 3], 4)  # (3, 1, 4)
    out, w, keep = multi_head_attention(
        x, x, x, params, m, dropout=0.4, rng=np.random.default_rng(2), return_keep=True
    )
    assert keep.shape == (3, 2, 4, 4)
    plain_w = multi_head_attention(x, x, x, params, m)[1]
    assert np.array_equal(w, plain_w)
    heads = []
    for h in range(2):
        cols = slice(4 * h, 4 * h + 4)
        qh, kh, vh = (x @ W[:, cols] for W in (params.W_Q, params.W_K, params.W_V))
        o, _ = attention(qh, kh, vh, m, dropout=0.4, keep=keep[:, h])
        heads.append(o)
    want = np.concatenate(heads, axis=-1) @ params.W_O
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-14)


def test_layers_pass_dropout_through():
    x = rng0.normal(size=(2, 4, 8))
    enc = init_encoder_layer(1, 8, 2, 16)
    a = encoder_layer(x, enc, attention_dropout=0.5, rng=np.random.default_rng(9))[0]
    b = encoder_layer(x, enc, attention_dropout=0.5, rng=np.random.default_rng(9))[0]
    assert np.array_equal(a, b) and not np.allclose(a, encoder_layer(x, enc)[0])
    dec = init_decoder_layer(2, 8, 2, 16)
    a = decoder_layer(x, x, dec, attention_dropout=0.5, rng=np.random.default_rng(9))
    assert not np.allclose(a[0], decoder_layer(x, x, dec)[0])
    # the weights returned are before dropout: rows still sum to 1
    np.testing.assert_allclose(a[1].sum(-1), 1.0)


# --- errors name the argument

BAD_RATES = [
    (-0.1, ValueError),
    (1.0, ValueError),
    (1.5, ValueError),
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (np.array([0.1, 0.2]), ValueError),
    (True, TypeError),
    ("0.1", TypeError),
    (0.1j, TypeError),
    (None, TypeError),
]


@pytest.mark.parametrize("rate, error", BAD_RATES)
def test_bad_dropout_rates_are_refused_by_name(rate, error):
    rng = np.random.default_rng(0)
    with pytest.raises(error, match="dropout"):
        attention(Q, K, V, dropout=rate, rng=rng)
    with pytest.raises(error, match="dropout"):
        attention_backward(Q, K, V, np.ones((2, 3, 3)), dropout=rate, rng=rng)
    params = init_multi_head(0, 4, 2)
    with pytest.raises(error, match="dropout"):
        multi_head_attention(Q, K, K, params, dropout=rate, rng=rng)
    x = rng0.normal(size=(2, 4, 8))
    with pytest.raises(error, match="attention_dropout"):
        encoder_layer(x, init_encoder_layer(1, 8, 2), attention_dropout=rate, rng=rng)
    with pytest.raises(error, match="attention_dropout"):
        decoder_layer(x, x, init_decoder_layer(1, 8, 2), attention_dropout=rate)


def test_a_missing_or_wrong_rng_and_a_wrong_keep_are_refused_by_name():
    with pytest.raises(ValueError, match="rng"):
        attention(Q, K, V, dropout=0.1)
    with pytest.raises(ValueError, match="rng"):
        attention_backward(Q, K, V, np.ones((2, 3, 3)), dropout=0.1)
    with pytest.raises(ValueError, match="rng"):
        encoder_layer(
            np.ones((4, 8)), init_encoder_layer(1, 8, 2), attention_dropout=1e-3
        )
    with pytest.raises(TypeError, match="rng"):
        attention(Q, K, V, dropout=0.1, rng=0)  # a seed would repeat the same mask
    with pytest.raises(TypeError, match="rng"):
        attention(Q, K, V, dropout=0.1, rng=np.random.RandomState(0))
    keep = np.ones((2, 3, 5), dtype=bool)
    with pytest.raises(ValueError, match="keep"):
        attention(Q, K, V, keep=keep)  # a keep-mask without dropout
    with pytest.raises(ValueError, match="keep"):
        attention(Q, K, V, dropout=0.1, rng=np.random.default_rng(0), keep=keep)
    with pytest.raises(TypeError, match="keep"):
        attention(Q, K, V, dropout=0.1, keep=keep.astype(float))
    with pytest.raises(ValueError, match="keep"):
        attention(Q, K, V, dropout=0.1, keep=np.ones((2, 3, 4), dtype=bool))
    with pytest.raises(ValueError, match="keep"):
        dropout_keep_mask(0.0, keep=keep, shape=(2, 3, 5))


# --- the backward pass with dropout


@pytest.mark.parametrize("p", [0.2, 0.6])
def test_backward_with_dropout_matches_finite_differences_with_the_mask_fixed(p):
    rng = np.random.default_rng(17)
    q, k, v = (
        rng.normal(size=(2, 3, 4)),
        rng.normal(size=(2, 5, 4)),
        rng.normal(size=(2, 5, 3)),
    )
    g = rng.normal(size=(2, 3, 3))
    _, _, keep = attention(
        q, k, v, MASK, dropout=p, rng=np.random.default_rng(8), return_keep=True
    )
    assert not keep.all()

    def loss(q_, k_, v_):
        out = attention(q_, k_, v_, MASK, dropout=p, keep=keep)[0]
        return float(np.sum(out * g))

    numeric = (
        central_difference(lambda x: loss(x, k, v), q),
        central_difference(lambda x: loss(q, x, v), k),
        central_difference(lambda x: loss(q, k, x), v),
    )
    analytic = attention_backward(q, k, v, g, MASK, dropout=p, keep=keep)
    for a, n in zip(analytic, numeric):
        assert attnlib.core.backward.relative_error(a, n) < 1e-7
    # the generator route replays the same mask, so it gives the same gradients
    replay = np.random.default_rng(8)
    again = attention_backward(q, k, v, g, MASK, dropout=p, rng=replay)
    for a, b in zip(analytic, again):
        assert np.array_equal(a, b)
    # and dropping really changes them
    plain = attention_backward(q, k, v, g, MASK)
    assert not np.allclose(plain[0], analytic[0])
