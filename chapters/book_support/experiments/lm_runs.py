"""The stored language models of the chapters (``make train-lm``).

* :data:`MAIN`: the character-level model of the book's prose that the chapters
  generate with (stored weights,
  ``chapters/attention_that_writes/language_model/data/lm_main.npz``);
* :data:`VARIANTS`: a smaller model trained with multi-head, grouped-query and
  multi-query attention and with a sliding window, each from :data:`SEEDS`, for the
  comparison of cache size and validation loss (stored histories only,
  ``chapters/attention_that_writes/kv_cache/data/lm_variants.json``);
* the induction-head models of :mod:`book_support.experiments.induction`.

Every run is deterministic (seeded); its history, time and stopping reason are stored
with it. ``python -m book_support.experiments.lm_runs [main] [variants] [induction]``
trains the groups named, all three when none is named (``make train-lm``): the runs form
one list of jobs (the main model, each variant from each seed, the induction models),
which two processes (one core each) take in turn, the longest first.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path

import numpy as np

from attnlib.data.book_text import CharTokenizer, load_corpus, split_pieces
from attnlib.models.language_model import LMConfig, parameter_count
from attnlib.models.lm_training import TrainConfig, train
from book_support import CHAPTERS

__all__ = [
    "DATA",
    "MAIN",
    "MAIN_TRAIN",
    "VARIANTS",
    "VARIANT_TRAIN",
    "SEEDS",
    "load_main",
]

DATA = CHAPTERS / "attention_that_writes/language_model/data"
VARIANTS_JSON = CHAPTERS / "attention_that_writes/kv_cache/data/lm_variants.json"


def corpus():
    """``(tokenizer, split)`` of the frozen corpus (pieces of 2,000 characters, every
    tenth held out for validation)."""
    text = load_corpus()
    tokenizer = CharTokenizer.from_text(text)
    return tokenizer, split_pieces(tokenizer.encode(text))


_VOCAB = 89  # characters in attnlib/data/book_prose.txt (checked in main)

#: The model the chapters generate with.
MAIN = LMConfig(
    vocab_size=_VOCAB,
    context=128,
    d_model=64,
    num_layers=3,
    num_heads=4,
    dropout=0.1,
)
MAIN_TRAIN = TrainConfig(
    max_steps=3500, batch=16, lr=3e-3, warmup=100, eval_every=100, patience=4
)

_SMALL = dict(vocab_size=_VOCAB, context=64, d_model=48, num_layers=2, dropout=0.1)
#: The variants compared in the KV-cache chapter: the same sizes, only the attention
#: changes (4 query heads in each).
VARIANTS = {
    "multi-head (4 key/value heads)": LMConfig(**_SMALL, num_heads=4),
    "grouped-query (2 key/value heads)": LMConfig(
        **_SMALL, num_heads=4, num_kv_heads=2
    ),
    "multi-query (1 key/value head)": LMConfig(**_SMALL, num_heads=4, num_kv_heads=1),
    "multi-head, window of 16": LMConfig(**_SMALL, num_heads=4, window=16),
}
VARIANT_TRAIN = TrainConfig(
    max_steps=3000, batch=16, lr=3e-3, warmup=100, eval_every=100, patience=4
)
SEEDS = (0, 1, 2)


def _meta(config, cfg, history, tokenizer, params):
    return {
        "config": config.as_dict(),
        "train": cfg.as_dict(),
        "history": history.as_dict(),
        "parameters": parameter_count(params),
        "chars": tokenizer.chars,
    }


def _bar(description: str, cfg):
    """A progress bar for one training run (tqdm; the run updates it)."""
    from tqdm.auto import tqdm

    return tqdm(total=cfg.max_steps, desc=description, mininterval=2.0)


def train_main(path=DATA / "lm_main.npz") -> None:
    """Train :data:`MAIN` and store its weights (float32) and history."""
    tokenizer, split = corpus()
    start = os.getloadavg()
    params, history = train(
        MAIN, split, MAIN_TRAIN, progress=_bar("language model", MAIN_TRAIN)
    )
    np.savez_compressed(path, **params)
    meta = _meta(MAIN, MAIN_TRAIN, history, tokenizer, params)
    meta["load_average"] = {"start": start, "end": os.getloadavg()}
    Path(path).with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(
        f"wrote {path} ({Path(path).stat().st_size / 1e6:.2f} MB): best validation "
        f"loss {history.best_validation:.3f} at step {history.best_step} "
        f"in {history.seconds:.0f} s",
        flush=True,
    )


def train_variant(name: str, seed: int) -> dict:
    """Train the variant ``name`` of :data:`VARIANTS` from ``seed``; return its stored
    run (a dict: variant, seed, config, training settings, history, parameters)."""
    tokenizer, split = corpus()
    cfg = TrainConfig(**{**VARIANT_TRAIN.as_dict(), "seed": seed})
    params, history = train(
        VARIANTS[name], split, cfg, progress=_bar(f"{name}, seed {seed}", cfg)
    )
    return {"variant": name, "seed": seed} | _meta(
        VARIANTS[name], cfg, history, tokenizer, params
    )


def write_variants(runs: list[dict], path=VARIANTS_JSON) -> None:
    """Store the variants' runs (no weights), in the order of :data:`VARIANTS` and
    :data:`SEEDS`; ``seconds`` is the sum of the runs' training times."""
    order = {name: i for i, name in enumerate(VARIANTS)}
    runs = sorted(runs, key=lambda r: (order[r["variant"]], r["seed"]))
    seconds = round(sum(r["history"]["seconds"] for r in runs), 1)
    meta = {"runs": runs, "seconds": seconds}
    Path(path).write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {path}: {len(runs)} runs, {seconds} s of training", flush=True)


