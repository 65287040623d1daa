"""Issue 26, item 2: every slip a checker names shows on the checker's own inputs.

One row per named slip: the mistake as a learner would write it (here, independently of
the checker's own slip functions), the checker's verdict (``False``) and the words of
its diagnosis, printed before any expected value. One row per checker with a right
answer worked out independently (by hand, with ``math`` or with plain numpy loops):
it passes. The folded solutions of the chapters pass too
(``tests/test_exercises_notebooks.py``); the slips of chapters 5 and 8 are the learner's
mistakes of ``tests/test_exercises_diagnoses.py``.
"""

from __future__ import annotations

import math

import attention_gradients_exercises as attention_gradients
import bottleneck_exercises as bottleneck
import cost_exercises as cost
import heads_exercises as heads
import interpretability_exercises as interpretability
import learned_and_computed_exercises as learning
import learning_exercises as primer
import masks_exercises as masks
import multi_head_exercises as multi_head
import numpy as np
import online_softmax_exercises as online_softmax
import order_and_position_exercises as position
import pytest
import query_key_value_exercises as qkv
import rotary_exercises as rotary
import scoring_exercises as scoring
import softmax_exercises as softmax
import summary_exercises as summary
import values_exercises as values
import word_in_context_exercises as why_attention

from book_support.exercises import layer

