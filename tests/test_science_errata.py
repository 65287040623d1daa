"""Issue 28's definite errors in chapters 9, 10, 10b, 11 and 12, held by tests.

Each test recomputes the fact from the stored data or the library and compares it with
what the chapter says (its prose, a caption, a checker's verdict), so that the error
cannot come back unnoticed:

1. chapter 9's benchmark caption describes the stored figure's data;
2. 10b2's slopes follow from the stored benchmark; its prose claims no steeper growth;
3. the crossover checker accepts the length of equal costs and diagnoses d - 1;
5. chapter 9 says FlashAttention's backward pass does more arithmetic, not the same;
6. chapter 9 gives the per-layer crossover n = 6d, with the numbers it follows from;
10. chapter 10 no longer says that an average stays at chance overall;
11. 10b cites He et al. (2016b) for the identity path;
13. the notation table lists d_ff and its exceptions, layer normalisation's constant is
    no longer a symbol, and the bibliography names every work without a DOI;
14. the pipeline checker accepts the scale folded into the queries.
"""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout
from pathlib import Path

import nbformat
import numpy as np
import pandas as pd
import pytest
from pybtex.database import parse_file

from attnlib.exercises.layer import check_crossover
from attnlib.exercises.summary import check_pipeline_order

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
BENCH = pd.read_csv(CHAPTERS / "data" / "bench.csv")


def _nb(stem: str):
    return nbformat.read(CHAPTERS / f"{stem}.ipynb", as_version=4)


def _prose(stem: str) -> str:
    text = "\n".join(c.source for c in _nb(stem).cells if c.cell_type == "markdown")
    return re.sub(r"\s+", " ", text)


def _outputs(stem: str) -> str:
    out = []
    for cell in _nb(stem).cells:
        for o in cell.get("outputs", []):
            out.append(o.get("text", "") or o.get("data", {}).get("text/plain", ""))
    return "\n".join(out)


def _cell(stem: str, cell_id: str):
    return next(c for c in _nb(stem).cells if c.get("id") == cell_id)


def _run(check, *args, **kwargs) -> tuple[bool, str]:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        ok = check(*args, **kwargs)
    return ok, buffer.getvalue()


# ---- 1. the benchmark figure's caption and alt text ----------------------------------


def test_benchmark_caption_describes_the_stored_data():
    meta = _cell("09_cost", "17b1cdc0").metadata["mystnb"]
    caption = meta["figure"]["caption"]
    alt = meta["image"]["alt"]
    timed = BENCH[BENCH.candidate == "torch_fast"]
    low, high = timed.n.min(), timed.n.max()
    assert f"n = {low:,} to {high:,}" in caption
    assert f"from {low:,} to {high:,}" in alt
    panels = timed.groupby(["dtype", "threads"]).ngroups
    assert panels == 4 and "Four panels" in caption and "Four line charts" in alt
    (rounds,) = set(BENCH.rounds)
    assert f"median over {rounds} rounds" in caption
    top64 = timed[timed.dtype == "float64"].n.max()
    assert f"float64 measured up to n = {top64:,}" in caption
    # the old caption described another figure (1 and 8 heads, n up to 65,536)
    assert "65,536" not in caption and "1 head" not in caption


# ---- 2. the measured slope of attention's time ---------------------------------------


def test_slopes_in_the_prose_follow_the_stored_benchmark():
    plain = BENCH[
        (BENCH.candidate == "plain")
        & (BENCH.threads == 2)
        & (BENCH.dtype == "float32")
        & ~BENCH.causal
        & (BENCH.n >= 1024)
    ].sort_values("n")
    # an independent estimate: the two-point slope between the smallest and largest n
    for column in ("time_min_s", "time_median_s"):
        t = plain[column].to_numpy()
        n = plain.n.to_numpy()
        two_point = np.log(t[-1] / t[0]) / np.log(n[-1] / n[0])
        assert 1.8 < two_point < 2.1, (column, two_point)
    out = _outputs("10b2_why_self_attention")
    printed = [float(x) for x in re.findall(r"grows like n\^(\d\.\d\d)", out)]
    assert len(printed) == 3 and all(1.8 < s < 2.1 for s in printed)
    prose = _prose("10b2_why_self_attention")
    assert "between 1.8 and 2.1" in prose
    assert "faster still" not in prose and "steeper" not in prose.replace(
        "none is steeper than 2", ""
    )


# ---- 3. the crossover exercise -------------------------------------------------------


def test_crossover_checker_accepts_equal_costs_and_diagnoses_one_below():
    d = 512
    # the costs n^2 d and n d^2 are equal exactly at n = d
    n = np.arange(1, 2 * d)
    assert n[(n * n * d) == (n * d * d)].tolist() == [d]
    assert _run(check_crossover, d, d=d)[0]
    ok, said = _run(check_crossover, d - 1, d=d)
    assert not ok and "equal" in said and "round" not in said
    statement = _prose("10b2_why_self_attention")
    assert "do the same number of operations" in statement


# ---- 5 and 6. FlashAttention's arithmetic, and what dominates a layer ----------------


