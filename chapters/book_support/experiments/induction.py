"""Induction heads: a two-layer attention-only model that learns to repeat.

Evaluation sequences are ``2 h`` random tokens whose second half repeats the first
(:func:`make_sequences`). The first half cannot be predicted (every token is drawn
uniformly from ``V``, so the best loss there is ``ln V``, "chance"); in the second half
every token but the first can be predicted exactly, by a model that finds the earlier
occurrence of the current token and copies the token that followed it. Elhage et al.
(2021) describe the two-head circuit that does this: a **previous-token head** in one
layer writes into each position which token preceded it; an **induction head** in a
later layer then attends from the current token to the position whose *previous* token
matches it, and copies that position's token. Olsson et al. (2022) found that such heads
form abruptly during training, a "phase change" visible as a sudden drop of the loss on
repeated text.

Two kinds of training data:

* :func:`make_sequences` itself (``shortcut`` model): the repeat always starts at
  position ``h``, so a head can find the right token by its *position* alone (``h - 1``
  places back) without reading any token;
* :func:`make_training_sequences` (the induction models): random tokens in which one
  segment of 6 to 12 tokens occurs twice, at random places, so only the tokens can say
  where to look.

This module holds the task, the models' sizes, the measurements read from attention
patterns (previous-token and induction scores of every head) and the ablations that
test them (the repeated part's loss with heads removed). The model is the language
model of :mod:`attnlib.models.language_model` with ``d_ff = 0`` (two layers of
attention, nothing else between the embeddings and the head) and an untied head.

Run ``python -m book_support.experiments.induction`` (part of ``make train-lm``) to
train the stored models.

Source: Elhage et al. (2021), "A Mathematical Framework for Transformer Circuits",
section on induction heads (two-layer attention-only models); Olsson et al. (2022),
"In-context Learning and Induction Heads", sections 1-3 (repeated random tokens, the
phase change, ablations).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlib.core._validation import (
    as_generator,
    as_length,
    as_real_number,
    as_width,
)
from attnlib.models.language_model import LMConfig, forward, init_language_model
from attnlib.models.lm_training import TrainConfig, train
from book_support import CHAPTERS

__all__ = [
    "InductionTask",
    "log_probs",
    "TASK",
    "make_sequences",
    "make_training_sequences",
    "without_heads",
    "circuit_heads",
    "drop_step",
    "model_config",
    "half_losses",
    "previous_token_scores",
    "previous_token_by_position",
    "previous_token_scores_by_period",
    "induction_scores",
    "ablate_each_head",
    "WEIGHTS",
    "load",
]

#: The seed of the chapter's evaluation sequences: no training or monitoring run draws
#: from it (training uses the run's seed, monitoring 1000 + seed).
EVAL_SEED = 6000

#: Where the trained models live.
WEIGHTS = CHAPTERS / "attention_that_writes/induction_heads/data/induction_models.npz"


@dataclass(frozen=True)
class InductionTask:
    """Sequences of ``2 * half`` tokens from ``vocab_size``; for training, one segment
    of ``min_segment .. max_segment`` tokens occurs twice."""

    vocab_size: int = 32
    half: int = 16
    min_segment: int = 6
    max_segment: int = 12

    def __post_init__(self):
        for name in ("vocab_size", "half", "min_segment", "max_segment"):
            object.__setattr__(self, name, as_width(getattr(self, name), name))
        if self.min_segment > self.max_segment:
            raise ValueError(
                f"need min_segment <= max_segment; got min_segment="
                f"{self.min_segment}, max_segment={self.max_segment}"
            )

    @property
    def length(self) -> int:
        return 2 * self.half

    @property
    def chance(self) -> float:
        """``ln V``: the loss of a uniform guess, the best possible on unseen tokens."""
        return float(np.log(self.vocab_size))


TASK = InductionTask()


def make_sequences(rng, n: int, task: InductionTask = TASK, period=None) -> np.ndarray:
    """``n`` sequences, int64 array (n, 2 h): ``s`` random tokens, then repeats of them.

    Position ``t`` holds the token of position ``t mod s``; the default ``s = h`` makes
    the second half repeat the first. A shorter ``period`` moves the repeat to another
    distance (the test of the shortcut model).
    """
    rng, n = as_generator(rng), as_length(n, "n")
    s = task.half if period is None else as_width(period, "period")
    if not 1 <= s <= task.length:
        raise ValueError(f"period must lie in 1 .. {task.length}; got {period}")
    first = rng.integers(0, task.vocab_size, size=(n, task.length))  # (n, 2h)
    return first[:, np.arange(task.length) % s]  # (n, 2h)


def make_training_sequences(
    rng, n: int, task: InductionTask = TASK, return_layout: bool = False
):
    """``n`` sequences of ``2 h`` random tokens in which one segment occurs twice.

    Each sequence draws a length ``m`` in ``min_segment .. max_segment``, a start ``a``
    for the first copy and a start ``b >= a + m`` for the second; everything else is
    random. Returns an int64 array (n, 2 h); with ``return_layout`` also the int
    arrays ``m, a, b`` of shape (n,) (the same draws either way).
    """
    rng, n, L = as_generator(rng), as_length(n, "n"), task.length
    if task.max_segment > task.half:
        raise ValueError(
            f"a segment of max_segment={task.max_segment} tokens cannot occur twice "
            f"in 2 * half = {L} tokens"
        )
    seqs = rng.integers(0, task.vocab_size, size=(n, L))  # (n, 2h)
    layout = np.zeros((3, n), dtype=np.int64)  # m, a, b of every sequence
    for i, row in enumerate(seqs):
        m = rng.integers(task.min_segment, task.max_segment + 1)
        a = rng.integers(0, L - 2 * m + 1)
        b = rng.integers(a + m, L - m + 1)
        row[b : b + m] = row[a : a + m]
        layout[:, i] = m, a, b
    return (seqs, *layout) if return_layout else seqs


def model_config(
    task: InductionTask = TASK, d_model: int = 64, num_heads: int = 4, tied=False
):
    """Two attention-only layers (``d_ff = 0``) of ``num_heads`` heads over a context of
    ``2 h`` positions, no dropout, a head of its own (not tied to the embeddings)."""
    return LMConfig(
        vocab_size=task.vocab_size,
        context=task.length - 1,
        d_model=d_model,
        num_layers=2,
        num_heads=num_heads,
        d_ff=0,
        tied=tied,
    )


def log_probs(logits) -> np.ndarray:
    """``log softmax`` over the last axis: ``z - max z - ln sum exp(z - max z)``."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _per_position_loss(params, config, tokens, head_mask=None) -> np.ndarray:
    """-log p(next token) at every position, shape (n, 2h - 1)."""
    logits, _ = forward(params, config, tokens[:, :-1], head_mask=head_mask)
    log_p = log_probs(logits)  # (n, 2h - 1, V)
    return -np.take_along_axis(log_p, tokens[:, 1:, None], axis=-1)[..., 0]


