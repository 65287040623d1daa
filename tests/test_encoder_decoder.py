"""The translators of the bottleneck chapter: task, recurrent backward, model gradients,
training rule, evaluation, and the stored runs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import central_difference  # the suite's own finite differences

from attnlib.data import translation_task
from attnlib.data.translation_task import KEPT, NEAR, VERB, make_batch
from attnlib.models import encoder_decoder, recurrent
from attnlib.models.recurrent import rnn_encode
from attnlib.models.rnn_decoder import decoder_step
from book_support.experiments import translation_eval as te
from book_support.experiments import translation_training as tt

KINDS = [(attend, bi) for attend in (False, True) for bi in (True, False)]

# --- the task


def test_translate_swaps_adjective_and_noun_and_moves_the_verb():
    assert translation_task.translate("big dog sees red cat".split()) == [
        "chien",
        "grand",
        "chat",
        "rouge",
        "voit",
    ]
    # pairs form only between neighbours; every verb goes to the end, in order
    assert translation_task.translate("red sees cat has".split()) == [
        "rouge",
        "chat",
        "voit",
        "a",
    ]


def test_batch_targets_follow_the_alignment_and_the_rules():
    batch = make_batch(3, 50, 12)
    assert batch.source.shape == batch.target.shape == batch.alignment.shape == (50, 12)
    verbs = {translation_task.SOURCE_VOCAB.index(v) for v, _ in translation_task.VERBS}
    kinds = batch.kinds()
    for b in range(len(batch)):
        words = translation_task.source_words(batch.source[b])
        assert translation_task.target_words(
            batch.target[b]
        ) == translation_task.translate(words)
        assert sorted(batch.alignment[b]) == list(range(12))  # a permutation
        where = [j for j in range(12) if batch.source[b, j] in verbs]
        assert len(where) == 1 and where[0] < 11  # one verb, never the last word
        assert batch.alignment[b, -1] == where[0]  # ... and it ends the target
        for i in range(12):
            offset = abs(batch.alignment[b, i] - i)
            expected = VERB if i == 11 else (KEPT if offset == 0 else NEAR)
            assert kinds[b, i] == expected
            if i < 11:
                assert offset <= 2  # only the verb jumps further
    assert {KEPT, NEAR, VERB} <= set(np.unique(kinds))
    assert (batch.decoder_inputs()[:, 0] == translation_task.START).all()
    np.testing.assert_array_equal(batch.decoder_inputs()[:, 1:], batch.target[:, :-1])


def test_make_batch_rejects_empty_requests():
    with pytest.raises(ValueError, match="length"):
        make_batch(0, 3, 1)
    with pytest.raises(ValueError, match="vocabulary"):
        translation_task.translate(["purple"])


def _sentence_by_choice(rng, length):
    """A sentence as the generator first drew it, with ``Generator.choice``: the
    reference for the faster draws of ``translation_task`` (same random numbers, same
    words), which keep the stored runs reproducible."""
    t = translation_task

    def chunks(n, offset):
        source, alignment = [], []
        while len(source) < n:
            kind = rng.choice(3, p=t._CHUNK_P)
            pos = offset + len(source)
            if kind == 1 and len(source) + 2 <= n:
                source += [int(rng.choice(t._ADJ_IDS)), int(rng.choice(t._NOUN_IDS))]
                alignment += [pos + 1, pos]
            elif kind in (0, 1):
                source.append(int(rng.choice(t._NOUN_IDS)))
                alignment.append(pos)
            else:
                source.append(int(rng.choice(t._OTHER_IDS)))
                alignment.append(pos)
        return source, alignment

    verb_at = int(rng.integers(0, length - 1))
    before, first = chunks(verb_at, 0)
    after, second = chunks(length - 1 - verb_at, verb_at + 1)
    return before + [int(rng.choice(t._VERB_IDS))] + after, first + second + [verb_at]


@pytest.mark.parametrize("seed", range(20))
def test_batches_are_the_draws_of_generator_choice(seed):
    rng, reference = np.random.default_rng(seed), np.random.default_rng(seed)
    for n, length in [(1, 2), (5, 3), (32, 12), (7, 40)]:
        batch = make_batch(rng, n, length)
        for b in range(n):
            source, alignment = _sentence_by_choice(reference, length)
            assert batch.source[b].tolist() == source
            assert batch.alignment[b].tolist() == alignment
    assert rng.bit_generator.state == reference.bit_generator.state


# --- gradients against central differences


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
        "inputs": central_difference(lambda v: L(x=v), x),
        "h0": central_difference(lambda v: L(h0=v), h0),
        "W_x": central_difference(lambda v: L(W_x=v), W_x),
        "W_h": central_difference(lambda v: L(W_h=v), W_h),
        "b": central_difference(lambda v: L(b=v), b),
    }
    for name, n in numeric.items():
        err = np.linalg.norm(got[name] - n) / np.linalg.norm(n)
        assert err < 1e-7, name
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


@pytest.mark.parametrize(
    "attend,bidirectional,cell",
    [(attend, bi, "tanh") for attend, bi in KINDS]
    + [(False, True, "gru"), (True, False, "gru")],
)
def test_every_parameter_gradient_matches_finite_differences(
    attend, bidirectional, cell
):
    batch = make_batch(0, 3, 6)
    assert (batch.kinds() == NEAR).any() and (batch.kinds() == VERB).any()
    model = encoder_decoder.init_encoder_decoder(
        1, attend=attend, bidirectional=bidirectional, m=3, h=2, d=5, a=3, cell=cell
    )
    assert model.bidirectional == bidirectional and model.cell == cell
    # move the biases off zero so that their gradients are exercised in general position
    rng = np.random.default_rng(2)
    for k in model.names:
        model.params[k] = model.params[k] + 0.1 * rng.normal(size=model.params[k].shape)
    _, grads = encoder_decoder.loss_and_gradients(model, batch)
    assert set(grads) == set(model.names) == set(model.params)
    for name in model.names:

        def f(value, name=name):
            keep = model.params[name]
            model.params[name] = value
            try:
                return encoder_decoder.loss(model, batch)
            finally:
                model.params[name] = keep

        numeric = central_difference(f, model.params[name])
        assert np.abs(numeric).max() > 1e-6, name  # the parameter matters
        err = np.linalg.norm(grads[name] - numeric) / np.linalg.norm(numeric)
        assert err < 1e-6, name


def test_the_decoder_step_is_bahdanaus_three_formulas():
    from attnlib.models.bottleneck import decoder_context

    model = encoder_decoder.init_encoder_decoder(3, attend=True, m=4, h=5, d=6, a=3)
    p = model.params
    rng = np.random.default_rng(4)
    H, s_prev, y = (
        rng.normal(size=(2, 7, 10)),
        rng.normal(size=(2, 6)),
        rng.normal(size=(2, 4)),
    )
    step = decoder_step(p, s_prev, y, H, True)
    c, w = decoder_context(s_prev[:, None, :], H, p["W_q"], p["W_k"], p["w_v"])
    np.testing.assert_allclose(step.weights, w[:, 0], rtol=1e-12)
    np.testing.assert_allclose(step.c, c[:, 0], rtol=1e-12)
    again = decoder_step(p, s_prev, y, H, True, keys_projected=H @ p["W_k"])
    np.testing.assert_allclose(again.logits, step.logits, rtol=1e-12)


def test_the_two_models_differ_only_in_attention():
    for bidirectional in (True, False):
        ctx = encoder_decoder.init_encoder_decoder(
            0, attend=False, bidirectional=bidirectional
        )
        att = encoder_decoder.init_encoder_decoder(
            0, attend=True, bidirectional=bidirectional
        )
        assert set(att.names) - set(ctx.names) == {"W_q", "W_k", "w_v"}
        for k in ctx.names:
            np.testing.assert_array_equal(ctx.params[k], att.params[k])
    fwd = encoder_decoder.init_encoder_decoder(0, attend=True, bidirectional=False)
    bi = encoder_decoder.init_encoder_decoder(0, attend=True)
    # the same annotation width either way: 2h
    assert fwd.params["W_hf"].shape == (64, 64) and bi.params["W_hf"].shape == (32, 32)
    assert fwd.params["W_k"].shape == bi.params["W_k"].shape


def test_a_gru_encoder_runs_gru_encode_and_triples_the_encoder_weights():
    from attnlib.models.gru import gru_encode

    tanh = encoder_decoder.init_encoder_decoder(0, attend=False, m=4, h=5, d=6)
    gru = encoder_decoder.init_encoder_decoder(
        0, attend=False, m=4, h=5, d=6, cell="gru"
    )
    assert (tanh.cell, gru.cell) == ("tanh", "gru")
    assert gru.kind == "context, bidirectional, GRU encoder"
    for k in ("W_xf", "W_hf", "b_f", "W_xr", "W_hr", "b_r"):
        assert gru.params[k].shape[-1] == 3 * tanh.params[k].shape[-1], k
    extra = 2 * 3 * (4 * 5 + 5 * 5 + 5) - 2 * (4 * 5 + 5 * 5 + 5)
    assert gru.n_parameters() - tanh.n_parameters() == extra
    batch = make_batch(1, 2, 6)
    p = gru.params
    F = gru_encode(p["E_src"][batch.source], p["W_xf"], p["W_hf"], p["b_f"])[0]
    H = encoder_decoder._encode(p, batch.source)[3]
    np.testing.assert_array_equal(H[..., :5], F)
    with pytest.raises(ValueError, match="cell"):
        encoder_decoder.init_encoder_decoder(0, attend=False, cell="lstm")


def test_the_fairer_baselines_match_the_attention_model_in_parameters():
    def count(kind):
        model = tt.init_run(kind, 0)
        return model.n_parameters(), model

    target, _ = count("attention-bidirectional")
    for kind in ("context-matched-bidirectional", "context-gru-bidirectional"):
        n, model = count(kind)
        assert abs(n - target) <= 0.01 * target, kind
        assert not model.attend and model.bidirectional
        assert model.params["W_init"].shape[0] == 2 * tt.CONFIG["h"]  # same c
    assert count("context-gru-bidirectional")[1].cell == "gru"
    assert count("context-bidirectional")[0] < 0.9 * target


def test_forward_only_annotations_never_see_later_words():
    model = encoder_decoder.init_encoder_decoder(
        0, attend=True, bidirectional=False, m=4, h=3, d=5, a=3
    )
    batch = make_batch(5, 2, 8)
    changed = batch.source.copy()
    changed[:, 5:] = (changed[:, 5:] + 1) % len(translation_task.SOURCE_VOCAB)
    H1 = encoder_decoder._encode(model.params, batch.source)[3]
    H2 = encoder_decoder._encode(model.params, changed)[3]
    np.testing.assert_array_equal(H1[:, :5], H2[:, :5])
    assert not np.allclose(H1[:, 5:], H2[:, 5:])


def test_greedy_translation_is_the_decoder_fed_its_own_words():
    model = encoder_decoder.init_encoder_decoder(0, attend=True, m=4, h=6, d=6, a=3)
    batch = make_batch(0, 4, 7)
    words, weights = encoder_decoder.translate_greedy(model, batch)
    assert words.shape == (4, 7) and weights.shape == (4, 7, 7)
    np.testing.assert_allclose(weights.sum(axis=-1), 1.0)
    # independently: one decoder step at a time, feeding back the argmax
    p = model.params
    H, _, s = encoder_decoder._encode(p, batch.source)[3:]
    prev = np.full(4, translation_task.START)
    for i in range(7):
        step = decoder_step(p, s, p["E_tgt"][prev], H, True)
        prev = np.argmax(step.logits[:, : translation_task.START], axis=1)
        np.testing.assert_array_equal(words[:, i], prev)
        s = step.s
    ctx = encoder_decoder.init_encoder_decoder(0, attend=False)
    assert encoder_decoder.translate_greedy(ctx, words)[1] is None
    with pytest.raises(ValueError, match="source ids"):
        encoder_decoder.translate_greedy(model, np.full((1, 3), 99))


def test_clip_by_global_norm():
    grads = {"a": np.array([3.0, 0.0]), "b": np.array([[4.0]])}
    assert tt.clip_by_global_norm(grads, 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(grads["a"], [0.6, 0.0])
    np.testing.assert_allclose(grads["b"], [[0.8]])


def test_save_and_load_round_trip_keeps_kind_and_direction(tmp_path):
    runs = {
        f"m{i}": encoder_decoder.init_encoder_decoder(
            i, attend=attend, bidirectional=bi, m=4, h=6, d=6, a=3
        )
        for i, (attend, bi) in enumerate(KINDS)
    }
    runs["m0"].history["validation_loss"] = [1.0, 0.5]
    encoder_decoder.save(runs, tmp_path / "m.npz")
    back = encoder_decoder.load(tmp_path / "m.npz")
    assert back["m0"].history["validation_loss"] == [1.0, 0.5]
    for name, model in runs.items():
        assert back[name].kind == model.kind
        for k in model.names:
            np.testing.assert_allclose(back[name].params[k], model.params[k], rtol=1e-6)


# --- the training rule

TINY = dict(
    tt.CONFIG,
    m=4,
    h=6,
    d=8,
    a=4,
    batch_size=8,
    lengths=(3, 5),
    eval_every=5,
    patience=2,
    max_steps=60,
    validation_per_length=4,
)


def test_training_lowers_the_loss_and_keeps_the_best_validation_parameters():
    for attend, bi in KINDS:
        model = encoder_decoder.init_encoder_decoder(
            0, attend=attend, bidirectional=bi, m=8, h=8, d=16, a=8
        )
        validation = tt.validation_set(TINY)
        before = tt.validation_loss(model, validation)
        cfg = dict(TINY, lr=0.01, patience=100, max_steps=40)  # to the cap
        tt.train(model, validation, seed=1, config=cfg)
        h = model.history
        assert h["stopped_at"] == [40] and h["step"] == [5, 10, 15, 20, 25, 30, 35, 40]
        assert min(h["validation_loss"]) < before - 0.3, (attend, bi)
        best = int(np.argmin(h["validation_loss"]))
        assert h["best_step"] == [h["step"][best]]
        # the returned parameters are those of the lowest validation loss
        assert tt.validation_loss(model, validation) == pytest.approx(
            h["validation_loss"][best], rel=1e-12
        )


def test_training_halves_the_rate_at_each_stall_and_stops_at_the_last():
    model = encoder_decoder.init_encoder_decoder(0, attend=False, m=4, h=6, d=8)
    # a learning rate this small cannot lower the loss by 1 % in 5 steps
    cfg = dict(TINY, lr=1e-7, min_delta=0.01, lr_halvings=0)
    tt.train(model, tt.validation_set(cfg), seed=0, config=cfg)
    h = model.history
    # the first evaluation sets the best; two more without a 1 % gain end it
    assert h["stopped_at"] == [15] and len(h["validation_loss"]) == 3
    assert h["best_step"][0] == h["step"][int(np.argmin(h["validation_loss"]))]
    cfg = dict(cfg, lr_halvings=2)
    tt.train(model, tt.validation_set(cfg), seed=0, config=cfg)
    h = model.history
    # stalls at 15 and 25 halve the rate; the third, at 35, ends training
    assert h["stopped_at"] == [35]
    assert h["lr"] == [1e-7] * 3 + [5e-8] * 2 + [2.5e-8] * 2
    with pytest.raises(ValueError, match="lengths"):
        tt.train(model, [], seed=0, config=dict(TINY, lengths=(1, 5)))


def test_a_kind_with_a_budget_factor_trains_that_many_times_the_cap():
    config = dict(TINY, max_steps=10, patience=100)  # no stall: only the cap stops
    gru = tt.train_run("context-gru-bidirectional", 0, config)
    assert tt.BUDGET_FACTOR["context-gru-bidirectional"] == 2
    assert gru.cell == "gru" and gru.history["stopped_at"] == [20]
    tanh = tt.train_run("context-matched-bidirectional", 0, config)
    assert tanh.history["stopped_at"] == [10]


def test_training_is_deterministic_and_the_run_names_parse():
    a = tt.train_run("attention-forward", 3, TINY)
    b = tt.train_run("attention-forward", 3, TINY)
    assert a.history["validation_loss"] == b.history["validation_loss"]
    for k in a.names:
        np.testing.assert_array_equal(a.params[k], b.params[k])
    assert te.kind_of(tt.run_name("attention-forward", 3)) == "attention-forward"
    with pytest.raises(ValueError, match="unknown kind"):
        tt.run_name("attention", 0)
    with pytest.raises(ValueError, match="run name"):
        te.kind_of("attention")


# --- the evaluation


def test_evaluation_counts_by_hand():
    model = encoder_decoder.init_encoder_decoder(2, attend=True, m=4, h=6, d=6, a=3)
    batch = make_batch(4, 30, 9)
    s = te.evaluate(model, batch)
    words, _ = encoder_decoder.translate_greedy(model, batch)
    f = encoder_decoder.forward(model, batch)
    hits = {KEPT: [], NEAR: [], VERB: []}
    kinds = batch.kinds()
    for b in range(30):
        for i in range(9):
            aligned = int(np.argmax(f.weights[b, i])) == batch.alignment[b, i]
            hits[int(kinds[b, i])].append(aligned)
    assert s.alignment_kept == pytest.approx(np.mean(hits[KEPT]))
    assert s.alignment_near == pytest.approx(np.mean(hits[NEAR]))
    assert s.alignment_verb == pytest.approx(np.mean(hits[VERB]))
    assert s.greedy == pytest.approx(np.mean(words == batch.target))
    assert s.sentence == pytest.approx(np.mean((words == batch.target).all(axis=1)))
    # the first word is written from <s> either way
    assert s.greedy_by_position[0] == s.teacher_forced_by_position[0]
    assert s.greedy_by_position.mean() == pytest.approx(s.greedy)
    ctx = te.evaluate(encoder_decoder.init_encoder_decoder(2, attend=False), batch)
    assert np.isnan(ctx.alignment_verb) and np.isnan(ctx.alignment_by_position).all()
    assert ctx.to_dict()["alignment_verb"] is None


def test_across_seeds_groups_the_runs_of_a_kind():
    def fake(v):
        z = np.zeros(3)
        return te.Scores(3, v, v, v, v, v, v, z + v, z + v, z + v)

    evaluation = {
        "context-forward-seed0": [fake(0.2), fake(0.4)],
        "context-forward-seed1": [fake(0.6), fake(0.0)],
    }
    out = te.across_seeds(evaluation, "greedy")["context-forward"]
    np.testing.assert_allclose(out["mean"], [0.4, 0.2])
    np.testing.assert_allclose(out["min"], [0.2, 0.0])
    np.testing.assert_allclose(out["max"], [0.6, 0.4])
    pos = te.by_position(evaluation, 3, "greedy")["context-forward"]
    np.testing.assert_allclose(pos["mean"], [0.4, 0.4, 0.4])
    with pytest.raises(ValueError, match="metric"):
        te.across_seeds(evaluation, "greedy_by_position")


# --- the stored runs of the bottleneck chapter


@pytest.fixture(scope="module")
def stored():
    import json

    assert tt.WEIGHTS.is_file(), "run `make train` to create the stored runs"
    meta = json.loads(tt.WEIGHTS.with_suffix(".json").read_text())
    return tt.load_runs(), meta


def test_stored_runs_are_the_experiment_and_stay_small(stored):
    runs, meta = stored
    assert tt.WEIGHTS.stat().st_size < 2e6
    expected = {tt.run_name(k, s) for k in tt.KINDS for s in tt.SEEDS}
    # runs of the experiment only, every kind at least once, each with its record
    assert set(runs) <= expected and set(runs) == set(meta["runs"])
    assert {te.kind_of(name) for name in runs} == set(tt.KINDS)
    for name, model in runs.items():
        kind = te.kind_of(name)
        attend, bi = tt.KINDS[kind]
        assert (model.attend, model.bidirectional) == (attend, bi)
        assert model.cell == tt.KIND_OPTIONS.get(kind, {}).get("cell", "tanh")
        assert model.n_parameters() == tt.init_run(kind, 0).n_parameters(), name
        h = model.history
        # trained to convergence: the rule stopped it before its kind's budget cap
        cap = tt.CONFIG["max_steps"] * tt.BUDGET_FACTOR.get(kind, 1)
        assert h["stopped_at"][0] < cap, name
        assert h["best_step"][0] == h["step"][int(np.argmin(h["validation_loss"]))]
    assert meta["config"] == {
        k: list(v) if isinstance(v, tuple) else v for k, v in tt.CONFIG.items()
    }
    # one run by its kind and seed, as chapters 2 and 8 read them
    one = tt.load_model("attention-forward", 0)
    np.testing.assert_array_equal(
        one.params["W_k"], runs["attention-forward-seed0"].params["W_k"]
    )
    assert set(tt.load_runs(tt.WEIGHTS)) == set(runs)


def test_every_seed_of_the_experiment_is_stored(stored):
    runs, _ = stored
    assert set(runs) == {tt.run_name(k, s) for k in tt.KINDS for s in tt.SEEDS}


def test_stored_runs_reproduce_the_recorded_evaluation(stored):
    """The float32 weights in the repository give the held-out numbers that `make train`
    measured on its float64 models (the .json beside them), which the bottleneck chapter
    prints."""
    runs, meta = stored
    lengths = (5, 20, 40)  # a sample of the test lengths keeps this test short
    evaluation = te.evaluate_runs(runs, lengths)
    for name, scores in evaluation.items():
        recorded = {r["length"]: r for r in meta["held_out"][name]}
        for s in scores:
            r = recorded[s.length]
            # float32 storage may flip a rare near-tie: allow one word in 1,000
            for field in ("greedy", "teacher_forced"):
                assert abs(getattr(s, field) - r[field]) <= 1e-3, (name, field)
            assert abs(s.sentence - r["sentence"]) <= 5e-3, name
            for field in ("alignment_kept", "alignment_near", "alignment_verb"):
                if r[field] is None:
                    assert np.isnan(getattr(s, field))
                else:
                    assert abs(getattr(s, field) - r[field]) <= 2e-3, (name, field)


def test_the_figures_check_their_input():
    import matplotlib.pyplot as plt

    from book_support.figures import alignment_heatmaps, length_curves, position_curves

    ok = {"mean": [0.5, 0.4], "min": [0.4, 0.3], "max": [0.6, 0.5]}
    fig = length_curves(
        [5, 10], {"a": {"token": ok, "sentence": ok}}, trained_up_to=7, chance=0.04
    )
    assert len(fig.axes) == 2
    plt.close(fig)
    fig = position_curves(2, {"a": {"teacher_forced": ok, "greedy": ok}})
    plt.close(fig)
    with pytest.raises(ValueError, match="accuracies"):
        length_curves(
            [5, 10], {"a": {"token": dict(ok, mean=[1.0, 50.0]), "sentence": ok}}
        )
    with pytest.raises(ValueError, match="min <= mean"):
        position_curves(
            2, {"a": {"teacher_forced": dict(ok, min=[0.9, 0.3]), "greedy": ok}}
        )
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


def test_write_summary_records_the_runs_and_their_scores(tmp_path):
    import json

    run = tt.train_run("attention-forward", 0, TINY)
    name = tt.run_name("attention-forward", 0)
    evaluation = tt.write_summary({name: run}, tmp_path / "m.npz")
    meta = json.loads((tmp_path / "m.json").read_text())
    assert meta["runs"][name]["stopped_at"] == run.history["stopped_at"][0]
    assert meta["runs"][name]["best_step"] == run.history["best_step"][0]
    held_out = meta["held_out"][name]
    assert [r["length"] for r in held_out] == list(te.TEST_LENGTHS)
    assert held_out[0]["greedy"] == pytest.approx(evaluation[name][0].greedy)
