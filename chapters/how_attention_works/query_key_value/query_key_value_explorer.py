"""Explorer: move a query among the keys and watch scores, weights and output follow."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from attnlib.core.attention import attention
from attnlib.core.scores import dot_product_scores, scaled_dot_product_scores
from attnlib.data import examples
from book_support.figures import svg
from book_support.figures.explorers._base import _Explorer, _fmt
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)
from book_support.figures.style import OKABE_ITO, literal

__all__ = ["query_key_state", "query_key_figure", "query_key_svg", "QueryKeyExplorer"]


# --------------------------------------------------------------------------- query/key
# playground
def query_key_state(query, keys, values, *, scaled: bool = True) -> dict:
    """One query against a few keys: scores, weights and the output vector.

    Parameters
    ----------
    query : array_like, shape (d_k,)
    keys : array_like, shape (L, d_k)
    values : array_like, shape (L, d_v)
    scaled : bool, divide the dot products by sqrt(d_k) (default) or not

    Returns
    -------
    dict with ``scores`` (L,), ``weights`` (L,) and ``output`` (d_v,).
    """
    q = np.asarray(query, dtype=float)[None, :]
    k = np.asarray(keys, dtype=float)
    score_fn = scaled_dot_product_scores if scaled else dot_product_scores
    out, w = attention(q, k, values, scale=None if scaled else 1.0)
    return {"scores": score_fn(q, k)[0], "weights": w[0], "output": out[0]}


def query_key_figure(state: dict, query, keys, values, tokens) -> plt.Figure:
    """Arrows: the query, the keys (left) and the values with the output mixture
    (right)."""
    fig, (ax_k, ax_v) = plt.subplots(1, 2, figsize=(7.5, 3.4), layout="constrained")
    k = np.asarray(keys, dtype=float)
    v = np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)

    def arrow(ax, vec, color, label, width=0.012):
        ax.annotate(
            "",
            xy=vec,
            xytext=(0, 0),
            arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.8},
        )
        ax.text(
            vec[0], vec[1], f" {literal(label)}", color=color, fontsize=9, va="bottom"
        )

    for j, (kv, t) in enumerate(zip(k, tokens)):
        arrow(
            ax_k,
            kv,
            OKABE_ITO[(j + 1) % len(OKABE_ITO)],
            f"k {t} (w={state['weights'][j]:.2f})",
        )
    arrow(ax_k, q, "black", "query")
    for j, (vv, t) in enumerate(zip(v, tokens)):
        arrow(ax_v, vv, OKABE_ITO[(j + 1) % len(OKABE_ITO)], f"v {t}")
    arrow(ax_v, state["output"], "black", "output")
    for ax, pts, title in (
        (ax_k, np.vstack([k, q, [0, 0]]), "query and keys"),
        (ax_v, np.vstack([v, state["output"], [0, 0]]), "values and output"),
    ):
        lo, hi = pts.min(axis=0) - 0.6, pts.max(axis=0) + 0.9
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal")
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_title(title)
    return fig


def query_key_svg(state: dict, query, keys, values, tokens, extent: float = 3.2) -> str:
    """The query among the keys (each labelled with its weight), and the output among
    the values, on fixed axes from ``-extent`` to ``extent``."""
    colors = [OKABE_ITO[(j + 1) % len(OKABE_ITO)] for j in range(len(tokens))] + [
        "black"
    ]
    key_labels = [f"k {t} (w={w:.2f})" for t, w in zip(tokens, state["weights"])]
    return svg.side_by_side(
        svg.arrows(
            list(keys) + [query],
            key_labels + ["query"],
            colors=colors,
            title="query and keys",
            extent=extent,
        ),
        svg.arrows(
            list(values) + [state["output"]],
            [f"v {t}" for t in tokens] + ["output"],
            colors=colors,
            title="values and output",
            extent=extent,
        ),
    )


DIRECTION_LABEL = "query direction (degrees from the x axis)"
LENGTH_LABEL = "query length"


def _polar(direction, length) -> np.ndarray:
    """The 2-D query of a direction (degrees, counter-clockwise from the x axis) and
    a length; shape (2,). Rounded to 12 decimals, so that 90° gives an exact 0."""
    angle = math.radians(direction)
    query = length * np.array([math.cos(angle), math.sin(angle)])  # (2,)
    return np.round(query, 12) + 0.0


def _direction_of(query) -> float:
    """The direction of a 2-D query in degrees, in [0, 360); 0 for the zero query."""
    q = np.asarray(query, dtype=float)
    return math.degrees(math.atan2(q[1], q[0])) % 360 if np.hypot(*q) else 0.0


def _query_key_rows(state):
    return [
        ("scores q·k/√2", _fmt(state["scores"])),
        ("weights", _fmt(state["weights"])),
        ("output", _fmt(state["output"])),
    ]


class QueryKeyExplorer(_Explorer):
    """Turn and stretch a 2-D query (and move the keys) with sliders; scores, weights
    and output follow.

    Defaults: the bank example (query [√2, 0]; keys [2,0], [1,1], [0,1]; values [2,0],
    [0,2], [1,1]).
    """

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        ex = examples.BANK
        self.tokens = ex.tokens
        self.values = ex.values
        w = self._widgets
        style = {"description_width": "initial"}

        def slider(value, label):
            return w.FloatSlider(
                value=float(value),
                min=-3.0,
                max=3.0,
                step=0.05,
                description=label,
                style=style,
            )

        # The query is set as on the static page, by its direction and its length;
        # the keys by their two coordinates.
        length = float(np.hypot(*ex.query))
        self.query_sliders = [
            w.FloatSlider(
                value=_direction_of(ex.query),
                min=0.0,
                max=360.0,
                step=1.0,
                description=DIRECTION_LABEL,
                style=style,
            ),
            w.FloatSlider(
                value=length,
                min=0.0,
                max=3.0,
                step=0.05,
                description=LENGTH_LABEL,
                style=style,
            ),
        ]
        self.key_sliders = [
            [slider(k[0], f"key {t} x"), slider(k[1], f"key {t} y")]
            for k, t in zip(ex.keys, ex.tokens)
        ]
        self.controls = self.query_sliders + [
            s for pair in self.key_sliders for s in pair
        ]
        self._connect(self.controls)

    @property
    def query(self):
        direction, length = (s.value for s in self.query_sliders)
        return _polar(direction, length)

    @property
    def keys(self):
        return np.array([[x.value, y.value] for x, y in self.key_sliders])

    def compute(self) -> dict:
        return query_key_state(self.query, self.keys, self.values)

    def rows(self):
        return [("query", _fmt(self.query))] + _query_key_rows(self.state)

    def figure(self):
        return query_key_figure(
            self.state, self.query, self.keys, self.values, self.tokens
        )

    DIRECTIONS = tuple(22.5 * k for k in range(16))  # degrees
    LENGTHS = (0.0, 0.25, 0.5, 0.75, 1.0, math.sqrt(2), 2.0, 2.5, 3.0)

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: the query's direction (16
        positions, 22.5° apart, counter-clockwise from the x axis) and length (9
        positions, 0 to 3); the keys stay at this explorer's keys."""
        direction, length = (s.value for s in self.query_sliders)
        controls = [
            Control.numbers(DIRECTION_LABEL, self.DIRECTIONS, direction, fmt="{:g}°"),
            Control.numbers(LENGTH_LABEL, self.LENGTHS, length, fmt="{:.2f}"),
        ]
        keys = self.keys

        def render(direction, length):
            query = _polar(direction, length)  # (2,)
            state = query_key_state(query, keys, self.values)
            rows = [("query", _fmt(query))] + _query_key_rows(state)
            return query_key_svg(
                state, query, keys, self.values, self.tokens
            ) + readout_table(rows)

        return PrecomputedExplorer(
            controls,
            render,
            name="query and key explorer",
            fallback_png=figure_png(self.figure()),
        )
