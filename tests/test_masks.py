"""Tests of attnlib.core.masks: causal (and its alignment when L_q != L_k), padding,
   query masks.

Issue 3, cases 1 and 3; every mask is compared with its definition written as a loop.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import (
    bidirectional_mask,
    causal_mask,
    padding_mask,
    query_padding_mask,
    softmax,
)

T, F = True, False
SETTINGS = settings(max_examples=40, deadline=None)
lengths = st.integers(0, 7)


def soft(*xs):
    """Softmax of a few numbers by hand: e^x / sum e^x."""
    total = sum(math.exp(x) for x in xs)
    return [math.exp(x) / total for x in xs]


# --- causal
# --------------------------------------------------------------------------------------


def test_case3_causal_mask_of_three_positions_allows_the_diagonal():
    got = causal_mask(3)
    assert got.dtype == bool
    np.testing.assert_array_equal(got, [[T, F, F], [T, T, F], [T, T, T]])


@SETTINGS
@given(lengths)
def test_causal_square_is_j_at_most_i(n):
    m = causal_mask(n)
    assert m.shape == (n, n)
    for i in range(n):
        for j in range(n):
            assert m[i, j] == (j <= i)


@SETTINGS
@given(lengths, lengths)
def test_causal_end_alignment_puts_the_queries_last(n_q, n_k):
    m = causal_mask(n_q, n_k, align="end")
    assert m.shape == (n_q, n_k)
    for i in range(n_q):
        position = n_k - n_q + i  # where query i sits among the keys
        for j in range(n_k):
            assert m[i, j] == (j <= position)


@SETTINGS
@given(lengths, lengths)
def test_causal_start_alignment_puts_the_queries_first(n_q, n_k):
    m = causal_mask(n_q, n_k, align="start")
    for i in range(n_q):
        for j in range(n_k):
            assert m[i, j] == (j <= i)


@SETTINGS
@given(st.integers(0, 7), st.integers(0, 7))
def test_end_alignment_equals_the_last_rows_of_the_full_causal_mask(prefix, n_new):
    # Decoding n_new tokens after a cached prefix: the mask rows are the last rows of
    # the full (prefix + n_new) causal mask.
    n = prefix + n_new
    np.testing.assert_array_equal(
        causal_mask(n_new, n, align="end"), causal_mask(n)[prefix:]
    )
    np.testing.assert_array_equal(
        causal_mask(n_new, n, align="start"), causal_mask(n)[:n_new]
    )


def test_more_queries_than_keys_end_aligned_leaves_early_queries_without_keys():
    np.testing.assert_array_equal(
        causal_mask(4, 2, align="end"), [[F, F], [F, F], [T, F], [T, T]]
    )


def test_different_lengths_without_alignment_are_refused():
    with pytest.raises(ValueError, match="align"):
        causal_mask(2, 3)


def test_equal_lengths_need_no_alignment_and_both_agree():
    np.testing.assert_array_equal(causal_mask(4, 4, align="start"), causal_mask(4))
    np.testing.assert_array_equal(causal_mask(4, 4, align="end"), causal_mask(4))


@pytest.mark.parametrize(
    "args,kwargs,error",
    [
        ((3, 4), {"align": "left"}, ValueError),
        ((-1,), {}, ValueError),
        ((3, -2), {"align": "end"}, ValueError),
        ((2.5,), {}, TypeError),
        (("3",), {}, TypeError),
    ],
)
def test_causal_bad_arguments(args, kwargs, error):
    with pytest.raises(error):
        causal_mask(*args, **kwargs)


def test_bidirectional_is_all_true():
    np.testing.assert_array_equal(bidirectional_mask(2, 3), np.ones((2, 3), dtype=bool))
    assert bidirectional_mask(3).shape == (3, 3) and bidirectional_mask(3).dtype == bool
    with pytest.raises(ValueError):
        bidirectional_mask(-1)


# --- padding: issue 3, case 1
# --------------------------------------------------------------------

CASE1_SCORES = np.array(
    [[[1, 2, 3, 4], [4, 3, 2, 1]], [[0.5, 1, 1.5, 2], [2, 1, 0, -1]]]
)


def test_case1_valid_lengths_2_and_0():
    w = softmax(CASE1_SCORES, mask=padding_mask([2, 0], 4))
    np.testing.assert_allclose(
        w[0], [soft(1, 2) + [0, 0], soft(4, 3) + [0, 0]], rtol=1e-12
    )
    np.testing.assert_allclose(
        w[0], [[0.2689, 0.7311, 0, 0], [0.7311, 0.2689, 0, 0]], atol=5e-5
    )
    np.testing.assert_array_equal(w[1], np.zeros((2, 4)))  # not 0.25 each


def test_case1_per_query_valid_lengths():
    w = softmax(CASE1_SCORES, mask=padding_mask([[1, 3], [2, 4]], 4))
    np.testing.assert_allclose(w[0], [[1, 0, 0, 0], soft(4, 3, 2) + [0]], rtol=1e-12)
    np.testing.assert_allclose(
        w[1], [soft(0.5, 1) + [0, 0], soft(2, 1, 0, -1)], rtol=1e-12
    )
    np.testing.assert_allclose(
        w[0], [[1, 0, 0, 0], [0.6652, 0.2447, 0.0900, 0]], atol=5e-5
    )
    np.testing.assert_allclose(
        w[1], [[0.3775, 0.6225, 0, 0], [0.6439, 0.2369, 0.0871, 0.0321]], atol=5e-5
    )


@SETTINGS
@given(
    st.integers(0, 6).flatmap(
        lambda n: st.tuples(
            st.just(n), st.lists(st.integers(0, n), min_size=0, max_size=4)
        )
    ),
    st.sampled_from(["right", "left"]),
)
def test_padding_mask_from_lengths_is_the_definition(n_and_lens, side):
    n, lens = n_and_lens
    m = padding_mask(np.array(lens, dtype=int), n, side=side)
    assert m.shape == (len(lens), 1, n) and m.dtype == bool
    for b, length in enumerate(lens):
        for j in range(n):
            real = j < length if side == "right" else j >= n - length
            assert m[b, 0, j] == real


def test_left_padding_example():
    np.testing.assert_array_equal(
        padding_mask([2, 0, 4], 4, side="left")[:, 0],
        [[F, F, T, T], [F, F, F, F], [T, T, T, T]],
    )


def test_per_query_lengths_give_one_row_per_query():
    m = padding_mask(np.array([[1, 3], [0, 2]]), 3)
    assert m.shape == (2, 2, 3)
    np.testing.assert_array_equal(m, [[[T, F, F], [T, T, T]], [[F, F, F], [T, T, F]]])


def test_query_padding_mask():
    m = query_padding_mask([1, 3], 3)
    assert m.shape == (2, 3, 1)
    np.testing.assert_array_equal(m[..., 0], [[T, F, F], [T, T, T]])
    np.testing.assert_array_equal(
        query_padding_mask([1, 3], 3, side="left")[..., 0], [[F, F, T], [T, T, T]]
    )


def test_query_and_key_masks_combine_with_and():
    both = query_padding_mask([2], 3) & padding_mask([2], 3)
    np.testing.assert_array_equal(both[0], [[T, T, F], [T, T, F], [F, F, F]])


def test_an_empty_batch():
    assert padding_mask([], 3).shape == (0, 1, 3)


@pytest.mark.parametrize("fn", [padding_mask, query_padding_mask])
@pytest.mark.parametrize(
    "lens,error,pattern",
    [
        ([1.0, 2.0], TypeError, "float64"),
        ([True, False], TypeError, "bool"),
        ([-1, 2], ValueError, "between 0 and 3"),
        ([4, 2], ValueError, "between 0 and 3"),
    ],
)
def test_padding_bad_lengths(fn, lens, error, pattern):
    with pytest.raises(error, match=pattern):
        fn(np.array(lens), 3)


def test_padding_bad_side_and_rank():
    with pytest.raises(ValueError, match="side"):
        padding_mask([1], 3, side="middle")
    with pytest.raises(ValueError, match="side"):
        query_padding_mask([1], 3, side="top")
    with pytest.raises(ValueError, match=r"\(1, 1, 1\)"):
        padding_mask(np.ones((1, 1, 1), dtype=int), 3)
    with pytest.raises(ValueError, match=r"\(1, 2\)"):
        query_padding_mask(np.ones((1, 2), dtype=int), 3)
    with pytest.raises(TypeError):
        padding_mask([1], 3.0)
