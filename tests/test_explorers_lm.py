"""The explorers of the language-model chapters: their states are computed by the model
(checked against direct calls), their precomputed pages hold every state, and bad input
is named."""

import numpy as np
import pytest

from attnlib.data.book_text import CharTokenizer
from attnlib.models import language_model as lm
from attnlib.models.generation import next_token_distribution
from book_support.experiments import induction
from book_support.figures.explorers.induction import InductionExplorer, induction_state
from book_support.figures.explorers.language_model import (
    NextTokenExplorer,
    next_token_state,
    show_char,
)


@pytest.fixture(scope="module")
def char_model():
    tokenizer = CharTokenizer.from_text("abcdefghijklmnopqrstuvwxyz ATMSe")
    config = lm.LMConfig(
        vocab_size=tokenizer.vocab_size,
        context=16,
        d_model=8,
        num_layers=2,
        num_heads=2,
    )
    params = lm.init_language_model(config, 0, dtype=np.float64)
    rng = np.random.default_rng(1)
    params = {k: v + rng.normal(0, 0.5, v.shape) for k, v in params.items()}
    return params, config, tokenizer


def test_next_token_state_is_the_models_distribution(char_model):
    params, config, tokenizer = char_model
    state = next_token_state(char_model, "The query", 0.5)
    logits, weights = lm.forward(params, config, tokenizer.encode("The query")[None])
    want = next_token_distribution(logits[0, -1], 0.5)
    assert state["probs"][0] == pytest.approx(want.max())
    assert state["top"][0] == tokenizer.chars[int(np.argmax(want))]
    np.testing.assert_allclose(state["attention"], weights[-1][0, :, -1].mean(axis=0))
    assert state["attention"].sum() == pytest.approx(1.0)
    greedy = next_token_state(char_model, "The query", 0.0)
    assert greedy["probs"][0] == 1.0 and greedy["top"][0] == greedy["greedy"]
    long = next_token_state(char_model, "a" * 40, 1.0)
    assert len(long["chars"]) == config.context  # only the last positions are read


def test_next_token_state_of_a_float32_model_is_computed_in_float64(char_model):
    params, config, tokenizer = char_model
    single = {k: v.astype(np.float32) for k, v in params.items()}
    state = next_token_state((single, config, tokenizer), "The query", 0.5)
    widened = {k: v.astype(np.float64) for k, v in single.items()}
    logits, _ = lm.forward(widened, config, tokenizer.encode("The query")[None])
    want = np.sort(next_token_distribution(logits[0, -1], 0.5))[::-1][
        : len(state["top"])
    ]
    assert state["probs"].dtype == state["attention"].dtype == np.float64
    np.testing.assert_allclose(state["probs"], want, rtol=1e-12)


def test_next_token_explorer_pages_and_errors(char_model):
    explorer = NextTokenExplorer(char_model, live_figure=False)
    page = explorer.precomputed(
        prompts=("The query", "A mask"), temperatures=(0.0, 1.0)
    )
    assert page.n_states == 4 and "<svg" in page.state_html(1, 1)
    explorer.prompt.value = "The query!"  # '!' is not in the vocabulary
    assert explorer.error and "not in the vocabulary" in explorer.error
    with pytest.raises(ValueError, match="at least one"):
        next_token_state(char_model, "", 1.0)
    assert show_char(" ") == "␣" and show_char("\n") == "⏎" and show_char("a") == "a"


def test_induction_state_matches_the_analysis():
    config = induction.model_config(
        induction.InductionTask(vocab_size=10, half=5), 8, 2
    )
    params = lm.init_language_model(config, 0, dtype=np.float64)
    task = induction.InductionTask(vocab_size=10, half=5)
    seq = induction.make_sequences(np.random.default_rng(0), 1, task, period=5)[0]
    state = induction_state((params, config), seq, 1, 0)
    _, weights = lm.forward(params, config, seq[None, :-1])
    np.testing.assert_array_equal(state["weights"], weights[1][0, 0])
    assert state["induction"] == pytest.approx(
        induction.induction_scores(weights, task)[1, 0]
    )
    mask = np.ones((2, 2))
    mask[1, 0] = 0
    assert state["loss_without"] == pytest.approx(
        induction.half_losses(params, config, seq[None], task, mask)[1]
    )
    page = InductionExplorer(
        (params, config), [seq, seq], live_figure=False
    ).precomputed()
    assert page.n_states == 2 * 2 * 2
    with pytest.raises(ValueError, match="layer must be"):
        induction_state((params, config), seq, 2, 0)


def test_induction_explorer_states_are_float64_and_clear_of_rounding_edges():
    # the chapter's explorer: the stored model (float32 weights) on the first four
    # evaluation sequences. In float64, every value its readout shows at 3 decimals
    # lies far from a rounding edge compared with float64's noise between machines.
    config, models, _ = induction.load()
    sequences = induction.make_sequences(
        np.random.default_rng(induction.EVAL_SEED), 500
    )[:4]
    shown = []
    for seq in sequences:
        for layer in range(config.num_layers):
            for head in range(config.num_heads):
                state = induction_state((models[0], config), seq, layer, head)
                assert state["weights"].dtype == np.float64
                shown += [state[k] for k in ("previous", "induction", "loss")]
                shown.append(state["loss_without"])
    assert len(shown) == 4 * config.num_layers * config.num_heads * 4
    assert all(isinstance(x, float) for x in shown)
    edge = np.abs((np.asarray(shown) * 1e3) % 1 - 0.5) * 1e-3  # distance to x.xxx5
    assert edge.min() > 1e-9


def test_induction_readout_rounds_to_three_decimals_stable_across_machines():
    # a value near a rounding edge, such as 0.87405, reads the same on both sides of it
    from book_support.figures.explorers.induction import _rows

    state = {
        "previous": 0.8740499,
        "induction": -1e-9,
        "loss": 0.66588,
        "loss_without": 3.3039,
    }
    rows = dict(_rows(state))
    assert rows["previous-token score"] == "0.874"
    assert _rows({**state, "previous": 0.8740501})[0][1] == "0.874"
    assert rows["induction score"] == "0.000"  # no negative zero
    assert rows["repeated half's loss (nats)"] == "0.666"
    assert rows["... with this head removed"] == "3.304"
