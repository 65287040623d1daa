"""attnlib.core.scaling: the variance argument for dividing by sqrt(d_k), checked by
simulation."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib.core.scaling import mean_max_weight, random_dot_products, score_variance


def test_dot_products_match_a_loop_over_components():
    # Same seed, same draws: recompute each dot product with a plain Python loop.
    d_k, n = 5, 7
    got = random_dot_products(np.random.default_rng(1), d_k, n)
    rng = np.random.default_rng(1)
    q = rng.standard_normal((n, d_k))
    k = rng.standard_normal((n, d_k))
    for i in range(n):
        assert got[i] == pytest.approx(sum(q[i, j] * k[i, j] for j in range(d_k)))


def test_scaled_is_raw_divided_by_sqrt_dk():
    raw = random_dot_products(np.random.default_rng(2), 16, 50)
    scaled = random_dot_products(np.random.default_rng(2), 16, 50, scaled=True)
    np.testing.assert_allclose(scaled, raw / 4.0)


@pytest.mark.parametrize("d_k", [1, 4, 64, 300])
def test_raw_variance_is_about_dk_and_scaled_about_one(d_k):
    # Sample variance of n scores: relative standard error about sqrt((2 + 6/d_k) / n) <
    # 2%.
    rng = np.random.default_rng(d_k)
    assert score_variance(rng, d_k, 40_000) == pytest.approx(d_k, rel=0.08)
    assert score_variance(rng, d_k, 40_000, scaled=True) == pytest.approx(1.0, rel=0.08)


def test_chunking_gives_the_same_numbers_as_one_draw():
    # d_k large enough that several chunks are drawn: compare with direct draws of each
    # chunk.
    d_k = 1 << 19  # two rows per chunk of 2**20 numbers
    n = 3
    got = random_dot_products(np.random.default_rng(5), d_k, n)
    rng = np.random.default_rng(5)
    q = rng.standard_normal((2, d_k))
    k = rng.standard_normal((2, d_k))
    first = (q * k).sum(axis=1)
    q = rng.standard_normal((1, d_k))
    k = rng.standard_normal((1, d_k))
    np.testing.assert_allclose(got, np.concatenate([first, (q * k).sum(axis=1)]))


def test_unscaled_softmax_gets_more_peaked_as_dk_grows():
    small = mean_max_weight(np.random.default_rng(0), 4, scaled=False, n_samples=500)
    large = mean_max_weight(np.random.default_rng(0), 1024, scaled=False, n_samples=500)
    assert 0.1 <= small < large <= 1.0
    assert (
        large > 0.9
    )  # scores with standard deviation 32: one key takes nearly everything


def test_scaled_softmax_peakedness_does_not_grow_with_dk():
    small = mean_max_weight(np.random.default_rng(0), 4, n_samples=1000)
    large = mean_max_weight(np.random.default_rng(0), 1024, n_samples=1000)
    assert abs(small - large) < 0.05


def test_one_key_takes_all_the_weight():
    assert mean_max_weight(
        np.random.default_rng(0), 8, n_keys=1, n_samples=3
    ) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_bad_sizes_raise(bad):
    with pytest.raises(ValueError, match="d_k"):
        random_dot_products(np.random.default_rng(0), bad, 10)
    with pytest.raises(ValueError, match="n_samples"):
        score_variance(np.random.default_rng(0), 4, bad)
    with pytest.raises(ValueError, match="n_keys"):
        mean_max_weight(np.random.default_rng(0), 4, n_keys=bad)


def test_rng_must_be_a_generator():
    with pytest.raises(TypeError, match="Generator"):
        random_dot_products(0, 4, 10)


@pytest.mark.parametrize("fn", [random_dot_products, score_variance, mean_max_weight])
def test_docstrings_give_shapes_errors_and_source(fn):
    doc = fn.__doc__
    assert "shape" in doc and "Raises" in doc and "Source" in doc and "(2017)" in doc


@settings(max_examples=25, deadline=None)
@given(d_k=st.integers(1, 64), n=st.integers(1, 50), seed=st.integers(0, 2**32 - 1))
def test_scaled_scores_are_raw_scores_over_sqrt_dk(d_k, n, seed):
    raw = random_dot_products(np.random.default_rng(seed), d_k, n)
    scaled = random_dot_products(np.random.default_rng(seed), d_k, n, scaled=True)
    assert raw.shape == (n,)
    np.testing.assert_allclose(scaled * math.sqrt(d_k), raw, rtol=1e-12, atol=1e-12)
