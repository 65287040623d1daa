"""The learning primer's model and data (attnlib.models.linear_classifier,
attnlib.data.learning_task): values checked against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attnlib.data.learning_task import make_examples, make_split
from attnlib.models import linear_classifier as lc


def test_sigmoid_is_stable_and_symmetric():
    z = np.array([-1000.0, -2.0, 0.0, 2.0, 1000.0])
    s = lc.sigmoid(z)
    assert np.all(np.isfinite(s)) and s[0] == 0.0 and s[-1] == 1.0
    assert s[2] == 0.5 and math.isclose(s[3], 1 / (1 + math.exp(-2)))
    assert np.allclose(s + lc.sigmoid(-z), 1.0)


def test_loss_of_even_odds_is_log_2_and_of_one_example_by_hand():
    X = np.zeros((4, 3))
    y = np.array([0.0, 1.0, 1.0, 0.0])
    assert math.isclose(lc.loss(lc.Params(np.zeros(3), 0.0), X, y), math.log(2))
    # one example, logit 2, label 1: -log sigmoid(2) = log(1 + e^-2)
    one = lc.loss(lc.Params(np.array([1.0]), 0.0), np.array([[2.0]]), np.array([1.0]))
    assert math.isclose(one, math.log1p(math.exp(-2)))
    # confident and wrong stays finite
    far = lc.loss(lc.Params(np.array([1.0]), 0.0), np.array([[800.0]]), np.array([0.0]))
    assert math.isclose(far, 800.0)


def test_gradient_matches_central_differences():
    X, y = make_examples(30, n_features=5, seed=3)
    p = lc.init_params(5, seed=1, scale=1.0)
    assert np.allclose(
        lc.gradient(p, X, y).w, lc.numerical_gradient_w(p, X, y), atol=1e-7
    )
    eps = 1e-6
    up = lc.loss(lc.Params(p.w, p.b + eps), X, y)
    down = lc.loss(lc.Params(p.w, p.b - eps), X, y)
    assert math.isclose(lc.gradient(p, X, y).b, (up - down) / (2 * eps), abs_tol=1e-7)


def test_a_small_step_lowers_the_loss():
    X, y = make_examples(50, n_features=4, seed=0)
    p = lc.init_params(4, seed=0)
    after = lc.step(p, lc.gradient(p, X, y), 0.1)
    assert lc.loss(after, X, y) < lc.loss(p, X, y)


def test_data_follow_the_hidden_rule_without_noise():
    X, y = make_examples(200, n_features=6, n_informative=2, noise=0.0, seed=4)
    assert X.shape == (200, 6) and set(np.unique(y)) == {0.0, 1.0}
    assert np.array_equal(y, (X[:, 0] + X[:, 1] > 0).astype(float))


def test_split_sizes_and_determinism():
    a, b = make_split(seed=5), make_split(seed=5)
    assert a.X_train.shape == (60, 20) and a.X_val.shape == (400, 20)
    assert all(np.array_equal(u, v) for u, v in zip(a, b))


def test_training_stops_by_the_rule_and_keeps_the_best_parameters():
    data = make_split()
    run = lc.train(*data, seed=0)
    assert run.reason == "patience"
    assert run.stopped_at == run.best_step + 10 * 20  # patience x eval_every
    best = int(np.argmin(run.val_loss))
    assert run.steps[best] == run.best_step
    assert math.isclose(lc.loss(run.params, data.X_val, data.y_val), run.val_loss[best])
    capped = lc.train(*data, seed=0, max_steps=40)
    assert capped.reason == "budget" and capped.stopped_at == 40


def test_descent_along_one_weight_moves_against_its_gradient():
    X, y = make_examples(40, n_features=3, seed=2)
    p = lc.init_params(3, seed=2)
    values, losses = lc.descent_along(p, X, y, 0, 0.5, 3)
    g = lc.gradient(p, X, y).w[0]
    assert values[0] == p.w[0] and math.isclose(values[1], p.w[0] - 0.5 * g)
    assert np.allclose(losses, lc.loss_along(p, X, y, 0, values))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"learning_rate": 0.0}, "learning_rate"),
        ({"patience": 0}, "patience"),
        ({"batch_size": 0}, "batch_size"),
    ],
)
def test_bad_settings_are_named(kwargs, match):
    data = make_split()
    with pytest.raises(ValueError, match=match):
        lc.train(*data, **kwargs)


def test_bad_examples_are_named():
    with pytest.raises(ValueError, match="0 or 1"):
        lc.loss(lc.Params(np.zeros(2), 0.0), np.zeros((3, 2)), np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="shape"):
        lc.loss(lc.Params(np.zeros(2), 0.0), np.zeros((3, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="n_informative"):
        make_examples(5, n_features=2, n_informative=3)
