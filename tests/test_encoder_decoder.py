"""The trained encoder-decoder: task, recurrent backward, decoder step, model, stored weights."""

from __future__ import annotations

import numpy as np
import pytest

from attnlib.core.backward import numerical_gradient, relative_error
from attnlib.data import translation_task
from attnlib.data.translation_task import make_batch
from attnlib.models import encoder_decoder, recurrent
from attnlib.models.recurrent import rnn_encode

# --- the task -------------------------------------------------------------------------


def test_translate_swaps_adjective_and_noun():
    assert translation_task.translate("big dog sees red cat".split()) == [
        "chien",
        "grand",
        "voit",
        "chat",
        "rouge",
    ]


def test_batch_targets_follow_the_alignment_and_the_rules():
    batch = make_batch(3, 50, 12)
    assert batch.source.shape == batch.target.shape == batch.alignment.shape == (50, 12)
    for b in range(len(batch)):
        words = translation_task.source_words(batch.source[b])
        assert translation_task.target_words(
            batch.target[b]
        ) == translation_task.translate(words)
        # the alignment is a permutation that moves words by at most one place
        assert sorted(batch.alignment[b]) == list(range(12))
        assert np.abs(batch.alignment[b] - np.arange(12)).max() <= 1
    assert (batch.alignment != np.arange(12)).any()  # some pairs were swapped
    assert (batch.decoder_inputs()[:, 0] == translation_task.START).all()
    np.testing.assert_array_equal(batch.decoder_inputs()[:, 1:], batch.target[:, :-1])


def test_make_batch_rejects_empty_requests():
    with pytest.raises(ValueError, match="length"):
        make_batch(0, 3, 0)
    with pytest.raises(ValueError, match="vocabulary"):
        translation_task.translate(["purple"])


# --- gradients against central differences
# ---------------------------------------------


def test_rnn_backward_matches_finite_differences():
    rng = np.random.default_rng(0)
    x, h0 = rng.normal(size=(2, 4, 3)), rng.normal(size=(2, 5))
    W_x, W_h, b = (
        rng.normal(size=(3, 5)),
        0.5 * rng.normal(size=(5, 5)),
        rng.normal(size=5),
    )
    G = rng.normal(size=(2, 4, 5))  # L = sum(G * states): a generic upstream

    def L(x=x, h0=h0, W_x=W_x, W_h=W_h, b=b):
        return float(np.sum(G * rnn_encode(x, W_x, W_h, b, h0=h0)[0]))

    H = rnn_encode(x, W_x, W_h, b, h0=h0)[0]
    got = recurrent.rnn_backward(x, H, h0, W_x, W_h, G)
    numeric = {
        "inputs": numerical_gradient(lambda v: L(x=v), x),
        "h0": numerical_gradient(lambda v: L(h0=v), h0),
        "W_x": numerical_gradient(lambda v: L(W_x=v), W_x),
        "W_h": numerical_gradient(lambda v: L(W_h=v), W_h),
        "b": numerical_gradient(lambda v: L(b=v), b),
    }
    for name, n in numeric.items():
        assert relative_error(got[name], n) < 1e-7, name
    np.testing.assert_allclose(recurrent.rnn_step(x[:, 0], h0, W_x, W_h, b), H[:, 0])


def test_rnn_backward_names_bad_shapes():
    with pytest.raises(ValueError, match="must agree"):
        recurrent.rnn_backward(
            np.zeros((2, 3, 4)),
            np.zeros((2, 2, 5)),
            np.zeros((2, 5)),
            np.zeros((4, 5)),
            np.zeros((5, 5)),
            np.zeros((2, 2, 5)),
        )


@pytest.mark.parametrize("attend", [False, True])
def test_every_parameter_gradient_matches_finite_differences(attend):
    batch = make_batch(0, 3, 5)
    assert (batch.alignment != np.arange(5)).any()  # a swap is in the check
    model = encoder_decoder.init_encoder_decoder(1, attend=attend, m=3, h=2, d=5, a=3)
    # move the biases off zero so that their gradients are exercised in general position
    rng = np.random.default_rng(2)
    for k in model.names:
        model.params[k] = model.params[k] + 0.1 * rng.normal(size=model.params[k].shape)
    _, grads = encoder_decoder.loss_and_gradients(model, batch)
    assert set(grads) == set(model.names)
    for name in model.names:

        def f(value, name=name):
            keep = model.params[name]
            model.params[name] = value
            try:
                return encoder_decoder.loss(model, batch)
            finally:
                model.params[name] = keep

        numeric = numerical_gradient(f, model.params[name].copy())
        assert np.abs(numeric).max() > 1e-6, name  # the parameter matters
        assert relative_error(grads[name], numeric) < 1e-6, name


