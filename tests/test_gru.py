"""The GRU cell of Cho et al. (2014): its equations, its backward pass against central
differences, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import central_difference  # the suite's own finite differences

from attnlib.models.gru import gru_backward, gru_encode, init_gru


def _params(rng, m=3, h=4):
    return (
        rng.normal(size=(m, 3 * h)),
        0.5 * rng.normal(size=(h, 3 * h)),
        rng.normal(size=3 * h),
    )


def test_one_step_is_cho_et_al_s_four_equations_written_out():
    rng = np.random.default_rng(0)
    W_x, W_h, b = _params(rng)
    x, h0 = rng.normal(size=3), rng.normal(size=4)
    sig = lambda a: 1.0 / (1.0 + np.exp(-a))  # noqa: E731
    Wxz, Wxr, Wxn = np.split(W_x, 3, axis=1)
    Whz, Whr, Whn = np.split(W_h, 3, axis=1)
    bz, br, bn = np.split(b, 3)
    z = sig(x @ Wxz + h0 @ Whz + bz)
    r = sig(x @ Wxr + h0 @ Whr + br)
    n = np.tanh(x @ Wxn + (r * h0) @ Whn + bn)
    expected = z * h0 + (1 - z) * n
    states, final = gru_encode(x[None], W_x, W_h, b, h0=h0)
    np.testing.assert_allclose(states[0], expected, rtol=1e-12)
    np.testing.assert_array_equal(final, states[-1])


def test_a_closed_update_gate_copies_the_state_unchanged():
    # b_z = +40 makes z = 1 to float64 precision: h_t = h_{t-1} whatever the input
    rng = np.random.default_rng(1)
    W_x, W_h, b = _params(rng)
    b[:4] = 40.0
    h0 = rng.normal(size=(2, 4))
    states, _ = gru_encode(rng.normal(size=(2, 30, 3)), 0 * W_x, 0 * W_h, b, h0=h0)
    np.testing.assert_allclose(states[:, -1], h0, rtol=1e-12)


def test_gru_backward_matches_finite_differences():
    rng = np.random.default_rng(2)
    W_x, W_h, b = _params(rng)
    x, h0 = rng.normal(size=(2, 5, 3)), rng.normal(size=(2, 4))
    G = rng.normal(size=(2, 5, 4))  # L = sum(G * states): a generic upstream

    def L(x=x, h0=h0, W_x=W_x, W_h=W_h, b=b):
        return float(np.sum(G * gru_encode(x, W_x, W_h, b, h0=h0)[0]))

    H = gru_encode(x, W_x, W_h, b, h0=h0)[0]
    got = gru_backward(x, H, h0, W_x, W_h, b, G)
    numeric = {
        "inputs": central_difference(lambda v: L(x=v), x),
        "h0": central_difference(lambda v: L(h0=v), h0),
        "W_x": central_difference(lambda v: L(W_x=v), W_x),
        "W_h": central_difference(lambda v: L(W_h=v), W_h),
        "b": central_difference(lambda v: L(b=v), b),
    }
    for name, n in numeric.items():
        err = np.linalg.norm(got[name] - n) / np.linalg.norm(n)
        assert err < 1e-7, name


def test_init_gru_has_three_orthogonal_recurrent_blocks():
    W_x, W_h, b = init_gru(0, 5, 4)
    assert W_x.shape == (5, 12) and W_h.shape == (4, 12) and b.shape == (12,)
    for block in np.split(W_h, 3, axis=1):
        np.testing.assert_allclose(block.T @ block, np.eye(4), atol=1e-12)
    np.testing.assert_array_equal(b, 0.0)


@pytest.mark.parametrize(
    "change,name",
    [
        (dict(W_h=np.zeros((4, 4))), "W_h"),
        (dict(W_x=np.zeros((2, 12))), "W_x"),
        (dict(b=np.zeros(4)), "b"),
        (dict(h0=np.zeros(3)), "h0"),
        (dict(inputs=np.zeros((0, 3))), "inputs"),
        (dict(inputs=np.full((2, 3), np.nan)), "inputs"),
    ],
)
def test_gru_encode_names_the_bad_argument(change, name):
    rng = np.random.default_rng(3)
    W_x, W_h, b = _params(rng)
    args = dict(inputs=np.ones((2, 3)), W_x=W_x, W_h=W_h, b=b, h0=None) | change
    with pytest.raises(ValueError, match=rf"^{name} (must|holds)"):
        gru_encode(**args)


def test_gru_backward_names_bad_shapes_and_refuses_nan():
    W_x, W_h, b = init_gru(0, 3, 4)
    x, H = np.zeros((2, 5, 3)), np.zeros((2, 5, 4))
    with pytest.raises(ValueError, match="must agree"):
        gru_backward(x, H[:, :4], np.zeros((2, 4)), W_x, W_h, b, H)
    with pytest.raises(ValueError, match=r"b \(4,\) do not fit"):
        gru_backward(x, H, np.zeros((2, 4)), W_x, W_h, b[:4], H)
    bad = H.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="grad_states"):
        gru_backward(x, H, np.zeros((2, 4)), W_x, W_h, b, bad)


def test_an_overflowing_preactivation_is_an_overflow_error():
    W_x, W_h, b = init_gru(0, 3, 4)
    with pytest.raises(OverflowError, match="pre-activation"):
        gru_encode(np.full((2, 3), 1e308), W_x * 1e10, W_h, b)
