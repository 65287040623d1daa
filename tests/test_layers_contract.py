"""Issue 26, items 4 and 5: the contract held by the layers and at the dtypes' edges.

For every public function of ``attnlib.layers`` (positional encodings, layer norm,
feed-forward, encoder and decoder layers): the documented dtype comes back, bad input
raises the documented error class with a message naming the argument, extreme finite
inputs give the right value or a clear OverflowError (never NaN, a RuntimeWarning or a
silent inf), and two entry points that compute the same thing agree at the dtype's
edges. Item 5's three reproductions are tests with the issue's values. Every expected
value is computed here independently (plain float64 or Python's math), not by attnlib.
"""

from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

import attnlib
from attnlib import (
    attention,
    decoder_layer,
    encoder_layer,
    feed_forward,
    gelu,
    init_decoder_layer,
    init_encoder_layer,
    layer_norm,
    multi_head_attention,
    rotary_embedding,
    sinusoidal_encoding,
    sinusoidal_shift_matrix,
    softmax,
    tiled_attention,
)
from attnlib.layers.encoder_layer import self_attention_block
from attnlib.layers.feed_forward import erf, init_feed_forward, relu
from attnlib.layers.positional_encoding import (
    alibi_bias,
    alibi_slopes,
    frequencies,
    similarity_by_distance,
)

FLOATS = (np.float16, np.float32, np.float64)


