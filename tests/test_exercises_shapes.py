"""A wrong shape is named with the shape expected and the shape received, and, where a
transpose or an axis too many or too few explains it, with that explanation.

Each wrong answer is written as a learner would write it (plain numpy, independently of
the checkers' reference functions); the shapes expected are worked out by hand from the
exercises' sizes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import query_key_value_exercises as qkv
import values_exercises as values

from book_support.exercises import check_close, shape_relation


def _head(X, W_Q, W_K, W_V):
    """One head written out: softmax(Q K^T / sqrt(d_k)) V, shape (n, d_v)."""
    Q, K, V = X @ W_Q, X @ W_K, X @ W_V
    S = Q @ K.T / math.sqrt(Q.shape[-1])
    e = np.exp(S - S.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True) @ V


@pytest.mark.parametrize(
    "got, want, words",
    [
        ((2, 3), (3, 2), "the two axes are swapped: a transpose"),
        ((2, 10, 3, 4), (2, 3, 10, 4), "axes 1 and 2 are swapped"),
        ((4, 2, 3), (2, 3, 4), "the axes are permuted"),
        ((1, 3), (3,), "extra axis of size 1 at position 0"),
        ((2, 3, 4), (3, 4), "extra axis at position 0 (of size 2)"),
        ((3,), (3, 1), "lacks an axis of size 1 at position 1"),
        ((3, 4), (2, 3, 4), "lacks axis 0 (of size 2)"),
        ((3, 5), (3, 4), "only axis 1 has the wrong size (5 instead of 4)"),
        ((3,), (2, 3, 4), "it has 1 axes where 3 are expected"),
    ],
)
def test_shape_relation_names_transposes_and_axes_too_many_or_too_few(got, want, words):
    assert words in shape_relation(got, want)


def test_shape_relation_without_sizes_does_not_give_the_expected_sizes():
    said = shape_relation((10, 8), (10, 4), sizes=False)
    assert said == "only axis 1 has the wrong size" and "4" not in said
    assert "(of size" not in shape_relation((3, 4), (2, 3, 4), sizes=False)
    assert shape_relation((3, 4), (3, 4)) is None


def test_a_missing_first_axis_of_size_1_is_added_with_expand_dims_not_a_trailing_none():
    x = np.zeros(3)
    want = (1, 3)
    said = shape_relation(x.shape, want)
    assert "np.expand_dims(x, 0) adds it" in said and "x[..., None]" not in said
    assert np.expand_dims(x, 0).shape == want and x[..., None].shape != want
    # a missing last axis: x[..., None] is right there
    assert "x[..., None] adds it" in shape_relation(x.shape, (3, 1))
    assert x[..., None].shape == (3, 1)


def test_an_extra_axis_of_size_1_is_indexed_away_by_that_axis():
    said = shape_relation((3, 1, 4), (3, 4))
    assert "at position 1" in said and "index that axis with 0" in said


def test_only_the_last_two_axes_swapped_are_blamed_on_a_product():
    # (batch, length, heads, d_k) for (batch, heads, length, d_k): split_heads without
    # its transpose, no product; the last two axes swapped: a product's factors
    for sizes in (True, False):
        said = shape_relation((2, 10, 3, 4), (2, 3, 10, 4), sizes=sizes)
        assert "axes 1 and 2 are swapped" in said and "product" not in said
        said = shape_relation((2, 12, 10), (2, 10, 12), sizes=sizes)
        assert "axes 1 and 2 are swapped" in said and "factors of a product" in said
    said = shape_relation((2, 10, 3, 4), (2, 3, 10, 4), sizes=False)
    assert said == "axes 1 and 2 are swapped: check which of the two comes first"


@pytest.mark.parametrize(
    "got, want, words",
    [
        ((3, 2), (2, 3), "the two axes are swapped: check the order of the factors"),
        ((2, 4, 3), (2, 3, 4), "axes 1 and 2 are swapped: check the order"),
        ((4, 2, 3), (2, 3, 4), "the right sizes in another order: check the order"),
        ((1, 3), (3,), "an extra axis of size 1 at position 0: leave it out"),
        ((2, 3, 4), (3, 4), "an extra axis of size 2 at position 0: keep only"),
        ((3,), (1, 3), "lacks an axis of size 1 at position 0: an axis of size 1"),
    ],
)
def test_a_typed_shape_is_told_what_is_wrong_with_the_shape_not_which_call_to_use(
    got, want, words
):
    said = shape_relation(got, want, sizes=False)
    assert words in said
    for call in ("squeeze", "keepdims", "None]", "expand_dims", ".T", "swapaxes"):
        assert call not in said
    assert "list" not in said and "(" not in said


def test_a_transposed_answer_gets_both_shapes_and_the_word_transpose(capsys):
    want = np.arange(6.0).reshape(2, 3)
    assert not check_close(want.T, want, name="your weights")
    out = capsys.readouterr().out
    assert "your weights has shape (3, 2), but the answer has shape (2, 3)" in out
    assert "swapped: a transpose" in out


def test_a_function_returning_the_transpose_is_told_so(capsys):
    # the learner's head returns its output transposed, (d_v, n) instead of (n, d_v);
    # the checker's first case has n = 3 positions and d_v = 2
    assert not qkv.check_one_head(lambda X, W_Q, W_K, W_V: _head(X, W_Q, W_K, W_V).T)
    out = capsys.readouterr().out
    assert "returned shape (2, 3); the result has shape (3, 2)" in out
    assert "the two axes are swapped" in out
    assert "Expected" not in out


def test_a_function_that_wraps_its_result_in_a_list_is_told_of_the_extra_axis(capsys):
    assert not qkv.check_one_head(lambda X, W_Q, W_K, W_V: [_head(X, W_Q, W_K, W_V)])
    out = capsys.readouterr().out
    assert "returned shape (1, 3, 2); the result has shape (3, 2)" in out
    assert "extra axis of size 1 at position 0" in out


def test_a_function_that_drops_an_axis_is_told_which(capsys):
    # the learner keeps only the first query's output row: (d_v,) instead of (n, d_v)
    assert not qkv.check_one_head(lambda X, W_Q, W_K, W_V: _head(X, W_Q, W_K, W_V)[0])
    out = capsys.readouterr().out
    assert "returned shape (2,); the result has shape (3, 2)" in out
    assert "it lacks axis 0 (of size 3)" in out


def test_a_shape_answer_with_swapped_axes_is_told_so_without_the_answer(capsys):
    # check_shapes of the values chapter; n = 10, d = 16, d_k = 8, d_v = 4: the
    # learner writes K^T's shape for K
    answer = {
        "X": (10, 16),
        "W_Q": (16, 8),
        "W_K": (16, 8),
        "W_V": (16, 4),
        "Q": (10, 8),
        "K": (8, 10),
        "V": (10, 4),
        "scores": (10, 10),
        "weights": (10, 10),
        "Z": (10, 4),
    }
    assert not values.check_shapes(answer, n=10, d=16, d_k=8, d_v=4)
    out = capsys.readouterr().out
    assert "K does not have shape (8, 10) (the two axes are swapped: check" in out
    assert "(check" not in out  # no brackets inside the brackets
    assert "(10, 8)" not in out  # the expected shape is not printed
