"""Benchmark: attnlib's attention against a careful numpy reference and PyTorch (`make
   bench`).

Candidates, all computing ``softmax(Q K^T / sqrt(d)) V`` for 8 heads, d_k = 64:

* ``plain``       attnlib.attention (all n x n scores at once, in place);
* ``tiled``       attnlib.tiled_attention with its default settings (``causal=True``
  when causal: it skips fully masked tiles);
* ``reference``   a short careful numpy version (:func:`reference_attention` below): in
  place, the scale folded into Q, the finiteness check on the row maxima, nothing else;
* ``torch_fast``  torch.nn.functional.scaled_dot_product_attention with 4-D ``(1, H, n,
  d)`` inputs, which takes PyTorch's fused CPU kernel (``is_causal=True`` when causal);
* ``torch_math``  the same function forced onto PyTorch's *math path*
  (``SDPBackend.MATH``), the unfused fallback that 3-D inputs also fall into. Labelled
  as such everywhere.

And numpy's two full-size products (called ``ceiling`` in the CSV's column names):
the two attention-shaped matrix products alone, ``Q K^T`` (H, n, d) x (H, d, n),
written into the whole (H, n, n) array of scores, and ``W V`` (H, n, n) x (H, n, d),
timed with numpy in the same rounds. They are not a bound on numpy attention: they
write the whole table of scores to memory and read it back, which tiled products
avoid, and the tiled form has been measured faster than them (its
``vs_ceiling_median`` is below 1 with a causal mask at n = 2,048 and 4,096 in
float32).

Method. Every candidate is timed in this one process, with the same inputs, in rounds;
each round times every candidate as the best of a few consecutive calls (``reps_for``: 5
up to n = 1,024, 3 above; so that no candidate pays for waking up another's thread
pool), and successive rounds reverse the order of the candidates (``CANDIDATES``, in
which plain and the reference, and tiled and torch's fast path, are neighbours). One
warm-up call each comes first. Ratios are taken within a round and reported as the
minimum and the median over the 15 rounds. This is done at 1 and 2 threads
(threadpoolctl for numpy's BLAS, ``torch.set_num_threads`` for PyTorch), without and
with a causal mask, in float32 and float64. The peak memory of each candidate is
measured in a fresh process (the growth of the resident set during one call, from the
kernel's high-water mark). The load average of the machine is recorded at the start and
end of every configuration.

Results: ``chapters/attention_in_practice/cost/data/bench.csv`` (times and ratios),
``chapters/attention_in_practice/cost/data/bench_memory.csv`` (peak memory),
``chapters/attention_in_practice/cost/data/bench_meta.json`` (machine, load, threads,
versions, BLAS kernel) and the figures
``chapters/attention_in_practice/cost/images/bench.png`` (ratios) and
``chapters/attention_in_practice/cost/images/bench_memory.png`` (peak memory).

Usage:  python tests/benchmarks/bench_attention.py [--quick] [--replot] [--resume]
        [--max-n N] [--skip-memory] [--out DIR]
Not a test: pytest does not collect it, and nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from tqdm import tqdm

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
DATA = ROOT / "chapters/attention_in_practice/cost/data"
IMAGES = ROOT / "chapters/attention_in_practice/cost/images"
CSV_PATH, MEM_PATH = DATA / "bench.csv", DATA / "bench_memory.csv"
META_PATH = DATA / "bench_meta.json"
PNG_PATH, MEM_PNG_PATH = IMAGES / "bench.png", IMAGES / "bench_memory.png"

D, HEADS = 64, 8
# Calls per candidate in a round, of which the best counts: 5 for the short runs (up to
# n = 1,024: tens of milliseconds, where one late thread wake-up weighs most), 3 above.
REPS_BY_MAX_N = ((1024, 5), (math.inf, 3))
# Rounds per configuration. On a shared machine one round's ratio can be off by 30 % or
# more (the speed of the host drifts over seconds; a page fault or another process
# weighs in), so the median needs many: 15 (about 4 minutes at n = 4,096 on 2 threads).
ROUNDS = 15


def reps_for(n: int) -> int:
    """Consecutive calls per candidate and round (the best counts) at length ``n``."""
    return next(reps for max_n, reps in REPS_BY_MAX_N if n <= max_n)


# The order of a round (reversed every other round): the two pairs whose ratios the
# criteria of the cost chapter rest on run next to each other (plain and reference;
# tiled and torch's fast path), so that the machine's speed, which drifts over seconds
# on a shared host, changes least between the two sides of those ratios.
CANDIDATES = [
    "plain",
    "reference",
    "tiled",
    "torch_fast",
    "torch_math",
    "ceiling_qk",
    "ceiling_wv",
]
LABELS = {
    "plain": "attnlib.attention",
    "tiled": "attnlib.tiled_attention",
    "reference": "careful numpy reference",
    "torch_fast": "torch SDPA, fast path (4-D inputs)",
    "torch_math": "torch SDPA, math path (slow fallback)",
    "ceiling_qk": "numpy Q K^T alone",
    "ceiling_wv": "numpy W V alone",
}
TORCH_MATH_MAX_N = 2048  # the math path is not timed beyond this (too slow)
MEMORY_BUDGET = 4 * 2**30  # plain/reference/torch_math are not run above this estimate


# ------------------------------------------------------------------------------
# candidates
def reference_attention(q, k, v, allowed=None):
    """Careful numpy attention: what a numpy expert would write in a dozen lines."""
    q = q * q.dtype.type(1 / math.sqrt(q.shape[-1]))  # scale Q, not the n x n scores
    s = q @ np.swapaxes(k, -1, -2)  # (H, n, n)
    if allowed is not None:
        np.copyto(s, -np.inf, where=~allowed)
    m = s.max(axis=-1, keepdims=True)
    if not np.isfinite(m).all():
        raise OverflowError("a score overflows")
    s -= m
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    return s @ v, s


def make_inputs(n: int, dtype: str, heads: int = HEADS):
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal((heads, n, D)).astype(dtype) for _ in range(3))


def make_calls(n: int, dtype: str, causal: bool, heads: int = HEADS) -> dict:
    """One zero-argument function per candidate, all on the same inputs."""
    import attnlib

    q, k, v = make_inputs(n, dtype, heads)
    mask = attnlib.causal_mask(n) if causal else None  # (n, n) bool, True = may attend
    calls = {
        "plain": lambda: attnlib.attention(q, k, v, mask),
        "tiled": lambda: attnlib.tiled_attention(q, k, v, causal=causal),
        "reference": lambda: reference_attention(q, k, v, mask),
    }
    kt = np.swapaxes(k, -1, -2)
    buffer = {}  # the (H, n, n) product, once

    def ceiling_qk():
        if "scores" not in buffer:
            buffer["scores"] = np.empty((heads, n, n), dtype=dtype)
        return np.matmul(q, kt, out=buffer["scores"])

    calls["ceiling_qk"] = ceiling_qk
    calls["ceiling_wv"] = lambda: buffer["scores"] @ v  # after ceiling_qk's warm-up
    try:
        import torch
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return calls
    tq, tk, tv = (
        torch.from_numpy(a)[None] for a in (q, k, v)
    )  # (1, H, n, d): fast path

    def torch_fast():
        with torch.inference_mode():
            return torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, is_causal=causal
            )

    def torch_math():
        with torch.inference_mode(), sdpa_kernel(SDPBackend.MATH):
            return torch.nn.functional.scaled_dot_product_attention(
                tq, tk, tv, is_causal=causal
            )

    calls["torch_fast"] = torch_fast
    calls["torch_math"] = torch_math
    return calls


def set_threads(threads: int) -> None:
    import threadpoolctl

    threadpoolctl.threadpool_limits(threads)
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass


def blas_info() -> list:
    import threadpoolctl

    return [
        {
            key: lib.get(key)
            for key in (
                "internal_api",
                "version",
                "architecture",
                "threading_layer",
                "num_threads",
                "prefix",
            )
        }
        for lib in threadpoolctl.threadpool_info()
    ]


# ---------------------------------------------------------------------------- timing
# rounds
def best_of(call, reps: int) -> float:
    best = math.inf
    for _ in range(reps):
        t0 = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - t0)
    return best


def time_configuration(threads, dtype, causal, n, rounds=None, reps=None) -> list[dict]:
    """Rounds of best-of-``reps`` times for every candidate; one CSV row per
    candidate."""
    rounds = ROUNDS if rounds is None else rounds
    reps = reps_for(n) if reps is None else reps
    set_threads(threads)
    calls = make_calls(n, dtype, causal)
    names = [
        c
        for c in CANDIDATES
        if c in calls and not (c == "torch_math" and n > TORCH_MATH_MAX_N)
    ]
    load_start = os.getloadavg()[0]
    for name in names:
        calls[name]()  # warm-up, not timed
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:  # alternate who goes first
            times[name].append(best_of(calls[name], reps))
    load_end = os.getloadavg()[0]
    t = {name: np.array(ts) for name, ts in times.items()}
    ceiling = t["ceiling_qk"] + t["ceiling_wv"]  # per round
    flops = 4 * HEADS * n * n * D
    rows = []
    for name in names:
        row = {
            "threads": threads,
            "dtype": dtype,
            "causal": causal,
            "n": n,
            "heads": HEADS,
            "d": D,
            "candidate": name,
            "rounds": rounds,
            "reps": reps,
            "time_min_s": float(t[name].min()),
            "time_median_s": float(np.median(t[name])),
            "gflops_median": flops / 2 / float(np.median(t[name])) / 1e9
            if name.startswith("ceiling")
            else flops / float(np.median(t[name])) / 1e9,
            "load_start": round(load_start, 2),
            "load_end": round(load_end, 2),
        }
        for base in ("torch_fast", "reference", "plain"):
            if base in t and name != base:
                ratio = t[name] / t[base]
                row[f"vs_{base}_min"] = float(ratio.min())
                row[f"vs_{base}_median"] = float(np.median(ratio))
        ratio = t[name] / ceiling
        row["vs_ceiling_min"], row["vs_ceiling_median"] = (
            float(ratio.min()),
            float(np.median(ratio)),
        )
        rows.append(row)
    return rows


# ------------------------------------------------------------------------ memory
# (child)
def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def memory_child(candidate: str, n: int, heads: int, dtype: str, causal: bool) -> dict:
    """Run one call in this fresh process; return the growth of its resident set."""
    set_threads(2)
    small = make_calls(64, dtype, causal, heads=1)
    if candidate in small:
        small[candidate]()  # load libraries, create thread pools
    calls = (
        make_calls(n, dtype, causal, heads)
        if candidate.startswith(("torch", "ceiling"))
        else None
    )
    if calls is None:  # the others: no ceiling's score buffer
        import attnlib

        q, k, v = make_inputs(n, dtype, heads)
        mask = attnlib.causal_mask(n) if causal else None
        calls = {
            "plain": lambda: attnlib.attention(q, k, v, mask),
            "tiled": lambda: attnlib.tiled_attention(q, k, v, causal=causal),
            "reference": lambda: reference_attention(q, k, v, mask),
        }
    base = _status_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # reset VmHWM, the peak (Linux >= 4.0)
    t0 = time.perf_counter()
    calls[candidate]()
    seconds = time.perf_counter() - t0
    peak = (_status_kib("VmHWM") - base) * 1024
    return {"peak_bytes": peak, "seconds": seconds}


def measure_memory(candidate, n, heads, dtype="float32", causal=False) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--memory-child",
        candidate,
        str(n),
        str(heads),
        dtype,
        str(int(causal)),
    ]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    row = {
        "candidate": candidate,
        "n": n,
        "heads": heads,
        "dtype": dtype,
        "causal": causal,
        "scores": heads * n * n,
    }
    if done.returncode != 0:
        row["status"] = (
            "failed: " + (done.stderr.strip().splitlines() or ["?"])[-1][:100]
        )
        return row
    out = json.loads(done.stdout.strip().splitlines()[-1])
    row.update(
        status="ok",
        peak_mib=out["peak_bytes"] / 2**20,
        bytes_per_score=out["peak_bytes"] / (heads * n * n),
        seconds=out["seconds"],
    )
    return row


def plan(quick: bool) -> list[tuple]:
    """The measurements, most important first (results are written after each one).

    ("time", threads, dtype, causal, n) or ("memory", candidate, n, heads, causal).
    """
    if quick:
        return [
            ("memory", c, 256, HEADS, False)
            for c in ("plain", "reference", "torch_fast", "torch_math", "tiled")
        ] + [
            ("time", t, dt, c, 256)
            for t in (1, 2)
            for c in (False, True)
            for dt in ("float32", "float64")
        ]
    key = [("time", 2, "float32", c, n) for n in (2048, 4096) for c in (False, True)]
    key += [
        ("memory", "plain", 4096, HEADS, False),
        ("memory", "tiled", 4096, HEADS, False),
        # 65,536 positions: 8 heads with a causal mask (half the tiles are skipped,
        # which halves the time; the memory is that of the tiles and the inputs)
        ("memory", "tiled", 65_536, HEADS, True),
        ("memory", "tiled", 65_536, 1, False),
    ]
    rest = [("time", 2, "float32", c, n) for n in (512, 1024) for c in (False, True)]
    rest += [("time", 1, "float32", c, n) for n in (512, 2048) for c in (False, True)]
    rest += [
        ("time", t, "float64", c, n)
        for t in (2, 1)
        for n in (512, 2048)
        for c in (False, True)
    ]
    rest += [
        ("memory", c, n, HEADS, False)
        for n in (1024, 2048, 4096)
        for c in ("reference", "torch_fast", "torch_math", "plain", "tiled")
        if (c, n) not in (("plain", 4096), ("tiled", 4096))
    ]
    rest += [("memory", "tiled", 16_384, HEADS, False)]
    rest += [("time", 1, "float32", c, 4096) for c in (False, True)]
    return key + rest


def expected_cost(step: tuple, quick: bool) -> float:
    """A rough relative cost of one measurement, for the progress bar's estimate of the
    time left, in scores computed: every call of every candidate in every round; for a
    memory measurement one call, traced (about twice the work), plus the start of a
    fresh process (about 0.5 s, some 2.5e7 scores at numpy's pace on this machine)."""
    if step[0] == "time":
        _, threads, dtype, causal, n = step
        calls = (2 if quick else ROUNDS) * reps_for(n) * len(CANDIDATES)
        work = calls * HEADS * n * n * (2 if dtype == "float64" else 1)
        return work / threads / (2 if causal else 1)
    _, candidate, n, heads, causal = step
    return 2.5e7 + 2 * heads * n * n


def describe(step: tuple) -> str:
    """One measurement in a few words, for the progress bar."""
    if step[0] == "time":
        _, threads, dtype, causal, n = step
        return f"time, {threads} thr, {dtype}, {'causal' if causal else 'full'}, n={n}"
    _, candidate, n, heads, causal = step
    return f"memory, {candidate}, H={heads}, n={n}{', causal' if causal else ''}"


# ---------------------------------------------------------------------------------
# parent
def parent_main(args) -> None:
    started = time.time()
    try:
        import torch

        torch_version = torch.__version__
    except ImportError:
        torch_version = None
        print(
            "torch is not installed: `make bench` installs it "
            "(tests/benchmarks/requirements.txt)"
        )
    import threadpoolctl

    import attnlib

    load0 = os.getloadavg()
    print(
        f"attention benchmark: {HEADS} heads, d = {D}; load average {load0[0]:.1f} "
        f"on {os.cpu_count()} CPUs (other work slows every candidate)",
        flush=True,
    )
    print("numpy BLAS:", blas_info(), flush=True)
    meta = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime(started)),
        "machine": {
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "system": platform.system(),
        },
        "load_average_1_5_15_start": [round(x, 2) for x in load0],
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "torch": torch_version,
            "threadpoolctl": threadpoolctl.__version__,
            "attnlib": getattr(attnlib, "__version__", None),
        },
        "blas": blas_info(),
        "environment": {
            var: os.environ.get(var)
            for var in (
                "OPENBLAS_CORETYPE",
                "OPENBLAS_L2_SIZE",
                "OPENBLAS_NUM_THREADS",
                "OMP_NUM_THREADS",
            )
        },
        "environment_before_make_bench": os.environ.get("BENCH_ORIGINAL_ENV"),
        "method": {
            "heads": HEADS,
            "d": D,
            "rounds": ROUNDS,
            "reps_per_round_by_n": {
                ("longer" if max_n == math.inf else f"up to {max_n}"): reps
                for max_n, reps in REPS_BY_MAX_N
            },
            "threads": [1, 2],
            "warm_up_calls": 1,
            "ratio": "within each round, then min and median over rounds",
            "ceiling": "numpy Q K^T plus numpy W V, same shapes, same rounds",
            "torch_math_max_n": TORCH_MATH_MAX_N,
        },
        "quick": args.quick,
    }
    calls = make_calls(512, "float64", False)
    want = reference_attention(*make_inputs(512, "float64"))[0]
    meta["max_abs_diff_vs_reference_float64_n512"] = {
        name: float(
            np.abs(
                np.asarray(
                    calls[name]()[0]
                    if name in ("plain", "reference")
                    else calls[name]()
                )
                - want
            ).max()
        )
        for name in ("plain", "tiled", "reference", "torch_fast")
        if name in calls
    }
    del calls

    rows, mem_rows = [], []
    todo = plan(args.quick)
    if args.resume:  # keep what a stopped run measured
        rows = [_typed(r) for r in read_csv(CSV_PATH)]
        mem_rows = [_typed(r) for r in read_csv(MEM_PATH)]
        old = json.loads(META_PATH.read_text())
        meta["resumed_from"] = {
            k: old.get(k)
            for k in (
                "date_utc",
                "duration_s",
                "load_average_1_5_15_start",
                "load_average_1_5_15_end",
                "measurements_done",
            )
        }
    done_time = {(r["threads"], r["dtype"], r["causal"], r["n"]) for r in rows}
    done_memory = {(r["candidate"], r["n"], r["heads"], r["causal"]) for r in mem_rows}
    costs = [expected_cost(step, args.quick) for step in todo]
    progress = tqdm(
        total=sum(costs),
        bar_format="{percentage:3.0f}%|{bar:24}| {desc} "
        "[{elapsed} so far, about {remaining} left]",
        file=sys.stderr,
    )
    for i, step in enumerate(todo):
        if i:  # the previous measurement is done (or was skipped)
            progress.update(costs[i - 1])
        progress.set_description_str(f"{i + 1}/{len(todo)} {describe(step)}")
        if step[0] == "time":
            _, threads, dtype, causal, n = step
            if step[1:] in done_time or n > args.max_n:
                continue
            got = time_configuration(
                threads, dtype, causal, n, rounds=2 if args.quick else None
            )
            rows += got
            show = {r["candidate"]: r for r in got}
            line = ", ".join(
                f"{c} {show[c]['time_median_s'] * 1e3:.1f} ms" for c in show
            )
            ratios = []
            if "vs_reference_median" in show["plain"]:
                ratios.append(
                    f"plain/reference {show['plain']['vs_reference_median']:.2f}"
                )
            if "vs_plain_median" in show["tiled"]:
                ratios.append(f"tiled/plain {show['tiled']['vs_plain_median']:.2f}")
            if "vs_torch_fast_median" in show["tiled"]:
                ratios.append(
                    f"tiled/torch_fast {show['tiled']['vs_torch_fast_median']:.2f}"
                )
            tqdm.write(
                f"{threads} thr {dtype} {'causal' if causal else 'full  '} n={n}: "
                f"{line}; {'; '.join(ratios)} (load {show['plain']['load_end']:.1f})"
            )
        else:
            _, candidate, n, heads, causal = step
            if (
                candidate.startswith("torch")
                and torch_version is None
                or step[1:] in done_memory
                or args.skip_memory
            ):
                continue
            # The memory model: bytes per score as measured at this candidate's largest
            # n so far (smaller n overstate it: fixed costs are spread over fewer
            # scores).
            measured = sorted(
                (r["n"], r["bytes_per_score"])
                for r in mem_rows
                if r["candidate"] == candidate and r.get("status") == "ok"
            )
            if (
                candidate != "tiled"
                and measured
                and measured[-1][1] * heads * n * n > MEMORY_BUDGET
            ):
                mem_rows.append(
                    {
                        "candidate": candidate,
                        "n": n,
                        "heads": heads,
                        "dtype": "float32",
                        "causal": causal,
                        "scores": heads * n * n,
                        "status": f"skipped: {measured[-1][1]:.1f} bytes per score "
                        f"(measured at n = {measured[-1][0]}) would exceed "
                        f"{MEMORY_BUDGET / 2**30:.0f} GiB",
                    }
                )
                continue
            row = measure_memory(candidate, n, heads, causal=causal)
            mem_rows.append(row)
            tqdm.write(
                f"memory {candidate:>10} H={heads} n={n:>6}{' causal' * causal}: "
                + (
                    f"peak {row['peak_mib']:8.1f} MiB = {row['bytes_per_score']:.2f} "
                    "bytes per "
                    f"score"
                    if row["status"] == "ok"
                    else row["status"]
                )
            )
        meta["duration_s"] = round(time.time() - started)
        meta["load_average_1_5_15_end"] = [round(x, 2) for x in os.getloadavg()]
        meta["complete"] = i + 1 == len(todo) and args.max_n >= 4096
        meta["measurements_done"] = f"{i + 1} of {len(todo)}"
        if not args.quick or args.out:  # written after every step: a stopped run keeps
            write_csv(CSV_PATH, rows)  # what it measured, and says so in the metadata
            write_csv(MEM_PATH, mem_rows)
            META_PATH.write_text(json.dumps(meta, indent=2) + "\n")
    progress.update(costs[-1])
    progress.close()
    set_threads(os.cpu_count() or 1)
    if args.quick and not args.out:
        print(json.dumps(meta, indent=1))
        print("--quick: results not written")
        return
    figures(rows, mem_rows)
    print(
        f"wrote {CSV_PATH.name}, {MEM_PATH.name}, {META_PATH.name}, {PNG_PATH.name}, "
        f"{MEM_PNG_PATH.name} in {time.time() - started:.0f} s"
    )


