"""Encoder and decoder layers: rebuilt by hand from attnlib's pieces and from loops,
equal to the real MiniLM layer, permutation-equivariant, causal where they must be."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlib import causal_mask, multi_head_attention
from attnlib.layers.decoder_layer import decoder_layer, init_decoder_layer
from attnlib.layers.encoder_layer import (
    EncoderLayerParams,
    encoder_layer,
    init_encoder_layer,
    self_attention_block,
)
from attnlib.models import minilm


def _ln(v, g, b, eps):
    mu = v.mean(-1, keepdims=True)
    return (v - mu) / np.sqrt(((v - mu) ** 2).mean(-1, keepdims=True) + eps) * g + b


def _gelu(a):
    return np.vectorize(lambda t: 0.5 * t * (1 + math.erf(t / math.sqrt(2))))(a)


@pytest.fixture(scope="module")
def small():
    rng = np.random.default_rng(0)
    return rng.normal(size=(5, 8)), init_encoder_layer(rng, 8, 2, 16)


def test_encoder_layer_equals_a_hand_rebuild(small):
    x, p = small
    attended, _ = multi_head_attention(x, x, x, p.attn)
    h = _ln(x + attended, p.ln1_gain, p.ln1_bias, p.eps)
    f = _gelu(h @ p.W_1 + p.b_1) @ p.W_2 + p.b_2
    want = _ln(h + f, p.ln2_gain, p.ln2_bias, p.eps)
    got, weights = encoder_layer(x, p)
    np.testing.assert_allclose(got, want, atol=1e-6)  # erf approximation: 1.5e-7
    assert got.shape == (5, 8) and weights.shape == (2, 5, 5)


def test_self_attention_block_equals_multi_head_attention(small):
    x, p = small
    mask = np.tril(np.ones((5, 5), bool))
    steps = self_attention_block(x, p.attn, mask)
    ref, ref_w = multi_head_attention(x, x, x, p.attn, mask)
    np.testing.assert_allclose(steps["attended"], ref, atol=1e-12)
    np.testing.assert_allclose(steps["weights"], ref_w, atol=1e-12)


def test_intermediate_shapes(small):
    x, p = small
    _, _, steps = encoder_layer(x[None], p, return_intermediates=True)
    shapes = {k: v.shape for k, v in steps.items()}
    assert shapes["q"] == (1, 2, 5, 4) and shapes["weights"] == (1, 2, 5, 5)
    assert shapes["ff_hidden"] == (1, 5, 16) and shapes["output"] == (1, 5, 8)


def test_encoder_layer_is_permutation_equivariant(small):
    x, p = small
    perm = np.array([3, 0, 4, 1, 2])
    out, w = encoder_layer(x, p)
    out_p, w_p = encoder_layer(x[perm], p)
    np.testing.assert_allclose(out_p, out[perm], atol=1e-12)
    np.testing.assert_allclose(w_p, w[:, perm][:, :, perm], atol=1e-12)


def test_padding_mask_leaves_real_tokens_alone(small):
    x, p = small
    padded = np.vstack([x, np.full((2, 8), 99.0)])
    keep = np.array([True] * 5 + [False] * 2)
    out, _ = encoder_layer(padded, p, mask=keep[None, :])
    np.testing.assert_allclose(out[:5], encoder_layer(x, p)[0], atol=1e-12)


def test_real_minilm_layer_equals_the_shared_function():
    out = minilm.forward("The dog bit the man.")
    layer = minilm.load_weights().layers[2]
    got, weights = encoder_layer(out.hidden_states[2], layer)
    np.testing.assert_allclose(got, out.hidden_states[3], atol=1e-10)
    np.testing.assert_allclose(weights, out.attention[2], atol=1e-12)
    # and against an independent loop-free rebuild with math.erf
    p = layer
    a, _ = multi_head_attention(
        out.hidden_states[2], out.hidden_states[2], out.hidden_states[2], p.attn
    )
    h = _ln(out.hidden_states[2] + a, p.ln1_gain, p.ln1_bias, 1e-12)
    want = _ln(
        h + _gelu(h @ p.W_1 + p.b_1) @ p.W_2 + p.b_2, p.ln2_gain, p.ln2_bias, 1e-12
    )
    np.testing.assert_allclose(got, want, atol=1e-5)


def test_keep_heads_removes_only_that_head(small):
    x, p = small
    full = self_attention_block(x, p.attn)
    cut = self_attention_block(x, p.attn, keep_heads=np.array([True, False]))
    head1 = full["heads"][1] @ p.attn.W_O[4:]  # head 1's share after W_O
    np.testing.assert_allclose(cut["attended"], full["attended"] - head1, atol=1e-12)
    np.testing.assert_array_equal(cut["weights"], full["weights"])


def test_encoder_errors(small):
    x, p = small
    with pytest.raises(ValueError, match="d_model=8"):
        encoder_layer(np.ones((3, 6)), p)
    with pytest.raises(ValueError, match="NaN"):
        encoder_layer(np.full((3, 8), np.nan), p)
    with pytest.raises(ValueError, match="W_2 must have shape"):
        EncoderLayerParams(
            p.attn,
            p.ln1_gain,
            p.ln1_bias,
            p.W_1,
            p.b_1,
            p.W_2[:3],
            p.b_2,
            p.ln2_gain,
            p.ln2_bias,
        )
    with pytest.raises(ValueError, match="keep_heads"):
        encoder_layer(x, p, keep_heads=np.array([True, False, True]))


@pytest.fixture(scope="module")
def dec():
    rng = np.random.default_rng(3)
    return (
        rng.normal(size=(4, 8)),
        rng.normal(size=(6, 10)),
        init_decoder_layer(rng, 8, 2, 12, d_memory=10),
    )


def test_decoder_layer_shapes_and_hand_rebuild(dec):
    y, mem, p = dec
    out, sw, cw, steps = decoder_layer(y, mem, p, return_intermediates=True)
    assert out.shape == (4, 8) and sw.shape == (2, 4, 4) and cw.shape == (2, 4, 6)
    a, _ = multi_head_attention(y, y, y, p.self_attn, causal_mask(4))
    h1 = _ln(y + a, p.ln1_gain, p.ln1_bias, p.eps)
    c, _ = multi_head_attention(h1, mem, mem, p.cross_attn)
    h2 = _ln(h1 + c, p.ln2_gain, p.ln2_bias, p.eps)
    f = np.maximum(h2 @ p.W_1 + p.b_1, 0) @ p.W_2 + p.b_2
    np.testing.assert_allclose(
        out, _ln(h2 + f, p.ln3_gain, p.ln3_bias, p.eps), atol=1e-12
    )
    assert np.all(sw[:, np.triu_indices(4, 1)[0], np.triu_indices(4, 1)[1]] == 0)


def test_decoder_is_causal(dec):
    """Changing a later target never changes an earlier position's output."""
    y, mem, p = dec
    changed = y.copy()
    changed[3] += 5.0
    np.testing.assert_allclose(
        decoder_layer(changed, mem, p)[0][:3],
        decoder_layer(y, mem, p)[0][:3],
        atol=1e-12,
    )
    assert (
        np.abs(
            decoder_layer(changed, mem, p)[0][3] - decoder_layer(y, mem, p)[0][3]
        ).max()
        > 1e-3
    )


