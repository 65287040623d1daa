"""A small labelled data set for the learning primer (chapter "How a model learns").

Each example is a row of ``n_features`` numbers and a label 0 or 1. Only the first
``n_informative`` features carry signal: the label is 1 when their sum plus noise is
positive. The other features are pure noise, so a model with one weight per feature can
fit the training examples better than the rule that made them (it uses the noise), which
is what a held-out validation set detects.

Plain numpy; imports nothing else from attnlib.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from attnlib.core._validation import as_length, as_real_number, as_width


class Split(NamedTuple):
    """Training and validation examples: ``X_*`` of shape (n, n_features), ``y_*`` of
    shape (n,) with entries 0.0 or 1.0 (float64)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray


def make_examples(
    n: int,
    *,
    n_features: int = 30,
    n_informative: int = 2,
    noise: float = 1.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` labelled examples.

    Parameters
    ----------
    n : int >= 0, number of examples
    n_features : int >= 1, numbers per example (independent standard normals)
    n_informative : int, 1 <= n_informative <= n_features; the label depends on these
        first features only
    noise : float >= 0, standard deviation of the noise added before thresholding
    seed : int, seeds ``numpy.random.default_rng`` (the same seed, the same examples)

    Returns
    -------
    X : numpy.ndarray, shape (n, n_features), float64
    y : numpy.ndarray, shape (n,), float64, 1.0 where
        ``X[:, :n_informative].sum(axis=1) + noise * e > 0`` with ``e`` standard normal

    Raises
    ------
    TypeError
        If a count or ``seed`` is not an integer (floats and bools are refused) or
        ``noise`` is not a number, each named.
    ValueError
        If a count is negative or out of range, or ``noise`` is negative or not finite.
    """
    n, n_features = as_length(n, "n"), as_width(n_features, "n_features")
    n_informative = as_width(n_informative, "n_informative")
    if n_informative > n_features:
        raise ValueError(
            "need 1 <= n_informative <= n_features; got "
            f"n_informative={n_informative}, n_features={n_features}"
        )
    noise = as_real_number(noise, "noise")
    if not np.isfinite(noise) or noise < 0:
        raise ValueError(f"noise must be a finite number >= 0; got {noise}")
    seed = as_length(seed, "seed")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))  # (n, n_features)
    signal = X[:, :n_informative].sum(axis=1)  # (n,)
    y = (signal + noise * rng.normal(size=n) > 0).astype(np.float64)  # (n,)
    return X, y


def make_split(
    n_train: int = 60,
    n_val: int = 400,
    *,
    n_features: int = 20,
    n_informative: int = 2,
    noise: float = 0.5,
    seed: int = 0,
) -> Split:
    """Training and held-out validation examples drawn from the same rule.

    The two sets are drawn together (``n_train + n_val`` examples with
    :func:`make_examples`) and cut: the first ``n_train`` rows train, the rest validate.
    Parameters and errors as in :func:`make_examples`; a negative ``n_train`` or
    ``n_val`` is a ValueError too (it would cut the sets at the wrong row).
    """
    n_train, n_val = as_length(n_train, "n_train"), as_length(n_val, "n_val")
    X, y = make_examples(
        n_train + n_val,
        n_features=n_features,
        n_informative=n_informative,
        noise=noise,
        seed=seed,
    )
    return Split(X[:n_train], y[:n_train], X[n_train:], y[n_train:])