def test_the_two_models_differ_only_in_attention():
    ctx = encoder_decoder.init_encoder_decoder(0, attend=False)
    att = encoder_decoder.init_encoder_decoder(0, attend=True)
    assert set(att.names) - set(ctx.names) == {"W_q", "W_k", "w_v"}
    for k in ctx.names:
        np.testing.assert_array_equal(ctx.params[k], att.params[k])


def test_loss_falls_in_a_few_steps_of_a_tiny_configuration():
    for attend in (False, True):
        model = encoder_decoder.init_encoder_decoder(
            0, attend=attend, m=8, h=16, d=16, a=8
        )
        fixed = make_batch(99, 32, 6)
        before = encoder_decoder.loss(model, fixed)
        encoder_decoder.train(
            model, steps=30, seed=1, batch_size=32, lengths=(4, 8), lr=0.01
        )
        after = encoder_decoder.loss(model, fixed)
        assert after < before - 0.3, (attend, before, after)


def test_weights_of_the_attention_model_are_distributions():
    model = encoder_decoder.init_encoder_decoder(0, attend=True, m=4, h=6, d=6, a=3)
    words, weights = encoder_decoder.translate_greedy(model, make_batch(0, 4, 7))
    assert words.shape == (4, 7) and weights.shape == (4, 7, 7)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    assert (
        encoder_decoder.translate_greedy(
            encoder_decoder.init_encoder_decoder(0, attend=False), words
        )[1]
        is None
    )
    with pytest.raises(ValueError, match="source ids"):
        encoder_decoder.translate_greedy(model, np.full((1, 3), 99))


def test_clip_by_global_norm():
    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}
    assert encoder_decoder.clip_by_global_norm(grads, 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(grads["a"], [0.6, 0.0])
    np.testing.assert_allclose(grads["b"], [[0.8]])


def test_save_and_load_round_trip(tmp_path):
    model = encoder_decoder.init_encoder_decoder(0, attend=True, m=4, h=6, d=6, a=3)
    model.history["loss"] = [1.0, 0.5]
    encoder_decoder.save({"attention": model}, tmp_path / "m.npz")
    back = encoder_decoder.load(tmp_path / "m.npz")["attention"]
    assert back.attend and back.history["loss"] == [1.0, 0.5]
    for k in model.names:
        np.testing.assert_allclose(back.params[k], model.params[k], rtol=1e-6)


# --- the stored models of chapter 2
# ------------------------------------------------------


def test_stored_weights_reproduce_the_numbers_of_make_train_and_the_chapter():
    """The weights in the repository give the held-out accuracies that `make train` measured
    on its float64 models (recorded in the .json beside them) and that chapter 2 shows."""
    import json

    from attnlib.models import translation_training as tt

    assert tt.WEIGHTS.is_file(), "run `make train` to create the stored weights"
    assert tt.WEIGHTS.stat().st_size < 5e6
    meta = json.loads(tt.WEIGHTS.with_suffix(".json").read_text())
    models = encoder_decoder.load(tt.WEIGHTS)
    assert {name: m.attend for name, m in models.items()} == {
        "context": False,
        "attention": True,
    }
    curve = tt.length_curve(models)
    for name, scores in curve.items():
        recorded = meta["held_out"][name]
        assert [s.length for s in scores] == [r["length"] for r in recorded]
        for s, r in zip(scores, recorded):
            # float32 storage may flip a rare near-tie: allow one word in 1,000
            assert abs(s.token_accuracy - r["token_accuracy"]) <= 1e-3, (name, s, r)
            assert abs(s.sentence_accuracy - r["sentence_accuracy"]) <= 5e-3, (
                name,
                s,
                r,
            )
            if name == "attention":
                assert abs(s.alignment_accuracy - r["alignment_accuracy"]) <= 1e-3
    # the chapter's two findings, as they are stated there
    longest_gap = (
        curve["attention"][-1].token_accuracy - curve["context"][-1].token_accuracy
    )
    assert longest_gap >= 0.20
    assert curve["context"][0].token_accuracy > curve["context"][-1].token_accuracy


def test_the_two_figures_check_their_input():
    import matplotlib.pyplot as plt

    from attnlib.figures import alignment_heatmaps, length_curve

    fig = length_curve(
        [5, 10], {"a": {"token": [1.0, 0.5], "sentence": [1.0, 0.0]}}, chance=0.04
    )
    assert len(fig.axes) == 2
    plt.close(fig)
    with pytest.raises(ValueError, match="accuracy"):
        length_curve([5, 10], {"a": {"token": [1.0, 50.0], "sentence": [1.0, 0.0]}})
    panel = {
        "weights": np.eye(3),
        "source": list("abc"),
        "target": list("xyz"),
        "alignment": [0, 2, 1],
    }
    fig = alignment_heatmaps([panel])
    plt.close(fig)
    with pytest.raises(ValueError):
        alignment_heatmaps([dict(panel, target=["x"])])
