"""Benchmark: time and peak memory of attention as the sequence grows (`make bench`).

Measures, for n = 128 ... 65,536 positions, d = 64, float32, with 1 and 8 heads:

* ``plain``  attnlib.attention: all n x n scores at once (attnlib computes in float64 inside);
* ``tiled``  attnlib.tiled_attention: online softmax, one tile of scores at a time (float32);
* ``torch``  torch.nn.functional.scaled_dot_product_attention on the CPU, same threads and
  dtype, only if torch is importable (a benchmark-only extra, never a requirement of the book).

Every measurement runs in a fresh Python process, so its peak memory (the growth of the
resident set while the call runs, read from /proc/self/status after resetting the high-water
mark) is its own. Achieved GFLOP/s counts 4 n^2 d floating-point operations per head (two
matrix products of 2 n^2 d each) and is printed beside numpy's own matrix-multiply GFLOP/s.

Results: ``chapters/data/bench.csv`` (one row per measurement or skip),
``chapters/data/bench_meta.json`` (machine, versions, matmul GFLOP/s, targets) and
``chapters/images/bench.png`` (the figure the cost chapter shows).

Usage:  python tests/benchmarks/bench_attention.py [--quick] [--threads 2]
Not a test: pytest does not collect it, and nothing here asserts a time.
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CSV_PATH = ROOT / "chapters" / "data" / "bench.csv"
META_PATH = ROOT / "chapters" / "data" / "bench_meta.json"
PNG_PATH = ROOT / "chapters" / "images" / "bench.png"

D = 64
SIZES = [128 * 2**i for i in range(10)]          # 128 ... 65,536
HEADS = [1, 8]
PLAIN_PEAK_BUDGET = 4 * 2**30    # skip the plain form when its estimated peak exceeds 4 GiB
PLAIN_PEAK_PER_SCORE = 12        # measured: attnlib.attention's peak is ~11 bytes per float32 score
PLAIN_MAX_SCORES = 8_192**2      # time budget: plain up to 1 head x 8,192^2 or 8 heads x 2,048^2
MAX_SCORES = {"tiled": 65_536**2,   # time budget: up to 1 x 65,536^2 or 8 x 16,384^2 scores
              "torch": 16_384**2}   # up to 1 x 16,384^2 or 8 x 4,096^2 scores
FIELDS = ["method", "heads", "n", "d", "dtype", "threads", "status", "time_s", "repeats",
          "peak_mib", "scores_mib", "gflops"]     # MiB = 2**20 bytes


# ----------------------------------------------------------------------------- child side
def _rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")          # resets VmHWM, the peak resident set size (Linux >= 4.0)
        return True
    except OSError:
        return False


def _peak_rss_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _run_one(method: str, heads: int, n: int, threads: int) -> dict:
    """Time one method on one shape in this (fresh) process; return time and peak memory."""
    import numpy as np
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((heads, n, D), dtype=np.float32) for _ in range(3))
    if method == "plain":
        import attnlib
        call = lambda: attnlib.attention(q, k, v)  # noqa: E731
    elif method == "tiled":
        import attnlib
        call = lambda: attnlib.tiled_attention(q, k, v, workers=threads)  # noqa: E731
    elif method == "torch":
        import torch
        torch.set_num_threads(threads)
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))

        def call():
            with torch.inference_mode():
                return torch.nn.functional.scaled_dot_product_attention(tq, tk, tv)
    else:
        raise ValueError(method)
    big = heads * n * n >= 2**28
    if not big:
        call()                                    # warm-up (not timed)
    times, peak = [], 0
    budget = 0.5 if not big else 0.0              # repeat small sizes for ~0.5 s, at most 5 times
    while True:
        base = _rss_bytes()
        _reset_peak()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
        peak = max(peak, _peak_rss_bytes() - base)
        if len(times) >= 5 or sum(times) >= budget:
            break
    return {"time_s": min(times), "repeats": len(times), "peak_mib": peak / 2**20}


def _matmul_gflops() -> float:
    """numpy's own float32 matrix product speed: 2 * 2048^3 operations, best of 3."""
    import numpy as np
    a = np.random.default_rng(0).standard_normal((2048, 2048), dtype=np.float32)
    a @ a
    best = min(_timed(lambda: a @ a) for _ in range(3))
    return 2 * 2048**3 / best / 1e9


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _check_equal(heads: int, n: int) -> float:
    """max |tiled - plain| on one float32 input (the 1e-5 target)."""
    import numpy as np
    import attnlib
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((heads, n, D), dtype=np.float32) for _ in range(3))
    plain, _ = attnlib.attention(q, k, v)
    return float(np.abs(attnlib.tiled_attention(q, k, v) - plain).max())


def child_main(args) -> None:
    if args.child == "matmul":
        out = {"gflops": _matmul_gflops()}
    elif args.child == "check":
        out = {"max_abs_diff": _check_equal(args.heads, args.n)}
    else:
        out = _run_one(args.child, args.heads, args.n, args.threads)
    print(json.dumps(out))


