"""Tests of generation and the KV cache.

A cache is correct when generating with it gives exactly what recomputing the whole
prefix gives: the same tokens and the same logits (here to 1e-12 in float64), for
multi-head, grouped-query and multi-query models and for a sliding window longer and
shorter than the text. Its memory is the formula 2 * N * H_kv * d_k * bytes, measured
on the arrays themselves.
"""

import numpy as np
import pytest

from attnlib.models import generation as gen
from attnlib.models import language_model as lm
from attnlib.models.kv_cache import KVCache, kv_bytes_per_token


def _model(**sizes):
    config = lm.LMConfig(vocab_size=11, context=24, d_model=16, num_layers=2, **sizes)
    rng = np.random.default_rng(2)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    params = {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in params.items()}
    return config, params


VARIANTS = {
    "multi-head": dict(num_heads=4),
    "grouped-query": dict(num_heads=4, num_kv_heads=2),
    "multi-query": dict(num_heads=4, num_kv_heads=1),
    "window 5": dict(num_heads=4, num_kv_heads=2, window=5),
    "window 1": dict(num_heads=2, window=1),
}


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("temperature, top_k", [(0.0, None), (1.0, None), (0.8, 3)])
def test_cache_gives_the_tokens_and_logits_of_recomputing(name, temperature, top_k):
    config, params = _model(**VARIANTS[name])
    prompt = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    kwargs = dict(temperature=temperature, top_k=top_k)
    cached, cached_logits = gen.generate(
        params, config, prompt, 16, rng=np.random.default_rng(0), **kwargs
    )
    fresh, fresh_logits = gen.generate(
        params,
        config,
        prompt,
        16,
        rng=np.random.default_rng(0),
        use_cache=False,
        **kwargs,
    )
    np.testing.assert_array_equal(cached, fresh)
    assert np.abs(cached_logits - fresh_logits).max() < 1e-12
    assert cached.shape == (2, 20) and cached_logits.shape == (2, 16, 11)


def test_one_token_prompt_and_a_full_context():
    config, params = _model(num_heads=2)
    tokens, logits = gen.generate(params, config, np.array([3]), 23, temperature=0.0)
    assert tokens.shape == (24,) and logits.shape == (23, 11)
    full, _ = lm.forward(params, config, tokens[None, :-1])
    np.testing.assert_allclose(logits, full[0], atol=1e-12)  # every step's scores
    np.testing.assert_array_equal(tokens[1:], full[0].argmax(axis=-1))  # greedy
    with pytest.raises(ValueError, match="context"):
        gen.generate(params, config, np.array([3]), 24, temperature=0.0)


@pytest.mark.parametrize("name", list(VARIANTS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cache_memory_is_the_formula(name, dtype):
    config, _ = _model(**VARIANTS[name])
    cache = KVCache(config, batch=3, capacity=config.context, dtype=dtype)
    per_token = kv_bytes_per_token(
        config.num_layers, config.num_kv_heads, config.d_head, np.dtype(dtype).itemsize
    )
    assert cache.bytes_per_slot() == per_token
    slots = config.context if config.window is None else config.window
    assert cache.nbytes == per_token * 3 * slots  # a window caps the cache
    expected = 2 * config.num_layers * config.num_kv_heads * config.d_head
    assert per_token == expected * np.dtype(dtype).itemsize


def test_cache_refuses_to_overflow():
    config, _ = _model(num_heads=2)
    cache = KVCache(config, batch=1, capacity=3, dtype=np.float64)
    k = np.zeros((1, 2, 2, 8))
    cache.layers[0].update(k, k)
    with pytest.raises(ValueError, match="holds 3 positions"):
        cache.layers[0].update(k, k)
