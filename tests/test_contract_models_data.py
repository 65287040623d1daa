"""Issue 26: the contract of every public function of ``attnlib.data`` and
``attnlib.models``.

One row per function (:data:`ROWS`): a call with valid input whose result has the
documented type and dtype; bad inputs, each raising the documented error class with a
message that names the argument; and a call with extreme finite input (1e308, 1e-300,
one element, a one-hot distribution) that gives a finite result, or the documented
OverflowError, with no NaN and no warning (every warning is an error here). The
expected values of the valid calls are worked out independently where a value is
checked (by hand or with plain numpy).

``tests/test_public_contract.py`` holds the registry: every public function of the
package names the test that holds its contract; the rows below are those tests for
data/ and models/.
"""

from __future__ import annotations

import functools
import math

import adversarial_attention as aa
import numpy as np
import pytest
from contract_rows import Row, check_row, f64, finite

from attnlib.data import context_task as ct
from attnlib.data import learning_task as lt
from attnlib.data import translation_task as tt
from attnlib.models import bottleneck as bn
from attnlib.models import encoder_decoder as ed
from attnlib.models import linear_classifier as lc
from attnlib.models import minilm
from attnlib.models import recurrent as rc
from attnlib.models import rnn_decoder as rd
from book_support.experiments import context_classifier as cc
from book_support.experiments import translation_eval as te
from book_support.experiments import translation_training as tr

BIG = 1e308
TINY = 1e-300


@functools.cache
def classifier():
    return cc.init_context_classifier(0)


@functools.cache
def context_batch():
    return ct.encode_sentences(
        ["The fisherman repaired his net beside the bank.", "The bank was crowded."],
        labels=[0, 1],
    )


@functools.cache
def translator(attend=True):
    return ed.init_encoder_decoder(0, attend=attend, m=3, h=2, d=4, a=2)


BATCH = tt.make_batch(0, 2, 3)
#: the bottleneck chapter's training rule, on a budget of two steps
SMALL = dict(
    tr.CONFIG,
    m=3,
    h=2,
    d=4,
    a=2,
    batch_size=2,
    lengths=(2, 3),
    eval_every=1,
    patience=1,
    max_steps=2,
    validation_per_length=2,
)


@functools.cache
def small_evaluation():
    runs = {f"attention-forward-seed{s}": translator() for s in (0, 1)}
    return te.evaluate_runs(runs, lengths=(2, 3), n=2)


def rnn_args(scale=1.0, T=3, m=2, h=3):
    rng = np.random.default_rng(0)
    p = rc.init_rnn(rng, m, h)
    return rng.normal(size=(2, T, m)) * scale, p.W_x, p.W_h, p.b


def decoder_params(attend=True):
    return {k: v for k, v in translator(attend).params.items()}


def step_inputs(attend=True, scale=1.0):
    model = translator(attend)
    memory = np.ones((2, 3, 4)) * scale  # (B, T, 2h)
    s_prev = np.zeros((2, 4))  # (B, d)
    y = np.ones((2, 3)) * scale  # (B, m)
    return model.params, s_prev, y, memory


def step_backward(attend=True):
    p, s_prev, y, memory = step_inputs(attend)
    cache = rd.decoder_step(p, s_prev, y, memory, attend)
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    d_memory = np.zeros_like(memory)
    return rd.decoder_step_backward(
        p, cache, memory, np.ones((2, cache.logits.shape[1])), np.zeros((2, 4)), grads,
        d_memory,
    )  # fmt: skip


ONE_HOT, OTHER = [1.0, 0.0], [0.0, 1.0]

#: the primer's model on four examples of two features, by hand: w = (1, -1), b = 0
W_LC = lc.Params(np.array([1.0, -1.0]), 0.0)
X_LC = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [0.0, 0.0]])
Y_LC = np.array([1.0, 0.0, 1.0, 0.0])
HUGE_LC = lc.Params(np.array([1e300, -1e300]), 0.0)

