"""Train the bottleneck chapter's translators to convergence, several seeds each, and
store them.

The experiment (``make train``): four kinds of model, the context-vector model and the
attention model (:mod:`attnlib.models.encoder_decoder`), each with a bidirectional and
with a forward-only encoder, and two fairer context-vector baselines with a
bidirectional encoder and as many parameters as the attention model (a larger decoder;
a GRU encoder, :mod:`attnlib.models.gru`), three seeds each (:data:`KINDS`,
:data:`KIND_OPTIONS`). Every run uses the same optimiser and the same stopping rule
(:func:`train`), the book's early stopping (the learning primer) with the learning rate
halved at a stall:

* every ``eval_every`` steps the loss on a fixed *validation set* (sentences of every
  training length, drawn from their own seed and never trained on) is measured, and the
  parameters with the lowest validation loss so far are kept;
* the validation loss *stalls* when it has not beaten its best by at least ``min_delta``
  (relative) for ``patience`` evaluations in a row; at a stall the learning rate is
  halved and training goes on from the best parameters, up to ``lr_halvings`` times;
* the next stall ends training, and so does the budget cap ``max_steps``.

For seed ``s`` the runs of all kinds read the same training sentences in the same
order (data seed ``DATA_SEED + s``), and models of the same encoder direction and sizes
start from the same numbers for the parameters they share (init seed ``s``).

The runs are written to :data:`WEIGHTS` (float32, compressed); the training record and
the held-out evaluation (:mod:`book_support.experiments.translation_eval`) to the
``.json`` beside it. The bottleneck chapter and the tests load them. Run ``python -m
book_support.experiments.translation_training`` (what ``make train`` does; ``--kinds``
and ``--seeds`` train one piece at a time, keeping the other stored runs). The progress
bar counts steps against every run's budget cap; a run that stops early drops the rest
of its budget, so the time it shows as left is an upper bound.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from attnlib.data.translation_task import make_batch
from attnlib.models import encoder_decoder
from attnlib.models.adam import Adam
from book_support import CHAPTERS

#: Where the trained weights live (inside the repository, next to the chapters).
WEIGHTS = CHAPTERS / "why_attention/bottleneck/data/translation_models.npz"

#: Everything that defines a training run, the same for every run.
CONFIG = {
    "m": 16,
    "h": 32,
    "d": 48,
    "a": 24,
    "batch_size": 32,
    "lengths": (3, 20),
    "lr": 3e-3,
    "max_norm": 1.0,
    "eval_every": 250,
    "patience": 6,
    "min_delta": 0.01,
    "lr_halvings": 3,
    "max_steps": 30000,
    "validation_per_length": 16,
    "validation_seed": 2024,
}
#: The kinds of model: name -> (attend, bidirectional).
KINDS = {
    "context-bidirectional": (False, True),
    "attention-bidirectional": (True, True),
    "context-forward": (False, False),
    "attention-forward": (True, False),
    "context-matched-bidirectional": (False, True),
    "context-gru-bidirectional": (False, True),
}
#: The kinds that differ from :data:`CONFIG` in more than attention and direction:
#: name -> the options of ``init_encoder_decoder`` they change. The two fairer
#: baselines keep the context vector at 2h = 64 numbers and grow (tanh) or shrink
#: (GRU encoder, Cho et al. 2014) the decoder state ``d`` until the model has as many
#: parameters as the bidirectional attention model (18,914) to within 1 %.
KIND_OPTIONS = {
    "context-matched-bidirectional": {"d": 58},
    "context-gru-bidirectional": {"cell": "gru", "d": 34},
}
#: Kinds whose budget cap is ``max_steps`` times this factor. The first GRU runs reached
#: the cap of 30,000 steps with their best step at 29,500-30,000, so the cap, not the
#: stopping rule, may have ended them; with the cap doubled the rule ends them. The
#: other kinds stop by the rule before 30,000 steps; training is deterministic, so a
#: larger cap would not change them.
BUDGET_FACTOR = {"context-gru-bidirectional": 2}
#: The seeds of every kind (init seed ``s``, data seed ``DATA_SEED + s``).
SEEDS = (0, 1, 2)
DATA_SEED = 1000


def run_name(kind: str, seed: int) -> str:
    """The name of one run in the stored file, e.g. ``"attention-forward-seed1"``."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; the kinds are {tuple(KINDS)}")
    return f"{kind}-seed{int(seed)}"