# ---------------------------------------------------------------------------- parent side
def _spawn(kind: str, threads: int, blas_threads: int, heads: int = 1, n: int = 0) -> dict:
    env = dict(os.environ)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(blas_threads)
    cmd = [sys.executable, __file__, "--child", kind, "--heads", str(heads), "--n", str(n),
           "--threads", str(threads)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _torch_version() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.__version__


def _plan(method: str, heads: int, n: int, quick: bool) -> str:
    """'' to measure, or the reason for skipping."""
    scores = heads * n * n
    if quick and n > 4096:
        return "skipped: --quick"
    if method == "plain" and scores * PLAIN_PEAK_PER_SCORE > PLAIN_PEAK_BUDGET:
        return (f"skipped: scores {scores * 4 / 2**30:.1f} GiB in float32, "
                f"est. peak {scores * PLAIN_PEAK_PER_SCORE / 2**30:.0f} GiB > 4 GiB")
    if scores > (PLAIN_MAX_SCORES if method == "plain" else MAX_SCORES[method]):
        return "skipped: time budget"
    return ""


def parent_main(args) -> None:
    threads = args.threads
    torch_version = _torch_version()
    methods = ["plain", "tiled"] + (["torch"] if torch_version else [])
    load_start = os.getloadavg()[0]
    print(f"attention benchmark: d={D}, float32, {threads} threads, n = {SIZES[0]} ... {SIZES[-1]}"
          f" (load average {load_start:.1f} on {os.cpu_count()} CPUs: other work slows every row)")
    if torch_version is None:
        print("torch was not found: measuring attnlib only "
              "(for the comparison: .venv/bin/pip install torch==2.13.0; never a book requirement)")
    matmul = {"blas_threads_%d" % t: _spawn("matmul", 1, t).get("gflops") for t in (threads, 1)}
    print("numpy matmul (2048 x 2048, float32): "
          + ", ".join(f"{v:.1f} GFLOP/s with {k.split('_')[-1]} BLAS thread(s)"
                      for k, v in matmul.items() if v))
    rows = []
    header = f"{'method':>6} {'H':>2} {'n':>6} {'time s':>9} {'peak MiB':>9} {'GFLOP/s':>8}  note"
    print(header)
    for heads in HEADS:
        for n in SIZES:
            for method in methods:
                row = {"method": method, "heads": heads, "n": n, "d": D, "dtype": "float32",
                       "threads": threads, "scores_mib": round(heads * n * n * 4 / 2**20, 3),
                       "status": "", "time_s": "", "repeats": "", "peak_mib": "", "gflops": ""}
                reason = _plan(method, heads, n, args.quick)
                if not reason:
                    # numpy's element-wise functions use one core; the tiled form spreads its
                    # query blocks over `threads` Python threads with single-threaded BLAS.
                    blas = 1 if method == "tiled" else threads
                    res = _spawn(method, threads, blas, heads, n)
                    if "error" in res:
                        reason = "failed: " + res["error"][:80]
                    else:
                        flops = 4 * n * n * D * heads
                        row.update(status="ok", time_s=round(res["time_s"], 6),
                                   repeats=res["repeats"], peak_mib=round(res["peak_mib"], 1),
                                   gflops=round(flops / res["time_s"] / 1e9, 2))
                if reason:
                    row["status"] = reason
                rows.append(row)
                if row["status"] == "ok":
                    print(f"{method:>6} {heads:>2} {n:>6} {row['time_s']:>9.4f} "
                          f"{row['peak_mib']:>9.1f} {row['gflops']:>8.2f}")
                else:
                    print(f"{method:>6} {heads:>2} {n:>6} {'-':>9} {'-':>9} {'-':>8}  {row['status']}")
                sys.stdout.flush()
    diff = _spawn("check", threads, threads, 8, 2048 if not args.quick else 512)
    targets = _targets(rows, diff.get("max_abs_diff"), torch_version)
    print("\ntargets (issue 9):")
    for t in targets:
        print(f"  [{'met' if t['met'] else 'NOT met' if t['met'] is False else 'n/a'}] "
              f"{t['target']}: {t['measured']}")
    if args.quick:
        print("--quick: results not written")
        return
    CSV_PATH.parent.mkdir(parents=True, exist_ok=True)
    with open(CSV_PATH, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=FIELDS)
        writer.writeheader()
        writer.writerows(rows)
    import numpy as np
    meta = {"machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
            "python": platform.python_version(), "numpy": np.__version__,
            "torch": torch_version, "threads": threads, "d": D, "dtype": "float32",
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
            "load_average_start_end": [round(load_start, 2), round(os.getloadavg()[0], 2)],
            "matmul_gflops": matmul, "tiled_vs_plain_max_abs_diff": diff.get("max_abs_diff"),
            "targets": targets}
    META_PATH.write_text(json.dumps(meta, indent=2) + "\n")
    _figure(rows)
    print(f"\nwrote {CSV_PATH}, {META_PATH}, {PNG_PATH}")


def _lookup(rows, method, heads, n):
    for r in rows:
        if (r["method"], r["heads"], r["n"]) == (method, heads, n) and r["status"] == "ok":
            return r
    return None


def _targets(rows, max_diff, torch_version) -> list[dict]:
    out = []
    p, t = _lookup(rows, "plain", 8, 2048), _lookup(rows, "torch", 8, 2048)
    if p and t:
        ratio = p["time_s"] / t["time_s"]
        tiled = _lookup(rows, "tiled", 8, 2048)
        extra = f"; tiled/torch {tiled['time_s'] / t['time_s']:.2f}x" if tiled else ""
        out.append({"target": "plain within 1.25x of torch SDPA (n=2048, d=64, 8 heads)",
                    "met": ratio <= 1.25,
                    "measured": f"plain {p['time_s']:.3f} s, torch {t['time_s']:.3f} s: "
                                f"{ratio:.2f}x{extra}"})
    else:
        out.append({"target": "plain within 1.25x of torch SDPA (n=2048, d=64, 8 heads)",
                    "met": None, "measured": "torch not installed" if not torch_version
                    else "not measured"})
    big = _lookup(rows, "tiled", 1, 65_536)
    out.append({"target": "tiled reaches n=65,536 (1 head) with peak < 512 MB",
                "met": (big["peak_mib"] * 2**20 < 512e6) if big else None,
                "measured": (f"peak {big['peak_mib']:.1f} MiB in {big['time_s']:.1f} s "
                             f"(plain would need {65_536**2 * 4 / 2**30:.0f} GiB of scores)")
                if big else "not measured"})
    ratios = []
    for r in rows:
        if r["method"] == "plain" and r["status"] == "ok":
            tl = _lookup(rows, "tiled", r["heads"], r["n"])
            if tl:
                ratios.append((tl["time_s"] / r["time_s"], r["heads"], r["n"]))
    if ratios:
        worst = max(ratios)
        out.append({"target": "tiled within 1.5x of plain wherever plain fits",
                    "met": worst[0] <= 1.5,
                    "measured": f"worst tiled/plain {worst[0]:.2f}x at H={worst[1]}, n={worst[2]}; "
                                f"best {min(ratios)[0]:.3g}x"})
    out.append({"target": "tiled equals plain within 1e-5 in float32 (n=2048, 8 heads)",
                "met": max_diff is not None and max_diff <= 1e-5,
                "measured": f"max |tiled - plain| = {max_diff:.2e}" if max_diff is not None
                else "not measured"})
    return out


def _typed(row: dict) -> dict:
    """A CSV row with its numbers as numbers again."""
    for key in ("heads", "n", "d", "threads"):
        row[key] = int(row[key])
    for key in ("time_s", "peak_mib", "scores_mib", "gflops"):
        row[key] = float(row[key]) if row[key] != "" else ""
    return row


def _figure(rows) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from attnlib.plots import use_book_style
    use_book_style()
    colours = {"plain": "#E69F00", "tiled": "#0072B2", "torch": "#009E73"}   # Okabe-Ito
    labels = {"plain": "attnlib.attention (all scores)", "tiled": "attnlib.tiled_attention",
              "torch": "torch SDPA (CPU)"}
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), dpi=100)
    for method in ("plain", "tiled", "torch"):
        for heads, style in ((1, "-"), (8, "--")):
            pts = [(r["n"], r["time_s"], r["peak_mib"]) for r in rows
                   if r["method"] == method and r["heads"] == heads and r["status"] == "ok"]
            if not pts:
                continue
            ns, ts, ms = zip(*pts)
            kw = dict(color=colours[method], linestyle=style, marker="o", markersize=3,
                      label=f"{labels[method]}, {heads} head{'s' if heads > 1 else ''}")
            axes[0].plot(ns, ts, **kw)
            axes[1].plot(ns, [max(m, 0.1) for m in ms], **kw)
    ns = sorted({r["n"] for r in rows})
    axes[1].plot(ns, [n * n * 4 / 2**20 for n in ns], color="grey", linestyle=":",
                 label="n x n float32 scores, 1 head")
    for ax, title, unit in ((axes[0], "Time", "seconds"),
                            (axes[1], "Peak extra memory", "MiB (2^20 bytes)")):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length n")
        ax.set_ylabel(unit)
        ax.set_title(title)
    axes[1].axhline(512e6 / 2**20, color="black", linewidth=0.8)
    axes[1].text(ns[0], 560, "512 MB (the target for n = 65,536)", fontsize=8)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    PNG_PATH.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(PNG_PATH, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n <= 4096 only; write nothing")
    parser.add_argument("--threads", type=int, default=min(os.cpu_count() or 1, 2))
    parser.add_argument("--replot", action="store_true",
                        help="redraw the figure from the stored CSV without measuring")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--heads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child_main(args)
    elif args.replot:
        with open(CSV_PATH, newline="") as f:
            rows = [_typed(r) for r in csv.DictReader(f)]
        _figure(rows)
        print(f"redrew {PNG_PATH} from {CSV_PATH}")
    else:
        parent_main(args)


if __name__ == "__main__":
    main()
