"""The five harder exercises (issue 29): each checker accepts a correct solution, and
names the slip of a solution with one typical mistake.

The folded solutions in the chapters are run by tests/test_exercises_notebooks.py; the
solutions here are written independently, from the equations, with the slip put in by
hand.
"""

from __future__ import annotations

import attention_gradients_exercises as attention_gradients
import learning_exercises as primer
import multi_head_exercises as multi_head
import numpy as np
import online_softmax_exercises as online_softmax
import pytest
import rotary_exercises as rotary_ex


def _softmax(S, mask=None):
    if mask is not None:
        S = np.where(mask, S, -np.inf)
    E = np.exp(S - S.max(axis=-1, keepdims=True))
    return E / E.sum(axis=-1, keepdims=True)


# --- multi-head attention with a mask (the masks chapter)


def mha(X_q, X_kv, W_Q, W_K, W_V, W_O, num_heads, mask, *, slip=None):
    d = W_Q.shape[1]
    d_k = d // num_heads

    def split(x):
        return np.swapaxes(x.reshape(*x.shape[:-1], num_heads, d_k), -3, -2)

    Q, K, V = split(X_q @ W_Q), split(X_kv @ W_K), split(X_kv @ W_V)
    S = Q @ np.swapaxes(K, -1, -2) / np.sqrt(d_k)
    m = np.asarray(mask)[..., None, :, :]
    if slip == "after":
        A = _softmax(S) * m
    else:
        A = _softmax(S, m)
    Z = np.swapaxes(A @ V, -3, -2)
    return Z.reshape(*Z.shape[:-2], d) @ W_O


def test_multi_head_accepts_a_correct_solution(capsys):
    assert multi_head.check_masked_multi_head(mha)
    assert "Correct" in capsys.readouterr().out


def test_multi_head_names_the_mask_applied_after_the_softmax(capsys):
    def slipped(*args):
        return mha(*args, slip="after")

    assert not multi_head.check_masked_multi_head(slipped)
    assert "after the softmax" in capsys.readouterr().out


# --- rotary position embedding (the order-and-position chapter)


def rope(x, positions, *, sign=1.0):
    x = np.asarray(x, float)
    d = x.shape[-1]
    theta = 10000.0 ** (-np.arange(0, d, 2) / d)
    angle = sign * np.asarray(positions, float)[:, None] * theta
    out = np.empty_like(x)
    out[..., 0::2] = x[..., 0::2] * np.cos(angle) - x[..., 1::2] * np.sin(angle)
    out[..., 1::2] = x[..., 0::2] * np.sin(angle) + x[..., 1::2] * np.cos(angle)
    return out


def test_rotary_accepts_a_correct_solution_and_shows_the_relative_property(capsys):
    assert rotary_ex.check_rotary(rope)
    out = capsys.readouterr().out
    assert "Correct" in out and "the offset alone decides" in out
    scores = [float(s) for s in out.split("score ")[1].split(" at ")[0].split(", ")]
    assert np.ptp(scores) < 1e-3  # printed with 4 decimals: the three are equal


def test_rotary_names_the_backward_rotation(capsys):
    assert not rotary_ex.check_rotary(lambda x, p: rope(x, p, sign=-1.0))
    assert "counter-clockwise" in capsys.readouterr().out


# --- tiled attention with the online softmax (the cost chapter)


def tiled(Q, K, V, block, *, rescale=True):
    m = np.full((Q.shape[0], 1), -np.inf)
    ell = np.zeros((Q.shape[0], 1))
    acc = np.zeros((Q.shape[0], V.shape[1]))
    for start in range(0, K.shape[0], block):
        S = Q @ K[start : start + block].T / np.sqrt(Q.shape[1])
        m_new = np.maximum(m, S.max(axis=1, keepdims=True))
        E = np.exp(S - m_new)
        c = np.exp(m - m_new) if rescale else 1.0
        ell = c * ell + E.sum(axis=1, keepdims=True)
        acc = c * acc + E @ V[start : start + block]
        m = m_new
    return acc / ell


