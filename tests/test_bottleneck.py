"""Tests for attnlib.models.bottleneck: the RNN encoder, its Jacobians, the two readers,
   the experiment.

Expected values are computed independently: by hand with ``math``, with a column-vector
loop, by finite differences, with ``numpy.linalg.lstsq``, or from inequalities that must
hold.
"""

from __future__ import annotations

import math

import bottleneck_exercises as ex
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib.models import bottleneck as bn


def _params(m=2, h=4, seed=0, rho=0.9):
    return bn.init_rnn(
        np.random.default_rng(seed), m, h, spectral_radius=rho, input_scale=0.8
    )


def _loop_column_vectors(x, W_x, W_h, b):
    """Independent RNN: one sequence, column vectors,
    h = tanh(W_x^T x + W_h^T h + b)."""
    h = np.zeros(W_h.shape[0])
    out = []
    for x_t in x:
        h = np.tanh(W_x.T.dot(x_t) + W_h.T.dot(h) + b)
        out.append(h)
    return np.array(out)


# ---------------------------------------------------------------- rnn_encode


def test_hand_computed_two_steps():
    # m = h = 1, W_x = 1, W_h = 0.5, b = 0, inputs 1 then 0.
    states, final = bn.rnn_encode([[1.0], [0.0]], [[1.0]], [[0.5]], [0.0])
    h1 = math.tanh(1.0)
    h2 = math.tanh(0.5 * h1)
    np.testing.assert_allclose(states[:, 0], [h1, h2], atol=1e-12)
    assert abs(h1 - 0.7616) < 1e-4 and abs(h2 - 0.3634) < 1e-4
    np.testing.assert_allclose(final, [h2])


def test_matches_column_vector_loop_and_batches():
    W_x, W_h, b = _params(m=3, h=5)
    b = np.linspace(-0.2, 0.2, 5)
    x = np.random.default_rng(1).standard_normal((2, 4, 7, 3))  # batch axes (2, 4)
    states, final = bn.rnn_encode(x, W_x, W_h, b)
    assert states.shape == (2, 4, 7, 5) and final.shape == (2, 4, 5)
    for i in range(2):
        for j in range(4):
            np.testing.assert_allclose(
                states[i, j], _loop_column_vectors(x[i, j], W_x, W_h, b), atol=1e-12
            )
    np.testing.assert_array_equal(final, states[..., -1, :])


@settings(max_examples=25, deadline=None)
@given(T=st.integers(2, 9), split=st.integers(1, 8), seed=st.integers(0, 10_000))
def test_continuing_from_h0_equals_one_pass(T, split, seed):
    split = min(split, T - 1)
    W_x, W_h, b = _params(seed=seed)
    x = np.random.default_rng(seed).standard_normal((T, 2))
    whole, _ = bn.rnn_encode(x, W_x, W_h, b)
    first, h_mid = bn.rnn_encode(x[:split], W_x, W_h, b)
    second, _ = bn.rnn_encode(x[split:], W_x, W_h, b, h0=h_mid)
    np.testing.assert_allclose(np.concatenate([first, second]), whole, atol=1e-12)


def test_float32_stays_float32():
    W_x, W_h, b = (a.astype(np.float32) for a in _params())
    x = np.ones((3, 2), dtype=np.float32)
    states, final = bn.rnn_encode(x, W_x, W_h, b)
    assert states.dtype == np.float32 and final.dtype == np.float32
    ref, _ = bn.rnn_encode(x.astype(np.float64), *_params())
    np.testing.assert_allclose(states, ref, atol=1e-5)


@pytest.mark.parametrize(
    "args, words",
    [
        (
            (np.ones(3), np.ones((3, 4)), np.eye(4), np.zeros(4)),
            ["inputs", "(..., T, m)"],
        ),
        (
            (np.ones((5, 2)), np.ones((3, 4)), np.eye(4), np.zeros(4)),
            ["W_x", "(3, 4)", "(5, 2)"],
        ),
        ((np.ones((5, 3)), np.ones((3, 4)), np.eye(3), np.zeros(4)), ["W_h", "(3, 3)"]),
        ((np.ones((5, 3)), np.ones((3, 4)), np.eye(4), np.zeros(3)), ["b", "(3,)"]),
        (
            (np.ones((0, 3)), np.ones((3, 4)), np.eye(4), np.zeros(4)),
            ["at least one time step"],
        ),
    ],
)
def test_bad_shapes_raise_value_error_naming_them(args, words):
    with pytest.raises(ValueError) as err:
        bn.rnn_encode(*args)
    for w in words:
        assert w in str(err.value)


