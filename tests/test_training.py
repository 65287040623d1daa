"""The context task, the self-attention classifier's gradients, its training, and the
counterfactual-attention search."""

from __future__ import annotations

import numpy as np
import pytest
from adversarial_attention import (
    jensen_shannon,
    predict_with_attention,
    search_alternative_attention,
    total_variation,
)
from conftest import central_difference  # the suite's own finite differences

from attnlib.data import context_task as ct
from attnlib.models.adam import Adam
from book_support.experiments.context_classifier import (
    PARAMETER_NAMES,
    accuracy,
    attention_map,
    context_datasets,
    forward,
    init_context_classifier,
    loss,
    loss_and_gradients,
    train_context_classifier,
)

#: The accuracy the learned-and-computed chapter states for the attention model (test
#: set, seed 0): "at least 0.99".
STATED_ACCURACY = 0.99


@pytest.fixture(scope="module")
def trained():
    return {
        p: train_context_classifier(seed=0, pooling=p) for p in ("attention", "mean")
    }


# --- the task
# ------------------------------------------------------------------------------


def test_task_sequences_follow_the_rules():
    b = ct.make_context_task(300, np.random.default_rng(7))
    for i in range(len(b)):
        words = b.words(i)
        assert len(words) == b.lengths[i] and np.all(b.tokens[i, b.lengths[i] :] == 0)
        amb = [w for w in words if w in ct.SENSES]
        assert len(amb) == 1 and words[b.query_index[i]] == amb[0]
        assert words[b.clue_index[i]] in ct.CLUES[amb[0]][b.labels[i]]
        clue_words = {
            w for word in ct.SENSES for sense in ct.CLUES[word] for w in sense
        }
        n_clues = sum(w in clue_words for w in words)
        if b.decoy_index[i] >= 0:
            decoy = words[b.decoy_index[i]]
            owner = [
                word for word in ct.SENSES if decoy in ct.CLUES[word][1 - b.labels[i]]
            ]
            assert owner and owner[0] != amb[0]
            assert n_clues == 2
        else:
            assert n_clues == 1
    assert 0.65 < np.mean(b.decoy_index >= 0) < 0.85
    assert 0.4 < b.labels.mean() < 0.6


def test_task_is_seeded_and_checks_arguments():
    a = ct.make_context_task(20, 3)
    b = ct.make_context_task(20, 3)
    np.testing.assert_array_equal(a.tokens, b.tokens)
    with pytest.raises(ValueError, match="decoy_rate"):
        ct.make_context_task(5, 0, decoy_rate=1.5)
    with pytest.raises(ValueError, match="min_len=2"):
        ct.make_context_task(5, 0, min_len=2)


def test_encode_sentences_of_the_documents():
    b = ct.encode_sentences(
        [
            "The fisherman repaired his net beside the bank.",
            "The bank was crowded because people were waiting to withdraw money.",
        ]
    )
    assert b.words(0)[-2:] == ["bank", "."] and b.query_index.tolist() == [7, 1]
    assert b.lengths.tolist() == [9, 12]
    with pytest.raises(ValueError, match="vaults"):
        ct.encode_sentences(["the bank vaults"])
    with pytest.raises(ValueError, match="exactly one"):
        ct.encode_sentences(["the river"])


# --- gradients of the whole model
# ------------------------------------------------------------


@pytest.mark.parametrize("pooling", ["attention", "mean"])
def test_gradient_check_every_parameter(pooling):
    batch = ct.make_context_task(6, np.random.default_rng(11), min_len=4, max_len=8)
    assert batch.lengths.min() < 8  # padding (masked keys) is exercised
    model = init_context_classifier(5, d_k=4, d_v=3, pooling=pooling)
    _, grads = loss_and_gradients(model, batch)
    for name in PARAMETER_NAMES:
        numeric = central_difference(
            lambda x: loss(model.with_params(**{name: x}), batch), getattr(model, name)
        )
        analytic = grads[name]
        scale = max(np.linalg.norm(analytic), np.linalg.norm(numeric))
        if scale == 0:
            continue  # W_Q, W_K under mean pooling: both exactly zero
        assert np.linalg.norm(analytic - numeric) / scale < 1e-6, name


def test_gradient_check_random_word_vectors():
    batch = ct.make_context_task(4, np.random.default_rng(12), min_len=3, max_len=6)
    model = init_context_classifier(6, d_model=5, d_k=3, d_v=2)
    _, grads = loss_and_gradients(model, batch)
    for name in PARAMETER_NAMES:
        numeric = central_difference(
            lambda x: loss(model.with_params(**{name: x}), batch), getattr(model, name)
        )
        assert np.linalg.norm(grads[name] - numeric) / np.linalg.norm(numeric) < 1e-6, (
            name
        )


def test_adam_first_step_moves_each_entry_by_lr():
    # bias-corrected first step: m_hat = g, v_hat = g^2 -> step lr * g / |g| = lr *
    # sign(g)
    params = {"w": np.array([1.0, 2.0, -3.0])}
    Adam(lr=0.1).step(params, {"w": np.array([0.5, -4.0, 1e-3])})
    np.testing.assert_allclose(params["w"], [0.9, 2.1, -3.1], atol=1e-6)


# --- training
# ----------------------------------------------------------------------------------


def test_trained_attention_model_reaches_the_stated_accuracy(trained):
    _, test = context_datasets(0)
    assert accuracy(trained["attention"], test) >= STATED_ACCURACY