def half_losses(
    params, config, tokens, task: InductionTask = TASK, head_mask=None, period=None
):
    """``(first, repeated)``: the mean loss on the targets before the repeat (tokens 1
    .. s - 1) and on the repeated part (tokens s + 1 .. 2h - 1), for sequences of
    :func:`make_sequences` with period ``s`` (default ``h``: the second half). Token
    ``s`` is left out of both: it starts the repeat, and nothing before it says so."""
    loss = _per_position_loss(params, config, tokens, head_mask)  # (n, 2h - 1)
    s = task.half if period is None else int(period)
    return float(loss[:, : s - 1].mean()), float(loss[:, s:].mean())


def previous_token_scores(weights) -> np.ndarray:
    """The mean weight each head puts on the position just before the query.

    ``weights`` is a list over layers of arrays (n, H, L, L) from ``forward``; returns
    an array (N, H), 1 for a head that always attends to the previous token: the mean
    over query positions of :func:`previous_token_by_position`. Raises numpy's errors
    for arrays of fewer than two axes.

    Source: Elhage et al. (2021), section on induction heads (previous-token heads).
    """
    return previous_token_by_position(weights).mean(axis=-1)


def previous_token_by_position(weights) -> np.ndarray:
    """The mean weight (over sequences) each head puts on the position just before the
    query, for each query position ``1 .. L - 1``.

    ``weights`` as for :func:`previous_token_scores`; returns an array (N, H, L - 1)
    whose entry ``[layer, head, t - 1]`` belongs to the query at position ``t``.
    """
    return np.stack(
        [np.diagonal(w, offset=-1, axis1=-2, axis2=-1).mean(axis=0) for w in weights]
    )