def validation_set(config: dict = CONFIG) -> list:
    """The held-out sentences of the stopping rule: ``validation_per_length`` of every
    training length, from their own seed (one batch per length)."""
    lo, hi = config["lengths"]
    rng = np.random.default_rng(config["validation_seed"])
    return [
        make_batch(rng, config["validation_per_length"], T) for T in range(lo, hi + 1)
    ]


def validation_loss(model, batches) -> float:
    """Teacher-forced cross-entropy per target word, averaged over ``batches`` (one per
    length: every length counts alike, as in training).

    Raises
    ------
    ValueError
        If ``batches`` is empty (there is no loss to average).
    """
    losses = [encoder_decoder.loss(model, b) for b in batches]
    if not losses:
        raise ValueError("validation_loss needs at least one batch; got none")
    return float(np.mean(losses))


def clip_by_global_norm(grads: dict, max_norm: float) -> float:
    """Scale all gradients in place so that their joint Euclidean norm is at most
    ``max_norm`` (Pascanu, Mikolov & Bengio 2013). Returns the norm before clipping."""
    norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in grads.values())))
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


def train(model, validation, *, seed: int, config: dict = CONFIG, progress=None):
    """Train ``model`` in place to convergence by the stopping rule of this module.

    Every step draws a length uniformly from ``config["lengths"]`` and a batch of
    ``batch_size`` sentences of that length (one length per batch: no padding needed)
    from ``default_rng(seed)``, takes the gradient of the teacher-forced loss, clips its
    global norm to ``max_norm`` and makes one Adam step (Kingma & Ba 2015; Bahdanau et
    al. 2015, appendix B.2, clipped at norm 1 too). Every ``eval_every`` steps it
    records the step, the mean training loss of the batches since the last record, the
    validation loss on ``validation``, the learning rate and the seconds so far in
    ``model.history``.

    The validation loss *stalls* when it has not beaten its best by at least
    ``min_delta`` (relative) for ``patience`` evaluations in a row. At a stall the
    learning rate is halved and training goes on from the best parameters (as
    Sutskever et al. 2014, section 3.4, halved theirs), up to ``lr_halvings`` times; the
    next stall ends training, and so does the budget cap ``max_steps``. At the end the
    model holds the parameters of the lowest validation loss; ``history["best_step"]``
    says when they were reached and ``history["stopped_at"]`` when training stopped.
    Deterministic for a given seed.

    ``progress``, if given, is called as ``progress(steps_done_since_last_call)``.

    Raises
    ------
    ValueError
        If the length range or a count in ``config`` is empty or negative.
    """
    lo, hi = (int(v) for v in config["lengths"])
    every, patience = int(config["eval_every"]), int(config["patience"])
    if not 2 <= lo <= hi or every < 1 or patience < 1 or config["max_steps"] < every:
        raise ValueError(
            "need 2 <= lengths[0] <= lengths[1], eval_every >= 1, patience >= 1 and "
            f"max_steps >= eval_every; got {config}"
        )
    rng = np.random.default_rng(seed)
    opt = Adam(lr=config["lr"])
    hist = model.history
    for key in ("step", "train_loss", "validation_loss", "lr", "seconds"):
        hist[key] = []
    best, best_params, best_step = np.inf, None, 0
    waited, halvings = 0, 0
    start, running, step = time.perf_counter(), [], 0
    while step < config["max_steps"]:
        step += 1
        batch = make_batch(rng, config["batch_size"], int(rng.integers(lo, hi + 1)))
        value, grads = encoder_decoder.loss_and_gradients(model, batch)
        clip_by_global_norm(grads, config["max_norm"])
        opt.step(model.params, grads)
        running.append(value)
        if step % every:
            continue
        v = validation_loss(model, validation)
        for key, x in zip(
            ("step", "train_loss", "validation_loss", "lr", "seconds"),
            (step, float(np.mean(running)), v, opt.lr, time.perf_counter() - start),
        ):
            hist[key].append(x)
        running = []
        waited = 0 if v < best * (1.0 - config["min_delta"]) else waited + 1
        if v < best:
            best, best_step = v, step
            best_params = {k: a.copy() for k, a in model.params.items()}
        if progress is not None:
            progress(every)
        if waited >= patience:
            if halvings == config["lr_halvings"]:
                break
            halvings, waited, opt.lr = halvings + 1, 0, opt.lr / 2
            model.params = {k: a.copy() for k, a in best_params.items()}
    model.params = best_params
    hist["best_step"], hist["stopped_at"] = [best_step], [step]
    return model


