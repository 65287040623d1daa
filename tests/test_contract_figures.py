"""Issue 26: the contract of every public function of ``book_support.figures``.

One row per function (:data:`ROWS`): a valid call returns the documented kind of
object (a matplotlib Figure, SVG or HTML text, a state dict of float64 arrays, PNG
bytes); bad input raises the documented error naming the argument (the figure and SVG
functions of an explorer take the dict of its ``*_state`` function: a missing entry is
a KeyError naming it); extreme finite input (1e308, 1e-300) draws without a warning and
without NaN or inf in the drawing's coordinates. That text is drawn as typed and that
degenerate data draws is ``tests/test_figures_text_as_typed.py``.
"""

from __future__ import annotations

import functools
import io
import re

import cost_explorer as cost
import learned_and_computed_explorer as learned
import learning_figures as learning
import masks_explorer as masks
import matplotlib.pyplot as plt
import numpy as np
import order_and_position_explorer as position
import pytest
import query_key_value_explorer as qk
from contract_rows import Row, check_row, f64
from matplotlib.figure import Figure

from book_support.figures import (
    charts,
    diagrams,
    heatmaps,
    precomputed,
    style,
    svg,
    translation,
)
from book_support.figures.explorers import heads, minilm, weights

BIG, TINY = 1e308, 1e-300
AB = ["a", "b"]


def spread(values):
    """Seeds that all agree: mean, lowest and highest equal (translation figures)."""
    return {"mean": values, "min": values, "max": values}


SPREAD = spread([0.9, 0.8])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def is_figure(out) -> bool:
    return isinstance(out, Figure)


def is_svg(out) -> bool:
    return (
        isinstance(out, str)
        and "<svg" in out
        and out.rstrip().endswith(("svg>", "div>"))
    )


NAN = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)


def drawn_finite(out) -> bool:
    """No NaN or inf in a drawing (a Figure is saved as SVG first), nor in a state."""
    if isinstance(out, dict):
        return all(
            np.isfinite(v).all()
            for v in out.values()
            if isinstance(v, np.ndarray) and v.dtype.kind == "f"
        )
    if isinstance(out, Figure):
        buffer = io.StringIO()
        out.savefig(buffer, format="svg")
        out = buffer.getvalue()
    if isinstance(out, bytes):
        return out.startswith(b"\x89PNG")
    return not NAN.search(re.sub(r"base64,[A-Za-z0-9+/=\s]+", "", out))


def png_bytes(values=((0.0, 0.5), (0.25, 1.0))) -> bytes:
    """A small opaque heat-map PNG (matplotlib, the book's dpi)."""
    fig, ax = plt.subplots(figsize=(1, 1))
    ax.imshow(np.asarray(values, dtype=float))
    return precomputed.figure_png(fig)


def is_palette_png(out) -> bool:
    from PIL import Image

    if not isinstance(out, bytes):
        return False
    image = Image.open(io.BytesIO(out))
    return image.format == "PNG" and image.mode == "P" and image.size == (100, 100)


class Run:
    """The curves of a training run, as learning.descent_figure reads them."""

    def __init__(self, scale=1.0):
        self.steps = np.arange(3.0)
        self.train_loss = np.array([0.7, 0.5, 0.4]) * scale
        self.val_loss = np.array([0.7, 0.6, 0.65]) * scale


def scores_state(scale=1.0):
    return weights.scores_state(np.array([2.0, 4.0, 1.0]) * scale, np.eye(3))


def scale_state(scale=1.0):
    return weights.scale_state(
        np.array([2.0, 1.0, 0.0]) * scale, variance_dims=(1, 4), n_samples=50
    )


def qk_state(scale=1.0):
    q, k = np.array([1.0, 0.0]) * scale, np.eye(2) * scale
    return qk.query_key_state(q, k, np.eye(2)), q, k, np.eye(2)


def heads_state(scale=1.0):
    return heads.heads_state(
        np.array([[2.0, 1.0], [1.0, 2.0]]) * scale, np.ones((2, 2, 1)), np.ones((2, 1))
    )


@functools.cache
def trained_classifier():
    from book_support.experiments.context_classifier import train_context_classifier

    return train_context_classifier(0, steps=2, n_train=20, n_test=10)


def learned_state():
    return learned.learned_state(trained_classifier(), "The bank was crowded.")