E = math.e
BANK_VALUES = [[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]
P = np.array([E**2, E, 1.0]) / (E**2 + E + 1)  # softmax([2, 1, 0]) by hand
KINDS = {"a": "self", "b": "cross", "c": "cross", "d": "self"}


def rows_softmax(s, axis=-1):
    """Softmax by hand: shift by the maximum, exponentiate, divide by the total."""
    s = np.asarray(s, dtype=float)
    e = np.exp(s - s.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def head(Q, K, V, scale=True):
    """One head written out: softmax(Q K^T / sqrt(d_k)) V."""
    S = Q @ K.T / (math.sqrt(Q.shape[-1]) if scale else 1.0)
    return rows_softmax(S) @ V


def layer_norm_by_hand(x, g, b, eps, *, sqrt_plus_eps=False, ddof=0, axis=-1):
    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=axis, keepdims=True)
    var = ((x - mean) ** 2).sum(axis=axis, keepdims=True) / (x.size / mean.size - ddof)
    denominator = np.sqrt(var) + eps if sqrt_plus_eps else np.sqrt(var + eps)
    return (x - mean) / denominator * g + b


def shift_by_hand(k, d, *, transpose=False, frequency=None):
    R = np.zeros((d, d))
    for i in range(d // 2):
        w = 10000 ** (-2 * i / d) if frequency is None else frequency(i, d)
        c, s = math.cos(k * w), math.sin(k * w)
        block = [[c, -s], [s, c]] if transpose else [[c, s], [-s, c]]
        R[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = block
    return R


def merge_by_hand(m_a, l_a, m_b, l_b):
    m = max(m_a, m_b)
    return m, l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)


def decoder_scores():
    """The chapter-2 decoder step by hand: w_v . tanh(s + h_j), W_q = W_k = I."""
    s, hs = (1.0, -1.0), ((1.0, 0.0), (0.0, 2.0), (0.0, 0.0))
    return [math.tanh(s[0] + h[0]) + math.tanh(s[1] + h[1]) for h in hs]


def head_output_by_hand(scale):
    """check_head_output's case: q = [1, 0], keys I, values [[1, 2], [3, 4]]."""
    a = 1 / math.sqrt(2) if scale else 1.0  # the score of the first key; the other 0
    w0 = math.exp(a) / (math.exp(a) + 1)
    return [w0 * 1 + (1 - w0) * 3, w0 * 2 + (1 - w0) * 4]


HEAD_SCORES = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
MEMORY = {"n": 4096, "heads": 32, "bytes_per_entry": 2}  # exactly 1 GiB
ONE_GIB = 32 * 4096**2 * 2
RIVER = "The fisherman repaired his net beside the bank."

# (name, the learner's attempt, words of the diagnosis)
SLIPS = [
    # the word-in-context chapter
    (
        "uniform mixture: sum, not mean",
        lambda: why_attention.check_uniform_mixture([3, 3]),
        "sum of the value vectors",
    ),
    (
        "attention kind: a cross case called self",
        lambda: why_attention.check_attention_kind(dict(KINDS, b="self")),
        "one sequence or two different sequences",
    ),
    # the bottleneck chapter
    (
        "rnn step: W_h @ h_prev",
        lambda: bottleneck.check_rnn_step(
            lambda x, h, W_x, W_h, b: np.tanh(x @ W_x + W_h @ h + b)
        ),
        "transpose of W_h",
    ),
    (
        "rnn step: no tanh",
        lambda: bottleneck.check_rnn_step(
            lambda x, h, W_x, W_h, b: x @ W_x + h @ W_h + b
        ),
        "apply tanh",
    ),
    (
        "capacity: inputs a state could hold",
        lambda: bottleneck.check_capacity_bound(16 / 2),
        "the number of inputs a state of size 16 could hold",
    ),
    (
        "decoder step: the scores, not the weights",
        lambda: bottleneck.check_decoder_step(decoder_scores()),
        "Did you stop at the scores?",
    ),
    (
        "decoder step: percentages, not fractions",
        lambda: bottleneck.check_decoder_step(
            [100 * w for w in rows_softmax(decoder_scores())]
        ),
        "look like percentages",
    ),
    (
        "decoder step: exponentials not divided by their sum",
        lambda: bottleneck.check_decoder_step([math.exp(x) for x in decoder_scores()]),
        "divide each by their sum",
    ),
    (
        "decoder step: scores without the tanh",
        # without the tanh the scores are (h' + h_j) . v_a = [1, 2, 0]
        lambda: bottleneck.check_decoder_step(rows_softmax([1.0, 2.0, 0.0])),
        "scores without the tanh",
    ),
    # the query-key-value chapter
    (
        "projection shapes: V as wide as the keys",
        lambda: qkv.check_projection_shapes(
            {"Q": (5, 4), "K": (5, 4), "V": (5, 4), "scores": (5, 5), "output": (5, 3)},
            5,
            6,
            4,
            3,
        ),
        "set by d_v",
    ),
    (
        "projection shapes: scores as wide as the keys",
        lambda: qkv.check_projection_shapes(
            {"Q": (5, 4), "K": (5, 4), "V": (5, 3), "scores": (5, 4), "output": (5, 3)},
            5,
            6,
            4,
            3,
        ),
        "one per pair",
    ),
    (
        "head output: unscaled",
        lambda: qkv.check_head_output(
            head_output_by_hand(scale=False), [1.0, 0.0], np.eye(2), [[1, 2], [3, 4]]
        ),
        "not scaled",
    ),
    (
        "one head: unscaled",
        lambda: qkv.check_one_head(
            lambda X, W_Q, W_K, W_V: head(X @ W_Q, X @ W_K, X @ W_V, scale=False)
        ),
        "not scaled",
    ),
    # the scoring chapter
    (
        "dot product: sum of the coordinates",
        lambda: scoring.check_dot_product(1 - 2 + 3 + 1, [1.0, -2.0], [3.0, 1.0]),
        "sum of all coordinates",
    ),
    (
        "dot product: signs dropped",
        lambda: scoring.check_dot_product(3 + 2, [1.0, -2.0], [3.0, 1.0]),
        "mind the signs",
    ),
    (
        "scaled score: not scaled",
        lambda: scoring.check_scaled_score(24, 24, 16),
        "not scaled",
    ),
    (
        "scaled score: divided by d_k",
        lambda: scoring.check_scaled_score(1.5, 24, 16),
        "divided by d_k",
    ),
    (
        "score function: unscaled",
        lambda: scoring.check_score_function(lambda Q, K: Q @ K.T),
        "unscaled dot products",
    ),
    (
        "score function: divided by d_k",
        lambda: scoring.check_score_function(lambda Q, K: Q @ K.T / Q.shape[1]),
        "divided by d_k",
    ),
    # the values chapter (the softmax chapter: tests/test_exercises_diagnoses.py)
    (
        "output: plain average",
        lambda: values.check_output([1.0, 1.0], [0.2, 0.3, 0.5], BANK_VALUES),
        "plain average",
    ),
    (
        "output: plain sum",
        lambda: values.check_output([3.0, 3.0], [0.2, 0.3, 0.5], BANK_VALUES),
        "plain sum",
    ),
    (
        "attention: unscaled",
        lambda: values.check_attention(lambda Q, K, V: head(Q, K, V, scale=False)),
        "not scaled",
    ),
    (
        "attention: softmax over the queries",
        lambda: values.check_attention(
            lambda Q, K, V: rows_softmax(Q @ K.T / math.sqrt(Q.shape[1]), axis=0) @ V
        ),
        "normalise each column",
    ),
    (
        "attention: no shift by the maximum",
        lambda: values.check_attention(
            lambda Q, K, V: (
                (
                    np.exp(Q @ K.T / math.sqrt(Q.shape[1]))
                    / np.exp(Q @ K.T / math.sqrt(Q.shape[1])).sum(axis=1, keepdims=True)
                )
                @ V
            )
        ),
        "stable softmax",
    ),
    # the heads chapter
    (
        "head weights: a head forgotten",
        lambda: heads.check_head_weights(rows_softmax(HEAD_SCORES)[:2], HEAD_SCORES),
        "forget a head",
    ),
    (
        "head weights: one total over all heads",
        lambda: heads.check_head_weights(
            np.exp(HEAD_SCORES) / np.exp(HEAD_SCORES).sum(), HEAD_SCORES
        ),
        "sum to 1 over all heads together",
    ),
    (
        "head weights: powers not normalised",
        lambda: heads.check_head_weights(np.exp(HEAD_SCORES), HEAD_SCORES),
        "does not sum to 1",
    ),
    (
        "head weights: softmax down the columns",
        lambda: heads.check_head_weights(
            rows_softmax(HEAD_SCORES, axis=0), HEAD_SCORES
        ),
        "normalised each column",
    ),
    (
        "merge heads: reshape without moving the head axis",
        lambda: heads.check_merge_heads(
            lambda x: np.reshape(x, x.shape[:-3] + (x.shape[-2], -1))
        ),
        "mixes positions",
    ),
    # the order-and-position chapter (the masks chapter:
    # tests/test_exercises_diagnoses.py)
    (
        "encoding entries: sine and cosine swapped",
        lambda: position.check_encoding_entries(
            [math.cos(1), math.sin(2), math.cos(0.03)], [(1, 0), (2, 1), (3, 2)]
        ),
        "even coordinates (0, 2, ...) hold the sine",
    ),
    (
        "reordered output: the identity",
        lambda: position.check_reordered_output(
            [0, 1, 2, 3, 4],
            "the dog bit the man".split(),
            "the man bit the dog".split(),
        ),
        "belongs to 'man'",
    ),
    (
        "shift matrix: transposed",
        lambda: position.check_shift_matrix(
            lambda k, d: shift_by_hand(k, d, transpose=True)
        ),
        "shifts by -k",
    ),
    (
        "shift matrix: one frequency",
        lambda: position.check_shift_matrix(
            lambda k, d: shift_by_hand(k, d, frequency=lambda i, d: 1.0)
        ),
        "its own frequency",
    ),
    (
        "shift matrix: i for 2i",
        lambda: position.check_shift_matrix(
            lambda k, d: shift_by_hand(k, d, frequency=lambda i, d: 10000 ** (-i / d))
        ),
        "twice the pair's index",
    ),
    # the cost chapter
    (
        "score entries: neighbours only",
        lambda: cost.check_score_entries(2 * 2048, 2048),
        "not only with its neighbours",
    ),
    (
        "score entries: a causal mask's pairs",
        lambda: cost.check_score_entries(2048 * 2049 // 2, 2048),
        "causal mask",
    ),
    (
        "memory: GB",
        lambda: cost.check_score_memory(ONE_GIB / 1e9, **MEMORY),
        "in GB (10^9 bytes)",
    ),
    (
        "memory: one head",
        lambda: cost.check_score_memory(1 / 32, **MEMORY),
        "forget the other heads",
    ),
    (
        "memory: one head in GB",
        lambda: cost.check_score_memory(ONE_GIB / 32 / 1e9, **MEMORY),
        "that is one head, in GB",
    ),
    (
        "memory: four bytes a score",
        lambda: cost.check_score_memory(2.0, **MEMORY),
        "4 bytes per score",
    ),
    (
        "memory: bytes",
        lambda: cost.check_score_memory(ONE_GIB, **MEMORY),
        "that is in bytes",
    ),
    (
        "skipped tiles: the computed ones",
        lambda: cost.check_skipped_tiles(4 * 5 // 2, 16, 4),
        "counts the tiles that are computed",
    ),
    (
        "skipped tiles: score entries",
        lambda: cost.check_skipped_tiles(16 * 16 - 16 * 17 // 2, 16, 4),
        "counts skipped score entries",
    ),
    (
        "skipped tiles: the diagonal ones",
        lambda: cost.check_skipped_tiles(4, 16, 4),
        "those are the tiles on the diagonal",
    ),
    (
        "skipped tiles: every tile",
        lambda: cost.check_skipped_tiles(4 * 4, 16, 4),
        "that is every tile of the grid",
    ),
    (
        "merge: exponents upside down",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (
                max(m_a, m_b),
                l_a * math.exp(max(m_a, m_b) - m_a)
                + l_b * math.exp(max(m_a, m_b) - m_b),
            )
        ),
        "the exponent is upside down",
    ),
    (
        "merge: the first block's maximum",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (m_a, l_a + l_b * math.exp(m_b - m_a))
        ),
        "the merged maximum m is the larger",
    ),
    (
        "merge: sums added without rescaling",
        lambda: cost.check_merge(lambda m_a, l_a, m_b, l_b: (max(m_a, m_b), l_a + l_b)),
        "measured from different maxima",
    ),
    (
        "merge: block b always rescaled to block a's maximum",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (max(m_a, m_b), l_a + l_b * math.exp(m_b - m_a))
        ),
        "you always rescale block b to block a's maximum",
    ),
    (
        "merge: block a always rescaled to block b's maximum",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (max(m_a, m_b), l_a * math.exp(m_a - m_b) + l_b)
        ),
        "you always rescale block a to block b's maximum",
    ),
    (
        "merge: the log of the merged sum (log-sum-exp)",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (
                max(m_a, m_b),
                max(m_a, m_b) + math.log(merge_by_hand(m_a, l_a, m_b, l_b)[1]),
            )
        ),
        "that is the log-sum-exp m + log l of the merged block; return l itself",
    ),
    (
        "merge: the log of the merged sum without the maximum",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (
                max(m_a, m_b),
                math.log(merge_by_hand(m_a, l_a, m_b, l_b)[1]),
            )
        ),
        "that is log l, the logarithm of the merged sum; return l itself",
    ),
    (
        "merge: the two rescaled sums averaged",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (
                max(m_a, m_b),
                merge_by_hand(m_a, l_a, m_b, l_b)[1] / 2,
            )
        ),
        "that is an average",
    ),
    (
        "merge: a wrong sum no slip explains",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (max(m_a, m_b), l_a * l_b + 5.0)
        ),
        "the merged maximum is right, the sum is not",
    ),
    (
        "merge: exp of the maxima alone",
        lambda: cost.check_merge(
            lambda m_a, l_a, m_b, l_b: (
                max(m_a, m_b),
                (l_a * math.exp(m_a) + l_b * math.exp(m_b)) / math.exp(max(m_a, m_b)),
            )
        ),
        "an exponential overflowed",
    ),
    # the learned-and-computed chapter
    (
        "learned or computed: scores called learned",
        lambda: learning.check_learned_or_computed(
            dict(learning.LEARNED_OR_COMPUTED, scores="learned")
        ),
        "does training store it",
    ),
    (
        "score gradient: the upstream gradient",
        lambda: learning.check_score_gradient([1.0, 0.0, 0.0], P, [1.0, 0.0, 0.0]),
        "multiply by the softmax Jacobian",
    ),
    (
        "score gradient: <p, g> not subtracted",
        lambda: learning.check_score_gradient(P * [1.0, 0.0, 0.0], P, [1.0, 0.0, 0.0]),
        "forgot to subtract <p, g>",
    ),
    (
        "score gradient: does not sum to 0",
        lambda: learning.check_score_gradient([0.2, 0.2, 0.2], P, [1.0, 0.0, 0.0]),
        "always sums to 0",
    ),
    (
        "jacobian: diag(a) only",
        lambda: learning.check_softmax_jacobian(lambda a: np.diag(a)),
        "subtract the outer product",
    ),
    (
        "jacobian: -a^T a only",
        lambda: learning.check_softmax_jacobian(lambda a: -np.outer(a, a)),
        "add diag(a)",
    ),
    # the transformer-layer chapter: the layer norm's slips on the inputs of the checker
    (
        "layer norm: sqrt(var) + eps",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: layer_norm_by_hand(x, g, b, eps, sqrt_plus_eps=True)
        ),
        "eps goes inside the square root",
    ),
    (
        "layer norm: sample variance",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: layer_norm_by_hand(x, g, b, eps, ddof=1)
        ),
        "sample variance",
    ),
    (
        "layer norm: the whole array",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: (x - x.mean()) / np.sqrt(x.var() + eps) * g + b
        ),
        "over the whole array",
    ),
    (
        "layer norm: statistics across positions",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: layer_norm_by_hand(x, g, b, eps, axis=0)
        ),
        "over the first axis",
    ),
    (
        "layer norm: no eps",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: layer_norm_by_hand(x, g, b, 0.0)
        ),
        "you leave out eps",
    ),
    (
        "layer norm: gain and bias swapped",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: layer_norm_by_hand(x, b, g, eps)
        ),
        "gain and bias are swapped",
    ),
    (
        "layer norm: bias before the gain",
        lambda: layer.check_layer_norm(
            lambda x, g, b, eps: (layer_norm_by_hand(x, 1.0, b, eps)) * g
        ),
        "add the bias before multiplying",
    ),
    (
        "parameter count: no layer norms",
        lambda: layer.check_parameter_count(
            4 * (384 * 384 + 384) + 2 * 384 * 1536 + 1536 + 384, d_model=384, d_ff=1536
        ),
        "the two layer norms",
    ),
    (
        "parameter count: no biases",
        lambda: layer.check_parameter_count(
            4 * 384 * 384 + 2 * 384 * 1536 + 4 * 384, d_model=384, d_ff=1536
        ),
        "a bias vector as well",
    ),
    # the interpretability chapter
    (
        "weighted norms: the weights themselves",
        lambda: interpretability.weighted_norms_answer([0.6, 0.1]),
        "these are the weights themselves",
    ),
    (
        "weighted norms: the vectors' lengths alone",
        lambda: interpretability.weighted_norms_answer([0.5, 5.0]),
        "lengths of f(x) alone",
    ),
    (
        "norm share: the weight share",
        lambda: interpretability.norm_share_function(
            lambda out, layer, key: float(out.attention[layer, :, :, key].mean())
        ),
        "that is the weight share; use out.weighted_norms()",
    ),
    (
        "norm share: a sum over the heads",
        lambda: interpretability.norm_share_function(
            lambda out, layer, key: float(
                (
                    out.weighted_norms()[layer]
                    / out.weighted_norms()[layer].sum(axis=-1, keepdims=True)
                )[:, :, key]
                .mean(axis=-1)
                .sum()
            )
        ),
        "a sum over the 12 heads",
    ),
    # the summary chapter (its masking slips: tests/test_exercises_diagnoses.py)
    (
        "attention function: unscaled",
        lambda: summary.check_attention_function(
            lambda Q, K, V, causal: (
                rows_softmax(
                    np.where(
                        np.tri(len(Q), len(K), dtype=bool) | (not causal),
                        Q @ K.T,
                        -np.inf,
                    )
                )
                @ V
            )
        ),
        "the scores are not scaled",
    ),
    (
        "pipeline: softmax before the mask",
        lambda: summary.check_pipeline_order(
            ["project", "score", "scale", "softmax", "mask", "weighted sum"]
        ),
        "the mask acts before the softmax",
    ),
    (
        "pipeline: weighted sum before the softmax",
        lambda: summary.check_pipeline_order(
            ["project", "score", "scale", "mask", "weighted sum", "softmax"]
        ),
        "needs the weights",
    ),
    (
        "pipeline: scores before the projection",
        lambda: summary.check_pipeline_order(
            ["score", "project", "scale", "mask", "softmax", "weighted sum"]
        ),
        "comes too early",
    ),
]


