"""Issue 26: the contract of every public function of ``attnlib.core`` and
``attnlib.layers``, one row each (:data:`ROWS`).

A row is a call with valid input whose result has the documented dtype and a value
worked out here independently (plain numpy or Python's ``math``, never attnlib); bad
inputs, each raising the documented error class with a message naming the argument;
and a call with extreme finite input (1e300, 1e-300, float16's 65504, one element)
that gives a finite result or the documented OverflowError, with no NaN and no warning
(every warning is an error here). The building blocks that trust their caller's
checks (``mask_and_max``, ``exp_normalise``, ``online_softmax``, ``key_tiles``, ...)
have no bad-input rows: their callers' rows hold those errors.

The deeper tests stay where they are (``test_contract.py``'s property test over the
entry points, ``test_layers_contract.py``'s dtypes, bad-input table and edges,
``test_mask_rule.py``); ``tests/test_contract_generated.py`` draws bad input for every
public function from its arguments' domains.
"""

from __future__ import annotations

import dataclasses
import math
import threading

import numpy as np
import pytest
from contract_rows import Row, check_row

from attnlib.core import attention as at
from attnlib.core import backward as bw
from attnlib.core import dropout as dr
from attnlib.core import heads as hd
from attnlib.core import masks as mk
from attnlib.core import scaling as sc
from attnlib.core import scores as scs
from attnlib.core import softmax as sm
from attnlib.core import tiled as td
from attnlib.core import tiles as tl
from attnlib.core._validation import check_attention
from attnlib.layers import decoder_layer as dl
from attnlib.layers import encoder_layer as el
from attnlib.layers import feed_forward as ff
from attnlib.layers import layer_norm as ln
from attnlib.layers import positional_encoding as pe

BIG, TINY = 1e300, 1e-300
F16_MAX = 65504.0


def dtype_is(dtype, shape=None):
    def check(a):
        ok = isinstance(a, np.ndarray) and a.dtype == np.dtype(dtype)
        return ok and (shape is None or a.shape == shape)

    return check


def close(want, dtype=np.float64, tol=1e-12):
    """A check: an array of ``dtype`` equal to ``want`` (computed here) within tol."""

    def check(a):
        want_a = np.asarray(want, dtype=np.float64)
        return dtype_is(dtype, want_a.shape)(a) and np.allclose(
            a.astype(np.float64), want_a, rtol=tol, atol=tol
        )

    return check


def ref_softmax(s):
    """Softmax of one row by Python floats."""
    top = max(s)
    e = [math.exp(x - top) for x in s]
    return [x / sum(e) for x in e]


Q = np.array([[1.0, 0.0], [0.0, 2.0]])  # (L_q=2, d_k=2)
K = np.array([[1.0, 1.0], [2.0, 0.0], [0.0, -1.0]])  # (L_k=3, d_k=2)
V = np.array([[1.0], [2.0], [4.0]])  # (L_k=3, d_v=1)
S = (Q @ K.T).tolist()  # scores by hand: [[1, 2, 0], [2, 0, -2]]
W_REF = [ref_softmax([x / math.sqrt(2) for x in row]) for row in S]
OUT_REF = [[sum(w * v for w, v in zip(row, (1, 2, 4)))] for row in W_REF]
CHECKED = check_attention(Q, K, V, None, None)


def attention_ok():
    out, w = at.attention(Q.astype(np.float32), K.astype(np.float32), V)
    return out, w


def split_ref(x, h):
    """(L, d) -> (H, L, d/H) by slicing, one head at a time."""
    d = x.shape[-1] // h
    return np.stack([x[..., i * d : (i + 1) * d] for i in range(h)], axis=-3)


def numeric_grad():
    return bw.numerical_gradient(lambda x: float(np.sum(x**3)), np.array([1.0, -2.0]))


def online_ok():
    q = Q / math.sqrt(2)
    tiles = tl.key_tiles(None, (), None, 0, 2, 3, 2)
    m, l, acc = td.online_softmax(q, K, V, tiles, np.float64)
    return acc / l[:, None]


def run_blocks_ok():
    seen, lock = [], threading.Lock()

    def one(i, j):
        with lock:
            seen.append(i * j)

    tl.run_blocks(one, [(1, 2), (3, 4), (5, 6)], 2)
    return sorted(seen)


ENC = el.init_encoder_layer(0, 4, 2)
DEC = dl.init_decoder_layer(0, 4, 2, d_memory=6)
X = np.random.default_rng(1).normal(size=(2, 3, 4))  # (B, L, d_model)
MEM = np.random.default_rng(2).normal(size=(2, 5, 6))  # (B, L_src, d_memory)
FF = ff.init_feed_forward(np.random.default_rng(0), 4, 8)


def f32(params):
    """A parameter dataclass with every array (nested ones too) cast to float32:
    float32 inputs and float32 parameters give float32 results."""
    changes = {}
    for field in dataclasses.fields(params):
        value = getattr(params, field.name)
        if dataclasses.is_dataclass(value):
            changes[field.name] = f32(value)
        elif isinstance(value, np.ndarray):
            changes[field.name] = value.astype(np.float32)
    return dataclasses.replace(params, **changes)


ENC32, DEC32 = f32(ENC), f32(DEC)


def ref_layer_norm(row, eps=1e-5):
    mu = sum(row) / len(row)
    var = sum((x - mu) ** 2 for x in row) / len(row)
    return [(x - mu) / math.sqrt(var + eps) for x in row]


