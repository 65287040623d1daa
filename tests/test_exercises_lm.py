"""The checkers of the language-model chapters: they accept the folded solutions and
diagnose the named slips (the sampler, the cache step, grouped-query attention, the
induction score)."""

import numpy as np
import pytest
from induction_heads_exercises import check_induction_score
from kv_cache_exercises import check_cache_step, check_grouped_attention
from language_model_exercises import check_sampler

from attnlib import attention, causal_mask, softmax


def sampler(logits, temperature, top_k, rng):
    if temperature == 0:
        return int(np.argmax(logits))
    scores = logits / temperature
    if top_k is not None:
        cut = np.sort(scores)[-top_k]
        scores = np.where(scores >= cut, scores, -np.inf)
    p = np.exp(scores - scores.max())
    return int(rng.choice(len(p), p=p / p.sum()))


def sampler_times(logits, temperature, top_k, rng):  # multiplies by the temperature
    return sampler(logits * temperature**2, temperature, top_k, rng)


def sampler_no_top_k(logits, temperature, top_k, rng):
    return sampler(logits, temperature, None, rng)


def sampler_uniform(logits, temperature, top_k, rng):
    if temperature == 0 or top_k == 1:
        return int(np.argmax(logits))
    return int(rng.integers(len(logits)))


def cache_step(cache_k, cache_v, q, k, v):
    cache_k, cache_v = np.vstack([cache_k, k]), np.vstack([cache_v, v])
    out, _ = attention(q[None], cache_k, cache_v)
    return out[0], cache_k, cache_v


def cache_step_before_append(cache_k, cache_v, q, k, v):
    if len(cache_k) == 0:
        return np.zeros_like(v), k[None], v[None]
    out, _ = attention(q[None], cache_k, cache_v)
    return out[0], np.vstack([cache_k, k]), np.vstack([cache_v, v])


def grouped(q, k, v):
    G = q.shape[0] // k.shape[0]
    return attention(
        q, np.repeat(k, G, axis=0), np.repeat(v, G, axis=0), causal_mask(q.shape[1])
    )[0]


def grouped_tile(q, k, v):
    G = q.shape[0] // k.shape[0]
    return attention(
        q, np.tile(k, (G, 1, 1)), np.tile(v, (G, 1, 1)), causal_mask(q.shape[1])
    )[0]


def induction_score(weights, half):
    t = np.arange(half, weights.shape[-1])
    return weights[:, t, t - half + 1].mean(axis=-1)


def duplicate_score(weights, half):
    t = np.arange(half, weights.shape[-1])
    return weights[:, t, t - half].mean(axis=-1)


@pytest.mark.parametrize(
    "check, answer, printed",
    [
        (check_sampler, sampler, "Correct"),
        (check_sampler, sampler_times, "multiplied by the temperature"),
        (check_sampler, sampler_no_top_k, "keep only the top_k"),
        (check_sampler, sampler_uniform, "equally often"),
        (check_cache_step, cache_step, "Correct"),
        (check_cache_step, cache_step_before_append, "attended only to the old cache"),
        (check_grouped_attention, grouped, "Correct"),
        (check_grouped_attention, grouped_tile, "np.tile"),
        (check_induction_score, induction_score, "Correct"),
        (check_induction_score, duplicate_score, "duplicate-token"),
    ],
)
def test_checker_accepts_the_solution_and_names_the_slip(
    check, answer, printed, capsys
):
    result = check(answer)
    out = capsys.readouterr().out
    assert result is (printed == "Correct"), out
    assert printed in out, out


def test_unanswered_placeholders_are_reported(capsys):
    def placeholder(*args):
        raise NotImplementedError

    for check in (
        check_sampler,
        check_cache_step,
        check_grouped_attention,
        check_induction_score,
    ):
        assert check(placeholder) is False
        assert "Not answered yet" in capsys.readouterr().out


def test_a_correct_sampler_stays_well_below_the_threshold():
    """The checker's 0.03 is more than twice what sampling noise gives here."""
    import language_model_exercises as g

    from attnlib.models.generation import next_token_distribution

    worst = 0.0
    for seed, (temperature, top_k) in enumerate(g._SETTINGS):
        got = g._frequencies(sampler, g._LOGITS, temperature, top_k, seed + 100)
        want = next_token_distribution(g._LOGITS, temperature, top_k)
        worst = max(worst, 0.5 * np.abs(got - want).sum())
    assert worst < g.THRESHOLD / 2
    # and every slip's distribution is far from the right one
    for temperature, top_k in g._SETTINGS[1:3]:
        want = next_token_distribution(g._LOGITS, temperature, top_k)
        for wrong, _ in g._slips(g._LOGITS, temperature, top_k):
            if not np.allclose(wrong, want):
                assert 0.5 * np.abs(wrong - want).sum() > 2 * g.THRESHOLD
    assert softmax(np.zeros(3)).sum() == pytest.approx(1.0)
