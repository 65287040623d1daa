"""Explorers of weights: move the scores, or scale them, and watch softmax respond."""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np

from attnlib.core.attention import weighted_sum
from attnlib.core.scaling import score_variance
from attnlib.core.softmax import softmax
from attnlib.data import examples
from book_support.figures import svg
from book_support.figures.charts import mixture_bars
from book_support.figures.explorers._base import (
    _Explorer,
    _fmt,
    _value_range,
    _weights_and_output_figure,
)
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)
from book_support.figures.style import OKABE_ITO

__all__ = [
    "scores_state",
    "scores_figure",
    "scores_svg",
    "ScoresExplorer",
    "scale_state",
    "scale_figure",
    "scale_svg",
    "ScaleExplorer",
]


# --------------------------------------------------------------------------- scores ->
# output
def scores_state(scores, values) -> dict:
    """Scores -> softmax weights -> weighted sum of the values.

    Parameters
    ----------
    scores : array_like, shape (L,)
    values : array_like, shape (L, d_v)

    Returns
    -------
    dict with ``scores`` (L,), ``weights`` (L,) summing to 1 and ``output`` (d_v,).
    """
    s = np.asarray(scores, dtype=float)
    w = softmax(s)
    out = weighted_sum(w[None, :], values)[0]
    return {"scores": s, "weights": w, "output": out}


def scores_figure(state: dict, tokens) -> plt.Figure:
    """Bars of the weights next to the output vector's coordinates."""
    return _weights_and_output_figure(
        state["weights"],
        tokens,
        state["output"],
        "attention weights",
        "output = weighted sum of values",
        figsize=(7.0, 2.8),
        fmt="%.3f",
    )


def scores_svg(state: dict, tokens, output_range) -> str:
    """The weights (each bar labelled with its token and score) and the output's
    coordinates."""
    labels = [f"{t}\nscore {s:g}" for t, s in zip(tokens, state["scores"])]
    return svg.side_by_side(
        svg.bar_chart(state["weights"], labels, title="attention weights"),
        svg.bar_chart(
            state["output"],
            [f"out[{i}]" for i in range(state["output"].size)],
            title="output = weighted sum of values",
            y_range=output_range,
            width=200,
        ),
    )


def _scores_rows(state):
    return [
        ("scores", _fmt(state["scores"])),
        ("weights", _fmt(state["weights"])),
        ("output", _fmt(state["output"])),
    ]