def no_warnings(f, *args, **kwargs):
    """Call ``f`` with every warning an error (RuntimeWarning in particular)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return f(*args, **kwargs)


def cast(params, dtype):
    """A parameter dataclass with every array (nested ones too) cast to ``dtype``."""
    changes = {}
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        if dataclasses.is_dataclass(value):
            changes[field.name] = cast(value, dtype)
        elif isinstance(value, np.ndarray):
            changes[field.name] = value.astype(dtype)
    return dataclasses.replace(params, **changes)


def ref_layer_norm(x, eps=1e-5):
    """Layer norm by Python floats, one row at a time (exact enough at any magnitude:
    a row larger than 1 is divided by its largest entry first, and eps by its square,
    which does not change the result)."""
    out = []
    for row in np.asarray(x, dtype=np.float64).reshape(-1, np.shape(x)[-1]):
        top = max(1.0, max(abs(float(v)) for v in row))  # only large rows scaled
        r = [float(v) / top for v in row]
        mu = sum(r) / len(r)
        var = sum((v - mu) ** 2 for v in r) / len(r)
        out.append([(v - mu) / math.sqrt(var + eps / top / top) for v in r])
    return np.array(out).reshape(np.shape(x))


# --- item 5: the three reproductions


def test_item5_float16_attention_and_tiled_agree_at_65504():
    h = np.float16
    q, k, v = np.zeros((1, 2), h), np.zeros((3, 2), h), np.full((3, 2), 65504, h)
    out = no_warnings(attention, q, k, v)[0]
    tiled = no_warnings(tiled_attention, q, k, v)
    # float32: three weights 0.33333334 sum to 1.0000001, so 65504 * that = 65504.004,
    # which rounds to 65504 in float16 (only from 65520 on does it round to inf)
    third = np.full((1, 3), np.float32(1 / 3))
    assert float((third @ v.astype(np.float32))[0, 0]) == 65504.00390625
    assert out.dtype == tiled.dtype == h
    np.testing.assert_array_equal(out, [[65504, 65504]])
    np.testing.assert_array_equal(tiled, out)
    # beyond the largest float16 both refuse the same way
    with pytest.raises(OverflowError, match="float16"):
        attention(q, k, v, dropout=0.5, keep=np.ones((1, 3), dtype=bool))


def test_item5_softmax_of_a_single_number_is_a_clear_error():
    for scores in (3.0, np.array(3.0), np.float32(3.0)):
        with pytest.raises(np.exceptions.AxisError, match="no axis to normalise") as e:
            softmax(scores)
        assert isinstance(e.value, ValueError) and "softmax([3.0])" in str(e.value)
    assert softmax([3.0]).tolist() == [1.0]


def test_item5_float32_layer_norm_of_huge_numbers_is_one_and_minus_one():
    x = np.array([1e20, -1e20], dtype=np.float32)
    out = no_warnings(layer_norm, x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [1, -1])


# --- documented dtype in, documented dtype out


@pytest.mark.parametrize("dtype", FLOATS)
def test_every_layer_returns_its_documented_dtype(dtype):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 8)).astype(dtype)
    assert no_warnings(layer_norm, x).dtype == dtype
    assert layer_norm(x, np.ones(8, dtype), np.zeros(8, dtype)).dtype == dtype
    W_1, b_1, W_2, b_2 = (a.astype(dtype) for a in init_feed_forward(1, 8, 16))
    assert no_warnings(feed_forward, x, W_1, b_1, W_2, b_2).dtype == dtype
    out, hidden = feed_forward(x, W_1, b_1, W_2, b_2, "relu", return_hidden=True)
    assert out.dtype == dtype and hidden.dtype == np.promote_types(dtype, np.float32)
    assert gelu(x).dtype == relu(x).dtype == dtype
    enc = cast(init_encoder_layer(2, 8, 2, 16), dtype)
    y, w = no_warnings(encoder_layer, x, enc)
    assert y.dtype == w.dtype == dtype
    dec = cast(init_decoder_layer(3, 8, 2, 16), dtype)
    assert {a.dtype for a in no_warnings(decoder_layer, x, x, dec)} == {np.dtype(dtype)}
    # documented exceptions: positional tables and rotations are float64
    assert rotary_embedding(x).dtype == np.float64
    assert sinusoidal_encoding(3, 8).dtype == frequencies(8).dtype == np.float64


def test_mixed_dtypes_give_the_common_dtype_of_input_and_parameters():
    x = np.ones((2, 3, 8), dtype=np.float32)
    x[..., ::2] = -1
    enc = init_encoder_layer(2, 8, 2, 16)  # float64 parameters
    assert {a.dtype for a in encoder_layer(x, enc)} == {np.dtype(np.float64)}
    dec = init_decoder_layer(3, 8, 2, 16)
    assert {a.dtype for a in decoder_layer(x, x, dec)} == {np.dtype(np.float64)}
    assert layer_norm(np.arange(4)).dtype == np.float64  # integers give float64


# --- bad input: the documented error class, the argument named

X = np.random.default_rng(1).normal(size=(3, 8))
ENC = init_encoder_layer(4, 8, 2, 16)
DEC = init_decoder_layer(5, 8, 2, 16, d_memory=6)
FF = init_feed_forward(6, 8, 16)
NAN = np.where(np.eye(3, 8, dtype=bool), np.nan, X)

BAD = [
    # (call, error class, a word the message must contain)
    (lambda: layer_norm(np.array(["a", "b"])), TypeError, "x"),
    (lambda: layer_norm(np.ones(3, dtype=bool)), TypeError, "x"),
    (lambda: layer_norm(NAN), ValueError, "x"),
    (lambda: layer_norm(np.ones((2, 0))), ValueError, "x"),
    (lambda: layer_norm(X, np.ones(7)), ValueError, "gain"),
    (lambda: layer_norm(X, None, np.full(8, np.inf)), ValueError, "bias"),
    (lambda: layer_norm(X, eps=0.0), ValueError, "eps"),
    (lambda: layer_norm(X, eps="1e-5"), TypeError, "eps"),
    (lambda: layer_norm(X, eps=True), TypeError, "eps"),
    (lambda: feed_forward(X, *FF, activation="tanh"), ValueError, "activation"),
    (lambda: feed_forward(X, FF[0][:7], *FF[1:]), ValueError, "W_1"),
    (lambda: feed_forward(X, FF[0], FF[1][:3], *FF[2:]), ValueError, "b_1"),
    (lambda: feed_forward(X, *FF[:2], FF[2] * np.nan, FF[3]), ValueError, "W_2"),
    (lambda: feed_forward(X.astype(bool), *FF), TypeError, "x"),
    (lambda: gelu(np.ones(2, dtype=bool)), TypeError, "x"),
    (lambda: relu(np.array(["1"])), TypeError, "x"),
    (lambda: sinusoidal_encoding(-1, 4), ValueError, "num_positions"),
    (lambda: sinusoidal_encoding(2.5, 4), TypeError, "num_positions"),
    (lambda: sinusoidal_encoding(3, 5), ValueError, "d_model"),
    (lambda: sinusoidal_encoding(3, 4, base=1.0), ValueError, "base"),
    (lambda: frequencies(0), ValueError, "d_model"),
    (lambda: sinusoidal_shift_matrix(1.5, 4), TypeError, "offset"),
    (lambda: rotary_embedding(np.ones((2, 3))), ValueError, "last axis"),
    (lambda: rotary_embedding(np.ones(4)), ValueError, "x"),
    (lambda: rotary_embedding(NAN), ValueError, "x"),
    (lambda: rotary_embedding(X, np.arange(3.0)), TypeError, "positions"),
    (lambda: rotary_embedding(X, np.arange(4)), ValueError, "positions"),
    (lambda: alibi_slopes(0), ValueError, "num_heads"),
    (lambda: alibi_bias(2.5), TypeError, "num_queries"),
    (lambda: alibi_bias(2, -1), ValueError, "num_keys"),
    (lambda: similarity_by_distance(X, 3), ValueError, "max_distance"),
    (lambda: similarity_by_distance(np.zeros((3, 2)), 1), ValueError, "zero row"),
    (lambda: similarity_by_distance(NAN, 1), ValueError, "embeddings"),
    (lambda: encoder_layer(X[:, :6], ENC), ValueError, "d_model=8"),
    (lambda: encoder_layer(NAN, ENC), ValueError, "x"),
    (lambda: encoder_layer(X.astype(complex), ENC), TypeError, "x"),
    (lambda: encoder_layer(X, ENC, np.ones((3, 3))), TypeError, "mask"),
    (lambda: encoder_layer(X, ENC, np.ones((4, 4), dtype=bool)), ValueError, "mask"),
    (
        lambda: encoder_layer(X, ENC, keep_heads=np.ones(3, bool)),
        ValueError,
        "keep_heads",
    ),
    (lambda: decoder_layer(X[:, :6], X[:, :6], DEC), ValueError, "y"),
    (lambda: decoder_layer(X, X, DEC), ValueError, "memory"),
    (lambda: decoder_layer(X, NAN[:, :6], DEC), ValueError, "memory"),
    (
        lambda: decoder_layer(X, X[:, :6], DEC, memory_mask=np.ones(3)),
        TypeError,
        "mask",
    ),
    (lambda: init_encoder_layer(0, 7, 2), ValueError, "divisible"),
    (lambda: dataclasses.replace(ENC, b_1=np.ones(3)), ValueError, "b_1"),
    (lambda: dataclasses.replace(DEC, ln3_gain=np.ones(7)), ValueError, "ln3_gain"),
    (lambda: dataclasses.replace(DEC, W_2=np.ones((16, 7))), ValueError, "W_2"),
    (lambda: dataclasses.replace(DEC, b_2=np.array(["a"] * 8)), TypeError, "b_2"),
    (
        lambda: dataclasses.replace(
            DEC, cross_attn=init_decoder_layer(0, 4, 2).self_attn
        ),
        ValueError,
        "cross_attn",
    ),
]


@pytest.mark.parametrize(
    "call, error, word", BAD, ids=[f"bad{i}" for i in range(len(BAD))]
)
def test_bad_input_raises_the_documented_error_naming_the_argument(call, error, word):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(error, match=word):
            call()


# --- extreme finite inputs: the right value, or OverflowError


@pytest.mark.parametrize(
    "x, dtype",
    [
        ([1e20, -1e20, 5e19], np.float32),
        ([3e38, -3e38, 1e38], np.float32),
        ([60000, -60000, 1], np.float16),
        ([1.7e308, -1.7e308, 1e308], np.float64),
        ([1e-30, -1e-30, 0], np.float32),  # eps dominates: tiny outputs, exactly
        ([1e-300, 3e-300, -2e-300], np.float64),
        ([7.0, 7.0, 7.0], np.float32),  # a constant row: zeros
    ],
)
def test_layer_norm_at_the_edges_gives_the_right_value(x, dtype):
    x = np.array(x, dtype=dtype)
    out = no_warnings(layer_norm, x)
    assert out.dtype == dtype and np.isfinite(out).all()
    want = ref_layer_norm(x.astype(np.float64))
    tol = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}[dtype]
    np.testing.assert_allclose(out.astype(np.float64), want, rtol=tol, atol=tol * 1e-30)


def test_layer_norm_gain_that_lifts_outputs_beyond_the_dtype_is_an_overflow_error():
    x = np.array([1.0, -1.0], dtype=np.float32)
    big = np.full(2, 3e38, dtype=np.float32)
    np.testing.assert_allclose(
        no_warnings(layer_norm, x, big), [3e38, -3e38], rtol=1e-5
    )
    with pytest.raises(OverflowError, match="layer-norm"):
        no_warnings(
            layer_norm, np.array([1.0, -1.0, 0.0], np.float32), big[[0, 0, 0]] * 1.1
        )
    with pytest.raises(OverflowError, match="layer-norm"):
        no_warnings(layer_norm, x, big, big)  # 3e38 + 3e38


def test_gelu_and_erf_at_the_edges():
    x = np.array([-1e200, -40.0, -3.0, 0.0, 3.0, 40.0, 1e300])
    want = [v * (1 + math.erf(v / math.sqrt(2))) / 2 for v in x]
    got = no_warnings(gelu, x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=2e-7 * 3)
    np.testing.assert_allclose(
        no_warnings(erf, x), [math.erf(v) for v in x], atol=1.5e-7
    )
    f32 = no_warnings(gelu, np.array([3e38, -3e38], dtype=np.float32))
    assert f32.dtype == np.float32 and f32[0] == np.float32(3e38) and f32[1] == 0


def test_feed_forward_overflow_is_an_error_and_large_float64_is_right():
    W_1, b_1, W_2, b_2 = init_feed_forward(6, 8, 16)
    x32 = np.full((1, 8), 1e30, dtype=np.float32)
    with pytest.raises(OverflowError, match="overflow float32"):
        f32 = (W_1 * 1e10).astype(np.float32), W_2.astype(np.float32)
        no_warnings(feed_forward, x32, f32[0], None, f32[1], None)
    x = np.full((1, 8), 1e150)
    got = no_warnings(feed_forward, x, W_1, b_1, W_2, b_2, "relu")
    want = np.maximum(x @ W_1 + b_1, 0) @ W_2 + b_2
    np.testing.assert_allclose(got, want, rtol=1e-12)
    with pytest.raises(OverflowError, match="float64"):
        no_warnings(feed_forward, np.full((1, 8), 1e306), W_1 * 1e3, b_1, W_2, b_2)


def test_rotary_embedding_at_the_edges():
    x = np.full((2, 4), 1e300)
    out = no_warnings(rotary_embedding, x)
    # a rotation keeps every pair's norm
    pairs = lambda a: np.hypot(a[..., 0::2], a[..., 1::2])  # noqa: E731
    np.testing.assert_allclose(pairs(out), pairs(x), rtol=1e-12)
    with pytest.raises(OverflowError, match="rotated"):
        no_warnings(rotary_embedding, np.full((2, 2), 1.7e308))


def test_position_tables_and_distances_at_the_edges():
    pe = no_warnings(sinusoidal_encoding, 3, 4)
    assert np.all(np.abs(pe) <= 1)
    far = no_warnings(sinusoidal_shift_matrix, 10**15, 4)
    np.testing.assert_allclose(far @ far.T, np.eye(4), atol=1e-12)
    E = np.array([[1e200, 1e200], [1e200, -1e200], [-3e-300, -3e-300]])
    got = no_warnings(similarity_by_distance, E, 2)
    np.testing.assert_allclose(got, [1.0, (0.0 + 0.0) / 2, -1.0], atol=1e-12)
    np.testing.assert_allclose(
        no_warnings(alibi_bias, 2, 3, 2)[:, 0, 2], -2 * alibi_slopes(2)
    )


def test_layers_at_the_edges_give_a_finite_result_or_overflow_error():
    rng = np.random.default_rng(7)
    enc32 = cast(init_encoder_layer(1, 8, 2, 16), np.float32)
    x = rng.normal(size=(2, 3, 8)) * 1e30
    # float32: the scores (about 1e60) overflow: OverflowError, no warning, no inf
    with pytest.raises(OverflowError):
        no_warnings(encoder_layer, x.astype(np.float32), enc32)
    # float64 parameters: the same input is fine, and each output row is normalised
    y, w = no_warnings(encoder_layer, x.astype(np.float32), init_encoder_layer(1, 8, 2))
    assert np.isfinite(y).all() and np.isfinite(w).all()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-9)
    dec32 = cast(init_decoder_layer(2, 8, 2, 16), np.float32)
    with pytest.raises(OverflowError):
        no_warnings(decoder_layer, x.astype(np.float32), x.astype(np.float32), dec32)
    y, sw, cw = no_warnings(decoder_layer, x, x, init_decoder_layer(2, 8, 2, 16))
    assert all(np.isfinite(a).all() for a in (y, sw, cw))
    # float16: values near the largest float16 number are computed in float32 inside
    x16 = np.full((1, 3, 8), 60000, dtype=np.float16)
    x16[..., ::2] = -60000
    y16, _ = no_warnings(
        encoder_layer, x16, cast(init_encoder_layer(1, 8, 2), np.float16)
    )
    assert y16.dtype == np.float16 and np.isfinite(y16).all()


# --- two entry points that compute the same thing agree at the edges


def test_self_attention_block_agrees_with_multi_head_attention_at_float32_edges():
    rng = np.random.default_rng(3)
    enc = cast(init_encoder_layer(1, 8, 2), np.float32)
    x = (rng.normal(size=(2, 4, 8)) * 3e9).astype(np.float32)  # scores near 1e19
    steps = no_warnings(self_attention_block, x, enc.attn)
    out, w = no_warnings(multi_head_attention, x, x, x, enc.attn)
    np.testing.assert_allclose(steps["weights"], w, atol=1e-6)
    np.testing.assert_allclose(steps["attended"], out, rtol=1e-4, atol=1e-6 * 3e9)


def test_encoder_layer_agrees_with_its_parts_composed_by_hand_at_the_edges():
    rng = np.random.default_rng(4)
    p = cast(init_encoder_layer(2, 8, 2, 16), np.float32)
    x = (rng.normal(size=(2, 4, 8)) * 1e15).astype(np.float32)
    y, w = no_warnings(encoder_layer, x, p)
    a, w2 = multi_head_attention(x, x, x, p.attn)
    h = layer_norm(x + a, p.ln1_gain, p.ln1_bias, p.eps)
    f = feed_forward(h, p.W_1, p.b_1, p.W_2, p.b_2, p.activation)
    want = layer_norm(h + f, p.ln2_gain, p.ln2_bias, p.eps)
    np.testing.assert_allclose(w, w2, atol=1e-6)
    np.testing.assert_allclose(y, want, atol=1e-4)


def test_layer_norm_in_float32_agrees_with_float64_at_float32_edges():
    rng = np.random.default_rng(5)
    for top in (1e-30, 1.0, 1e20, 1e38):
        x64 = rng.normal(size=(4, 16)) * top / 5
        x32 = x64.astype(np.float32)
        got = no_warnings(layer_norm, x32)
        want = layer_norm(x32.astype(np.float64))
        np.testing.assert_allclose(got, want, atol=5e-6 if top >= 1 else 1e-3)


def test_rotary_embedding_agrees_with_the_shift_matrix_far_out_and_at_1e300():
    rng = np.random.default_rng(6)
    d = 6
    positions = np.array([0, 1, 10**6, 10**9])
    x = rng.normal(size=(4, d)) * 1e300
    out = no_warnings(rotary_embedding, x, positions)
    for row, m in enumerate(positions):
        want = x[row] @ sinusoidal_shift_matrix(int(m), d)  # (R_m acting on a row)
        np.testing.assert_allclose(out[row], want, rtol=1e-9, atol=1e-9 * 1e300)


def test_sinusoidal_encoding_agrees_with_the_shift_matrix_far_out():
    pe = sinusoidal_encoding(100_050, 8)[100_000:]  # positions 100,000 .. 100,049
    R = sinusoidal_shift_matrix(30, 8)
    np.testing.assert_allclose(pe[30:], pe[:-30] @ R.T, atol=1e-9)


def test_feed_forward_relu_agrees_with_the_formula_near_the_float32_limit():
    W_1, b_1, W_2, b_2 = (a.astype(np.float32) for a in init_feed_forward(3, 8, 16))
    x = np.full((2, 8), 1e36, dtype=np.float32)
    x[0] *= -1
    got = no_warnings(feed_forward, x, W_1, b_1, W_2, b_2, "relu")
    want = np.maximum(x.astype(np.float64) @ W_1 + b_1, 0) @ W_2 + b_2
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_package_docstring_states_the_contract_for_the_layers():
    doc = attnlib.__doc__
    assert "One mask rule" in doc and "Dropout" in doc
    for fn in (
        layer_norm,
        feed_forward,
        encoder_layer,
        decoder_layer,
        rotary_embedding,
    ):
        assert "OverflowError" in fn.__doc__, fn.__name__
