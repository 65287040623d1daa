"""The stored language models (``make train-lm``) are what the chapters say they are:
small, trained on the frozen corpus with its own tokenizer, and their stored validation
loss is what an exact evaluation of the stored weights gives again."""

from dataclasses import replace

import numpy as np
import pytest

from attnlib.data import book_text
from attnlib.models.language_model import LMConfig, init_language_model
from attnlib.models.lm_training import _fixed_windows, evaluate
from book_support.experiments import induction, lm_runs


@pytest.fixture(scope="module")
def main_model():
    return lm_runs.load_main()


def test_stored_weights_stay_small():
    total = (
        lm_runs.DATA / "lm_main.npz"
    ).stat().st_size + induction.WEIGHTS.stat().st_size
    assert total <= 5_000_000


def test_main_model_matches_its_corpus_and_config(main_model):
    params, config, tokenizer, meta = main_model
    assert lm_runs.load_main()[3] == meta  # the same stored run at every load
    assert config == lm_runs.MAIN
    assert tokenizer.chars == "".join(sorted(set(book_text.load_corpus())))
    assert all(a.dtype == np.float32 for a in params.values())
    assert meta["parameters"] == sum(a.size for a in params.values())


def test_stored_validation_loss_is_reproduced_exactly(main_model):
    params, config, tokenizer, meta = main_model
    split = book_text.split_pieces(tokenizer.encode(book_text.load_corpus()))
    windows = _fixed_windows(
        split.validation, config.context, meta["train"]["eval_windows"]
    )
    again = evaluate(params, config, windows)
    assert again == pytest.approx(meta["history"]["best_validation"], abs=1e-6)
    assert again < 0.5 * np.log(config.vocab_size)  # far below a uniform guess


def test_variants_differ_only_in_their_attention_and_width():
    runs = lm_runs.load_variants()["runs"]
    assert len(runs) == len(lm_runs.ALL_VARIANTS) * len(lm_runs.SEEDS)
    assert [LMConfig(**r["config"]) for r in runs] == [
        lm_runs.ALL_VARIANTS[r["variant"]] for r in runs
    ]
    unshared = [
        replace(LMConfig(**r["config"]), num_kv_heads=None, window=None, d_ff=None)
        for r in runs
    ]
    assert all(c == unshared[0] for c in unshared)
    assert {r["train"]["max_steps"] for r in runs} == {lm_runs.VARIANT_TRAIN.max_steps}
    assert sorted((r["variant"], r["seed"]) for r in runs) == sorted(
        (name, seed) for name in lm_runs.ALL_VARIANTS for seed in lm_runs.SEEDS
    )


def _count(config):
    """Parameters of ``config``, counted from the shapes of its initial arrays."""
    return sum(a.size for a in init_language_model(config, 0).values())


def test_matched_widths_are_the_closest_to_multi_head():
    target = _count(lm_runs.VARIANTS["multi-head (4 key/value heads)"])
    for config in lm_runs.MATCHED.values():
        gaps = {
            width: abs(_count(replace(config, d_ff=width)) - target)
            for width in range(config.d_ff - 36, config.d_ff + 37, 12)
        }
        assert min(gaps, key=gaps.get) == config.d_ff
        assert gaps[config.d_ff] / target < 0.002


def test_chapter_split_holds_out_whole_chapters():
    text = book_text.load_corpus()
    tokenizer = book_text.CharTokenizer.from_text(text)
    chapters = lm_runs.corpus_chapters(text)
    assert "".join(chapters) == text
    assert all(c.startswith(lm_runs.CHAPTER_START) for c in chapters)
    split = lm_runs.chapter_split(text, tokenizer, held_out=(1,), piece=500)
    held = tokenizer.decode(split.validation.ravel())
    assert held in chapters[1]  # chapter 1's pieces, in order, and nothing else
    assert len(held) == len(chapters[1]) // 500 * 500
    kept = [tokenizer.decode(row) for row in split.train]
    assert not any(row in chapters[1] for row in kept)
    assert all(any(row in c for c in chapters) for row in kept)  # no piece spans two


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(held_out=(99,)), "held_out must name chapters 0 to"),
        (dict(held_out=()), "held_out must name chapters 0 to"),
        (dict(held_out=(1,), piece=10**7), "hold no piece"),
    ],
)
def test_chapter_split_rejects_bad_arguments(kwargs, message):
    text = book_text.load_corpus()
    with pytest.raises(ValueError, match=message):
        lm_runs.chapter_split(text, book_text.CharTokenizer.from_text(text), **kwargs)
    with pytest.raises(ValueError, match="split must be"):
        lm_runs.corpus("chapter")


def test_seed_runs_are_stored_with_their_split():
    runs = lm_runs.load_seeds()["runs"]
    assert [(r["split"], r["seed"]) for r in runs] == list(lm_runs.SEED_RUNS)
    for run in runs:
        assert LMConfig(**run["config"]) == lm_runs.MAIN
        assert run["train"] | {"seed": 0} == lm_runs.MAIN_TRAIN.as_dict() | {"seed": 0}
        assert run["train"]["seed"] == run["seed"]
        assert run["history"]["best_validation"] < 0.5 * np.log(lm_runs.MAIN.vocab_size)


def test_the_corpus_and_its_split():
    tokenizer, split = lm_runs.corpus()
    assert tokenizer.vocab_size == lm_runs.MAIN.vocab_size
    assert split.train.dtype == np.int64 and split.train.shape[1] == 2000
    assert len(split.train) == 9 * len(split.validation) + len(split.train) % 9


def test_variant_summary_reads_the_runs():
    rows = lm_runs.variant_summary()
    assert [r["variant"] for r in rows] == list(lm_runs.ALL_VARIANTS)
    for row in rows:
        assert row["lowest"] <= row["mean"] <= row["highest"]
        assert row["seeds"] == len(lm_runs.SEEDS)
    per_token = {r["key/value heads"]: r["cache bytes per token"] for r in rows}
    assert per_token[4] == 4 * per_token[1] == 2 * per_token[2]
