"""Expert read 4b's definite errors (chapter 9, and 9b where 9 relies on it), held by
tests.

Each test recomputes the fact from the stored benchmark, the tile code or a closed
form and compares it with what the chapters print or say:

1. numpy's two full-size products (the "ceiling") are described as what they are, not
   as a bound on every numpy attention;
2. the crossover question diagnoses the slips at 2,048 and 4,096 correctly;
3. the tile and score counts are never told they were rounded (tests in
   ``test_exercises_cost.py``);
4. the explorer's caption gives the state the website's widget starts in;
5. the share of scores a causal mask saves is counted with the chapter's own tiles.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from test_exercises_quiz import stored_questions  # tests/ is on the path
from test_expert_read3a import _cell, _output, _prose

from attnlib.core.tiled import default_block_sizes
from attnlib.figures.explorers import CostExplorer

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
BENCH = pd.read_csv(CHAPTERS / "data" / "bench.csv")
F32_2 = (BENCH.threads == 2) & (BENCH.dtype == "float32")


# ---- 1. the ceiling is full-size products, not a bound -------------------------------


def test_the_ceiling_is_described_as_full_size_products_not_a_bound():
    script = (ROOT / "tests" / "benchmarks" / "bench_attention.py").read_text()
    # what the ceiling times: Q K^T into a preallocated (heads, n, n) array of scores
    assert 'out=buffer["scores"]' in script
    p09, p09b = _prose("09_cost"), _prose("09b_benchmark_method")
    for gone in (
        "no version built on numpy's matrix products can close",
        "round by round",
        "its matrix products themselves run faster than numpy's",
        "the rest of the gap comes from fusion and faster matrix products",
    ):
        assert gone not in p09, gone
    for gone in (
        "No numpy attention that computes every score can be faster than the ceiling",
        "can close the gap in that setting",
        "the remaining gap cannot come from faster products",
    ):
        assert gone not in p09b, gone
    assert "These products are not a bound on what numpy can do" in p09
    assert "the benchmark did not time the same products done tile by tile" in p09
    assert "they are not a bound on numpy's products done tile by tile" in p09b
    assert "Full-size products are no bound on tiled ones" in p09
    # the medians the prose quotes: numpy's products / torch's whole attention
    torch = BENCH[(BENCH.candidate == "torch_fast") & F32_2 & ~BENCH.causal]
    ratio = 1 / torch[torch.n >= 1024].vs_ceiling_median
    assert f"(medians {ratio.min():.2f} to {ratio.max():.2f})" in p09
    assert ratio.max() < 1.1  # "about as long ... or a little less"


# ---- 2. the crossover question's slips -----------------------------------------------


def _crossover_question() -> dict:
    questions = stored_questions(CHAPTERS / "09_cost.ipynb")
    return next(q for q in questions if q["type"] == "numeric")


def _feedback(q: dict, value: float) -> str:
    for a in q["answers"]:
        lo, hi = a["range"]
        if lo <= value <= hi:
            return a["feedback"]
    return ""


def test_crossover_slips_name_the_mistake_that_gives_them():
    d = 1024
    q = _crossover_question()
    n = np.arange(1, 8 * d + 1)

    def meet(attention, dense):  # the n at which the two counts are equal
        return int(n[attention(n) == dense(n)][0])

    right = meet(lambda n: 4 * n**2 * d, lambda n: 24 * n * d**2)
    forgot_ffn = meet(lambda n: 4 * n**2 * d, lambda n: 8 * n * d**2)
    forgot_projections = meet(lambda n: 4 * n**2 * d, lambda n: 16 * n * d**2)
    only_qk = meet(lambda n: 2 * n**2 * d, lambda n: 8 * n * d**2)
    assert (right, forgot_ffn, forgot_projections, only_qk) == (6144, 2048, 4096, 4096)
    assert _feedback(q, right).startswith("Correct")
    assert "feed-forward network too" in _feedback(q, forgot_ffn)
    assert "four projections too" in _feedback(q, forgot_projections)
    assert "Q K^T" in _feedback(q, only_qk)
    assert "about which" not in q["question"]  # the answer is exact


# ---- 4. the explorer's starting state ------------------------------------------------


def test_explorer_caption_gives_the_state_both_explorers_start_in():
    start = CostExplorer.START
    assert start in CostExplorer.LENGTHS
    assert CostExplorer(live_figure=False).n.value == start
    meta = _cell("09_cost", "b5cfe68e").metadata["mystnb"]
    assert f"n = {start:,}," in meta["figure"]["caption"]
    assert f"n = {start:,}" in meta["image"]["alt"]
    assert "n = 1,000" not in meta["figure"]["caption"]


# ---- 5. what a causal mask saves, counted --------------------------------------------


def _computed_share(n: int) -> float:
    # closed form: query block i (of T = n / block_q) sees keys up to its last query,
    # block_q * i of them, so block_q^2 * T (T + 1) / 2 scores are computed
    block_q, _ = default_block_sizes(n, n)
    t = n // block_q
    assert t * block_q == n
    return block_q**2 * t * (t + 1) / 2 / n**2


def test_causal_share_is_printed_from_the_tile_plan_and_the_prose_follows():
    out = _output("09_cost", "cost-causal-share")
    for n in (512, 1024, 2048, 4096):
        share = _computed_share(n)
        assert f"n = {n:,}," in out
        assert f"computes {share:.1%} of the n x n scores, skips {1 - share:.1%}" in out
    assert abs(_computed_share(512) - 0.75) < 1e-12  # "a quarter" skipped
    assert 0.45 < 1 - _computed_share(4096) < 0.5  # "nearly half"
    p09 = _prose("09_cost")
    assert "about half the work" not in p09
    assert "a quarter of the scores at $n = 512$, nearly half at 4,096" in p09
    low, high = (f"{_computed_share(n):.1%}".replace("%", " %") for n in (1024, 4096))
    assert f"falls from {low} to {high}" in p09


def test_causal_slope_is_compared_with_the_count_and_the_drift():
    ns = np.array([1024, 2048, 4096])
    counted = [_computed_share(n) * n**2 for n in ns]
    x = np.log(ns)
    slope = np.polyfit(x, np.log(counted), 1)[0]
    out = _output("09_cost", "cost-tiled-slope")
    assert f"grow like n^{slope:.2f}" in out
    p09 = _prose("09_cost")
    assert f"$n^{{{slope:.2f}}}$" in p09
    products = BENCH[
        BENCH.candidate.isin(["ceiling_qk", "ceiling_wv"]) & F32_2 & (BENCH.n >= 1024)
    ]
    for causal, label in ((False, "unmasked"), (True, "causal")):
        t = products[products.causal == causal].groupby("n").time_median_s.sum()
        y = np.log(t.to_numpy())
        xs = np.log(t.index.to_numpy())
        fit = ((xs - xs.mean()) * (y - y.mean())).sum() / ((xs - xs.mean()) ** 2).sum()
        assert f"in the {label} runs: time grows like n^{fit:.2f}" in out
        assert f"$n^{{{fit:.2f}}}$" in p09
    assert "it stops before the lengths at which the slope would settle" in p09


def test_pytorch_gains_from_the_mask_as_the_tiled_form_from_1024_on():
    tiled = BENCH[(BENCH.candidate == "tiled") & F32_2]
    ratio = tiled.pivot(index="n", columns="causal", values="vs_torch_fast_median")
    change = (ratio[False] / ratio[True] - 1).abs()
    assert (change[change.index >= 1024] < 0.05).all()
    assert change[512] > 0.05  # why the sentence starts at 1,024
    p09 = _prose("09_cost")
    assert "their ratio changes by less than 5 % with the mask" in p09
    assert "from 1,024 positions on it gains from the mask" in p09


def test_benchmark_alt_text_numbers_follow_the_stored_ratios():
    alt = _cell("09_cost", "17b1cdc0").metadata["mystnb"]["image"]["alt"]
    ratio = BENCH.pivot_table(
        index=["threads", "dtype", "causal", "n"],
        columns="candidate",
        values="vs_torch_fast_median",
    )
    none = ratio.xs(False, level="causal")
    slow = none[["plain", "reference"]].to_numpy()
    assert f"about {slow.min():.1f} to {slow.max():.1f} times slower" in alt
    causal = ratio.xs(True, level="causal")[["plain", "reference"]].to_numpy()
    assert f"up to about {causal.max():.1f} times with a causal mask" in alt
    tiled = ratio.tiled.to_numpy()
    assert f"about {tiled.min():.1f} to {tiled.max():.1f} times" in alt
    # the one place where the tiled line lies above the plain one
    above = ratio[ratio.tiled > ratio.plain].index.tolist()
    assert above == [(2, "float32", False, 512)]
    assert "except at n = 512 in float32 with 2 threads" in alt
    # the math path at n = 512: between two thirds of the plain time and a fifth above
    at512 = ratio.xs(512, level="n")
    share = (at512.torch_math / at512.plain).to_numpy()
    assert abs(share.min() - 2 / 3) < 0.01 and abs(share.max() - 1.2) < 0.01
    later = ratio[ratio.index.get_level_values("n") >= 1024].dropna(
        subset=["torch_math"]
    )
    assert (later.torch_math > later.plain).all()
