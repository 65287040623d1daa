"""Checker for the exercise of the chapter on the language model: a sampling function.

* :func:`check_sampler`  the reader's ``fn(logits, temperature, top_k, rng)`` -> one
  token id, against :func:`attnlib.models.generation.next_token_distribution`

A sampler is random, so the checker compares distributions: it calls the reader's
function 4,000 times per setting with one seeded generator and measures the total
variation distance between the frequencies and the right probabilities. With 6
tokens and 4,000 draws a correct sampler stays below 0.03 (the checker's threshold);
each typical slip lands far from it and near the distribution it really draws from,
which names the slip. Temperature 0 and ``top_k = 1`` must give the largest logit
every time.
"""

from __future__ import annotations

import warnings

import numpy as np

from attnlib.core.softmax import softmax
from attnlib.models.generation import next_token_distribution
from book_support.exercises import (
    WrongKind,
    checker,
    fmt,
    show_answer,
    shown,
    try_reader,
)

#: Draws per setting, and the total variation a correct sampler stays below.
DRAWS, THRESHOLD = 4000, 0.03

_LOGITS = np.array([2.0, 1.0, 0.5, 0.0, -1.0, 1.5])
_SETTINGS = ((1.0, None), (0.5, None), (2.0, 3), (1.0, 2))


def _slips(logits, temperature, top_k):
    """What typical slips draw from, with the diagnosis of each."""
    V = logits.size
    top = np.argsort(-logits, kind="stable")[: top_k or V]
    bottom = np.argsort(logits, kind="stable")[: top_k or V]

    def restrict(keep, scores):
        mask = np.zeros(V, bool)
        mask[keep] = True
        return softmax(scores, mask=mask)

    yield (
        restrict(top, logits * temperature),
        "the logits were multiplied by the temperature; divide them by it "
        "(a low temperature must sharpen the distribution).",
    )
    yield (
        softmax(logits / temperature),
        "every token can still be drawn: keep only the top_k largest logits "
        "(the others get probability 0).",
    )
    yield (
        restrict(top, logits),
        "the temperature is not used: the probabilities are softmax(logits / "
        "temperature).",
    )
    yield (
        restrict(bottom, logits / temperature),
        "the kept tokens are the smallest logits; keep the top_k largest.",
    )
    yield (
        np.full(V, 1.0 / V),
        "every token comes out equally often: draw with the probabilities, "
        "e.g. rng.choice(len(p), p=p).",
    )


def _token(value, V: int) -> int:
    """The reader's result as a token id, or :class:`WrongKind` saying what it is."""
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iuf":
        value = value.item()  # a 0-d array, e.g. from np.argmax on an array
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise WrongKind(
            "your sampler should return one token id (an integer); got "
            f"{type(value).__name__}."
        )
    whole = isinstance(value, (int, np.integer)) or float(value).is_integer()
    if not (whole and 0 <= value < V):
        raise WrongKind(
            f"your sampler returned {shown(value, 30)}, which is not a token id "
            f"0 .. {V - 1}."
        )
    return int(value)


def _call(fn, logits, temperature, top_k, rng, where):
    """One call of the reader's sampler, its warnings silenced: ``(ok, token)``."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ok, value = try_reader(
            lambda: fn(logits.copy(), temperature, top_k, rng),
            label="your sampler",
            where=where,
        )
    return (True, _token(value, logits.size)) if ok else (False, None)


def _frequencies(fn, logits, temperature, top_k, seed):
    """How often each token comes out in :data:`DRAWS` calls, or None if one failed."""
    rng = np.random.default_rng(seed)
    counts = np.zeros(logits.size)
    where = f" for temperature={temperature}, top_k={top_k}"
    for _ in range(DRAWS):
        ok, token = _call(fn, logits, temperature, top_k, rng, where)
        if not ok:
            return None
        counts[token] += 1
    return counts / DRAWS


@checker("your sampling function")
def check_sampler(fn) -> bool:
    """Check the reader's ``fn(logits, temperature, top_k, rng)``.

    ``logits`` is a float array (V,), ``temperature`` a number >= 0 (0: greedy),
    ``top_k`` an int or None, ``rng`` a numpy Generator to draw from. ``fn`` returns one
    token id.

    Returns
    -------
    bool, True when greedy settings give the largest logit and every sampling setting's
    frequencies lie within total variation 0.03 of the right probabilities; otherwise
    the first failing setting is named with the slip it looks like.
    """
    if not callable(fn):
        raise WrongKind(f"give the function itself; got a {type(fn).__name__}.")
    best = int(np.argmax(_LOGITS))
    greedy = {
        (0.0, None): "temperature 0 is greedy decoding: return the largest logit's "
        "token (np.argmax).",
        (0.7, 1): "top_k=1 leaves one token with a probability above 0: keep only the "
        "top_k largest logits before drawing.",
    }
    for (temperature, top_k), hint in greedy.items():
        where = f" for temperature={temperature}, top_k={top_k}"
        rng = np.random.default_rng(0)
        ok, token = _call(fn, _LOGITS, temperature, top_k, rng, where)
        if not ok:
            return False
        if token != best:
            print(
                f"Not yet: with temperature={temperature}, top_k={top_k} the sampler "
                f"must return the largest logit's token ({best}); it returned {token}."
            )
            print(f"Hint: {hint}")
            return False
    for seed, (temperature, top_k) in enumerate(_SETTINGS):
        want = next_token_distribution(_LOGITS, temperature, top_k)
        got = _frequencies(fn, _LOGITS, temperature, top_k, seed)
        if got is None:
            return False
        distance = 0.5 * np.abs(got - want).sum()
        if distance < THRESHOLD:
            continue
        print(
            f"Not yet: for temperature={temperature}, top_k={top_k}, {DRAWS} draws "
            f"give frequencies {fmt(got)}, at total variation {distance:.3f} from the "
            f"right probabilities (a correct sampler stays below {THRESHOLD})."
        )
        for wrong, diagnosis in _slips(_LOGITS, temperature, top_k):
            if 0.5 * np.abs(got - wrong).sum() < THRESHOLD:
                print(f"Hint: {diagnosis}")
                break
        if show_answer():
            print(fmt(want, "Expected probabilities: "))
        return False
    print(
        f"Correct: greedy settings give the largest logit, and {len(_SETTINGS)} "
        f"sampling settings match their probabilities ({DRAWS} draws each)."
    )
    return True
