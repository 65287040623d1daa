"""Writing text with a language model: greedy decoding, temperature and top-k sampling.

A language model gives, after every prefix, a score (logit) for every token of the
vocabulary. Generation turns the scores of the last position into a choice, appends the
chosen token and repeats::

    probabilities = softmax(logits / temperature), restricted to the top k tokens
    next token    = argmax (greedy)  or  a draw from the probabilities (sampling)

The temperature is the softmax temperature of the softmax chapter, applied to the
vocabulary instead of to the keys: below 1 it sharpens the distribution towards the most
likely token, above 1 it flattens it; temperature 0 is the limit, greedy decoding. Top-k
sampling keeps only the ``k`` most likely tokens (the others get probability exactly 0,
through softmax's mask) and renormalises.

Every draw uses the numpy Generator passed in: the same seed gives the same text.

Source: Fan, Lewis & Dauphin (2018), section 5.4 (top-k sampling); Holtzman et al.
(2020), sections 2-3 (temperature and top-k, and why greedy text repeats itself);
Ackley, Hinton & Sejnowski (1985) for the temperature of a Boltzmann distribution.
"""

from __future__ import annotations

import numpy as np

from attnlib.core._validation import (
    as_float_array,
    as_length,
    as_real_number,
    as_width,
)
from attnlib.core.softmax import softmax
from attnlib.models.kv_cache import KVCache
from attnlib.models.language_model import LMConfig, _check_ids, forward

__all__ = ["next_token_distribution", "sample_next", "generate"]


def _top_k_mask(logits: np.ndarray, top_k: int | None) -> np.ndarray | None:
    """True for the ``top_k`` largest logits of each row (ties broken by position)."""
    if top_k is None or top_k >= logits.shape[-1]:
        return None
    order = np.argsort(-logits, axis=-1, kind="stable")  # (..., V), best first
    mask = np.zeros(logits.shape, dtype=bool)
    np.put_along_axis(mask, order[..., :top_k], True, axis=-1)
    return mask  # (..., V)


def _check_rng(rng) -> None:
    """Sampling needs ``rng``: ``ValueError`` without one, ``TypeError`` for a seed or
    anything else that is not a numpy Generator."""
    if rng is None:
        raise ValueError("sampling needs rng (a numpy Generator); or use temperature=0")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy Generator; got {type(rng).__name__}")


def _check_sampling(temperature, top_k) -> tuple[float, int | None]:
    """``temperature`` a finite number >= 0, ``top_k`` None or an integer >= 1."""
    t = as_real_number(temperature, "temperature")
    if not (np.isfinite(t) and t >= 0):
        raise ValueError(f"temperature must be a finite number >= 0; got {t}")
    return t, None if top_k is None else as_width(top_k, "top_k")


def next_token_distribution(logits, temperature: float = 1.0, top_k: int | None = None):
    """The probabilities a sampler draws the next token from.

    Parameters
    ----------
    logits : array_like, shape (..., V), the scores of the vocabulary
    temperature : float >= 0; 0 means greedy (all probability on the largest logit, the
        first one if several are equal)
    top_k : int >= 1 or None (keep every token)

    Returns
    -------
    numpy.ndarray of shape (..., V), float64, each row summing to 1; tokens outside the
    top ``k`` get exactly 0.

    Raises
    ------
    TypeError for a temperature that is not a number, a ``top_k`` that is not an
    integer (floats and bools are refused) or logits that are not real; ValueError
    for a negative or non-finite temperature, a ``top_k`` below 1, or logits without a
    vocabulary axis or holding NaN or inf.

    Source: Holtzman et al. (2020), section 3.1 (sampling with temperature, top-k).
    """
    temperature, top_k = _check_sampling(temperature, top_k)  # before any shortcut
    logits = as_float_array(logits, "logits").astype(np.float64)
    if logits.ndim < 1 or logits.shape[-1] < 1:
        raise ValueError(f"logits must have shape (..., V), V >= 1; got {logits.shape}")
    if not np.isfinite(logits).all():
        raise ValueError(f"logits {logits.shape} hold NaN or inf")
    mask = _top_k_mask(logits, top_k)
    if temperature == 0.0:
        probs = np.zeros_like(logits)
        np.put_along_axis(probs, logits.argmax(axis=-1)[..., None], 1.0, axis=-1)
        return probs
    # softmax(logits / T) = softmax((logits - max) / T): shifting first keeps every
    # score <= 0, so a tiny temperature can only send a gap to -inf (weight 0)
    with np.errstate(over="ignore"):
        scores = (logits - logits.max(axis=-1, keepdims=True)) / temperature
    return softmax(scores, axis=-1, mask=mask)