def use_output_dir(out: Path) -> None:
    """Write (and read, for --replot and --resume) the results in ``out``, not the
    book's."""
    global CSV_PATH, MEM_PATH, META_PATH, PNG_PATH, MEM_PNG_PATH
    CSV_PATH, MEM_PATH = out / "bench.csv", out / "bench_memory.csv"
    META_PATH = out / "bench_meta.json"
    PNG_PATH, MEM_PNG_PATH = out / "bench.png", out / "bench_memory.png"


def write_csv(path: Path, rows: list[dict]) -> None:
    fields = []
    for row in rows:
        fields += [key for key in row if key not in fields]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow(
                {
                    key: (round(val, 6) if isinstance(val, float) else val)
                    for key, val in row.items()
                }
            )


# --------------------------------------------------------------------------------
# figures
COLOURS = {
    "plain": "#E69F00",
    "tiled": "#0072B2",
    "reference": "#000000",
    "torch_math": "#CC79A7",
    "ceiling": "#009E73",
}  # Okabe-Ito


def _truthy(x) -> bool:
    return x in (True, "True", "true", 1, "1")


def ratio_lines(rows: list[dict]) -> dict:
    """The points of ``bench.png``: ``{(threads, dtype, name, causal): [(n, ratio)]}``.

    Every ratio is the median over the rounds of a ratio taken within one round, as the
    CSV stores it: a candidate's ``vs_torch_fast_median``, and for the green line
    (``name == "ceiling"``, numpy's two full-size products alone, drawn without a mask
    only)
    ``1 / vs_ceiling_median`` of the torch fast path's row. With an odd number of
    rounds the reciprocal of that median is the median of (qk + wv) / torch_fast.
    """
    lines = {}
    for r in rows:
        threads, dtype, causal = int(r["threads"]), r["dtype"], _truthy(r["causal"])
        if r["candidate"] in ("plain", "tiled", "reference", "torch_math"):
            if r.get("vs_torch_fast_median") in (None, ""):
                continue
            key, ratio = r["candidate"], float(r["vs_torch_fast_median"])
        elif r["candidate"] == "torch_fast" and not causal:
            key, ratio = "ceiling", 1 / float(r["vs_ceiling_median"])
        else:
            continue
        lines.setdefault((threads, dtype, key, causal), []).append((int(r["n"]), ratio))
    return {key: sorted(pts) for key, pts in lines.items()}


