"""Measurements of the induction chapter that go beyond the maps: held-out sequences of
the training kind, the loss by position in the second copy, mean ablation beside zero
ablation, and a composition test (patching what the previous-token head writes into
the layer-1 keys).

The stored models are two attention-only layers (``d_ff = 0``, pre-LN, learned
positions). :func:`run` recomputes their forward pass from attnlib's pieces so that a
head's output can be *replaced* (by zero or by its mean over a reference batch) and so
that a replacement can reach the next layer's keys only; with nothing replaced it
equals :func:`attnlib.models.language_model.forward` to rounding (tested in
``tests/test_induction.py``).

Source: Olsson et al. (2022), section 2 and appendix (ablations of induction heads;
mean ablation); Elhage et al. (2021), section on K-composition (the induction head's
keys read what the previous-token head writes).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.grouped_query import grouped_query_attention
from attnlib.core.heads import merge_heads, split_heads
from attnlib.layers.causal_block import norm, self_attention_mask
from attnlib.models.language_model import block_params
from book_support.experiments import induction

__all__ = [
    "held_out",
    "run",
    "target_losses",
    "loss_by_copy_position",
    "after_copy_loss",
    "copy_loss",
    "head_means",
    "ablate_heads",
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


def run(params, config, idx, replace=None, keys_only=False):
    """The stored attention-only model's forward pass with some heads' outputs replaced.

    ``idx`` int (B, L); ``replace`` maps ``(layer, head)`` to an array broadcastable to
    (B, L, d_k) that takes the place of that head's output (0 for zero ablation, a
    mean from :func:`head_means` for mean ablation). With ``keys_only`` the replaced
    outputs reach only the *keys* of the next layer, its queries and values and the
    logits read the intact stream (a patch of one path, for two-layer models).

    Returns ``(logits (B, L, V), weights, outputs)``: lists over layers of the
    attention weights (B, H, L, L) and of the heads' outputs (B, H, L, d_k) as used.
    Raises ``ValueError`` for a model with a feed-forward network, a replacement of a
    head the model lacks, or ``keys_only`` with more than two layers.
    """
    c, replace = config, dict(replace or {})
    if c.d_ff:
        raise ValueError(f"run needs an attention-only model (d_ff = 0); got {c.d_ff}")
    if keys_only and c.num_layers != 2:
        raise ValueError(f"keys_only patches a two-layer model; got {c.num_layers}")
    for layer, head in replace:
        if not (0 <= layer < c.num_layers and 0 <= head < c.num_heads):
            raise ValueError(f"replace names a head the model lacks: {(layer, head)}")
    idx = np.asarray(idx)
    x = params["tok_emb"][idx] + params["pos_emb"][: idx.shape[1]]  # (B, L, d)
    x_keys = x  # the stream the next layer's keys read
    mask = self_attention_mask(idx.shape[1])  # (L, L)
    all_weights, all_outputs = [], []
    for r in range(c.num_layers):
        p = block_params(params, r)
        a, a_k = norm(x, p, "ln1", c.norm), norm(x_keys, p, "ln1", c.norm)
        q = split_heads(a @ p["W_Q"], c.num_heads)  # (B, H, L, d_k)
        k = split_heads(a_k @ p["W_K"], c.num_kv_heads)  # (B, H_kv, L, d_k)
        v = split_heads(a @ p["W_V"], c.num_kv_heads)  # (B, H_kv, L, d_k)
        heads, weights = grouped_query_attention(q, k, v, mask)  # (B,H,L,d_k), ..
        patched = heads.copy()
        for (layer, h), value in replace.items():
            if layer == r:
                patched[:, h] = np.broadcast_to(value, heads[:, h].shape)
        if keys_only:
            x_keys = x + merge_heads(patched) @ p["W_O"]  # (B, L, d)
            x = x + merge_heads(heads) @ p["W_O"]
        else:
            x = x_keys = x + merge_heads(patched) @ p["W_O"]
        all_weights.append(weights)
        all_outputs.append(heads if keys_only else patched)
    logits = norm(x, params, "lnf", c.norm) @ params["lm_head"].T  # (B, L, V)
    return logits, all_weights, all_outputs


def target_losses(logits, idx) -> np.ndarray:
    """``-log p`` of every next token: (B, L - 1) from logits (B, L - 1, V) of
    ``idx[:, :-1]`` and the targets ``idx[:, 1:]``."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_p = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
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


def copy_loss(losses, m, b, first: int = 2) -> float:
    """The mean loss over the tokens ``first .. m - 1`` of every second copy, the ones
    the earlier copy determines (``first = 1`` includes the token after the first
    match, which a single matching token leaves ambiguous)."""
    picked = [losses[i, b[i] + first - 1 : b[i] + m[i] - 1] for i in range(len(m))]
    return float(np.concatenate(picked).mean())


def head_means(params, config, reference) -> dict:
    """Every head's output averaged over the sequences of ``reference`` (int (n, 2h)),
    position by position: ``{(layer, head): array (L - 1, d_k)}``, the replacement of
    mean ablation."""
    _, _, outputs = run(params, config, reference[:, :-1])
    return {
        (r, h): out[:, h].mean(axis=0)
        for r, out in enumerate(outputs)
        for h in range(config.num_heads)
    }


def ablate_heads(params, config, tokens, m, b, means, first: int = 2) -> list:
    """The copy loss (:func:`copy_loss`) with each head replaced in turn by zero and
    by its mean (``means`` from :func:`head_means`); one dict per head after a row for
    the intact model (``layer = head = None``)."""
    idx = tokens[:, :-1]

    def loss_with(replace):
        logits, _, _ = run(params, config, idx, replace)
        return copy_loss(target_losses(logits, tokens), m, b, first)

    rows = [{"layer": None, "head": None, "zero": loss_with({}), "mean": None}]
    for layer in range(config.num_layers):
        for head in range(config.num_heads):
            key = (layer, head)
            rows.append(
                {
                    "layer": layer,
                    "head": head,
                    "zero": loss_with({key: 0.0}),
                    "mean": loss_with({key: means[key]}),
                }
            )
    rows[0]["mean"] = rows[0]["zero"]
    return rows


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