def test_tiled_accepts_a_correct_solution_and_measures_its_memory(capsys):
    assert online_softmax.check_tiled_attention(tiled)
    assert "MiB at once" in capsys.readouterr().out


def test_tiled_names_the_missing_rescaling(capsys):
    assert not online_softmax.check_tiled_attention(
        lambda Q, K, V, b: tiled(Q, K, V, b, rescale=False)
    )
    assert "exp(m_old - m_new)" in capsys.readouterr().out


def test_tiled_refuses_the_full_score_matrix(capsys):
    def full(Q, K, V, block):
        return _softmax(Q @ K.T / np.sqrt(Q.shape[1])) @ V

    assert not online_softmax.check_tiled_attention(full)
    assert "never Q @ K.T" in capsys.readouterr().out


# --- the backward pass of attention (the learned-and-computed chapter)


def backward(Q, K, V, dZ, *, jacobian=True):
    c = 1 / np.sqrt(Q.shape[1])
    A = _softmax(Q @ K.T * c)
    dA = dZ @ V.T
    dS = A * (dA - (A * dA).sum(axis=1, keepdims=True)) if jacobian else A * dA
    return dS @ K * c, dS.T @ Q * c, A.T @ dZ


def test_backward_accepts_a_correct_solution(capsys):
    assert attention_gradients.check_attention_backward(backward)
    assert "Correct" in capsys.readouterr().out


def test_backward_agrees_with_finite_differences():
    # the checker's reference is attnlib's; check the solution above independently
    rng = np.random.default_rng(1)
    Q, K, V, dZ = (rng.normal(size=s) for s in ((2, 3), (4, 3), (4, 2), (2, 2)))

    def f(Q_):
        return float((_softmax(Q_ @ K.T / np.sqrt(3)) @ V * dZ).sum())

    eps, num = 1e-6, np.zeros_like(Q)
    for idx in np.ndindex(Q.shape):
        bump = np.zeros_like(Q)
        bump[idx] = eps
        num[idx] = (f(Q + bump) - f(Q - bump)) / (2 * eps)
    assert np.allclose(backward(Q, K, V, dZ)[0], num, atol=1e-6)


def test_backward_names_the_missing_softmax_jacobian(capsys):
    assert not attention_gradients.check_attention_backward(
        lambda *a: backward(*a, jacobian=False)
    )
    assert "coupling" in capsys.readouterr().out


def test_backward_reports_a_wrong_kind_of_result(capsys):
    assert not attention_gradients.check_attention_backward(lambda *a: 0.0)
    assert "three arrays" in capsys.readouterr().out


# --- change a hyper-parameter and retrain (the learning chapter)


@pytest.fixture(scope="module")
def mean_best_steps():
    from attnlib.data.learning_task import make_split
    from attnlib.models import linear_classifier as lc

    data = make_split()

    def mean(lr):
        return float(
            np.mean(
                [lc.train(*data, learning_rate=lr, seed=s).best_step for s in (0, 1, 2)]
            )
        )

    return mean(0.01), mean(0.1)


def test_retraining_accepts_the_measurement(capsys, mean_best_steps):
    small, usual = mean_best_steps
    assert small > 5 * usual  # the effect the exercise asks the reader to predict
    assert primer.check_retraining("later", small)
    out = capsys.readouterr().out
    assert "Correct" in out and "prediction was right" in out


def test_retraining_names_the_unchanged_learning_rate(capsys, mean_best_steps):
    assert not primer.check_retraining("later", mean_best_steps[1])
    assert "learning_rate=0.01" in capsys.readouterr().out


def test_retraining_explains_a_wrong_prediction(capsys, mean_best_steps):
    assert primer.check_retraining("earlier", mean_best_steps[0])
    assert "ten times as many" in capsys.readouterr().out


