"""Training the book's language models: Adam with warm-up, a validation split, and a
stopping rule.

One training run (:func:`train`):

* batches of random windows of the training pieces (:mod:`attnlib.data.book_text`);
* Adam (Kingma & Ba 2015) on the gradients of
  :func:`attnlib.models.language_model.loss_and_gradients`, their global norm clipped
  to 1; with ``weight_decay > 0``, AdamW (Loshchilov & Hutter 2019), whose decay
  shrinks the matrices that :func:`attnlib.models.adam.decays` names;
* the learning rate rises linearly from 0 over the first ``warmup`` steps (the
  warm-up), then falls along a half cosine to a tenth of its peak at ``max_steps``
  (``schedule="cosine"``) or stays at its peak (``schedule="constant"``: the schedule
  then does not decide when training ends, the stopping rule does);
* every ``eval_every`` steps the loss is measured exactly (no dropout) on a fixed set of
  validation windows and on as many fixed training windows; the parameters with the
  lowest validation loss so far are kept, and training stops when that loss has not
  improved for ``patience`` evaluations in a row, or at ``max_steps``.

The stored models (``make train-lm``) are written by
:mod:`book_support.experiments.lm_runs`.

Source: Kingma & Ba (2015), Algorithm 1; Vaswani et al. (2017), section 5.3 (a
learning rate that grows linearly during warm-up, for the first 4000 steps there).
The clipping and the cosine decay are the common practice of GPT-style training
(nanoGPT's defaults).
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field

import numpy as np

from attnlib.core._validation import as_length, as_real_number, as_width
from attnlib.data.book_text import evaluation_windows, random_windows
from attnlib.models.adam import Adam, AdamW
from attnlib.models.language_model import (
    LMConfig,
    init_language_model,
    loss,
    loss_and_gradients,
)

__all__ = [
    "TrainConfig",
    "History",
    "learning_rate",
    "clip_global_norm",
    "evaluate",
    "train",
    "recent_drop",
]


@dataclass(frozen=True)
class TrainConfig:
    """How one model is trained (every field is stored with the model).

    ``weight_decay`` 0 (the default) trains with :class:`attnlib.models.adam.Adam`;
    above 0, with :class:`attnlib.models.adam.AdamW` and that decay. ``schedule`` is
    the learning rate after the warm-up (:func:`learning_rate`): ``"cosine"`` (the
    default) or ``"constant"``; anything else raises ``ValueError``.
    """

    max_steps: int = 3000
    batch: int = 32
    lr: float = 3e-3
    warmup: int = 100
    eval_every: int = 100
    patience: int = 5
    eval_windows: int = 200
    max_norm: float = 1.0
    seed: int = 0
    weight_decay: float = 0.0
    schedule: str = "cosine"

    def __post_init__(self):
        for name in ("max_steps", "batch", "eval_every", "patience", "eval_windows"):
            object.__setattr__(self, name, as_width(getattr(self, name), name))
        for name in ("warmup", "seed"):
            object.__setattr__(self, name, as_length(getattr(self, name), name))
        for name in ("lr", "max_norm"):
            object.__setattr__(self, name, _positive(getattr(self, name), name))
        decay = as_real_number(self.weight_decay, "weight_decay")
        if not (np.isfinite(decay) and decay >= 0):
            raise ValueError(f"weight_decay must be finite and >= 0; got {decay}")
        object.__setattr__(self, "weight_decay", decay)
        if self.schedule not in ("cosine", "constant"):
            raise ValueError(
                f"schedule must be 'cosine' or 'constant'; got {self.schedule!r}"
            )

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class History:
    """The measurements of one run: steps, losses (nats per token), time (wall-clock
    ``seconds``, and the process's ``cpu_seconds``, which a busy machine inflates
    less)."""

    step: list = field(default_factory=list)
    train: list = field(default_factory=list)
    validation: list = field(default_factory=list)
    lr: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    best_step: int = 0
    best_validation: float = float("inf")
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    stopped: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def _positive(value, name: str) -> float:
    """A positive finite number; ``TypeError`` or ``ValueError`` naming ``name``."""
    value = as_real_number(value, name)
    if not (np.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive number; got {value}")
    return value


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """Linear warm-up to ``cfg.lr`` over ``cfg.warmup`` steps, then a half cosine down
    to ``cfg.lr / 10`` at ``cfg.max_steps`` (``cfg.schedule == "cosine"``), or
    ``cfg.lr`` itself (``"constant"``); ``step`` counts from 0."""
    step = as_length(step, "step")
    if not isinstance(cfg, TrainConfig):
        raise TypeError(f"cfg must be a TrainConfig; got {type(cfg).__name__}")
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    if cfg.schedule == "constant":
        return cfg.lr
    progress = (step - cfg.warmup) / max(1, cfg.max_steps - cfg.warmup)
    return cfg.lr * (0.1 + 0.45 * (1.0 + np.cos(np.pi * min(progress, 1.0))))


def clip_global_norm(grads: dict, max_norm: float) -> float:
    """Scale all gradients (in place) so that their joint Euclidean norm is at most
    ``max_norm``; returns the norm before clipping.

    Raises ``TypeError`` for a gradient that is not a float array or a ``max_norm``
    that is not a number, and ``ValueError`` naming the parameter whose gradient holds
    NaN or inf (nothing is scaled then), or for a ``max_norm`` that is not positive.
    """
    max_norm = _positive(max_norm, "max_norm")
    for name, g in grads.items():
        if not (isinstance(g, np.ndarray) and g.dtype.kind == "f"):
            raise TypeError(
                f"grads[{name!r}] must be a float array (scaled in place); got "
                f"{getattr(g, 'dtype', type(g).__name__)}"
            )
        if not np.isfinite(g).all():
            raise ValueError(f"grads[{name!r}] holds NaN or inf (a NaN gradient)")
    top = max((float(np.abs(g).max()) for g in grads.values() if g.size), default=0.0)
    if top == 0.0:
        return 0.0
    # the norm as top * ||g / top||: no square can overflow
    norm = top * float(
        np.sqrt(sum(float(((g / top) ** 2).sum()) for g in grads.values()))
    )
    if not np.isfinite(norm):
        raise OverflowError("the gradients' norm exceeds the largest float")
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


def _fixed_windows(pieces, context: int, n: int):
    """The first ``n`` of the evenly spread evaluation windows of ``pieces``."""
    x, y = evaluation_windows(pieces, context)
    take = np.linspace(0, len(x) - 1, min(n, len(x))).astype(int)
    return x[take], y[take]


def evaluate(params, config: LMConfig, windows, batch: int = 100) -> float:
    """The exact mean loss (no dropout) over ``windows = (inputs, targets)``."""
    batch = as_width(batch, "batch")
    x, y = windows
    if len(x) == 0:
        raise ValueError("windows holds no window to evaluate")
    total = 0.0
    for i in range(0, len(x), batch):
        total += loss(params, config, x[i : i + batch], y[i : i + batch]) * len(
            x[i : i + batch]
        )
    return total / len(x)


def recent_drop(history: dict, steps: int) -> tuple[float, float]:
    """``(before, last)``: the validation loss ``steps`` steps before the last
    evaluation and at it, from a stored history (:meth:`History.as_dict`: ``step`` and
    ``validation`` lists, floats); how much a run was still improving when it ended.

    Raises ``ValueError`` if no evaluation was made exactly ``steps`` steps before the
    last one (``steps`` must be a multiple of the run's evaluation interval, and the run
    at least that long).
    """
    steps = as_width(steps, "steps")
    step, val = history["step"], history["validation"]
    if not step:
        raise ValueError("history holds no evaluation (its 'step' list is empty)")
    target = step[-1] - steps
    if target not in step:
        raise ValueError(
            f"no evaluation {steps} steps before the last one (step {step[-1]}); "
            f"evaluated at {step[:3]}...{step[-2:]}"
        )
    return val[step.index(target)], val[-1]


def train(
    config: LMConfig,
    split,
    cfg: TrainConfig = TrainConfig(),
    *,
    params: dict | None = None,
    batches=None,
    monitor=None,
    progress=None,
):
    """Train one model; returns ``(best_params, history)``.

    Parameters
    ----------
    config : LMConfig, the model's sizes (``config.dropout`` applies in training)
    split : :class:`attnlib.data.book_text.Split` (training and validation pieces), or
        None when ``batches`` provides the data
    cfg : TrainConfig
    params : initial parameters (default: :func:`init_language_model` with ``cfg.seed``)
    batches : optional callable ``(rng, batch) -> (inputs, targets)`` and a pair
        ``(train_windows, validation_windows)``, for tasks that are not text (the
        induction model); given as ``(draw, (train_windows, validation_windows))``
    monitor : optional callable ``params -> dict of floats``, measured at every
        evaluation and recorded in ``history.extra`` (one list per key)
    progress : a progress bar to update (a ``tqdm`` bar: ``update(1)`` each step,
        ``set_postfix`` at each evaluation, ``close()`` at the end), or None (silent)

    The run is deterministic: the same arguments give the same parameters and history.
    """
    rng = np.random.default_rng(cfg.seed)
    if params is None:
        params = init_language_model(config, rng)
    params = {k: v.copy() for k, v in params.items()}
    if batches is None:
        draw = lambda r, b: random_windows(split.train, r, b, config.context)  # noqa: E731
        fixed_train = _fixed_windows(split.train, config.context, cfg.eval_windows)
        fixed_val = _fixed_windows(split.validation, config.context, cfg.eval_windows)
    else:
        draw, (fixed_train, fixed_val) = batches
    adam = (
        AdamW(lr=cfg.lr, weight_decay=cfg.weight_decay)
        if cfg.weight_decay
        else Adam(lr=cfg.lr)
    )
    history = History()
    best = {k: v.copy() for k, v in params.items()}
    bar = progress
    start, cpu_start, stale = time.perf_counter(), time.process_time(), 0
    for step in range(cfg.max_steps):
        x, y = draw(rng, cfg.batch)
        _, grads = loss_and_gradients(params, config, x, y, training=True, rng=rng)
        clip_global_norm(grads, cfg.max_norm)
        adam.lr = learning_rate(step, cfg)
        adam.step(params, grads)
        if bar is not None:
            bar.update(1)
        if (step + 1) % cfg.eval_every == 0 or step + 1 == cfg.max_steps:
            val = evaluate(params, config, fixed_val)
            history.step.append(step + 1)
            history.train.append(evaluate(params, config, fixed_train))
            history.validation.append(val)
            history.lr.append(adam.lr)
            for key, value in (monitor(params) if monitor else {}).items():
                history.extra.setdefault(key, []).append(float(value))
            if bar is not None:
                bar.set_postfix(train=f"{history.train[-1]:.3f}", val=f"{val:.3f}")
            if val < history.best_validation:
                history.best_validation, history.best_step, stale = val, step + 1, 0
                best = {k: v.copy() for k, v in params.items()}
            else:
                stale += 1
                if stale >= cfg.patience:
                    history.stopped = (
                        f"validation loss not improved for {cfg.patience} evaluations"
                    )
                    break
    if not history.stopped:
        history.stopped = f"reached max_steps = {cfg.max_steps}"
    history.seconds = time.perf_counter() - start
    history.cpu_seconds = time.process_time() - cpu_start
    if bar is not None:
        bar.close()
    return best, history