def figures(rows: list[dict], mem_rows: list[dict]) -> None:
    ratio_figure(rows)
    memory_figure(mem_rows)


def ratio_figure(rows: list[dict]) -> None:
    """Draw ``bench.png`` from the timing rows (``ratio_lines``)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from book_support.figures import use_book_style

    use_book_style()
    lines = ratio_lines(rows)
    fig, axes = plt.subplots(2, 2, figsize=(10, 7.5), dpi=100, sharex=True)
    for (i, threads), (j, dtype) in [
        ((i, t), (j, dt))
        for i, t in enumerate((1, 2))
        for j, dt in enumerate(("float32", "float64"))
    ]:
        ax = axes[i, j]
        for name in ("plain", "tiled", "reference", "torch_math", "ceiling"):
            for causal, style in ((False, "-"), (True, "--")):
                pts = lines.get((threads, dtype, name, causal))
                if not pts:
                    continue
                ns, med = zip(*pts)
                label = (
                    "numpy's two products at full size"
                    if name == "ceiling"
                    else LABELS[name]
                ) + (", causal" if causal else "")
                ax.plot(
                    ns,
                    med,
                    color=COLOURS[name],
                    linestyle=style,
                    marker="o",
                    markersize=3,
                    label=label,
                )
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        # plain numbers on the ratio axis, not powers of ten
        ax.set_yticks([0.5, 0.7, 1, 1.5, 2, 3, 4, 6])
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.set_title(f"{dtype}, {threads} thread{'s' if threads > 1 else ''}")
        ax.set_ylabel("time / torch fast path (median)")
        if i == 1:
            ax.set_xlabel("sequence length n (8 heads, $d_k$ = 64)")
    handles = {}
    for ax in axes.flat:  # one legend for all panels, below them
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    fig.legend(
        list(handles.values()), list(handles), loc="lower center", ncol=3, fontsize=7
    )
    fig.suptitle("Time relative to PyTorch's fast path (1 = as fast; below 1 = faster)")
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    PNG_PATH.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PNG_PATH, dpi=100)
    plt.close(fig)


def memory_figure(mem_rows: list[dict]) -> None:
    """Draw ``bench_memory.png`` from the memory rows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from book_support.figures import use_book_style

    use_book_style()
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=100)
    for name in ("plain", "reference", "torch_fast", "torch_math", "tiled"):
        pts = sorted(
            (int(r["n"]), float(r["peak_mib"]))
            for r in mem_rows
            if r["candidate"] == name
            and r.get("status") == "ok"
            and int(r["heads"]) == HEADS
        )
        if pts:
            ns, mib = zip(*pts)
            colour = COLOURS.get(name, "#009E73")
            ax.plot(
                ns,
                [max(m, 0.1) for m in mib],
                color=colour,
                marker="o",
                markersize=3,
                linestyle=":" if name == "torch_fast" else "-",
                label=LABELS[name],
            )
    ns = [2**p for p in range(10, 17)]
    ax.plot(
        ns,
        [HEADS * n * n * 4 / 2**20 for n in ns],
        color="grey",
        linestyle="--",
        label="8 x n x n float32 scores",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("sequence length n (8 heads, $d_k$ = 64, float32)")
    ax.set_ylabel("peak extra memory, MiB (2^20 bytes)")
    ax.set_title("Peak memory of one call, each in a fresh process")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(MEM_PNG_PATH, dpi=100)
    plt.close(fig)


def _typed(row: dict) -> dict:
    """A row read back from a CSV file, with its numbers and booleans typed again."""
    out = {}
    for key, val in row.items():
        if val in ("True", "False"):
            out[key] = val == "True"
        else:
            try:
                out[key] = int(val)
            except ValueError:
                try:
                    out[key] = float(val)
                except ValueError:
                    out[key] = val
    return out


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--quick",
        action="store_true",
        help="n = 256 and 2 rounds, to try the script; writes nothing "
        "unless --out is given",
    )
    parser.add_argument(
        "--replot",
        action="store_true",
        help="redraw the figures from the stored CSV files without measuring",
    )
    parser.add_argument(
        "--replot-ratios",
        action="store_true",
        help="redraw only bench.png from the stored bench.csv, without measuring",
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="keep the stored results and measure only what they lack",
    )
    parser.add_argument(
        "--max-n",
        type=int,
        default=65_536,
        help="time only sequence lengths up to this (memory is not limited)",
    )
    parser.add_argument("--skip-memory", action="store_true", help="time only")
    parser.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the CSV, metadata and figures in this directory instead "
        "of the cost chapter's data/ and images/ (a trial run)",
    )
    parser.add_argument("--memory-child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.out:
        use_output_dir(args.out.resolve())
    if args.memory_child:
        candidate, n, heads, dtype, causal = args.memory_child
        print(
            json.dumps(
                memory_child(candidate, int(n), int(heads), dtype, causal == "1")
            )
        )
    elif args.replot_ratios:
        ratio_figure(read_csv(CSV_PATH))
        print(f"redrew {PNG_PATH.name}")
    elif args.replot:
        figures(read_csv(CSV_PATH), read_csv(MEM_PATH))
        print(f"redrew {PNG_PATH.name} and {MEM_PNG_PATH.name}")
    else:
        parent_main(args)


if __name__ == "__main__":
    main()