class ScoresExplorer(_Explorer):
    """A slider per score; the weights and the weighted sum of the values follow.

    Defaults: the Machine / Learning / Rocks scores [2, 4, 1] and values [1,0], [0,2],
    [1,1].
    """

    def __init__(
        self, scores=None, values=None, tokens=None, *, live_figure: bool = True
    ):
        super().__init__(live_figure)
        ex = examples.MACHINE_LEARNING_ROCKS
        scores = ex.scores if scores is None else np.asarray(scores, dtype=float)
        self.values = ex.values if values is None else np.asarray(values, dtype=float)
        self.tokens = tuple(ex.tokens if tokens is None else tokens)
        self.sliders = [
            self._widgets.FloatSlider(
                value=float(s),
                min=-10.0,
                max=10.0,
                step=0.1,
                description=f"score {t}",
                style={"description_width": "initial"},
            )
            for s, t in zip(scores, self.tokens)
        ]
        self.controls = self.sliders
        self._connect(self.controls)

    def compute(self) -> dict:
        return scores_state([s.value for s in self.sliders], self.values)

    def rows(self):
        return _scores_rows(self.state)

    def figure(self):
        return scores_figure(self.state, self.tokens)

    def precomputed(
        self, vary=(-1,), *, shift: bool = False, grid=tuple(range(-2, 9))
    ) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: the scores of the positions
        ``vary`` (indices) take the values of ``grid``, the others stay at this
        explorer's scores; with ``shift``, a second control adds one amount (-4 ... 4)
        to every score.
        """
        base = np.array([s.value for s in self.sliders])
        controls = [
            Control.numbers(f"score of {self.tokens[i]}", grid, base[i]) for i in vary
        ]
        if shift:
            controls.append(
                Control.numbers("added to every score", range(-4, 5), 0, fmt="{:+g}")
            )
        output_range = _value_range(self.values)

        def render(*chosen):
            scores = base.copy()
            for i, value in zip(vary, chosen):
                scores[i] = value
            if shift:
                scores = scores + chosen[-1]
            state = scores_state(scores, self.values)
            return scores_svg(state, self.tokens, output_range) + readout_table(
                _scores_rows(state)
            )

        return PrecomputedExplorer(
            controls,
            render,
            name="scores explorer",
            fallback_png=figure_png(self.figure()),
        )


# --------------------------------------------------------------------------- scale /
# temperature
def scale_state(
    raw_scores,
    d_k: int = 1,
    temperature: float = 1.0,
    *,
    variance_dims=(1, 4, 16, 64, 256),
    n_samples: int = 20_000,
    seed: int = 0,
) -> dict:
    """How the scale of the scores sharpens or flattens the weights, and why we divide
       by sqrt(d_k).

    Parameters
    ----------
    raw_scores : array_like, shape (L,)
        Raw dot products ``q·k``.
    d_k : int >= 1
        The scores are divided by ``sqrt(d_k)`` (Vaswani et al. 2017, section 3.2.1).
    temperature : float > 0
        Then divided by the temperature (1 = no change).
    variance_dims : sequence of int
        Dimensions at which to simulate the variance of ``q·k`` for random q, k with
        independent standard-normal components (variance d_k unscaled, 1 scaled).

    Returns
    -------
    dict with ``scaled_scores``, ``weights``, ``max_weight``, ``entropy`` (nats) and
    ``variance`` = {"d_k": dims, "unscaled": var of q·k,
    "scaled": var of q·k/sqrt(d_k)}.

    Raises
    ------
    ValueError if ``d_k < 1`` or ``temperature <= 0``.
    """
    if d_k < 1:
        raise ValueError(f"d_k must be at least 1; got {d_k}")
    if not temperature > 0:
        raise ValueError(f"temperature must be positive; got {temperature}")
    raw = np.asarray(raw_scores, dtype=float)
    scaled = raw / math.sqrt(d_k) / temperature
    w = softmax(scaled)
    positive = w[w > 0]
    entropy = float(-(positive * np.log(positive)).sum())
    rng = np.random.default_rng(seed)
    unscaled_var = [score_variance(rng, int(d), n_samples) for d in variance_dims]
    scaled_var = [
        score_variance(rng, int(d), n_samples, scaled=True) for d in variance_dims
    ]
    return {
        "scaled_scores": scaled,
        "weights": w,
        "max_weight": float(w.max()),
        "entropy": entropy,
        "variance": {
            "d_k": np.asarray(variance_dims),
            "unscaled": np.asarray(unscaled_var),
            "scaled": np.asarray(scaled_var),
        },
    }


def scale_figure(state: dict, tokens) -> plt.Figure:
    """Weights at the chosen scale, and the simulated variance of q·k against d_k."""
    fig, (ax_w, ax_v) = plt.subplots(1, 2, figsize=(7.5, 2.9), layout="constrained")
    mixture_bars(state["weights"], tokens, title="weights at this scale", ax=ax_w)
    var = state["variance"]
    ax_v.loglog(var["d_k"], var["unscaled"], "o-", color=OKABE_ITO[0], label="q·k")
    ax_v.loglog(
        var["d_k"], var["scaled"], "s--", color=OKABE_ITO[1], label="q·k / √d_k"
    )
    ax_v.set_xlabel("d_k")
    ax_v.set_ylabel("variance of the score")
    ax_v.set_title("why divide by √d_k")
    ax_v.legend(frameon=False)
    return fig


def scale_svg(state: dict, tokens) -> str:
    """The weights of the scaled scores (each bar labelled with its scaled score)."""
    labels = [f"{t}\nscore {s:.2f}" for t, s in zip(tokens, state["scaled_scores"])]
    return svg.bar_chart(
        state["weights"], labels, title="weights at this scale", width=320
    )


def _scale_rows(s):
    return [
        ("scaled scores", _fmt(s["scaled_scores"])),
        ("weights", _fmt(s["weights"])),
        ("largest weight", _fmt(s["max_weight"])),
        ("entropy (nats)", _fmt(s["entropy"])),
    ]


class ScaleExplorer(_Explorer):
    """Choose d_k and a temperature; see the weights of fixed raw scores sharpen or
       flatten.

    Default raw scores: the bank example's unscaled dot products ``2√2, √2, 0`` (d_k = 2
    then gives the scores 2, 1, 0 of the book).
    """

    DK_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)

    def __init__(self, raw_scores=None, tokens=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        ex = examples.BANK
        self.raw_scores = (
            ex.keys @ ex.query
            if raw_scores is None
            else np.asarray(raw_scores, dtype=float)
        )
        self.tokens = tuple(ex.tokens if tokens is None else tokens)
        w = self._widgets
        self.d_k = w.SelectionSlider(
            options=self.DK_CHOICES,
            value=2,
            description="d_k (divide by √d_k)",
            style={"description_width": "initial"},
        )
        self.temperature = w.FloatLogSlider(
            value=1.0,
            base=10,
            min=-1,
            max=1,
            step=0.05,
            description="temperature",
            style={"description_width": "initial"},
        )
        self.controls = [self.d_k, self.temperature]
        self._connect(self.controls)

    def compute(self) -> dict:
        return scale_state(self.raw_scores, self.d_k.value, self.temperature.value)

    def rows(self):
        return _scale_rows(self.state)

    def figure(self):
        return scale_figure(self.state, self.tokens)

    TEMPERATURES = tuple(10 ** (k / 4) for k in range(-4, 5))  # 0.1 ... 10, 9 positions

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: every d_k of :attr:`DK_CHOICES`
        times nine temperatures from 0.1 to 10."""
        controls = [
            Control.numbers(
                "key width d_k (scores divided by √d_k)",
                self.DK_CHOICES,
                self.d_k.value,
            ),
            Control.numbers(
                "temperature (divides the scores once more)",
                self.TEMPERATURES,
                1.0,
                fmt="{:.2f}",
            ),
        ]

        def render(d_k, temperature):
            state = scale_state(self.raw_scores, d_k, temperature, variance_dims=())
            return scale_svg(state, self.tokens) + readout_table(_scale_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="scale explorer",
            fallback_png=figure_png(self.figure()),
        )
