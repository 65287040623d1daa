"""Tests of attnlib.attention and attnlib.weighted_sum.

Issue 3, cases 2, 3 and 10, the documents' worked examples, and the kinds of fault
behind them: poisoned masked keys, padding on either side, batch independence, causal
alignment, permutation equivariance, dtypes, empty sequences, wrong ranks and shapes.
The reference is ``loop_attention`` below: one query at a time, one allowed key at a
time.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import (
    attention,
    causal_mask,
    dot_product_scores,
    padding_mask,
    query_padding_mask,
    scaled_dot_product_scores,
    softmax,
    weighted_sum,
)
from attnlib.data import examples

T, F = True, False
SETTINGS = settings(max_examples=25, deadline=None)
seeds = st.integers(0, 2**32 - 1)


def loop_attention(q, k, v, mask=None, scale=None):
    """Attention for 3-D q (B, L_q, d), k (B, L_k, d), v (B, L_k, d_v), mask (B, L_q,
       L_k).

    Reads only the keys and values a query may attend, so whatever masked positions hold
    cannot matter here.
    """
    B, Lq, d = q.shape
    Lk, dv = v.shape[1], v.shape[2]
    scale = 1 / math.sqrt(d) if scale is None else scale
    out, weights = np.zeros((B, Lq, dv)), np.zeros((B, Lq, Lk))
    for b in range(B):
        for i in range(Lq):
            allowed = [j for j in range(Lk) if mask is None or mask[b, i, j]]
            if not allowed:
                continue  # no key: zero weights, zero output
            s = {
                j: scale * sum(q[b, i, f] * k[b, j, f] for f in range(d))
                for j in allowed
            }
            top = max(s.values())
            e = {j: math.exp(s[j] - top) for j in allowed}
            total = sum(e.values())
            for j in allowed:
                weights[b, i, j] = e[j] / total
                out[b, i] += weights[b, i, j] * v[b, j]
    return out, weights


@pytest.fixture
def no_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def random_qkv(rng, B, Lq, Lk, d, dv):
    return (
        rng.normal(size=(B, Lq, d)),
        rng.normal(size=(B, Lk, d)),
        rng.normal(size=(B, Lk, dv)),
    )


# --- issue 3, case 2: a partially and a fully masked query
# ---------------------------------------


def test_case2_scaled_masked_attention(no_warnings):
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    out, w = attention(q, k, v, mask=np.array([[T, T, F], [F, F, F]]))
    # Query 0 scores keys 0 and 1 as 1/sqrt(2) and 0.
    a = 1 / (1 + math.exp(-1 / math.sqrt(2)))
    np.testing.assert_allclose(w, [[a, 1 - a, 0], [0, 0, 0]], rtol=1e-12)
    np.testing.assert_allclose(
        out, [[a * 1 + (1 - a) * 3, a * 2 + (1 - a) * 4], [0, 0]], rtol=1e-12
    )
    np.testing.assert_allclose(w, [[0.6698, 0.3302, 0], [0, 0, 0]], atol=5e-5)
    np.testing.assert_allclose(out, [[1.6605, 2.6605], [0, 0]], atol=5e-5)


# --- case 3: causal running mean
# -----------------------------------------------------------------


def test_case3_causal_with_zero_scores_is_a_running_mean(no_warnings):
    out, w = attention(
        np.zeros((3, 1)),
        np.zeros((3, 1)),
        np.array([[1.0], [2.0], [3.0]]),
        mask=causal_mask(3),
    )
    np.testing.assert_allclose(out[:, 0], [1, 1.5, 2], rtol=1e-15)


@SETTINGS
@given(st.integers(1, 12), seeds)
def test_causal_with_equal_scores_averages_the_prefix(n, seed):
    v = np.random.default_rng(seed).normal(size=(n, 2))
    out, w = attention(np.zeros((n, 3)), np.zeros((n, 3)), v, mask=causal_mask(n))
    for t in range(n):
        np.testing.assert_allclose(out[t], v[: t + 1].mean(axis=0), atol=1e-12)
        np.testing.assert_allclose(w[t, : t + 1], 1 / (t + 1), rtol=1e-12)


# --- case 10: cross-attention
# --------------------------------------------------------------------


def test_case10_cross_attention_with_a_mask(no_warnings):
    out, w = attention(
        np.zeros((2, 1)),
        np.zeros((3, 1)),
        np.array([[1.0], [2.0], [3.0]]),
        mask=np.array([[T, T, F], [T, T, T]]),
    )
    np.testing.assert_allclose(w, [[0.5, 0.5, 0], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-15)
    np.testing.assert_allclose(out[:, 0], [1.5, 2.0], rtol=1e-15)


def test_case10_mask_of_the_wrong_shape_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(1, 2, 2\).*\(2, 3\)"):
        attention(
            np.zeros((2, 1)),
            np.zeros((3, 1)),
            np.zeros((3, 1)),
            mask=np.ones((1, 2, 2), dtype=bool),
        )


# --- the documents' worked examples
# --------------------------------------------------------------


def test_bank_example():
    ex = examples.BANK
    out, w = attention(ex.query[None], ex.keys, ex.values)
    e = math.e
    expected = [e**2 / (e**2 + e + 1), e / (e**2 + e + 1), 1 / (e**2 + e + 1)]
    np.testing.assert_allclose(w[0], expected, rtol=1e-12)
    np.testing.assert_allclose(w[0], [0.6652, 0.2447, 0.0900], atol=5e-5)
    np.testing.assert_allclose(
        out[0],
        [2 * expected[0] + expected[2], 2 * expected[1] + expected[2]],
        rtol=1e-12,
    )
    np.testing.assert_allclose(out[0], [1.4205, 0.5795], atol=5e-5)


def test_machine_learning_rocks_example():
    ex = examples.MACHINE_LEARNING_ROCKS
    w = softmax(ex.scores)
    np.testing.assert_allclose(w, [0.114, 0.844, 0.042], atol=5e-4)
    np.testing.assert_allclose(weighted_sum(w, ex.values), [0.156, 1.730], atol=5e-4)


# --- agreement with the other modules
# ------------------------------------------------------------


@SETTINGS
@given(
    st.integers(1, 3),
    st.integers(0, 4),
    st.integers(0, 4),
    st.integers(1, 4),
    st.integers(1, 3),
    seeds,
)
def test_equals_the_loop_reference_with_random_masks(B, Lq, Lk, d, dv, seed):
    rng = np.random.default_rng(seed)
    q, k, v = random_qkv(rng, B, Lq, Lk, d, dv)
    mask = rng.random((B, Lq, Lk)) < 0.6
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = attention(q, k, v, mask=mask)
    ref_out, ref_w = loop_attention(q, k, v, mask)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    np.testing.assert_allclose(w.sum(-1), mask.any(-1).astype(float), atol=1e-12)


def test_weights_are_softmax_of_scaled_scores_and_scale_one_is_plain_dot_product():
    rng = np.random.default_rng(7)
    q, k, v = random_qkv(rng, 2, 3, 4, 5, 2)
    np.testing.assert_allclose(
        attention(q, k, v)[1], softmax(scaled_dot_product_scores(q, k)), atol=1e-14
    )
    np.testing.assert_allclose(
        attention(q, k, v, scale=1.0)[1], softmax(dot_product_scores(q, k)), atol=1e-14
    )
    np.testing.assert_allclose(
        attention(q, k, v, scale=0.3)[0],
        loop_attention(q, k, v, scale=0.3)[0],
        atol=1e-12,
    )


def test_batch_axes_may_come_from_the_values_alone():
    rng = np.random.default_rng(11)
    q, k, v = (
        rng.normal(size=(2, 3)),
        rng.normal(size=(4, 3)),
        rng.normal(size=(5, 4, 2)),
    )
    mask = padding_mask([4, 3, 2, 1, 0], 4)  # (5, 1, 4)
    out, w = attention(q, k, v, mask=mask)
    assert out.shape == (5, 2, 2) and w.shape == (5, 2, 4)
    ref_out, ref_w = loop_attention(
        np.broadcast_to(q, (5, 2, 3)),
        np.broadcast_to(k, (5, 4, 3)),
        v,
        np.broadcast_to(mask, (5, 2, 4)),
    )
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)


# --- masked keys never influence the output
# ------------------------------------------------------


@pytest.mark.parametrize("poison", [np.nan, np.inf, -np.inf, 1e300, -1e300])
def test_keys_and_values_no_query_may_attend_may_hold_anything(no_warnings, poison):
    rng = np.random.default_rng(8)
    q, k, v = random_qkv(rng, 2, 3, 5, 4, 2)
    mask = np.ones((2, 3, 5), dtype=bool)
    mask[0, :, [1, 4]] = False  # keys 1 and 4 of batch 0: nobody may look
    mask[1, :, 0] = False
    mask[1, 2, :] = False  # query 2 of batch 1: may look at nothing
    clean_out, clean_w = loop_attention(q, k, v, mask)
    k2, v2, q2 = k.copy(), v.copy(), q.copy()
    k2[0, [1, 4]] = poison
    v2[0, [1, 4]] = poison
    k2[1, 0] = poison
    v2[1, 0] = poison
    q2[1, 2] = poison  # a query that asks nothing may hold anything too
    out, w = attention(q2, k2, v2, mask=mask)
    np.testing.assert_allclose(w, clean_w, atol=1e-12)
    np.testing.assert_allclose(out, clean_out, atol=1e-12)


@SETTINGS
@given(seeds)
def test_a_key_masked_for_one_query_does_not_influence_that_query(seed):
    # Key 0 is allowed for query 1 but not for query 0: changing it may change query 1
    # only.
    rng = np.random.default_rng(seed)
    q, k, v = random_qkv(rng, 1, 2, 4, 3, 2)
    mask = np.array([[[F, T, T, T], [T, T, T, T]]])
    out, w = attention(q, k, v, mask=mask)
    k2, v2 = k.copy(), v.copy()
    k2[0, 0] = rng.normal(size=3) * 100
    v2[0, 0] = rng.normal(size=2) * 100
    out2, w2 = attention(q, k2, v2, mask=mask)
    np.testing.assert_allclose(out2[0, 0], out[0, 0], atol=1e-12)
    np.testing.assert_allclose(w2[0, 0], w[0, 0], atol=1e-12)


def test_nan_in_a_key_some_query_may_attend_is_an_error_not_a_silent_nan():
    v = np.array([[1.0], [np.nan]])
    with pytest.raises(ValueError, match="values"):
        attention(
            np.zeros((2, 1)), np.zeros((2, 1)), v, mask=np.array([[T, F], [T, T]])
        )
    with pytest.raises(ValueError, match="keys"):
        attention(np.zeros((1, 1)), np.array([[np.inf], [0.0]]), np.zeros((2, 1)))


# --- padding never changes the real tokens
# -------------------------------------------------------


@SETTINGS
@given(
    st.integers(1, 5),
    st.integers(0, 4),
    st.sampled_from(["left", "right"]),
    st.booleans(),
    st.sampled_from([0.0, np.nan, np.inf, 1e200]),
    seeds,
)
def test_padding_on_either_side_does_not_change_real_tokens(
    n, pad, side, causal, poison, seed
):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    v = rng.normal(size=(n, 2))
    mask_real = causal_mask(n) if causal else None
    ref_out, ref_w = attention(x, x, v, mask=mask_real)

    xp = np.full((n + pad, 3), poison)
    vp = np.full((n + pad, 2), poison)
    real = slice(0, n) if side == "right" else slice(pad, pad + n)
    xp[real], vp[real] = x, v
    # Padding keys may not be attended; padding queries attend nothing (so they may hold
    # NaN).
    mask = (
        padding_mask([n], n + pad, side=side)[0]
        & query_padding_mask([n], n + pad, side=side)[0]
    )
    if causal:
        mask = mask & causal_mask(n + pad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, w = attention(xp, xp, vp, mask=mask)
    is_real = np.zeros(n + pad, dtype=bool)
    is_real[real] = True
    np.testing.assert_allclose(out[real], ref_out, atol=1e-12)
    np.testing.assert_allclose(w[real, real], ref_w, atol=1e-12)
    np.testing.assert_array_equal(w[:, ~is_real], 0)
    np.testing.assert_array_equal(out[~is_real], 0)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 4), st.sampled_from(["left", "right"]), seeds)
def test_key_padding_alone_keeps_real_tokens_with_finite_padding(n, pad, side, seed):
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=(n, 3)), rng.normal(size=(n, 2))
    ref_out, _ = attention(x, x, v)
    xp, vp = rng.normal(size=(n + pad, 3)) * 50, rng.normal(size=(n + pad, 2)) * 50
    real = slice(0, n) if side == "right" else slice(pad, pad + n)
    xp[real], vp[real] = x, v
    out, _ = attention(xp, xp, vp, mask=padding_mask([n], n + pad, side=side)[0])
    np.testing.assert_allclose(out[real], ref_out, atol=1e-12)


# --- batch independence
# --------------------------------------------------------------------------


@SETTINGS
@given(st.integers(2, 4), st.integers(1, 4), st.integers(1, 4), seeds)
def test_a_batch_element_alone_equals_it_inside_the_batch(B, Lq, Lk, seed):
    rng = np.random.default_rng(seed)
    q, k, v = random_qkv(rng, B, Lq, Lk, 3, 2)
    lens = rng.integers(0, Lk + 1, size=B)
    mask = padding_mask(lens, Lk)
    out, w = attention(q, k, v, mask=mask)
    for b in range(B):
        alone_out, alone_w = attention(q[b], k[b], v[b], mask=mask[b])
        np.testing.assert_allclose(out[b], alone_out, atol=1e-12)
        np.testing.assert_allclose(w[b], alone_w, atol=1e-12)


# --- permutation equivariance and causality
# ------------------------------------------------------


@SETTINGS
@given(st.integers(1, 6), seeds)
def test_self_attention_without_mask_is_permutation_equivariant(n, seed):
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
    p = rng.permutation(n)
    out, w = attention(x, x, v)
    out_p, w_p = attention(x[p], x[p], v[p])
    np.testing.assert_allclose(out_p, out[p], atol=1e-12)
    np.testing.assert_allclose(w_p, w[p][:, p], atol=1e-12)


@SETTINGS
@given(st.integers(2, 7), st.data(), seeds)
def test_causal_outputs_before_t_ignore_tokens_after_t(n, data, seed):
    t = data.draw(st.integers(0, n - 2))
    rng = np.random.default_rng(seed)
    x, v = rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
    out, w = attention(x, x, v, mask=causal_mask(n))
    x2, v2 = x.copy(), v.copy()
    x2[t + 1 :] = rng.normal(size=(n - t - 1, 4)) * 10
    v2[t + 1 :] = rng.normal(size=(n - t - 1, 3)) * 10
    out2, w2 = attention(x2, x2, v2, mask=causal_mask(n))
    np.testing.assert_allclose(out2[: t + 1], out[: t + 1], atol=1e-12)
    np.testing.assert_allclose(w2[: t + 1], w[: t + 1], atol=1e-12)


@SETTINGS
@given(st.integers(0, 5), st.integers(1, 4), seeds)
def test_decoding_after_a_prefix_with_end_alignment_equals_full_causal_attention(
    prefix, n_new, seed
):
    rng = np.random.default_rng(seed)
    n = prefix + n_new
    x, v = rng.normal(size=(n, 4)), rng.normal(size=(n, 3))
    full_out, full_w = attention(x, x, v, mask=causal_mask(n))
    new_out, new_w = attention(
        x[prefix:], x, v, mask=causal_mask(n_new, n, align="end")
    )
    np.testing.assert_allclose(new_out, full_out[prefix:], atol=1e-12)
    np.testing.assert_allclose(new_w, full_w[prefix:], atol=1e-12)


# --- dtypes and magnitudes
# -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_low_precision_is_returned_in_its_dtype(no_warnings, dtype):
    rng = np.random.default_rng(9)
    q, k, v = (a.astype(dtype) for a in random_qkv(rng, 2, 3, 4, 8, 2))
    mask = padding_mask([4, 0], 4)
    out, w = attention(q, k, v, mask=mask)
    assert out.dtype == dtype and w.dtype == dtype
    ref_out, ref_w = loop_attention(
        *(a.astype(float) for a in (q, k, v)), np.broadcast_to(mask, (2, 3, 4))
    )
    tol = 2e-3 if dtype == np.float16 else 1e-6
    np.testing.assert_allclose(w.astype(float), ref_w, atol=tol)
    np.testing.assert_allclose(out.astype(float), ref_out, atol=tol * 5)
    np.testing.assert_array_equal(out[1], 0)


@pytest.mark.parametrize("dtype", [np.float16])
def test_large_magnitudes_do_not_overflow(no_warnings, dtype):
    # float16 is computed in float32, where a dot product of its largest numbers still
    # fits.
    big = float(np.finfo(dtype).max) / 4
    q = np.array([[big, big]], dtype=dtype)
    k = np.array(
        [[big, big], [-big, big], [big, -big]], dtype=dtype
    )  # scores +huge, 0, 0
    v = np.array([[big, 1.0], [0.0, -big], [-big, 0.0]], dtype=dtype)
    out, w = attention(q, k, v)
    assert out.dtype == dtype and np.isfinite(out).all()
    np.testing.assert_array_equal(w, [[1, 0, 0]])
    np.testing.assert_array_equal(out, v[:1])


def test_float32_scores_beyond_float32_raise_a_clear_error(no_warnings):
    # float32 is computed in float32 (as fast as the hardware allows); a score beyond
    # 3.4e38 cannot be represented, so attnlib says so instead of returning inf or NaN.
    big = float(np.finfo(np.float32).max) / 4
    q = np.array([[big, big]], dtype=np.float32)
    k = np.array([[big, big], [-big, big]], dtype=np.float32)
    with pytest.raises(OverflowError, match="float32"):
        attention(q, k, np.ones((2, 1), dtype=np.float32))
    out, w = attention(q.astype(np.float64), k.astype(np.float64), np.ones((2, 1)))
    np.testing.assert_array_equal(w, [[1, 0]])  # float64 holds such scores


def test_integer_inputs_give_float64_and_the_same_result():
    q, k, v = np.array([[1, 0]]), np.array([[1, 0], [0, 1]]), np.array([[2, 4], [6, 8]])
    out, w = attention(q, k, v)
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, attention(q * 1.0, k * 1.0, v * 1.0)[0], rtol=1e-15)


# --- empty sequences
# -----------------------------------------------------------------------------


def test_no_keys_gives_zero_outputs(no_warnings):
    out, w = attention(np.zeros((2, 3)), np.zeros((0, 3)), np.zeros((0, 4)))
    assert w.shape == (2, 0)
    np.testing.assert_array_equal(out, np.zeros((2, 4)))


def test_no_queries_gives_empty_outputs(no_warnings):
    out, w = attention(
        np.zeros((0, 3)), np.ones((2, 3)), np.ones((2, 4)), mask=np.ones((0, 2), bool)
    )
    assert out.shape == (0, 4) and w.shape == (0, 2)


# --- errors
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shapes,pattern",
    [
        (((3,), (2, 3), (2, 1)), r"queries.*\(3,\)"),
        (((2, 3), (2, 4), (2, 1)), r"\(2, 3\).*\(2, 4\)"),
        (((2, 3), (2, 3), (4, 1)), r"\(2, 3\).*\(4, 1\)"),
        (((2, 2, 3), (3, 2, 3), (3, 2, 1)), r"\(2, 2, 3\).*\(3, 2, 3\)"),
        (((2, 2, 3), (2, 2, 3), (3, 2, 1)), r"\(3, 2, 1\)"),
    ],
)
def test_shape_errors_name_the_shapes(shapes, pattern):
    q, k, v = (np.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=pattern):
        attention(q, k, v)


@pytest.mark.parametrize("mask", [np.array([[1.0, 0.0]]), np.array([[1, 0]])])
def test_non_boolean_mask_is_a_type_error_naming_the_dtype(mask):
    with pytest.raises(TypeError, match=str(mask.dtype)):
        attention(np.zeros((1, 2)), np.zeros((2, 2)), np.zeros((2, 2)), mask=mask)


def test_zero_features_need_an_explicit_scale_and_bad_scales_are_refused():
    with pytest.raises(ValueError, match="d_k = 0"):
        attention(np.zeros((1, 0)), np.zeros((2, 0)), np.ones((2, 1)))
    out, w = attention(np.zeros((1, 0)), np.zeros((2, 0)), np.ones((2, 1)), scale=1.0)
    np.testing.assert_array_equal(w, [[0.5, 0.5]])
    with pytest.raises(ValueError, match="scale"):
        attention(
            np.zeros((1, 2)), np.zeros((2, 2)), np.ones((2, 1)), scale=float("nan")
        )


# --- weighted_sum
# --------------------------------------------------------------------------------


def test_weighted_sum_equals_a_loop_and_accepts_one_query():
    rng = np.random.default_rng(10)
    w, v = rng.random((2, 3, 4)), rng.normal(size=(2, 4, 5))
    got = weighted_sum(w, v)
    for b in range(2):
        for i in range(3):
            np.testing.assert_allclose(
                got[b, i], sum(w[b, i, j] * v[b, j] for j in range(4)), atol=1e-12
            )
    np.testing.assert_allclose(weighted_sum(w[0, 0], v[0]), got[0, 0], atol=1e-12)
    shared = weighted_sum(w[0, 0], v)  # one query's weights, every batch
    assert shared.shape == (2, 5)
    for b in range(2):
        np.testing.assert_allclose(
            shared[b], sum(w[0, 0, j] * v[b, j] for j in range(4)), atol=1e-12
        )


def test_weighted_sum_errors():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 5\)"):
        weighted_sum(np.zeros((2, 3)), np.zeros((4, 5)))
    with pytest.raises(ValueError, match="NaN"):
        weighted_sum(np.array([1.0, 0.0]), np.array([[1.0], [np.nan]]))
    with pytest.raises(ValueError, match="weights"):
        weighted_sum(np.array([np.nan, 1.0]), np.array([[1.0], [2.0]]))
    with pytest.raises(TypeError, match="bool"):
        weighted_sum(np.array([True, False]), np.ones((2, 1)))


def test_plain_attention_allocates_little_beyond_its_float32_scores():
    """The scores become the weights in place: beyond them (4 bytes per score,
    returned), one boolean complement of the (L_q, L_k) mask and arrays of the size of
    Q, K and V."""
    import tracemalloc

    heads, n, d = 8, 256, 16
    rng = np.random.default_rng(3)
    q, k, v = (rng.normal(size=(heads, n, d)).astype(np.float32) for _ in range(3))
    mask = causal_mask(n)  # one mask for every head
    attention(q, k, v, mask)  # warm up numpy's caches
    tracemalloc.start()
    attention(q, k, v, mask)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    scores = heads * n * n
    inputs_sized = 4 * heads * n * d * 4  # scaled Q, output, spare
    assert peak <= 4 * scores + n * n + inputs_sized  # no (heads, n, n) temporary
    assert peak - 4 * scores <= 4 * scores  # the budget


@pytest.mark.parametrize("where", ["queries", "keys", "values"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_one_non_finite_number_that_takes_part_is_refused(where, bad):
    rng = np.random.default_rng(4)
    arrays = {
        name: rng.normal(size=(2, 5, 3)).astype(np.float32)
        for name in ("queries", "keys", "values")
    }
    arrays[where][1, 2, 1] = bad
    with pytest.raises(ValueError, match=where):
        attention(arrays["queries"], arrays["keys"], arrays["values"])
    mask = np.ones((5, 5), dtype=bool)
    if where == "queries":
        mask[2] = False  # query 2 attends nothing
    else:
        mask[:, 2] = False  # no query attends key 2
    out, w = attention(arrays["queries"], arrays["keys"], arrays["values"], mask)
    assert np.isfinite(out).all() and np.isfinite(w).all()
    assert np.all(w[..., 2] == 0) if where != "queries" else np.all(w[:, 2] == 0)
