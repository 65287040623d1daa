"""Tests of the induction-head task, its scores, and the stored models' ablation.

The scores are checked on hand-made attention patterns whose answer is known; the
ablation on the stored models (``make train-lm``): removing the heads the patterns
single out (the layer-0 head with the highest previous-token score, the layer-1 heads
with an induction score above 0.3) returns the repeated half's loss to chance, ln V,
while removing the other heads of layer 0 leaves it near the intact model's.
"""

import numpy as np
import pytest

from attnlib.models import language_model as lm
from book_support.experiments import induction

TASK = induction.TASK


def test_sequences_repeat_as_described():
    rng = np.random.default_rng(0)
    seqs = induction.make_sequences(rng, 50)
    assert seqs.shape == (50, TASK.length)
    np.testing.assert_array_equal(seqs[:, : TASK.half], seqs[:, TASK.half :])
    short = induction.make_sequences(rng, 5, period=12)
    np.testing.assert_array_equal(short[:, 12:24], short[:, :12])
    train = induction.make_training_sequences(rng, 200)
    assert train.min() >= 0 and train.max() < TASK.vocab_size
    # every training sequence holds a segment of >= 6 tokens that occurs twice
    for row in train[:20]:
        found = any(
            np.array_equal(row[a : a + 6], row[b : b + 6])
            for a in range(TASK.length - 6)
            for b in range(a + 6, TASK.length - 5)
        )
        assert found


def test_scores_of_known_patterns():
    L, h = TASK.length - 1, TASK.half
    previous = np.zeros((L, L))
    previous[0, 0] = 1.0
    previous[np.arange(1, L), np.arange(L - 1)] = (
        1.0  # every query on its left neighbour
    )
    copying = np.tril(np.ones((L, L))) / np.arange(1, L + 1)[:, None]  # uniform rows
    t = np.arange(h, L)
    copying[t] = 0.0
    copying[t, t - h + 1] = 1.0  # the position after the earlier copy
    weights = [np.stack([previous, copying])[None], np.stack([copying, previous])[None]]
    prev = induction.previous_token_scores(weights)  # (2 layers, 2 heads)
    ind = induction.induction_scores(weights)
    assert prev[0, 0] == pytest.approx(1.0) and prev[1, 1] == pytest.approx(1.0)
    assert ind[0, 1] == pytest.approx(1.0) and ind[1, 0] == pytest.approx(1.0)
    assert ind[0, 0] == pytest.approx(0.0)


def test_half_losses_count_the_right_targets():
    config = induction.model_config()
    params = lm.init_language_model(config, 0, dtype=np.float64)
    params = {k: np.zeros_like(v) for k, v in params.items()}  # every logit 0: uniform
    seqs = induction.make_sequences(np.random.default_rng(1), 4)
    first, repeated = induction.half_losses(params, config, seqs)
    assert first == pytest.approx(TASK.chance) and repeated == pytest.approx(
        TASK.chance
    )
    mask = induction.without_heads(config, [(0, 1), (1, 3)])
    assert mask.shape == (2, 4) and mask.sum() == 6 and mask[0, 1] == 0 == mask[1, 3]


def test_previous_token_by_position_reads_the_diagonal_below():
    rng = np.random.default_rng(3)
    w = rng.dirichlet(np.ones(5), size=(7, 2, 5))  # (n, H, L, L), rows sum to 1
    by_position = induction.previous_token_by_position([w, w[:, ::-1]])
    expected = np.zeros((2, 2, 4))
    for h in range(2):
        for t in range(1, 5):
            expected[0, h, t - 1] = sum(w[i, h, t, t - 1] for i in range(7)) / 7
            expected[1, h, t - 1] = sum(w[i, 1 - h, t, t - 1] for i in range(7)) / 7
    np.testing.assert_allclose(by_position, expected)
    np.testing.assert_allclose(
        induction.previous_token_scores([w]), expected[:1].mean(axis=-1)
    )