@pytest.fixture(scope="module")
def best_losses():
    """Lowest validation loss of each run: seeds 0, 1, 2 at 0.01 and 0.1, the last
    validation loss at 0.01, and seeds 0 to 4 at 0.1 (the chapter's table)."""
    from attnlib.data.learning_task import make_split
    from attnlib.models import linear_classifier as lc

    data = make_split()
    runs = {
        lr: [lc.train(*data, learning_rate=lr, seed=s) for s in range(5)]
        for lr in (0.01, 0.1)
    }
    return {
        "small": [r.val_loss.min() for r in runs[0.01][:3]],
        "small_last": [r.val_loss[-1] for r in runs[0.01][:3]],
        "usual": [r.val_loss.min() for r in runs[0.1][:3]],
        "table": [r.val_loss.min() for r in runs[0.1]],
    }


def test_retrained_losses_accept_the_measurement_and_the_right_verdict(
    capsys, best_losses
):
    small, table = best_losses["small"], best_losses["table"]
    # the chapter's rule: a difference no larger than the spread over seeds
    assert abs(np.mean(small) - np.mean(table)) <= np.ptp(table)
    assert primer.check_retrained_losses(small, "about the same")
    out = capsys.readouterr().out
    assert out.startswith("Correct") and "Your verdict is right" in out
    assert f"less than their spread of {np.ptp(table):.3f}" in out


@pytest.mark.parametrize("verdict", ["better", "worse"])
def test_retrained_losses_a_difference_within_the_spread_is_not_one(
    verdict, capsys, best_losses
):
    assert not primer.check_retrained_losses(best_losses["small"], verdict)
    out = capsys.readouterr().out
    assert "reads more into the numbers than they hold" in out
    assert "not one this experiment can show" in out


@pytest.mark.parametrize(
    "which, words",
    [
        ("usual", "learning_rate=0.01"),  # the runs at 0.1 reported instead
        ("small_last", "run.val_loss.min()"),  # where training stopped, not the best
    ],
)
def test_retrained_losses_name_the_wrong_runs_or_the_last_loss(
    which, words, capsys, best_losses
):
    assert not primer.check_retrained_losses(best_losses[which], "about the same")
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and words in out and "Expected" not in out


def test_retrained_losses_copied_from_the_table_are_not_called_rounding(
    capsys, best_losses
):
    # ex-primer-retrain says "compare with the table above": a reader who copies the
    # table's rows for seeds 0, 1, 2 (three decimals, at the rate 0.1) is told so
    copied = [round(x, 3) for x in best_losses["usual"]]
    assert not np.allclose(copied, best_losses["small"], atol=1e-4, rtol=0)
    assert not primer.check_retrained_losses(copied, "about the same")
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and "in the table above" in out
    assert "learning_rate=0.01" in out and "round too early" not in out
    # the right losses rounded to three decimals are rounding, not the table
    rounded = [round(x, 3) for x in best_losses["small"]]
    assert not primer.check_retrained_losses(rounded, "about the same")
    out = capsys.readouterr().out
    assert "round too early" in out and "table above" not in out


@pytest.mark.parametrize("verdict", ["better", "about the same", "worse"])
def test_retrained_losses_judge_no_verdict_until_the_losses_are_right(
    verdict, capsys, best_losses
):
    # the runs at 0.1 reported instead: the mean at 0.01 is not given away
    assert not primer.check_retrained_losses(best_losses["usual"], verdict)
    out = capsys.readouterr().out
    assert "Get the three losses at 0.01 first; then judge the verdict." in out
    assert "verdict is right" not in out and "Your verdict (" not in out
    assert f"{np.mean(best_losses['small']):.3f}" not in out


def test_retrained_losses_refuse_a_verdict_of_the_wrong_kind(capsys, best_losses):
    assert not primer.check_retrained_losses(best_losses["small"], "same")
    assert "'about the same'" in capsys.readouterr().out


def test_one_step_names_the_sign_slip(capsys):
    assert primer.check_one_step(
        [0.5, 0.25], x=2.0, y=1, w=0.0, b=0.0, learning_rate=0.5
    )
    assert not primer.check_one_step(
        [-0.5, -0.25], x=2.0, y=1, w=0.0, b=0.0, learning_rate=0.5
    )
    assert "*with* the gradient" in capsys.readouterr().out
