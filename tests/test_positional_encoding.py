"""Position encodings: values by hand (math.sin/cos), the rotation property, offset-only
rotary scores, ALiBi's slopes, and the similarity-by-distance measurement."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlib import attention
from attnlib.layers.positional_encoding import (
    alibi_bias,
    alibi_slopes,
    frequencies,
    rotary_embedding,
    similarity_by_distance,
    sinusoidal_encoding,
    sinusoidal_shift_matrix,
)


def test_sinusoidal_values_by_hand():
    pe = sinusoidal_encoding(7, 6)
    assert pe.shape == (7, 6) and pe.dtype == np.float64
    for p in range(7):
        for i in range(3):
            w = 1.0 / 10_000 ** (2 * i / 6)
            assert pe[p, 2 * i] == pytest.approx(math.sin(p * w), abs=1e-15)
            assert pe[p, 2 * i + 1] == pytest.approx(math.cos(p * w), abs=1e-15)
    np.testing.assert_array_equal(pe[0], [0, 1, 0, 1, 0, 1])


def test_frequencies_span_the_wavelengths():
    w = frequencies(512)
    assert w.shape == (256,) and w[0] == 1.0
    assert w[-1] == pytest.approx(10_000 ** (-510 / 512))
    assert np.all(np.diff(w) < 0)


@pytest.mark.parametrize("k", [1, 3, 17, -5])
def test_rotation_property_pe_p_plus_k_is_r_k_pe_p(k):
    d, L = 16, 60
    pe = sinusoidal_encoding(L, d)
    R = sinusoidal_shift_matrix(k, d)
    for p in range(max(0, -k), min(L, L - k)):  # every p with p + k in range
        np.testing.assert_allclose(R @ pe[p], pe[p + k], atol=1e-12)


def test_shift_matrix_is_orthogonal_and_composes():
    d = 8
    R2, R3, R5 = (sinusoidal_shift_matrix(k, d) for k in (2, 3, 5))
    np.testing.assert_allclose(R2 @ R3, R5, atol=1e-12)
    np.testing.assert_allclose(R3 @ R3.T, np.eye(d), atol=1e-12)
    np.testing.assert_allclose(sinusoidal_shift_matrix(-3, d), R3.T, atol=1e-12)
    # block-diagonal: nothing outside the 2 x 2 blocks
    blocks = np.kron(np.eye(d // 2), np.ones((2, 2)))
    assert np.all(R5[blocks == 0] == 0)


def test_rotary_scores_depend_only_on_the_offset():
    rng = np.random.default_rng(0)
    q, k = rng.normal(size=(2, 8))

    def score(m, n):
        qm = rotary_embedding(q[None], positions=np.array([m]))[0]
        kn = rotary_embedding(k[None], positions=np.array([n]))[0]
        return float(qm @ kn)

    for offset in (0, 1, 4, -3):
        s = [score(m + offset, m) for m in (0, 5, 11, 40)]
        np.testing.assert_allclose(s, s[0], atol=1e-12)
    assert abs(score(1, 0) - score(4, 0)) > 1e-3  # different offsets: different scores


def test_rotary_by_hand_and_norm_preserving():
    x = np.array([[1.0, 0.0, 0.0, 2.0]])
    out = rotary_embedding(x, positions=np.array([3]))
    t0, t1 = 3.0, 3.0 / 100.0  # theta_0 = 1, theta_1 = 10000^(-1/2)
    want = [math.cos(t0), math.sin(t0), -2 * math.sin(t1), 2 * math.cos(t1)]
    np.testing.assert_allclose(out[0], want, atol=1e-14)
    rng = np.random.default_rng(1)
    y = rng.normal(size=(2, 5, 6))
    np.testing.assert_allclose(
        np.linalg.norm(rotary_embedding(y), axis=-1),
        np.linalg.norm(y, axis=-1),
        atol=1e-12,
    )
    np.testing.assert_array_equal(
        rotary_embedding(y)[:, 0], y[:, 0]
    )  # position 0: no turn


def test_rotary_attention_is_shift_invariant():
    """Shifting every position by the same amount leaves rotary attention weights
    unchanged."""
    rng = np.random.default_rng(2)
    q, k, v = rng.normal(size=(3, 6, 8))
    pos = np.arange(6)
    _, w0 = attention(rotary_embedding(q, pos), rotary_embedding(k, pos), v)
    _, w9 = attention(rotary_embedding(q, pos + 9), rotary_embedding(k, pos + 9), v)
    np.testing.assert_allclose(w0, w9, atol=1e-12)


def test_alibi_slopes_and_bias():
    np.testing.assert_allclose(alibi_slopes(8), [2.0 ** -(i + 1) for i in range(8)])
    b = alibi_bias(4, num_heads=2)
    assert b.shape == (2, 4, 4)
    np.testing.assert_allclose(b[0, 3], [-0.0625 * 3, -0.0625 * 2, -0.0625, 0.0])
    assert np.all(np.diag(b[1]) == 0) and np.all(b <= 0)


def test_similarity_by_distance_by_hand():
    E = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    sim = similarity_by_distance(E, 2)
    np.testing.assert_allclose(sim, [1.0, 1 / math.sqrt(2), 0.0], atol=1e-15)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: sinusoidal_encoding(4, 5), ValueError, "even"),
        (lambda: sinusoidal_encoding(-1, 4), ValueError, "non-negative"),
        (lambda: sinusoidal_encoding(4, 2.0), TypeError, "integer"),
        (lambda: sinusoidal_encoding(4, 4, base=1.0), ValueError, "greater than 1"),
        (lambda: sinusoidal_shift_matrix(1.5, 4), TypeError, "offset"),
        (lambda: rotary_embedding(np.ones((3, 5))), ValueError, "even"),
        (
            lambda: rotary_embedding(np.ones((3, 4)), positions=[0, 1]),
            ValueError,
            r"\(3,\)",
        ),
        (
            lambda: rotary_embedding(np.ones((3, 4)), positions=[0.0, 1.0, 2.0]),
            TypeError,
            "integers",
        ),
        (lambda: rotary_embedding(np.ones(4)), ValueError, "shape"),
        (lambda: alibi_slopes(0), ValueError, "at least 1"),
        (lambda: similarity_by_distance(np.ones((3, 2)), 3), ValueError, "below"),
        (lambda: similarity_by_distance(np.zeros((3, 2)), 1), ValueError, "zero row"),
        (lambda: similarity_by_distance(np.ones(3), 1), ValueError, "shape"),
    ],
)
def test_bad_input_raises_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_the_slowest_wavelength_for_d_16_is_the_one_the_chapter_types():
    """Course errata (issue 28): the integers 3162 and 19,870 are typed in the prose
    (the glue check holds decimals only); here they are computed."""
    import nbformat
    from book_files import notebook

    theta_last = frequencies(16)[-1]
    assert math.isclose(1 / theta_last, 10000 ** (14 / 16))
    wavelength = 2 * math.pi / theta_last
    nb = nbformat.read(notebook("order_and_position"), as_version=4)
    text = " ".join(
        " ".join(c.source.split()) for c in nb.cells if c.cell_type == "markdown"
    )
    assert f"\\approx 1/{round(1 / theta_last)}$ radian per position" in text
    assert f"2π · {round(1 / theta_last)}, about {round(wavelength, -1):,.0f}" in text
