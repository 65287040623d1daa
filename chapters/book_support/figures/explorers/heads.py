"""Explorer: two heads, two budgets of weight, one concatenated output."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import numpy as np

from attnlib.core.attention import weighted_sum
from attnlib.core.heads import merge_heads
from attnlib.core.softmax import softmax
from attnlib.data import examples
from book_support.figures import svg
from book_support.figures.explorers._base import (
    _Explorer,
    _fmt,
    _weights_and_output_figure,
)
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)

__all__ = ["heads_state", "heads_figure", "heads_svg", "HeadsExplorer"]


# --------------------------------------------------------------------------- heads
def heads_state(head_scores, values, W_O) -> dict:
    """Several heads over the same positions: their mixtures, concatenation and
       projection.

    Parameters
    ----------
    head_scores : array_like, shape (H, L): one row of scores per head (one query)
    values : array_like, shape (H, L, d_head): each head's own value vectors
    W_O : array_like, shape (H * d_head, d_out): the output projection

    Returns
    -------
    dict with ``weights`` (H, L), ``head_outputs`` (H, d_head), ``concatenated``
    (H*d_head,) and ``output`` (d_out,).

    Raises
    ------
    ValueError if the shapes disagree (the shapes are named).
    """
    s = np.asarray(head_scores, dtype=float)
    v = np.asarray(values, dtype=float)
    W = np.asarray(W_O, dtype=float)
    if s.ndim != 2 or v.ndim != 3 or v.shape[:2] != s.shape:
        raise ValueError(
            f"head_scores {s.shape} and values {v.shape} must be (H, L) and "
            "(H, L, d_head)"
        )
    if W.shape[0] != v.shape[0] * v.shape[2]:
        raise ValueError(
            f"W_O {W.shape} must have H * d_head = {v.shape[0] * v.shape[2]} rows"
        )
    w = softmax(s)  # (H, L)
    head_out = weighted_sum(w[:, None, :], v)[:, 0, :]  # (H, d_head)
    concat = merge_heads(head_out[:, None, :])[0]  # (H * d_head,)
    return {
        "weights": w,
        "head_outputs": head_out,
        "concatenated": concat,
        "output": concat @ W,
    }


def heads_figure(state: dict, tokens) -> plt.Figure:
    """Each head's mixture as grouped bars, and the projected output."""
    return _weights_and_output_figure(
        state["weights"],
        tokens,
        state["output"],
        "one mixture per head",
        "concat(heads) · W_O",
        figsize=(7.5, 2.9),
        fmt="%.2f",
    )


def heads_svg(state: dict, tokens, output_range) -> str:
    """Each head's weights as grouped bars, and the projected output on a fixed axis."""
    H = state["weights"].shape[0]
    return svg.side_by_side(
        svg.bar_chart(
            state["weights"],
            tokens,
            title="one mixture per head",
            series=[f"head {h}" for h in range(H)],
            width=320,
        ),
        svg.bar_chart(
            state["output"],
            [f"out[{i}]" for i in range(state["output"].size)],
            title="concat(heads) · W_O",
            y_range=output_range,
            width=200,
        ),
    )


def _heads_rows(s):
    rows = [(f"head {h} weights", _fmt(w)) for h, w in enumerate(s["weights"])]
    rows += [
        ("concatenated head outputs", _fmt(s["concatenated"])),
        ("output (· W_O)", _fmt(s["output"])),
    ]
    return rows


class HeadsExplorer(_Explorer):
    """Two or more heads side by side: edit each head's scores; mixtures, concat and W_O
       follow.

    Defaults: the scores [2, 1, 0] and [1, 2, 0] over fisherman / net / bank; head h's
    values are the bank example's values (head 0) and seeded random vectors (further
    heads); W_O is a seeded random (H*2, 2) matrix.
    """

    def __init__(self, num_heads: int = 2, *, seed: int = 0, live_figure: bool = True):
        super().__init__(live_figure)
        if not 1 <= num_heads <= 4:
            raise ValueError(f"num_heads must be between 1 and 4; got {num_heads}")
        self.tokens = examples.BANK.tokens
        rng = np.random.default_rng(seed)
        defaults = np.vstack(
            [
                examples.TWO_HEAD_SCORES,
                rng.normal(size=(max(0, num_heads - 2), 3)).round(1),
            ]
        )[:num_heads]
        self.values = np.stack(
            [examples.BANK.values]
            + [rng.normal(size=(3, 2)).round(2) for _ in range(num_heads - 1)]
        )
        self.W_O = rng.normal(scale=0.7, size=(2 * num_heads, 2)).round(2)
        w = self._widgets
        self.score_sliders = [
            [
                w.FloatSlider(
                    value=float(v),
                    min=-5.0,
                    max=5.0,
                    step=0.1,
                    description=f"head {h}: {t}",
                    style={"description_width": "initial"},
                )
                for v, t in zip(row, self.tokens)
            ]
            for h, row in enumerate(defaults)
        ]
        self.controls = [s for row in self.score_sliders for s in row]
        self._connect(self.controls)

    def head_scores(self):
        return np.array([[s.value for s in row] for row in self.score_sliders])

    def compute(self) -> dict:
        return heads_state(self.head_scores(), self.values, self.W_O)

    def rows(self):
        return _heads_rows(self.state)

    def figure(self):
        return heads_figure(self.state, self.tokens)

    def precomputed(
        self, edits=((0, 0), (1, 1)), grid=tuple(range(-3, 6))
    ) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: one score of each of two heads
        (``edits`` = (head, position) pairs) takes the values of ``grid``."""
        base = self.head_scores()
        controls = [
            Control.numbers(f"head {h}: score of {self.tokens[j]}", grid, base[h, j])
            for h, j in edits
        ]
        states = {}
        for chosen in itertools.product(*(c.values for c in controls)):
            scores = base.copy()
            for (h, j), value in zip(edits, chosen):
                scores[h, j] = value
            states[chosen] = heads_state(scores, self.values, self.W_O)
        outputs = np.array([st["output"] for st in states.values()])
        output_range = (min(0.0, float(outputs.min())), max(0.0, float(outputs.max())))

        def render(*chosen):
            state = states[chosen]
            return heads_svg(state, self.tokens, output_range) + readout_table(
                _heads_rows(state)
            )

        return PrecomputedExplorer(
            controls,
            render,
            name="heads explorer",
            fallback_png=figure_png(self.figure()),
        )