@pytest.mark.parametrize("which", ["inputs", "W_x", "W_h", "b"])
def test_nan_or_inf_is_refused_not_propagated(which):
    W_x, W_h, b = (a.copy() for a in _params())
    args = {"inputs": np.ones((3, 2)), "W_x": W_x, "W_h": W_h, "b": b}
    args[which].flat[0] = np.nan if which != "b" else np.inf
    with pytest.raises(ValueError, match=which):
        bn.rnn_encode(args["inputs"], args["W_x"], args["W_h"], args["b"])
    F = np.random.default_rng(0).standard_normal((20, 2))
    F[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        bn.linear_recovery_r2(
            F, F, np.ones((5, 2)) + np.arange(5)[:, None], np.arange(10.0).reshape(5, 2)
        )


def test_float16_round_trip():
    W_x, W_h, b = _params()
    x = np.random.default_rng(4).standard_normal((5, 2))
    s16, f16 = bn.rnn_encode(
        x.astype(np.float16),
        W_x.astype(np.float16),
        W_h.astype(np.float16),
        b.astype(np.float16),
    )
    s64, _ = bn.rnn_encode(
        x.astype(np.float16).astype(float),
        W_x.astype(np.float16).astype(float),
        W_h.astype(np.float16).astype(float),
        b.astype(np.float16).astype(float),
    )
    assert s16.dtype == np.float16 and f16.dtype == np.float16
    np.testing.assert_allclose(s16.astype(float), s64, atol=1e-3)
    J16 = bn.final_state_jacobians(
        x.astype(np.float16),
        W_x.astype(np.float16),
        W_h.astype(np.float16),
        b.astype(np.float16),
    )
    assert J16.dtype == np.float16


def test_bad_h0_and_dtype():
    W_x, W_h, b = _params()
    with pytest.raises(ValueError, match="h0"):
        bn.rnn_encode(np.ones((3, 2)), W_x, W_h, b, h0=np.zeros(5))
    with pytest.raises(TypeError, match="complex"):
        bn.rnn_encode(np.ones((3, 2), dtype=complex), W_x, W_h, b)


# ---------------------------------------------------------------- init_rnn


def test_init_rnn_is_seeded_and_has_the_asked_spectral_radius():
    a = bn.init_rnn(np.random.default_rng(3), 2, 6, spectral_radius=0.7)
    b = bn.init_rnn(np.random.default_rng(3), 2, 6, spectral_radius=0.7)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert a.W_x.shape == (2, 6) and a.W_h.shape == (6, 6) and a.b.shape == (6,)
    np.testing.assert_allclose(np.linalg.svd(a.W_h, compute_uv=False), 0.7, atol=1e-12)
    np.testing.assert_allclose(np.abs(np.linalg.eigvals(a.W_h)), 0.7, atol=1e-9)
    with pytest.raises(ValueError):
        bn.init_rnn(np.random.default_rng(0), 0, 4)
    with pytest.raises(ValueError):
        bn.init_rnn(np.random.default_rng(0), 2, 4, spectral_radius=-1)


# ---------------------------------------------------------------- Jacobians


def test_jacobians_match_finite_differences():
    W_x, W_h, b = _params(m=2, h=3, rho=1.2)
    x = np.random.default_rng(5).standard_normal((6, 2))
    J = bn.final_state_jacobians(x, W_x, W_h, b)
    assert J.shape == (6, 3, 2)
    eps = 1e-6
    for t in range(6):
        for j in range(2):
            xp, xm = x.copy(), x.copy()
            xp[t, j] += eps
            xm[t, j] -= eps
            fd = (
                bn.rnn_encode(xp, W_x, W_h, b)[1] - bn.rnn_encode(xm, W_x, W_h, b)[1]
            ) / (2 * eps)
            np.testing.assert_allclose(J[t, :, j], fd, atol=1e-7)


def test_jacobians_shrink_at_least_geometrically_when_contractive():
    # |tanh'| <= 1 and every singular value of W_h is rho, so each step shrinks by <=
    # rho: ||J_t||_2 <= rho^(T - t) * ||W_x||_2 (t counted from 1).
    rho = 0.8
    W_x, W_h, b = _params(m=2, h=8, rho=rho)
    x = np.random.default_rng(6).standard_normal((3, 20, 2))
    J = bn.final_state_jacobians(x, W_x, W_h, b)
    norms = np.linalg.norm(J, ord=2, axis=(-2, -1))  # (3, 20)
    bound = rho ** np.arange(19, -1, -1) * np.linalg.norm(W_x, ord=2)
    assert np.all(norms <= bound + 1e-12)
    assert np.all(norms[:, 0] < 0.05 * norms[:, -1])


# ---------------------------------------------------------------- the attention reader


def test_attend_to_positions_fetches_the_asked_states():
    states = np.random.default_rng(7).standard_normal((4, 6, 3))
    ctx, w = bn.attend_to_positions(states, [0, 5, 2, -1], sharpness=5.0)
    assert ctx.shape == (4, 4, 3) and w.shape == (4, 6)
    on = math.exp(5.0) / (math.exp(5.0) + 5)
    off = 1.0 / (math.exp(5.0) + 5)
    expected = np.full((4, 6), off)
    for row, p in enumerate([0, 5, 2, 5]):
        expected[row, p] = on
    np.testing.assert_allclose(w, expected, atol=1e-12)
    np.testing.assert_allclose(
        ctx, np.einsum("qt,bth->bqh", expected, states), atol=1e-12
    )
    sharp, _ = bn.attend_to_positions(states, [3], sharpness=40.0)
    np.testing.assert_allclose(sharp[:, 0], states[:, 3], atol=1e-12)


@pytest.mark.parametrize(
    "positions, sharpness", [([6], 20.0), ([-7], 20.0), ([0.5], 20.0), ([1], 0.0)]
)
def test_attend_to_positions_rejects_bad_requests(positions, sharpness):
    with pytest.raises(ValueError):
        bn.attend_to_positions(np.zeros((6, 3)), positions, sharpness=sharpness)


def test_decoder_context_matches_an_explicit_loop():
    rng = np.random.default_rng(8)
    H = rng.standard_normal((5, 4))  # 5 encoder states of size 4
    S = rng.standard_normal((3, 2))  # 3 decoder steps, state size 2
    W_q, W_k, w_v = (
        rng.standard_normal((2, 6)),
        rng.standard_normal((4, 6)),
        rng.standard_normal(6),
    )
    ctx, w = bn.decoder_context(S, H, W_q, W_k, w_v)
    for i in range(3):
        e = np.array(
            [
                sum(
                    w_v[a] * math.tanh(S[i] @ W_q[:, a] + H[j] @ W_k[:, a])
                    for a in range(6)
                )
                for j in range(5)
            ]
        )
        alpha = np.exp(e) / np.exp(e).sum()
        np.testing.assert_allclose(w[i], alpha, atol=1e-12)
        np.testing.assert_allclose(
            ctx[i], sum(alpha[j] * H[j] for j in range(5)), atol=1e-12
        )
    # a different decoder state gives a different context: the context is not computed
    # once
    assert not np.allclose(ctx[0], ctx[1])


def test_decoder_exercise_by_hand():
    d = ex.DECODER_EXERCISE
    ctx, w = bn.decoder_context(
        d["decoder_state"][None], d["encoder_states"], d["W_q"], d["W_k"], d["w_v"]
    )
    e = [
        math.tanh(2) + math.tanh(-1),
        math.tanh(1) + math.tanh(1),
        math.tanh(1) + math.tanh(-1),
    ]
    z = sum(math.exp(v) for v in e)
    alpha = [math.exp(v) / z for v in e]
    np.testing.assert_allclose(w[0], alpha, atol=1e-12)
    np.testing.assert_allclose(w[0], [0.1798, 0.6734, 0.1468], atol=1e-4)
    np.testing.assert_allclose(ctx[0], [alpha[0], 2 * alpha[1]], atol=1e-12)


# ---------------------------------------------------------------- linear reader and
# ceiling


def test_r2_matches_lstsq_with_intercept():
    rng = np.random.default_rng(9)
    F = rng.standard_normal((300, 5))
    Y = (
        F[:, :2] @ np.array([[1.0, 0.5], [-2.0, 0.0]])
        + 0.7 * rng.standard_normal((300, 2))
        + 3.0
    )
    r2 = bn.linear_recovery_r2(F[:200], Y[:200], F[200:], Y[200:])
    X = np.column_stack([F[:200], np.ones(200)])
    coef = np.linalg.lstsq(X, Y[:200], rcond=None)[0]
    pred = np.column_stack([F[200:], np.ones(100)]) @ coef
    yt = Y[200:]
    want = np.mean(
        [
            1
            - np.sum((yt[:, i] - pred[:, i]) ** 2)
            / np.sum((yt[:, i] - yt[:, i].mean()) ** 2)
            for i in range(2)
        ]
    )
    assert isinstance(r2, float)
    assert abs(r2 - want) < 1e-10


def test_r2_extremes_and_batching():
    rng = np.random.default_rng(10)
    F = rng.standard_normal((2, 400, 3))
    exact = F @ np.array([[1.0], [2.0], [-1.0]]) + 5.0
    noise = rng.standard_normal((2, 400, 1))
    r_exact = bn.linear_recovery_r2(
        F[:, :300], exact[:, :300], F[:, 300:], exact[:, 300:]
    )
    r_noise = bn.linear_recovery_r2(
        F[:, :300], noise[:, :300], F[:, 300:], noise[:, 300:]
    )
    assert r_exact.shape == (2,)
    np.testing.assert_allclose(r_exact, 1.0, atol=1e-10)
    assert np.all(np.abs(r_noise) < 0.1)
    one = bn.linear_recovery_r2(F[1, :300], noise[1, :300], F[1, 300:], noise[1, 300:])
    assert abs(one - r_noise[1]) < 1e-12


def test_r2_errors():
    F, Y = np.zeros((10, 3)), np.zeros((10, 1))
    with pytest.raises(ValueError, match=r"\(9, 1\)"):
        bn.linear_recovery_r2(F, Y[:9], F, Y)
    with pytest.raises(ValueError, match="at least h \\+ 1"):
        bn.linear_recovery_r2(F[:3], Y[:3], F, np.arange(10.0)[:, None])
    with pytest.raises(ValueError, match="constant"):
        bn.linear_recovery_r2(
            np.random.default_rng(0).standard_normal((10, 3)), Y, F, Y
        )


def test_capacity_bound():
    assert bn.capacity_bound(16, 2, 32) == 0.25
    assert bn.capacity_bound(16, 2, 8) == 1.0
    assert bn.capacity_bound(16, 2, 40) == pytest.approx(0.2)
    with pytest.raises(ValueError):
        bn.capacity_bound(16, 2, 0)


# ---------------------------------------------------------------- the experiment


@pytest.fixture(scope="module")
def result():
    return bn.recovery_experiment([2, 4, 16, 32], n_train=800, n_test=400, seed=1)


def test_short_sequences_are_recovered_from_the_final_state(result):
    # h = 16 >= T * m = 4: the final state has room for everything
    assert result.final_mean[0] > 0.97


def test_final_state_reader_degrades_and_obeys_the_ceiling(result):
    means = result.final_mean
    assert np.all(np.diff(means) < 0)
    assert means[-1] < 0.3
    # sampling noise of a held-out estimate is well below 0.03 with 400 test sequences
    assert np.all(means <= result.bound + 0.03)
    # the earliest input of a 32-step sequence is lost; the latest is kept
    assert result.final_by_position[-1][0] < 0.1
    assert result.final_by_position[-1][-1] > 0.9


def test_attention_reader_stays_high(result):
    assert np.all(result.attention_mean > 0.9)
    for r in result.attention_by_position:
        assert np.all(r > 0.85)


def test_readers_agree_on_the_last_position(result):
    # asking attention for position T fetches h_T itself, the final reader's vector
    for f, a in zip(result.final_by_position, result.attention_by_position):
        assert abs(f[-1] - a[-1]) < 1e-6


def test_experiment_rejects_bad_arguments():
    with pytest.raises(ValueError):
        bn.recovery_experiment([0, 3])
    with pytest.raises(ValueError):
        bn.recovery_experiment([3], n_train=5, hidden_size=16)


# ---------------------------------------------------------------- exercise checkers


def test_check_rnn_step(capsys):
    def right(x_t, h_prev, W_x, W_h, b):
        return np.tanh(x_t @ W_x + h_prev @ W_h + b)

    def transposed(x_t, h_prev, W_x, W_h, b):
        return np.tanh(x_t @ W_x + W_h @ h_prev + b)

    def no_tanh(x_t, h_prev, W_x, W_h, b):
        return x_t @ W_x + h_prev @ W_h + b

    assert ex.check_rnn_step(right) is True
    assert ex.check_rnn_step(transposed) is False
    assert ex.check_rnn_step(no_tanh) is False
    assert "Not yet" in capsys.readouterr().out


def test_check_capacity_bound(capsys):
    assert ex.check_capacity_bound(0.2) is True
    assert ex.check_capacity_bound(8) is False
    assert "could hold" in capsys.readouterr().out
    assert ex.check_capacity_bound(1.0) is False
    assert ex.check_capacity_bound("a lot") is False


def test_check_decoder_step(capsys):
    assert ex.check_decoder_step([0.1798, 0.6734, 0.1468], [0.1798, 1.3468]) is True
    assert ex.check_decoder_step([0.2024, 1.5232, 0.0]) is False
    assert "sum to" in capsys.readouterr().out
    assert ex.check_decoder_step([1 / 3, 1 / 3, 1 / 3]) is False
    assert ex.check_decoder_step([0.1798, 0.6734, 0.1468], [0.6734, 0.1798]) is False


# the decoder step of ex-bottleneck-decoder, by hand: h' = [1, -1], W_a = U_a = I,
# v_a = [1, 1], so s_j = tanh(1 + h_j0) + tanh(-1 + h_j1)
_STATES = [[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]
_SCORES = [math.tanh(2) + math.tanh(-1), 2 * math.tanh(1), 0.0]
_WEIGHTS = [math.exp(s) / sum(math.exp(t) for t in _SCORES) for s in _SCORES]


def _mix(weights, vectors):
    return [sum(w * v[i] for w, v in zip(weights, vectors)) for i in (0, 1)]


@pytest.mark.parametrize(
    "context, words",
    [
        # the states weighted by the raw scores: [0.2024, 3.0464]
        (_mix(_SCORES, _STATES), "weights the encoder states by the raw scores"),
        (_mix([math.exp(s) for s in _SCORES], _STATES), "not yet divided by"),
        (_mix([1, 1, 1], _STATES), "plain sum of the encoder states"),
        (_mix([1 / 3] * 3, _STATES), "plain average of the encoder states"),
        (
            # the vectors tanh(h' + h_j) from inside the score, mixed by the weights
            _mix(_WEIGHTS, [[math.tanh(1 + a), math.tanh(-1 + b)] for a, b in _STATES]),
            "mixes the encoder states h_j themselves",
        ),
        ([0.3, 0.9], "multiply each encoder state by its weight"),  # no slip known
    ],
)
def test_decoder_step_names_the_mistake_in_a_wrong_context(context, words, capsys):
    assert ex.check_decoder_step(_WEIGHTS, context) is False
    out = capsys.readouterr().out
    assert "Not yet: the context vector" in out and words in out, out
    assert "Expected" not in out
    assert ex.check_decoder_step(_WEIGHTS, _mix(_WEIGHTS, _STATES)) is True


def test_a_context_right_for_wrong_weights_is_told_to_fix_the_weights(capsys):
    # the weights of the scores without the tanh, s_j = h_j0 + h_j1, and the context
    # mixed correctly from them
    no_tanh = [1.0 + 0.0, 0.0 + 2.0, 0.0]
    weights = [math.exp(s) / sum(math.exp(t) for t in no_tanh) for s in no_tanh]
    assert ex.check_decoder_step(weights, _mix(weights, _STATES)) is False
    out = capsys.readouterr().out
    assert "scores without the tanh" in out
    assert "your context follows from your weights; fix the weights first" in out
    assert "multiply each encoder state by its weight" not in out


def _lstsq_r2(Ftr, Ytr, Fte, Yte):
    """Independent reader: numpy.linalg.lstsq with an explicit column of ones."""
    coef = np.linalg.lstsq(np.column_stack([Ftr, np.ones(len(Ftr))]), Ytr, rcond=None)[
        0
    ]
    pred = np.column_stack([Fte, np.ones(len(Fte))]) @ coef
    return np.mean(1 - ((Yte - pred) ** 2).sum(0) / ((Yte - Yte.mean(0)) ** 2).sum(0))


def test_experiment_matches_a_manual_rerun():
    # Re-run the documented procedure by hand for T = 3 and compare every number.
    res = bn.recovery_experiment(
        [3], input_size=2, hidden_size=5, n_train=300, n_test=200, seed=7
    )
    rng = np.random.default_rng(7)
    params = bn.init_rnn(rng, 2, 5, spectral_radius=0.9, input_scale=0.5)
    x = rng.standard_normal((500, 3, 2))
    states = np.stack([_loop_column_vectors(seq, *params) for seq in x])  # (500, 3, 5)
    final = states[:, -1]
    for t in range(3):
        want_final = _lstsq_r2(final[:300], x[:300, t], final[300:], x[300:, t])
        want_att = _lstsq_r2(states[:300, t], x[:300, t], states[300:, t], x[300:, t])
        assert abs(res.final_by_position[0][t] - want_final) < 1e-6
        assert abs(res.attention_by_position[0][t] - want_att) < 1e-6
