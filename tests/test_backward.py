"""Backward passes of softmax and attention agree with central finite differences."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import central_difference  # the suite's own finite differences
from hypothesis import given, settings
from hypothesis import strategies as st

import attnlib
from attnlib.core.backward import (
    attention_backward,
    numerical_gradient,
    relative_error,
    softmax_backward,
)

TOL = 1e-6


def rel(a, b):
    """Relative error of two gradients; absolute when both are (numerically) zero."""
    a, b = np.asarray(a), np.asarray(b)
    scale = max(np.linalg.norm(a), np.linalg.norm(b))
    return np.linalg.norm(a - b) / scale if scale > 1e-8 else np.linalg.norm(a - b)


def test_softmax_backward_equals_explicit_jacobian():
    # dL/ds = J^T g with J = diag(p) - p p^T (J is symmetric), built entry by entry
    p = attnlib.softmax(np.array([2.0, 1.0, 0.0]))
    g = np.array([0.5, -1.0, 2.0])
    J = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            J[i, j] = p[i] * ((i == j) - p[j])
    np.testing.assert_allclose(softmax_backward(p, g), J.T @ g, rtol=1e-12, atol=1e-15)


def test_softmax_backward_by_hand_for_the_bank_weights():
    # p = (0.6652, 0.2447, 0.0900); g = e_0 -> p_0 * (e_0 - p) = 0.6652 * (0.3348,
    # -0.2447, -0.0900)
    p = attnlib.softmax(np.array([2.0, 1.0, 0.0]))
    got = softmax_backward(p, np.array([1.0, 0.0, 0.0]))
    np.testing.assert_allclose(
        got, [0.6652 * 0.3348, -0.6652 * 0.2447, -0.6652 * 0.0900], atol=2e-4
    )
    assert abs(got.sum()) < 1e-15


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_softmax_backward_matches_finite_differences_any_axis_with_mask(axis):
    rng = np.random.default_rng(1)
    s = rng.normal(size=(3, 4, 5))
    g = rng.normal(size=s.shape)
    mask = rng.random(s.shape) < 0.7
    analytic = softmax_backward(
        attnlib.softmax(s, axis=axis, mask=mask), g, axis=axis, mask=mask
    )
    numeric = central_difference(
        lambda x: np.sum(attnlib.softmax(x, axis=axis, mask=mask) * g), s
    )
    assert rel(analytic, numeric) < TOL
    assert np.all(analytic[~mask] == 0.0)
    assert np.all(np.abs(numeric[~mask]) < 1e-9)


def test_softmax_backward_masked_entries_zero_even_if_upstream_is_nan():
    p = attnlib.softmax(np.array([1.0, 2.0, 3.0]), mask=np.array([True, True, False]))
    g = np.array([1.0, 0.0, np.nan])
    out = softmax_backward(p, g, mask=np.array([True, True, False]))
    assert np.isfinite(out).all() and out[2] == 0.0


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 4), st.integers(1, 5))
def test_softmax_backward_rows_sum_to_zero(seed, rows, cols):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(rows, cols)) * 3
    out = softmax_backward(attnlib.softmax(s), rng.normal(size=s.shape))
    np.testing.assert_allclose(out.sum(axis=-1), 0.0, atol=1e-12)


def test_softmax_backward_rejects_mismatched_shapes():
    with pytest.raises(ValueError, match=r"\(3,\).*\(4,\)"):
        softmax_backward(np.ones(3) / 3, np.ones(4))
    with pytest.raises(TypeError, match="float64"):
        softmax_backward(np.ones(3) / 3, np.ones(3), mask=np.ones(3))


def _check_attention(q, k, v, g, mask=None, scale=None):
    dq, dk, dv = attention_backward(q, k, v, g, mask=mask, scale=scale)
    loss = {
        "q": lambda x: np.sum(
            attnlib.attention(x, k, v, mask=mask, scale=scale)[0] * g
        ),
        "k": lambda x: np.sum(
            attnlib.attention(q, x, v, mask=mask, scale=scale)[0] * g
        ),
        "v": lambda x: np.sum(
            attnlib.attention(q, k, x, mask=mask, scale=scale)[0] * g
        ),
    }
    for name, analytic, x in (("q", dq, q), ("k", dk, k), ("v", dv, v)):
        numeric = central_difference(loss[name], x)
        assert analytic.shape == np.shape(x)
        assert rel(analytic, numeric) < TOL, name
    return dq, dk, dv


def test_attention_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    q, k, v = (
        rng.normal(size=(2, 3, 4)),
        rng.normal(size=(2, 5, 4)),
        rng.normal(size=(2, 5, 3)),
    )
    _check_attention(q, k, v, rng.normal(size=(2, 3, 3)))
    _check_attention(q, k, v, rng.normal(size=(2, 3, 3)), scale=1.0)


def test_attention_backward_with_padding_and_causal_masks():
    rng = np.random.default_rng(3)
    q, k, v = (
        rng.normal(size=(2, 4, 3)),
        rng.normal(size=(2, 4, 3)),
        rng.normal(size=(2, 4, 2)),
    )
    g = rng.normal(size=(2, 4, 2))
    pad = attnlib.padding_mask(np.array([4, 2]), 4)
    dq, dk, dv = _check_attention(q, k, v, g, mask=pad)
    assert np.all(dk[1, 2:] == 0.0) and np.all(dv[1, 2:] == 0.0)
    _check_attention(q, k, v, g, mask=attnlib.causal_mask(4))


def test_attention_backward_fully_masked_query_gets_zero_gradient():
    rng = np.random.default_rng(4)
    q, k, v = rng.normal(size=(3, 2)), rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    mask = np.array([[True, True, False], [False, False, False], [True, False, True]])
    dq, dk, dv = _check_attention(q, k, v, rng.normal(size=(3, 2)), mask=mask)
    assert np.all(dq[1] == 0.0)


def test_attention_backward_masked_nan_keys_stay_out():
    q = np.array([[1.0, 0.0]])
    k = np.array([[1.0, 1.0], [np.nan, np.inf]])
    v = np.array([[2.0, 0.0], [np.nan, 1.0]])
    dq, dk, dv = attention_backward(
        q, k, v, np.ones((1, 2)), mask=np.array([[True, False]])
    )
    assert np.isfinite(dq).all() and np.all(dk[1] == 0) and np.all(dv[1] == 0)
    # one allowed key: weight 1 whatever the score, so dq = dk = 0 and dv[0] = upstream
    np.testing.assert_array_equal(dq, 0.0)
    np.testing.assert_array_equal(dv[0], [1.0, 1.0])


def test_attention_backward_sums_broadcast_batch_axes():
    rng = np.random.default_rng(5)
    q = rng.normal(size=(3, 4))  # shared by both batch elements
    k, v = rng.normal(size=(2, 5, 4)), rng.normal(size=(2, 5, 2))
    _check_attention(q, k, v, rng.normal(size=(2, 3, 2)))


def test_attention_backward_rejects_bad_grad_output():
    q = np.ones((2, 3))
    with pytest.raises(ValueError, match=r"\(2, 5\).*\(2, 3\)"):
        attention_backward(q, q, q, np.ones((2, 5)))


def test_numerical_gradient_and_relative_error_helpers():
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(
        numerical_gradient(lambda t: np.sum(t**3), x), 3 * x**2, rtol=1e-8
    )
    assert relative_error([3.0, 4.0], [3.0, 4.0]) == 0.0
    assert relative_error([0.0, 0.0], [0.0, 0.0]) == 0.0
    assert relative_error([3.0, 4.0], [3.0, 4.5]) == pytest.approx(
        0.5 / np.hypot(3.0, 4.5)
    )
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        relative_error([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="one finite number"):
        numerical_gradient(lambda t: t, x)


@settings(max_examples=15, deadline=None, derandomize=True)
@given(st.integers(0, 10_000), st.integers(1, 3), st.integers(1, 4), st.integers(1, 3))
def test_attention_backward_random_shapes_and_masks(seed, n_q, n_k, d):
    rng = np.random.default_rng(seed)
    q, k, v = (
        rng.normal(size=(n_q, d)),
        rng.normal(size=(n_k, d)),
        rng.normal(size=(n_k, 2)),
    )
    mask = rng.random((n_q, n_k)) < 0.6  # may hide whole rows or columns
    dq, dk, dv = _check_attention(q, k, v, rng.normal(size=(n_q, 2)), mask=mask)
    assert np.all(dq[~mask.any(axis=1)] == 0.0)
    assert np.all(dk[~mask.any(axis=0)] == 0.0) and np.all(dv[~mask.any(axis=0)] == 0.0)
