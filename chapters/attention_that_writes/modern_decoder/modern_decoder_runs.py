"""The experiment of the chapter "The modern decoder block" (``make train-modern``).

GPT-2's block against today's (RMSNorm, SwiGLU, rotary positions, grouped-query
attention, AdamW) on the book's prose, with the language model chapter's corpus and
split (pieces of 2,000 characters, every tenth held out), plus a one-at-a-time
ablation: GPT-2's block with one change alone. Every design is trained from each of
:data:`SEEDS` by the same rule (:data:`TRAIN`): at most ``max_steps`` steps of the
warm-up and cosine schedule, stopping early when the validation loss has not improved
for ``patience`` evaluations; each run stores which of the two ended it.

The parameter counts are matched: every design's feed-forward width ``d_ff`` is the
one that brings its count closest to GPT-2's (:func:`matched_d_ff`).

``python modern_decoder_runs.py`` trains all :data:`DESIGNS` x :data:`SEEDS` in two
processes (one core each, progress bars) and writes ``data/modern_runs.json`` (the
runs' histories, no weights). The chapter reads that file; it never trains.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import numpy as np

from attnlib.models.language_model import LMConfig, parameter_shapes
from attnlib.models.lm_training import TrainConfig, train
from book_support.experiments.lm_runs import corpus

RESULTS = Path(__file__).resolve().with_name("data") / "modern_runs.json"

#: GPT-2's block at the size of the KV cache chapter's variants: learned positions,
#: layer norm with biases, a GELU feed-forward of width 4 d, Adam.
GPT2 = LMConfig(
    vocab_size=89,
    context=64,
    d_model=48,
    num_layers=2,
    num_heads=4,
    dropout=0.1,
    activation="gelu",
)
#: AdamW's decay (the other training settings are shared).
WEIGHT_DECAY = 0.1
TRAIN = TrainConfig(
    max_steps=1500,
    batch=16,
    lr=3e-3,
    warmup=100,
    eval_every=100,
    patience=3,
    eval_windows=100,
)
SEEDS = (0, 1, 2)

#: The model changes of each design (LMConfig fields) and whether it trains with AdamW.
CHANGES = {
    "GPT-2": ({}, False),
    "+ RMSNorm": ({"norm": "rms"}, False),
    "+ SwiGLU": ({"activation": "swiglu"}, False),
    "+ RoPE": ({"position": "rope"}, False),
    "+ AdamW": ({}, True),
    "modern": (
        {
            "norm": "rms",
            "activation": "swiglu",
            "position": "rope",
            "num_kv_heads": 2,
            "bias": False,
        },
        True,
    ),
}


def count(config: LMConfig) -> int:
    """The number of parameters of ``config`` (from the shapes; nothing is drawn)."""
    return int(sum(np.prod(shape) for shape in parameter_shapes(config).values()))


def matched_d_ff(config: LMConfig, target: int) -> int:
    """The feed-forward width that brings ``config``'s parameter count closest to
    ``target`` (the smaller width on a tie)."""
    widths = range(1, 8 * config.d_model + 1)
    gaps = [abs(count(dataclasses.replace(config, d_ff=w)) - target) for w in widths]
    return widths[int(np.argmin(gaps))]


def designs() -> dict:
    """``{name: (LMConfig, TrainConfig)}`` for every design, ``d_ff`` matched."""
    target = count(GPT2)
    out = {}
    for name, (changes, adamw) in CHANGES.items():
        config = dataclasses.replace(GPT2, **changes)
        if name != "GPT-2":
            config = dataclasses.replace(config, d_ff=matched_d_ff(config, target))
        cfg = dataclasses.replace(TRAIN, weight_decay=WEIGHT_DECAY if adamw else 0.0)
        out[name] = (config, cfg)
    return out


DESIGNS = designs()


def run(job: tuple) -> dict:
    """Train design ``job[0]`` from seed ``job[1]``; return its stored run."""
    from tqdm.auto import tqdm

    name, seed = job
    config, cfg = DESIGNS[name]
    cfg = dataclasses.replace(cfg, seed=seed)
    _, split = corpus()
    bar = tqdm(total=cfg.max_steps, desc=f"{name}, seed {seed}", mininterval=2.0)
    _, history = train(config, split, cfg, progress=bar)
    return {
        "design": name,
        "seed": seed,
        "config": config.as_dict(),
        "train": cfg.as_dict(),
        "parameters": count(config),
        "history": history.as_dict(),
    }


def summary(runs: list[dict]) -> list[dict]:
    """One row per design (in the order of :data:`CHANGES`): its parameters, ``d_ff``,
    the mean, lowest and highest best validation loss over the seeds, the steps at
    which each seed's best was reached, and how each run stopped."""
    rows = []
    for name in CHANGES:
        group = sorted(
            (r for r in runs if r["design"] == name), key=lambda r: r["seed"]
        )
        losses = np.array([r["history"]["best_validation"] for r in group])
        rows.append(
            {
                "design": name,
                "parameters": group[0]["parameters"],
                "d_ff": group[0]["config"]["d_ff"],
                "seeds": [r["seed"] for r in group],
                "mean": float(losses.mean()),
                "lowest": float(losses.min()),
                "highest": float(losses.max()),
                "best steps": [r["history"]["best_step"] for r in group],
                "stopped": [r["history"]["stopped"] for r in group],
            }
        )
    return rows


def main(argv=None) -> None:
    # imported here, not at the top: the chapter, also in the page's Python (which
    # has no processes), imports this module for DESIGNS alone
    import multiprocessing

    argv = sys.argv[1:] if argv is None else argv
    tokenizer, _ = corpus()
    if tokenizer.vocab_size != GPT2.vocab_size:
        raise SystemExit(f"the corpus has {tokenizer.vocab_size} characters")
    names = argv or list(CHANGES)
    for name in names:
        config, cfg = DESIGNS[name]
        print(f"{name:10s} d_ff={config.d_ff:4d} parameters={count(config):,}")
    jobs = [(name, seed) for seed in SEEDS for name in names]
    with multiprocessing.get_context("spawn").Pool(min(2, len(jobs))) as pool:
        runs = list(pool.imap(run, jobs))
    seconds = sum(r["history"]["cpu_seconds"] for r in runs)
    meta = {
        "rule": (
            f"at most {TRAIN.max_steps} steps (warm-up {TRAIN.warmup}, cosine to a "
            f"tenth), evaluated every {TRAIN.eval_every} steps on {TRAIN.eval_windows} "
            f"validation windows; stop when the validation loss has not improved for "
            f"{TRAIN.patience} evaluations; the best evaluation is kept"
        ),
        "cpu_seconds": round(seconds, 1),
        "runs": runs,
        "summary": summary(runs),
    }
    RESULTS.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {RESULTS}: {len(runs)} runs, {seconds:.0f} CPU seconds", flush=True)


if __name__ == "__main__":
    main()