def previous_token_scores_by_period(
    params, config, periods, n: int = 500, seed: int = 0, task: InductionTask = TASK
) -> np.ndarray:
    """Every head's previous-token score on sequences whose repeat starts at each of
    ``periods`` (:func:`make_sequences` with that period; ``2 h``: no repeat at all).

    The sequences of period ``s`` are drawn from ``default_rng([seed, s])``. Returns an
    array (len(periods), N, H) of :func:`previous_token_scores`. Raises ``ValueError``
    for an empty ``periods`` or a period outside ``1 .. 2 h`` (named).
    """
    bad = [s for s in periods if not 1 <= int(s) <= task.length]
    if len(periods) == 0 or bad:
        raise ValueError(
            f"periods must name at least one period in 1 .. {task.length}; got "
            f"{list(periods)}"
        )
    scores = []
    for period in periods:
        rng = np.random.default_rng([seed, int(period)])
        tokens = make_sequences(rng, n, task, period=period)  # (n, 2h)
        _, weights = forward(params, config, tokens[:, :-1])
        scores.append(previous_token_scores(weights))  # (N, H)
    return np.stack(scores)


def induction_scores(weights, task: InductionTask = TASK) -> np.ndarray:
    """The mean weight each head puts, from a query in the repeated half, on the
    position *after* the earlier occurrence of the query's token (``t - h + 1``), for
    sequences whose second half repeats the first.

    Returns an array (N, H), 1 for a head that always attends there; ``weights`` as
    for :func:`previous_token_scores`, from sequences of :func:`make_sequences` with
    period ``h``. Raises numpy's errors for arrays of fewer than two axes.

    Source: Olsson et al. (2022), section 2 (the "prefix matching" score of induction
    heads on repeated random tokens).
    """
    h = task.half
    short = [np.shape(w) for w in weights if np.shape(w)[-1] < 2 * h - 1]
    if short:
        raise ValueError(
            f"weights of shape {short[0]} are too short for a half of {h} tokens "
            f"(need {2 * h - 1} positions)"
        )
    return np.stack(
        [
            np.diagonal(w, offset=-(h - 1), axis1=-2, axis2=-1)[..., 1:].mean(
                axis=(0, -1)
            )
            for w in weights
        ]
    )


def without_heads(config, heads) -> np.ndarray:
    """The head mask (N, H) that removes every ``(layer, head)`` of ``heads``."""
    mask = np.ones((config.num_layers, config.num_heads))
    for layer, head in heads:
        if not (0 <= layer < config.num_layers and 0 <= head < config.num_heads):
            raise ValueError(
                f"heads must name (layer, head) with layer < {config.num_layers} and "
                f"head < {config.num_heads}; got {(layer, head)}"
            )
        mask[layer, head] = 0.0
    return mask


def ablate_each_head(params, config, tokens, task: InductionTask = TASK):
    """The losses with each head removed in turn (its output set to 0).

    Returns a list of dicts ``{"layer", "head", "first", "repeated"}``, one per head,
    after one row for the intact model (``layer = head = None``).
    """
    rows = []
    first, repeated = half_losses(params, config, tokens, task)
    rows.append({"layer": None, "head": None, "first": first, "repeated": repeated})
    for layer in range(config.num_layers):
        for head in range(config.num_heads):
            mask = without_heads(config, [(layer, head)])
            first, repeated = half_losses(params, config, tokens, task, head_mask=mask)
            rows.append(
                {"layer": layer, "head": head, "first": first, "repeated": repeated}
            )
    return rows


def circuit_heads(weights, threshold: float = 0.3, task: InductionTask = TASK) -> dict:
    """The heads the patterns single out, and the others, as lists of ``(layer, head)``.

    ``weights`` as for :func:`previous_token_scores` (from :func:`make_sequences`).
    Returns a dict with ``"previous-token head"`` (the layer-0 head with the highest
    previous-token score), ``"other layer-0 heads"``, ``"copying heads"`` (the layer-1
    heads whose induction score exceeds ``threshold``) and ``"other layer-1 heads"``.
    Raises ``ValueError`` for a model that does not have two layers.

    Source: Elhage et al. (2021) and Olsson et al. (2022) for the two kinds of head.
    """
    if len(weights) != 2:
        raise ValueError(f"the circuit is read off two layers; got {len(weights)}")
    previous, scores = previous_token_scores(weights), induction_scores(weights, task)
    H = previous.shape[1]
    prev = [(0, int(np.argmax(previous[0])))]
    copy = [(1, h) for h in range(H) if scores[1, h] > threshold]
    return {
        "previous-token head": prev,
        "other layer-0 heads": [(0, h) for h in range(H) if (0, h) not in prev],
        "copying heads": copy,
        "other layer-1 heads": [(1, h) for h in range(H) if (1, h) not in copy],
    }


