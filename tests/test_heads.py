"""Tests of attnlib.core.heads: split/merge heads and multi-head attention.

Issue 3, cases 8, 9, 11 and the multi-head half of case 2. The reference
``loop_multi_head`` below never splits or merges arrays: it slices each head's columns
out of the projection matrices and loops over heads, batch elements, queries and keys.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import (
    MultiHeadParams,
    causal_mask,
    init_multi_head,
    merge_heads,
    multi_head_attention,
    padding_mask,
    query_padding_mask,
    split_heads,
)

T, F = True, False
SETTINGS = settings(max_examples=25, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def loop_multi_head(q, k, v, p, mask=None):
    """q (B, L_q, d_q), k (B, L_k, d_k), v (B, L_k, d_v); mask (B, H, L_q, L_k) or
    None."""
    H = p.num_heads
    dh = p.W_Q.shape[1] // H
    B, Lq = q.shape[:2]
    Lk = k.shape[1]
    concat = np.zeros((B, Lq, H * dh))
    weights = np.zeros((B, H, Lq, Lk))

    def bias(b, cols):
        return 0.0 if b is None else b[cols]

    for h in range(H):
        cols = slice(h * dh, (h + 1) * dh)  # head h owns these columns
        for b in range(B):
            Qh = q[b] @ p.W_Q[:, cols] + bias(p.b_Q, cols)
            Kh = k[b] @ p.W_K[:, cols] + bias(p.b_K, cols)
            Vh = v[b] @ p.W_V[:, cols] + bias(p.b_V, cols)
            for i in range(Lq):
                allowed = [j for j in range(Lk) if mask is None or mask[b, h, i, j]]
                if not allowed:
                    continue
                s = {j: float(Qh[i] @ Kh[j]) / math.sqrt(dh) for j in allowed}
                top = max(s.values())
                total = sum(math.exp(s[j] - top) for j in allowed)
                for j in allowed:
                    weights[b, h, i, j] = math.exp(s[j] - top) / total
                    concat[b, i, cols] += weights[b, h, i, j] * Vh[j]
    out = concat @ p.W_O + (0.0 if p.b_O is None else p.b_O)
    return out, weights


def random_params(rng, d_model, H, dq, dk, dv, d_out, biases=False):
    mats = [
        rng.normal(size=s)
        for s in ((dq, d_model), (dk, d_model), (dv, d_model), (d_model, d_out))
    ]
    bs = (
        [rng.normal(size=d_model) for _ in range(3)] + [rng.normal(size=d_out)]
        if biases
        else [None] * 4
    )
    return MultiHeadParams(*mats, H, *bs)


# --- split and merge: case 8 and its kind
# --------------------------------------------------------


def test_case8_split_and_merge():
    X = np.arange(8).reshape(1, 2, 4)
    s = split_heads(X, 2)
    assert s.shape == (1, 2, 2, 2)
    np.testing.assert_array_equal(s[0], [[[0, 1], [4, 5]], [[2, 3], [6, 7]]])
    back = merge_heads(s)
    assert back.dtype == X.dtype
    np.testing.assert_array_equal(back, X)


@SETTINGS
@given(
    st.lists(st.integers(1, 3), max_size=2),
    st.integers(0, 4),
    st.integers(1, 4),
    st.integers(1, 3),
)
def test_split_gives_head_h_its_column_block_of_every_token(batch, L, H, dh):
    x = np.random.default_rng(0).normal(size=tuple(batch) + (L, H * dh))
    s = split_heads(x, H)
    assert s.shape == tuple(batch) + (H, L, dh)
    for h in range(H):
        for t in range(L):
            np.testing.assert_array_equal(
                s[..., h, t, :], x[..., t, h * dh : (h + 1) * dh]
            )
    np.testing.assert_array_equal(merge_heads(s), x)
    np.testing.assert_array_equal(split_heads(merge_heads(s), H), s)


def test_merge_puts_each_token_back_in_its_own_row():
    # heads[h, t, f] encodes (h, t, f); a merge without the transpose would mix tokens.
    H, L, dh = 3, 4, 2
    heads = np.array(
        [
            [[100 * h + 10 * t + f for f in range(dh)] for t in range(L)]
            for h in range(H)
        ]
    )
    merged = merge_heads(heads)
    for t in range(L):
        for h in range(H):
            for f in range(dh):
                assert merged[t, h * dh + f] == 100 * h + 10 * t + f


@pytest.mark.parametrize("d_model,H", [(5, 2), (4, 3), (6, 4)])
def test_width_not_divisible_by_heads_is_a_value_error_everywhere(d_model, H):
    with pytest.raises(ValueError, match="divisible"):
        split_heads(np.zeros((2, d_model)), H)
    with pytest.raises(ValueError, match="divisible"):
        init_multi_head(np.random.default_rng(0), d_model, H)
    with pytest.raises(ValueError, match="divisible"):
        MultiHeadParams(
            np.zeros((3, d_model)),
            np.zeros((3, d_model)),
            np.zeros((3, d_model)),
            np.zeros((d_model, 3)),
            H,
        )


def test_split_and_merge_bad_arguments():
    with pytest.raises(ValueError, match="at least 1"):
        split_heads(np.zeros((2, 4)), 0)
    with pytest.raises(TypeError):
        split_heads(np.zeros((2, 4)), 2.0)
    with pytest.raises(ValueError, match=r"\(4,\)"):
        split_heads(np.zeros(4), 2)
    with pytest.raises(ValueError, match=r"\(2, 4\)"):
        merge_heads(np.zeros((2, 4)))


# --- multi-head attention: case 9
# ----------------------------------------------------------------


def test_case9_different_input_widths_shapes_and_loop():
    rng = np.random.default_rng(0)
    p = init_multi_head(rng, 4, 2, d_query_in=3, d_key_in=5, d_value_in=6)
    q, k, v = (
        rng.normal(size=(2, 2, 3)),
        rng.normal(size=(2, 3, 5)),
        rng.normal(size=(2, 3, 6)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = multi_head_attention(q, k, v, p)
    assert out.shape == (2, 2, 4) and w.shape == (2, 2, 2, 3)
    ref_out, ref_w = loop_multi_head(q, k, v, p)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


@SETTINGS
@given(
    st.integers(1, 3),
    st.integers(1, 4),
    st.integers(1, 4),
    st.integers(1, 3),
    st.integers(1, 3),
    st.booleans(),
    seeds,
)
def test_equals_an_explicit_loop_over_heads_with_per_head_masks(
    B, Lq, Lk, H, dh, biases, seed
):
    rng = np.random.default_rng(seed)
    p = random_params(rng, H * dh, H, 3, 2, 4, 5, biases=biases)
    q, k, v = (
        rng.normal(size=(B, Lq, 3)),
        rng.normal(size=(B, Lk, 2)),
        rng.normal(size=(B, Lk, 4)),
    )
    mask = rng.random((B, H, Lq, Lk)) < 0.6
    out, w = multi_head_attention(q, k, v, p, mask=mask)
    ref_out, ref_w = loop_multi_head(q, k, v, p, mask)
    np.testing.assert_allclose(w, ref_w, atol=1e-10)
    np.testing.assert_allclose(out, ref_out, atol=1e-10)


def test_a_shared_mask_applies_to_every_head():
    rng = np.random.default_rng(1)
    p = random_params(rng, 4, 2, 4, 4, 4, 4)
    x = rng.normal(size=(3, 5, 4))
    shared = padding_mask([5, 2, 0], 5) & causal_mask(5)  # (3, 5, 5)
    out, w = multi_head_attention(x, x, x, p, mask=shared)
    ref_out, ref_w = loop_multi_head(
        x, x, x, p, np.broadcast_to(shared[:, None], (3, 2, 5, 5))
    )
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)


# --- case 11: per-head weights and their average
# -------------------------------------------------


def test_case11_per_head_weights_and_average_on_request():
    eye = np.eye(2)
    p = MultiHeadParams(
        eye, eye, eye, eye, 2
    )  # head 0 sees feature 0, head 1 feature 1
    q = np.array([[1.0, 0.0]])  # head 0: q = 1; head 1: q = 0
    k = np.array([[0.0, 0.0], [1.0, 0.0]])  # head 0 keys 0 and 1 -> scores [0, 1]
    _, w = multi_head_attention(q, k, k, p)
    a = 1 / (1 + math.e)  # e^0 / (e^0 + e^1)
    assert w.shape == (2, 1, 2)
    np.testing.assert_allclose(w[:, 0], [[a, 1 - a], [0.5, 0.5]], rtol=1e-12)
    np.testing.assert_allclose(w[:, 0], [[0.2689, 0.7311], [0.5, 0.5]], atol=5e-5)
    _, avg = multi_head_attention(q, k, k, p, average_weights=True)
    assert avg.shape == (1, 2)
    np.testing.assert_allclose(avg[0], [(a + 0.5) / 2, (1 - a + 0.5) / 2], rtol=1e-12)
    np.testing.assert_allclose(avg[0], [0.3845, 0.6155], atol=5e-5)


# --- case 2, multi-head half: a fully masked head
# ------------------------------------------------


def test_case2_one_fully_masked_head_gives_no_nan():
    rng = np.random.default_rng(2)
    p = random_params(rng, 4, 2, 3, 3, 3, 3)
    q, k, v = (
        rng.normal(size=(1, 2, 3)),
        rng.normal(size=(1, 3, 3)),
        rng.normal(size=(1, 3, 3)),
    )
    mask = np.ones((1, 2, 2, 3), dtype=bool)
    mask[0, 1] = False  # head 1 may attend nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = multi_head_attention(q, k, v, p, mask=mask)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    np.testing.assert_array_equal(w[0, 1], 0)
    # Only head 0 contributes: its output through rows 0:2 of W_O.
    ref_out, _ = loop_multi_head(q, k, v, p, mask)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    head0 = w[0, 0] @ (v[0] @ p.W_V[:, :2])
    np.testing.assert_allclose(out[0], head0 @ p.W_O[:2], atol=1e-12)


# --- heads never mix tokens, padding, batches
# ----------------------------------------------------


@SETTINGS
@given(st.integers(1, 6), st.integers(1, 3), seeds)
def test_with_a_diagonal_mask_each_token_only_sees_itself(L, H, seed):
    rng = np.random.default_rng(seed)
    p = random_params(rng, 2 * H, H, 3, 3, 3, 4)
    x = rng.normal(size=(L, 3))
    out, w = multi_head_attention(x, x, x, p, mask=np.eye(L, dtype=bool))
    np.testing.assert_allclose(w, np.broadcast_to(np.eye(L), (H, L, L)), atol=1e-15)
    for t in range(L):
        np.testing.assert_allclose(out[t], (x[t] @ p.W_V) @ p.W_O, atol=1e-12)


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 3), st.sampled_from(["left", "right"]), seeds)
def test_padding_on_either_side_keeps_real_tokens(n, pad, side, seed):
    rng = np.random.default_rng(seed)
    p = random_params(rng, 4, 2, 3, 3, 3, 3)
    x = rng.normal(size=(1, n, 3))
    ref_out, ref_w = multi_head_attention(x, x, x, p, mask=causal_mask(n))
    xp = np.full((1, n + pad, 3), np.nan)  # padding holds NaN: must not leak
    real = slice(0, n) if side == "right" else slice(pad, pad + n)
    xp[:, real] = x
    mask = (
        padding_mask([n], n + pad, side=side)
        & query_padding_mask([n], n + pad, side=side)
        & causal_mask(n + pad)
    )
    out, w = multi_head_attention(xp, xp, xp, p, mask=mask)
    np.testing.assert_allclose(out[:, real], ref_out, atol=1e-12)
    np.testing.assert_allclose(w[:, :, real, real], ref_w, atol=1e-12)


@SETTINGS
@given(st.integers(2, 4), st.integers(1, 4), seeds)
def test_a_batch_element_alone_equals_it_inside_the_batch(B, L, seed):
    rng = np.random.default_rng(seed)
    p = random_params(rng, 6, 3, 2, 2, 2, 2)
    x = rng.normal(size=(B, L, 2))
    mask = padding_mask(rng.integers(0, L + 1, size=B), L)  # (B, 1, L)
    out, w = multi_head_attention(x, x, x, p, mask=mask)  # B may equal H
    for b in range(B):
        alone_out, alone_w = multi_head_attention(x[b], x[b], x[b], p, mask=mask[b])
        np.testing.assert_allclose(out[b], alone_out, atol=1e-12)
        np.testing.assert_allclose(w[b], alone_w, atol=1e-12)


# --- dtypes
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_inputs_come_back_in_their_dtype(dtype):
    rng = np.random.default_rng(3)
    p = init_multi_head(rng, 4, 2)
    x = rng.normal(size=(2, 3, 4)).astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = multi_head_attention(x, x, x, p, mask=causal_mask(3))
    assert out.dtype == dtype and w.dtype == dtype
    ref_out, _ = loop_multi_head(
        x.astype(float),
        x.astype(float),
        x.astype(float),
        p,
        np.broadcast_to(causal_mask(3), (2, 2, 3, 3)),
    )
    np.testing.assert_allclose(out.astype(float), ref_out, atol=5e-3)


# --- errors
# --------------------------------------------------------------------------------------


def test_input_that_does_not_fit_its_projection_names_both_shapes():
    p = init_multi_head(np.random.default_rng(0), 4, 2, d_key_in=5)
    with pytest.raises(ValueError, match=r"keys.*\(3, 4\).*\(5, 4\)"):
        multi_head_attention(np.zeros((2, 4)), np.zeros((3, 4)), np.zeros((3, 4)), p)


def test_mask_errors():
    p = init_multi_head(np.random.default_rng(0), 4, 2)
    x = np.zeros((2, 3, 4))
    with pytest.raises(ValueError, match="3 at the head axis"):
        multi_head_attention(x, x, x, p, mask=np.ones((2, 3, 3, 3), dtype=bool))
    with pytest.raises(ValueError, match="too many axes"):
        multi_head_attention(x, x, x, p, mask=np.ones((1, 2, 2, 3, 3), dtype=bool))
    with pytest.raises(ValueError, match=r"\(5, 3, 3\).*\(2, 3, 3\).*\(2, 2, 3, 3\)"):
        multi_head_attention(x, x, x, p, mask=np.ones((5, 3, 3), dtype=bool))
    with pytest.raises(TypeError, match="float64"):
        multi_head_attention(x, x, x, p, mask=np.ones((3, 3)))


def test_params_are_checked():
    z = np.zeros
    with pytest.raises(ValueError, match=r"W_O \(3, 4\)"):
        MultiHeadParams(z((2, 4)), z((2, 4)), z((2, 4)), z((3, 4)), 2)
    with pytest.raises(ValueError, match=r"W_K \(2, 6\)"):
        MultiHeadParams(z((2, 4)), z((2, 6)), z((2, 4)), z((4, 4)), 2)
    with pytest.raises(ValueError, match=r"b_O"):
        MultiHeadParams(z((2, 4)), z((2, 4)), z((2, 4)), z((4, 3)), 2, b_O=z(4))
    with pytest.raises(ValueError, match="matrix"):
        MultiHeadParams(z(4), z((2, 4)), z((2, 4)), z((4, 3)), 2)
    p = MultiHeadParams([[1.0, 0.0]], [[1.0, 0.0]], [[1.0, 0.0]], [[1.0], [0.0]], 2)
    assert isinstance(p.W_Q, np.ndarray) and p.d_model == 2 and p.d_head == 1


def test_init_multi_head_is_reproducible_and_glorot_bounded():
    a = init_multi_head(np.random.default_rng(0), 8, 2, d_query_in=3, d_out=5)
    b = init_multi_head(np.random.default_rng(0), 8, 2, d_query_in=3, d_out=5)
    np.testing.assert_array_equal(a.W_Q, b.W_Q)
    assert a.W_Q.shape == (3, 8) and a.W_O.shape == (8, 5)
    assert np.abs(a.W_Q).max() <= math.sqrt(6 / (3 + 8))
    np.testing.assert_array_equal(
        init_multi_head(0, 8, 2, d_query_in=3, d_out=5).W_O, a.W_O
    )


def test_empty_sequences():
    p = init_multi_head(0, 4, 2)
    out, w = multi_head_attention(np.zeros((0, 4)), np.ones((3, 4)), np.ones((3, 4)), p)
    assert out.shape == (0, 4) and w.shape == (2, 0, 3)
    out, w = multi_head_attention(
        np.ones((2, 4)), np.zeros((0, 4)), np.zeros((0, 4)), p
    )
    assert w.shape == (2, 2, 0)
    np.testing.assert_array_equal(out, np.zeros((2, 4)))  # no key: every head gives 0