def sample_next(logits, rng, temperature: float = 1.0, top_k: int | None = None):
    """One token id per row of ``logits`` (..., V), drawn from
    :func:`next_token_distribution` by inverting its cumulative sum at one uniform
    number per row from ``rng`` (greedy with temperature 0: nothing is drawn).

    Returns an int64 array of the leading shape (an int64 scalar for one row). Raises
    what :func:`next_token_distribution` raises; when sampling, ValueError without
    ``rng`` and TypeError for an ``rng`` that is not a numpy Generator.

    Source: inverse-transform sampling of a discrete distribution; Holtzman et al.
    (2020), section 3.1, for the distributions drawn from.
    """
    probs = next_token_distribution(logits, temperature, top_k)  # (..., V)
    if temperature == 0:
        return probs.argmax(axis=-1)
    _check_rng(rng)
    u = rng.random(probs.shape[:-1])[..., None]  # (..., 1), uniform in [0, 1)
    cumulative = np.cumsum(probs, axis=-1)  # (..., V)
    token = (cumulative <= u * cumulative[..., -1:]).sum(axis=-1)
    return np.minimum(token, probs.shape[-1] - 1)  # the last token if rounding says V


def generate(
    params: dict,
    config: LMConfig,
    prompt,
    n_new: int,
    *,
    rng=None,
    temperature: float = 1.0,
    top_k: int | None = None,
    use_cache: bool = True,
):
    """Continue ``prompt`` by ``n_new`` tokens.

    Parameters
    ----------
    params, config : a language model (:mod:`attnlib.models.language_model`)
    prompt : int array_like, shape (L,) or (B, L), at least one token
    n_new : int >= 0, how many tokens to add; ``L + n_new`` must fit the context,
        except with rotary positions and a sliding window (``position="rope"``,
        ``window=w``): the cache then keeps ``w`` positions, and recomputing reads the
        last ``context`` tokens at their positions (the same logits when ``context >
        num_layers * (w - 1)``, the reach of ``num_layers`` windows)
    rng : numpy.random.Generator (needed unless ``temperature == 0``)
    temperature, top_k : as in :func:`next_token_distribution`
    use_cache : bool; True keeps every layer's keys and values
        (:class:`attnlib.models.kv_cache.KVCache`) and feeds the model one new token per
        step; False recomputes the whole sequence at every step. Both give the same
        tokens and logits (to rounding).

    Returns
    -------
    tokens : int64 array, shape (B, L + n_new) (or (L + n_new,) for a 1-D prompt)
    logits : array, shape (B, n_new, V) (or (n_new, V)): the scores each new token was
        chosen from

    Raises
    ------
    TypeError for a prompt that is not integers, an ``n_new`` that is not an integer,
    or an ``rng`` that is not a numpy Generator; ValueError if the sequence would
    exceed ``config.context``, the prompt is empty or not of shape (L,) or (B, L),
    sampling is asked for without ``rng``, and
    what :func:`next_token_distribution` and the model's ``forward`` raise.

    Source: autoregressive generation as in Radford et al. (2019), section 2; the cache
    as in Pope et al. (2023), section 2.
    """
    prompt = np.asarray(prompt)
    if prompt.ndim not in (1, 2):
        raise ValueError(f"prompt must have shape (L,) or (B, L); got {prompt.shape}")
    single = prompt.ndim == 1
    tokens = _check_ids(prompt[None, :] if single else prompt, config, 0, "prompt")
    tokens = tokens.astype(np.int64)  # (B, L)
    n_new = as_length(n_new, "n_new")
    _check_sampling(temperature, top_k)
    if tokens.shape[1] < 1:
        raise ValueError("the prompt needs at least one token")
    unbounded = config.position == "rope" and config.window is not None
    if tokens.shape[1] + n_new > config.context and not unbounded:
        raise ValueError(
            f"{tokens.shape[1]} + n_new={n_new} tokens exceed the context of "
            f"{config.context}"
        )
    if temperature != 0:
        _check_rng(rng)
    dtype = params["tok_emb"].dtype
    cache = None
    if use_cache:
        cache = KVCache(config, tokens.shape[0], config.context, dtype)
    chosen = []
    new = tokens
    for _ in range(n_new):
        if cache is None:
            s = max(0, tokens.shape[1] - config.context)  # > 0 only past the context
            logits, _ = forward(params, config, tokens[:, s:], start=s)  # all again
        else:
            # only the new tokens, at the positions after those the cache holds
            logits, _ = forward(params, config, new, caches=cache.layers)
        last = logits[:, -1]  # (B, V)
        chosen.append(last)
        nxt = sample_next(last, rng, temperature, top_k)  # (B,)
        new = nxt[:, None].astype(np.int64)  # (B, 1)
        tokens = np.concatenate([tokens, new], axis=1)  # (B, L + step + 1)
    scores = (
        np.stack(chosen, axis=1)
        if chosen
        else np.zeros((tokens.shape[0], 0, config.vocab_size), dtype)
    )
    return (tokens[0], scores[0]) if single else (tokens, scores)