ROWS = {
    # --- data ---------------------------------------------------------------------
    "attnlib.data.context_task.make_context_task": Row(
        ok=lambda: ct.make_context_task(4, 0),
        check=lambda b: b.tokens.dtype.kind == "i" and b.tokens.shape[0] == 4,
        bad=[
            (lambda: ct.make_context_task(0, 0), ValueError, "n must be"),
            (
                lambda: ct.make_context_task(2, 0, decoy_rate=2),
                ValueError,
                "decoy_rate",
            ),
            (
                lambda: ct.make_context_task(2, 0, min_len=9, max_len=8),
                ValueError,
                "min_len",
            ),
        ],
        extreme=lambda: ct.make_context_task(
            1, 0, min_len=3, max_len=3, decoy_rate=1.0
        ),
    ),
    "attnlib.data.context_task.encode_sentences": Row(
        ok=lambda: ct.encode_sentences(["The bank was crowded."]),
        check=lambda b: b.tokens.dtype.kind == "i" and b.tokens.shape == (1, 5),
        bad=[
            (lambda: ct.encode_sentences(["zzz bank"]), ValueError, "'zzz'"),
            (lambda: ct.encode_sentences(["The bank bat."]), ValueError, "exactly one"),
            (lambda: ct.encode_sentences("The bank."), TypeError, "sentences"),
        ],
        extreme=lambda: ct.encode_sentences(["bank"]),
    ),
    "attnlib.data.translation_task.make_batch": Row(
        ok=lambda: tt.make_batch(0, 2, 3),
        check=lambda b: b.source.dtype == np.int64 and b.source.shape == (2, 3),
        bad=[
            (lambda: tt.make_batch(0, 0, 3), ValueError, "n must be at least 1"),
            (lambda: tt.make_batch(0, 2, 0), ValueError, "length"),
        ],
        extreme=lambda: tt.make_batch(0, 1, 2),  # the shortest: a verb, a word
    ),
    "attnlib.data.translation_task.translate": Row(
        ok=lambda: tt.translate("big dog sees red cat".split()),
        check=lambda w: sorted(w) == ["chat", "chien", "grand", "rouge", "voit"],
        bad=[(lambda: tt.translate(["zzz"]), ValueError, "'zzz'")],
        extreme=lambda: tt.translate([]),
    ),
    "attnlib.data.translation_task.source_words": Row(
        ok=lambda: tt.source_words(np.array([0, 1])),
        check=lambda w: w == list(tt.SOURCE_VOCAB[:2]),
        bad=[
            (lambda: tt.source_words([-1]), ValueError, "ids"),
            (lambda: tt.source_words([10**6]), ValueError, "ids"),
            (lambda: tt.source_words([0.5]), TypeError, "ids"),
        ],
        extreme=lambda: tt.source_words([len(tt.SOURCE_VOCAB) - 1]),
    ),
    "attnlib.data.translation_task.target_words": Row(
        ok=lambda: tt.target_words([0, 1]),
        check=lambda w: w == list(tt.TARGET_VOCAB[:2]),
        bad=[
            (lambda: tt.target_words([-1]), ValueError, "ids"),
            (lambda: tt.target_words([10**6]), ValueError, "ids"),
        ],
        extreme=lambda: tt.target_words([len(tt.TARGET_VOCAB) - 1]),
    ),
    "attnlib.data.learning_task.make_examples": Row(
        ok=lambda: lt.make_examples(5, n_features=3, seed=1),
        check=lambda r: f64(r[0]) and r[0].shape == (5, 3) and set(r[1]) <= {0.0, 1.0},
        bad=[
            (lambda: lt.make_examples(-1), ValueError, "n must be"),
            (
                lambda: lt.make_examples(3, n_informative=4, n_features=3),
                ValueError,
                "n_informative=4",
            ),
            (lambda: lt.make_examples(3, noise=np.inf), ValueError, "noise"),
        ],
        extreme=lambda: lt.make_examples(0, n_features=1, n_informative=1, noise=1e300),
    ),
    "attnlib.data.learning_task.make_split": Row(
        ok=lambda: lt.make_split(6, 4, n_features=3),
        check=lambda s: (
            s.X_train.shape == (6, 3) and s.y_val.shape == (4,) and f64(s.X_val)
        ),
        bad=[(lambda: lt.make_split(-1, 4), ValueError, "n_train must be")],
        extreme=lambda: lt.make_split(0, 0),
    ),
    # --- models: the learning primer's linear classifier ----------------------------
    "attnlib.models.linear_classifier.sigmoid": Row(
        ok=lambda: lc.sigmoid([0.0, np.log(3.0)]),
        check=lambda p: f64(p) and np.allclose(p, [0.5, 0.75]),
        bad=[(lambda: lc.sigmoid("z"), TypeError, "z must hold real numbers")],
        extreme=lambda: lc.sigmoid([BIG, -BIG, TINY]),
    ),
    "attnlib.models.linear_classifier.init_params": Row(
        ok=lambda: lc.init_params(3, seed=2),
        check=lambda p: f64(p.w) and p.w.shape == (3,) and p.b == 0.0,
        bad=[(lambda: lc.init_params(0), ValueError, "d must be")],
        extreme=lambda: lc.init_params(1, scale=1e300),
    ),
    "attnlib.models.linear_classifier.predict": Row(
        ok=lambda: lc.predict(W_LC, X_LC),
        check=lambda p: f64(p) and np.allclose(p, lc.sigmoid([1.0, -1.0, 0.0, 0.0])),
        bad=[(lambda: lc.predict(W_LC, np.ones((2, 3))), ValueError, "X")],
        extreme=lambda: lc.predict(HUGE_LC, X_LC),
        extreme_error=OverflowError,
    ),
    "attnlib.models.linear_classifier.loss": Row(
        ok=lambda: lc.loss(W_LC, X_LC, Y_LC),
        check=lambda v: (
            isinstance(v, float)
            and abs(v - np.mean(np.log1p(np.exp([-1.0, -1.0, 0.0, 0.0])))) < 1e-15
        ),
        bad=[
            (lambda: lc.loss(W_LC, X_LC, Y_LC[:2]), ValueError, "y shape"),
            (lambda: lc.loss(W_LC, X_LC, Y_LC * 2), ValueError, "0 or 1"),
        ],
        extreme=lambda: lc.loss(lc.Params(np.array([1e150, -1e150]), 0.0), X_LC, Y_LC),
    ),
    "attnlib.models.linear_classifier.gradient": Row(
        ok=lambda: lc.gradient(W_LC, X_LC, Y_LC),
        check=lambda g: (
            f64(g.w) and np.allclose(g.w, lc.numerical_gradient_w(W_LC, X_LC, Y_LC))
        ),
        bad=[(lambda: lc.gradient(W_LC, X_LC[:, :1], Y_LC), ValueError, "X")],
        extreme=lambda: lc.gradient(
            lc.Params(np.array([1e150, -1e150]), 0.0), X_LC, Y_LC
        ),
    ),
    "attnlib.models.linear_classifier.step": Row(
        ok=lambda: lc.step(W_LC, lc.Params(np.array([1.0, 1.0]), 1.0), 0.5),
        check=lambda p: f64(p.w) and p.w.tolist() == [0.5, -1.5] and p.b == -0.5,
        bad=[(lambda: lc.step(W_LC, W_LC, "fast"), TypeError, "learning_rate")],
        extreme=lambda: lc.step(W_LC, lc.Params(np.array([-BIG, BIG]), 0.0), BIG),
        extreme_error=OverflowError,
    ),
    "attnlib.models.linear_classifier.accuracy": Row(
        ok=lambda: lc.accuracy(W_LC, X_LC, Y_LC),
        check=lambda a: a == 0.75,  # right on rows 0, 1, 3; p = 0.5 counts as label 0
        bad=[(lambda: lc.accuracy(W_LC, X_LC, Y_LC[:3]), ValueError, "y shape")],
        extreme=lambda: lc.accuracy(HUGE_LC, X_LC, Y_LC),
        extreme_error=OverflowError,
    ),
    "attnlib.models.linear_classifier.train": Row(
        ok=lambda: lc.train(
            X_LC, Y_LC, X_LC, Y_LC, eval_every=1, patience=2, max_steps=5
        ),
        check=lambda r: f64(r.steps) and r.reason in ("patience", "budget"),
        bad=[
            (
                lambda: lc.train(X_LC, Y_LC, X_LC, Y_LC, learning_rate=0),
                ValueError,
                "learning_rate",
            ),
            (
                lambda: lc.train(X_LC, Y_LC, X_LC, Y_LC, patience=0),
                ValueError,
                "patience",
            ),
            (lambda: lc.train(X_LC, Y_LC, X_LC[:, :1], Y_LC), ValueError, "features"),
        ],
        extreme=lambda: lc.train(
            X_LC, Y_LC, X_LC, Y_LC, learning_rate=1e150, max_steps=3, eval_every=1
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.models.linear_classifier.numerical_gradient_w": Row(
        ok=lambda: lc.numerical_gradient_w(W_LC, X_LC, Y_LC),
        check=lambda g: (
            f64(g) and np.allclose(g, lc.gradient(W_LC, X_LC, Y_LC).w, atol=1e-8)
        ),
        bad=[
            (
                lambda: lc.numerical_gradient_w(W_LC, X_LC, Y_LC[:1]),
                ValueError,
                "y shape",
            )
        ],
    ),
    "attnlib.models.linear_classifier.loss_along": Row(
        ok=lambda: lc.loss_along(W_LC, X_LC, Y_LC, 0, [1.0, 2.0]),
        check=lambda v: f64(v) and v[0] == lc.loss(W_LC, X_LC, Y_LC),
        bad=[(lambda: lc.loss_along(W_LC, X_LC, Y_LC, 5, [1.0]), ValueError, "index")],
        extreme=lambda: lc.loss_along(W_LC, X_LC, Y_LC, 0, [1e150, -1e150]),
    ),
    "attnlib.models.linear_classifier.descent_along": Row(
        ok=lambda: lc.descent_along(W_LC, X_LC, Y_LC, 0, 0.5, 3),
        check=lambda r: f64(r[0]) and r[0].shape == (3,) and r[0][0] == 1.0,
        bad=[
            (lambda: lc.descent_along(W_LC, X_LC, Y_LC, 9, 0.5, 3), ValueError, "index")
        ],
        extreme=lambda: lc.descent_along(W_LC, X_LC, Y_LC, 0, 1e150, 2),
    ),
    # --- models: the adversarial-attention search ----------------------------------
    "adversarial_attention.jensen_shannon": Row(
        ok=lambda: aa.jensen_shannon(ONE_HOT, OTHER),
        check=lambda v: isinstance(v, float) and abs(v - math.log(2)) < 1e-15,
        bad=[
            (lambda: aa.jensen_shannon(ONE_HOT, [1.0, 0, 0]), ValueError, "p (2,)"),
            (lambda: aa.jensen_shannon([-1.0, 2.0], OTHER), ValueError, "p"),
            (lambda: aa.jensen_shannon(ONE_HOT, [BIG, 0.0]), ValueError, "q"),
        ],
        extreme=lambda: aa.jensen_shannon([1 - TINY, TINY], [TINY, 1 - TINY]),
    ),
    "adversarial_attention.total_variation": Row(
        ok=lambda: aa.total_variation([0.2, 0.8], [0.6, 0.4]),
        check=lambda v: isinstance(v, float) and abs(v - 0.4) < 1e-15,
        bad=[
            (lambda: aa.total_variation(ONE_HOT, [1.0, 0, 0]), ValueError, "p (2,)"),
            (lambda: aa.total_variation([np.nan, 1.0], OTHER), ValueError, "p"),
        ],
        extreme=lambda: aa.total_variation([1.0, TINY], [TINY, 1.0]),
    ),
    "adversarial_attention.predict_with_attention": Row(
        ok=lambda: aa.predict_with_attention(
            classifier(),
            context_batch(),
            cc.forward(classifier(), context_batch()).query_weights,
        ),
        check=lambda p: f64(p) and p.shape == (2, 2),
        bad=[
            (
                lambda: aa.predict_with_attention(
                    classifier(), context_batch(), np.ones((2, 3))
                ),
                ValueError,
                "weights",
            ),
        ],
        extreme=lambda: aa.predict_with_attention(
            classifier(), context_batch(), np.eye(2, context_batch().tokens.shape[1])
        ),
    ),
    "adversarial_attention.search_alternative_attention": Row(
        ok=lambda: aa.search_alternative_attention(
            classifier(), context_batch(), steps=3, restarts=1
        ),
        check=lambda r: f64(r.weights) and isinstance(r.jsd, float),
        bad=[
            (
                lambda: aa.search_alternative_attention(
                    classifier(), context_batch(), epsilon=0
                ),
                ValueError,
                "epsilon",
            ),
            (
                lambda: aa.search_alternative_attention(
                    classifier(), context_batch(), index=5
                ),
                ValueError,
                "index",
            ),
            (
                lambda: aa.search_alternative_attention(
                    classifier(), context_batch(), steps=0
                ),
                ValueError,
                "steps",
            ),
        ],
        extreme=lambda: aa.search_alternative_attention(
            classifier(), context_batch(), steps=2, restarts=1, lr=1e6, penalty=1e6
        ),
    ),
    # --- models: the bottleneck experiment -----------------------------------------
    "attnlib.models.bottleneck.final_state_jacobians": Row(
        ok=lambda: bn.final_state_jacobians(*rnn_args()),
        check=lambda J: f64(J) and J.shape == (2, 3, 3, 2),
        bad=[
            (
                lambda: bn.final_state_jacobians(
                    np.ones((2, 3)), np.ones((4, 3)), np.eye(3), np.zeros(3)
                ),
                ValueError,
                "W_x",
            ),
            (
                lambda: bn.final_state_jacobians(
                    np.full((1, 2), np.nan), np.ones((2, 3)), np.eye(3), np.zeros(3)
                ),
                ValueError,
                "inputs",
            ),
        ],
        extreme=lambda: bn.final_state_jacobians(*rnn_args(scale=BIG)),
        extreme_error=OverflowError,
    ),
    "attnlib.models.bottleneck.attend_to_positions": Row(
        ok=lambda: bn.attend_to_positions(np.eye(4), [0, 2]),
        check=lambda r: f64(r[0]) and f64(r[1]) and np.allclose(r[1].sum(-1), 1),
        bad=[
            (lambda: bn.attend_to_positions(np.ones(4), [0]), ValueError, "states"),
            (
                lambda: bn.attend_to_positions(np.eye(4), [0, 9]),
                ValueError,
                "positions",
            ),
            (
                lambda: bn.attend_to_positions(np.eye(4), [0], sharpness=0),
                ValueError,
                "sharpness",
            ),
        ],
        extreme=lambda: bn.attend_to_positions(
            np.full((4, 2), 1e300), [0, 3], sharpness=1e300
        ),
    ),
    "attnlib.models.bottleneck.decoder_context": Row(
        ok=lambda: bn.decoder_context(
            np.ones((1, 2)), np.eye(3, 2), np.eye(2), np.eye(2), np.ones(2)
        ),
        check=lambda r: f64(r[0]) and r[1].shape == (1, 3),
        bad=[
            (
                lambda: bn.decoder_context(
                    np.ones((1, 2)), np.eye(3, 2), np.eye(3), np.eye(2), np.ones(2)
                ),
                ValueError,
                "W_q",
            ),
        ],
        extreme=lambda: bn.decoder_context(
            np.full((1, 2), BIG), np.eye(3, 2), np.eye(2), np.eye(2), np.ones(2)
        ),
    ),
    "attnlib.models.bottleneck.linear_recovery_r2": Row(
        ok=lambda: bn.linear_recovery_r2(
            np.arange(10.0)[:, None],
            2 * np.arange(10.0)[:, None],
            np.arange(4.0)[:, None],
            2 * np.arange(4.0)[:, None],
        ),
        check=lambda r: isinstance(r, float) and abs(r - 1.0) < 1e-12,
        bad=[
            (
                lambda: bn.linear_recovery_r2(
                    np.ones((5, 1)), np.ones((5, 1)), np.ones((3, 1)), np.ones((3, 1))
                ),
                ValueError,
                "constant",
            ),
            (
                lambda: bn.linear_recovery_r2(
                    np.ones((5, 1)),
                    np.ones((4, 1)),
                    np.ones((3, 1)),
                    np.arange(3.0)[:, None],
                ),
                ValueError,
                "train_targets",
            ),
        ],
        extreme=lambda: bn.linear_recovery_r2(
            1e150 * np.arange(10.0)[:, None],
            np.arange(10.0)[:, None],
            1e150 * np.arange(4.0)[:, None],
            np.arange(4.0)[:, None],
        ),
    ),
    "attnlib.models.bottleneck.capacity_bound": Row(
        ok=lambda: bn.capacity_bound(16, 2, 40),
        check=lambda v: v == 0.2,
        bad=[(lambda: bn.capacity_bound(0, 2, 40), ValueError, "hidden_size")],
        extreme=lambda: bn.capacity_bound(10**300, 1, 1),
    ),
    "attnlib.models.bottleneck.recovery_experiment": Row(
        ok=lambda: bn.recovery_experiment([2, 3], n_train=60, n_test=30),
        check=lambda r: finite(r),
        bad=[(lambda: bn.recovery_experiment([0]), ValueError, "length")],
        extreme=lambda: bn.recovery_experiment(
            [1], n_train=60, n_test=30, input_scale=1e6
        ),
    ),
    # --- models: the context classifier --------------------------------------------
    "book_support.experiments.context_classifier.init_context_classifier": Row(
        ok=lambda: cc.init_context_classifier(0),
        check=lambda m: f64(m.W_Q) and m.pooling == "attention",
        bad=[
            (
                lambda: cc.init_context_classifier(0, pooling="max"),
                ValueError,
                "pooling",
            ),
            (lambda: cc.init_context_classifier(0, d_k=0), ValueError, "d_k"),
        ],
        extreme=lambda: cc.init_context_classifier(0, d_k=1, d_v=1, input_scale=1e150),
    ),
    "book_support.experiments.context_classifier.forward": Row(
        ok=lambda: cc.forward(classifier(), context_batch()),
        check=lambda r: f64(r.probs) and np.allclose(r.probs.sum(-1), 1),
        bad=[(lambda: cc.forward(classifier(), BATCH), TypeError, "batch")],
        extreme=lambda: cc.forward(
            cc.init_context_classifier(0, input_scale=1e150), context_batch()
        ),
        extreme_error=OverflowError,
    ),
    "book_support.experiments.context_classifier.attention_map": Row(
        ok=lambda: cc.attention_map(classifier(), context_batch()),
        check=lambda w: (
            f64(w) and np.allclose(w.sum(-1)[0, : context_batch().lengths[0]], 1)
        ),
        bad=[(lambda: cc.attention_map(classifier(), "batch"), TypeError, "batch")],
    ),
    "book_support.experiments.context_classifier.cross_entropy": Row(
        ok=lambda: cc.cross_entropy(np.array([[0.5, 0.5]]), np.array([1])),
        check=lambda v: isinstance(v, float) and abs(v - math.log(2)) < 1e-15,
        bad=[
            (lambda: cc.cross_entropy(np.ones(2), np.array([1])), ValueError, "probs"),
            (
                lambda: cc.cross_entropy(np.array([[0.5, 0.5]]), np.array([3])),
                ValueError,
                "labels",
            ),
        ],
        extreme=lambda: cc.cross_entropy(np.array([[1.0, 0.0]]), np.array([1])),
    ),
    "book_support.experiments.context_classifier.loss": Row(
        ok=lambda: cc.loss(classifier(), context_batch()),
        check=lambda v: isinstance(v, float) and v > 0,
        bad=[(lambda: cc.loss(classifier(), None), TypeError, "batch")],
    ),
    "book_support.experiments.context_classifier.loss_and_gradients": Row(
        ok=lambda: cc.loss_and_gradients(classifier(), context_batch()),
        check=lambda r: isinstance(r[0], float) and all(f64(g) for g in r[1].values()),
        bad=[(lambda: cc.loss_and_gradients(classifier(), None), TypeError, "batch")],
    ),
    "book_support.experiments.context_classifier.accuracy": Row(
        ok=lambda: cc.accuracy(classifier(), context_batch()),
        check=lambda v: isinstance(v, float) and 0 <= v <= 1,
        bad=[(lambda: cc.accuracy(classifier(), None), TypeError, "batch")],
    ),
    "book_support.experiments.context_classifier.train": Row(
        ok=lambda: cc.train(cc.init_context_classifier(0), context_batch(), steps=2),
        check=lambda m: f64(m.W_Q) and finite(m.history),
        bad=[
            (
                lambda: cc.train(
                    cc.init_context_classifier(0), context_batch(), steps=-1
                ),
                ValueError,
                "steps",
            )
        ],
        extreme=lambda: cc.train(
            cc.init_context_classifier(0), context_batch(), steps=2, lr=1e6
        ),
    ),
    "book_support.experiments.context_classifier.context_datasets": Row(
        ok=lambda: cc.context_datasets(0, n_train=5, n_test=3),
        check=lambda r: r[0].tokens.shape[0] == 5 and r[1].tokens.shape[0] == 3,
        bad=[(lambda: cc.context_datasets(0, n_train=0), ValueError, "n")],
        extreme=lambda: cc.context_datasets(0, n_train=1, n_test=1),
    ),
    "book_support.experiments.context_classifier.train_context_classifier": Row(
        ok=lambda: cc.train_context_classifier(0, steps=2, n_train=20, n_test=10),
        check=lambda m: f64(m.W_Q),
        bad=[
            (
                lambda: cc.train_context_classifier(0, pooling="max", steps=1),
                ValueError,
                "pooling",
            )
        ],
    ),
    # --- models: the encoder-decoder (save and load: their own test file) ----------
    "attnlib.models.encoder_decoder.init_encoder_decoder": Row(
        ok=lambda: ed.init_encoder_decoder(0, attend=True, m=3, h=2, d=4, a=2),
        check=lambda m: all(f64(v) for v in m.params.values()),
        bad=[
            (
                lambda: ed.init_encoder_decoder(0, attend=True, h=0),
                ValueError,
                "h must be at least 1",
            )
        ],
        extreme=lambda: ed.init_encoder_decoder(0, attend=False, m=1, h=1, d=1, a=1),
    ),
    "attnlib.models.encoder_decoder.forward": Row(
        ok=lambda: ed.forward(translator(), BATCH),
        check=lambda r: f64(r.logits) and r.weights.shape == (2, 3, 3),
        bad=[(lambda: ed.forward(translator(), "batch"), TypeError, "batch")],
    ),
    "attnlib.models.encoder_decoder.loss": Row(
        ok=lambda: ed.loss(translator(), BATCH),
        check=lambda v: isinstance(v, float) and v > 0,
        bad=[(lambda: ed.loss("model", BATCH), TypeError, "model")],
    ),
    "attnlib.models.encoder_decoder.loss_and_gradients": Row(
        ok=lambda: ed.loss_and_gradients(translator(), BATCH),
        check=lambda r: isinstance(r[0], float) and all(f64(g) for g in r[1].values()),
        bad=[(lambda: ed.loss_and_gradients(translator(), None), TypeError, "batch")],
    ),
    "attnlib.models.encoder_decoder.translate_greedy": Row(
        ok=lambda: ed.translate_greedy(translator(), BATCH.source),
        check=lambda r: r[0].dtype == np.int64 and f64(r[1]),
        bad=[
            (
                lambda: ed.translate_greedy(translator(), np.zeros(3, int)),
                ValueError,
                "source",
            ),
            (
                lambda: ed.translate_greedy(translator(), np.full((1, 3), 99)),
                ValueError,
                "source ids",
            ),
        ],
        extreme=lambda: ed.translate_greedy(translator(False), np.zeros((1, 1), int)),
    ),
    # --- models: the pretrained MiniLM ---------------------------------------------
    "attnlib.models.minilm.model_dir": Row(
        ok=minilm.model_dir,
        check=lambda p: p.is_dir() and (p / "config.json").is_file(),
    ),
    "attnlib.models.minilm.encode": Row(
        ok=lambda: minilm.encode("The bank."),
        check=lambda r: r[0][0] == "[CLS]" and r[1].dtype == np.int64,
        bad=[
            (lambda: minilm.encode(["a"]), TypeError, "text must be a str"),
            (lambda: minilm.encode("a " * 600), ValueError, "tokens"),
        ],
        extreme=lambda: minilm.encode(""),
    ),
    "attnlib.models.minilm.layer_norm": Row(
        ok=lambda: minilm.layer_norm(np.array([1.0, 3.0]), np.ones(2), np.zeros(2)),
        check=lambda y: f64(y) and np.allclose(y, [-1, 1]),
        bad=[
            (
                lambda: minilm.layer_norm(np.ones(2), np.ones(3), np.zeros(2)),
                ValueError,
                "gain",
            )
        ],
        extreme=lambda: minilm.layer_norm(
            np.array([BIG, -BIG]), np.ones(2), np.zeros(2)
        ),
    ),
    "attnlib.models.minilm.weighted_norms": Row(
        ok=lambda: minilm.weighted_norms(
            np.array([[0.6, 0.1]]), np.array([[0.3, 0.4], [3.0, 4.0]])
        ),
        check=lambda n: f64(n) and np.allclose(n, [[0.3, 0.5]]),
        bad=[
            (
                lambda: minilm.weighted_norms(np.ones((1, 2)), np.ones((3, 3))),
                ValueError,
                "weights (1, 2)",
            )
        ],
        extreme=lambda: minilm.weighted_norms(np.ones((1, 2)), np.full((2, 3), 1e200)),
    ),
    "attnlib.models.minilm.encoder_layer": Row(
        ok=lambda: minilm.encoder_layer(
            np.zeros((3, 384)), minilm.load_weights().layers[0]
        ),
        check=lambda r: (
            f64(r[0]) and r[1].shape == (12, 3, 3) and r[2].shape == (12, 3, 384)
        ),
        bad=[
            (
                lambda: minilm.encoder_layer(
                    np.zeros((3, 5)), minilm.load_weights().layers[0]
                ),
                ValueError,
                "x",
            )
        ],
    ),
    "attnlib.models.minilm.forward": Row(
        ok=lambda: minilm.forward("The bank."),
        check=lambda o: f64(o.attention) and o.attention.shape[:2] == (6, 12),
        bad=[
            (lambda: minilm.forward(3.5), TypeError, "str"),
            (lambda: minilm.forward([10**9]), ValueError, "id"),
            (
                lambda: minilm.forward("x", head_mask=np.ones((6, 12))),
                TypeError,
                "head_mask",
            ),
            (
                lambda: minilm.forward("x", head_mask=np.ones((5, 12), bool)),
                ValueError,
                "head_mask",
            ),
        ],
        extreme=lambda: minilm.forward("x", head_mask=np.zeros((6, 12), bool)),
    ),
    # --- models: the recurrent network and its decoder -----------------------------
    "attnlib.models.recurrent.init_rnn": Row(
        ok=lambda: rc.init_rnn(np.random.default_rng(0), 2, 3),
        check=lambda p: f64(p.W_x) and p.W_h.shape == (3, 3),
        bad=[
            (
                lambda: rc.init_rnn(np.random.default_rng(0), 0, 3),
                ValueError,
                "input_size",
            ),
            (
                lambda: rc.init_rnn(np.random.default_rng(0), 2, 3, spectral_radius=-1),
                ValueError,
                "spectral_radius",
            ),
        ],
        extreme=lambda: rc.init_rnn(
            np.random.default_rng(0), 1, 1, spectral_radius=1e300
        ),
    ),
    "attnlib.models.recurrent.rnn_encode": Row(
        ok=lambda: rc.rnn_encode(*rnn_args()),
        check=lambda r: (
            f64(r[0]) and r[0].shape == (2, 3, 3) and np.array_equal(r[1], r[0][:, -1])
        ),
        bad=[
            (
                lambda: rc.rnn_encode(
                    np.ones((2, 3)), np.ones((2, 3)), np.eye(3), np.zeros(3)
                ),
                ValueError,
                "W_x",
            ),
            (
                lambda: rc.rnn_encode(
                    np.ones((0, 2)), np.ones((2, 3)), np.eye(3), np.zeros(3)
                ),
                ValueError,
                "inputs",
            ),
            (
                lambda: rc.rnn_encode(
                    np.array([["a", "b"]]), np.ones((2, 3)), np.eye(3), np.zeros(3)
                ),
                TypeError,
                "inputs",
            ),
        ],
        extreme=lambda: rc.rnn_encode(*rnn_args(scale=BIG)),
        extreme_error=OverflowError,
    ),
    "attnlib.models.recurrent.rnn_step": Row(
        ok=lambda: rc.rnn_step(
            np.ones(2), np.zeros(3), np.ones((2, 3)), np.eye(3), np.zeros(3)
        ),
        check=lambda h: f64(h) and np.allclose(h, np.tanh(2.0)),
        bad=[
            (
                lambda: rc.rnn_step(
                    np.ones(2), np.zeros(3), np.ones((4, 3)), np.eye(3), np.zeros(3)
                ),
                ValueError,
                "W_x",
            )
        ],
        extreme=lambda: rc.rnn_step(
            np.full(2, BIG), np.zeros(3), np.ones((2, 3)), np.eye(3), np.zeros(3)
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.models.recurrent.rnn_backward": Row(
        ok=lambda: rc.rnn_backward(
            rnn_args()[0],
            rc.rnn_encode(*rnn_args())[0],
            np.zeros((2, 3)),
            rnn_args()[1],
            rnn_args()[2],
            np.ones((2, 3, 3)),
        ),
        check=lambda g: all(f64(v) for v in g.values()) and g["W_x"].shape == (2, 3),
        bad=[
            (
                lambda: rc.rnn_backward(
                    np.ones((2, 3)),
                    np.ones((2, 3, 3)),
                    np.zeros((2, 3)),
                    np.ones((2, 3)),
                    np.eye(3),
                    np.ones((2, 3, 3)),
                ),
                ValueError,
                "inputs",
            )
        ],
    ),
    "attnlib.models.rnn_decoder.decoder_step": Row(
        ok=lambda: rd.decoder_step(*step_inputs(), True),
        check=lambda c: (
            f64(c.s) and c.weights.shape == (2, 3) and np.allclose(c.weights.sum(-1), 1)
        ),
        bad=[(lambda: rd.decoder_step({}, *step_inputs()[1:], True), KeyError, "W_")],
        extreme=lambda: rd.decoder_step(*step_inputs(scale=1e300), True),
        extreme_error=OverflowError,
    ),
    "attnlib.models.rnn_decoder.decoder_step_backward": Row(
        ok=step_backward,
        check=lambda r: f64(r[0]) and r[0].shape == (2, 4) and r[1].shape == (2, 3),
    ),
    # --- models: the bottleneck chapter's training and evaluation ---------------------
    "book_support.experiments.translation_training.clip_by_global_norm": Row(
        ok=lambda: tr.clip_by_global_norm({"a": np.array([3.0, 4.0])}, 1.0),
        check=lambda v: v == 5.0,
    ),
    "book_support.experiments.translation_training.run_name": Row(
        ok=lambda: tr.run_name("attention-forward", 1),
        check=lambda n: n == "attention-forward-seed1",
        bad=[(lambda: tr.run_name("attention", 0), ValueError, "unknown kind")],
    ),
    "book_support.experiments.translation_training.validation_set": Row(
        ok=lambda: tr.validation_set(SMALL),
        check=lambda bs: [b.source.shape for b in bs] == [(2, 2), (2, 3)],
        bad=[
            (
                lambda: tr.validation_set(dict(SMALL, lengths=(0, 1))),
                ValueError,
                "length",
            )
        ],
    ),
    "book_support.experiments.translation_training.validation_loss": Row(
        ok=lambda: tr.validation_loss(translator(), tr.validation_set(SMALL)),
        check=lambda v: isinstance(v, float) and v > 0,
        bad=[(lambda: tr.validation_loss(translator(), []), ValueError, "batch")],
    ),
    "book_support.experiments.translation_training.train": Row(
        ok=lambda: tr.train(
            ed.init_encoder_decoder(0, attend=True, m=3, h=2, d=4, a=2),
            tr.validation_set(SMALL),
            seed=0,
            config=SMALL,
        ),
        check=lambda m: (
            all(f64(v) for v in m.params.values()) and m.history["stopped_at"] == [2]
        ),
        bad=[
            (
                lambda: tr.train(
                    translator(), [], seed=0, config=dict(SMALL, lengths=(1, 3))
                ),
                ValueError,
                "lengths",
            )
        ],
    ),
    "book_support.experiments.translation_training.train_run": Row(
        ok=lambda: tr.train_run("attention-forward", 0, SMALL),
        check=lambda m: m.attend and not m.bidirectional,
        bad=[(lambda: tr.train_run("attention", 0, SMALL), ValueError, "unknown kind")],
    ),
    "book_support.experiments.translation_eval.test_batches": Row(
        ok=lambda: te.test_batches([2, 3], n=2),
        check=lambda bs: [b.source.shape for b in bs] == [(2, 2), (2, 3)],
        bad=[(lambda: te.test_batches([0], n=2), ValueError, "length")],
    ),
    "book_support.experiments.translation_eval.evaluate": Row(
        ok=lambda: te.evaluate(translator(), BATCH),
        check=lambda s: 0 <= s.greedy <= 1 and 0 <= s.alignment_kept <= 1,
        bad=[(lambda: te.evaluate(translator(), None), TypeError, "batch")],
    ),
    "book_support.experiments.translation_eval.evaluate_runs": Row(
        ok=small_evaluation,
        check=lambda e: [s.length for s in e["attention-forward-seed0"]] == [2, 3],
        bad=[
            (
                lambda: te.evaluate_runs({"a": translator()}, lengths=(0,), n=2),
                ValueError,
                "length",
            )
        ],
    ),
    "book_support.experiments.translation_eval.alignment_offsets": Row(
        ok=lambda: te.alignment_offsets(translator(), BATCH),
        check=lambda o: o.shape == (2, 3) and o.dtype == np.int64,
        bad=[
            (
                lambda: te.alignment_offsets(translator(False), BATCH),
                ValueError,
                "attention",
            ),
            (lambda: te.alignment_offsets(translator(), None), TypeError, "batch"),
        ],
    ),
    "book_support.experiments.translation_eval.farthest_verb": Row(
        ok=lambda: te.farthest_verb(BATCH),
        check=lambda b: (
            len(b) == 1 and b.alignment[0, -1] == BATCH.alignment[:, -1].min()
        ),
        bad=[(lambda: te.farthest_verb(None), TypeError, "batch")],
    ),
    "book_support.experiments.translation_eval.verb_moves": Row(
        ok=lambda: te.verb_moves(BATCH),
        check=lambda m: m.shape == (2,) and m.dtype == np.int64 and (m >= 0).all(),
        bad=[(lambda: te.verb_moves(None), TypeError, "batch")],
    ),
    "book_support.experiments.translation_eval.alignment_by_correctness": Row(
        ok=lambda: te.alignment_by_correctness(translator(), BATCH),
        check=lambda r: set(r) == {"correct", "wrong", "n_wrong"},
        bad=[
            (
                lambda: te.alignment_by_correctness(translator(False), BATCH),
                ValueError,
                "attention",
            ),
            (
                lambda: te.alignment_by_correctness(translator(), None),
                TypeError,
                "batch",
            ),
        ],
    ),
    "book_support.experiments.translation_eval.separated": Row(
        ok=lambda: te.separated(
            small_evaluation(), "greedy", "attention-forward", "attention-forward"
        ),
        check=lambda r: r == {"a_above": [], "b_above": []},
        bad=[
            (
                lambda: te.separated(
                    small_evaluation(), "greedy", "attention-forward", "context"
                ),
                ValueError,
                "no run of kind",
            ),
            (
                lambda: te.separated(small_evaluation(), "x", "a", "b"),
                ValueError,
                "metric",
            ),
        ],
    ),
    "book_support.experiments.translation_eval.chance_of_separation": Row(
        ok=lambda: te.chance_of_separation(3, 3),
        check=lambda p: p == 1 / 20,
        bad=[(lambda: te.chance_of_separation(0, 3), ValueError, "n_a")],
    ),
    "book_support.experiments.translation_eval.kind_of": Row(
        ok=lambda: te.kind_of("attention-forward-seed12"),
        check=lambda k: k == "attention-forward",
        bad=[(lambda: te.kind_of("attention"), ValueError, "run name")],
    ),
    "book_support.experiments.translation_eval.across_seeds": Row(
        ok=lambda: te.across_seeds(small_evaluation(), "greedy"),
        check=lambda t: t["attention-forward"]["seeds"].shape == (2, 2),
        bad=[
            (
                lambda: te.across_seeds(small_evaluation(), "greedy_by_position"),
                ValueError,
                "metric",
            )
        ],
    ),
    "book_support.experiments.translation_eval.by_position": Row(
        ok=lambda: te.by_position(small_evaluation(), 3, "teacher_forced"),
        check=lambda t: t["attention-forward"]["mean"].shape == (3,),
        bad=[
            (
                lambda: te.by_position(small_evaluation(), 9, "greedy"),
                ValueError,
                "length 9",
            ),
            (
                lambda: te.by_position(small_evaluation(), 3, "sentence"),
                ValueError,
                "metric",
            ),
        ],
    ),
    "book_support.experiments.translation_eval.mean_and_range": Row(
        ok=lambda: te.mean_and_range(
            {
                "mean": [0.5, np.nan, 0.7],
                "min": [0.4, np.nan, 0.7],
                "max": [0.6, np.nan, 0.7],
            }
        ),
        check=lambda t: t == ["50.0 (40.0-60.0)", "-", "70.0"],
    ),
    "book_support.experiments.translation_eval.summary_lines": Row(
        ok=lambda: te.summary_lines(small_evaluation()),
        check=lambda lines: len(lines) == 2 and all(isinstance(x, str) for x in lines),
    ),
}


@pytest.mark.parametrize("qualname", sorted(ROWS))
def test_contract(qualname):
    check_row(qualname, ROWS[qualname])
