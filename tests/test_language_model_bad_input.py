"""The language model refuses bad input and state that disagrees, naming the argument:
sizes of zero, a position that disagrees with the caches, parameters that disagree with
the config, non-integer ids and counts, validation before any early return, and a
refusal that names its true cause (the kinds are swept over every public function by
``tests/test_contract_generated.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.models import generation as gen
from attnlib.models import language_model as lm
from attnlib.models.kv_cache import KVCache
from attnlib.models.lm_training import TrainConfig, clip_global_norm

SIZES = dict(vocab_size=6, context=5, d_model=4, num_layers=1, num_heads=2)


@pytest.mark.parametrize("name", ["num_heads", "num_kv_heads"])
def test_zero_heads_name_the_argument(name):
    with pytest.raises(ValueError, match=name):
        lm.LMConfig(**(SIZES | {name: 0}))


@pytest.mark.parametrize(
    "name, value, error",
    [
        ("d_model", 4.0, TypeError),
        ("context", True, TypeError),
        ("vocab_size", -1, ValueError),
        ("d_ff", -1, ValueError),
        ("window", 0, ValueError),
        ("dropout", 1.0, ValueError),
        ("activation", "tanh", ValueError),
        ("tied", 0, TypeError),
    ],
)
def test_config_sizes_are_checked_before_any_division(name, value, error):
    with pytest.raises(error, match=name):
        lm.LMConfig(**(SIZES | {name: value}))


def test_config_keeps_numpy_integers_as_ints():
    config = lm.LMConfig(**(SIZES | {"d_model": np.int64(4)}))
    assert type(config.d_model) is int and config.d_head == 2


def test_cached_forward_takes_its_position_from_the_cache():
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    ids = np.array([[1, 2, 3, 4, 5]])
    full, _ = lm.forward(params, config, ids)
    cache = KVCache(config, 1, config.context, np.float64)
    lm.forward(params, config, ids[:, :4], caches=cache.layers, start=0)
    last, _ = lm.forward(params, config, ids[:, 4:], caches=cache.layers)
    np.testing.assert_allclose(last[0, 0], full[0, 4], rtol=1e-10, atol=1e-12)


def test_a_start_that_disagrees_with_the_cache_is_refused():
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    cache = KVCache(config, 1, config.context, np.float64)
    lm.forward(params, config, np.array([[1, 2, 3, 4]]), caches=cache.layers)
    with pytest.raises(ValueError, match="start=0"):
        lm.forward(params, config, np.array([[5]]), caches=cache.layers, start=0)
    assert cache.length == 4  # refused before anything was stored


@pytest.mark.parametrize("tied", [True, False])
def test_params_that_disagree_with_the_config_are_refused(tied):
    config = lm.LMConfig(**SIZES, tied=tied)
    other = lm.LMConfig(**SIZES, tied=not tied)
    params = lm.init_language_model(other, 0, dtype=np.float64)
    ids = np.array([[1, 2]])
    with pytest.raises(ValueError, match="lm_head"):
        lm.forward(params, config, ids)
    with pytest.raises(ValueError, match="lm_head"):
        lm.loss_and_gradients(params, config, ids, ids)


def test_params_of_the_wrong_shape_are_refused():
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0) | {"pos_emb": np.zeros((3, 4))}
    with pytest.raises(ValueError, match="pos_emb"):
        lm.forward(params, config, np.array([[1]]))


def test_a_head_mask_of_the_wrong_shape_is_refused():
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0)
    with pytest.raises(ValueError, match="head_mask"):
        lm.forward(params, config, np.array([[1]]), head_mask=np.ones(2))


@pytest.mark.parametrize(
    "prompt", [np.array([1.7, 2.2]), np.array([True, False]), [1.0, 2.0]]
)
def test_generate_refuses_float_and_boolean_ids(prompt):
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0)
    with pytest.raises(TypeError, match="prompt"):
        gen.generate(params, config, prompt, 2, temperature=0)


@pytest.mark.parametrize("n_new", [2.0, True, np.float64(1)])
def test_generate_refuses_a_count_that_is_not_an_integer(n_new):
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0)
    with pytest.raises(TypeError, match="n_new"):
        gen.generate(params, config, np.array([1]), n_new, temperature=0)


def test_generate_accepts_numpy_integers():
    config = lm.LMConfig(**SIZES)
    params = lm.init_language_model(config, 0)
    tokens, _ = gen.generate(
        params, config, np.array([1], np.int32), np.int64(2), temperature=0
    )
    assert tokens.shape == (3,)


@pytest.mark.parametrize("top_k", [7.5, 3.5, True, np.float64(2.0)])
def test_top_k_is_checked_before_the_shortcut_for_large_k(top_k):
    with pytest.raises(TypeError, match="top_k"):
        gen.next_token_distribution(np.arange(5.0), 1.0, top_k=top_k)


@pytest.mark.parametrize("top_k", [0, -1])
def test_top_k_below_one_is_refused_even_at_temperature_0(top_k):
    with pytest.raises(ValueError, match="top_k"):
        gen.next_token_distribution(np.arange(5.0), 0.0, top_k=top_k)


def test_temperature_must_be_a_number():
    with pytest.raises(TypeError, match="temperature"):
        gen.next_token_distribution(np.arange(5.0), True)


def test_a_nan_gradient_is_named_not_called_an_overflow():
    grads = {"a": np.array([1.0, np.nan]), "b": np.array([3.0])}
    with pytest.raises(ValueError, match="'a'.*NaN"):
        clip_global_norm(grads, 1.0)
    assert grads["b"][0] == 3.0  # nothing scaled


@pytest.mark.parametrize("max_norm, error", [(0.0, ValueError), (True, TypeError)])
def test_clip_refuses_a_bad_max_norm(max_norm, error):
    with pytest.raises(error, match="max_norm"):
        clip_global_norm({"a": np.ones(2)}, max_norm)


@pytest.mark.parametrize("name, value", [("batch", 2.0), ("seed", True)])
def test_train_config_refuses_non_integer_counts(name, value):
    with pytest.raises(TypeError, match=name):
        TrainConfig(**{name: value})
