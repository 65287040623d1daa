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

Two more parts, each stored beside the table's runs:

* ``rule``: GPT-2's block and the modern block from each of :data:`SEEDS` by
  :data:`RULE_TRAIN`, the same settings with a constant learning rate after the
  warm-up, so that the patience rule, not the schedule or the step cap, ends the run
  (``rule:<design>:<seed>`` trains one of these runs);
* ``window``: the modern block with a sliding window of :data:`WINDOW` positions
  (:data:`WINDOW_MODEL`), trained like the table's runs from seed 0; its weights go
  to ``data/modern_window.npz``, for generating past the training context.

``python modern_decoder_runs.py [table|rule|window|<design>|rule:<design>:<seed> ...]
[--serial]`` trains
the parts named (all three by default; a design's name trains that design's seeds
alone, into the table; the table's runs in two processes, one core each, or one with
``--serial``) and writes ``data/modern_runs.json`` (histories, no weights), keeping
what it did not train.
The chapter reads these files; it never trains.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
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
#: The rule-only runs: a constant learning rate after the warm-up, a cap far away.
RULE_TRAIN = dataclasses.replace(TRAIN, schedule="constant", max_steps=20000)
RULE_DESIGNS = ("GPT-2", "modern")
#: The sliding window of the window model (positions each query reads, itself included).
WINDOW = 16
WINDOW_WEIGHTS = Path(__file__).resolve().with_name("data") / "modern_window.npz"