def test_mean_pooling_stays_near_chance_when_a_decoy_is_present(trained):
    _, test = context_datasets(0)
    decoy = test.subset(np.flatnonzero(test.decoy_index >= 0))
    acc = accuracy(trained["mean"], decoy)
    assert abs(acc - 0.5) < 0.06
    assert accuracy(trained["mean"], test) < 0.7
    assert accuracy(trained["attention"], decoy) >= STATED_ACCURACY


def test_training_moves_attention_onto_the_clue(trained):
    _, test = context_datasets(0)
    rows = np.arange(len(test))
    before = init_context_classifier(
        1
    )  # the initialisation train_context_classifier(0) uses
    w_before = forward(before, test).query_weights[rows, test.clue_index].mean()
    w_after = (
        forward(trained["attention"], test).query_weights[rows, test.clue_index].mean()
    )
    uniform = np.mean(1.0 / test.lengths)
    assert abs(w_before - uniform) < 0.05
    assert w_after > 0.6


def test_training_is_deterministic_and_loss_falls(trained):
    again = train_context_classifier(seed=0)
    for name in PARAMETER_NAMES:
        np.testing.assert_array_equal(
            getattr(again, name), getattr(trained["attention"], name)
        )
    hist = trained["attention"].history
    assert hist["loss"][-1] < 0.1 * hist["loss"][0]


def test_learned_parameters_fixed_weights_computed_per_input(trained):
    model = trained["attention"]
    b = ct.encode_sentences(
        [
            "The fisherman repaired his net beside the bank.",
            "The bank was crowded because people were waiting to withdraw money.",
        ],
        max_len=12,
    )
    f = forward(model, b)
    assert f.probs[0].argmax() == 0 and f.probs[1].argmax() == 1
    np.testing.assert_allclose(f.query_weights.sum(axis=1), 1.0)
    full = attention_map(model, b)
    np.testing.assert_allclose(
        full[np.arange(2), b.query_index], f.query_weights, atol=1e-12
    )


# --- attention override and the counterfactual search
# --------------------------------------------


def test_distances_by_hand():
    assert jensen_shannon([1.0, 0.0], [0.0, 1.0]) == pytest.approx(np.log(2))
    assert jensen_shannon([0.5, 0.5], [0.5, 0.5]) == 0.0
    # p = (1, 0), q = (0.5, 0.5): m = (0.75, 0.25); 0.5*ln(1/0.75) + 0.5*(0.5
    # ln(0.5/0.75) + 0.5 ln 2)
    want = 0.5 * np.log(4 / 3) + 0.25 * np.log(2 / 3) + 0.25 * np.log(2)
    assert jensen_shannon([1.0, 0.0], [0.5, 0.5]) == pytest.approx(want)
    assert total_variation([0.2, 0.8], [0.6, 0.4]) == pytest.approx(0.4)


def test_predict_with_attention_reproduces_and_overrides(trained):
    model = trained["attention"]
    _, test = context_datasets(0)
    b = test.subset(slice(0, 5))
    f = forward(model, b)
    np.testing.assert_allclose(
        predict_with_attention(model, b, f.query_weights), f.probs, atol=1e-12
    )
    # all weight on the clue: the prediction is the readout of the clue's value,
    # computed by hand
    onehot = np.zeros(b.tokens.shape)
    onehot[np.arange(5), b.clue_index] = 1.0
    V = model.embeddings[b.tokens] @ model.W_V
    logits = V[np.arange(5), b.clue_index] @ model.W_out + model.b_out
    want = np.exp(logits - logits.max(1, keepdims=True))
    np.testing.assert_allclose(
        predict_with_attention(model, b, onehot), want / want.sum(1, keepdims=True)
    )
    with pytest.raises(ValueError, match="sum to 1"):
        predict_with_attention(model, b, onehot * 0.5)
    with pytest.raises(ValueError, match=r"\(5, 3\)"):
        predict_with_attention(model, b, np.ones((5, 3)) / 3)
    bad = np.zeros(b.tokens.shape)
    bad[:, -1] = 1.0
    short = np.flatnonzero(b.lengths < b.tokens.shape[1])
    if short.size:
        with pytest.raises(ValueError, match="padded"):
            predict_with_attention(model, b, bad)


def test_search_finds_a_different_distribution_with_the_same_prediction(trained):
    model = trained["attention"]
    b = ct.encode_sentences(["The fisherman repaired his net beside the bank."])
    r = search_alternative_attention(model, b, epsilon=0.01)
    assert r.feasible and r.jsd > 0.2
    assert r.prediction_tvd <= 0.01
    # recompute independently with the override function
    w = np.zeros(b.tokens.shape)
    w[0, : len(r.weights)] = r.weights
    p = predict_with_attention(model, b, w)[0]
    assert 0.5 * np.abs(p - r.original_probs).sum() <= 0.01
    assert jensen_shannon(r.weights, r.original_weights) == pytest.approx(r.jsd)
    with pytest.raises(ValueError, match="epsilon"):
        search_alternative_attention(model, b, epsilon=0.0)


def test_mean_pooling_map_is_uniform_over_real_tokens(trained):
    b = ct.make_context_task(5, np.random.default_rng(9))
    full = attention_map(trained["mean"], b)
    for i in range(5):
        n = b.lengths[i]
        np.testing.assert_allclose(full[i, :, :n], 1.0 / n)
        assert np.all(full[i, :, n:] == 0.0)
