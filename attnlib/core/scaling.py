"""Why scores are divided by sqrt(d_k): the variance argument, checked by simulation.

If the components of a query ``q`` and a key ``k`` are independent with mean 0 and
variance 1, each product ``q_i k_i`` has mean 0 and variance 1, so the dot product ``q ·
k`` (a sum of ``d_k`` such products) has variance ``d_k``. Dividing by ``sqrt(d_k)``
brings the variance back to 1 whatever ``d_k`` is. The functions here draw such random
queries and keys and measure (a) the variance of raw and scaled scores and (b) how
peaked the softmax of a row of scores becomes.

This is the *motivation* for the scaling, under an illustrative assumption; learned
queries and keys need not satisfy it.

Source: Vaswani et al. (2017), section 3.2.1 and footnote 4.
"""

from __future__ import annotations

import math

import numpy as np

from attnlib.core.softmax import softmax

#: Largest number of random numbers drawn at once (keeps memory small for large d_k).
_CHUNK_ELEMENTS = 1 << 20


def _check_args(rng, d_k, n_samples):
    if not isinstance(rng, np.random.Generator):
        raise TypeError(
            f"rng must be a numpy.random.Generator (e.g. np.random.default_rng(0)); "
            f"got {type(rng).__name__}"
        )
    for name, value in (("d_k", d_k), ("n_samples", n_samples)):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, np.integer))
            or value < 1
        ):
            raise ValueError(f"{name} must be a positive integer; got {value!r}")


def random_dot_products(
    rng: np.random.Generator, d_k: int, n_samples: int, *, scaled: bool = False
) -> np.ndarray:
    """Dot products of random query/key pairs with independent standard-normal
       components.

    Parameters
    ----------
    rng : numpy.random.Generator
        The source of randomness (seed it for reproducible results).
    d_k : int >= 1
        Number of components of each query and key.
    n_samples : int >= 1
        Number of independent (query, key) pairs.
    scaled : bool
        If True, divide each dot product by ``sqrt(d_k)``.

    Returns
    -------
    numpy.ndarray, shape (n_samples,), float64
        ``sum_i q_i k_i`` (divided by ``sqrt(d_k)`` if ``scaled``) for each pair.

    Raises
    ------
    TypeError if ``rng`` is not a Generator; ValueError if ``d_k`` or ``n_samples`` is
    not a positive integer.

    Source: Vaswani et al. (2017), section 3.2.1, footnote 4.
    """
    _check_args(rng, d_k, n_samples)
    rows_per_chunk = max(1, _CHUNK_ELEMENTS // d_k)
    out = np.empty(n_samples)
    for start in range(0, n_samples, rows_per_chunk):
        stop = min(start + rows_per_chunk, n_samples)
        q = rng.standard_normal((stop - start, d_k))
        k = rng.standard_normal((stop - start, d_k))
        out[start:stop] = (q * k).sum(
            axis=1
        )  # the dot product of each pair, written out
    if scaled:
        out /= math.sqrt(d_k)
    return out


def score_variance(
    rng: np.random.Generator, d_k: int, n_samples: int = 20_000, *, scaled: bool = False
) -> float:
    """Sample variance of random dot-product scores (expected: ``d_k`` raw, 1 scaled).

    Parameters
    ----------
    rng, d_k, scaled : as for :func:`random_dot_products`
    n_samples : int >= 1
        The number of scores (shape ``(n_samples,)``) whose variance is taken.

    Returns
    -------
    float
        The sample variance (mean of squared deviations) of ``n_samples`` scores. With
        independent standard-normal components its expectation is ``d_k`` (raw) or 1
        (scaled); its relative standard error is about ``sqrt((2 + 6 / d_k) /
        n_samples)``.

    Raises
    ------
    TypeError if ``rng`` is not a Generator; ValueError if ``d_k`` or ``n_samples`` is
    not a positive integer.

    Source: Vaswani et al. (2017), section 3.2.1, footnote 4.
    """
    return float(np.var(random_dot_products(rng, d_k, n_samples, scaled=scaled)))


def mean_max_weight(
    rng: np.random.Generator,
    d_k: int,
    n_keys: int = 10,
    n_samples: int = 2_000,
    *,
    scaled: bool = True,
) -> float:
    """Average largest softmax weight of one query against ``n_keys`` random keys.

    A value near ``1 / n_keys`` means the weights are nearly uniform (flat); a value
    near 1 means one key takes almost all the weight (peaked), where softmax's gradients
    are tiny.

    Parameters
    ----------
    rng : numpy.random.Generator
    d_k : int >= 1, components per query and key (standard normal, independent)
    n_keys : int >= 1, keys competing for each query
    n_samples : int >= 1, number of independent queries (each with its own keys)
    scaled : bool, divide the scores by ``sqrt(d_k)`` before softmax (default True)

    Returns
    -------
    float in [1 / n_keys, 1]
        The mean over ``n_samples`` queries of the largest entry of a softmax row of
        shape ``(n_keys,)``.

    Raises
    ------
    TypeError if ``rng`` is not a Generator; ValueError if ``d_k``, ``n_keys`` or
    ``n_samples`` is not a positive integer.

    Source: Vaswani et al. (2017), section 3.2.1 (large dot products push softmax into
    regions with extremely small gradients).
    """
    _check_args(rng, d_k, n_samples)
    if (
        isinstance(n_keys, bool)
        or not isinstance(n_keys, (int, np.integer))
        or n_keys < 1
    ):
        raise ValueError(f"n_keys must be a positive integer; got {n_keys!r}")
    scores = random_dot_products(rng, d_k, n_samples * n_keys, scaled=scaled)
    weights = softmax(scores.reshape(n_samples, n_keys), axis=-1)
    return float(weights.max(axis=-1).mean())
