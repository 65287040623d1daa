"""Tests of the decoder-only language model: its gradients, its evaluation, its head.

The gradient check compares :func:`loss_and_gradients` with central finite differences
(conftest's own loop, not attnlib's) for every parameter tensor of small models: full
multi-head attention with GELU, grouped-query attention with a sliding window, and the
attention-only multi-query blocks of the induction model; with dropout on, the masks
come from a generator seeded the same way at every call, so the loss is one fixed
function of the parameters.
"""

import numpy as np
import pytest
from conftest import central_difference

from attnlib.core.backward import relative_error
from attnlib.models import language_model as lm

#: every small model shares these sizes; each entry changes what its name says
_SMALL = dict(vocab_size=7, context=6, d_model=8, num_layers=2, num_heads=2, d_ff=12)
CONFIGS = {
    "multi-head, GELU": lm.LMConfig(**_SMALL, activation="gelu"),
    "grouped-query, window 3": lm.LMConfig(
        **{**_SMALL, "num_heads": 4}, num_kv_heads=2, window=3
    ),
    "multi-query, attention only": lm.LMConfig(**{**_SMALL, "d_ff": 0}, num_kv_heads=1),
    "untied head": lm.LMConfig(**{**_SMALL, "num_layers": 1, "d_ff": 0}, tied=False),
    "dropout 0.2": lm.LMConfig(**_SMALL, dropout=0.2),
}


def _problem(config, seed=1):
    """float64 parameters, moved away from their tiny initial values (a check on weights
    of 0.02 would test little), and a batch of two sequences of 5 tokens."""
    rng = np.random.default_rng(seed)
    params = lm.init_language_model(config, 0, dtype=np.float64)
    params = {k: v + rng.normal(0.0, 0.3, v.shape) for k, v in params.items()}
    idx = rng.integers(0, config.vocab_size, size=(2, 5))
    targets = rng.integers(0, config.vocab_size, size=(2, 5))
    return params, idx, targets


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_gradient_matches_finite_differences(name):
    config = CONFIGS[name]
    params, idx, targets = _problem(config)
    training = config.dropout > 0

    def f(p):
        rng = np.random.default_rng(5)  # the same dropout masks at every call
        return lm.loss(p, config, idx, targets, training=training, rng=rng)

    _, grads = lm.loss_and_gradients(
        params, config, idx, targets, training=training, rng=np.random.default_rng(5)
    )
    assert set(grads) == set(params)
    for key, value in params.items():
        assert grads[key].shape == value.shape, key
        numeric = central_difference(
            lambda a, key=key: f(dict(params, **{key: a})), value
        )
        assert relative_error(grads[key], numeric) < 1e-6, key
    if training:  # dropout really acted: the loss differs from the evaluation loss
        assert abs(f(params) - lm.loss(params, config, idx, targets)) > 1e-6


def test_evaluation_is_exact_and_ignores_the_dropout_rate():
    base = CONFIGS["dropout 0.2"]
    params, idx, _ = _problem(base)
    no_dropout = lm.LMConfig(**{**base.as_dict(), "dropout": 0.0})
    a, _ = lm.forward(params, base, idx)  # training=False: nothing is dropped
    b, _ = lm.forward(params, no_dropout, idx)
    c, _ = lm.forward(
        params, no_dropout, idx, training=True, rng=np.random.default_rng(0)
    )
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)  # rate 0 in training: nothing is drawn


def test_the_model_is_causal_and_the_head_is_tied():
    config = CONFIGS["multi-head, GELU"]
    params, idx, _ = _problem(config)
    logits, weights = lm.forward(params, config, idx)
    changed = idx.copy()
    changed[:, 3] = (changed[:, 3] + 1) % config.vocab_size
    later, _ = lm.forward(params, config, changed)
    np.testing.assert_allclose(later[:, :3], logits[:, :3], atol=1e-12)  # past unmoved
    assert not np.allclose(later[:, 3:], logits[:, 3:])
    assert all(np.all(np.triu(w, 1) == 0) for w in weights)
    # the head is h E^T: scaling one embedding row changes that token's logit only
    # through the head and its own input lookups (never used in idx here)
    unused = sorted(set(range(config.vocab_size)) - set(idx.ravel()))[0]
    p2 = dict(params, tok_emb=params["tok_emb"].copy())
    p2["tok_emb"][unused] *= 2.0
    l2, _ = lm.forward(p2, config, idx)
    np.testing.assert_allclose(l2[..., unused], 2 * logits[..., unused], atol=1e-12)
    other = [c for c in range(config.vocab_size) if c != unused]
    np.testing.assert_allclose(l2[..., other], logits[..., other], atol=1e-12)


def test_cross_entropy_is_minus_log_probability():
    logits = np.array([[[2.0, 1.0, 0.0], [0.0, 0.0, 0.0]]])
    value, grad = lm.cross_entropy(logits, np.array([[0, 2]]))
    p0 = np.exp(2) / (np.exp(2) + np.exp(1) + 1)
    assert value == pytest.approx(-(np.log(p0) + np.log(1 / 3)) / 2, abs=1e-12)
    np.testing.assert_allclose(grad.sum(axis=-1), 0.0, atol=1e-15)
    huge, _ = lm.cross_entropy(np.array([[[1e4, -1e4]]]), np.array([[1]]))
    assert huge == pytest.approx(2e4)  # no overflow, no log(0)


def test_head_mask_removes_a_head():
    config = CONFIGS["grouped-query, window 3"]
    params, idx, _ = _problem(config)
    full, _ = lm.forward(params, config, idx)
    keep_all = np.ones((2, 4))
    np.testing.assert_array_equal(
        lm.forward(params, config, idx, head_mask=keep_all)[0], full
    )
    mask = keep_all.copy()
    mask[1, 2] = 0.0
    assert not np.allclose(lm.forward(params, config, idx, head_mask=mask)[0], full)


@pytest.mark.parametrize(
    "idx, words",
    [
        (np.array([[0, 7]]), "0 .. 6"),
        (np.zeros((1, 7), int), "context"),
        (np.zeros((1, 3)), "integer"),
    ],
)
def test_bad_token_ids_are_refused(idx, words):
    config = CONFIGS["multi-head, GELU"]
    params = lm.init_language_model(config, 0)
    error = TypeError if idx.dtype.kind == "f" else ValueError  # not ids at all
    with pytest.raises(error, match=words):
        lm.forward(params, config, idx)


def test_config_refuses_sizes_that_do_not_fit():
    with pytest.raises(ValueError, match="divisible"):
        lm.LMConfig(vocab_size=5, context=4, d_model=10, num_layers=1, num_heads=3)
    with pytest.raises(ValueError, match="must divide"):
        lm.LMConfig(
            vocab_size=5,
            context=4,
            d_model=12,
            num_layers=1,
            num_heads=4,
            num_kv_heads=3,
        )
