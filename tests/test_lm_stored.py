"""The stored language models (``make train-lm``) are what the chapters say they are:
small, trained on the frozen corpus with its own tokenizer, and their stored validation
loss is what an exact evaluation of the stored weights gives again."""

import numpy as np
import pytest

from attnlib.data import book_text
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


def test_variants_differ_only_in_their_attention():
    runs = lm_runs.load_variants()["runs"]
    assert len(runs) == len(lm_runs.VARIANTS) * len(lm_runs.SEEDS)
    keys = {"num_kv_heads", "window"}
    configs = [{k: v for k, v in r["config"].items() if k not in keys} for r in runs]
    assert all(c == configs[0] for c in configs)
    assert {r["train"]["max_steps"] for r in runs} == {lm_runs.VARIANT_TRAIN.max_steps}


def test_the_corpus_and_its_split():
    tokenizer, split = lm_runs.corpus()
    assert tokenizer.vocab_size == lm_runs.MAIN.vocab_size
    assert split.train.dtype == np.int64 and split.train.shape[1] == 2000
    assert len(split.train) == 9 * len(split.validation) + len(split.train) % 9


def test_variant_summary_reads_the_runs():
    rows = lm_runs.variant_summary()
    assert [r["variant"] for r in rows] == list(lm_runs.VARIANTS)
    for row in rows:
        assert row["lowest"] <= row["mean"] <= row["highest"]
        assert row["seeds"] == len(lm_runs.SEEDS)
    per_token = {r["key/value heads"]: r["cache bytes per token"] for r in rows}
    assert per_token[4] == 4 * per_token[1] == 2 * per_token[2]
