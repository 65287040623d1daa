"""The stored language models of the chapters (``make train-lm``).

* :data:`MAIN`: the character-level model of the book's prose that the chapters
  generate with (stored weights,
  ``chapters/attention_that_writes/language_model/data/lm_main.npz``);
* :data:`SEED_RUNS`: :data:`MAIN` again from other seeds, on the same split and on
  :func:`chapter_split` (whole chapters held out), for the spread over seeds (stored
  histories only, ``.../language_model/data/lm_seeds.json``);
* :data:`VARIANTS`: a smaller model trained with multi-head, grouped-query and
  multi-query attention and with a sliding window, each from :data:`SEEDS`, for the
  comparison of cache size and validation loss, and :data:`MATCHED`, grouped-query and
  multi-query with a feed-forward widened to the multi-head model's parameter count
  (stored histories only,
  ``chapters/attention_that_writes/kv_cache/data/lm_variants.json``);
* the induction-head models of :mod:`book_support.experiments.induction`.

Every run is deterministic (seeded); its history, time and stopping reason are stored
with it. ``python -m book_support.experiments.lm_runs [GROUP ...]`` trains the groups of
:data:`GROUPS` named, all of them when none is named (``make train-lm``): the runs form
one list of jobs, which two processes (one core each) take in turn, the longest first.
Each finished run of a group that stores histories is written at once to
``data/runs/`` beside its file, so an interrupted call keeps what it finished.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import sys
from pathlib import Path

import numpy as np

from attnlib.data.book_text import CharTokenizer, Split, load_corpus, split_pieces
from attnlib.models.language_model import LMConfig, parameter_count
from attnlib.models.lm_training import TrainConfig, train
from book_support import CHAPTERS

__all__ = [
    "DATA",
    "MAIN",
    "MAIN_TRAIN",
    "VARIANTS",
    "MATCHED",
    "ALL_VARIANTS",
    "VARIANT_TRAIN",
    "SEEDS",
    "SEED_RUNS",
    "HELD_OUT_CHAPTERS",
    "chapter_split",
    "corpus_chapters",
    "load_main",
    "load_seeds",
    "load_variants",
]

DATA = CHAPTERS / "attention_that_writes/language_model/data"
VARIANTS_JSON = CHAPTERS / "attention_that_writes/kv_cache/data/lm_variants.json"


def corpus(split: str = "pieces"):
    """``(tokenizer, split)`` of the frozen corpus: ``"pieces"`` (pieces of 2,000
    characters, every tenth held out for validation) or ``"chapters"``
    (:func:`chapter_split`). Raises ``ValueError`` naming an unknown ``split``."""
    text = load_corpus()
    tokenizer = CharTokenizer.from_text(text)
    if split == "pieces":
        return tokenizer, split_pieces(tokenizer.encode(text))
    if split == "chapters":
        return tokenizer, chapter_split(text, tokenizer)
    raise ValueError(f"split must be 'pieces' or 'chapters', not {split!r}")


#: The line that opens every chapter's prose in the corpus (its learning goals).
CHAPTER_START = "You will be able to:"
#: The chapters :func:`chapter_split` holds out, counted from 0 in the corpus's order:
#: "Softmax" (4) and "From attention to a Transformer layer" (11), one early and one
#: late chapter.
HELD_OUT_CHAPTERS = (4, 11)


def corpus_chapters(text: str) -> list[str]:
    """The corpus ``text`` cut into chapters, each starting at a line that begins with
    :data:`CHAPTER_START`. Raises ``ValueError`` if the text does not start with one."""
    starts = [
        m.start() for m in re.finditer(f"^{re.escape(CHAPTER_START)}", text, re.M)
    ]
    if not starts or starts[0] != 0:
        raise ValueError(f"text must start with a line beginning {CHAPTER_START!r}")
    return [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]


def chapter_split(text: str, tokenizer, held_out=HELD_OUT_CHAPTERS, piece: int = 2000):
    """A :class:`~attnlib.data.book_text.Split` that holds out whole chapters.

    The chapters numbered ``held_out`` (from 0, :func:`corpus_chapters`) are the
    validation text, all others the training text; each chapter is cut into pieces of
    ``piece`` tokens on its own (a chapter's last partial piece is dropped), so no piece
    joins two chapters. Raises ``ValueError`` for a chapter number out of range or a
    choice that leaves no training or no validation piece.
    """
    chapters = corpus_chapters(text)
    held = set(held_out)
    if not held or not held <= set(range(len(chapters))):
        raise ValueError(
            f"held_out must name chapters 0 to {len(chapters) - 1}, not {held_out!r}"
        )

    def pieces(numbers):
        rows = []
        for i in numbers:
            ids = tokenizer.encode(chapters[i])
            n = ids.size // piece
            rows.extend(ids[: n * piece].reshape(n, piece))
        if not rows:
            raise ValueError(f"chapters {sorted(numbers)} hold no piece of {piece}")
        return np.stack(rows)  # (pieces, piece)

    rest = [i for i in range(len(chapters)) if i not in held]
    return Split(train=pieces(rest), validation=pieces(sorted(held)))


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

_MH = VARIANTS["multi-head (4 key/value heads)"]
#: Grouped-query and multi-query attention with the parameters they save given back
#: to the feed-forward network: the width (a multiple of 12) whose parameter count is
#: closest to the multi-head model's (checked in the tests).
MATCHED = {
    "grouped-query, wider feed-forward": LMConfig(
        **_SMALL, num_heads=4, num_kv_heads=2, d_ff=216
    ),
    "multi-query, wider feed-forward": LMConfig(
        **_SMALL, num_heads=4, num_kv_heads=1, d_ff=228
    ),
}
ALL_VARIANTS = VARIANTS | MATCHED

#: The seed runs of :data:`MAIN`: ``(split, seed)``. The stored model is seed 0 on
#: ``"pieces"``.
SEED_RUNS = (
    ("chapters", 0),
    ("chapters", 1),
    ("chapters", 2),
    ("pieces", 1),
    ("pieces", 2),
)
SEEDS_JSON = DATA / "lm_seeds.json"


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
    config = ALL_VARIANTS[name]
    cfg = TrainConfig(**{**VARIANT_TRAIN.as_dict(), "seed": seed})
    params, history = train(
        config, split, cfg, progress=_bar(f"{name}, seed {seed}", cfg)
    )
    return {"variant": name, "seed": seed} | _meta(
        config, cfg, history, tokenizer, params
    )


def train_seed(split: str, seed: int) -> dict:
    """Train :data:`MAIN` from ``seed`` on the split ``split`` of :func:`corpus`; return
    its stored run (split, seed, config, training settings, history, parameters, the
    load average at start and end). The weights are not kept."""
    tokenizer, data = corpus(split)
    cfg = TrainConfig(**{**MAIN_TRAIN.as_dict(), "seed": seed})
    start = os.getloadavg()
    params, history = train(
        MAIN, data, cfg, progress=_bar(f"{split}, seed {seed}", cfg)
    )
    return {
        "split": split,
        "seed": seed,
        "load_average": {"start": start, "end": os.getloadavg()},
    } | _meta(MAIN, cfg, history, tokenizer, params)


def write_seeds(runs: list[dict], path=SEEDS_JSON) -> None:
    """Store the seed runs (no weights), in the order of :data:`SEED_RUNS`."""
    order = {key: i for i, key in enumerate(SEED_RUNS)}
    runs = sorted(runs, key=lambda r: order[(r["split"], r["seed"])])
    seconds = round(sum(r["history"]["seconds"] for r in runs), 1)
    Path(path).write_text(
        json.dumps({"runs": runs, "seconds": seconds}, indent=1) + "\n"
    )
    print(f"wrote {path}: {len(runs)} runs, {seconds} s of training", flush=True)


def load_seeds(path=SEEDS_JSON) -> dict:
    """The seed runs of :data:`MAIN` (a dict with ``runs``, a list, and ``seconds``)."""
    return json.loads(Path(path).read_text())


def write_variants(runs: list[dict], path=VARIANTS_JSON) -> None:
    """Store the variants' runs (no weights), in the order of :data:`ALL_VARIANTS` and
    :data:`SEEDS`; ``seconds`` is the sum of the runs' training times."""
    order = {name: i for i, name in enumerate(ALL_VARIANTS)}
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
    """One row per variant of the stored runs: its key/value heads, window and
    feed-forward width, the KV cache's bytes per token in float32
    (:func:`attnlib.models.kv_cache.kv_bytes_per_token`), its parameters, and the mean,
    lowest and highest best validation loss over the seeds (and the seeds' best
    steps).

    ``runs`` defaults to :func:`load_variants`'s; rows come in the order of the runs.
    Raises ``KeyError`` for runs without the stored fields.
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
                "feed-forward width": c["d_ff"],
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


RUNS = DATA / "runs"  # one file per finished run of a group that stores histories


def _job(job: tuple) -> dict | None:
    """Run one job of :func:`main`'s list: ``("main",)``, ``("induction",)``,
    ``("variant", name, seed)`` or ``("seed", split, seed)``; the last two return their
    run (also written to :data:`RUNS`), the others store their own."""
    from book_support.experiments import induction

    if job[0] in ("variant", "seed"):
        run = (train_variant if job[0] == "variant" else train_seed)(job[1], job[2])
        RUNS.mkdir(exist_ok=True)
        name = "-".join(re.sub(r"\W+", "_", str(part)) for part in job)
        (RUNS / f"{name}.json").write_text(json.dumps(run) + "\n")
        return run
    {"main": train_main, "induction": induction.main}[job[0]]()
    return None


def _jobs(groups) -> list[tuple]:
    """The jobs of ``groups``, longest first."""
    jobs = [("main",)] if "main" in groups else []
    jobs += [("seed", *key) for key in SEED_RUNS] if "seeds" in groups else []
    jobs += [("induction",)] if "induction" in groups else []
    if "variants" in groups:
        jobs += [("variant", name, seed) for seed in SEEDS for name in VARIANTS]
    if "matched" in groups:
        jobs += [("variant", name, seed) for seed in SEEDS for name in MATCHED]
    return jobs


#: ``main``: the stored model; ``seeds``: :data:`SEED_RUNS`; ``variants`` and
#: ``matched``: :data:`VARIANTS` and :data:`MATCHED` from each of :data:`SEEDS` (either
#: replaces its own runs in the variants' file and keeps the other's); ``induction``.
GROUPS = ("main", "seeds", "variants", "matched", "induction")


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
    jobs = _jobs(groups)
    with multiprocessing.get_context("spawn").Pool(min(2, len(jobs))) as pool:
        runs = [run for run in pool.imap_unordered(_job, jobs) if run is not None]
    if "seeds" in groups:
        write_seeds([r for r in runs if "split" in r])
    trained = [r for r in runs if "variant" in r]
    if trained:
        names = {r["variant"] for r in trained}
        kept = [r for r in load_variants()["runs"] if r["variant"] not in names]
        write_variants(kept + trained)


if __name__ == "__main__":
    main()
