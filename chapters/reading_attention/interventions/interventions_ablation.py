"""Removing one head of all-MiniLM-L6-v2 at a time: zero and mean ablation, patching.

A head's output at position ``i``, before the output projection, is
``z^h_i = sum_j alpha^h_ij v^h_j`` (32 numbers); the attention sub-layer adds
``z^h_i W_O^h`` for every head, plus ``b_O``. An ablation replaces ``z^h_i`` by
something else and runs the rest of the model unchanged:

- zero ablation: ``z^h_i = 0`` (what ``minilm.forward(..., head_mask=...)`` does);
- mean ablation: ``z^h_i = m^h``, one vector per head, the mean of ``z^h`` over every
  position ([CLS] and [SEP] included) of every sentence of a reference set
  (:func:`mean_head_outputs`); it keeps the head's average contribution and removes
  only what depends on the input;
- patching: ``z^h_i`` taken from another run, position by position.

The layers below the removed head are not affected, so each ablation reuses the clean
run's input of the head's layer, and the 12 heads of a layer run as one batch. The layer
is computed with attnlib's own pieces (``self_attention_block``, ``layer_norm``,
``feed_forward``, and ``minilm.encoder_layer`` above it).

Source: Wang et al. (2023), section 3 (mean ablation over a reference distribution);
Michel et al. (2019) (removing heads by zeroing).
"""

from __future__ import annotations

import numpy as np

from attnlib.layers.encoder_layer import self_attention_block
from attnlib.layers.feed_forward import feed_forward
from attnlib.layers.layer_norm import layer_norm
from attnlib.models import minilm

L_, H_, D_HEAD = minilm.NUM_LAYERS, minilm.NUM_HEADS, minilm.D_HEAD


def head_outputs_before_projection(run: minilm.MiniLMOutput) -> np.ndarray:
    """Every head's output before ``W_O``, ``z^h_i = sum_j alpha^h_ij v^h_j``.

    ``run`` is a clean pass of :func:`attnlib.models.minilm.forward` (one sentence of
    ``L`` tokens, no stack of head masks). Returns float64 of shape (6, 12, L, 32).
    Raises ``ValueError`` for a run made with a stack of head masks.
    """
    if run.hidden_states.ndim != 3:
        raise ValueError(
            "run must be one pass of minilm.forward without a stack of head masks; got "
            f"hidden states of shape {run.hidden_states.shape}"
        )
    w = minilm.load_weights()
    return np.stack(
        [
            self_attention_block(run.hidden_states[n], layer.attn)["heads"]
            for n, layer in enumerate(w.layers)
        ]
    )


def mean_head_outputs(reference) -> np.ndarray:
    """``m^h``: the mean of each head's output before ``W_O`` over every position of
    every sentence in ``reference`` (texts or id arrays), each position counted once.

    Returns float64 of shape (6, 12, 32). Raises ``ValueError`` for an empty reference.
    """
    reference = list(reference)
    if not reference:
        raise ValueError("reference must hold at least one sentence; got none")
    z = [head_outputs_before_projection(minilm.forward(s)) for s in reference]
    return np.concatenate(z, axis=2).mean(axis=2)  # (6, 12, 32)


def _layer_with_heads_replaced(x, layer, replacement) -> np.ndarray:
    """Layer ``layer`` on ``x`` (L, 384), 12 times: run ``k`` replaces head ``k``'s
    output by ``replacement[k]`` ((12, 32) or (12, L, 32)). Returns (12, L, 384)."""
    attn = layer.attn
    keep = ~np.eye(H_, dtype=bool)  # run k removes head k
    steps = self_attention_block(x, attn, keep_heads=keep)  # attended: (12, L, 384)
    W_O_heads = attn.W_O.reshape(H_, D_HEAD, -1)  # (12, 32, 384)
    rep = replacement if replacement.ndim == 3 else replacement[:, None, :]
    attended = steps["attended"] + np.einsum("kid,kdm->kim", rep, W_O_heads)
    h = layer_norm(x + attended, layer.ln1_gain, layer.ln1_bias, layer.eps)
    ff = feed_forward(h, layer.W_1, layer.b_1, layer.W_2, layer.b_2, layer.activation)
    return layer_norm(h + ff, layer.ln2_gain, layer.ln2_bias, layer.eps)


def final_states_with_each_head_replaced(text_or_ids, replacement=None) -> np.ndarray:
    """Final hidden states with one head replaced at a time, for all 72 heads.

    Parameters
    ----------
    text_or_ids : str or 1-D int token ids, one sentence of ``L`` tokens
    replacement : None, or float array of shape (6, 12, 32) or (6, 12, L, 32)
        None: zero ablation. (6, 12, 32): head ``(l, h)``'s output is ``replacement[l,
        h]`` at every position (mean ablation with :func:`mean_head_outputs`).
        (6, 12, L, 32): position by position (patching).

    Returns
    -------
    numpy.ndarray, float64, shape (6, 12, L, 384): ``[l, h]`` the last layer's output
    with head ``h`` of layer ``l`` replaced.

    Raises
    ------
    ValueError
        If ``replacement`` has another shape (named) or holds NaN or inf.
    """
    clean = minilm.forward(text_or_ids)
    n_tokens = len(clean.tokens)
    if replacement is None:
        replacement = np.zeros((L_, H_, D_HEAD))
    replacement = np.asarray(replacement, dtype=np.float64)
    if replacement.shape not in ((L_, H_, D_HEAD), (L_, H_, n_tokens, D_HEAD)):
        raise ValueError(
            f"replacement must have shape ({L_}, {H_}, {D_HEAD}) or ({L_}, {H_}, "
            f"{n_tokens}, {D_HEAD}) for this sentence of {n_tokens} tokens; got "
            f"{replacement.shape}"
        )
    if not np.isfinite(replacement).all():
        raise ValueError("replacement holds NaN or inf")
    w = minilm.load_weights()
    out = np.empty((L_, H_, n_tokens, minilm.D_MODEL))
    for n in range(L_):
        x = _layer_with_heads_replaced(
            clean.hidden_states[n], w.layers[n], replacement[n]
        )
        for layer in w.layers[n + 1 :]:
            x, _, _ = minilm.encoder_layer(x, layer)
        out[n] = x
    return out


def change_of_token(text_or_ids, position: int, replacement=None) -> np.ndarray:
    """``1 - cos`` between the clean final vector at ``position`` and the one with each
    head replaced (see :func:`final_states_with_each_head_replaced`): shape (6, 12).
    """
    clean = minilm.forward(text_or_ids).hidden_states[-1, position]  # (384,)
    after = final_states_with_each_head_replaced(text_or_ids, replacement)[
        :, :, position
    ]  # (6, 12, 384)
    cos = after @ clean / (np.linalg.norm(after, axis=-1) * np.linalg.norm(clean))
    return 1.0 - cos
