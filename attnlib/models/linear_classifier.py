"""The learning primer's model: a linear classifier trained by gradient descent.

The model gives each example ``x`` (a row of ``d`` numbers) the probability
``p = sigmoid(x . w + b)`` that its label is 1. Its learned parameters are the weights
``w`` (shape (d,)) and the bias ``b`` (a number). Training lowers the cross-entropy loss

    L = mean over examples of  -[y log p + (1 - y) log(1 - p)],

minus the log of the probability given to the right label, by repeated steps
``theta <- theta - learning_rate * dL/dtheta`` on random mini-batches. A held-out
validation set decides when to stop (early stopping with a patience and a step budget).
This is logistic regression; the gradient, ``dL/dz = p - y`` for the logit ``z``, is
the chain rule through the sigmoid and the log (backpropagation, Rumelhart, Hinton &
Williams 1986). The stopping rule is Prechelt's (1998) "early stopping" with a patience.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from attnlib.core._validation import (
    as_length,
    as_positive,
    as_real_number,
    as_width,
    finite_array,
)


class Params(NamedTuple):
    """Learned parameters: ``w`` of shape (d,), ``b`` a float."""

    w: np.ndarray
    b: float


class Run(NamedTuple):
    """One training run of :func:`train`.

    params : the parameters at the best validation loss (what early stopping keeps)
    best_step : the step at which they were reached
    stopped_at : the step at which training stopped
    reason : "patience" (no improvement for ``patience`` evaluations) or "budget"
    steps, train_loss, val_loss : the evaluation points and the two losses there
        (float64 arrays of equal length; step 0 is the random start)
    """

    params: Params
    best_step: int
    stopped_at: int
    reason: str
    steps: np.ndarray
    train_loss: np.ndarray
    val_loss: np.ndarray


def _check_examples(X, y) -> tuple[np.ndarray, np.ndarray]:
    """``X`` (n, d) and ``y`` (n,) as finite float64 arrays, the labels 0 or 1;
    ``TypeError`` or ``ValueError`` naming the one that is not."""
    X = _floats(X, "X")
    y = _floats(y, "y")
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(
            f"X must have shape (n, d) and y shape (n,); got {X.shape} and {y.shape}"
        )
    if not np.all((y == 0) | (y == 1)):
        raise ValueError("every label in y must be 0 or 1")
    return X, y


def _floats(a, name: str) -> np.ndarray:
    """``a`` as a finite float64 array (:func:`attnlib.core._validation.finite_array`:
    booleans, strings, NaN and inf are refused by name)."""
    return finite_array(a, name).astype(np.float64, copy=False)


def _index(index, params: Params) -> int:
    """``index`` of a weight of ``params.w``: an integer in ``[0, d)``, named."""
    index, d = as_length(index, "index"), np.shape(params.w)[0]
    if index >= d:
        raise ValueError(f"index must be below the number of weights {d}; got {index}")
    return index


def _logits(params: Params, X: np.ndarray) -> np.ndarray:
    """``X @ w + b``, shape (n,); ValueError naming X and w if the widths differ,
    OverflowError if a logit exceeds the largest float64 number."""
    if X.ndim != 2 or X.shape[1] != np.shape(params.w)[0]:
        raise ValueError(
            f"X must have shape (n, d) with d = len(w) = {np.shape(params.w)[0]}; "
            f"got {X.shape}"
        )
    with np.errstate(over="ignore", invalid="ignore"):
        z = X @ params.w + params.b  # (n,)
    if not np.isfinite(z).all():
        raise OverflowError("a logit X @ w + b exceeds the largest float64 number")
    return z


def sigmoid(z) -> np.ndarray:
    """``1 / (1 + exp(-z))`` elementwise, without overflow for large ``|z|``.

    z : array_like of float, any shape. Returns float64 of the same shape, in [0, 1].
    """
    z = _floats(z, "z")
    e = np.exp(-np.abs(z))  # never overflows: the exponent is <= 0
    return np.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def init_params(d: int, seed: int = 0, scale: float = 0.1) -> Params:
    """Random starting parameters: ``w`` normal with standard deviation ``scale``,
    ``b = 0``. ``d`` >= 1 features; the seed (an integer >= 0) fixes the draw;
    ``scale`` a finite real number. ``TypeError`` or ``ValueError`` naming the
    argument otherwise."""
    d, rng = as_width(d, "d"), np.random.default_rng(as_length(seed, "seed"))
    scale = as_real_number(scale, "scale")
    if not np.isfinite(scale):
        raise ValueError(f"scale must be a finite number; got {scale}")
    return Params(scale * rng.normal(size=d), 0.0)


def predict(params: Params, X) -> np.ndarray:
    """Probabilities ``sigmoid(X @ w + b)``, shape (n,), for ``X`` of shape (n, d)."""
    return sigmoid(_logits(params, _floats(X, "X")))  # (n,)


def _loss(params: Params, X: np.ndarray, y: np.ndarray) -> float:
    z = _logits(params, X)  # (n,)
    # -log sigmoid(z) = log(1 + e^-z); -log(1 - sigmoid(z)) = log(1 + e^z)
    per_example = np.where(y == 1, np.logaddexp(0.0, -z), np.logaddexp(0.0, z))  # (n,)
    return float(per_example.mean())


def loss(params: Params, X, y) -> float:
    """Mean cross-entropy of the labels ``y`` (0 or 1, shape (n,)) under the model.

    Computed from the logits with ``log(1 + exp(-|z|))`` so that it stays finite for
    confident predictions. Raises ValueError for mismatched shapes or labels not 0/1,
    OverflowError if a logit exceeds the largest float64 number.
    """
    return _loss(params, *_check_examples(X, y))


def _gradient(params: Params, X: np.ndarray, y: np.ndarray) -> Params:
    error = predict(params, X) - y  # (n,) dL/dz for each example, times n
    return Params(X.T @ error / len(y), float(error.mean()))


def gradient(params: Params, X, y) -> Params:
    """The gradient of :func:`loss`: ``dL/dw = X^T (p - y) / n``, ``dL/db = mean(p-y)``.

    Returns a :class:`Params` of the same shapes as ``params`` (the gradient of each
    parameter in its place).
    """
    return _gradient(params, *_check_examples(X, y))


def step(params: Params, grads: Params, learning_rate: float) -> Params:
    """One step of gradient descent: every parameter moves against its gradient.

    Raises TypeError if ``learning_rate`` is not a number, ValueError if it is not
    positive and finite, OverflowError if a moved parameter exceeds the largest float64
    number.
    """
    lr = as_positive(learning_rate, "learning_rate")
    with np.errstate(over="ignore", invalid="ignore"):
        w, b = params.w - lr * grads.w, params.b - lr * grads.b
    if not (np.isfinite(w).all() and np.isfinite(b)):
        raise OverflowError(
            "a parameter of the step exceeds the largest float64 number"
        )
    return Params(w, b)


def accuracy(params: Params, X, y) -> float:
    """Share of examples whose label is the more probable one under the model."""
    X, y = _check_examples(X, y)
    return float(np.mean((predict(params, X) > 0.5) == (y == 1)))


def train(
    X_train,
    y_train,
    X_val,
    y_val,
    *,
    learning_rate: float = 0.1,
    batch_size: int = 10,
    eval_every: int = 20,
    patience: int = 10,
    max_steps: int = 5000,
    seed: int = 0,
) -> Run:
    """Mini-batch gradient descent with early stopping on the validation loss.

    Every step takes the next ``batch_size`` training examples of a random order (a
    new order for each pass over the training set, an *epoch*), computes the gradient of
    their loss and takes one :func:`step`. Every ``eval_every`` steps both losses are
    measured on the whole sets. Training stops when the validation loss has not improved
    for ``patience`` evaluations in a row, or after ``max_steps`` steps; the parameters
    of the best validation loss are returned.
    ``seed`` fixes the starting parameters and the order of the batches.

    Raises
    ------
    ValueError for shapes that do not fit, labels other than 0/1, a learning rate that
    is not a positive finite number, a batch size, ``eval_every``, ``patience`` or
    ``max_steps`` below 1, or a negative seed; TypeError for a count or seed that is
    not an integer, a learning rate that is not a number, or examples that are not
    real (each named).
    """
    X_train, y_train = _check_examples(X_train, y_train)
    X_val, y_val = _check_examples(X_val, y_val)
    if X_val.shape[1] != X_train.shape[1]:
        raise ValueError(
            f"training and validation examples have {X_train.shape[1]} and "
            f"{X_val.shape[1]} features"
        )
    lr = as_positive(learning_rate, "learning_rate")
    batch_size, eval_every, patience, max_steps = (
        as_width(value, name)
        for name, value in (
            ("batch_size", batch_size),
            ("eval_every", eval_every),
            ("patience", patience),
            ("max_steps", max_steps),
        )
    )
    seed = as_length(seed, "seed")
    batch = min(batch_size, len(y_train))
    rng = np.random.default_rng(seed)
    params = init_params(X_train.shape[1], seed=seed)
    best, best_loss, best_step = params, _loss(params, X_val, y_val), 0
    steps, train_curve = [0], [_loss(params, X_train, y_train)]
    val_curve = [best_loss]
    waited, reason, t, order = 0, "budget", 0, np.empty(0, dtype=int)
    while t < max_steps:
        if len(order) < batch:  # a new pass over the training set, in a new order
            order = rng.permutation(len(y_train))
        rows, order = order[:batch], order[batch:]
        grads = _gradient(params, X_train[rows], y_train[rows])
        params = step(params, grads, lr)
        t += 1
        if t % eval_every:
            continue
        current = _loss(params, X_val, y_val)
        steps.append(t)
        train_curve.append(_loss(params, X_train, y_train))
        val_curve.append(current)
        if current < best_loss:
            best, best_loss, best_step, waited = params, current, t, 0
        else:
            waited += 1
            if waited >= patience:
                reason = "patience"
                break
    return Run(
        best,
        best_step,
        t,
        reason,
        np.asarray(steps, dtype=np.float64),
        np.asarray(train_curve),
        np.asarray(val_curve),
    )


def numerical_gradient_w(params: Params, X, y, eps: float = 1e-6) -> np.ndarray:
    """Central differences ``(L(w + eps e_i) - L(w - eps e_i)) / (2 eps)`` for every
    weight: a check of :func:`gradient` that needs no calculus. Shape (d,). ``eps``
    must be a positive finite number (named otherwise)."""
    eps = as_positive(eps, "eps")
    X, y = _check_examples(X, y)
    out = np.empty_like(params.w)
    for i in range(len(params.w)):
        bump = np.zeros_like(params.w)
        bump[i] = eps
        up = loss(Params(params.w + bump, params.b), X, y)
        down = loss(Params(params.w - bump, params.b), X, y)
        out[i] = (up - down) / (2 * eps)
    return out


def loss_along(params: Params, X, y, index: int, values) -> np.ndarray:
    """The loss with weight ``w[index]`` set to each of ``values`` (shape (G,)), every
    other parameter as in ``params``: one slice through the loss. Returns shape (G,).
    ``TypeError`` or ``ValueError`` naming ``index`` (not in ``[0, d)``) or ``values``
    (not a finite real array of shape (G,))."""
    X, y = _check_examples(X, y)
    index = _index(index, params)
    values = finite_array(values, "values", "(G,)", 1)
    out = []
    for value in values.astype(np.float64):
        w = params.w.copy()
        w[index] = value
        out.append(_loss(Params(w, params.b), X, y))
    return np.asarray(out)


def descent_along(
    params: Params, X, y, index: int, learning_rate: float, n_steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient descent on the one weight ``w[index]`` (the others held still), on the
    whole set: the ``n_steps`` values it visits, starting from ``params``, and their
    losses. Returns two arrays of shape (n_steps,). ``TypeError`` or ``ValueError``
    naming ``index``, ``learning_rate`` (positive) or ``n_steps`` (at least 1)."""
    X, y = _check_examples(X, y)
    index, lr = _index(index, params), as_positive(learning_rate, "learning_rate")
    n_steps = as_width(n_steps, "n_steps")
    w = params.w.copy()
    visited = []
    for _ in range(n_steps):
        visited.append(w[index])
        w[index] -= lr * _gradient(Params(w, params.b), X, y).w[index]
    return np.asarray(visited), loss_along(params, X, y, index, visited)