def ref_pe(n, d, base=10000.0):
    return [
        [
            (math.sin if j % 2 == 0 else math.cos)(p / base ** ((j - j % 2) / d))
            for j in range(d)
        ]
        for p in range(n)
    ]


def layer_norm_rows(a):
    """True when every row of ``a`` has mean 0 and variance 1 (up to eps)."""
    return np.allclose(a.mean(-1), 0, atol=1e-6) and np.allclose(
        a.var(-1), 1, atol=1e-3
    )


ROWS = {
    # --- core.attention ------------------------------------------------------------
    "attnlib.core.attention.attention": Row(
        ok=attention_ok,
        check=lambda r: close(OUT_REF)(r[0]) and close(W_REF)(r[1]),
        bad=[
            (lambda: at.attention(Q, K[:, :1], V), ValueError, "keys"),
            (lambda: at.attention(Q, K, V[:2]), ValueError, "values"),
            (lambda: at.attention(Q.astype(complex), K, V), TypeError, "queries"),
            (lambda: at.attention(Q, K, V, np.ones((2, 3))), TypeError, "mask"),
            (lambda: at.attention(Q, K, V, dropout=0.5), ValueError, "rng"),
        ],
        extreme=lambda: at.attention(Q * BIG, K * BIG, V),
        extreme_error=OverflowError,
    ),
    "attnlib.core.attention.weighted_sum": Row(
        ok=lambda: at.weighted_sum(np.float32([[0.25, 0.75, 0.0]]), V.astype("f4")),
        check=close([[0.25 * 1 + 0.75 * 2]], np.float32, 1e-6),
        bad=[
            (lambda: at.weighted_sum(np.ones((1, 2)), V), ValueError, "weights"),
            (lambda: at.weighted_sum(["a", "b", "c"], V), TypeError, "weights"),
            (lambda: at.weighted_sum([0.5, 0.5, 0], V * np.nan), ValueError, "values"),
        ],
        extreme=lambda: at.weighted_sum([0.5, 0.5, 0.0], np.full((3, 1), 1.7e308)),
        extreme_error=OverflowError,
    ),
    "attnlib.core.attention.check_weighted_sum": Row(
        ok=lambda: at.check_weighted_sum([0.5, 0.5, 0.0], V),
        check=lambda r: r[0].shape == (1, 3) and r[2] is True and r[1].shape == (3, 1),
        bad=[
            (lambda: at.check_weighted_sum([0.5, 0.5], V), ValueError, "weights"),
            (lambda: at.check_weighted_sum([[np.inf] * 3], V), ValueError, "weights"),
            (lambda: at.check_weighted_sum([1.0, 0, 0], [1.0]), ValueError, "values"),
        ],
        extreme=lambda: at.check_weighted_sum([TINY, 1.0, 0], V * BIG),
    ),
    # --- core.backward -------------------------------------------------------------
    "attnlib.core.backward.attention_backward": Row(
        # d(sum of outputs)/dV is the column sums of the weights (by hand: W^T @ 1)
        ok=lambda: at_backward_values(),
        check=close(np.array(W_REF).sum(0)[:, None]),
        bad=[
            (
                lambda: bw.attention_backward(Q, K, V, np.ones((3, 1))),
                ValueError,
                "grad_output",
            ),
            (lambda: bw.attention_backward(Q, K[:2], V), TypeError, "grad_output"),
            (
                lambda: bw.attention_backward(Q, K, V, np.ones((2, 1)), scale="1"),
                TypeError,
                "scale",
            ),
        ],
        extreme=lambda: bw.attention_backward(Q * BIG, K * BIG, V, np.ones((2, 1))),
        extreme_error=OverflowError,
    ),
    "attnlib.core.backward.softmax_backward": Row(
        # the softmax Jacobian by hand: dL/ds_i = w_i (g_i - sum_j w_j g_j)
        ok=lambda: bw.softmax_backward([[0.25, 0.75]], [[1.0, 3.0]]),
        check=close([[0.25 * (1 - 2.5), 0.75 * (3 - 2.5)]]),
        bad=[
            (
                lambda: bw.softmax_backward([0.5, 0.5], [1.0, 2.0, 3.0]),
                ValueError,
                "grad_weights",
            ),
            (lambda: bw.softmax_backward(["a"], [1.0]), TypeError, "weights"),
        ],
        extreme=lambda: bw.softmax_backward([1.0, 0.0], [BIG, -BIG]),
        extreme_error=OverflowError,
    ),
    "attnlib.core.backward.numerical_gradient": Row(
        ok=numeric_grad,  # d/dx sum(x^3) = 3 x^2 = [3, 12]
        check=close([3.0, 12.0], tol=1e-8),
        bad=[
            (lambda: bw.numerical_gradient(np.sum, [1.0], eps=0.0), ValueError, "eps"),
            (lambda: bw.numerical_gradient(np.sum, [1.0], eps="h"), TypeError, "eps"),
            (
                lambda: bw.numerical_gradient(np.sum, [1.0], eps=math.nan),
                ValueError,
                "eps",
            ),
            (
                lambda: bw.numerical_gradient(lambda x: x, [1.0, 2.0]),
                ValueError,
                "f must",
            ),
            (lambda: bw.numerical_gradient(np.sum, ["a"]), TypeError, "x must"),
        ],
        extreme=lambda: bw.numerical_gradient(np.sum, np.full(2, BIG), eps=1e290),
    ),
    "attnlib.core.backward.relative_error": Row(
        # ||a - n|| / max(||a||, ||n||) = ||(0, 1)|| / ||(3, 4)|| = 1 / 5
        ok=lambda: bw.relative_error([3.0, 4.0], [3.0, 3.0]),
        check=lambda r: isinstance(r, float) and abs(r - 0.2) < 1e-15,
        bad=[
            (lambda: bw.relative_error([1.0], [1.0, 2.0]), ValueError, "numeric"),
            (lambda: bw.relative_error([math.nan], [1.0]), ValueError, "analytic"),
            (lambda: bw.relative_error([1.0], [math.inf]), ValueError, "numeric"),
        ],
        extreme=lambda: bw.relative_error([3e300, 4e300], [3e300, 3e300]),
    ),
    # --- core.dropout --------------------------------------------------------------
    "attnlib.core.dropout.dropout_keep_mask": Row(
        ok=lambda: dr.dropout_keep_mask(0.5, np.random.default_rng(0), shape=(4, 5)),
        check=dtype_is(np.bool_, (4, 5)),
        bad=[
            (
                lambda: dr.dropout_keep_mask(1.0, np.random.default_rng(0)),
                ValueError,
                "dropout",
            ),
            (lambda: dr.dropout_keep_mask(0.5, 3, shape=(2,)), TypeError, "rng"),
            (lambda: dr.dropout_keep_mask(0.5, shape=(2,)), ValueError, "rng"),
        ],
        extreme=lambda: dr.dropout_keep_mask(
            TINY, np.random.default_rng(0), shape=(3,)
        ),
    ),
    "attnlib.core.dropout.drop_weights": Row(
        # inverted dropout by hand: kept weights / (1 - p), dropped ones 0
        ok=lambda: dr.drop_weights(
            np.float32([0.2, 0.8]), np.array([True, False]), 0.5
        ),
        check=close([0.4, 0.0], np.float32, 1e-7),
        extreme=lambda: dr.drop_weights(
            np.float16([0.5, 0.5]), np.array([True, False]), 0.99999
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.core.dropout.as_dropout_rate": Row(
        ok=lambda: dr.as_dropout_rate(np.float32(0.25)),
        check=lambda p: isinstance(p, float) and p == 0.25,
        bad=[
            (lambda: dr.as_dropout_rate(True), TypeError, "dropout"),
            (
                lambda: dr.as_dropout_rate(1.0, "attention_dropout"),
                ValueError,
                "attention_dropout",
            ),
            (lambda: dr.as_dropout_rate(math.nan), ValueError, "dropout"),
            (lambda: dr.as_dropout_rate(np.ones(2)), ValueError, "dropout"),
        ],
        extreme=lambda: dr.as_dropout_rate(1 - 1e-16),
    ),
    "attnlib.core.dropout.check_dropout": Row(
        ok=lambda: dr.check_dropout(0.5, None, [[True, False]], (2, 2)),
        check=lambda r: r[0] == 0.5 and r[1].dtype == np.bool_,
        bad=[
            (lambda: dr.check_dropout(0.0, None, [True], (1,)), ValueError, "keep"),
            (lambda: dr.check_dropout(0.5, None, [1, 0], (2,)), TypeError, "keep"),
            (lambda: dr.check_dropout(0.5, None, [True] * 3, (2,)), ValueError, "keep"),
            (lambda: dr.check_dropout(0.5, 7, None, (2,)), TypeError, "rng"),
            (
                lambda: dr.check_dropout(0.5, np.random.default_rng(), [True], (1,)),
                ValueError,
                "rng",
            ),
        ],
        extreme=lambda: dr.check_dropout(TINY, np.random.default_rng(0), None, (2,)),
    ),
    # --- core.heads ----------------------------------------------------------------
    "attnlib.core.heads.split_heads": Row(
        ok=lambda: hd.split_heads(np.arange(12.0, dtype="f4").reshape(3, 4), 2),
        check=close(split_ref(np.arange(12.0).reshape(3, 4), 2), np.float32),
        bad=[
            (lambda: hd.split_heads(np.ones((3, 4)), 3), ValueError, "d_model"),
            (lambda: hd.split_heads(np.ones((3, 4)), 2.0), TypeError, "num_heads"),
            (lambda: hd.split_heads(np.ones(4), 2), ValueError, "x must"),
        ],
        extreme=lambda: hd.split_heads(np.full((1, 2), BIG), 2),
    ),
    "attnlib.core.heads.merge_heads": Row(
        ok=lambda: hd.merge_heads(split_ref(np.arange(12.0).reshape(3, 4), 2)),
        check=close(np.arange(12.0).reshape(3, 4)),
        bad=[(lambda: hd.merge_heads(np.ones((2, 3))), ValueError, "x must")],
        extreme=lambda: hd.merge_heads(np.full((2, 1, 1), BIG)),
    ),
    "attnlib.core.heads.init_multi_head": Row(
        ok=lambda: hd.init_multi_head(np.random.default_rng(0), 4, 2, d_key_in=6),
        check=lambda p: (
            p.W_K.shape == (6, 4)
            and p.W_Q.dtype == np.float64
            # Glorot-uniform bound sqrt(6 / (n_in + n_out)), by hand
            and np.abs(p.W_K).max() <= math.sqrt(6 / 10)
        ),
        bad=[
            (lambda: hd.init_multi_head(0, 5, 2), ValueError, "num_heads"),
            (lambda: hd.init_multi_head(0, 4, 2, d_out=0), ValueError, "d_out"),
            (lambda: hd.init_multi_head(0, 4.0, 2), TypeError, "d_model"),
        ],
        extreme=lambda: hd.init_multi_head(0, 1, 1),
    ),
    "attnlib.core.heads.multi_head_attention": Row(
        ok=lambda: hd.multi_head_attention(
            X.astype("f4"), X.astype("f4"), X.astype("f4"), ENC32.attn
        ),
        check=lambda r: (
            dtype_is(np.float32, (2, 3, 4))(r[0]) and np.allclose(r[1].sum(-1), 1)
        ),
        bad=[
            (
                lambda: hd.multi_head_attention(X[..., :3], X, X, ENC.attn),
                ValueError,
                "queries",
            ),
            (
                lambda: hd.multi_head_attention(X, X, X, ENC.attn, np.ones((3, 3))),
                TypeError,
                "mask",
            ),
            (lambda: hd.multi_head_attention(X, X, X, None), TypeError, "params"),
        ],
        extreme=lambda: hd.multi_head_attention(X * 1e150, X * 1e150, X, ENC.attn),
        extreme_error=OverflowError,
    ),
    # --- core.masks ----------------------------------------------------------------
    "attnlib.core.masks.causal_mask": Row(
        ok=lambda: mk.causal_mask(2, 3, align="end"),
        check=lambda m: (
            m.dtype == np.bool_
            and m.tolist() == [[j <= i + 1 for j in range(3)] for i in range(2)]
        ),
        bad=[
            (lambda: mk.causal_mask(-1), ValueError, "n_queries"),
            (lambda: mk.causal_mask(2, 3), ValueError, "align"),
            (lambda: mk.causal_mask(2, 3, align="middle"), ValueError, "align"),
            (lambda: mk.causal_mask(2.0), TypeError, "n_queries"),
        ],
        extreme=lambda: mk.causal_mask(1, 0, align="end"),
    ),
    "attnlib.core.masks.bidirectional_mask": Row(
        ok=lambda: mk.bidirectional_mask(2, 3),
        check=lambda m: m.dtype == np.bool_ and m.shape == (2, 3) and m.all(),
        bad=[
            (lambda: mk.bidirectional_mask(2.5), TypeError, "n_queries"),
            (lambda: mk.bidirectional_mask(2, -1), ValueError, "n_keys"),
        ],
        extreme=lambda: mk.bidirectional_mask(0),
    ),
    "attnlib.core.masks.padding_mask": Row(
        ok=lambda: mk.padding_mask([1, 3], 3, side="left"),
        check=lambda m: (
            m.dtype == np.bool_
            and m.tolist() == [[[False, False, True]], [[True, True, True]]]
        ),
        bad=[
            (lambda: mk.padding_mask([3], 2), ValueError, "valid_lens"),
            (lambda: mk.padding_mask([1.5], 2), TypeError, "valid_lens"),
            (lambda: mk.padding_mask([1], 2, side="mid"), ValueError, "side"),
        ],
        extreme=lambda: mk.padding_mask([0], 0),
    ),
    "attnlib.core.masks.query_padding_mask": Row(
        ok=lambda: mk.query_padding_mask([1], 2),
        check=lambda m: m.dtype == np.bool_ and m.tolist() == [[[True], [False]]],
        bad=[
            (lambda: mk.query_padding_mask([1], 2, side="up"), ValueError, "side"),
            (lambda: mk.query_padding_mask([-1], 2), ValueError, "valid_lens"),
        ],
        extreme=lambda: mk.query_padding_mask([2] * 3, 2),
    ),
    # --- core.scaling --------------------------------------------------------------
    "attnlib.core.scaling.random_dot_products": Row(
        ok=lambda: sc.random_dot_products(np.random.default_rng(0), 64, 20_000),
        # q . k with standard-normal components: mean 0, variance d_k (= 64)
        check=lambda x: dtype_is(np.float64, (20_000,))(x) and abs(x.var() - 64) < 4,
        bad=[
            (lambda: sc.random_dot_products(0, 4, 10), TypeError, "rng"),
            (
                lambda: sc.random_dot_products(np.random.default_rng(), 0, 10),
                ValueError,
                "d_k",
            ),
            (
                lambda: sc.random_dot_products(np.random.default_rng(), 4, -1),
                ValueError,
                "n_samples",
            ),
        ],
        extreme=lambda: sc.random_dot_products(np.random.default_rng(0), 1, 1),
    ),
    "attnlib.core.scaling.score_variance": Row(
        ok=lambda: sc.score_variance(np.random.default_rng(0), 16, 20_000, scaled=True),
        check=lambda v: abs(float(v) - 1.0) < 0.1,  # divided by sqrt(d_k): variance 1
        bad=[
            (lambda: sc.score_variance("seed", 4, 10), TypeError, "rng"),
            (
                lambda: sc.score_variance(np.random.default_rng(), 4, 0),
                ValueError,
                "n_samples",
            ),
        ],
        extreme=lambda: sc.score_variance(np.random.default_rng(0), 1, 1),
    ),
    "attnlib.core.scaling.mean_max_weight": Row(
        ok=lambda: sc.mean_max_weight(np.random.default_rng(0), 8, 1, 50),
        check=lambda w: abs(float(w) - 1.0) < 1e-12,  # one key: weight 1, always
        bad=[
            (
                lambda: sc.mean_max_weight(np.random.default_rng(), 8, 0, 5),
                ValueError,
                "n_keys",
            ),
            (lambda: sc.mean_max_weight(None, 8, 2, 5), TypeError, "rng"),
        ],
        extreme=lambda: sc.mean_max_weight(
            np.random.default_rng(0), 100_000, 2, 1, scaled=False
        ),
    ),
    # --- core.scores ---------------------------------------------------------------
    "attnlib.core.scores.dot_product_scores": Row(
        ok=lambda: scs.dot_product_scores(Q.astype("f4"), K.astype("f4")),
        check=close(S, np.float32),
        bad=[
            (lambda: scs.dot_product_scores(Q, K[:, :1]), ValueError, "keys"),
            (lambda: scs.dot_product_scores(["a"], K), TypeError, "queries"),
            (lambda: scs.dot_product_scores(Q[0], K), ValueError, "queries"),
        ],
        extreme=lambda: scs.dot_product_scores(Q * BIG, K * BIG),
        extreme_error=OverflowError,
    ),
    "attnlib.core.scores.scaled_dot_product_scores": Row(
        ok=lambda: scs.scaled_dot_product_scores(Q, K),
        check=close(np.array(S) / math.sqrt(2)),
        bad=[(lambda: scs.scaled_dot_product_scores(Q, K[:, :0]), ValueError, "keys")],
        extreme=lambda: scs.scaled_dot_product_scores(Q * 1e154, K * 1e154),
        extreme_error=OverflowError,
    ),
    "attnlib.core.scores.additive_scores": Row(
        # w_v . tanh(W_q q + W_k k) by hand, with identity projections and w_v = 1
        ok=lambda: scs.additive_scores(Q, K, np.eye(2), np.eye(2), np.ones(2)),
        check=close(
            [[sum(math.tanh(a + b) for a, b in zip(q, k)) for k in K] for q in Q]
        ),
        bad=[
            (
                lambda: scs.additive_scores(Q, K, np.eye(3), np.eye(2), np.ones(2)),
                ValueError,
                "W_q",
            ),
            (
                lambda: scs.additive_scores(Q, K, np.eye(2), np.eye(2), np.ones(3)),
                ValueError,
                "w_v",
            ),
        ],
        extreme=lambda: scs.additive_scores(Q * BIG, K, np.eye(2), np.eye(2), [1, 1]),
        extreme_error=OverflowError,
    ),
    # --- core.softmax --------------------------------------------------------------
    "attnlib.core.softmax.softmax": Row(
        ok=lambda: sm.softmax(np.float32([1.0, 2.0, 0.0])),
        check=close(ref_softmax([1.0, 2.0, 0.0]), np.float32, 1e-6),
        bad=[
            (lambda: sm.softmax(3.0), ValueError, "scores"),
            (lambda: sm.softmax(["a"]), TypeError, "scores"),
            (lambda: sm.softmax([1.0, math.nan]), ValueError, "scores"),
            (lambda: sm.softmax([1.0, 2.0], mask=[1, 0]), TypeError, "mask"),
        ],
        extreme=lambda: sm.softmax(np.float16([F16_MAX, -F16_MAX, 0])),
    ),
    "attnlib.core.softmax.attention_softmax": Row(
        ok=lambda: sm.attention_softmax(np.array(S) / math.sqrt(2), CHECKED),
        check=close(W_REF),
        extreme=lambda: sm.attention_softmax(np.array(S) * 1e300, CHECKED),
    ),
    "attnlib.core.softmax.mask_and_max": Row(
        ok=lambda: sm.mask_and_max(np.array(S), -1, np.array([[False, True, True]])),
        check=close([[2.0], [0.0]]),
        extreme=lambda: sm.mask_and_max(np.array([[BIG, -BIG]]), -1, [False, True]),
    ),
    "attnlib.core.softmax.exp_normalise": Row(
        ok=lambda: sm.exp_normalise(np.array([[1.0, 2.0, 0.0]]), np.array([[2.0]])),
        check=close([ref_softmax([1.0, 2.0, 0.0])]),
        extreme=lambda: sm.exp_normalise(
            np.array([[BIG, -BIG], [-np.inf, -np.inf]]), np.array([[BIG], [-np.inf]])
        ),
    ),
    "attnlib.core.softmax.check_allowed_scores": Row(
        ok=lambda: sm.check_allowed_scores(np.array([[2.0]]), np.array([[1.0, 2.0]])),
        check=lambda r: r is None,
        bad=[
            (
                lambda: sm.check_allowed_scores(
                    np.array([[np.nan]]), np.array([[np.nan, 1.0]])
                ),
                ValueError,
                "scores",
            )
        ],
        extreme=lambda: sm.check_allowed_scores(np.array([[BIG]]), np.array([[BIG]])),
    ),
    # --- core.tiled ----------------------------------------------------------------
    "attnlib.core.tiled.tiled_attention": Row(
        ok=lambda: td.tiled_attention(Q.astype("f4"), K, V, block_size=2, workers=2),
        check=close(OUT_REF),  # float32 and float64 give float64
        bad=[
            (lambda: td.tiled_attention(Q, K, V, block_size=0), ValueError, "block"),
            (lambda: td.tiled_attention(Q, K, V, workers=0), ValueError, "workers"),
            (lambda: td.tiled_attention(Q, K, V, causal=True), ValueError, "align"),
            (lambda: td.tiled_attention(Q, K[:, :1], V), ValueError, "keys"),
        ],
        extreme=lambda: td.tiled_attention(
            np.zeros((1, 2), np.float16),
            np.zeros((3, 2), np.float16),
            np.full((3, 2), F16_MAX, np.float16),
        ),
    ),
    "attnlib.core.tiled.online_softmax": Row(
        ok=online_ok,
        check=close(OUT_REF),
    ),
    "attnlib.core.tiled.default_block_sizes": Row(
        ok=lambda: td.default_block_sizes(10, 3),
        check=lambda b: (
            all(isinstance(n, int) and n >= 1 for n in b) and b[0] <= 10 and b[1] <= 3
        ),
        bad=[(lambda: td.default_block_sizes(-1, 3), ValueError, "n_queries")],
        extreme=lambda: td.default_block_sizes(10**9, 1),
    ),
    "attnlib.core.tiled.tile_plan": Row(
        ok=lambda: td.tile_plan(4, 4, 2, causal=True),
        # blocks of 2 under a causal mask: upper tile skipped, diagonal ones partial
        check=lambda p: p.tolist() == [[td.PARTLY_MASKED, td.SKIPPED], [td.FULL, 1]],
        bad=[
            (lambda: td.tile_plan(4, 4, 0), ValueError, "block"),
            (lambda: td.tile_plan(2.5), TypeError, "n_queries"),
            (lambda: td.tile_plan(2, 2, mask=np.ones((2, 2))), TypeError, "mask"),
        ],
        extreme=lambda: td.tile_plan(1, 1, 10**9),
    ),
    "attnlib.core.tiled.online_softmax_trace": Row(
        ok=lambda: td.online_softmax_trace([0.0, 1.0], [[1.0], [3.0]], 1),
        # last step: m = 1, l = 1 + e^-1, output = softmax([0, 1]) @ [1, 3]
        check=lambda t: (
            abs(t[-1]["running sum l"] - (1 + math.exp(-1))) < 1e-12
            and abs(
                float(t[-1]["output so far"][0])
                - sum(w * v for w, v in zip(ref_softmax([0.0, 1.0]), (1, 3)))
            )
            < 1e-12
        ),
        bad=[
            (
                lambda: td.online_softmax_trace([1.0], [[1.0], [2.0]]),
                ValueError,
                "values",
            ),
            (
                lambda: td.online_softmax_trace([], np.ones((0, 1))),
                ValueError,
                "scores",
            ),
            (lambda: td.online_softmax_trace([np.inf], [[1.0]]), ValueError, "scores"),
        ],
        extreme=lambda: td.online_softmax_trace([BIG, -BIG], [[BIG], [-BIG]], 1),
    ),
    # --- core.tiles ----------------------------------------------------------------
    "attnlib.core.tiles.default_workers": Row(
        ok=tl.default_workers,
        check=lambda n: isinstance(n, int) and n >= 1,
    ),
    "attnlib.core.tiles.run_blocks": Row(
        ok=run_blocks_ok,
        check=lambda seen: seen == [2, 12, 30],
    ),
    "attnlib.core.tiles.tile_mask": Row(
        # causal offset 0, a 2 x 2 tile on the diagonal: the lower triangle
        ok=lambda: tl.tile_mask(None, (), 0, 0, 2, 0, 2),
        check=lambda t: t.tolist() == [[True, False], [True, True]],
        extreme=lambda: tl.tile_mask(None, (), 0, 0, 1, 5, 6),
    ),
    "attnlib.core.tiles.key_tiles": Row(
        ok=lambda: list(tl.key_tiles(None, (), 0, 0, 2, 4, 2)),
        # queries 0-1 under a causal mask see keys 0-1 only: one tile, its triangle
        check=lambda t: (
            len(t) == 1
            and t[0][:2] == (0, 2)
            and t[0][2].tolist() == [[True, False], [True, True]]
        ),
        extreme=lambda: list(tl.key_tiles(None, (), None, 0, 1, 0, 10**9)),
    ),
    "attnlib.core.tiles.check_causal": Row(
        ok=lambda: (
            tl.check_causal(True, "end", 2, 3),
            tl.check_causal(False, None, 2, 3),
        ),
        check=lambda r: r == (1, None),  # query i sees keys j <= i + (3 - 2)
        bad=[
            (lambda: tl.check_causal(False, "end", 2, 3), ValueError, "align"),
            (lambda: tl.check_causal(True, None, 2, 3), ValueError, "align"),
        ],
    ),
    "attnlib.core.tiles.as_block_sizes": Row(
        ok=lambda: (tl.as_block_sizes(np.int64(3)), tl.as_block_sizes((2, 5))),
        check=lambda r: r == ((3, 3), (2, 5)),
        bad=[
            (lambda: tl.as_block_sizes(0), ValueError, "block_size"),
            (lambda: tl.as_block_sizes(True), ValueError, "block_size"),
            (lambda: tl.as_block_sizes((1, 2, 3)), ValueError, "block_size"),
        ],
        extreme=lambda: tl.as_block_sizes(2**62),
    ),
    "attnlib.core.tiles.as_workers": Row(
        ok=lambda: tl.as_workers(np.int32(2)),
        check=lambda n: n == 2 and type(n) is int,
        bad=[
            (lambda: tl.as_workers(0), ValueError, "workers"),
            (lambda: tl.as_workers(True), ValueError, "workers"),
            (lambda: tl.as_workers(2.0), ValueError, "workers"),
        ],
    ),
    # --- layers.positional_encoding ------------------------------------------------
    "attnlib.layers.positional_encoding.frequencies": Row(
        ok=lambda: pe.frequencies(4),
        check=close([1.0, 10000.0 ** (-2 / 4)]),
        bad=[
            (lambda: pe.frequencies(0), ValueError, "d_model"),
            (lambda: pe.frequencies(4, base=-1.0), ValueError, "base"),
        ],
        extreme=lambda: pe.frequencies(2, base=BIG),
    ),
    "attnlib.layers.positional_encoding.sinusoidal_encoding": Row(
        ok=lambda: pe.sinusoidal_encoding(3, 4),
        check=close(ref_pe(3, 4)),
        bad=[
            (lambda: pe.sinusoidal_encoding(3, 5), ValueError, "d_model"),
            (lambda: pe.sinusoidal_encoding(-1, 4), ValueError, "num_positions"),
        ],
        extreme=lambda: pe.sinusoidal_encoding(1, 2, base=BIG),
    ),
    "attnlib.layers.positional_encoding.sinusoidal_shift_matrix": Row(
        # the rotation that takes PE(p) to PE(p + 2)
        ok=lambda: pe.sinusoidal_encoding(1, 4) @ pe.sinusoidal_shift_matrix(2, 4).T,
        check=close([ref_pe(3, 4)[2]]),
        bad=[
            (lambda: pe.sinusoidal_shift_matrix(1.5, 4), TypeError, "offset"),
            (lambda: pe.sinusoidal_shift_matrix(1, 3), ValueError, "d_model"),
        ],
        extreme=lambda: pe.sinusoidal_shift_matrix(10**15, 2),
    ),
    "attnlib.layers.positional_encoding.rotary_embedding": Row(
        # position 1, one pair: rotate (1, 0) by 1 radian
        ok=lambda: pe.rotary_embedding(np.float32([[0.0, 0.0], [1.0, 0.0]])),
        check=close([[0, 0], [math.cos(1), math.sin(1)]]),  # float64, documented
        bad=[
            (lambda: pe.rotary_embedding(np.ones((2, 3))), ValueError, "last axis"),
            (
                lambda: pe.rotary_embedding(np.ones((2, 2)), [0.5, 1]),
                TypeError,
                "positions",
            ),
        ],
        extreme=lambda: pe.rotary_embedding(np.full((2, 2), BIG)),
    ),
    "attnlib.layers.positional_encoding.alibi_slopes": Row(
        ok=lambda: pe.alibi_slopes(4),
        check=close([2.0 ** (-8 * h / 4) for h in range(1, 5)]),  # 2^(-8h/H)
        bad=[
            (lambda: pe.alibi_slopes(0), ValueError, "num_heads"),
            (lambda: pe.alibi_slopes(2.0), TypeError, "num_heads"),
        ],
        extreme=lambda: pe.alibi_slopes(1024),
    ),
    "attnlib.layers.positional_encoding.alibi_bias": Row(
        ok=lambda: pe.alibi_bias(2, 3),
        # one head, slope 2^-8: -slope * |i - j|
        check=close([[[-(2.0**-8) * abs(i - j) for j in range(3)] for i in range(2)]]),
        bad=[
            (lambda: pe.alibi_bias(2, -1), ValueError, "num_keys"),
            (lambda: pe.alibi_bias(2, 2, 0), ValueError, "num_heads"),
        ],
        extreme=lambda: pe.alibi_bias(1, 1, 64),
    ),
    "attnlib.layers.positional_encoding.similarity_by_distance": Row(
        # rows (1, 0), (1, 1), (0, 1): mean cosine 1 at distance 0, 1/sqrt(2) at 1,
        # 0 at 2
        ok=lambda: pe.similarity_by_distance([[1.0, 0], [1, 1], [0, 1]], 2),
        check=close([1.0, 1 / math.sqrt(2), 0.0]),
        bad=[
            (
                lambda: pe.similarity_by_distance(np.eye(2), 2),
                ValueError,
                "max_distance",
            ),
            (
                lambda: pe.similarity_by_distance(np.zeros((2, 2)), 1),
                ValueError,
                "zero row",
            ),
        ],
        extreme=lambda: pe.similarity_by_distance([[BIG, BIG], [BIG, -BIG]], 1),
    ),
    # --- layers.layer_norm, layers.feed_forward ------------------------------------
    "attnlib.layers.layer_norm.layer_norm": Row(
        ok=lambda: ln.layer_norm(np.float32([[1.0, 2.0, 6.0]])),
        check=close([ref_layer_norm([1.0, 2.0, 6.0])], np.float32, 1e-6),
        bad=[
            (lambda: ln.layer_norm([[1.0, 2.0]], np.ones(3)), ValueError, "gain"),
            (lambda: ln.layer_norm([[1.0, 2.0]], eps=-1.0), ValueError, "eps"),
            (lambda: ln.layer_norm([[True, False]]), TypeError, "x must"),
        ],
        extreme=lambda: ln.layer_norm(np.float32([1e20, -1e20])),
    ),
    "attnlib.layers.feed_forward.erf": Row(
        ok=lambda: ff.erf(np.float32([0.5, -2.0])),
        check=close([math.erf(0.5), math.erf(-2.0)], np.float32, 1e-6),
        bad=[(lambda: ff.erf(["a"]), TypeError, "x must")],
        extreme=lambda: ff.erf([BIG, -BIG, TINY]),
    ),
    "attnlib.layers.feed_forward.gelu": Row(
        ok=lambda: ff.gelu([1.0, -1.0]),
        # x * Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2
        # (erf is Abramowitz & Stegun 7.1.26: absolute error below 1.5e-7)
        check=close(
            [x * (1 + math.erf(x / math.sqrt(2))) / 2 for x in (1.0, -1.0)], tol=2e-7
        ),
        bad=[(lambda: ff.gelu(np.ones(2, bool)), TypeError, "x must")],
        extreme=lambda: ff.gelu([BIG, -BIG]),
    ),
    "attnlib.layers.feed_forward.relu": Row(
        ok=lambda: ff.relu(np.float16([-1.0, 2.0])),
        check=close([0.0, 2.0], np.float16),
        bad=[(lambda: ff.relu(["1"]), TypeError, "x must")],
        extreme=lambda: ff.relu(np.float16([F16_MAX, -F16_MAX])),
    ),
    "attnlib.layers.feed_forward.init_feed_forward": Row(
        ok=lambda: ff.init_feed_forward(np.random.default_rng(0), 4, 8),
        check=lambda p: (
            [a.shape for a in p] == [(4, 8), (8,), (8, 4), (4,)]
            and all(a.dtype == np.float64 for a in p)
        ),
        bad=[
            (lambda: ff.init_feed_forward(0, 4, 0), ValueError, "d_ff"),
            (lambda: ff.init_feed_forward(0, 4.5, 8), TypeError, "d_model"),
        ],
        extreme=lambda: ff.init_feed_forward(0, 1, 1),
    ),
    "attnlib.layers.feed_forward.feed_forward": Row(
        # relu(x W_1 + b_1) W_2 + b_2 with plain numpy
        ok=lambda: ff.feed_forward(X[0], *FF, activation="relu"),
        check=close(np.maximum(X[0] @ FF[0] + FF[1], 0) @ FF[2] + FF[3]),
        bad=[
            (
                lambda: ff.feed_forward(X[0], *FF, activation="tanh"),
                ValueError,
                "activation",
            ),
            (lambda: ff.feed_forward(X[0], FF[0][:3], *FF[1:]), ValueError, "W_1"),
        ],
        extreme=lambda: ff.feed_forward(X[0] * BIG, *FF),
        extreme_error=OverflowError,
    ),
    # --- layers.encoder_layer, layers.decoder_layer --------------------------------
    "attnlib.layers.encoder_layer.init_encoder_layer": Row(
        ok=lambda: el.init_encoder_layer(0, 4, 2, d_ff=6),
        check=lambda p: (
            p.W_1.shape == (4, 6)
            and p.ln1_gain.tolist() == [1.0] * 4
            and p.b_2.dtype == np.float64
        ),
        bad=[
            (lambda: el.init_encoder_layer(0, 7, 2), ValueError, "divisible"),
            (lambda: el.init_encoder_layer(0, 4.0, 2), TypeError, "d_model"),
            (
                lambda: el.init_encoder_layer(0, 4, 2, activation="tanh"),
                ValueError,
                "activation",
            ),
        ],
        extreme=lambda: el.init_encoder_layer(0, 1, 1),
    ),
    "attnlib.layers.encoder_layer.self_attention_block": Row(
        ok=lambda: el.self_attention_block(X.astype("f4"), ENC32.attn),
        check=lambda r: (
            dtype_is(np.float32, (2, 3, 4))(r["attended"])
            and dtype_is(np.float32, (2, 2, 3, 3))(r["weights"])
            and np.allclose(r["weights"].sum(-1), 1)
        ),
        bad=[
            (lambda: el.self_attention_block(X[..., :3], ENC.attn), ValueError, "x ("),
            (
                lambda: el.self_attention_block(X, ENC.attn, keep_heads=[True]),
                ValueError,
                "keep_heads",
            ),
        ],
        extreme=lambda: el.self_attention_block(X * 1e150, ENC.attn),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.encoder_layer.encoder_layer": Row(
        ok=lambda: el.encoder_layer(X.astype("f4"), ENC32),
        check=lambda r: dtype_is(np.float32, (2, 3, 4))(r[0]) and layer_norm_rows(r[0]),
        bad=[
            (lambda: el.encoder_layer(X[..., :3], ENC), ValueError, "d_model=4"),
            (lambda: el.encoder_layer(X, ENC, np.ones((3, 3))), TypeError, "mask"),
            (lambda: el.encoder_layer(X, None), TypeError, "params"),
        ],
        extreme=lambda: el.encoder_layer(X * 1e150, ENC),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.decoder_layer.init_decoder_layer": Row(
        ok=lambda: dl.init_decoder_layer(0, 4, 2, d_memory=6),
        check=lambda p: (
            p.cross_attn.W_K.shape == (6, 4)
            and p.self_attn.W_Q.shape == (4, 4)
            and p.ln3_bias.tolist() == [0.0] * 4
        ),
        bad=[
            (lambda: dl.init_decoder_layer(0, 4, 3), ValueError, "divisible"),
            (
                lambda: dl.init_decoder_layer(0, 4, 2, d_memory=0),
                ValueError,
                "d_memory",
            ),
        ],
        extreme=lambda: dl.init_decoder_layer(0, 1, 1),
    ),
    "attnlib.layers.decoder_layer.decoder_layer": Row(
        ok=lambda: dl.decoder_layer(X.astype("f4"), MEM.astype("f4"), DEC32),
        check=lambda r: dtype_is(np.float32, (2, 3, 4))(r[0]) and layer_norm_rows(r[0]),
        bad=[
            (lambda: dl.decoder_layer(X, X, DEC), ValueError, "memory"),
            (lambda: dl.decoder_layer(X, MEM, ENC), TypeError, "params"),
            (lambda: dl.decoder_layer(X[..., :3], MEM, DEC), ValueError, "y"),
            (
                lambda: dl.decoder_layer(X, MEM, DEC, memory_mask=np.ones(5)),
                TypeError,
                "mask",
            ),
        ],
        extreme=lambda: dl.decoder_layer(X, MEM * 1e150, DEC),
        extreme_error=OverflowError,
    ),
}


def at_backward_values():
    """dV of sum(outputs): the gradient of the values alone."""
    return bw.attention_backward(Q, K, V, np.ones((2, 1)))[2]


@pytest.mark.parametrize("qualname", sorted(ROWS))
def test_contract(qualname):
    check_row(qualname, ROWS[qualname])
