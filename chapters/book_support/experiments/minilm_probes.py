"""Probes of all-MiniLM-L6-v2's attention: controlled sentences for one head, the
attention sink, and rank correlations with a bootstrap interval.

The chapters "Reading attention" and "Testing attention" turn what a map suggests into a
measurement. This module holds the measurements, so that a chapter shows the question,
one call and the answer:

``head_rows(sentences, query, layer, head)``
    one head's row of weights at the token ``query``, for many sentences at once
    (only the layers up to ``layer`` run; sentences of equal length share one pass).
``controlled_weights(frames, words, query, layer, head)``
    the weight from ``query`` to each word placed in each frame: a (words, frames)
    table.
``variance_shares(table)``
    how much of the spread of such a table the rows (the word), the columns (the frame)
    and neither explain: a two-way decomposition of sums of squares.
``attention_sink(outputs)``
    per sentence and layer: the weight on ``[CLS]`` and ``[SEP]``, the lengths of their
    transformed value vectors ``||f(x)||`` against the other tokens', and their share of
    the norm (the test of what these observations mean for the model's output is
    the interpretability chapter's ``minilm_sink``).
``rank_correlation(a, b)`` and ``bootstrap_rank_correlations(effect, predictors)``
    Spearman's rank correlation (ties get average ranks) and its percentile bootstrap
    interval over the items, for two predictors of the same effect and their difference.
``count_parameters(obj)``
    the number of learned numbers in any tree of dataclasses holding arrays.
``cosine(u, v)``
    the cosine similarity of two vectors, in float64.

Sources: Kobayashi et al. (2020), section 3 (``f(x)`` and ``||alpha f(x)||``); Clark
et al. (2019), section 3 (heads that attend to ``[SEP]`` and ``[CLS]``); Xiao et al.
(2023), section 3 (the attention sink); Efron & Tibshirani (1993), chapter 13 (the
percentile bootstrap).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from attnlib.models import minilm

# --------------------------------------------------------------------------------------
# One head on many sentences
# --------------------------------------------------------------------------------------


def head_rows(sentences, query: str, layer: int, head: int) -> list:
    """The attention row of head ``head`` in layer ``layer`` at the token ``query``.

    Only layers ``0..layer`` are computed, and sentences with the same number of tokens
    run as one batch, so a table of dozens of sentences takes a fraction of a second.

    Parameters
    ----------
    sentences : sequence of str
    query : str, a token (lower case) that occurs in every sentence; its first
        occurrence is used
    layer, head : int, counted from 0

    Returns
    -------
    list of (tokens, row) pairs, one per sentence in the given order; ``row`` has shape
    (L,) and sums to 1.

    Raises
    ------
    ValueError
        If ``layer`` or ``head`` is out of range, or ``query`` is missing from a
        sentence (the sentence and its tokens are named).
    """
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of str, not one str")
    if not 0 <= layer < minilm.NUM_LAYERS or not 0 <= head < minilm.NUM_HEADS:
        raise ValueError(
            f"layer must be in 0..{minilm.NUM_LAYERS - 1} and head in "
            f"0..{minilm.NUM_HEADS - 1}; got layer {layer}, head {head}"
        )
    encoded = [minilm.encode(s) for s in sentences]
    for s, (tokens, _) in zip(sentences, encoded):
        if query not in tokens:
            raise ValueError(f"{query!r} is not a token of {s!r}: {tokens}")
    weights = minilm.load_weights()
    rows = [None] * len(sentences)
    for length in sorted({ids.size for _, ids in encoded}):
        group = [k for k, (_, ids) in enumerate(encoded) if ids.size == length]
        x = minilm.embed(np.stack([encoded[k][1] for k in group]))  # (B, L, 384)
        for n in range(layer + 1):
            x, a, _ = minilm.encoder_layer(x, weights.layers[n])  # a: (B, 12, L, L)
        for b, k in enumerate(group):
            tokens = encoded[k][0]
            rows[k] = (tokens, a[b, head, tokens.index(query)])
    return rows


def controlled_weights(frames, words, query: str, layer: int, head: int) -> np.ndarray:
    """Weight from ``query`` to each word of ``words``, put into each of ``frames``.

    Each frame is a sentence with one ``{}``, e.g. ``"The {} repaired his net beside the
    bank."``. Every word must be a single WordPiece token, so that within a frame all
    sentences have the same tokens at the same positions except the one word.

    Returns
    -------
    numpy.ndarray, shape (len(words), len(frames)): ``table[w, f]`` is the weight of
    head ``head`` of layer ``layer`` from the first ``query`` token to the word.

    Raises
    ------
    ValueError
        If a word is split into several tokens, a frame lacks ``{}``, or ``query`` is
        missing (named).
    """
    if isinstance(frames, str) or isinstance(words, str):
        raise TypeError("frames and words must be sequences of str, not one str")
    for frame in frames:
        if frame.count("{}") != 1:
            raise ValueError(f"each frame needs exactly one '{{}}'; got {frame!r}")
    tokenizer = minilm.load_tokenizer()
    for word in words:
        pieces = tokenizer.encode(word, add_special_tokens=False).tokens
        if len(pieces) != 1:
            raise ValueError(
                f"{word!r} is split into {pieces}; use single-token words so that "
                "the positions stay the same"
            )
    sentences = [frame.format(word) for word in words for frame in frames]
    rows = head_rows(sentences, query, layer, head)
    table = np.empty((len(words), len(frames)))
    for k, (tokens, row) in enumerate(rows):
        word = words[k // len(frames)].lower()
        table[k // len(frames), k % len(frames)] = row[tokens.index(word)]
    return table


def variance_shares(table) -> dict:
    """Split the spread of a two-way table into rows, columns and the rest.

    With grand mean ``g``, row means ``r_w`` and column means ``c_f``, the total sum of
    squares ``sum (t - g)^2`` is the sum of ``n_cols * sum (r_w - g)^2`` (rows),
    ``n_rows * sum (c_f - g)^2`` (columns) and the residual (interaction). Returns the
    three as shares of the total: ``{"rows": ..., "columns": ..., "rest": ...}``, which
    add up to 1.

    Raises ``ValueError`` for a table that is not 2-D with at least 2 rows and 2
    columns, or whose entries are all equal (nothing to split).
    """
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or min(t.shape) < 2:
        raise ValueError(f"need a 2-D table of at least 2 x 2; got shape {t.shape}")
    if not np.isfinite(t).all():
        raise ValueError("table must hold finite numbers (no NaN or inf)")
    if np.abs(t).max() > 0:
        t = t / np.abs(t).max()  # the shares do not depend on the scale
    g = t.mean()
    total = ((t - g) ** 2).sum()
    if total == 0:
        raise ValueError("all entries are equal: there is no spread to split")
    rows = t.shape[1] * ((t.mean(axis=1) - g) ** 2).sum()
    cols = t.shape[0] * ((t.mean(axis=0) - g) ** 2).sum()
    return {
        "rows": rows / total,
        "columns": cols / total,
        "rest": (total - rows - cols) / total,
    }


# --------------------------------------------------------------------------------------
# The attention sink
# --------------------------------------------------------------------------------------

#: What :func:`attention_sink` measures, in the order of its result.
SINK_MEASURES = (
    "weight on [CLS]",
    "weight on [SEP]",
    "||f(x)|| of [CLS]",
    "||f(x)|| of [SEP]",
    "||f(x)|| of the other tokens",
    "norm share of [CLS]",
    "norm share of [SEP]",
)


def attention_sink(outputs, per_head: bool = False) -> dict:
    """Measure, for every sentence and layer, how ``[CLS]`` and ``[SEP]`` take weight.

    For each :class:`attnlib.models.minilm.MiniLMOutput` in ``outputs`` and each layer:

    * the mean weight (over 12 heads and all queries) on ``[CLS]`` and on ``[SEP]``;
    * the mean length ``||f(x_j)||`` of the transformed value vector (Kobayashi et al.)
      of ``[CLS]``, of ``[SEP]`` and of the other tokens, over the heads;
    * the mean share of ``[CLS]`` and ``[SEP]`` in ``sum_j ||alpha_ij f(x_j)||``.

    With ``per_head=True`` nothing is averaged over the heads: each measure is given
    for every head, averaged over the queries only (and, for the other tokens'
    ``||f(x)||``, over those tokens), so that a head that departs from the layer's
    average can be seen.

    These are observations about each layer. Whether the model's output depends on what
    ``[CLS]`` delivers or on the weight it holds is tested by ``key_edit_effects`` of
    the interpretability chapter's ``minilm_sink`` (Xiao et al. 2023, section 3).

    Parameters
    ----------
    outputs : sequence of MiniLMOutput, each for one sentence without a head mask

    Returns
    -------
    dict mapping each name of :data:`SINK_MEASURES` to a float64 array of shape
    (len(outputs), 6): sentences by layers; with ``per_head=True``, of shape
    (len(outputs), 6, 12): sentences by layers by heads.

    Raises
    ------
    ValueError
        If an output was run with a batch of head masks or with a head removed, or does
        not start with ``[CLS]`` and end with ``[SEP]``.
    """
    result = {name: [] for name in SINK_MEASURES}
    if isinstance(outputs, minilm.MiniLMOutput):
        raise TypeError("outputs must be a sequence of MiniLMOutput, not one")
    for out in outputs:
        if not isinstance(out, minilm.MiniLMOutput):
            raise TypeError(f"outputs must hold MiniLMOutput; got {type(out).__name__}")
        if out.attention.ndim != 4 or not out.head_mask.all():
            raise ValueError("attention_sink needs single passes with every head")
        if out.tokens[0] != "[CLS]" or out.tokens[-1] != "[SEP]":
            raise ValueError(f"expected [CLS] ... [SEP]; got {out.tokens}")
        a = out.attention.astype(np.float64)  # (6, 12, L, L)
        f_len = np.linalg.norm(out.transformed, axis=-1)  # (6, 12, L)
        norms = out.weighted_norms()  # (6, 12, L, L)
        share = norms / norms.sum(axis=-1, keepdims=True)
        if per_head:
            rows = {
                "weight on [CLS]": a[..., 0].mean(axis=2),  # (6, 12)
                "weight on [SEP]": a[..., -1].mean(axis=2),
                "||f(x)|| of [CLS]": f_len[..., 0],
                "||f(x)|| of [SEP]": f_len[..., -1],
                "||f(x)|| of the other tokens": f_len[..., 1:-1].mean(axis=2),
                "norm share of [CLS]": share[..., 0].mean(axis=2),
                "norm share of [SEP]": share[..., -1].mean(axis=2),
            }
            for name in SINK_MEASURES:
                result[name].append(np.asarray(rows[name], dtype=np.float64))
            continue
        rows = {
            "weight on [CLS]": a[..., 0].mean(axis=(1, 2)),
            "weight on [SEP]": a[..., -1].mean(axis=(1, 2)),
            "||f(x)|| of [CLS]": f_len[..., 0].mean(axis=1),
            "||f(x)|| of [SEP]": f_len[..., -1].mean(axis=1),
            "||f(x)|| of the other tokens": f_len[..., 1:-1].mean(axis=(1, 2)),
            "norm share of [CLS]": share[..., 0].mean(axis=(1, 2)),
            "norm share of [SEP]": share[..., -1].mean(axis=(1, 2)),
        }
        for name in SINK_MEASURES:
            result[name].append(rows[name])
    return {name: np.array(v) for name, v in result.items()}


# --------------------------------------------------------------------------------------
# Rank correlations with their uncertainty
# --------------------------------------------------------------------------------------


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks along the last axis, from 1; tied values share the mean of their ranks."""
    order = np.argsort(x, axis=-1, kind="stable")
    sorted_x = np.take_along_axis(x, order, axis=-1)
    n = x.shape[-1]
    ranks_sorted = np.broadcast_to(np.arange(1.0, n + 1), x.shape).copy()
    # runs of equal values in sorted order get the mean rank of the run
    for row_x, row_r in zip(sorted_x.reshape(-1, n), ranks_sorted.reshape(-1, n)):
        start = 0
        for k in range(1, n + 1):
            if k == n or row_x[k] != row_x[start]:
                row_r[start:k] = row_r[start:k].mean()
                start = k
    ranks = np.empty_like(ranks_sorted)
    np.put_along_axis(ranks, order, ranks_sorted, axis=-1)
    return ranks


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    denom = np.sqrt((a**2).sum(axis=-1) * (b**2).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            denom > 0, (a * b).sum(axis=-1) / np.where(denom > 0, denom, 1), np.nan
        )


