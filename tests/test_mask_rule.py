"""Issue 26, item 1: one mask rule, decided by a mask's number of axes, never by sizes.

Inputs with leading axes ``batch`` give scores ``batch + (L_q, L_k)``. A function that
makes heads itself reads a mask with at most ``len(batch) + 2`` axes as one per example
(shared by the heads) and a mask with one axis more as one per head. The issue's
reproductions are tests with its values; a hypothesis property draws batch sizes and
head counts, equal ones included, and holds every entry point that takes a mask to a
per-example, per-head loop written here in plain numpy.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlib import (
    attention,
    attention_backward,
    causal_mask,
    decoder_layer,
    encoder_layer,
    init_decoder_layer,
    init_encoder_layer,
    init_multi_head,
    multi_head_attention,
    padding_mask,
    tiled_attention,
)

# --- the issue's reproductions, with its values


def test_issue_padding_mask_with_batch_2_and_2_heads_works_like_batch_3():
    rng = np.random.default_rng(0)
    params = init_multi_head(rng, 4, 2)
    for B, lens in ((2, [1, 2]), (3, [1, 2, 2])):
        x = rng.normal(size=(B, 2, 4))
        mask = padding_mask(lens, 2)  # (B, 1, 2)
        out, w = multi_head_attention(x, x, x, params, mask=mask)
        assert w.shape == (B, 2, 2, 2)
        for b in range(B):  # each sentence alone, with its own mask
            alone_out, alone_w = multi_head_attention(x[b], x[b], x[b], params, mask[b])
            np.testing.assert_allclose(out[b], alone_out, atol=1e-12)
            np.testing.assert_allclose(w[b], alone_w, atol=1e-12)
        # sentence 0 has one real key: every head gives it all the weight
        np.testing.assert_array_equal(w[0, :, :, 1], 0.0)
        np.testing.assert_allclose(w[0, :, :, 0], 1.0)


def test_issue_decoder_layer_memory_mask_at_batch_2_and_2_heads_works():
    rng = np.random.default_rng(1)
    dec = init_decoder_layer(rng, 8, 2, 16)
    y = rng.normal(size=(2, 4, 8))  # (B, L_t, d)
    memory = rng.normal(size=(2, 3, 8))  # (B, L_s, d)
    memory_mask = padding_mask([2, 3], 3)  # (2, 1, 3)
    out, self_w, cross_w = decoder_layer(y, memory, dec, memory_mask=memory_mask)
    assert out.shape == (2, 4, 8) and cross_w.shape == (2, 2, 4, 3)
    np.testing.assert_array_equal(cross_w[0, :, :, 2], 0.0)  # padding of sentence 0
    assert np.all(cross_w[1] > 0)
    for b in range(2):
        alone = decoder_layer(y[b], memory[b], dec, memory_mask=memory_mask[b])
        np.testing.assert_allclose(out[b], alone[0], atol=1e-12)
        np.testing.assert_allclose(cross_w[b], alone[2], atol=1e-12)


def test_issue_encoder_layer_reads_a_2_5_5_mask_per_example_as_multi_head_does():
    rng = np.random.default_rng(2)
    enc = init_encoder_layer(rng, 8, 2, 16)
    x = rng.normal(size=(2, 5, 8))
    mask = rng.random((2, 5, 5)) < 0.6
    mask[..., 0] = True
    out, w = encoder_layer(x, enc, mask)
    _, w_mha = multi_head_attention(x, x, x, enc.attn, mask)
    np.testing.assert_allclose(w, w_mha, atol=1e-12)  # one rule: the same reading
    for b in range(2):  # per example: both heads of sentence b use mask[b]
        for h in range(2):
            assert np.all(w[b, h][~mask[b]] == 0)
        alone_out, alone_w = encoder_layer(x[b], enc, mask[b])
        np.testing.assert_allclose(out[b], alone_out, atol=1e-12)
        np.testing.assert_allclose(w[b], alone_w, atol=1e-12)
    # per head is one axis more: (2, 2, 5, 5) = (B, H, L, L)
    per_head = np.stack([mask, np.ones_like(mask)], axis=1)
    _, w2 = encoder_layer(x, enc, per_head)
    assert np.all(w2[:, 0][~mask] == 0) and np.all(w2[:, 1] > 0)


def test_masks_with_too_many_axes_or_the_wrong_size_name_the_layouts():
    params = init_multi_head(0, 4, 2)
    x = np.zeros((2, 3, 4))
    with pytest.raises(ValueError, match=r"too many axes.*\(2, 3, 3\).*\(2, 2, 3, 3\)"):
        multi_head_attention(x, x, x, params, np.ones((1, 2, 2, 3, 3), dtype=bool))
    with pytest.raises(ValueError, match="3 at the head axis"):
        multi_head_attention(x, x, x, params, np.ones((2, 3, 3, 3), dtype=bool))
    with pytest.raises(ValueError, match="per example"):
        encoder_layer(x, init_encoder_layer(0, 4, 2), np.ones((4, 3, 3), dtype=bool))
    with pytest.raises(ValueError, match="too many axes"):
        attention(x, x, x, np.ones((1, 2, 3, 3), dtype=bool))


# --- the property: every entry point against a per-example, per-head loop

#: mask layouts: name -> (shape from B, H, L_q, L_k; per-head view (b, h) -> (L_q, L_k))
LAYOUTS = {
    "none": None,
    "keys (L_k,)": (lambda B, H, n, m: (m,), lambda a, b, h: a),
    "shared (L_q, L_k)": (lambda B, H, n, m: (n, m), lambda a, b, h: a),
    "padding (B, 1, L_k)": (lambda B, H, n, m: (B, 1, m), lambda a, b, h: a[b]),
    "per example (B, L_q, L_k)": (lambda B, H, n, m: (B, n, m), lambda a, b, h: a[b]),
    "per head (B, H, L_q, L_k)": (
        lambda B, H, n, m: (B, H, n, m),
        lambda a, b, h: a[b, h],
    ),
    "per head for all (1, H, L_q, L_k)": (
        lambda B, H, n, m: (1, H, n, m),
        lambda a, b, h: a[0, h],
    ),
    "one head axis (B, 1, L_q, L_k)": (
        lambda B, H, n, m: (B, 1, n, m),
        lambda a, b, h: a[b, 0],
    ),
}


def loop_attention(q, k, v, mask):
    """One query block of one head, by rows, in float64: the independent reference."""
    out = np.zeros((q.shape[0], v.shape[1]))
    w = np.zeros((q.shape[0], k.shape[0]))
    for i in range(q.shape[0]):
        allowed = [j for j in range(k.shape[0]) if mask is None or mask[i, j]]
        if not allowed:
            continue
        s = [float(q[i] @ k[j]) / math.sqrt(q.shape[1]) for j in allowed]
        e = np.exp(np.array(s) - max(s))
        w[i, allowed] = e / e.sum()
        out[i] = w[i] @ v
    return out, w


def per_head_mask(layout, m, b, h, n, L):
    if m is None:
        return None
    return np.broadcast_to(LAYOUTS[layout][1](m, b, h), (n, L))


def loop_multi_head(xq, xkv, params, layout, m, causal=False):
    """Per example b, per head h: project, attend, concatenate, project (all loops)."""
    B, n, L, H = xq.shape[0], xq.shape[1], xkv.shape[1], params.num_heads
    dh = params.d_head
    out = np.zeros((B, n, params.W_O.shape[1]))
    weights = np.zeros((B, H, n, L))
    for b in range(B):
        heads = []
        for h in range(H):
            cols = slice(h * dh, (h + 1) * dh)
            q = xq[b] @ params.W_Q[:, cols] + bias(params.b_Q, cols)
            k = xkv[b] @ params.W_K[:, cols] + bias(params.b_K, cols)
            v = xkv[b] @ params.W_V[:, cols] + bias(params.b_V, cols)
            mask = per_head_mask(layout, m, b, h, n, L)
            if causal:
                c = np.tril(np.ones((n, L), dtype=bool))
                mask = c if mask is None else mask & c
            o, weights[b, h] = loop_attention(q, k, v, mask)
            heads.append(o)
        out[b] = np.concatenate(heads, axis=1) @ params.W_O + bias(
            params.b_O, slice(None)
        )
    return out, weights


def bias(b, cols):
    return 0.0 if b is None else b[cols]


def ref_layer_norm(x, gain, bias, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gain + bias


def ref_ffn(x, p):
    hidden = x @ p.W_1 + p.b_1
    if p.activation == "relu":
        hidden = np.maximum(hidden, 0)
    else:
        hidden = 0.5 * hidden * (1 + np.vectorize(math.erf)(hidden / math.sqrt(2)))
    return hidden @ p.W_2 + p.b_2


def with_head_axis(layout, m):
    """The mask written for per-head arrays (B, H, L_q, d): the head axis explicit."""
    if m is None or layout.startswith(("per head", "one head")):
        return m
    if layout.startswith(("padding", "per example")):
        return m[:, None]  # (B, 1, ...)
    return m  # (L_k,) and (L_q, L_k) broadcast over batch and heads alike


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    B=st.integers(1, 3),
    H=st.integers(1, 3),
    n=st.integers(1, 3),
    L=st.integers(1, 3),
    layout=st.sampled_from(sorted(LAYOUTS)),
    seed=st.integers(0, 2**31),
)
def test_every_entry_point_reads_a_mask_by_its_axes(B, H, n, L, layout, seed):
    rng = np.random.default_rng(seed)
    dh = 2
    d = H * dh
    m = None
    if LAYOUTS[layout] is not None:
        m = rng.random(LAYOUTS[layout][0](B, H, n, L)) < 0.7
    xq = rng.normal(size=(B, n, d))
    xkv = rng.normal(size=(B, L, d))
    params = init_multi_head(rng, d, H)
    want_out, want_w = loop_multi_head(xq, xkv, params, layout, m)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # multi-head attention: the rule reads the mask by its axes
        out, w = multi_head_attention(xq, xkv, xkv, params, m)
        np.testing.assert_allclose(w, want_w, atol=1e-12)
        np.testing.assert_allclose(out, want_out, atol=1e-12)

        # attention, tiled attention and the backward pass on per-head arrays: they know
        # no heads, so the head axis is written (mask[:, None] for a per-example mask)
        def split(x):
            return x.reshape(B, -1, H, dh).transpose(0, 2, 1, 3)  # (B, H, L, dh)

        qh, kh, vh = (
            split(xq @ params.W_Q),
            split(xkv @ params.W_K),
            split(xkv @ params.W_V),
        )
        mh = with_head_axis(layout, m)
        heads, w_att = attention(qh, kh, vh, mh)
        np.testing.assert_allclose(w_att, want_w, atol=1e-12)
        np.testing.assert_allclose(
            tiled_attention(qh, kh, vh, mh, block_size=2), heads, atol=1e-12
        )
        g = rng.normal(size=heads.shape)
        grads = attention_backward(qh, kh, vh, g, mh)
        for b in range(B):
            for h in range(H):
                one = attention_backward(
                    qh[b, h], kh[b, h], vh[b, h], g[b, h],
                    per_head_mask(layout, m, b, h, n, L),
                )  # fmt: skip
                for got, want in zip(grads, one):
                    np.testing.assert_allclose(got[b, h], want, atol=1e-12)

        if n == L:  # the layers: self-attention needs L_q = L_k
            enc = init_encoder_layer(rng, d, H, 2 * d)
            y, w_enc = encoder_layer(xq, enc, m)
            want_out, want_w = loop_multi_head(xq, xq, enc.attn, layout, m)
            np.testing.assert_allclose(w_enc, want_w, atol=1e-12)
            a = want_out
            h1 = ref_layer_norm(xq + a, enc.ln1_gain, enc.ln1_bias, enc.eps)
            want_y = ref_layer_norm(
                h1 + ref_ffn(h1, enc), enc.ln2_gain, enc.ln2_bias, enc.eps
            )
            np.testing.assert_allclose(y, want_y, atol=1e-6)  # erf approximation

        dec = init_decoder_layer(rng, d, H, 2 * d)
        y, self_w, cross_w = decoder_layer(xq, xkv, dec, memory_mask=m)
        a, want_self = loop_multi_head(xq, xq, dec.self_attn, "none", None, causal=True)
        np.testing.assert_allclose(self_w, want_self, atol=1e-12)
        h1 = ref_layer_norm(xq + a, dec.ln1_gain, dec.ln1_bias, dec.eps)
        c, want_cross = loop_multi_head(h1, xkv, dec.cross_attn, layout, m)
        np.testing.assert_allclose(cross_w, want_cross, atol=1e-10)
        h2 = ref_layer_norm(h1 + c, dec.ln2_gain, dec.ln2_bias, dec.eps)
        want_y = ref_layer_norm(
            h2 + ref_ffn(h2, dec), dec.ln3_gain, dec.ln3_bias, dec.eps
        )
        np.testing.assert_allclose(y, want_y, atol=1e-9)


def test_the_property_draws_equal_batch_sizes_and_head_counts():
    # the cases the issue is about are among the drawn ones: B = H = 2 with a padding
    # mask, and B = H = 3 with a per-example mask (a deterministic instance of each)
    for B, layout in ((2, "padding (B, 1, L_k)"), (3, "per example (B, L_q, L_k)")):
        test_every_entry_point_reads_a_mask_by_its_axes.hypothesis.inner_test(
            B=B, H=B, n=2, L=2, layout=layout, seed=B
        )


def test_causal_self_attention_masks_stay_per_example():
    # decoder_layer's own causal (L_t, L_t) mask is shared by every example and head
    dec = init_decoder_layer(3, 4, 2, 8)
    y = np.random.default_rng(4).normal(size=(2, 3, 4))
    _, self_w, _ = decoder_layer(y, y, dec)
    assert np.all(self_w[..., ~causal_mask(3)] == 0)