def init_run(kind: str, seed: int, config: dict = CONFIG):
    """The untrained model of one run: the sizes of ``config``, changed by
    :data:`KIND_OPTIONS` for the kinds listed there, init seed ``seed``.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`KINDS` (named in the message).
    """
    run_name(kind, seed)  # refuses an unknown kind by name
    attend, bidirectional = KINDS[kind]
    sizes = {k: config[k] for k in ("m", "h", "d", "a")}
    return encoder_decoder.init_encoder_decoder(
        int(seed),
        attend=attend,
        bidirectional=bidirectional,
        **dict(sizes, **KIND_OPTIONS.get(kind, {})),
    )


def train_run(kind: str, seed: int, config: dict = CONFIG, progress=None):
    """Initialise (:func:`init_run`) and train one run (deterministic), with the budget
    cap of ``config`` times :data:`BUDGET_FACTOR` of its kind.

    Raises
    ------
    ValueError
        If ``kind`` is not one of :data:`KINDS` (named in the message).
    """
    cap = config["max_steps"] * BUDGET_FACTOR.get(kind, 1)
    return train(
        init_run(kind, seed, config),
        validation_set(config),
        seed=DATA_SEED + int(seed),
        config=dict(config, max_steps=cap),
        progress=progress,
    )


def load_runs(path=WEIGHTS) -> dict:
    """The stored runs: run name -> EncoderDecoder (see :func:`run_name`), seed by
    seed in the order of :data:`KINDS` (whatever order they were stored in)."""
    runs = encoder_decoder.load(path)
    order = [run_name(k, s) for s in SEEDS for k in KINDS]
    rest = sorted(set(runs) - set(order))
    return {name: runs[name] for name in order + rest if name in runs}


def load_model(kind: str, seed: int = 0, path=WEIGHTS):
    """One stored run, e.g. ``load_model("attention-bidirectional", 0)``."""
    return load_runs(path)[run_name(kind, seed)]


def _worker(job):
    """Train one run in a worker process; report progress through the queue."""
    kind, seed, queue = job
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    np.seterr(all="raise")
    start = time.process_time()
    model = train_run(kind, seed, progress=lambda n: queue.put((kind, seed, n)))
    queue.put((kind, seed, None))
    return kind, seed, model, time.process_time() - start


