"""Tests of attnlib.core.grouped_query and attnlib.core.sliding_window.

The reference ``loop_grouped`` repeats nothing and reshapes nothing: it loops over
query heads, finds each head's key/value head as ``h // G`` and computes softmax by
hand. Multi-head attention is the case ``H_kv = H`` (Ainslie et al. 2023, Figure 2).
"""

import math

import numpy as np
import pytest

from attnlib import causal_mask, init_multi_head, multi_head_attention
from attnlib.core.grouped_query import (
    GroupedQueryParams,
    from_multi_head,
    group_size,
    grouped_query_attention,
    grouped_query_self_attention,
    init_grouped_query,
)
from attnlib.core.sliding_window import sliding_window_mask

F, T = False, True


def loop_grouped(q, k, v, mask=None):
    """q (H, L_q, d), k/v (H_kv, L_k, d); mask (L_q, L_k) or None."""
    H, Lq, _ = q.shape
    H_kv, Lk, dv = v.shape
    G = H // H_kv
    out, weights = np.zeros((H, Lq, dv)), np.zeros((H, Lq, Lk))
    for h in range(H):
        g = h // G  # the key/value head this query head reads
        for i in range(Lq):
            allowed = [j for j in range(Lk) if mask is None or mask[i, j]]
            s = {j: float(q[h, i] @ k[g, j]) / math.sqrt(q.shape[-1]) for j in allowed}
            top = max(s.values())
            total = sum(math.exp(x - top) for x in s.values())
            for j in allowed:
                weights[h, i, j] = math.exp(s[j] - top) / total
                out[h, i] += weights[h, i, j] * v[g, j]
    return out, weights


@pytest.mark.parametrize("H, H_kv", [(4, 4), (4, 2), (4, 1), (6, 3)])
def test_grouped_query_attention_matches_a_loop(H, H_kv):
    rng = np.random.default_rng(H * 10 + H_kv)
    q = rng.normal(size=(H, 5, 3))
    k, v = rng.normal(size=(H_kv, 6, 3)), rng.normal(size=(H_kv, 6, 2))
    mask = causal_mask(5, 6, align="end")
    out, w = grouped_query_attention(q, k, v, mask)
    ref_out, ref_w = loop_grouped(q, k, v, mask)
    assert out.shape == (H, 5, 2) and w.shape == (H, 5, 6)
    np.testing.assert_allclose(out, ref_out, atol=1e-12)
    np.testing.assert_allclose(w, ref_w, atol=1e-12)


def test_groups_equal_to_heads_is_multi_head_attention():
    rng = np.random.default_rng(0)
    mh = init_multi_head(rng, 12, 4)
    x = rng.normal(size=(2, 7, 12))
    mask = causal_mask(7)
    want_out, want_w = multi_head_attention(x, x, x, mh, mask)
    gq = GroupedQueryParams(mh.W_Q, mh.W_K, mh.W_V, mh.W_O, 4, 4)
    out, w = grouped_query_self_attention(x, gq, mask)
    np.testing.assert_allclose(out, want_out, atol=1e-12)
    np.testing.assert_allclose(w, want_w, atol=1e-12)
    same = from_multi_head(mh, 4)  # mean-pooling groups of one changes nothing
    np.testing.assert_array_equal(same.W_K, mh.W_K)


def test_multi_query_heads_share_one_key_head():
    rng = np.random.default_rng(1)
    gq = init_grouped_query(rng, 8, 4, 1)
    assert gq.W_K.shape == (8, 2) and gq.W_V.shape == (8, 2)  # one head of width 2
    x = rng.normal(size=(5, 8))
    _, w = grouped_query_self_attention(x, gq, causal_mask(5))
    assert w.shape == (4, 5, 5)
    # every query head reads the same keys: changing W_Q of head 0 alone moves only
    # head 0's weights
    W_Q = gq.W_Q.copy()
    W_Q[:, :2] += 1.0
    moved = grouped_query_self_attention(
        x, GroupedQueryParams(W_Q, gq.W_K, gq.W_V, gq.W_O, 4, 1), causal_mask(5)
    )[1]
    assert not np.allclose(moved[0], w[0])
    np.testing.assert_array_equal(moved[1:], w[1:])


