"""Train the book's two translation models from a seed and store them (``make train``).

The context-vector model and the attention model (:mod:`attnlib.models.encoder_decoder`)
get the same sizes, the same seed for their shared parameters, the same training
sentences and the same number of steps. They are trained side by side, one process each,
and written to :data:`WEIGHTS` (float32, compressed), which chapter 2 and the tests
load. The held-out evaluation is :func:`length_curve`.

Run ``python -m attnlib.models.translation_training`` (what ``make train`` does).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import time
from pathlib import Path

import numpy as np

from attnlib.models import encoder_decoder

#: Where the trained weights live (inside the repository, next to the chapters).
WEIGHTS = (
    Path(__file__).resolve().parents[2] / "chapters" / "data" / "translation_models.npz"
)

#: Everything that defines the training run.
CONFIG = {
    "init_seed": 1,
    "data_seed": 0,
    "m": 16,
    "h": 32,
    "d": 48,
    "a": 24,
    "steps": 1500,
    "batch_size": 32,
    "lengths": (3, 25),
    "lr": 3e-3,
    "max_norm": 1.0,
}
#: Source lengths of the held-out evaluation, and sentences per length.
TEST_LENGTHS = (5, 10, 15, 20, 25)
TEST_SENTENCES = 200


def train_one(
    attend: bool, config: dict = CONFIG, verbose: bool = False
) -> encoder_decoder.EncoderDecoder:
    """Initialise and train one model as ``config`` says (deterministic)."""
    model = encoder_decoder.init_encoder_decoder(
        config["init_seed"],
        attend=attend,
        m=config["m"],
        h=config["h"],
        d=config["d"],
        a=config["a"],
    )
    return encoder_decoder.train(
        model,
        steps=config["steps"],
        seed=config["data_seed"],
        batch_size=config["batch_size"],
        lengths=config["lengths"],
        lr=config["lr"],
        max_norm=config["max_norm"],
        verbose=verbose,
    )


def _worker(attend: bool):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    return train_one(attend, verbose=True)


def length_curve(models: dict, lengths=TEST_LENGTHS, n: int = TEST_SENTENCES):
    """Held-out scores of every model at every length: name -> list of
    :class:`attnlib.models.encoder_decoder.Scores`, one per length."""
    batches = encoder_decoder.test_batches(lengths, n=n)
    return {
        name: [encoder_decoder.evaluate(model, b) for b in batches]
        for name, model in models.items()
    }


def main(path=WEIGHTS) -> dict:
    """Train both models (two processes), save them to ``path``, print the length curve."""
    start = time.perf_counter()
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        context, attention = pool.map(_worker, [False, True])
    seconds = time.perf_counter() - start
    models = {"context": context, "attention": attention}
    encoder_decoder.save(models, path)
    print(
        f"trained both models in {seconds:.0f} s; wrote {path} "
        f"({Path(path).stat().st_size / 1e6:.2f} MB)"
    )
    curve = length_curve(models)
    for name, scores in curve.items():
        for s in scores:
            print(
                f"{name:9} T={s.length:2d} token {s.token_accuracy:.3f} "
                f"sentence {s.sentence_accuracy:.3f} "
                f"alignment {s.alignment_accuracy:.3f}"
            )
    meta = {
        "config": {
            k: list(v) if isinstance(v, tuple) else v for k, v in CONFIG.items()
        },
        "training_seconds": round(seconds, 1),
        "cpu_count": os.cpu_count(),
        "load_average_at_end": list(os.getloadavg()),
        "held_out": {name: [vars(s) for s in scores] for name, scores in curve.items()},
    }
    Path(path).with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    return models


if __name__ == "__main__":
    np.seterr(all="raise")
    main()
