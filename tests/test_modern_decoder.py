"""Tests of the modern decoder block (issue 39): RMSNorm, SiLU and SwiGLU with their
backward passes, rotary embeddings inside attention and the language model, the KV
cache with rotary positions (also past the training context), and AdamW.

Gradients are checked against central finite differences (conftest's own loop) in
float64, relative error below 1e-6; cached generation against recomputation to 1e-12.
"""

import numpy as np
import pytest
from conftest import central_difference

import attnlib
from attnlib.core.attention import attention
from attnlib.core.backward import relative_error
from attnlib.core.grouped_query import grouped_query_attention
from attnlib.core.heads import init_multi_head, merge_heads, split_heads
from attnlib.layers import layer_backward as lb
from attnlib.layers.positional_encoding import rotary_embedding
from attnlib.models import generation as gen
from attnlib.models import language_model as lm
from attnlib.models.adam import Adam, AdamW, decays
from attnlib.models.kv_cache import KVCache

RNG = np.random.default_rng(0)


def test_rms_norm_is_the_formula_and_ignores_the_scale_of_a_row():
    x = RNG.normal(size=(2, 3, 8))
    gain = RNG.normal(size=8)
    expected = x / np.sqrt((x**2).mean(-1, keepdims=True) + 1e-5) * gain
    np.testing.assert_allclose(attnlib.rms_norm(x, gain), expected, rtol=1e-13)
    np.testing.assert_allclose(
        attnlib.rms_norm(1e3 * x, eps=1e-30), attnlib.rms_norm(x, eps=1e-30)
    )
    assert attnlib.rms_norm(x.astype(np.float32)).dtype == np.float32


def test_the_backward_passes_match_finite_differences():
    x, dy = RNG.normal(size=(2, 3, 5)), RNG.normal(size=(2, 3, 5))
    gain = RNG.normal(size=5)
    dx, dgain = lb.rms_norm_backward(dy, *lb.rms_norm_stats(x), gain)
    assert (
        relative_error(
            dx, central_difference(lambda a: (attnlib.rms_norm(a, gain) * dy).sum(), x)
        )
        < 1e-6
    )
    assert (
        relative_error(
            dgain,
            central_difference(lambda g: (attnlib.rms_norm(x, g) * dy).sum(), gain),
        )
        < 1e-6
    )
    z = RNG.normal(size=(4, 3)) * 4
    assert (
        relative_error(
            lb.silu_backward(z, np.ones_like(z)),
            central_difference(lambda a: attnlib.silu(a).sum(), z),
        )
        < 1e-6
    )
    W_1, W_3, W_2 = (RNG.normal(size=s) for s in [(5, 7), (5, 7), (7, 4)])
    dy = RNG.normal(size=(2, 3, 4))
    grads = lb.swiglu_backward(dy, x, W_1, W_3, W_2)
    args = [x, W_1, W_3, W_2]
    for i, g in enumerate(grads):

        def f(a, i=i):
            return (attnlib.swiglu(*args[:i], a, *args[i + 1 :]) * dy).sum()

        assert relative_error(g, central_difference(f, args[i])) < 1e-6, i


def test_rotary_multi_head_is_rope_on_each_head_and_sees_only_offsets():
    params = init_multi_head(1, 8, 2)
    x = RNG.normal(size=(2, 5, 8))
    out, w = attnlib.multi_head_attention(x, x, x, params, rotary=True)
    q, k, v = (split_heads(x @ W, 2) for W in (params.W_Q, params.W_K, params.W_V))
    heads, w2 = attention(rotary_embedding(q), rotary_embedding(k), v)
    np.testing.assert_allclose(out, merge_heads(heads) @ params.W_O, atol=1e-13)
    np.testing.assert_allclose(w, w2, atol=1e-14)
    shifted = np.arange(5) + 37  # every query and key moved by 37: same scores
    out2, _ = attnlib.multi_head_attention(
        x, x, x, params, rotary=True, query_positions=shifted, key_positions=shifted
    )
    np.testing.assert_allclose(out2, out, atol=1e-12)
    with pytest.raises(TypeError, match="query_positions"):
        attnlib.multi_head_attention(
            x, x, x, params, rotary=True, query_positions=[0.5]
        )
    with pytest.raises(ValueError, match="key_positions"):
        attnlib.multi_head_attention(x, x, x, params, rotary=True, key_positions=[0, 1])