def test_from_multi_head_mean_pools_each_group():
    rng = np.random.default_rng(2)
    mh = init_multi_head(rng, 8, 4)  # heads of width 2
    gq = from_multi_head(mh, 2)
    # group 0 = heads 0 and 1 (columns 0:2 and 2:4), group 1 = heads 2 and 3
    np.testing.assert_allclose(gq.W_K[:, 0:2], (mh.W_K[:, 0:2] + mh.W_K[:, 2:4]) / 2)
    np.testing.assert_allclose(gq.W_V[:, 2:4], (mh.W_V[:, 4:6] + mh.W_V[:, 6:8]) / 2)
    np.testing.assert_array_equal(gq.W_Q, mh.W_Q)


def test_per_head_mask_reaches_the_right_head():
    rng = np.random.default_rng(3)
    q, k, v = (
        rng.normal(size=(4, 3, 2)),
        rng.normal(size=(2, 3, 2)),
        rng.normal(size=(2, 3, 2)),
    )
    mask = np.ones((4, 3, 3), bool)
    mask[3, :, 0] = False  # head 3 may not read key 0
    _, w = grouped_query_attention(q, k, v, mask)
    assert np.all(w[3, :, 0] == 0) and np.all(w[:3, :, 0] > 0)


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda: group_size(4, 3), ValueError, "must divide"),
        (lambda: group_size(4, 0), ValueError, "num_kv_heads must be at least 1"),
        (lambda: group_size(4.0, 2), TypeError, "must be an integer"),
        (
            lambda: grouped_query_attention(
                np.ones((4, 2, 2)), np.ones((2, 2, 2)), np.ones((3, 2, 2))
            ),
            ValueError,
            "same number of key/value heads",
        ),
        (
            lambda: grouped_query_attention(
                np.ones((2, 2)), np.ones((2, 2)), np.ones((2, 2))
            ),
            ValueError,
            "queries",
        ),
        (
            lambda: GroupedQueryParams(
                np.ones((4, 4)), np.ones((4, 4)), np.ones((4, 2)), np.ones((4, 4)), 2, 1
            ),
            ValueError,
            "W_K",
        ),
        (
            lambda: grouped_query_self_attention(
                np.array([[0.1, 0.2, 0.3, np.inf], [0.4, 0.5, 0.6, 0.7]]),
                init_grouped_query(np.random.default_rng(0), 4, 2, 1),
            ),
            ValueError,
            r"x \(2, 4\) holds NaN or inf",
        ),
    ],
)
def test_bad_input_is_refused_with_a_reason(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_sliding_window_mask_keeps_the_last_w_positions():
    m = sliding_window_mask(5, window=2)
    i, j = np.indices((5, 5))
    np.testing.assert_array_equal(m, (j <= i) & (j > i - 2))
    np.testing.assert_array_equal(sliding_window_mask(6, window=6), causal_mask(6))
    # decoding after a prefix: 2 new queries at positions 4 and 5 of 6 keys
    end = sliding_window_mask(2, 6, window=3, align="end")
    np.testing.assert_array_equal(end, [[F, F, T, T, T, F], [F, F, F, T, T, T]])
    assert sliding_window_mask(3, window=1).sum() == 3  # only the diagonal


@pytest.mark.parametrize(
    "kwargs, error",
    [
        ({"window": 0}, ValueError),
        ({"window": 2.5}, TypeError),
        ({"window": 2, "n_keys": 4}, ValueError),  # lengths differ: align needed
    ],
)
def test_sliding_window_mask_refuses_bad_arguments(kwargs, error):
    with pytest.raises(error):
        sliding_window_mask(3, **kwargs)
