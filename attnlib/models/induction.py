"""Induction heads: a two-layer attention-only model that learns to repeat.

The task: sequences of ``2 h`` tokens that repeat with a period ``s``: the first ``s``
tokens are drawn at random from ``V``, every later token repeats the one ``s`` places
before it (for ``s = h`` the second half repeats the first). The period is drawn anew
for every training sequence, between ``h / 2`` and ``h``; with one fixed period a model
could simply attend ``s - 1`` positions back, by position alone, and would not need to
read the tokens at all. The first ``s`` tokens cannot be predicted (the best loss
there is ``ln V``, "chance"); every later token can be predicted exactly, by a model
that finds the earlier occurrence of the current token and copies the token that
followed it. Elhage et al. (2021) describe the two-head circuit that
does this: a **previous-token head** in one layer writes into each position which
token preceded it; an **induction head** in a later layer then attends from the
current token to the position whose *previous* token matches it, and copies that
position's token. Olsson et al. (2022) found that such heads form abruptly during
training, in a "phase change" visible as a sudden drop of the loss on repeated text.

This module holds the task, the model's sizes, the measurements read from attention
patterns (previous-token and induction scores of every head) and the ablation that
tests them (the repeated half's loss with one head removed). The model is the
language model of :mod:`attnlib.models.language_model` with ``d_ff = 0``: two layers
of attention, nothing else between the embeddings and the tied head.

Run ``python -m attnlib.models.induction`` (part of ``make train-lm``) to train the
stored models.

Source: Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits",
section on induction heads (two-layer attention-only models); Olsson et al. (2022),
"In-context Learning and Induction Heads", sections 1-3 (repeated random tokens, the
phase change, ablations).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlib.models.language_model import LMConfig, forward, init_language_model
from attnlib.models.lm_training import TrainConfig, train

__all__ = [
    "InductionTask",
    "TASK",
    "make_sequences",
    "model_config",
    "half_losses",
    "previous_token_scores",
    "induction_scores",
    "ablate_each_head",
    "WEIGHTS",
    "load",
]

#: Where the trained models live.
WEIGHTS = (
    Path(__file__).resolve().parents[2] / "chapters" / "data" / "induction_models.npz"
)


@dataclass(frozen=True)
class InductionTask:
    """Sequences of ``2 * half`` tokens from ``vocab_size`` that repeat with a period
    between ``min_period`` and ``half``."""

    vocab_size: int = 48
    half: int = 16
    min_period: int = 8

    @property
    def length(self) -> int:
        return 2 * self.half

    @property
    def chance(self) -> float:
        """``ln V``: the loss of a uniform guess, the best possible on unseen tokens."""
        return float(np.log(self.vocab_size))


TASK = InductionTask()


def make_sequences(rng, n: int, task: InductionTask = TASK, period=None) -> np.ndarray:
    """``n`` sequences, int64 array of shape (n, 2 h): ``s`` random tokens, repeated.

    ``period`` fixes ``s`` for all (``task.half``: the second half repeats the first);
    by default each sequence draws its own from ``min_period .. half``.
    """
    s = period or rng.integers(task.min_period, task.half + 1, size=(n, 1))  # (n, 1)
    first = rng.integers(0, task.vocab_size, size=(n, task.length))  # (n, 2h)
    t = np.arange(task.length)[None, :] % s  # (n, 2h): position t repeats t mod s
    return np.take_along_axis(first, np.broadcast_to(t, first.shape), axis=1)


def model_config(task: InductionTask = TASK, d_model: int = 32, num_heads: int = 4):
    """Two attention-only layers (``d_ff = 0``) of ``num_heads`` heads over a context of
    ``2 h`` positions, no dropout."""
    return LMConfig(
        vocab_size=task.vocab_size,
        context=task.length - 1,
        d_model=d_model,
        num_layers=2,
        num_heads=num_heads,
        d_ff=0,
    )


def _per_position_loss(params, config, tokens, head_mask=None) -> np.ndarray:
    """-log p(next token) at every position, shape (n, 2h - 1)."""
    logits, _ = forward(params, config, tokens[:, :-1], head_mask=head_mask)
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    return -np.take_along_axis(log_probs, tokens[:, 1:, None], axis=-1)[..., 0]


def half_losses(params, config, tokens, task: InductionTask = TASK, head_mask=None):
    """``(first, repeated)`` for sequences whose second half repeats the first: the mean
    loss on the targets of the first half (tokens 1 .. h - 1) and on the repeated half
    (tokens h + 1 .. 2h - 1). Token ``h`` is left out of both: it starts the repeat,
    and nothing before it says so."""
    loss = _per_position_loss(params, config, tokens, head_mask)  # (n, 2h - 1)
    h = task.half
    return float(loss[:, : h - 1].mean()), float(loss[:, h:].mean())


def previous_token_scores(weights) -> np.ndarray:
    """The mean weight each head puts on the position just before the query.

    ``weights`` is a list over layers of arrays (n, H, L, L) from ``forward``; returns
    an array (N, H), 1 for a head that always attends to the previous token.
    """
    return np.stack(
        [
            np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=(0, -1))
            for w in weights
        ]
    )


def induction_scores(weights, task: InductionTask = TASK) -> np.ndarray:
    """The mean weight each head puts, from a query in the repeated half, on the
    position *after* the earlier occurrence of the query's token (``t - h + 1``), for
    sequences whose second half repeats the first.

    Returns an array (N, H), 1 for a head that always attends there.
    """
    h = task.half
    return np.stack(
        [
            np.diagonal(w, offset=-(h - 1), axis1=-2, axis2=-1)[..., 1:].mean(
                axis=(0, -1)
            )
            for w in weights
        ]
    )


def ablate_each_head(params, config, tokens, task: InductionTask = TASK):
    """The repeated half's loss with each head removed in turn (its output set to 0).

    Returns a list of dicts ``{"layer", "head", "first", "repeated"}``, one per head,
    after one row for the intact model (``layer = head = None``).
    """
    rows = []
    first, repeated = half_losses(params, config, tokens, task)
    rows.append({"layer": None, "head": None, "first": first, "repeated": repeated})
    for layer in range(config.num_layers):
        for head in range(config.num_heads):
            mask = np.ones((config.num_layers, config.num_heads))
            mask[layer, head] = 0.0
            first, repeated = half_losses(params, config, tokens, task, head_mask=mask)
            rows.append(
                {"layer": layer, "head": head, "first": first, "repeated": repeated}
            )
    return rows


#: How the stored models are trained: a fixed budget, well past the drop.
TRAIN = TrainConfig(
    max_steps=1500, batch=32, lr=3e-3, warmup=50, eval_every=10, patience=10**6
)
SEEDS = (0, 1, 2)


def train_one(seed: int, task: InductionTask = TASK, cfg: TrainConfig = TRAIN):
    """Train one model from ``seed``; returns ``(params, history)``. The history's
    ``extra`` holds the first-half and repeated-half losses at every evaluation."""
    config = model_config(task)
    data_rng = np.random.default_rng(1000 + seed)
    held_out = make_sequences(data_rng, 256, task, period=task.half)

    def draw(rng, batch):
        seqs = make_sequences(rng, batch, task)
        return seqs[:, :-1], seqs[:, 1:]

    def monitor(params):
        first, repeated = half_losses(params, config, held_out, task)
        return {"first_half": first, "repeated_half": repeated}

    windows = (held_out[:, :-1], held_out[:, 1:])
    params = init_language_model(config, seed)
    return train(
        config,
        None,
        TrainConfig(**{**cfg.as_dict(), "seed": seed}),
        params=params,
        batches=(draw, (windows, windows)),
        monitor=monitor,
        progress=f"induction model, seed {seed}",
    )


def load(path=WEIGHTS):
    """The stored models: ``(config, {seed: params}, meta)``."""
    meta = json.loads(Path(path).with_suffix(".json").read_text())
    arrays = np.load(path)
    models = {}
    for seed in meta["seeds"]:
        prefix = f"seed{seed}/"
        models[seed] = {
            k[len(prefix) :]: arrays[k] for k in arrays.files if k.startswith(prefix)
        }
    return LMConfig(**meta["config"]), models, meta


def main(path=WEIGHTS) -> None:
    """Train one model per seed of :data:`SEEDS` and store them with their histories."""
    start = time.perf_counter()
    arrays, histories = {}, {}
    for seed in SEEDS:
        params, history = train_one(seed)
        arrays |= {f"seed{seed}/{k}": v for k, v in params.items()}
        histories[str(seed)] = history.as_dict()
    np.savez_compressed(path, **arrays)
    meta = {
        "task": {"vocab_size": TASK.vocab_size, "half": TASK.half, "min_period": 8},
        "config": model_config().as_dict(),
        "train": TRAIN.as_dict(),
        "seeds": list(SEEDS),
        "histories": histories,
        "seconds": round(time.perf_counter() - start, 1),
    }
    Path(path).with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(
        f"wrote {path} ({Path(path).stat().st_size / 1e3:.0f} kB) "
        f"in {meta['seconds']} s"
    )


if __name__ == "__main__":
    main()