def test_decoder_memory_mask_and_errors(dec):
    y, mem, p = dec
    keep = np.array([True] * 4 + [False] * 2)
    out, _, cw = decoder_layer(y, mem, p, memory_mask=keep[None, :])
    assert np.all(cw[..., 4:] == 0)
    np.testing.assert_allclose(out, decoder_layer(y, mem[:4], p)[0], atol=1e-12)
    with pytest.raises(ValueError, match=r"memory \(6, 8\).*d_memory=10"):
        decoder_layer(y, mem[:, :8], p)


def test_layer_flow_diagram_labels_every_shape():
    import matplotlib.pyplot as plt

    from book_support.figures import layer_flow_diagram

    fig = layer_flow_diagram("encoder", L=8, d_model=384, heads=12, d_ff=1536)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "(8, 384)" in texts and any("(12, 8, 32)" in t for t in texts)
    assert any("(8, 1536)" in t for t in texts) and texts.count("residual") == 2
    plt.close(fig)
    fig = layer_flow_diagram("decoder", L=4, L_source=6, d_model=16, heads=2, d_ff=64)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert any("(2, 4, 6)" in t for t in texts) and texts.count("residual") == 3
    plt.close(fig)
    with pytest.raises(ValueError, match="kind"):
        layer_flow_diagram("convolution")
