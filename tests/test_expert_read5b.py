"""Expert read 5b's definite errors in chapter 9, held by tests.

1. ``bench.png``'s green line (numpy's two products alone) is the median over the
   rounds of a ratio taken within each round, as its caption says and as the table
   below it prints, not a ratio of median times;
2. the tiled form's 37 MiB at 65,536 positions is growth beyond its 48 MiB of inputs,
   and the chapter says so;
3. the self-check question on arithmetic asks about attention without a mask, and its
   feedback on tiles does not claim that every score is computed with one.

Also the cheaper suggestions: the online softmax is compared bit for bit, and the
chapter-9 checkers diagnose a swapped pair (check_merge) and unscaled scores
(check_tiled_attention).
"""

from __future__ import annotations

import importlib.util
import math
import re
from pathlib import Path

import matplotlib.image
import numpy as np
import pandas as pd
from test_exercises_quiz import stored_questions  # tests/ is on the path
from test_expert_read3a import _output, _prose

import attnlib
from attnlib.core.tiled import FULL, SKIPPED, online_softmax_trace, tile_plan
from attnlib.data import examples

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
BENCH_CSV = CHAPTERS / "data" / "bench.csv"
MEMORY = pd.read_csv(CHAPTERS / "data" / "bench_memory.csv")