def test_rotary_grouped_query_shares_rotated_keys():
    q, k, v = (
        RNG.normal(size=(4, 6, 4)),
        RNG.normal(size=(2, 6, 4)),
        RNG.normal(size=(2, 6, 4)),
    )
    mask = np.tril(np.ones((6, 6), bool))
    out, _ = grouped_query_attention(q, k, v, mask, rotary=True)
    rk = np.repeat(rotary_embedding(k), 2, axis=0)  # query head h uses kv head h // 2
    expected, _ = attention(rotary_embedding(q), rk, np.repeat(v, 2, axis=0), mask)
    np.testing.assert_allclose(out, expected, atol=1e-13)


_SMALL = dict(vocab_size=7, context=6, d_model=8, num_layers=2, num_heads=2, d_ff=12)
LLAMA = dict(position="rope", norm="rms", activation="swiglu", bias=False)
CONFIGS = {
    "LLaMA-style, grouped-query": lm.LMConfig(
        **{**_SMALL, "num_heads": 4}, num_kv_heads=2, **LLAMA
    ),
    "rope, layer norm, GELU, window 3": lm.LMConfig(
        **_SMALL, position="rope", activation="gelu", window=3
    ),
    "swiglu with biases, rms, untied": lm.LMConfig(
        **_SMALL, activation="swiglu", norm="rms", tied=False
    ),
    "rope, no biases, dropout 0.2": lm.LMConfig(
        **_SMALL, position="rope", bias=False, dropout=0.2
    ),
}


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_gradient_of_the_new_options_matches_finite_differences(name):
    config = CONFIGS[name]
    rng = np.random.default_rng(1)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    params = {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in params.items()}
    idx, targets = rng.integers(0, 7, size=(2, 2, 5))
    training = config.dropout > 0

    def f(p):
        return lm.loss(
            p, config, idx, targets, training=training, rng=np.random.default_rng(5)
        )

    _, grads = lm.loss_and_gradients(
        params, config, idx, targets, training=training, rng=np.random.default_rng(5)
    )
    assert set(grads) == set(params)
    for key, value in params.items():
        numeric = central_difference(
            lambda a, key=key: f(dict(params, **{key: a})), value
        )
        assert relative_error(grads[key], numeric) < 1e-6, key


def test_the_options_choose_the_parameters():
    llama = lm.init_language_model(CONFIGS["LLaMA-style, grouped-query"], 0)
    assert "pos_emb" not in llama and "blocks.0.W_3" in llama
    assert not any("bias" in k or k.endswith(("b_1", "b_2", "b_3")) for k in llama)
    gpt = lm.init_language_model(lm.LMConfig(**_SMALL), 0)
    assert "pos_emb" in gpt and "blocks.0.W_3" not in gpt and "lnf_bias" in gpt
    for field, value in [
        ("position", "alibi"),
        ("norm", "batch"),
        ("activation", "tanh"),
    ]:
        with pytest.raises(ValueError, match=field):
            lm.LMConfig(**_SMALL, **{field: value})
    with pytest.raises(ValueError, match="even d_head"):
        lm.LMConfig(**{**_SMALL, "d_model": 6}, position="rope")


def _model(**options):
    config = lm.LMConfig(vocab_size=11, context=24, d_model=16, num_layers=2, **options)
    rng = np.random.default_rng(2)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    return config, {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in params.items()}


@pytest.mark.parametrize(
    "options",
    [
        dict(num_heads=4, **LLAMA),
        dict(num_heads=4, num_kv_heads=2, window=5, **LLAMA),
        dict(num_heads=4, num_kv_heads=1, position="rope", activation="gelu"),
    ],
    ids=["llama", "llama window 5", "rope multi-query"],
)
def test_rotary_cache_gives_the_logits_of_recomputing(options):
    config, params = _model(**options)
    prompt = np.array([[1, 2, 3, 4], [5, 6, 7, 8]])
    kw = dict(rng=np.random.default_rng(0), temperature=1.0)
    cached, cached_logits = gen.generate(params, config, prompt, 16, **kw)
    kw["rng"] = np.random.default_rng(0)
    fresh, fresh_logits = gen.generate(
        params, config, prompt, 16, use_cache=False, **kw
    )
    np.testing.assert_array_equal(cached, fresh)
    assert np.abs(cached_logits - fresh_logits).max() < 1e-12


