"""Benchmark: the cost of one generated token with and without the KV cache
(``make bench-lm``).

The model has the sizes of the book's trained language model (its width, layers and
heads) with a longer position table, random float32 parameters (the cost does not
depend on what the parameters are) and a batch of one sequence. At every length ``n``
the token at position ``n`` is produced twice:

* **with the cache**: the cache already holds the ``n - 1`` earlier positions; one
  forward step reads the new token only (``forward(..., caches=..., start=n - 1)``);
* **without**: the whole sequence of ``n`` tokens runs through the model again and the
  last position's logits are kept.

Method. Both are timed in the same process, in alternating rounds (each round times
both, ``REPS`` consecutive calls each; successive rounds swap their order), one BLAS
thread (``OPENBLAS_NUM_THREADS=1``, ``OMP_NUM_THREADS=1`` and threadpoolctl), after a
warm-up call. The clock is processor time of the calling thread
(``time.thread_time``), not the wall clock: on a machine that other jobs share, a
step that waits for a core does not count the wait, so the number measures the step's
own work (the wall-clock time is recorded beside it). It is not immune to the load:
a shared processor cache and memory bandwidth still slow a step that runs beside other
jobs. A round's time of a step is the mean over its ``REPS`` calls; the CSV gives the
median over ``ROUNDS`` rounds with the lowest and highest round, and the ratio of the
two ways taken within each round (median, lowest, highest). The load average is
recorded at the start and the end, and after each length (``load_1min``). The cached
step is timed by resetting the cache's length to ``n - 1`` before every call (it
rewrites the same slot).

Results: ``chapters/attention_that_writes/kv_cache/data/lm_kv_bench.csv`` and
``chapters/attention_that_writes/kv_cache/data/lm_kv_bench.json``.

Usage: ``python tests/benchmarks/bench_kv_cache.py [--quick]``. Not a test: pytest does
not collect it, and nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import sys
import time
from pathlib import Path

# one BLAS thread, set before numpy loads its BLAS (threadpoolctl below as well)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from threadpoolctl import threadpool_limits  # noqa: E402

from attnlib.models import language_model as lm  # noqa: E402
from attnlib.models.kv_cache import KVCache  # noqa: E402
from book_support.experiments.lm_runs import MAIN  # noqa: E402

LENGTHS = (16, 32, 64, 128, 256, 512, 1024)
ROUNDS, REPS = 15, 3
OUT = ROOT / "chapters/attention_that_writes/kv_cache/data"


def _per_call(call, reps: int) -> tuple[float, float]:
    """(processor seconds, wall-clock seconds) per call, the mean of ``reps`` calls."""
    cpu0, wall0 = time.thread_time(), time.perf_counter()
    for _ in range(reps):
        call()
    return (time.thread_time() - cpu0) / reps, (time.perf_counter() - wall0) / reps


def measure(n: int, params, config, rounds: int, reps: int) -> dict:
    """Processor seconds per token with and without the cache at length ``n`` (median,
    lowest and highest round), their ratio within a round, and the wall-clock median."""
    tokens = np.random.default_rng(n).integers(0, config.vocab_size, size=(1, n))
    cache = KVCache(config, 1, n, np.float32)
    lm.forward(params, config, tokens[:, :-1], caches=cache.layers)  # the prefix

    def cached():
        for layer in cache.layers:
            layer.length = n - 1
        return lm.forward(
            params, config, tokens[:, -1:], caches=cache.layers, start=n - 1
        )

    def fresh():
        return lm.forward(params, config, tokens)

    np.testing.assert_allclose(cached()[0][0, -1], fresh()[0][0, -1], atol=1e-3)
    cpu = {"cached": [], "fresh": []}
    wall = {"cached": [], "fresh": []}
    for r in range(rounds):
        order = ("cached", "fresh") if r % 2 == 0 else ("fresh", "cached")
        for name in order:
            c, w = _per_call(cached if name == "cached" else fresh, reps)
            cpu[name].append(c)
            wall[name].append(w)
    ratios = np.array(cpu["fresh"]) / np.array(cpu["cached"])
    row = {"n": n}
    for name in ("cached", "fresh"):
        row[f"{name}_s"] = float(np.median(cpu[name]))
        row[f"{name}_min_s"] = float(np.min(cpu[name]))
        row[f"{name}_max_s"] = float(np.max(cpu[name]))
    row |= {
        "ratio_median": float(np.median(ratios)),
        "ratio_min": float(ratios.min()),
        "ratio_max": float(ratios.max()),
        "cached_wall_s": float(np.median(wall["cached"])),
        "fresh_wall_s": float(np.median(wall["fresh"])),
    }
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 rounds, n up to 256")
    args = parser.parse_args(argv)
    lengths = LENGTHS[:5] if args.quick else LENGTHS
    rounds = 3 if args.quick else ROUNDS
    config = lm.LMConfig(**{**MAIN.as_dict(), "context": max(lengths), "dropout": 0.0})
    params = lm.init_language_model(config, 0, np.float32)
    load_start = os.getloadavg()
    rows = []
    with threadpool_limits(limits=1):
        for n in lengths:
            rows.append(measure(n, params, config, rounds, REPS))
            rows[-1]["load_1min"] = round(os.getloadavg()[0], 2)  # after this length
            print(
                f"n = {n:5d}: processor ms {rows[-1]['cached_s'] * 1e3:8.3f} with "
                f"the cache, {rows[-1]['fresh_s'] * 1e3:9.3f} without, "
                f"ratio {rows[-1]['ratio_median']:7.1f}",
                flush=True,
            )
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "lm_kv_bench.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    meta = {
        "config": config.as_dict(),
        "rounds": rounds,
        "reps": REPS,
        "threads": 1,
        "clock": "time.thread_time (processor time of the calling thread)",
        "blas_threads_env": {
            k: os.environ.get(k) for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")
        },
        "load_average_start": [round(x, 2) for x in load_start],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "numpy": np.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "date": time.strftime("%Y-%m-%d"),
    }
    (OUT / "lm_kv_bench.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {OUT / 'lm_kv_bench.csv'}")


if __name__ == "__main__":
    main()
