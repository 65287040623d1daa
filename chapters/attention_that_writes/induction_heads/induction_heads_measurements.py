"""Measurements of the induction chapter that go beyond the maps: held-out sequences of
the training kind, the loss by position in the second copy against the floor of a
calibrated copier, zero, mean and resample ablation, and patches of one path (what
the previous-token head writes reaching only the layer-1 queries, keys or values).

The stored models are two attention-only layers (``d_ff = 0``, pre-LN, learned
positions). :func:`run` recomputes their forward pass from attnlib's pieces so that a
head's output can be *replaced* (by zero, by its mean over a reference batch, or by its
output on another sequence) and so that a replacement can reach one input of the next
layer only; with nothing replaced it equals
:func:`attnlib.models.language_model.forward` to rounding (tested in
``tests/test_induction.py``).

Source: Olsson et al. (2022), Argument 3 (knocking out induction heads in small
models); Elhage et al. (2021), the sections on two-layer attention-only models and
on Q-, K- and V-composition (the induction head's keys read what the previous-token
head writes).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.grouped_query import grouped_query_attention
from attnlib.core.heads import merge_heads, split_heads
from attnlib.layers.causal_block import norm, self_attention_mask
from attnlib.models.language_model import block_params
from book_support.experiments import induction
from book_support.experiments.induction import log_probs  # also im.log_probs

__all__ = [
    "held_out",
    "training_draws",
    "run",
    "target_losses",
    "loss_by_copy_position",
    "after_copy_loss",
    "copy_targets",
    "copy_loss",
    "log_probs",
    "entropy_at",
    "probability_of",
    "head_outputs",
    "head_means",
    "ablate_heads",
    "continue_probability",
    "calibrated_floor",
    "weight_on_copied_token",
    "loss_by_position_figure",
]


def held_out(seed: int, n: int = 1000, task=induction.TASK):
    """``n`` sequences of the training kind (one segment of 6 to 12 tokens occurs
    twice, at random places) from ``default_rng(seed)``, with their layout: returns
    ``(tokens (n, 2h), m, a, b)``, the segment's length and the starts of its two
    copies (int arrays of shape (n,))."""
    rng = np.random.default_rng(seed)
    return induction.make_training_sequences(rng, n, task, return_layout=True)


def training_draws(seed: int, steps: int, batch: int, shortcut: bool = False):
    """The sequences a stored model saw in training, drawn again: ``steps`` batches of
    ``batch`` from ``default_rng(seed)``, as :func:`induction.train_one` draws them
    (a training step draws nothing else from that generator: the models have no
    dropout). Returns an int array (steps * batch, 2h)."""
    rng = np.random.default_rng(seed)
    make = induction.make_sequences if shortcut else induction.make_training_sequences
    return np.concatenate([make(rng, batch) for _ in range(steps)])


def run(params, config, idx, replace=None, only=None):
    """The stored attention-only model's forward pass with some heads' outputs replaced.

    ``idx`` int (B, L); ``replace`` maps ``(layer, head)`` to an array broadcastable to
    (B, L, d_k) that takes the place of that head's output (0 for zero ablation, a
    mean from :func:`head_means` for mean ablation, the outputs on other sequences
    from :func:`head_outputs` for resample ablation). With ``only`` set to
    ``"queries"``, ``"keys"`` or ``"values"`` the replaced outputs reach only that
    input of the next layer: the other two inputs and the logits read the intact
    stream (a patch of one path, for two-layer models).

    Returns ``(logits (B, L, V), weights, outputs)``: lists over layers of the
    attention weights (B, H, L, L) and of the heads' outputs (B, H, L, d_k) as used.
    Raises ``ValueError`` for a model with a feed-forward network, a replacement of a
    head the model lacks, an unknown ``only``, or ``only`` with more than two layers.
    """
    c, replace = config, dict(replace or {})
    paths = ("queries", "keys", "values")
    if c.d_ff:
        raise ValueError(f"run needs an attention-only model (d_ff = 0); got {c.d_ff}")
    if only is not None and only not in paths:
        raise ValueError(f"only must be None or one of {paths}; got {only!r}")
    if only is not None and c.num_layers != 2:
        raise ValueError(f"only patches a two-layer model; got {c.num_layers} layers")
    for layer, head in replace:
        if not (0 <= layer < c.num_layers and 0 <= head < c.num_heads):
            raise ValueError(f"replace names a head the model lacks: {(layer, head)}")
    idx = np.asarray(idx)
    x = params["tok_emb"][idx] + params["pos_emb"][: idx.shape[1]]  # (B, L, d)
    x_patched = x  # the stream that the patched path of the next layer reads
    mask = self_attention_mask(idx.shape[1])  # (L, L)
    all_weights, all_outputs = [], []
    for r in range(c.num_layers):
        p = block_params(params, r)
        a, a_patched = norm(x, p, "ln1", c.norm), norm(x_patched, p, "ln1", c.norm)
        read = {path: a_patched if path == only else a for path in paths}
        q = split_heads(read["queries"] @ p["W_Q"], c.num_heads)  # (B, H, L, d_k)
        k = split_heads(read["keys"] @ p["W_K"], c.num_kv_heads)  # (B, H_kv, L, d_k)
        v = split_heads(read["values"] @ p["W_V"], c.num_kv_heads)  # (B, H_kv, L, d_k)
        heads, weights = grouped_query_attention(q, k, v, mask)  # (B,H,L,d_k), ..
        patched = heads.copy()
        for (layer, h), value in replace.items():
            if layer == r:
                patched[:, h] = np.broadcast_to(value, heads[:, h].shape)
        if only is not None:
            x_patched = x + merge_heads(patched) @ p["W_O"]  # (B, L, d)
            x = x + merge_heads(heads) @ p["W_O"]
        else:
            x = x_patched = x + merge_heads(patched) @ p["W_O"]
        all_weights.append(weights)
        all_outputs.append(heads if only is not None else patched)
    logits = norm(x, params, "lnf", c.norm) @ params["lm_head"].T  # (B, L, V)
    return logits, all_weights, all_outputs


def target_losses(logits, idx) -> np.ndarray:
    """``-log p`` of every next token: (B, L - 1) from logits (B, L - 1, V) of
    ``idx[:, :-1]`` and the targets ``idx[:, 1:]``."""
    log_p = log_probs(logits)  # (B, L - 1, V)
    return -np.take_along_axis(log_p, idx[:, 1:, None], axis=-1)[..., 0]


def loss_by_copy_position(losses, m, b, task=induction.TASK) -> np.ndarray:
    """The mean loss of the token ``j`` places into the second copy, ``j = 0 ..
    max_segment - 1``, over the sequences whose copy has such a token (``j < m``).
    ``losses`` (n, 2h - 1) from :func:`target_losses`; the token at position ``t`` is
    the target of ``losses[:, t - 1]``; ``m, b`` the layout of :func:`held_out`."""
    out = np.full(task.max_segment, np.nan)
    for j in range(task.max_segment):
        keep = j < m
        if keep.any():
            out[j] = losses[keep, b[keep] + j - 1].mean()
    return out


def after_copy_loss(losses, m, b, task=induction.TASK) -> float:
    """The mean loss of the first token after the second copy ends (a random token,
    where a copying model predicts the copy would go on), over the sequences that
    have one."""
    keep = b + m <= task.length - 1
    return float(losses[keep, b[keep] + m[keep] - 1].mean())


def copy_targets(m, b, first: int = 2):
    """The places of the copy loss: ``(rows, queries)``, int arrays of the sequence
    and the query position ``b + j - 1`` whose next token is token ``j`` of the second
    copy, for ``j = first .. m - 1`` of every sequence (in that order)."""
    rows, queries = [], []
    for i in range(len(m)):
        j = np.arange(first, m[i])
        rows.append(np.full(j.size, i))
        queries.append(b[i] + j - 1)
    return np.concatenate(rows), np.concatenate(queries)


def copy_loss(losses, m, b, first: int = 2) -> float:
    """The mean loss over the tokens ``first .. m - 1`` of every second copy, the ones
    the earlier copy determines (``first = 1`` includes the token after the first
    match, which a single matching token leaves ambiguous)."""
    rows, queries = copy_targets(m, b, first)
    return float(losses[rows, queries].mean())


def entropy_at(logits, rows, queries) -> float:
    """The mean entropy ``-sum_v p_v ln p_v`` (nats) of the predictions at the
    places ``(rows, queries)``: ``ln V`` for a uniform guess, 0 for a certain one."""
    log_p = log_probs(logits[rows, queries])  # (n, V)
    return float(-(np.exp(log_p) * log_p).sum(axis=-1).mean())


def probability_of(logits, tokens, rows, queries) -> float:
    """The mean probability the predictions at ``(rows, queries)`` give to the token
    that follows in ``tokens`` (int (n, 2h)), ``tokens[rows, queries + 1]``."""
    log_p = log_probs(logits[rows, queries])  # (n, V)
    picked = np.take_along_axis(log_p, tokens[rows, queries + 1][:, None], axis=-1)
    return float(np.exp(picked).mean())


def head_outputs(params, config, source) -> dict:
    """Every head's output on the sequences of ``source`` (int (n, 2h)), the
    replacement of resample ablation: ``{(layer, head): array (n, L - 1, d_k)}``.
    Sequence ``i`` of a batch ablated with these takes, in place of a head's output,
    what that head wrote on ``source[i]``, another sequence of the same kind."""
    _, _, outputs = run(params, config, source[:, :-1])
    return {
        (r, h): out[:, h]
        for r, out in enumerate(outputs)
        for h in range(config.num_heads)
    }


def head_means(params, config, reference) -> dict:
    """Every head's output averaged over the sequences of ``reference`` (int (n, 2h)),
    position by position: ``{(layer, head): array (L - 1, d_k)}``, the replacement of
    mean ablation."""
    outputs = head_outputs(params, config, reference)
    return {key: out.mean(axis=0) for key, out in outputs.items()}


def ablate_heads(
    params, config, tokens, m, b, means, resampled=None, first: int = 2
) -> list:
    """The copy loss (:func:`copy_loss`) with each head replaced in turn by zero, by
    its mean (``means`` from :func:`head_means`) and, if ``resampled`` (from
    :func:`head_outputs` on other sequences) is given, by its output on another
    sequence; one dict per head after a row for the intact model (``layer = head =
    None``)."""
    idx = tokens[:, :-1]

    def loss_with(replace):
        logits, _, _ = run(params, config, idx, replace)
        return copy_loss(target_losses(logits, tokens), m, b, first)

    intact = loss_with({})
    rows = [{"layer": None, "head": None, "zero": intact, "mean": intact}]
    if resampled is not None:
        rows[0]["resample"] = intact
    for layer in range(config.num_layers):
        for head in range(config.num_heads):
            key = (layer, head)
            row = {
                "layer": layer,
                "head": head,
                "zero": loss_with({key: 0.0}),
                "mean": loss_with({key: means[key]}),
            }
            if resampled is not None:
                row["resample"] = loss_with({key: resampled[key]})
            rows.append(row)
    return rows


def continue_probability(a: int, b: int, j: int, task=induction.TASK) -> float:
    """The probability that a copy goes on to token ``j``, for a copier that has seen
    tokens ``0 .. j - 1`` of a second copy starting at ``b`` match the first copy
    starting at ``a``, and knows how the training sequences were drawn: the segment's
    length ``m`` uniform in ``min_segment .. max_segment``, ``a`` uniform in ``0 ..
    2h - 2m``, ``b`` uniform in ``a + m .. 2h - m``. By Bayes' rule,
    ``P(m > j | m >= j, a, b)``. Raises ``ValueError`` if no length fits."""
    L = task.length
    lengths = np.arange(max(task.min_segment, j), task.max_segment + 1)  # m >= j
    fits = (a <= L - 2 * lengths) & (a + lengths <= b) & (b <= L - lengths)
    p_a = 1.0 / (L - 2 * lengths + 1)  # P(a | m)
    p_b = 1.0 / np.maximum(L - 2 * lengths - a + 1, 1)  # P(b | a, m)
    posterior = np.where(fits, p_a * p_b, 0.0)  # times the uniform P(m)
    if posterior.sum() == 0:
        raise ValueError(f"no segment length fits a={a}, b={b}, j={j}")
    return float(posterior[lengths > j].sum() / posterior.sum())


def calibrated_floor(m, a, b, first: int = 2, task=induction.TASK) -> np.ndarray:
    """The loss of each token ``j`` of the second copy (as
    :func:`loss_by_copy_position`, ``j >= first``) for the copier of
    :func:`continue_probability`: it gives the copied token the probability ``p``
    that the copy goes on, and spreads ``1 - p`` evenly over the vocabulary, so a
    token of the copy costs ``-ln(p + (1 - p) / V)``. Returns an array
    (max_segment,), NaN before ``first``."""
    V = task.vocab_size
    losses = np.full((len(m), task.max_segment), np.nan)
    for i in range(len(m)):
        for j in range(first, m[i]):
            p = continue_probability(a[i], b[i], j, task)
            losses[i, j] = -np.log(p + (1 - p) / V)
    out = np.full(task.max_segment, np.nan)
    for j in range(first, task.max_segment):
        seen = ~np.isnan(losses[:, j])
        if seen.any():
            out[j] = losses[seen, j].mean()
    return out


def weight_on_copied_token(weights, m, a, b, first: int = 2) -> np.ndarray:
    """Every layer-1 head's mean weight, from the queries of the second copy, on the
    token to copy: the query at ``b + j - 1`` (holding the copy of ``a + j - 1``) on
    the key ``a + j``, for ``j = first .. m - 1``. ``weights`` (n, H, L, L) of one
    layer; returns an array (H,)."""
    rows, queries, keys = [], [], []
    for i in range(len(m)):
        j = np.arange(first, m[i])
        rows.append(np.full(j.size, i))
        queries.append(b[i] + j - 1)
        keys.append(a[i] + j)
    rows, queries, keys = map(np.concatenate, (rows, queries, keys))
    return weights[rows, :, queries, keys].mean(axis=0)  # (H,)


def loss_by_position_figure(training_kind: dict, evaluation: dict, chance: float):
    """Two panels, one line per seed: the loss of each token of the second copy in
    held-out sequences of the training kind (``training_kind`` maps a seed to the
    array of :func:`loss_by_copy_position`), and of each token of the repeated half
    of the evaluation layout (``evaluation`` maps a seed to the losses of positions
    ``h .. 2h - 1``). Returns a matplotlib figure of fixed size."""
    import matplotlib.pyplot as plt

    from book_support.figures.style import OKABE_ITO

    fig, axes = plt.subplots(2, 1, figsize=(6.4, 5.6), layout="constrained")
    markers = "osD^"
    panels = (
        (
            axes[0],
            training_kind,
            0,
            "token j of the second copy",
            "held out, training kind: a segment of 6 to 12 tokens occurs twice",
        ),
        (
            axes[1],
            evaluation,
            induction.TASK.half,
            "position in the sequence",
            "evaluation layout: positions 16 to 31 repeat 0 to 15",
        ),
    )
    for ax, curves, start, xlabel, title in panels:
        for i, (seed, losses) in enumerate(curves.items()):
            x = start + np.arange(len(losses))
            ax.plot(
                x,
                losses,
                color=OKABE_ITO[i],
                marker=markers[i],
                markersize=4,
                label=f"seed {seed}",
            )
        ax.axhline(chance, color="black", linewidth=0.6)
        ax.annotate(
            "chance, ln 32",
            (x[-1], chance),
            xytext=(0, 3),
            textcoords="offset points",
            ha="right",
            va="bottom",
            fontsize=9,
        )
        ax.set(xlabel=xlabel, ylabel="loss (nats)", title=title, ylim=(0, chance + 0.6))
        ax.set_xticks(x[::2] if len(x) > 12 else x)
        ax.legend(frameon=False, fontsize=9, loc="upper center", ncol=3)
    return fig