#: The model changes of each design (LMConfig fields) and whether it trains with AdamW.
CHANGES = {
    "GPT-2": ({}, False),
    "+ RMSNorm": ({"norm": "rms"}, False),
    "+ SwiGLU": ({"activation": "swiglu"}, False),
    "+ RoPE": ({"position": "rope"}, False),
    "+ AdamW": ({}, True),
    "+ GQA": ({"num_kv_heads": 2}, False),
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
#: The modern block with a sliding window (same parameters: the window adds none).
WINDOW_MODEL = dataclasses.replace(DESIGNS["modern"][0], window=WINDOW)


def run(job: tuple, rule: bool = False, config=None, weights=None) -> dict:
    """Train design ``job[0]`` from seed ``job[1]`` (by :data:`RULE_TRAIN`'s schedule
    and cap if ``rule``; with ``config`` instead of the design's, if given; its weights
    saved to ``weights`` as float32, if given); return its stored run."""
    from tqdm.auto import tqdm

    name, seed = job
    design, cfg = DESIGNS[name]
    config = design if config is None else config
    if rule:
        cfg = dataclasses.replace(
            cfg, schedule=RULE_TRAIN.schedule, max_steps=RULE_TRAIN.max_steps
        )
    cfg = dataclasses.replace(cfg, seed=seed)
    _, split = corpus()
    bar = tqdm(total=cfg.max_steps, desc=f"{name}, seed {seed}", mininterval=2.0)
    params, history = train(config, split, cfg, progress=bar)
    if weights is not None:
        np.savez_compressed(
            weights, **{k: v.astype(np.float32) for k, v in params.items()}
        )
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
        if not group:
            continue
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


def welch(a, b) -> dict:
    """Welch's test of the difference of two means, for samples that are not paired.

    ``t = (mean(a) - mean(b)) / sqrt(s_a^2 / n_a + s_b^2 / n_b)`` with the sample
    variances ``s^2`` (divisor ``n - 1``), its degrees of freedom by the
    Welch-Satterthwaite equation ``df = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2 /
    (n_a - 1) + (s_b^2/n_b)^2 / (n_b - 1))``, and the two-sided p-value ``P(|T| >=
    |t|)`` for Student's t with ``df`` degrees of freedom, which equals the regularised
    incomplete beta function ``I_x(df / 2, 1 / 2)`` at ``x = df / (df + t^2)``.
    Returns ``{"t", "df", "p"}`` (floats). Raises ``ValueError`` for a sample of fewer
    than two values or two samples without spread.

    Source: Welch (1947), "The generalization of Student's problem when several
    different population variances are involved"; the incomplete beta function by its
    continued fraction, as in Press et al., *Numerical Recipes*, section 6.4.
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        raise ValueError(
            f"each sample needs at least two values; got {a.size}, {b.size}"
        )
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    if va + vb == 0:
        raise ValueError("both samples have no spread; t is undefined")
    t = (a.mean() - b.mean()) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    p = _incomplete_beta(df / (df + t**2), df / 2, 0.5)
    return {"t": float(t), "df": float(df), "p": float(p)}


def permutation_p(a, b) -> float:
    """The exact two-sided permutation test of the difference of two means.

    The pooled ``n_a + n_b`` values are split into groups of ``n_a`` and ``n_b`` in all
    ``C(n_a + n_b, n_a)`` ways; ``p`` is the share of splits whose ``|mean difference|``
    is at least the observed one (to 1e-12), so it assumes nothing about how the values
    are spread, only that the runs could have been exchanged. Its smallest possible
    value is ``2 / C(n_a + n_b, n_a)`` (the observed split and its mirror image when
    ``n_a = n_b``), 0.1 for three values against three. Returns a float; raises
    ``ValueError`` for an empty sample.

    Source: Fisher (1935), *The Design of Experiments*, chapter III (the randomisation
    test of Darwin's paired plants).
    """
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        raise ValueError(f"each sample needs a value; got {a.size}, {b.size}")
    pooled, total = np.concatenate([a, b]), a.sum() + b.sum()
    observed = abs(a.mean() - b.mean())
    hits = splits = 0
    for group in itertools.combinations(range(pooled.size), a.size):
        first = pooled[list(group)].sum()
        gap = abs(first / a.size - (total - first) / b.size)
        hits += gap >= observed - 1e-12
        splits += 1
    return hits / splits


def _incomplete_beta(x: float, a: float, b: float) -> float:
    """The regularised incomplete beta function ``I_x(a, b)``, for ``0 <= x <= 1``,
    from its continued fraction (modified Lentz's method), to about 1e-14."""
    if x <= 0 or x >= 1:
        return float(x >= 1)
    if x > (a + 1) / (a + b + 2):  # the fraction converges fast only below this
        return 1.0 - _incomplete_beta(1 - x, b, a)
    log_front = (
        math.lgamma(a + b)
        - math.lgamma(a)
        - math.lgamma(b)
        + a * math.log(x)
        + b * math.log1p(-x)
    )
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    fraction = d
    for m in range(1, 500):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            fraction *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * fraction / a


def _rule(cfg: TrainConfig) -> str:
    """The stopping rule of ``cfg`` in words."""
    schedule = "cosine to a tenth" if cfg.schedule == "cosine" else "then constant"
    return (
        f"at most {cfg.max_steps} steps (warm-up {cfg.warmup}, {schedule}), evaluated "
        f"every {cfg.eval_every} steps on {cfg.eval_windows} validation windows; stop "
        f"when the validation loss has not improved for {cfg.patience} evaluations; "
        "the best evaluation is kept"
    )


def main(argv=None) -> None:
    # imported here, not at the top: the chapter, also in the page's Python (which
    # has no processes), imports this module for DESIGNS alone
    import multiprocessing

    argv = sys.argv[1:] if argv is None else argv
    serial = "--serial" in argv
    parts = [a for a in argv if a != "--serial"] or ["table", "rule", "window"]
    rule_parts = {f"rule:{n}:{seed}" for n in RULE_DESIGNS for seed in SEEDS}
    unknown = set(parts) - {"table", "rule", "window", *CHANGES, *rule_parts}
    if unknown:
        raise SystemExit(
            f"unknown parts {sorted(unknown)}: table, rule, window or a "
            f"design of {list(CHANGES)}"
        )
    tokenizer, _ = corpus()
    if tokenizer.vocab_size != GPT2.vocab_size:
        raise SystemExit(f"the corpus has {tokenizer.vocab_size} characters")
    meta = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    names = list(CHANGES) if "table" in parts else [n for n in CHANGES if n in parts]
    if names:
        for name in names:
            config, cfg = DESIGNS[name]
            print(f"{name:10s} d_ff={config.d_ff:4d} parameters={count(config):,}")
        jobs = [(name, seed) for seed in SEEDS for name in names]
        if serial:
            runs = [run(job) for job in jobs]
        else:
            with multiprocessing.get_context("spawn").Pool(2) as pool:
                runs = list(pool.imap(run, jobs))
        kept = [r for r in meta.get("runs", []) if r["design"] not in names]
        order = {name: i for i, name in enumerate(CHANGES)}
        runs = sorted(kept + runs, key=lambda r: (r["seed"], order[r["design"]]))
        meta["rule"] = _rule(TRAIN)
        meta["cpu_seconds"] = round(sum(r["history"]["cpu_seconds"] for r in runs), 1)
        meta["runs"] = runs
        meta["summary"] = summary(runs)
    rule_jobs = [(n, seed) for seed in SEEDS for n in RULE_DESIGNS] * ("rule" in parts)
    rule_jobs += [(p.split(":")[1], int(p.split(":")[2])) for p in parts if ":" in p]
    for job in rule_jobs:  # one at a time, each stored as soon as it ends
        new = run(job, rule=True)
        part = meta.setdefault("rule runs", {"runs": []})
        part["rule"] = _rule(RULE_TRAIN)
        kept = [r for r in part["runs"] if (r["design"], r["seed"]) != job]
        part["runs"] = sorted(
            kept + [new], key=lambda r: (RULE_DESIGNS.index(r["design"]), r["seed"])
        )
        RESULTS.write_text(json.dumps(meta, indent=1) + "\n")
    if "window" in parts:
        meta["window run"] = run(
            ("modern", 0), config=WINDOW_MODEL, weights=WINDOW_WEIGHTS
        )
    RESULTS.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {RESULTS} ({', '.join(parts)})", flush=True)


if __name__ == "__main__":
    main()
