"""The bounded cache of a rotary sliding-window model (issue 39): generating far past
the training context, every layer's cache holds ``w`` positions at every step, and the
cached logits equal a recomputation of the tokens the model can still see (float64,
1e-12); a learned position table refuses to go past its rows; the constant learning
rate after the warm-up of ``TrainConfig(schedule="constant")``.
"""

import numpy as np
import pytest

from attnlib.models import generation as gen
from attnlib.models import language_model as lm
from attnlib.models.kv_cache import KVCache
from attnlib.models.lm_training import TrainConfig, learning_rate

W, CONTEXT, LAYERS = 3, 8, 2
CONFIG = lm.LMConfig(
    vocab_size=11,
    context=CONTEXT,
    d_model=16,
    num_layers=LAYERS,
    num_heads=4,
    num_kv_heads=2,
    window=W,
    position="rope",
    norm="rms",
    activation="swiglu",
    bias=False,
)
REACH = LAYERS * (W - 1) + 1  # tokens a last position depends on, itself included


def _params(config):
    rng = np.random.default_rng(4)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    return {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in params.items()}


def test_the_window_cache_never_holds_more_than_w_positions_and_matches_recomputing():
    params = _params(CONFIG)
    n_steps = 5 * CONTEXT  # five training contexts past a prompt of two tokens
    cache = KVCache(CONFIG, 1, CONTEXT, np.float64)
    nbytes = cache.nbytes
    tokens = np.array([[3, 7]])
    new = tokens
    for _ in range(n_steps):
        logits, _ = lm.forward(params, CONFIG, new, caches=cache.layers)
        for layer in cache.layers:
            assert layer.keys.shape[2] == W and layer.values.shape[2] == W
        assert cache.nbytes == nbytes  # nothing allocated as the text grows
        t = tokens.shape[1] - 1  # the position just read
        s = max(0, t + 1 - REACH)  # the tokens the model can still see
        again, _ = lm.forward(params, CONFIG, tokens[:, s:], start=s)
        assert np.abs(again[0, -1] - logits[0, -1]).max() < 1e-12, t
        new = logits[:, -1].argmax(-1)[:, None]
        tokens = np.concatenate([tokens, new], axis=1)
    assert cache.length == n_steps + 1 > 4 * CONTEXT


def test_recomputing_only_the_last_w_tokens_misses_what_earlier_layers_read():
    # the second layer's keys at the oldest window position were computed from tokens
    # up to w - 1 further back: a recomputation of the last w tokens alone lacks them
    params = _params(CONFIG)
    tokens = np.array([[1, 2, 3, 4, 5, 6, 7]])
    full, _ = lm.forward(params, CONFIG, tokens)
    short, _ = lm.forward(params, CONFIG, tokens[:, -W:], start=tokens.shape[1] - W)
    reach, _ = lm.forward(
        params, CONFIG, tokens[:, -REACH:], start=tokens.shape[1] - REACH
    )
    assert np.abs(reach[0, -1] - full[0, -1]).max() < 1e-12
    assert np.abs(short[0, -1] - full[0, -1]).max() > 1e-3


def test_a_learned_position_table_refuses_to_generate_past_its_rows():
    config = lm.LMConfig(**{**CONFIG.as_dict(), "position": "learned"})
    params = lm.init_language_model(config, 0)
    with pytest.raises(ValueError, match="context of 8"):
        gen.generate(params, config, [1, 2], CONTEXT, temperature=0.0)


def test_a_constant_schedule_keeps_the_peak_rate_after_the_warm_up():
    cfg = TrainConfig(max_steps=10, warmup=2, lr=1.0, schedule="constant")
    rates = [learning_rate(s, cfg) for s in range(30)]  # also past max_steps
    assert rates[:2] == [0.5, 1.0] and all(r == 1.0 for r in rates[2:])
    cosine = TrainConfig(max_steps=10, warmup=2, lr=1.0)
    assert learning_rate(9, cosine) < 0.2  # the default still decays
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(schedule="linear")


def test_the_stored_window_model_reads_past_its_context_as_recomputing_does():
    import json
    import sys
    from pathlib import Path

    chapter = (
        Path(__file__).parents[1] / "chapters/attention_that_writes/modern_decoder"
    )
    sys.path.insert(0, str(chapter))
    import modern_decoder_runs as runs

    stored = json.loads(runs.RESULTS.read_text())["window run"]
    config = lm.LMConfig(**stored["config"])
    assert config == runs.WINDOW_MODEL and config.position == "rope"
    with np.load(runs.WINDOW_WEIGHTS) as arrays:
        params = {k: arrays[k].astype(np.float64) for k in arrays.files}
    assert sum(a.size for a in params.values()) == stored["parameters"]
    reach = config.num_layers * (config.window - 1) + 1
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, config.vocab_size, (1, 3 * config.context))  # 3 contexts
    cache = KVCache(config, 1, config.context, np.float64)
    for t in range(tokens.shape[1]):
        logits, _ = lm.forward(
            params, config, tokens[:, t : t + 1], caches=cache.layers
        )
        assert all(layer.keys.shape[2] == config.window for layer in cache.layers)
        s = max(0, t + 1 - reach)
        again, _ = lm.forward(params, config, tokens[:, s : t + 1], start=s)
        assert np.abs(again[0, -1] - logits[0, -1]).max() < 1e-12, t