def load_main(path=DATA / "lm_main.npz"):
    """The stored model: ``(params, config, tokenizer, meta)``."""
    meta = json.loads(Path(path).with_suffix(".json").read_text())
    with np.load(path) as arrays:
        params = {k: arrays[k] for k in arrays.files}
    return params, LMConfig(**meta["config"]), CharTokenizer(meta["chars"]), meta


def load_variants(path=VARIANTS_JSON) -> dict:
    """The variants' stored runs (a dict with ``runs``, a list, and ``seconds``)."""
    return json.loads(Path(path).read_text())


def variant_summary(runs=None) -> list[dict]:
    """One row per variant of the stored runs: its key/value heads and window, the KV
    cache's bytes per token in float32
    (:func:`attnlib.models.kv_cache.kv_bytes_per_token`), its parameters, and the mean,
    lowest and highest best validation loss over the seeds (and the seeds' best
    steps).

    ``runs`` defaults to :func:`load_variants`'s; rows come in the order of
    :data:`VARIANTS`. Raises ``KeyError`` for runs without the stored fields.
    """
    from attnlib.models.kv_cache import kv_bytes_per_token

    runs = load_variants()["runs"] if runs is None else runs
    rows = []
    for name in dict.fromkeys(r["variant"] for r in runs):
        group = [r for r in runs if r["variant"] == name]
        c = group[0]["config"]
        losses = np.array([r["history"]["best_validation"] for r in group])
        rows.append(
            {
                "variant": name,
                "key/value heads": c["num_kv_heads"],
                "window": c["window"],
                "cache bytes per token": kv_bytes_per_token(
                    c["num_layers"],
                    c["num_kv_heads"],
                    c["d_model"] // c["num_heads"],
                    4,
                ),
                "parameters": group[0]["parameters"],
                "seeds": len(group),
                "mean": float(losses.mean()),
                "lowest": float(losses.min()),
                "highest": float(losses.max()),
                "best steps": [r["history"]["best_step"] for r in group],
            }
        )
    return rows


def _job(job: tuple) -> dict | None:
    """Run one job of :func:`main`'s list: ``("main",)``, ``("induction",)`` or
    ``("variant", name, seed)`` (which returns its run; the others store their own)."""
    from book_support.experiments import induction

    if job[0] == "variant":
        return train_variant(job[1], job[2])
    {"main": train_main, "induction": induction.main}[job[0]]()
    return None


GROUPS = ("main", "variants", "induction")


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    tokenizer, _ = corpus()
    if tokenizer.vocab_size != _VOCAB:
        raise SystemExit(
            f"the corpus has {tokenizer.vocab_size} characters, not {_VOCAB}"
        )
    unknown = sorted(set(argv) - set(GROUPS))
    if unknown:
        raise SystemExit(f"unknown groups {unknown}; choose from {list(GROUPS)}")
    groups = argv or list(GROUPS)
    # longest first, so that the two processes end at about the same time
    jobs = [("main",)] if "main" in groups else []
    jobs += [("induction",)] if "induction" in groups else []
    if "variants" in groups:
        jobs += [("variant", name, seed) for seed in SEEDS for name in VARIANTS]
    with multiprocessing.get_context("spawn").Pool(min(2, len(jobs))) as pool:
        runs = [run for run in pool.imap(_job, jobs) if run is not None]
    if "variants" in groups:
        write_variants(runs)


if __name__ == "__main__":
    main()
