"""Issue 26: the contract of every public function added for the language-model
chapters (core, layers, data, models, figures and explorers).

One row per function (:data:`ROWS`, checked by ``contract_rows.check_row``): a valid
call whose result has the documented type and dtype; bad inputs raising the documented
error class with a message naming the argument; and, where numbers go in, a call with
extreme finite input (1e308, 1e-300) that gives a finite result or the documented
OverflowError, with no warning. ``tests/test_public_contract.py`` lists these functions
with this test.
"""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np
import pytest
from book_files import CHAPTER_NOTEBOOKS
from contract_rows import Row, check_row, f64

from attnlib.core import grouped_query as gq
from attnlib.core.heads import init_multi_head
from attnlib.core.sliding_window import sliding_window_mask
from attnlib.data import book_text as bt
from attnlib.layers import causal_block as cb
from attnlib.layers import dropout as dr
from attnlib.layers import layer_backward as lb
from attnlib.models import generation as gen
from attnlib.models import kv_cache as kv
from attnlib.models import language_model as lm
from attnlib.models import lm_training as tr
from book_support.experiments import induction as ind
from book_support.figures import language_model as figs
from book_support.figures.explorers import induction as ind_explorer
from book_support.figures.explorers import language_model as lm_explorer

BIG = 1e308


@functools.cache
def tiny():
    config = lm.LMConfig(vocab_size=6, context=5, d_model=4, num_layers=1, num_heads=2)
    return config, lm.init_language_model(config, 0, dtype=np.float64)


def tiny_saved():
    config, params = tiny()
    idx = np.array([[1, 2, 3]])
    logits, _, saved = lm.forward(params, config, idx, keep_for_backward=True)
    return config, params, idx, logits, saved


@functools.cache
def char_model():
    tokenizer = bt.CharTokenizer("abc ")
    config = lm.LMConfig(vocab_size=4, context=6, d_model=4, num_layers=1, num_heads=2)
    return lm.init_language_model(config, 0, dtype=np.float64), config, tokenizer


@functools.cache
def induction_model():
    task = ind.InductionTask(vocab_size=5, half=3, min_segment=1, max_segment=2)
    config = ind.model_config(task, 4, 2)
    return task, config, lm.init_language_model(config, 0, dtype=np.float64)


def induction_pair():
    """``(params, config)`` of the small induction model, as the explorer takes it."""
    _, config, params = induction_model()
    return params, config


def block_inputs(scale=1.0):
    config, params = tiny()
    x = np.random.default_rng(0).normal(size=(1, 3, 4)) * scale
    return x, lm.block_params(params, 0)


HISTORY = {
    "step": [100, 200, 300],
    "train": [2.0, 1.5, 1.2],
    "validation": [2.1, 1.7, 1.6],
    "best_step": 300,
    "extra": {"repeated_half": [3.0, 1.0, 0.5], "first_half": [3.3, 3.3, 3.3]},
}
BENCH = [
    {
        "n": n,
        "cached_s": 1e-3,
        "fresh_s": n * 1e-4,
        "ratio_median": n / 10,
        "ratio_min": n / 12,
        "ratio_max": n / 8,
    }
    for n in (16, 32, 64)
]


def is_fig(f):
    ok = isinstance(f, plt.Figure)
    plt.close(f)
    return ok