def test_previous_token_scores_by_period_score_each_layout(stored):
    config, models, _, _ = stored
    periods = (12, 32)
    scores = induction.previous_token_scores_by_period(
        models[0], config, periods, n=40, seed=4
    )
    assert scores.shape == (2, config.num_layers, config.num_heads)
    for k, period in enumerate(periods):
        rng = np.random.default_rng([4, period])
        seqs = induction.make_sequences(rng, 40, period=period)
        _, weights = lm.forward(models[0], config, seqs[:, :-1])
        for layer in range(config.num_layers):
            w = weights[layer]  # (40, H, 31, 31)
            mean = [
                np.mean([w[:, h, t, t - 1] for t in range(1, w.shape[-1])])
                for h in range(config.num_heads)
            ]
            np.testing.assert_allclose(scores[k, layer], mean, rtol=1e-5)
    with pytest.raises(ValueError, match="periods"):
        induction.previous_token_scores_by_period(models[0], config, ())


@pytest.fixture(scope="module")
def stored():
    config, models, meta = induction.load()
    seqs = induction.make_sequences(np.random.default_rng(0), 500)
    return config, models, meta, seqs


def test_stored_models_are_small_and_learned_the_repeat(stored):
    config, models, meta, seqs = stored
    assert induction.load()[0] == config == induction.model_config()
    assert set(models) == set(meta["seeds"]) | {"shortcut"}
    assert induction.WEIGHTS.stat().st_size < 1_000_000
    for seed in meta["seeds"]:
        first, repeated = induction.half_losses(models[seed], config, seqs)
        assert abs(first - TASK.chance) < 0.1  # the first half stays at chance
        assert repeated < 0.5 * TASK.chance  # the repeat is predicted


def test_the_shortcut_model_fails_when_the_repeat_moves(stored):
    config, models, _, _ = stored
    moved = induction.make_sequences(np.random.default_rng(2), 300, period=12)
    _, trained = induction.half_losses(models[0], config, moved, period=12)
    _, shortcut = induction.half_losses(models["shortcut"], config, moved, period=12)
    assert shortcut > 0.8 * TASK.chance > trained


def test_ablation_of_the_circuit_returns_the_repeat_to_chance(stored):
    config, models, meta, seqs = stored
    for seed in meta["seeds"]:
        params = models[seed]
        _, weights = lm.forward(params, config, seqs[:, :-1])
        heads = induction.circuit_heads(weights)
        _, intact = induction.half_losses(params, config, seqs)

        def without(key, params=params):
            mask = induction.without_heads(config, heads[key])
            return induction.half_losses(params, config, seqs, head_mask=mask)[1]

        assert heads["copying heads"], f"seed {seed}: no copying head"
        assert without("previous-token head") > 0.8 * TASK.chance
        assert without("copying heads") > 0.8 * TASK.chance
        assert without("other layer-0 heads") < intact + 0.25 * (TASK.chance - intact)


def test_drop_step_finds_the_first_step_below_half_of_chance():
    history = {
        "step": [10, 20, 30, 40],
        "extra": {"repeated_half": [3.4, 3.0, 1.2, 0.5]},
    }
    assert induction.drop_step(history, 3.4) == 30
    assert (
        induction.drop_step({**history, "extra": {"repeated_half": [3.4] * 4}}, 3.4)
        is None
    )


def test_training_sequences_report_the_layout_of_their_two_copies():
    plain = induction.make_training_sequences(np.random.default_rng(3), 40)
    seqs, m, a, b = induction.make_training_sequences(
        np.random.default_rng(3), 40, return_layout=True
    )
    np.testing.assert_array_equal(seqs, plain)  # the same draws either way
    assert np.all((m >= TASK.min_segment) & (m <= TASK.max_segment))
    assert np.all(a + m <= b) and np.all(b + m <= TASK.length)
    for row, k, i, j in zip(seqs, m, a, b):
        np.testing.assert_array_equal(row[i : i + k], row[j : j + k])