# --- the harder exercises' checkers, and the primer's ---------------------------------


def backward_by_hand(Q, K, V, dZ, *, jacobian=True, scale=True, dV_T=True, dK_T=True):
    c = 1 / math.sqrt(Q.shape[1])
    A = rows_softmax(Q @ K.T * c)
    dA = dZ @ V.T
    dS = A * (dA - (A * dA).sum(axis=1, keepdims=True)) if jacobian else A * dA
    dS = dS * c if scale else dS
    return dS @ K, (dS.T if dK_T else dS) @ Q, (A.T if dV_T else A) @ dZ


def mha_by_hand(Xq, Xkv, W_Q, W_K, W_V, W_O, H, mask, *, slip=None):
    d = W_Q.shape[1]

    def split(x):
        return np.swapaxes(x.reshape(*x.shape[:-1], H, d // H), -3, -2)

    Q, K, V = split(Xq @ W_Q), split(Xkv @ W_K), split(Xkv @ W_V)
    S = Q @ np.swapaxes(K, -1, -2) / math.sqrt(d if slip == "sqrt_d" else d // H)
    m = np.asarray(mask)[..., None, :, :]
    m = ~m if slip == "inverted" else m
    A = (
        rows_softmax(S) * m
        if slip == "after"
        else rows_softmax(np.where(m, S, -np.inf))
    )
    Z = A @ V  # (..., H, L_q, d_k)
    if slip == "reshape":
        merged = Z.reshape(*Z.shape[:-3], Z.shape[-2], d)
    else:
        merged = np.swapaxes(Z, -3, -2).reshape(*Z.shape[:-3], Z.shape[-2], d)
    return merged if slip == "no_W_O" else merged @ W_O


def rope_by_hand(x, positions, *, exponent=2, sign=1.0, halves=False, start=0):
    x = np.asarray(x, float)
    d = x.shape[-1]
    theta = 10000.0 ** (-exponent * np.arange(d // 2) / d)
    angle = sign * (np.asarray(positions, float)[:, None] + start) * theta
    c, s = np.cos(angle), np.sin(angle)
    a, b = (
        (x[..., : d // 2], x[..., d // 2 :]) if halves else (x[..., 0::2], x[..., 1::2])
    )
    out = np.empty_like(x)
    first, second = (
        (slice(0, d // 2), slice(d // 2, d))
        if halves
        else (slice(0, d, 2), slice(1, d, 2))
    )
    out[..., first], out[..., second] = a * c - b * s, a * s + b * c
    return out


def tiled_by_hand(
    Q, K, V, block, *, rescale=True, divide=True, shift=True, per_block=False
):
    m, ell = np.full((len(Q), 1), -np.inf), np.zeros((len(Q), 1))
    acc, parts = np.zeros((len(Q), V.shape[1])), []
    for start in range(0, len(K), block):
        S = Q @ K[start : start + block].T / math.sqrt(Q.shape[1])
        Vb = V[start : start + block]
        if per_block:
            parts.append(rows_softmax(S) @ Vb)
            continue
        m_new = (
            np.maximum(m, S.max(axis=1, keepdims=True)) if shift else np.zeros_like(m)
        )
        E = np.exp(S - m_new)
        c = np.exp(m - m_new) if rescale and shift else 1.0
        ell, acc, m = c * ell + E.sum(axis=1, keepdims=True), c * acc + E @ Vb, m_new
    if per_block:
        return np.mean(parts, axis=0)
    return acc / ell if divide else acc


def gradient_w_by_hand(w, b, X, y, *, mean=True, sign=1.0):
    p = 1 / (1 + np.exp(-(X @ w + b)))
    g = X.T @ (p - y) * sign
    return g / len(y) if mean else g


def mean_stopped_at():
    """The retraining exercise measured at the wrong step: where training stopped."""
    from attnlib.data.learning_task import make_split
    from attnlib.models import linear_classifier as lc

    split = make_split()
    return float(
        np.mean(
            [lc.train(*split, learning_rate=0.01, seed=s).stopped_at for s in (0, 1, 2)]
        )
    )


STEP = {"x": 2.0, "y": 1, "w": 0.0, "b": 0.0, "learning_rate": 0.5}  # p = 0.5, g = -0.5

SLIPS += [
    *[
        (
            f"backward: {name}",
            lambda knob=knob: attention_gradients.check_attention_backward(
                lambda *a: backward_by_hand(*a, **{knob: False})
            ),
            words,
        )
        for name, knob, words in (
            ("no softmax Jacobian", "jacobian", "coupling"),
            ("no 1/sqrt(d_k)", "scale", "carry the factor 1 / sqrt(d_k)"),
            ("A for A^T in dV", "dV_T", "dV = A^T dZ"),
            ("dS for dS^T in dK", "dK_T", "dK = dS^T Q"),
        )
    ],
    *[
        (
            f"masked multi-head: {slip}",
            lambda slip=slip: multi_head.check_masked_multi_head(
                lambda *a: mha_by_hand(*a, slip=slip)
            ),
            words,
        )
        for slip, words in (
            ("after", "after the softmax"),
            ("inverted", "the wrong way round"),
            ("sqrt_d", "divided by sqrt(d)"),
            ("reshape", "mixes positions"),
            ("no_W_O", "output projection W_O"),
        )
    ],
    *[
        (
            f"rope: {name}",
            lambda knob=knob: rotary.check_rotary(
                lambda x, p: rope_by_hand(x, p, **knob)
            ),
            words,
        )
        for name, knob, words in (
            ("10000^(-i/d)", {"exponent": 1}, "RoPE uses 10000^(-2i/d)"),
            ("clockwise", {"sign": -1.0}, "counter-clockwise"),
            ("rotate half", {"halves": True}, "rotate half"),
            ("positions from 1", {"start": 1}, "positions start at 1"),
        )
    ],
    (
        "rope: positions ignored, nothing rotated",
        lambda: rotary.check_rotary(lambda x, positions: np.array(x, dtype=float)),
        "returns its input unchanged: nothing is rotated",
    ),
    (
        "rope: positions ignored, every row turned as if at position 1",
        lambda: rotary.check_rotary(
            lambda x, positions: rope_by_hand(x, [1] * len(positions))
        ),
        "ignores the positions: the same row at positions 2, 0, 3 and 5 comes out "
        "transformed alike",
    ),
    (
        "rope: positions ignored, every row turned as the first",
        lambda: rotary.check_rotary(
            lambda x, positions: rope_by_hand(x, [positions[0]] * len(positions))
        ),
        "your function ignores the positions",
    ),
    (
        "rope: the row numbers 0, 1, 2, ... for the positions, as np.arange(L)",
        lambda: rotary.check_rotary(
            lambda x, positions: rope_by_hand(x, np.arange(np.shape(x)[-2]))
        ),
        "you use the positions 0, 1, 2, ... instead of the positions given",
    ),
    (
        "rope: every pair turned by the row's position alone, no frequencies",
        lambda: rotary.check_rotary(
            lambda x, positions: rope_by_hand(x, positions, exponent=0)
        ),
        "every pair of a row turns by the same angle",
    ),
    *[
        (
            f"tiled: {name}",
            lambda knob=knob: online_softmax.check_tiled_attention(
                lambda *a: tiled_by_hand(*a, **knob)
            ),
            words,
        )
        for name, knob, words in (
            ("no rescaling", {"rescale": False}, "exp(m_old - m_new)"),
            ("blocks normalised apart", {"per_block": True}, "each block on its own"),
            (
                "no final division",
                {"divide": False},
                "without dividing by the running sum",
            ),
            ("no maximum subtracted", {"shift": False}, "subtract the running maximum"),
        )
    ],
    (
        "tiled: the whole score table",
        lambda: online_softmax.check_tiled_attention(
            lambda Q, K, V, block: head(Q, K, V)
        ),
        "never Q @ K.T",
    ),
    (
        "one step: with the gradient",
        lambda: primer.check_one_step([-0.5, -0.25], **STEP),
        "*with* the gradient",
    ),
    (
        "one step: no learning rate",
        lambda: primer.check_one_step([1.0, 0.5], **STEP),
        "multiply it by the learning rate",
    ),
    (
        "one step: no factor x",
        lambda: primer.check_one_step([0.25, 0.25], **STEP),
        "the factor x",
    ),
    (
        "gradient: summed, not averaged",
        lambda: primer.check_gradient_w(
            lambda w, b, X, y: gradient_w_by_hand(w, b, X, y, mean=False)
        ),
        "divide by n",
    ),
    (
        "gradient: y - p",
        lambda: primer.check_gradient_w(
            lambda w, b, X, y: gradient_w_by_hand(w, b, X, y, sign=-1.0)
        ),
        "wrong sign",
    ),
    (
        "retraining: where training stopped",
        lambda: primer.check_retraining("later", mean_stopped_at()),
        "stopped_at",
    ),
]


def strongest_head_slip():
    """Counting the layer and head from 1 (the strongest head found with numpy)."""
    from attnlib.models import minilm

    sentence = "The animal didn't cross the street because it was too tired."
    out = minilm.forward(sentence)
    w = out.attention[:, :, out.index("it"), out.index("animal")]
    layer_, head_ = (int(i) for i in np.unravel_index(np.argmax(w), w.shape))
    return interpretability.strongest_head_answer(
        sentence, "it", "animal", layer_ + 1, head_ + 1
    )


SLIPS.append(("strongest head: counted from 1", strongest_head_slip, "counted from 1"))


@pytest.mark.parametrize("name, attempt, diagnosis", SLIPS, ids=[s[0] for s in SLIPS])
def test_every_named_slip_is_caught_and_diagnosed(name, attempt, diagnosis, capsys):
    assert attempt() is False
    out = capsys.readouterr().out
    assert out.startswith("Not yet"), out
    assert diagnosis in out, out
    assert "Expected" not in out


def test_the_issue_layer_norm_values_on_zero_and_a_thousandth():
    """On [0, 1e-3] (eps = 1e-5) the right layer norm gives 0.1562, the slip 0.9804."""
    x = np.array([[0.0, 1e-3]])
    right = layer_norm_by_hand(x, 1.0, 0.0, 1e-5)
    slip = layer_norm_by_hand(x, 1.0, 0.0, 1e-5, sqrt_plus_eps=True)
    assert round(float(right[0, 1]), 4) == 0.1562
    assert round(float(slip[0, 1]), 4) == 0.9804
    labels = [label for label, _, _ in layer._norm_cases()]
    assert any("[0, 0.001]" in label for label in labels)


# --- right answers, worked out independently, pass ------------------------------

RIGHT = [
    ("uniform mixture", lambda: why_attention.check_uniform_mixture([1, 1])),
    ("attention kind", lambda: why_attention.check_attention_kind(KINDS)),
    (
        "rnn step",
        lambda: bottleneck.check_rnn_step(
            lambda x, h, W_x, W_h, b: np.tanh(x @ W_x + h @ W_h + b)
        ),
    ),
    ("capacity bound", lambda: bottleneck.check_capacity_bound(16 / (40 * 2))),
    (
        "decoder step",
        lambda: bottleneck.check_decoder_step(
            rows_softmax(decoder_scores()),
            rows_softmax(decoder_scores()) @ np.array([[1, 0], [0, 2], [0, 0]]),
        ),
    ),
    (
        "projection shapes",
        lambda: qkv.check_projection_shapes(
            {"Q": (5, 4), "K": (5, 4), "V": (5, 3), "scores": (5, 5), "output": (5, 3)},
            5,
            6,
            4,
            3,
        ),
    ),
    (
        "head output",
        lambda: qkv.check_head_output(
            head_output_by_hand(scale=True), [1.0, 0.0], np.eye(2), [[1, 2], [3, 4]]
        ),
    ),
    (
        "one head",
        lambda: qkv.check_one_head(
            lambda X, W_Q, W_K, W_V: head(X @ W_Q, X @ W_K, X @ W_V)
        ),
    ),
    ("dot product", lambda: scoring.check_dot_product(1, [1.0, -2.0], [3.0, 1.0])),
    ("scaled score", lambda: scoring.check_scaled_score(6, 24, 16)),
    (
        "score function",
        lambda: scoring.check_score_function(
            lambda Q, K: Q @ K.T / math.sqrt(Q.shape[1])
        ),
    ),
    (
        "additive score",
        lambda: scoring.check_additive_score(
            math.tanh(1.0) + math.tanh(1.0),
            [1.0, 0.0],
            [0.0, 1.0],
            np.eye(2),
            np.eye(2),
            [1, 1],
        ),
    ),
    ("weights", lambda: softmax.check_weights(P, [2.0, 1.0, 0.0])),
    ("softmax", lambda: softmax.check_softmax(rows_softmax)),
    ("output", lambda: values.check_output([0.9, 1.1], [0.2, 0.3, 0.5], BANK_VALUES)),
    (
        "shapes",
        lambda: values.check_shapes(
            dict(
                X=(10, 16),
                W_Q=(16, 8),
                W_K=(16, 8),
                W_V=(16, 4),
                Q=(10, 8),
                K=(10, 8),
                V=(10, 4),
                scores=(10, 10),
                weights=(10, 10),
                Z=(10, 4),
            ),
            n=10,
            d=16,
            d_k=8,
            d_v=4,
        ),
    ),
    ("attention", lambda: values.check_attention(head)),
    (
        "head weights",
        lambda: heads.check_head_weights(rows_softmax(HEAD_SCORES), HEAD_SCORES),
    ),
    (
        "head shapes",
        lambda: heads.check_head_shapes(
            dict(
                X=(2, 5, 12),
                Q=(2, 5, 12),
                Q_heads=(2, 3, 5, 4),
                weights=(2, 3, 5, 5),
                head_outputs=(2, 3, 5, 4),
                merged=(2, 5, 12),
                output=(2, 5, 12),
            ),
            batch=2,
            length=5,
            d_model=12,
            num_heads=3,
        ),
    ),
    (
        "merge heads",
        lambda: heads.check_merge_heads(
            lambda x: np.concatenate([x[..., h, :, :] for h in range(x.shape[-3])], -1)
        ),
    ),
    (
        "visible",
        lambda: masks.check_visible(
            ["The", "bank", "flooded", "after"],
            "after",
            tokens=["The", "bank", "flooded", "after", "the", "storm", "."],
            mask=np.tril(np.ones((7, 7), dtype=bool)),
        ),
    ),
    (
        "causal mask",
        lambda: masks.check_causal_mask(
            lambda n: np.array([[j <= i for j in range(n)] for i in range(n)]).reshape(
                n, n
            )
        ),
    ),
    (
        "padding mask",
        lambda: masks.check_padding_mask(
            [[True, True, True, False, False], [True] * 5], [3, 5], 5
        ),
    ),
    (
        "encoding entries",
        lambda: position.check_encoding_entries(
            [math.sin(1), math.cos(2), math.sin(0.03)], [(1, 0), (2, 1), (3, 2)]
        ),
    ),
    (
        "reordered output",
        lambda: position.check_reordered_output(
            [0, 4, 2, 3, 1],
            "the dog bit the man".split(),
            "the man bit the dog".split(),
        ),
    ),
    ("shift matrix", lambda: position.check_shift_matrix(shift_by_hand)),
    (
        "layer shapes",
        lambda: layer.check_layer_shapes(
            dict(
                X=(2, 5, 12),
                Q_heads=(2, 3, 5, 4),
                weights=(2, 3, 5, 5),
                attended=(2, 5, 12),
                h=(2, 5, 12),
                ff_hidden=(2, 5, 24),
                output=(2, 5, 12),
            ),
            batch=2,
            length=5,
            d_model=12,
            num_heads=3,
            d_ff=24,
        ),
    ),
    ("layer norm", lambda: layer.check_layer_norm(layer_norm_by_hand)),
    (
        "parameter count",
        lambda: layer.check_parameter_count(
            4 * (384 * 384 + 384) + 2 * 384 * 1536 + 1536 + 384 + 4 * 384,
            d_model=384,
            d_ff=1536,
        ),
    ),
    ("crossover", lambda: layer.check_crossover(512, d=512)),
    ("score entries", lambda: cost.check_score_entries(2048 * 2048, 2048)),
    ("score memory", lambda: cost.check_score_memory(1.0, **MEMORY)),
    ("skipped tiles", lambda: cost.check_skipped_tiles(6, 16, 4)),
    ("merge", lambda: cost.check_merge(merge_by_hand)),
    (
        "attention backward",
        lambda: attention_gradients.check_attention_backward(backward_by_hand),
    ),
    ("masked multi-head", lambda: multi_head.check_masked_multi_head(mha_by_hand)),
    ("rotary", lambda: rotary.check_rotary(rope_by_hand)),
    ("tiled attention", lambda: online_softmax.check_tiled_attention(tiled_by_hand)),
    ("one step", lambda: primer.check_one_step([0.5, 0.25], **STEP)),
    ("gradient w", lambda: primer.check_gradient_w(gradient_w_by_hand)),
    (
        "learned or computed",
        lambda: learning.check_learned_or_computed(
            {
                **dict.fromkeys(["W_Q", "W_K", "W_V", "W_out", "b_out"], "learned"),
                **dict.fromkeys(
                    ["scores", "attention weights", "attention output", "0.6652"],
                    "computed",
                ),
            }
        ),
    ),
    (
        "score gradient",
        lambda: learning.check_score_gradient(
            [P[0] * (1 - P[0]), -P[0] * P[1], -P[0] * P[2]], P, [1.0, 0.0, 0.0]
        ),
    ),
    (
        "softmax jacobian",
        lambda: learning.check_softmax_jacobian(
            lambda p: np.array(
                [
                    [p[i] * ((i == j) - p[j]) for j in range(len(p))]
                    for i in range(len(p))
                ]
            )
        ),
    ),
    ("weighted norms", lambda: interpretability.weighted_norms_answer([0.3, 0.5])),
    (
        "pipeline order",
        lambda: summary.check_pipeline_order(
            ["project", "score", "scale", "mask", "softmax", "weighted sum"]
        ),
    ),
    (
        "attention function",
        lambda: summary.check_attention_function(
            lambda Q, K, V, causal: (
                rows_softmax(
                    np.where(
                        np.tri(len(Q), len(K), dtype=bool) | (not causal),
                        Q @ K.T / math.sqrt(Q.shape[1]),
                        -np.inf,
                    )
                )
                @ V
            )
        ),
    ),
]


@pytest.mark.parametrize("name, attempt", RIGHT, ids=[r[0] for r in RIGHT])
def test_a_right_answer_worked_out_independently_passes(name, attempt, capsys):
    assert attempt() is True
    out = capsys.readouterr().out
    assert out.startswith("Correct") and "Not yet" not in out, out


# --- the issue's examples ---------------------------------------------------------


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: layer.check_layer_norm("my answer"), "give the function itself"),
        (lambda: position.check_shift_matrix("R"), "give the function itself"),
        (
            lambda: cost.check_merge(lambda m_a, l_a, m_b, l_b: (m_a, l_a, 0.0)),
            "returned 3 values; return the pair (m, l)",
        ),
    ],
    ids=["layer norm given text", "shift matrix given text", "merge with 3 values"],
)
def test_the_issue_examples_get_a_sentence_not_a_traceback(call, words, capsys):
    assert call() is False
    out = capsys.readouterr().out
    assert out.startswith("Not yet: ") and words in out and out.count("\n") == 1, out


def test_the_layer_norm_of_the_issue_is_rejected_on_the_tiny_variance_row(capsys):
    assert not layer.check_layer_norm(
        lambda x, g, b, eps: (
            (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + eps) * g + b
        )
    )
    out = capsys.readouterr().out
    assert "[0, 0.001]" in out and "0.9804" in out and "eps goes inside" in out