def test_flashattention_backward_recomputes_and_costs_more_arithmetic():
    prose = _prose("09_cost")
    assert "does **not** change the amount of arithmetic" not in prose
    assert "*recomputes* the tiles" in prose and "Training does **more**" in prose
    out = _outputs("09_cost")
    assert "66.6" in out and "75.2" in out and "1.13" in out


def test_per_layer_crossover_is_six_times_the_width():
    d = 512
    n = 6 * d
    assert 24 * n * d**2 == 4 * n**2 * d  # the two terms meet at n = 6d
    assert f"n = 6 d = {n:,}" in _outputs("09_cost")
    assert "for $n > 6d$" in _prose("09_cost")


def test_one_account_of_the_gap_to_pytorch():
    prose = _prose("09_cost")
    # cells 18 and 33 used to disagree; the chapter now names both causes once
    assert "splits between fusion, faster products and the cache" in prose
    assert "because it never writes out" not in prose


# ---- 10. chapter 10's baseline -------------------------------------------------------


def test_mean_pooling_is_at_chance_only_with_a_decoy():
    prose = _prose("10_learned")
    assert "stays at chance" not in prose
    assert "0.61 to 0.62 overall" in prose
    table = _outputs("10_learned")
    assert re.search(r"mean pooling \(uniform weights\)\s+0\.62\s+0\.5\b", table)


# ---- 11. the identity-mapping citation -----------------------------------------------


def test_identity_path_cites_he_2016_identity_mappings():
    cell = _cell("10b_transformer_layer", "layer-residual-md").source
    assert "he2016identity" in cell
    entry = parse_file(str(ROOT / "references.bib")).entries["he2016identity"]
    assert entry.fields["title"] == "Identity Mappings in Deep Residual Networks"


# ---- 13. notation and the bibliography's promise -------------------------------------


def test_notation_table_lists_d_ff_and_the_second_meanings():
    glossary = (CHAPTERS / "glossary.md").read_text(encoding="utf-8")
    assert "| $d_{\\text{ff}}$ |" in glossary
    exceptions = glossary.split("Letters with a second meaning")[1].split("Retired")[0]
    for letter in ("$m$", "$k$"):
        assert f"| {letter} |" in exceptions
    # r is only a head's index since 02_bottleneck dropped its D_r (issue 29)
    assert "$D_r$" not in glossary and "| $r$ |" not in exceptions
    assert "One symbol means one thing throughout the book" not in glossary
    # layer normalisation's constant is code, not a symbol that clashes with epsilon
    for stem in ("10b_transformer_layer", "10b2_why_self_attention"):
        assert "\\epsilon" not in _prose(stem)


def test_bibliography_names_every_work_without_a_doi():
    page = re.sub(r"\s+", " ", (CHAPTERS / "bibliography.md").read_text("utf-8"))
    assert "with its DOI where the work has one" in page
    bib = parse_file(str(ROOT / "references.bib"))
    missing = [key for key, e in bib.entries.items() if "doi" not in e.fields]
    assert missing, "the check would pass vacuously"
    for key in missing:
        entry = bib.entries[key]
        surname = entry.persons["author"][0].last_names[0].strip("{}")
        year = entry.fields["year"]
        assert re.search(rf"{surname}[^()]*\({year}\)", page), (key, surname, year)
    names = "One Two Three Four Five Six Seven Eight Nine Ten".split()
    words = {name: i for i, name in enumerate(names, start=1)}
    stated = re.search(rf"({'|'.join(names)}) ha(?:s|ve) none", page)
    assert stated and words[stated.group(1)] == len(missing)


# ---- 14. the order of one head's steps -----------------------------------------------


@pytest.mark.parametrize(
    "order",
    [
        ["project", "score", "scale", "mask", "softmax", "weighted sum"],
        ["project", "scale", "score", "mask", "softmax", "weighted sum"],  # chapter 9's
        ["project", "score", "mask", "scale", "softmax", "weighted sum"],
    ],
)
def test_pipeline_orders_that_give_the_same_weights_are_accepted(order):
    assert _run(check_pipeline_order, order)[0]


def test_scaling_the_queries_first_gives_the_same_weights():
    # what makes the second order right: (Q / sqrt(d_k)) K^T = Q K^T / sqrt(d_k)
    rng = np.random.default_rng(0)
    Q, K = rng.normal(size=(5, 4)), rng.normal(size=(6, 4))
    np.testing.assert_allclose((Q / 2.0) @ K.T, Q @ K.T / 2.0, rtol=1e-13)


@pytest.mark.parametrize(
    "order, says",
    [
        (["scale", "project", "score", "mask", "softmax", "weighted sum"], "values"),
        (
            ["project", "score", "mask", "softmax", "scale", "weighted sum"],
            "not linear",
        ),
        (
            ["project", "score", "scale", "softmax", "mask", "weighted sum"],
            "before the",
        ),
    ],
)
def test_pipeline_orders_that_change_the_result_are_diagnosed(order, says):
    ok, said = _run(check_pipeline_order, order)
    assert not ok and says in said