def test_measurement_forward_matches_the_model_and_its_head_mask(stored):
    import induction_heads_measurements as im

    config, models = stored[:2]
    p = models[0]
    tokens = induction.make_sequences(np.random.default_rng(4), 8)[:, :-1]
    ref, ref_w = lm.forward(p, config, tokens)
    logits, weights, _ = im.run(p, config, tokens)
    np.testing.assert_allclose(logits, ref, atol=1e-5)
    np.testing.assert_allclose(weights[1], ref_w[1], atol=1e-6)
    masked, _ = lm.forward(
        p, config, tokens, head_mask=induction.without_heads(config, [(0, 2)])
    )
    np.testing.assert_allclose(
        im.run(p, config, tokens, {(0, 2): 0.0})[0], masked, atol=1e-5
    )
    # a patch of the keys only changes layer 1's weights, never layer 0's
    _, patched, _ = im.run(p, config, tokens, {(0, 2): 0.0}, only="keys")
    np.testing.assert_allclose(patched[0], ref_w[0], atol=1e-6)
    assert not np.allclose(patched[1], ref_w[1], atol=1e-3)
    with pytest.raises(ValueError, match="lacks"):
        im.run(p, config, tokens, {(2, 0): 0.0})


def test_copy_positions_read_the_right_targets():
    import induction_heads_measurements as im

    # losses equal to the target's position: token j of a copy starting at b is at b + j
    losses = np.tile(np.arange(1, TASK.length, dtype=float), (2, 1))  # (2, 31)
    m, b = np.array([6, 8]), np.array([10, 20])
    by = im.loss_by_copy_position(losses, m, b)
    assert by[0] == 15.0 and by[5] == 20.0  # (10 + 0 + 20 + 0) / 2, (15 + 25) / 2
    assert by[7] == 27.0 and np.isnan(by[8:]).all()  # only the copy of 8 tokens
    assert im.after_copy_loss(losses, m, b) == (16 + 28) / 2
    assert im.copy_loss(losses, m, b) == np.mean([12, 13, 14, 15, *range(22, 28)])


# The measurements of the chapter on a tiny model with random weights, against a
# forward pass written out position by position with plain loops.


def _tiny_model(num_layers=2, num_heads=2, d_model=4, vocab=5, context=6, seed=0):
    config = lm.LMConfig(
        vocab_size=vocab,
        context=context,
        d_model=d_model,
        num_layers=num_layers,
        num_heads=num_heads,
        d_ff=0,
        tied=False,
    )
    params = lm.init_language_model(config, seed, dtype=np.float64)
    rng = np.random.default_rng(seed + 1)
    params = {k: v + rng.normal(0, 0.5, v.shape) for k, v in params.items()}
    return config, params


def _norm_by_hand(row, gain, bias):
    mean = sum(row) / len(row)
    var = sum((v - mean) ** 2 for v in row) / len(row)
    return [
        (v - mean) / np.sqrt(var + 1e-5) * g + c for v, g, c in zip(row, gain, bias)
    ]


def _layer_by_hand(p, rows_q, rows_k, rows_v, num_heads):
    """Causal multi-head attention of one sequence, one head and one query at a time:
    returns every head's output, a list [head][position] of vectors."""
    d = len(rows_q[0])
    d_k = d // num_heads
    cols = lambda h: range(h * d_k, (h + 1) * d_k)  # noqa: E731
    project = lambda row, W: [sum(row[i] * W[i][j] for i in range(d)) for j in range(d)]  # noqa: E731
    q = [project(r, p["W_Q"]) for r in rows_q]
    k = [project(r, p["W_K"]) for r in rows_k]
    v = [project(r, p["W_V"]) for r in rows_v]
    out = []
    for h in range(num_heads):
        per_position = []
        for t in range(len(rows_q)):
            scores = [
                sum(q[t][c] * k[s][c] for c in cols(h)) / np.sqrt(d_k)
                for s in range(t + 1)
            ]
            top = max(scores)
            e = [np.exp(x - top) for x in scores]
            w = [x / sum(e) for x in e]
            per_position.append(
                [sum(w[s] * v[s][c] for s in range(t + 1)) for c in cols(h)]
            )
        out.append(per_position)
    return out