def _config_record() -> dict:
    """:data:`CONFIG` as plain JSON values."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in CONFIG.items()}


def write_summary(runs: dict, path=WEIGHTS, record=None, last_training=None) -> dict:
    """Evaluate ``runs`` on the held-out sentences and write the ``.json`` beside
    ``path``: the configuration, each run's training record (``record``, or the one
    already in the file), the last training session and the held-out scores.

    Returns the evaluation (run name -> list of Scores). Used at the end of
    :func:`main`, and alone (``--summary-only``) to rebuild the record from the stored
    weights.
    """
    from book_support.experiments import translation_eval

    path = Path(path)
    meta_path = path.with_suffix(".json")
    old = json.loads(meta_path.read_text()) if meta_path.is_file() else {}
    record = dict(old.get("runs", {}), **(record or {}))
    for name, model in runs.items():  # a run without a record: read its history
        h = model.history
        record.setdefault(
            name,
            {
                "kind": name.rpartition("-seed")[0],
                "seed": int(name.rpartition("-seed")[2]),
                "best_step": int(h["best_step"][0]),
                "stopped_at": int(h["stopped_at"][0]),
                "best_validation_loss": min(h["validation_loss"]),
            },
        )
    evaluation = translation_eval.evaluate_runs(runs)
    meta = {
        "config": _config_record(),
        "runs": {name: record[name] for name in runs},
        "last_training": last_training or old.get("last_training", {}),
        "held_out": {
            run: [s.to_dict() for s in scores] for run, scores in evaluation.items()
        },
    }
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    return evaluation


def main(argv=None) -> dict:
    """Train the runs asked for (all by default), two at a time, and store them.

    Runs already in the stored file that were not asked for are kept, so the experiment
    can be trained one piece at a time, and every run is stored as soon as it finishes
    (an interrupted session keeps the runs it completed). Then every stored run is
    evaluated on the held-out sentences and the record is written beside the weights
    (:func:`write_summary`; ``--summary-only`` does only that).
    """
    import threading

    from tqdm import tqdm

    from book_support.experiments import translation_eval

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", choices=tuple(KINDS), default=list(KINDS))
    parser.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    parser.add_argument("--jobs", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--path", type=Path, default=WEIGHTS)
    parser.add_argument(
        "--summary-only",
        action="store_true",
        help="train nothing: evaluate the stored runs and rewrite the .json",
    )
    args = parser.parse_args(argv)
    jobs = [(k, s) for s in args.seeds for k in args.kinds]
    runs = load_runs(args.path) if args.path.is_file() else {}
    experiment = {run_name(k, s) for k in KINDS for s in SEEDS}
    runs = {name: m for name, m in runs.items() if name in experiment}  # drop stale
    if args.summary_only:
        evaluation = write_summary(runs, args.path)
        print("\n".join(translation_eval.summary_lines(evaluation)))
        return runs
    record, lock = {}, threading.Lock()

    def finished(result):  # in the pool's result thread: store the run at once
        kind, seed, model, cpu = result
        key = run_name(kind, seed)
        h = model.history
        with lock:
            runs[key] = model
            record[key] = {
                "kind": kind,
                "seed": seed,
                "best_step": h["best_step"][0],
                "stopped_at": h["stopped_at"][0],
                "best_validation_loss": min(h["validation_loss"]),
                "cpu_seconds": round(cpu, 1),
            }
            encoder_decoder.save(runs, args.path)

    start = time.perf_counter()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(args.jobs) as pool:
        queue = manager.Queue()
        budget = {k: CONFIG["max_steps"] * BUDGET_FACTOR.get(k, 1) for k in KINDS}
        bar = tqdm(
            total=sum(budget[k] for k, _ in jobs), unit="step", desc="make train"
        )
        handles = [
            pool.apply_async(_worker, ((k, s, queue),), callback=finished)
            for k, s in jobs
        ]
        done, steps, active = 0, {}, set()
        while done < len(jobs):
            kind, seed, n = queue.get()
            key = run_name(kind, seed)
            if n is None:  # finished: the rest of its budget is not needed
                bar.update(budget[kind] - steps.get(key, 0))
                done += 1
                active.discard(key)
            else:
                steps[key] = steps.get(key, 0) + n
                bar.update(n)
                active.add(key)
            bar.set_postfix_str(
                f"{done}/{len(jobs)} runs done; training {', '.join(sorted(active))}"
            )
        bar.close()
        for handle in handles:
            handle.get()  # raises a worker's error here
    seconds = time.perf_counter() - start
    print(
        f"trained {len(jobs)} runs in {seconds:.0f} s ({args.jobs} processes); wrote "
        f"{args.path} ({args.path.stat().st_size / 1e3:.0f} kB)"
    )
    last = {
        "runs": [run_name(k, s) for k, s in jobs],
        "wall_seconds": round(seconds, 1),
        "processes": args.jobs,
        "cpu_count": os.cpu_count(),
        "load_average_at_end": [round(v, 2) for v in os.getloadavg()],
    }
    evaluation = write_summary(runs, args.path, record, last)
    print("\n".join(translation_eval.summary_lines(evaluation)))
    return runs


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