def drop_step(history: dict, chance: float):
    """The first evaluated step at which the repeated half's loss is below half of
    ``chance``, from a stored history (its ``extra["repeated_half"]``), or None.

    Returns an int (or None); raises ``KeyError`` for a history without the losses.
    """
    chance = as_real_number(chance, "chance")
    steps = np.asarray(history["step"])
    below = steps[np.asarray(history["extra"]["repeated_half"]) < chance / 2]
    return int(below[0]) if below.size else None


#: How the stored models are trained: a fixed budget, well past the drop (Adam, no
#: dropout; the stopping rule's patience is never reached). The learning rate warms up
#: for 50 steps, then follows a half cosine down to a tenth of its peak at the cap.
#: The parameters stored are those of the evaluation with the lowest validation loss
#: (``train`` returns them), not those of the last step.
TRAIN = TrainConfig(
    max_steps=3000, batch=32, lr=1e-3, warmup=50, eval_every=20, patience=10**6
)
SHORTCUT_TRAIN = TrainConfig(
    max_steps=1000, batch=32, lr=1e-3, warmup=50, eval_every=20, patience=10**6
)
SEEDS = (0, 1, 2)


def train_one(seed: int, *, shortcut: bool = False, task: InductionTask = TASK):
    """Train one model from ``seed`` on :func:`make_training_sequences` (or, with
    ``shortcut``, on :func:`make_sequences`); returns ``(params, history)``, the
    parameters at the lowest validation loss (all positions of the 256 held-out
    sequences below; ``history["best_step"]``). The
    history's ``extra`` holds the first-half and repeated-half losses on 256 held-out
    sequences of :func:`make_sequences` at every evaluation."""
    config = model_config(task)
    held_out = make_sequences(np.random.default_rng(1000 + seed), 256, task)
    make = make_sequences if shortcut else make_training_sequences

    def draw(rng, batch):
        seqs = make(rng, batch, task)
        return seqs[:, :-1], seqs[:, 1:]

    def monitor(params):
        first, repeated = half_losses(params, config, held_out, task)
        return {"first_half": first, "repeated_half": repeated}

    windows = (held_out[:, :-1], held_out[:, 1:])
    cfg = SHORTCUT_TRAIN if shortcut else TRAIN
    name = "shortcut model" if shortcut else f"induction model, seed {seed}"
    from tqdm.auto import tqdm

    return train(
        config,
        None,
        TrainConfig(**{**cfg.as_dict(), "seed": seed}),
        params=init_language_model(config, seed),
        batches=(draw, (windows, windows)),
        monitor=monitor,
        progress=tqdm(total=cfg.max_steps, desc=name, mininterval=2.0),
    )


def load(path=WEIGHTS):
    """The stored models: ``(config, models, meta)``; ``models`` maps each seed of
    :data:`SEEDS` and the name ``"shortcut"`` to its parameters."""
    meta = json.loads(Path(path).with_suffix(".json").read_text())
    models: dict = {}
    with np.load(path) as arrays:
        for key in arrays.files:
            name, param = key.split("/", 1)
            name = int(name) if name.isdigit() else name
            models.setdefault(name, {})[param] = arrays[key]
    return LMConfig(**meta["config"]), models, meta


def main(path=WEIGHTS) -> None:
    """Train the models of :data:`SEEDS` and the shortcut model; store them with their
    histories and times."""
    arrays, histories = {}, {}
    runs = [(seed, False) for seed in SEEDS] + [(0, True)]
    for seed, shortcut in runs:
        params, history = train_one(seed, shortcut=shortcut)
        name = "shortcut" if shortcut else str(seed)
        arrays |= {f"{name}/{k}": v for k, v in params.items()}
        histories[name] = history.as_dict()
    np.savez_compressed(path, **arrays)
    meta = {
        "task": {
            "vocab_size": TASK.vocab_size,
            "half": TASK.half,
            "min_segment": TASK.min_segment,
            "max_segment": TASK.max_segment,
        },
        "config": model_config().as_dict(),
        "train": TRAIN.as_dict(),
        "shortcut_train": SHORTCUT_TRAIN.as_dict(),
        "seeds": list(SEEDS),
        "histories": histories,
        "seconds": round(sum(h["seconds"] for h in histories.values()), 1),
    }
    Path(path).with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(
        f"wrote {path} ({Path(path).stat().st_size / 1e3:.0f} kB) "
        f"in {meta['seconds']} s"
    )


if __name__ == "__main__":
    main()