def _write(stream, heads, W_O):
    """The stream plus the heads' outputs, concatenated, times W_O."""
    d = len(stream[0])
    new = []
    for t, row in enumerate(stream):
        cat = [x for head in heads for x in head[t]]
        new.append(
            [row[j] + sum(cat[i] * W_O[i][j] for i in range(d)) for j in range(d)]
        )
    return new


def _forward_by_hand(params, config, seq, replace=None, only=None):
    """Logits of one sequence, with ``replace`` {(layer, head): outputs [t][c]} and
    the replaced outputs reaching only the ``only`` input of layer 1."""
    replace = replace or {}
    stream = [
        [
            params["tok_emb"][tok][j] + params["pos_emb"][t][j]
            for j in range(config.d_model)
        ]
        for t, tok in enumerate(seq)
    ]
    patched_stream = stream
    for r in range(config.num_layers):
        p = lm.block_params(params, r)
        a = [_norm_by_hand(row, p["ln1_gain"], p["ln1_bias"]) for row in stream]
        b = [_norm_by_hand(row, p["ln1_gain"], p["ln1_bias"]) for row in patched_stream]
        inputs = [b if only == path else a for path in ("queries", "keys", "values")]
        heads = _layer_by_hand(p, *inputs, config.num_heads)
        replaced = [replace.get((r, h), heads[h]) for h in range(config.num_heads)]
        if only is None:
            stream = patched_stream = _write(stream, replaced, p["W_O"])
        else:
            patched_stream = _write(stream, replaced, p["W_O"])
            stream = _write(stream, heads, p["W_O"])
    final = [
        _norm_by_hand(row, params["lnf_gain"], params["lnf_bias"]) for row in stream
    ]
    return np.array([params["lm_head"] @ np.array(row) for row in final])


def test_resample_ablation_puts_in_the_heads_output_on_the_other_sequence():
    import induction_heads_measurements as im

    config, params = _tiny_model()
    tokens = np.array([[0, 1, 2, 3, 1, 2, 4], [4, 4, 0, 3, 2, 1, 0]])
    source = np.array([[3, 0, 0, 1, 4, 2, 2], [1, 2, 3, 4, 0, 1, 2]])
    resampled = im.head_outputs(params, config, source)
    assert resampled[(0, 1)].shape == (2, 6, 2)
    for layer, head in [(0, 1), (1, 0)]:
        logits, _, _ = im.run(
            params, config, tokens[:, :-1], {(layer, head): resampled[(layer, head)]}
        )
        for i in range(2):
            # the head's outputs on source[i], by hand, then tokens[i] with them
            d = config.d_model
            src = [
                [params["tok_emb"][s][j] + params["pos_emb"][t][j] for j in range(d)]
                for t, s in enumerate(source[i, :-1])
            ]
            for r in range(layer + 1):
                p = lm.block_params(params, r)
                a = [_norm_by_hand(row, p["ln1_gain"], p["ln1_bias"]) for row in src]
                heads = _layer_by_hand(p, a, a, a, config.num_heads)
                src = _write(src, heads, p["W_O"])
            expected = _forward_by_hand(
                params, config, tokens[i, :-1], {(layer, head): heads[head]}
            )
            np.testing.assert_allclose(logits[i], expected, atol=1e-9)