def _bench_script():
    spec = importlib.util.spec_from_file_location(
        "bench_attention", ROOT / "tests" / "benchmarks" / "bench_attention.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---- 1. the green line is the per-round median the table prints ----------------------


def _printed_products() -> dict:
    """``{(threads, dtype, n): ratio}`` of numpy's two products over torch's fast path,
    no mask, as chapter 9's table cell prints them."""
    text = _output("09_cost", "8a524315")
    printed = {}
    for line in text.splitlines():  # the table: n, mask, plain, tiled, products, t/p
        m = re.match(  # then the tiled / plain column
            r"\s*\d+\s+([\d,]+)\s+none\s+[\d.]+\s+[\d.]+\s+([\d.]+)\s+[\d.]+\s*$", line
        )
        if m:
            printed[(2, "float32", int(m.group(1).replace(",", "")))] = m.group(2)
    for line in text.splitlines():  # the other settings, one line each
        m = re.match(r"\s*(float\d\d), (\d) threads?, n = ([\d, ]+): ([\d., ]+)$", line)
        if m:
            ns = [int(x.replace(",", "")) for x in m.group(3).split(", ")]
            for n, r in zip(ns, m.group(4).split(", ")):
                printed[(int(m.group(2)), m.group(1), n)] = r
    return printed


def test_the_drawn_ceiling_line_is_the_printed_per_round_median():
    bench = _bench_script()
    rows = bench.read_csv(BENCH_CSV)
    lines = bench.ratio_lines(rows)
    printed = _printed_products()
    assert len(printed) == 4 + 3 + 2 + 2  # every no-mask point of the four panels
    drawn = {
        (threads, dtype, n): ratio
        for (threads, dtype, name, causal), pts in lines.items()
        if name == "ceiling"
        for n, ratio in pts
    }
    assert not any(
        causal for (_, _, name, causal) in lines if name == "ceiling"
    )  # drawn without a mask only
    assert set(drawn) == set(printed)
    for key, ratio in drawn.items():
        assert f"{ratio:.2f}" == printed[key], key
    # the ratio of median times, drawn before, does not round to the printed value
    csv = pd.read_csv(BENCH_CSV)
    at = csv[(csv.threads == 2) & (csv.dtype == "float32") & ~csv.causal]
    at = at[at.n == 2048].set_index("candidate").time_median_s
    of_medians = (at.ceiling_qk + at.ceiling_wv) / at.torch_fast
    assert f"{of_medians:.2f}" != printed[(2, "float32", 2048)]


def test_the_other_lines_are_the_tables_ratios():
    bench = _bench_script()
    lines = bench.ratio_lines(bench.read_csv(BENCH_CSV))
    text = _output("09_cost", "8a524315")
    for line in text.splitlines():
        m = re.match(r"\s*\d+\s+([\d,]+)\s+(none|causal)\s+([\d.]+)\s+([\d.]+)\s", line)
        if not m:
            continue
        n, causal = int(m.group(1).replace(",", "")), m.group(2) == "causal"
        for name, shown in (("plain", m.group(3)), ("tiled", m.group(4))):
            drawn = dict(lines[(2, "float32", name, causal)])[n]
            assert f"{drawn:.2f}" == shown, (name, n, causal)


def test_the_stored_figure_is_drawn_from_those_lines(tmp_path):
    bench = _bench_script()
    bench.use_output_dir(tmp_path)
    bench.ratio_figure(bench.read_csv(BENCH_CSV))
    stored = matplotlib.image.imread(CHAPTERS / "images" / "bench.png")
    redrawn = matplotlib.image.imread(tmp_path / "bench.png")
    assert stored.shape == redrawn.shape
    assert np.abs(stored - redrawn).mean() < 1e-3


def test_the_caption_says_how_the_green_line_is_taken():
    nb_caption = _caption("17b1cdc0")
    assert "the green line, drawn without a mask only" in nb_caption
    assert "divided by PyTorch's in the same round" in nb_caption
    assert "only float32 with 2 threads has a point at n = 1,024" in nb_caption


def _caption(cell_id: str) -> str:
    from test_expert_read3a import _cell

    return _cell("09_cost", cell_id).metadata["mystnb"]["figure"]["caption"]


# ---- 2. the memory is growth beyond the inputs ---------------------------------------


def test_the_tiled_memory_is_growth_beyond_its_inputs():
    row = MEMORY[
        (MEMORY.candidate == "tiled") & (MEMORY.n == 65_536) & (MEMORY.heads == 1)
    ].iloc[0]
    inputs = 3 * 65_536 * 64 * 4 / 2**20  # Q, K, V of one head, d = 64, float32
    assert inputs == 48 and round(row.peak_mib) == 37
    printed = _output("09_cost", "cost-memory-summary")
    assert "peak growth 37 MiB beyond its 48 MiB of inputs" in printed
    assert "peak growth 525 MiB beyond its 24 MiB of inputs" in printed
    prose = _prose("09_cost")
    assert "with 37 MiB beyond its inputs (48 MiB)" in prose
    assert "with 37 MiB beyond its 48 MiB of inputs" in prose
    assert "few tens of MiB" not in prose
    assert "(the inputs and the output) plus one tile" not in prose


# ---- 3. the arithmetic question holds with and without a mask ------------------------


def test_the_arithmetic_question_is_asked_without_a_mask():
    questions = stored_questions(CHAPTERS / "09_cost.ipynb")
    q = next(q for q in questions if "of exact attention" in q["question"])
    assert q["question"].startswith("Without a mask,")
    tiles = next(a for a in q["answers"] if "in tiles" in a["answer"])
    assert not tiles["correct"]
    assert "Without a mask every score is still computed once" in tiles["feedback"]
    assert "With a causal mask tiling can skip whole tiles" in tiles["feedback"]
    # what the feedback says, from the tile plan: every tile is computed without a
    # mask, and with a causal one whole tiles are skipped
    assert np.all(tile_plan(512, 512, 128, causal=False) == FULL)
    assert np.any(tile_plan(512, 512, 128, causal=True) == SKIPPED)


# ---- suggestions ---------------------------------------------------------------


def test_the_online_softmax_is_the_softmax_bit_for_bit():
    ex = examples.MACHINE_LEARNING_ROCKS
    plain = attnlib.softmax(ex.scores)
    for block in (1, 2, 3):
        final = online_softmax_trace(ex.scores, np.eye(3), block_size=block)[-1]
        assert np.array_equal(final["output so far"], plain), block
    assert _output("09_cost", "9c804b7e").count("bit for bit: True") == 3


def test_check_merge_diagnoses_a_swapped_pair(capsys):
    from attnlib.exercises.cost import check_merge

    def swapped(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m), m

    assert not check_merge(swapped)
    assert "return (m, l) in that order" in capsys.readouterr().out

    def merge(m_a, l_a, m_b, l_b):
        m = max(m_a, m_b)
        return m, l_a * math.exp(m_a - m) + l_b * math.exp(m_b - m)

    assert check_merge(merge)
    out = capsys.readouterr().out
    assert "+-700" not in out and "near 700, where exp alone overflows" in out
    assert math.exp(-700) > 1e-305  # e^-700 does not underflow


def test_check_tiled_attention_diagnoses_unscaled_scores(capsys):
    from attnlib.exercises.online_softmax import check_tiled_attention

    def unscaled(Q, K, V, block):
        m = np.full((Q.shape[0], 1), -np.inf)
        total = np.zeros((Q.shape[0], 1))
        acc = np.zeros((Q.shape[0], V.shape[1]))
        for start in range(0, K.shape[0], block):
            S = Q @ K[start : start + block].T  # no 1/sqrt(d_k)
            m_new = np.maximum(m, S.max(axis=1, keepdims=True))
            E = np.exp(S - m_new)
            rescale = np.exp(m - m_new)
            total = rescale * total + E.sum(axis=1, keepdims=True)
            acc = rescale * acc + E @ V[start : start + block]
            m = m_new
        return acc / total

    assert not check_tiled_attention(unscaled)
    assert "unscaled dot products" in capsys.readouterr().out
    assert "(scores scaled by $1/\\sqrt{d_k}$)" in _prose("09_cost")