ROWS = {
    # --- core -----------------------------------------------------------------------
    "attnlib.core.grouped_query.group_size": Row(
        ok=lambda: gq.group_size(8, 2),
        check=lambda g: g == 4,
        bad=[
            (lambda: gq.group_size(8, 3), ValueError, "num_kv_heads"),
            (lambda: gq.group_size(8.0, 2), TypeError, "num_heads"),
        ],
    ),
    "attnlib.core.grouped_query.grouped_query_attention": Row(
        ok=lambda: gq.grouped_query_attention(
            np.ones((4, 2, 3)), np.ones((2, 2, 3)), np.ones((2, 2, 3))
        ),
        check=lambda r: (
            f64(r[0]) and r[0].shape == (4, 2, 3) and r[1].shape == (4, 2, 2)
        ),
        bad=[
            (
                lambda: gq.grouped_query_attention(
                    np.ones((4, 2, 3)), np.ones((3, 2, 3)), np.ones((3, 2, 3))
                ),
                ValueError,
                "num_kv_heads",
            ),
            (
                lambda: gq.grouped_query_attention(
                    np.ones((4, 2, 3)), np.ones((2, 2, 3)), np.ones((1, 2, 3))
                ),
                ValueError,
                "keys",
            ),
        ],
        extreme=lambda: gq.grouped_query_attention(
            np.full((2, 2, 3), BIG), np.full((1, 2, 3), BIG), np.ones((1, 2, 3))
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.core.grouped_query.init_grouped_query": Row(
        ok=lambda: gq.init_grouped_query(0, 8, 4, 2),
        check=lambda p: f64(p.W_K) and p.W_K.shape == (8, 4) and p.d_head == 2,
        bad=[(lambda: gq.init_grouped_query(0, 9, 4, 2), ValueError, "d_model")],
    ),
    "attnlib.core.grouped_query.grouped_query_self_attention": Row(
        ok=lambda: gq.grouped_query_self_attention(
            np.ones((3, 8)), gq.init_grouped_query(0, 8, 4, 1)
        ),
        check=lambda r: f64(r[0]) and r[0].shape == (3, 8) and r[1].shape == (4, 3, 3),
        bad=[
            (
                lambda: gq.grouped_query_self_attention(
                    np.ones((3, 5)), gq.init_grouped_query(0, 8, 4, 1)
                ),
                ValueError,
                "W_Q",
            )
        ],
        extreme=lambda: gq.grouped_query_self_attention(
            np.full((2, 8), 1e200), gq.init_grouped_query(0, 8, 4, 1)
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.core.grouped_query.from_multi_head": Row(
        ok=lambda: gq.from_multi_head(init_multi_head(0, 8, 4), 2),
        check=lambda p: p.W_V.shape == (8, 4) and p.num_kv_heads == 2,
        bad=[
            (
                lambda: gq.from_multi_head(init_multi_head(0, 8, 4), 3),
                ValueError,
                "num_kv_heads",
            )
        ],
    ),
    "attnlib.core.sliding_window.sliding_window_mask": Row(
        ok=lambda: sliding_window_mask(4, window=2),
        check=lambda m: m.dtype == bool and m.sum() == 7,
        bad=[
            (lambda: sliding_window_mask(4, window=0), ValueError, "window"),
            (lambda: sliding_window_mask(4, window=1.5), TypeError, "window"),
        ],
    ),
    # --- layers ---------------------------------------------------------------------
    "attnlib.layers.causal_block.self_attention_mask": Row(
        ok=lambda: cb.self_attention_mask(3, window=2),
        check=lambda m: m.shape == (3, 3) and m.dtype == bool,
        bad=[(lambda: cb.self_attention_mask(3, window=0), ValueError, "window")],
    ),
    "attnlib.layers.causal_block.causal_block": Row(
        ok=lambda: cb.causal_block(*block_inputs(), num_heads=2, num_kv_heads=2),
        check=lambda r: (
            f64(r[0]) and r[0].shape == (1, 3, 4) and r[1].shape == (1, 2, 3, 3)
        ),
        bad=[
            (
                lambda: cb.causal_block(*block_inputs(), num_heads=2, num_kv_heads=3),
                ValueError,
                "num_kv_heads",
            ),
            (
                lambda: cb.causal_block(
                    *block_inputs(),
                    num_heads=2,
                    num_kv_heads=2,
                    dropout_rate=0.5,
                    training=True,
                ),
                ValueError,
                "rng",
            ),
        ],
        extreme=lambda: cb.causal_block(
            *block_inputs(1e300), num_heads=2, num_kv_heads=2
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.causal_block.causal_block_backward": Row(
        ok=lambda: cb.causal_block_backward(
            np.ones((1, 3, 4)),
            block_inputs()[1],
            cb.causal_block(
                *block_inputs(), num_heads=2, num_kv_heads=2, keep_for_backward=True
            )[2],
            num_heads=2,
            num_kv_heads=2,
        ),
        check=lambda r: (
            f64(r[0]) and r[0].shape == (1, 3, 4) and r[1]["W_Q"].shape == (4, 4)
        ),
        extreme=lambda: cb.causal_block_backward(
            np.full((1, 3, 4), BIG),
            block_inputs()[1],
            cb.causal_block(
                *block_inputs(), num_heads=2, num_kv_heads=2, keep_for_backward=True
            )[2],
            num_heads=2,
            num_kv_heads=2,
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.dropout.residual_dropout": Row(
        ok=lambda: dr.residual_dropout(
            np.ones((2, 3)), 0.5, np.random.default_rng(0), training=True
        ),
        check=lambda r: (
            f64(r[0]) and r[1].dtype == bool and set(np.unique(r[0])) <= {0.0, 2.0}
        ),
        bad=[
            (
                lambda: dr.residual_dropout(
                    np.ones(2), 1.5, np.random.default_rng(0), training=True
                ),
                ValueError,
                "p must lie in [0, 1)",  # the argument's own name
            ),
            (
                lambda: dr.residual_dropout(np.ones(2), 0.5, 0, training=True),
                TypeError,
                "rng",
            ),
        ],
        extreme=lambda: dr.residual_dropout(
            np.full(3, 1e307), 0.5, np.random.default_rng(0), training=True
        ),
    ),
    "attnlib.layers.layer_backward.layer_norm_stats": Row(
        ok=lambda: lb.layer_norm_stats(np.array([[1.0, 2.0, 3.0]])),
        check=lambda r: (
            f64(r[0]) and np.allclose(r[0].mean(), 0) and r[1].shape == (1, 1)
        ),
        extreme=lambda: lb.layer_norm_stats(np.array([[BIG, -BIG]])),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.layer_backward.layer_norm_backward": Row(
        ok=lambda: lb.layer_norm_backward(
            np.ones((2, 3)), *lb.layer_norm_stats(np.eye(2, 3)), np.ones(3)
        ),
        check=lambda r: f64(r[0]) and r[1].shape == (3,) and np.allclose(r[0], 0),
        extreme=lambda: lb.layer_norm_backward(
            np.full((2, 3), BIG), *lb.layer_norm_stats(np.eye(2, 3)), np.ones(3)
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.layer_backward.gelu_backward": Row(
        ok=lambda: lb.gelu_backward(np.array([-1.0, 0.0, 1.0]), np.ones(3)),
        check=lambda g: f64(g) and g[1] == pytest.approx(0.5, abs=1e-6),
        extreme=lambda: lb.gelu_backward(np.array([BIG, -BIG, 1e-300]), np.ones(3)),
    ),
    # --- data -----------------------------------------------------------------------
    "attnlib.data.book_text.extract_prose": Row(
        ok=lambda: bt.extract_prose(CHAPTER_NOTEBOOKS),
        check=lambda t: isinstance(t, str) and t.isascii() and len(t) > 1000,
        bad=[
            (lambda: bt.extract_prose([]), ValueError, "notebooks"),
            (
                lambda: bt.extract_prose(["/nonexistent.ipynb"]),
                FileNotFoundError,
                "nonexistent",
            ),
        ],
    ),
    "attnlib.data.book_text.load_corpus": Row(
        ok=bt.load_corpus,
        check=lambda t: isinstance(t, str) and t.isascii(),
        bad=[
            (
                lambda: bt.load_corpus("/nonexistent.txt"),
                FileNotFoundError,
                "nonexistent",
            )
        ],
    ),
    "attnlib.data.book_text.split_pieces": Row(
        ok=lambda: bt.split_pieces(np.arange(100), piece=10, every=5),
        check=lambda s: s.train.dtype == np.int64 and s.validation.shape == (2, 10),
        bad=[
            (
                lambda: bt.split_pieces(np.arange(20), piece=10, every=5),
                ValueError,
                "pieces",
            )
        ],
    ),
    "attnlib.data.book_text.random_windows": Row(
        ok=lambda: bt.random_windows(
            np.arange(40).reshape(2, 20), np.random.default_rng(0), 3, 5
        ),
        check=lambda r: (
            r[0].dtype.kind == "i"
            and r[0].shape == (3, 5)
            and np.array_equal(r[0][:, 1:], r[1][:, :-1])
        ),
    ),
    "attnlib.data.book_text.evaluation_windows": Row(
        ok=lambda: bt.evaluation_windows(np.arange(40).reshape(2, 20), 4),
        check=lambda r: r[0].shape == (8, 4) and np.array_equal(r[1], r[0] + 1),
    ),
    # --- models: the language model ---------------------------------------------------
    "attnlib.models.language_model.init_language_model": Row(
        ok=lambda: lm.init_language_model(tiny()[0], 0),
        check=lambda p: (
            p["tok_emb"].dtype == np.float32 and p["pos_emb"].shape == (5, 4)
        ),
    ),
    "attnlib.models.language_model.block_params": Row(
        ok=lambda: lm.block_params(tiny()[1], 0),
        check=lambda b: set(b) == set(cb.BLOCK_PARAMETERS) - {"W_3", "b_3"},
    ),
    "attnlib.models.language_model.parameter_shapes": Row(
        ok=lambda: lm.parameter_shapes(tiny()[0]),
        check=lambda s: s == {k: v.shape for k, v in tiny()[1].items()},
    ),
    "attnlib.models.language_model.parameter_count": Row(
        ok=lambda: lm.parameter_count(tiny()[1]),
        check=lambda n: (
            isinstance(n, int) and n == sum(a.size for a in tiny()[1].values())
        ),
    ),
    "attnlib.models.language_model.forward": Row(
        ok=lambda: lm.forward(tiny()[1], tiny()[0], np.array([[1, 2]])),
        check=lambda r: f64(r[0]) and r[0].shape == (1, 2, 6),
        bad=[
            (
                lambda: lm.forward(tiny()[1], tiny()[0], np.array([[6]])),
                ValueError,
                "ids",
            ),
            (
                lambda: lm.forward(tiny()[1], tiny()[0], np.zeros((1, 6), int)),
                ValueError,
                "context",
            ),
        ],
        extreme=lambda: lm.forward(
            dict(tiny()[1], tok_emb=tiny()[1]["tok_emb"] * 1e300),
            tiny()[0],
            np.array([[1, 2]]),
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.models.language_model.cross_entropy": Row(
        ok=lambda: lm.cross_entropy(np.zeros((1, 2, 4)), np.array([[0, 3]])),
        check=lambda r: r[0] == pytest.approx(np.log(4)) and f64(r[1]),
        bad=[
            (
                lambda: lm.cross_entropy(np.zeros((1, 2, 4)), np.array([[0, 4]])),
                ValueError,
                "targets",
            ),
            (
                lambda: lm.cross_entropy(np.full((1, 1, 2), np.nan), np.array([[0]])),
                ValueError,
                "logits",
            ),
        ],
        extreme=lambda: lm.cross_entropy(np.array([[[BIG, -BIG]]]), np.array([[0]])),
    ),
    "attnlib.models.language_model.loss": Row(
        ok=lambda: lm.loss(
            tiny()[1], tiny()[0], np.array([[1, 2]]), np.array([[2, 3]])
        ),
        check=lambda v: isinstance(v, float) and v > 0,
        bad=[
            (
                lambda: lm.loss(
                    tiny()[1], tiny()[0], np.array([[1, 2]]), np.array([[2, 9]])
                ),
                ValueError,
                "targets",
            )
        ],
    ),
    "attnlib.models.language_model.backward": Row(
        ok=lambda: lm.backward(
            tiny_saved()[1],
            tiny_saved()[0],
            tiny_saved()[4],
            np.ones_like(tiny_saved()[3]),
        ),
        check=lambda g: set(g) == set(tiny()[1]) and f64(g["tok_emb"]),
        extreme=lambda: lm.backward(
            tiny_saved()[1],
            tiny_saved()[0],
            tiny_saved()[4],
            np.full_like(tiny_saved()[3], BIG),
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.models.language_model.loss_and_gradients": Row(
        ok=lambda: lm.loss_and_gradients(
            tiny()[1], tiny()[0], np.array([[1, 2]]), np.array([[2, 3]])
        ),
        check=lambda r: isinstance(r[0], float) and f64(r[1]["tok_emb"]),
        bad=[
            (
                lambda: lm.loss_and_gradients(
                    tiny()[1], tiny()[0], np.array([[1, 9]]), np.array([[2, 3]])
                ),
                ValueError,
                "ids",
            )
        ],
    ),
    # --- models: generation and the cache -------------------------------------------
    "attnlib.models.generation.next_token_distribution": Row(
        ok=lambda: gen.next_token_distribution(np.array([2.0, 1.0, 0.0]), 0.5, top_k=2),
        check=lambda p: f64(p) and p[2] == 0.0 and p.sum() == pytest.approx(1.0),
        bad=[
            (
                lambda: gen.next_token_distribution(np.zeros(3), -1.0),
                ValueError,
                "temperature",
            ),
            (
                lambda: gen.next_token_distribution(np.zeros(3), 1.0, top_k=0),
                ValueError,
                "top_k",
            ),
            (
                lambda: gen.next_token_distribution(np.array([np.nan]), 1.0),
                ValueError,
                "logits",
            ),
        ],
        extreme=lambda: gen.next_token_distribution(np.array([BIG, -BIG, 0.0]), 1e-300),
    ),
    "attnlib.models.generation.sample_next": Row(
        ok=lambda: gen.sample_next(
            np.array([[0.0, 5.0], [5.0, 0.0]]),
            np.random.default_rng(0),
            temperature=0.1,
        ),
        check=lambda t: t.dtype == np.int64 and t.tolist() == [1, 0],
        bad=[
            (
                lambda: gen.sample_next(np.zeros(2), np.random.default_rng(0), -2.0),
                ValueError,
                "temperature",
            )
        ],
        extreme=lambda: gen.sample_next(
            np.array([BIG, -BIG]), np.random.default_rng(0), 1.0
        ),
    ),
    "attnlib.models.generation.generate": Row(
        ok=lambda: gen.generate(
            tiny()[1], tiny()[0], np.array([1]), 3, temperature=0.0
        ),
        check=lambda r: (
            r[0].dtype == np.int64 and r[0].shape == (4,) and r[1].shape == (3, 6)
        ),
        bad=[
            (
                lambda: gen.generate(tiny()[1], tiny()[0], np.array([1]), 5),
                ValueError,
                "context",
            ),
            (
                lambda: gen.generate(tiny()[1], tiny()[0], np.array([1]), 2),
                ValueError,
                "rng",
            ),
            (
                lambda: gen.generate(
                    tiny()[1], tiny()[0], np.zeros(0, int), 1, temperature=0.0
                ),
                ValueError,
                "prompt",
            ),
        ],
    ),
    "attnlib.models.kv_cache.kv_bytes_per_token": Row(
        ok=lambda: kv.kv_bytes_per_token(12, 12, 64, 2),
        check=lambda b: b == 36864 and isinstance(b, int),
        bad=[
            (lambda: kv.kv_bytes_per_token(0, 1, 1, 4), ValueError, "num_layers"),
            (lambda: kv.kv_bytes_per_token(1, 1.5, 1, 4), TypeError, "num_kv_heads"),
        ],
    ),
    # --- models: training -----------------------------------------------------------
    "attnlib.models.lm_training.learning_rate": Row(
        ok=lambda: [
            tr.learning_rate(s, tr.TrainConfig(max_steps=10, warmup=2, lr=1.0))
            for s in range(10)
        ],
        check=lambda r: (
            r[0] == 0.5
            and r[1] == 1.0
            and r[-1] >= 0.1
            and all(a >= b for a, b in zip(r[1:], r[2:]))
        ),
        bad=[
            (lambda: tr.TrainConfig(lr=-1.0), ValueError, "lr"),
            (lambda: tr.TrainConfig(max_steps=0), ValueError, "max_steps"),
            (lambda: tr.TrainConfig(schedule="linear"), ValueError, "schedule"),
        ],
    ),
    "attnlib.models.lm_training.recent_drop": Row(
        ok=lambda: tr.recent_drop(
            {"step": [100, 200, 300, 400], "validation": [3.0, 2.5, 2.25, 2.0]}, 200
        ),
        check=lambda r: r == (2.5, 2.0),
        bad=[
            (
                lambda: tr.recent_drop({"step": [100, 200], "validation": [2, 1]}, 150),
                ValueError,
                "150 steps",
            ),
        ],
    ),
    "attnlib.models.lm_training.clip_global_norm": Row(
        ok=lambda: tr.clip_global_norm({"a": np.array([3.0, 4.0])}, 1.0),
        check=lambda n: n == pytest.approx(5.0),
        extreme=lambda: tr.clip_global_norm({"a": np.array([1e300, 1e300])}, 1.0),
    ),
    "attnlib.models.lm_training.evaluate": Row(
        ok=lambda: tr.evaluate(
            tiny()[1], tiny()[0], (np.array([[1, 2]]), np.array([[2, 3]]))
        ),
        check=lambda v: isinstance(v, float) and v > 0,
        bad=[
            (
                lambda: tr.evaluate(tiny()[1], tiny()[0], (np.zeros((0, 2), int),) * 2),
                ValueError,
                "windows",
            )
        ],
    ),
    "attnlib.models.lm_training.train": Row(
        ok=lambda: tr.train(
            tiny()[0],
            bt.split_pieces(np.arange(120) % 6, piece=12, every=5),
            tr.TrainConfig(max_steps=3, batch=2, eval_every=1, eval_windows=2),
        ),
        check=lambda r: r[1].step == [1, 2, 3] and r[0]["tok_emb"].dtype == np.float32,
        bad=[
            (
                lambda: tr.train(tiny()[0], None, tr.TrainConfig(batch=0)),
                ValueError,
                "batch",
            )
        ],
    ),
    # --- models: induction ----------------------------------------------------------
    "book_support.experiments.induction.make_sequences": Row(
        ok=lambda: ind.make_sequences(
            np.random.default_rng(0), 2, induction_model()[0]
        ),
        check=lambda s: s.dtype.kind == "i" and np.array_equal(s[:, :3], s[:, 3:]),
        bad=[
            (
                lambda: ind.make_sequences(np.random.default_rng(0), 2, period=0),
                ValueError,
                "period",
            )
        ],
    ),
    "book_support.experiments.induction.make_training_sequences": Row(
        ok=lambda: ind.make_training_sequences(
            np.random.default_rng(0), 3, induction_model()[0]
        ),
        check=lambda s: s.shape == (3, 6) and s.max() < 5,
    ),
    "book_support.experiments.induction.model_config": Row(
        ok=lambda: ind.model_config(),
        check=lambda c: c.d_ff == 0 and c.num_layers == 2 and not c.tied,
        bad=[(lambda: ind.model_config(ind.TASK, 10, 4), ValueError, "d_model")],
    ),
    "book_support.experiments.induction.half_losses": Row(
        ok=lambda: ind.half_losses(
            induction_model()[2],
            induction_model()[1],
            ind.make_sequences(np.random.default_rng(0), 2, induction_model()[0]),
            induction_model()[0],
        ),
        check=lambda r: all(isinstance(v, float) and v > 0 for v in r),
    ),
    "book_support.experiments.induction.previous_token_scores": Row(
        ok=lambda: ind.previous_token_scores([np.tile(np.eye(3, k=-1), (1, 2, 1, 1))]),
        check=lambda s: s.shape == (1, 2) and np.allclose(s, 1.0),
    ),
    "book_support.experiments.induction.previous_token_by_position": Row(
        ok=lambda: ind.previous_token_by_position(
            [np.tile(np.eye(4, k=-1), (3, 2, 1, 1))]
        ),
        check=lambda s: s.shape == (1, 2, 3) and np.allclose(s, 1.0),
    ),
    "book_support.experiments.induction.previous_token_scores_by_period": Row(
        ok=lambda: ind.previous_token_scores_by_period(
            induction_model()[2],
            induction_model()[1],
            (2, 6),
            3,
            0,
            induction_model()[0],
        ),
        check=lambda s: s.shape == (2, 2, 2) and ((s >= 0) & (s <= 1)).all(),
        bad=[
            (
                lambda: ind.previous_token_scores_by_period(
                    induction_model()[2], induction_model()[1], (-1,)
                ),
                ValueError,
                "periods",
            )
        ],
    ),
    "book_support.experiments.induction.induction_scores": Row(
        ok=lambda: ind.induction_scores(
            [np.ones((1, 2, 5, 5)) / 5], induction_model()[0]
        ),
        check=lambda s: s.shape == (1, 2) and np.allclose(s, 0.2),
        bad=[
            (
                lambda: ind.induction_scores([np.ones((1, 2, 5, 5))]),
                ValueError,
                "weights",
            )
        ],
    ),
    "book_support.experiments.induction.without_heads": Row(
        ok=lambda: ind.without_heads(induction_model()[1], [(1, 0)]),
        check=lambda m: m.shape == (2, 2) and m.sum() == 3,
        bad=[
            (
                lambda: ind.without_heads(induction_model()[1], [(2, 0)]),
                ValueError,
                "heads",
            )
        ],
    ),
    "book_support.experiments.induction.circuit_heads": Row(
        ok=lambda: ind.circuit_heads(
            [np.ones((1, 2, 5, 5)) / 5] * 2, threshold=0.1, task=induction_model()[0]
        ),
        check=lambda h: (
            h["previous-token head"] == [(0, 0)] and len(h["copying heads"]) == 2
        ),
        bad=[
            (
                lambda: ind.circuit_heads([np.ones((1, 2, 5, 5))]),
                ValueError,
                "two layers",
            )
        ],
    ),
    "book_support.experiments.induction.ablate_each_head": Row(
        ok=lambda: ind.ablate_each_head(
            induction_model()[2],
            induction_model()[1],
            ind.make_sequences(np.random.default_rng(0), 2, induction_model()[0]),
            induction_model()[0],
        ),
        check=lambda rows: len(rows) == 1 + 2 * 2 and rows[0]["layer"] is None,
    ),
    "book_support.experiments.induction.drop_step": Row(
        ok=lambda: ind.drop_step(HISTORY, 3.0),
        check=lambda s: s == 200,
        bad=[(lambda: ind.drop_step({"step": [1]}, 3.0), KeyError, "extra")],
    ),
    # --- figures and explorers -------------------------------------------------------
    "book_support.figures.language_model.loss_curves": Row(
        ok=lambda: figs.loss_curves(HISTORY, title="costs $5", chance=3.0),
        check=is_fig,
        bad=[(lambda: figs.loss_curves({"step": []}, title="x"), KeyError, "train")],
    ),
    "book_support.figures.language_model.token_cost_figure": Row(
        ok=lambda: figs.token_cost_figure(BENCH),
        check=is_fig,
        bad=[(lambda: figs.token_cost_figure([{"n": 1}]), KeyError, "cached_s")],
    ),
    "book_support.figures.language_model.phase_change_figure": Row(
        ok=lambda: figs.phase_change_figure({0: HISTORY}, 3.4),
        check=is_fig,
        bad=[
            (
                lambda: figs.phase_change_figure({0: {"step": [1]}}, 3.4),
                KeyError,
                "extra",
            )
        ],
    ),
    "book_support.figures.language_model.head_scores_figure": Row(
        ok=lambda: figs.head_scores_figure(np.eye(2), np.ones((2, 2)) / 2),
        check=is_fig,
        extreme=lambda: is_fig(
            figs.head_scores_figure(np.full((2, 2), BIG), np.zeros((2, 2)))
        ),
    ),
    "book_support.figures.explorers.language_model.show_char": Row(
        ok=lambda: [lm_explorer.show_char(c) for c in " \na"],
        check=lambda r: r == ["␣", "⏎", "a"],
    ),
    "book_support.figures.explorers.language_model.next_token_state": Row(
        ok=lambda: lm_explorer.next_token_state(char_model(), "abc", 0.5),
        check=lambda s: f64(s["probs"]) and s["attention"].sum() == pytest.approx(1.0),
        bad=[
            (
                lambda: lm_explorer.next_token_state(char_model(), "abz", 1.0),
                ValueError,
                "vocabulary",
            ),
            (
                lambda: lm_explorer.next_token_state(char_model(), "ab", -1.0),
                ValueError,
                "temperature",
            ),
        ],
        extreme=lambda: lm_explorer.next_token_state(char_model(), "a", 1e-300),
    ),
    "book_support.figures.explorers.language_model.next_token_svg": Row(
        ok=lambda: lm_explorer.next_token_svg(
            lm_explorer.next_token_state(char_model(), "ab", 1.0)
        ),
        check=lambda s: s.count("<svg") == 2 and "<title>" in s,
    ),
    "book_support.figures.explorers.language_model.next_token_figure": Row(
        ok=lambda: lm_explorer.next_token_figure(
            lm_explorer.next_token_state(char_model(), "ab", 1.0)
        ),
        check=is_fig,
    ),
    "book_support.figures.explorers.induction.induction_state": Row(
        ok=lambda: ind_explorer.induction_state(
            induction_pair(),
            ind.make_sequences(np.random.default_rng(0), 1, induction_model()[0])[0],
            1,
            0,
        ),
        check=lambda s: f64(s["weights"]) and s["weights"].shape == (5, 5),
        bad=[
            (
                lambda: ind_explorer.induction_state(
                    induction_pair(), np.zeros(6, int), 2, 0
                ),
                ValueError,
                "layer",
            )
        ],
    ),
    "book_support.figures.explorers.induction.induction_svg": Row(
        ok=lambda: ind_explorer.induction_svg(
            ind_explorer.induction_state(induction_pair(), np.zeros(6, int), 0, 1)
        ),
        check=lambda s: "<svg" in s and "<title>" in s,
    ),
    "book_support.figures.explorers.induction.induction_figure": Row(
        ok=lambda: ind_explorer.induction_figure(
            ind_explorer.induction_state(induction_pair(), np.zeros(6, int), 0, 1)
        ),
        check=is_fig,
    ),
}


@pytest.mark.parametrize("qualname", sorted(ROWS))
def test_contract(qualname):
    check_row(qualname, ROWS[qualname])