def rank_correlation(a, b) -> float:
    """Spearman's rank correlation of two equally long sequences (ties: average ranks).

    The Pearson correlation of the ranks: 1 when both orders agree, -1 when one is the
    reverse of the other.

    Raises ``ValueError`` if the lengths differ, there are fewer than 3 items, or one
    sequence is constant (its ranks carry no order).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 3:
        raise ValueError(
            "need two 1-D sequences a and b of the same length >= 3; got "
            f"{a.shape}, {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a and b must hold finite numbers (no NaN or inf)")
    r = _pearson_rows(_average_ranks(a), _average_ranks(b))
    if np.isnan(r):
        raise ValueError("a constant sequence has no rank order")
    return float(r)


def bootstrap_rank_correlations(
    effect, predictors: dict, *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> dict:
    """Rank correlation of each predictor with ``effect``, with a bootstrap interval.

    The items (e.g. the words of one sentence) are resampled with replacement
    ``n_boot`` times; in each resample every predictor's rank correlation with the
    effect is computed on the same items, so the difference between two predictors is
    paired. Resamples in which a sequence is constant are dropped (their number is
    reported). The interval is the percentile interval at ``level``.

    Parameters
    ----------
    effect : sequence of float, length n (n >= 3)
    predictors : dict name -> sequence of float, each of length n (one or two entries)

    Returns
    -------
    dict name -> (estimate, low, high) for each predictor and, with two predictors
    ``p`` and ``q``, for ``"p - q"``; plus ``"resamples used"`` -> int.

    Raises
    ------
    ValueError
        If lengths differ, there are more than two predictors, or ``level`` is not in
        (0, 1).
    """
    e = np.asarray(effect, dtype=np.float64)
    if not 0 < level < 1 or not 1 <= len(predictors) <= 2 or n_boot < 1:
        raise ValueError(
            "need 0 < level < 1, n_boot >= 1 and one or two predictors; got level "
            f"{level}, n_boot {n_boot}, {len(predictors)} predictors"
        )
    names = list(predictors)
    P = np.array([np.asarray(predictors[k], dtype=np.float64) for k in names])
    if P.shape[1:] != e.shape:
        raise ValueError(
            f"effect {e.shape} and predictors {P.shape[1:]} differ in length"
        )
    estimates = [rank_correlation(p, e) for p in P]
    idx = np.random.default_rng(seed).integers(0, e.size, size=(n_boot, e.size))
    e_ranks = _average_ranks(e[idx])  # (n_boot, n)
    samples = np.stack(
        [_pearson_rows(_average_ranks(p[idx]), e_ranks) for p in P], axis=1
    )
    samples = samples[~np.isnan(samples).any(axis=1)]  # (used, k)
    tail = 100 * (1 - level) / 2
    result = {}
    for k, name in enumerate(names):
        low, high = np.percentile(samples[:, k], [tail, 100 - tail])
        result[name] = (estimates[k], float(low), float(high))
    if len(names) == 2:
        d = samples[:, 0] - samples[:, 1]
        low, high = np.percentile(d, [tail, 100 - tail])
        result[f"{names[0]} - {names[1]}"] = (
            estimates[0] - estimates[1],
            float(low),
            float(high),
        )
    result["resamples used"] = int(samples.shape[0])
    return result


# --------------------------------------------------------------------------------------
# Counting parameters
# --------------------------------------------------------------------------------------


def count_parameters(obj) -> int:
    """The number of entries of every array in ``obj``, a dataclass (or a tuple or list
    of them) whose fields hold arrays, further dataclasses or tuples of them.

    ``count_parameters(minilm.load_weights())`` counts the whole model, and
    ``count_parameters(minilm.load_weights().layers[0])`` one layer. Numbers that are
    not arrays (``eps``, the number of heads) are settings, not parameters, and are not
    counted.
    """
    if isinstance(obj, np.ndarray):
        return int(obj.size)
    if isinstance(obj, (tuple, list)):
        return sum(count_parameters(x) for x in obj)
    if dataclasses.is_dataclass(obj):
        return sum(
            count_parameters(getattr(obj, f.name)) for f in dataclasses.fields(obj)
        )
    return 0


def cosine(u, v) -> float:
    """Cosine similarity ``u . v / (||u|| ||v||)`` of two vectors of the same length.

    1 for vectors pointing the same way, 0 for perpendicular ones, -1 for opposite ones;
    computed in float64 (each vector rescaled first, so that huge entries do not
    overflow). Raises ``ValueError`` if the shapes differ, an entry is not finite, or a
    vector is zero.
    """
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if u.shape != v.shape or u.ndim != 1:
        raise ValueError(
            f"need two vectors u and v of the same length; got {u.shape}, {v.shape}"
        )
    if not (np.isfinite(u).all() and np.isfinite(v).all()):
        raise ValueError("u and v must hold finite numbers (no NaN or inf)")
    if not (u.any() and v.any()):
        raise ValueError("the cosine of a zero vector (u or v) is undefined")
    u, v = u / np.abs(u).max(), v / np.abs(v).max()  # no overflow; the angle is kept
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))