def test_rotary_window_generates_past_the_context_with_a_fixed_cache():
    config = lm.LMConfig(
        vocab_size=11,
        context=8,
        d_model=16,
        num_layers=2,
        num_heads=4,
        window=3,
        **LLAMA,
    )  # reach of two windows: 2 * (3 - 1) = 4 < 8 positions
    rng = np.random.default_rng(3)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    params = {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in params.items()}
    prompt, n_new = np.array([[1, 2, 3], [4, 5, 6]]), 40  # 43 tokens, context 8
    cache = KVCache(config, 2, config.context, np.float64)
    tokens, new = prompt, prompt
    for _ in range(n_new):
        logits, _ = lm.forward(
            params, config, new, caches=cache.layers, start=cache.length
        )
        new = logits[:, -1].argmax(-1)[:, None]
        tokens = np.concatenate([tokens, new], axis=1)
        t = tokens.shape[1] - 2  # the position just read
        s = max(
            0, t + 1 - config.context
        )  # recompute the last 8 tokens at their places
        again, _ = lm.forward(params, config, tokens[:, s : t + 1], start=s)
        assert np.abs(again[:, -1] - logits[:, -1]).max() < 1e-12, t
    assert cache.length == 42 and cache.layers[0].keys.shape[2] == 3  # 3 slots only
    greedy, _ = gen.generate(params, config, prompt, n_new, temperature=0.0)
    windowed, _ = gen.generate(
        params, config, prompt, n_new, temperature=0.0, use_cache=False
    )
    np.testing.assert_array_equal(greedy, tokens)
    np.testing.assert_array_equal(windowed, tokens)
    for refused in (dict(window=None), dict(position="learned")):  # no fixed cache
        c = lm.LMConfig(**{**config.as_dict(), **refused})
        p = lm.init_language_model(c, 0)
        with pytest.raises(ValueError, match="context"):
            gen.generate(p, c, prompt, 6, temperature=0.0)


def test_adamw_decays_only_matrices_and_decouples_the_decay():
    config = CONFIGS["swiglu with biases, rms, untied"]
    params = lm.init_language_model(config, 0, dtype=np.float64)
    decaying = {k for k, v in params.items() if decays(k, v)}
    assert (
        decaying
        == {
            k
            for k, v in params.items()
            if v.ndim == 2 and k not in ("tok_emb", "pos_emb")
        }
        and "lm_head" in decaying
        and "blocks.0.W_3" in decaying
    )
    zero = {k: np.zeros_like(v) for k, v in params.items()}
    after = {k: v.copy() for k, v in params.items()}
    AdamW(lr=0.1, weight_decay=0.5).step(after, zero)  # no gradient: decay alone
    for k in params:
        factor = 0.95 if k in decaying else 1.0
        np.testing.assert_array_equal(after[k], params[k] * factor)
    grads = {k: RNG.normal(size=v.shape) for k, v in params.items()}
    a, b = ({k: v.copy() for k, v in params.items()} for _ in range(2))
    AdamW(lr=0.1, weight_decay=0.0).step(a, grads)
    Adam(lr=0.1).step(b, grads)
    assert all(np.array_equal(a[k], b[k]) for k in params)  # wd 0 is Adam
    with pytest.raises(ValueError, match="weight_decay"):
        AdamW(weight_decay=-1.0)


def test_training_with_weight_decay_takes_adamw_steps():
    from attnlib.data.book_text import split_pieces
    from attnlib.models.lm_training import TrainConfig, learning_rate, train

    config = lm.LMConfig(**_SMALL, **LLAMA)
    ids = np.random.default_rng(4).integers(0, 7, size=400)
    split = split_pieces(ids, piece=40, every=5)
    plain = TrainConfig(max_steps=1, batch=2, warmup=1, eval_every=1, eval_windows=2)
    decayed = TrainConfig(**{**plain.as_dict(), "weight_decay": 0.5})
    start = lm.init_language_model(config, 0)
    adam, _ = train(config, split, plain, params=start)
    adamw, _ = train(config, split, decayed, params=start)
    shrink = learning_rate(0, plain) * 0.5  # the first step's lr times the decay
    for name, value in start.items():
        # the first step sees the same gradient; AdamW also takes lr * 0.5 * theta
        # off each matrix, nothing off gains and the embedding table
        want = adam[name] - shrink * value if decays(name, value) else adam[name]
        np.testing.assert_allclose(adamw[name], want, rtol=1e-5, atol=1e-7)
    assert sum(decays(k, v) for k, v in start.items()) > 0
    with pytest.raises(ValueError, match="weight_decay"):
        TrainConfig(weight_decay=-0.1)