def test_a_patch_of_one_path_reaches_only_that_input_of_layer_1():
    import induction_heads_measurements as im

    config, params = _tiny_model(seed=3)
    tokens = np.array([[0, 1, 2, 3, 1, 2], [4, 4, 0, 3, 2, 1]])
    mean = np.array([0.5, -1.0])  # the replacement of head 1 of layer 0
    for only in ("queries", "keys", "values"):
        logits, weights, _ = im.run(params, config, tokens, {(0, 1): mean}, only=only)
        for i in range(2):
            expected = _forward_by_hand(
                params, config, tokens[i], {(0, 1): [list(mean)] * 6}, only=only
            )
            np.testing.assert_allclose(logits[i], expected, atol=1e-9)
        intact_weights = im.run(params, config, tokens)[1]
        np.testing.assert_allclose(weights[0], intact_weights[0])
        # a value cannot change an attention weight
        assert np.allclose(weights[1], intact_weights[1]) == (only == "values")
    with pytest.raises(ValueError, match="only"):
        im.run(params, config, tokens, {(0, 1): mean}, only="output")


def test_continue_probability_counts_the_layouts_that_fit():
    import induction_heads_measurements as im

    L = TASK.length

    def by_counting(a, b, j):
        # P(m > j | m >= j, a, b) from every (m, a, b) the generator can draw
        weight = {}
        for m in range(TASK.min_segment, TASK.max_segment + 1):
            for a2 in range(0, L - 2 * m + 1):
                for b2 in range(a2 + m, L - m + 1):
                    if (a2, b2) == (a, b) and m >= j:
                        weight[m] = 1 / 7 / (L - 2 * m + 1) / (L - m - (a2 + m) + 1)
        return sum(w for m, w in weight.items() if m > j) / sum(weight.values())

    for a, b, j in [(0, 20, 11), (3, 12, 7), (0, 6, 5), (10, 20, 2), (5, 25, 6)]:
        assert im.continue_probability(a, b, j) == pytest.approx(by_counting(a, b, j))
    assert im.continue_probability(0, 20, 11) == pytest.approx(121 / 202)
    floor = im.calibrated_floor(np.array([6, 12]), np.array([0, 0]), np.array([6, 20]))
    np.testing.assert_allclose(floor[2:6], 0.0, atol=1e-12)  # m >= 6 always
    p = 121 / 202  # only the second sequence has a token 11
    assert floor[11] == pytest.approx(-np.log(p + (1 - p) / TASK.vocab_size))
    assert np.isnan(floor[:2]).all()


def test_entropy_and_probability_of_the_copy_targets():
    import induction_heads_measurements as im

    rows, queries = im.copy_targets(np.array([4, 3]), np.array([5, 10]))
    np.testing.assert_array_equal(rows, [0, 0, 1])
    np.testing.assert_array_equal(queries, [6, 7, 11])  # b + j - 1, j = 2 .. m - 1
    logits = np.zeros((2, 12, 4))  # a uniform guess over 4 tokens
    logits[1, 11, 2] = 50.0  # a certain one
    tokens = np.zeros((2, 13), dtype=int)
    tokens[1, 12] = 2
    assert im.entropy_at(logits, rows[:2], queries[:2]) == pytest.approx(np.log(4))
    assert im.entropy_at(logits, rows[2:], queries[2:]) == pytest.approx(0, abs=1e-12)
    assert im.probability_of(logits, tokens, rows, queries) == pytest.approx(
        (0.25 + 0.25 + 1.0) / 3
    )


def test_training_draws_replay_the_batches_of_training():
    import induction_heads_measurements as im

    from attnlib.models.lm_training import TrainConfig, train

    config = induction.model_config()
    seen = []

    def draw(rng, batch):
        seqs = induction.make_sequences(rng, batch)
        seen.append(seqs)
        return seqs[:, :-1], seqs[:, 1:]

    fixed = induction.make_sequences(np.random.default_rng(9), 2)
    windows = (fixed[:, :-1], fixed[:, 1:])
    cfg = TrainConfig(max_steps=3, batch=4, warmup=1, eval_every=3, seed=7)
    train(
        config,
        None,
        cfg,
        params=lm.init_language_model(config, 7),
        batches=(draw, (windows, windows)),
    )
    np.testing.assert_array_equal(
        im.training_draws(7, 3, 4, shortcut=True), np.concatenate(seen)
    )