def model_state_by_hand(scale=1.0):
    return {
        "tokens": AB,
        "layer": 0,
        "head": 0,
        "weights": np.eye(2) * scale,
        "norm_share": np.eye(2),
    }


def layer_state_by_hand(scale=1.0):
    return {
        "tokens": AB,
        "layer": 1,
        "norms": np.full((4, 2), 10.0) * scale,
        "change": np.ones(2),
    }


ROWS = {
    # --- style, charts, heat maps, diagrams -------------------------------------------
    "style.use_book_style": Row(
        ok=style.use_book_style,
        check=lambda r: r is None and plt.rcParams["figure.dpi"] == 100,
    ),
    "style.palette_png": Row(
        ok=lambda: style.palette_png(png_bytes(), 16),
        check=is_palette_png,
        bad=[
            (lambda: style.palette_png("x.png"), TypeError, "png"),
            (lambda: style.palette_png(png_bytes(), 1), ValueError, "colours"),
            (lambda: style.palette_png(png_bytes(), 2.5), ValueError, "colours"),
            (lambda: style.palette_png(b"GIF89a...."), ValueError, "PNG"),
        ],
        # one colour only (a constant image), asked for the fewest colours allowed
        extreme=lambda: style.palette_png(png_bytes([[TINY, TINY], [TINY, TINY]]), 2),
    ),
    "style.literal": Row(
        ok=lambda: style.literal("US$$5"),
        check=lambda s: s == r"US\$\$5",
        extreme=lambda: style.literal(BIG),
    ),
    "style.literal_labels": Row(
        ok=lambda: style.literal_labels(["$x$", 3]),
        check=lambda s: s == [r"\$x\$", "3"],
        bad=[(lambda: style.literal_labels(3), TypeError, "int")],
    ),
    "charts.mixture_bars": Row(
        ok=lambda: charts.mixture_bars([0.25, 0.75], AB, title="t"),
        check=is_figure,
        bad=[
            (lambda: charts.mixture_bars([0.5, 0.5], ["a"]), ValueError, "labels"),
            (lambda: charts.mixture_bars([1.5, 0.5], AB), ValueError, "[0, 1]"),
            (lambda: charts.mixture_bars(["a", "b"], AB), TypeError, "real numbers"),
        ],
        extreme=lambda: charts.mixture_bars([TINY, 1 - TINY], AB),
    ),
    "translation.length_curves": Row(
        ok=lambda: translation.length_curves(
            [5, 10],
            {"m": {"token": SPREAD, "sentence": SPREAD}},
            trained_up_to=7,
            chance=0.2,
        ),
        check=is_figure,
        bad=[
            (
                lambda: translation.length_curves(
                    [5], {"m": {"token": spread([1.5]), "sentence": spread([0.5])}}
                ),
                ValueError,
                "m token",
            )
        ],
        extreme=lambda: translation.length_curves(
            [1, 10**6], {"m": {"token": spread([TINY, 1.0]), "sentence": SPREAD}}
        ),
    ),
    "translation.position_curves": Row(
        ok=lambda: translation.position_curves(
            2, {"m": {"teacher_forced": SPREAD, "greedy": SPREAD}}, title="t"
        ),
        check=is_figure,
        bad=[
            (
                lambda: translation.position_curves(
                    3, {"m": {"teacher_forced": SPREAD, "greedy": SPREAD}}
                ),
                ValueError,
                "m teacher_forced",
            )
        ],
        extreme=lambda: translation.position_curves(
            2, {"m": {"teacher_forced": spread([TINY, 1.0]), "greedy": SPREAD}}
        ),
    ),
    "translation.training_curves": Row(
        ok=lambda: translation.training_curves(
            {"m": [{"step": [1, 2], "validation_loss": [2.0, 1.0], "best_step": [2]}]},
            max_steps=3,
        ),
        check=is_figure,
        bad=[
            (
                lambda: translation.training_curves(
                    {"m": [{"step": [1], "validation_loss": [0.0], "best_step": [1]}]}
                ),
                ValueError,
                "positive validation loss",
            )
        ],
        extreme=lambda: translation.training_curves(
            {"m": [{"step": [1, 2], "validation_loss": [BIG, TINY], "best_step": [2]}]}
        ),
        extreme_error=OverflowError,
    ),
    "heatmaps.attention_heatmap": Row(
        ok=lambda: heatmaps.attention_heatmap(np.eye(2), AB, AB),
        check=is_figure,
        bad=[
            (
                lambda: heatmaps.attention_heatmap(np.ones((2, 2, 2))),
                ValueError,
                "(B, H, L_q, L_k)",
            ),
            (lambda: heatmaps.attention_heatmap(np.eye(2), ["a"]), ValueError, "query"),
            (
                lambda: heatmaps.attention_heatmap(np.eye(2, dtype=bool)),
                TypeError,
                "mask",
            ),
        ],
        extreme=lambda: heatmaps.attention_heatmap(np.full((2, 2), TINY)),
    ),
    "heatmaps.access_map": Row(
        ok=lambda: heatmaps.access_map(np.eye(2, dtype=bool), AB),
        check=is_figure,
        bad=[
            (lambda: heatmaps.access_map(np.eye(2), AB), TypeError, "mask"),
            (
                lambda: heatmaps.access_map(np.eye(2, dtype=bool), ["a"]),
                ValueError,
                "labels",
            ),
        ],
    ),
    "heatmaps.layer_head_grids": Row(
        ok=lambda: heatmaps.layer_head_grids(
            [np.zeros((2, 3))], ["t"], vmin=0, vmax=1, cmap="viridis", label="l"
        ),
        check=is_figure,
        bad=[
            (
                lambda: heatmaps.layer_head_grids(
                    [np.zeros((2, 3))], [], vmin=0, vmax=1, cmap="viridis", label="l"
                ),
                ValueError,
                "title",
            ),
            (
                lambda: heatmaps.layer_head_grids(
                    [np.zeros((2, 3))], ["t"], vmin=1, vmax=1, cmap="viridis", label="l"
                ),
                ValueError,
                "vmin",
            ),
            (
                lambda: heatmaps.layer_head_grids(
                    [np.full((1, 1), np.nan)],
                    ["t"],
                    vmin=0,
                    vmax=1,
                    cmap="viridis",
                    label="l",
                ),
                ValueError,
                "NaN",
            ),
            (
                lambda: heatmaps.layer_head_grids(
                    [np.zeros((1, 1))],
                    ["t"],
                    vmin=-BIG,
                    vmax=BIG,
                    cmap="viridis",
                    label="l",
                ),
                ValueError,
                "finite span",
            ),
        ],
        extreme=lambda: heatmaps.layer_head_grids(
            [np.full((1, 2), 1e300)],
            ["t"],
            vmin=-1e300,
            vmax=1e300,
            cmap="viridis",
            label="l",
        ),
    ),
    "heatmaps.alignment_heatmaps": Row(
        ok=lambda: heatmaps.alignment_heatmaps(
            [{"weights": np.eye(2), "source": AB, "target": AB, "alignment": [0, 1]}]
        ),
        check=is_figure,
        bad=[
            (
                lambda: heatmaps.alignment_heatmaps(
                    [{"weights": np.ones(2) / 2, "source": AB, "target": AB}]
                ),
                ValueError,
                "weights",
            ),
            (
                lambda: heatmaps.alignment_heatmaps(
                    [{"weights": np.eye(2), "source": ["a"], "target": AB}]
                ),
                ValueError,
                "source",
            ),
        ],
        extreme=lambda: heatmaps.alignment_heatmaps(
            [{"weights": np.full((2, 2), TINY), "source": AB, "target": AB}]
        ),
    ),
    "diagrams.data_flow_diagram": Row(
        ok=lambda: diagrams.data_flow_diagram(AB),
        check=is_figure,
        bad=[
            (lambda: diagrams.data_flow_diagram("ab"), TypeError, "tokens"),
            (lambda: diagrams.data_flow_diagram(AB, d=0), ValueError, "d must be"),
            (lambda: diagrams.data_flow_diagram(AB, d_k=2.0), TypeError, "d_k"),
        ],
        extreme=lambda: diagrams.data_flow_diagram(list("abcdefgh"), d=8, d_k=8, d_v=8),
    ),
    "diagrams.layer_flow_diagram": Row(
        ok=lambda: diagrams.layer_flow_diagram("decoder", L_source=5),
        check=is_figure,
        bad=[(lambda: diagrams.layer_flow_diagram("middle"), ValueError, "kind")],
        extreme=lambda: diagrams.layer_flow_diagram(
            L=10**9, d_model=10**9, heads=1, d_ff=10**9
        ),
    ),
    "learning.descent_figure": Row(
        ok=lambda: learning.descent_figure(
            np.linspace(-1, 1, 5),
            np.linspace(-1, 1, 5) ** 2,
            [("lr 0.1", [1.0, 0.5], [1.0, 0.25])],
            Run(),
            best_step=1,
            stopped_at=2,
        ),
        check=is_figure,
        bad=[
            (
                lambda: learning.descent_figure(
                    np.ones(3), np.ones(2), [], Run(), best_step=0, stopped_at=0
                ),
                ValueError,
                "grid and losses",
            ),
            (
                lambda: learning.descent_figure(
                    np.ones(2), np.ones(2), [], None, best_step=0, stopped_at=0
                ),
                AttributeError,
                "train_loss",
            ),
        ],
        extreme=lambda: learning.descent_figure(
            np.array([-1e300, 1e300]),
            np.array([TINY, 1e300]),
            [("p", [1e300], [TINY])],
            Run(1e300),
            best_step=0,
            stopped_at=1,
        ),
    ),
    # --- SVG drawings ----------------------------------------------------------------
    "svg.bar_chart": Row(
        ok=lambda: svg.bar_chart([0.25, 0.75], AB, title="t"),
        check=is_svg,
        bad=[(lambda: svg.bar_chart([np.inf], ["a"], title="t"), ValueError, "values")],
        extreme=lambda: svg.bar_chart([BIG, -BIG], AB, title="t", y_range=(-BIG, BIG)),
    ),
    "svg.bar_chart_alt": Row(
        ok=lambda: svg.bar_chart_alt([0.25, 0.75], AB, "t"),
        check=lambda s: s == "Bar chart, t: a 0.25, b 0.75.",
        bad=[
            (
                lambda: svg.bar_chart_alt(["x"], ["a"], "t"),
                ValueError,
                "could not convert",
            )
        ],
        extreme=lambda: svg.bar_chart_alt([BIG], ["a"], "t"),
    ),
    "svg.arrows": Row(
        ok=lambda: svg.arrows([[1.0, 0.0]], ["a"], title="t"),
        check=is_svg,
        bad=[
            (
                lambda: svg.arrows([[1.0, 0.0]], ["a"], title="t", extent=-1),
                ValueError,
                "extent",
            )
        ],
        extreme=lambda: svg.arrows([[BIG, -BIG], [TINY, 0.0]], AB, title="t"),
    ),
    "svg.arrows_alt": Row(
        ok=lambda: svg.arrows_alt([[1.0, -0.0]], ["a"], "t"),
        check=lambda s: s == "Arrows from the origin, t: a to (1.00, 0.00).",
        extreme=lambda: svg.arrows_alt([[BIG, TINY]], ["a"], "t"),
    ),
    "svg.heatmap": Row(
        ok=lambda: svg.heatmap(np.eye(2), AB, AB, title="t"),
        check=is_svg,
        bad=[
            (
                lambda: svg.heatmap(np.eye(2), AB, AB, title="t", vmin=2, vmax=1),
                ValueError,
                "vmin",
            ),
            (
                lambda: svg.heatmap(np.eye(2), AB, AB, title="t", levels=256),
                ValueError,
                "levels",
            ),
            (
                lambda: svg.heatmap(np.eye(2), AB, AB, title="t", levels=0.5),
                ValueError,
                "levels",
            ),
        ],
        extreme=lambda: svg.heatmap(np.array([[BIG, -BIG]]), ["a"], AB, title="t"),
    ),
    "svg.heatmap_alt": Row(
        ok=lambda: svg.heatmap_alt(np.eye(2, dtype=bool), AB, AB, "t"),
        check=lambda s: "a: 1 key (a)" in s and "b: 1 key (b)" in s,
        extreme=lambda: svg.heatmap_alt(np.array([[BIG, TINY]]), ["q"], AB, "t"),
    ),
    "svg.line_chart": Row(
        ok=lambda: svg.line_chart(
            [1, 10], {"s": [1.0, 2.0]}, title="t", xlabel="x", ylabel="y"
        ),
        check=is_svg,
        bad=[
            (
                lambda: svg.line_chart(
                    [-1, 10], {"s": [1, 2]}, title="t", xlabel="x", ylabel="y"
                ),
                ValueError,
                "x must be positive",
            ),
            (
                lambda: svg.line_chart(
                    [1, 10], {"s": [1, np.inf]}, title="t", xlabel="x", ylabel="y"
                ),
                ValueError,
                "series 's'",
            ),
        ],
        extreme=lambda: svg.line_chart(
            [TINY, BIG],
            {"s": [TINY, BIG]},
            title="t",
            xlabel="x",
            ylabel="y",
            mark_x=1.0,
        ),
    ),
    "svg.line_chart_alt": Row(
        ok=lambda: svg.line_chart_alt(
            [1, 10], {"s": [1.0, 2.0]}, "t", xlabel="x", ylabel="y"
        ),
        check=lambda s: s.startswith(
            "Line chart on log-log axes, t: y against x from 1 to 10"
        ),
        extreme=lambda: svg.line_chart_alt(
            [TINY, BIG], {"s": [TINY, BIG]}, "t", xlabel="x", ylabel="y"
        ),
    ),
    "svg.side_by_side": Row(
        ok=lambda: svg.side_by_side("<svg/>", "<svg/>"),
        check=lambda s: (
            s.count("<div>") == 2 and s.startswith("<div class='explorer-drawings' ")
        ),
    ),
    # --- precomputed explorers' helpers ----------------------------------------------
    "precomputed.readout_table": Row(
        ok=lambda: precomputed.readout_table([("a < b", "1 & 2")]),
        check=lambda s: "a &lt; b" in s and "1 &amp; 2" in s,
        bad=[(lambda: precomputed.readout_table([("a", 1)]), AttributeError, "int")],
    ),
    "precomputed.figure_png": Row(
        ok=lambda: precomputed.figure_png(plt.figure(figsize=(1, 1))),
        check=lambda b: isinstance(b, bytes) and b.startswith(b"\x89PNG"),
        bad=[(lambda: precomputed.figure_png("fig"), AttributeError, "savefig")],
    ),
    "precomputed.grid": Row(
        ok=lambda: list(
            precomputed.grid([precomputed.Control("c", (("a", 1), ("b", 2)))])
        ),
        check=lambda g: g == [(0,), (1,)],
    ),
    # --- explorers: state, figure and SVG of every family ---------------------------
    "explorers.weights.scores_state": Row(
        ok=scores_state,
        check=lambda s: f64(s["weights"]) and abs(s["weights"].sum() - 1) < 1e-12,
        bad=[
            (lambda: weights.scores_state([1.0, 2.0], np.eye(3)), ValueError, "values")
        ],
        extreme=lambda: scores_state(BIG / 4),
    ),
    "explorers.weights.scores_figure": Row(
        ok=lambda: weights.scores_figure(scores_state(), "abc"),
        check=is_figure,
        bad=[(lambda: weights.scores_figure({}, "abc"), KeyError, "weights")],
        extreme=lambda: weights.scores_figure(scores_state(BIG / 4), "abc"),
    ),
    "explorers.weights.scores_svg": Row(
        ok=lambda: weights.scores_svg(scores_state(), "abc", (0.0, 1.0)),
        check=is_svg,
        bad=[(lambda: weights.scores_svg({}, "abc", (0.0, 1.0)), KeyError, "scores")],
        extreme=lambda: weights.scores_svg(scores_state(BIG / 4), "abc", (0.0, 1.0)),
    ),
    "explorers.weights.scale_state": Row(
        ok=scale_state,
        check=lambda s: f64(s["weights"]) and isinstance(s["entropy"], float),
        bad=[
            (lambda: weights.scale_state([1.0], d_k=0), ValueError, "d_k"),
            (
                lambda: weights.scale_state([1.0], temperature=0),
                ValueError,
                "temperature",
            ),
        ],
        extreme=lambda: scale_state(BIG / 4),
    ),
    "explorers.weights.scale_figure": Row(
        ok=lambda: weights.scale_figure(scale_state(), "abc"),
        check=is_figure,
        bad=[(lambda: weights.scale_figure({}, "abc"), KeyError, "weights")],
        extreme=lambda: weights.scale_figure(scale_state(BIG / 4), "abc"),
    ),
    "explorers.weights.scale_svg": Row(
        ok=lambda: weights.scale_svg(scale_state(), "abc"),
        check=is_svg,
        bad=[(lambda: weights.scale_svg({}, "abc"), KeyError, "scaled_scores")],
        extreme=lambda: weights.scale_svg(scale_state(BIG / 4), "abc"),
    ),
    "explorers.query_key.query_key_state": Row(
        ok=lambda: qk_state()[0],
        check=lambda s: f64(s["weights"]) and s["output"].shape == (2,),
        bad=[
            (
                lambda: qk.query_key_state([1.0, 0.0], np.eye(3), np.eye(3)),
                ValueError,
                "",
            )
        ],
        extreme=lambda: qk_state(1e150)[0],
    ),
    "explorers.query_key.query_key_figure": Row(
        ok=lambda: qk.query_key_figure(*qk_state(), AB),
        check=is_figure,
        bad=[
            (lambda: qk.query_key_figure({}, *qk_state()[1:], AB), KeyError, "weights")
        ],
    ),
    "explorers.query_key.query_key_svg": Row(
        ok=lambda: qk.query_key_svg(*qk_state(), AB),
        check=is_svg,
        bad=[(lambda: qk.query_key_svg({}, *qk_state()[1:], AB), KeyError, "weights")],
        extreme=lambda: qk.query_key_svg(*qk_state(1e150), AB),
    ),
    "explorers.masks.mask_state": Row(
        ok=lambda: masks.mask_state(AB, "padding"),
        check=lambda s: (
            s["mask"].dtype == bool and f64(s["weights"]) and len(s["tokens"]) == 4
        ),
        bad=[
            (lambda: masks.mask_state([]), ValueError, "no tokens"),
            (lambda: masks.mask_state(AB, "diagonal"), ValueError, "kind"),
        ],
        extreme=lambda: masks.mask_state(["a"] * 64, "causal"),
    ),
    "explorers.masks.mask_figure": Row(
        ok=lambda: masks.mask_figure(masks.mask_state(AB)),
        check=is_figure,
        bad=[(lambda: masks.mask_figure({}), KeyError, "tokens")],
    ),
    "explorers.masks.mask_svg": Row(
        ok=lambda: masks.mask_svg(masks.mask_state(AB)),
        check=is_svg,
        bad=[(lambda: masks.mask_svg({}), KeyError, "tokens")],
    ),
    "explorers.heads.heads_state": Row(
        ok=heads_state,
        check=lambda s: f64(s["weights"]) and s["output"].shape == (1,),
        bad=[
            (
                lambda: heads.heads_state(
                    np.ones((2, 2)), np.ones((2, 3, 1)), np.ones((2, 1))
                ),
                ValueError,
                "head_scores",
            ),
            (
                lambda: heads.heads_state(
                    np.ones((2, 2)), np.ones((2, 2, 1)), np.ones((3, 1))
                ),
                ValueError,
                "W_O",
            ),
        ],
        extreme=lambda: heads_state(BIG / 4),
    ),
    "explorers.heads.heads_figure": Row(
        ok=lambda: heads.heads_figure(heads_state(), AB),
        check=is_figure,
        bad=[(lambda: heads.heads_figure({}, AB), KeyError, "weights")],
    ),
    "explorers.heads.heads_svg": Row(
        ok=lambda: heads.heads_svg(heads_state(), AB, (0.0, 2.0)),
        check=is_svg,
        bad=[(lambda: heads.heads_svg({}, AB, (0.0, 2.0)), KeyError, "weights")],
        extreme=lambda: heads.heads_svg(heads_state(BIG / 4), AB, (-BIG, BIG)),
    ),
    "explorers.position.position_state": Row(
        ok=lambda: position.position_state(5, 3, 8),
        check=lambda s: f64(s["pe_p"]) and s["max_error"] < 1e-12,
        bad=[
            (lambda: position.position_state(1, -2), ValueError, "p+k=-1"),
            (lambda: position.position_state(1, 1, 8, pair=4), ValueError, "pair"),
            (lambda: position.position_state(1, 1, 7), ValueError, "d_model"),
        ],
        extreme=lambda: position.position_state(10**6, 10**6, 2, length=2),
    ),
    "explorers.position.position_figure": Row(
        ok=lambda: position.position_figure(position.position_state(5, 3, 8)),
        check=is_figure,
        bad=[(lambda: position.position_figure({}), KeyError, "pair")],
        extreme=lambda: position.position_figure(
            position.position_state(10**6, 10**6, 2, length=2)
        ),
    ),
    "explorers.position.position_svg": Row(
        ok=lambda: position.position_svg(position.position_state(5, 3, 8)),
        check=is_svg,
        bad=[(lambda: position.position_svg({}), KeyError, "pair")],
        extreme=lambda: position.position_svg(
            position.position_state(10**6, 10**6, 2, length=2)
        ),
    ),
    "explorers.cost.cost_state": Row(
        ok=lambda: cost.cost_state(1024, 64, heads=2),
        check=lambda s: (
            s["score_entries"] == 2 * 1024**2 and s["flops"] == 4 * 2 * 1024**2 * 64
        ),
        bad=[
            (lambda: cost.cost_state(0), ValueError, "n must be"),
            (lambda: cost.cost_state(8, block=(0, 1)), ValueError, "block"),
        ],
        extreme=lambda: cost.cost_state(10**7, 10**4, heads=10**3),
    ),
    "explorers.cost.cost_figure": Row(
        ok=lambda: cost.cost_figure(cost.cost_state(1024)),
        check=is_figure,
        bad=[(lambda: cost.cost_figure({}), KeyError, "'n'")],
        extreme=lambda: cost.cost_figure(cost.cost_state(10**7, 10**4, heads=10**3)),
    ),
    "explorers.cost.cost_svg": Row(
        ok=lambda: cost.cost_svg(cost.cost_state(1024)),
        check=is_svg,
        bad=[(lambda: cost.cost_svg({}), KeyError, "'n'")],
        extreme=lambda: cost.cost_svg(cost.cost_state(10**7, 10**4, heads=10**3)),
    ),
    "explorers.learned.learned_state": Row(
        ok=learned_state,
        check=lambda s: f64(s["weights"]) and s["ambiguous"] == "bank",
        bad=[
            (
                lambda: learned.learned_state(trained_classifier(), "The zzz bank."),
                ValueError,
                "zzz",
            ),
            (
                lambda: learned.learned_state(
                    trained_classifier(), "The cave was crowded."
                ),
                ValueError,
                "ambiguous",
            ),
        ],
    ),
    "explorers.learned.learned_figure": Row(
        ok=lambda: learned.learned_figure(learned_state()),
        check=is_figure,
        bad=[(lambda: learned.learned_figure({}), KeyError, "weights")],
    ),
    "explorers.learned.learned_svg": Row(
        ok=lambda: learned.learned_svg(learned_state()),
        check=is_svg,
        bad=[(lambda: learned.learned_svg({}), KeyError, "words")],
    ),
    "explorers.minilm.model_state": Row(
        ok=lambda: minilm.model_state("The bank.", 0, 1),
        check=lambda s: f64(s["weights"]) and np.allclose(s["norm_share"].sum(-1), 1),
        bad=[(lambda: minilm.model_state("The bank.", 6, 0), ValueError, "layer")],
    ),
    "explorers.minilm.model_figure": Row(
        ok=lambda: minilm.model_figure(model_state_by_hand()),
        check=is_figure,
        bad=[(lambda: minilm.model_figure({}), KeyError, "weights")],
        extreme=lambda: minilm.model_figure(model_state_by_hand(TINY)),
    ),
    "explorers.minilm.model_svg": Row(
        ok=lambda: minilm.model_svg(model_state_by_hand()),
        check=is_svg,
        bad=[(lambda: minilm.model_svg({}), KeyError, "tokens")],
        extreme=lambda: minilm.model_svg(model_state_by_hand(TINY)),
    ),
    "explorers.minilm.layer_state": Row(
        ok=lambda: minilm.layer_state("The bank.", 2),
        check=lambda s: (
            f64(s["norms"]) and s["norms"].shape[0] == 4 and s["max_error"] < 1e-10
        ),
        bad=[(lambda: minilm.layer_state("The bank.", -1), ValueError, "layer")],
    ),
    "explorers.minilm.layer_figure": Row(
        ok=lambda: minilm.layer_figure(layer_state_by_hand()),
        check=is_figure,
        bad=[(lambda: minilm.layer_figure({}), KeyError, "tokens")],
        extreme=lambda: minilm.layer_figure(layer_state_by_hand(1e300)),
    ),
    "explorers.minilm.layer_svg": Row(
        ok=lambda: minilm.layer_svg(layer_state_by_hand()),
        check=is_svg,
        bad=[(lambda: minilm.layer_svg({}), KeyError, "tokens")],
        extreme=lambda: minilm.layer_svg(layer_state_by_hand(1e300)),
    ),
}


@pytest.mark.parametrize("qualname", sorted(ROWS))
def test_contract(qualname):
    check_row(qualname, ROWS[qualname], finite_result=drawn_finite)
