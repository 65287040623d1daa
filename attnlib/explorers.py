"""Interactive explorers: move a score, a scale, a query, a mask or a head and watch attention respond.

Each explorer has three layers, so that nothing a reader sees depends on a running kernel:

1. a **pure function** (``*_state``) that does the arithmetic with attnlib and returns the
   numbers as a dict; the tests call these directly;
2. a **figure function** (``*_figure``) that draws a state and returns the ``Figure``; the
   chapters store its PNG so the static website shows the default state;
3. a thin **widget class** built with ipywidgets: its controls feed the pure function, its
   ``readout`` shows the numbers and its ``image`` shows the redrawn figure as a PNG. Tests set a control's
   value and read the numbers back from ``readout``.

Controls have labels a learner understands, bounded ranges and steps; every state function
accepts the controls' extreme values without raising.
"""
from __future__ import annotations

import functools
import html
import io
import itertools
import math

import matplotlib.pyplot as plt
from matplotlib.colors import ListedColormap
import numpy as np

from . import examples
from .attention import attention, weighted_sum
from .heads import merge_heads
from .masks import bidirectional_mask, causal_mask, padding_mask
from .scaling import score_variance
from .scores import dot_product_scores, scaled_dot_product_scores
from .plots import OKABE_ITO, WEIGHT_CMAP, access_map, literal_labels, mixture_bars
from .softmax import softmax
from . import svg
from .precomputed import Control, PrecomputedExplorer, figure_png, readout_table

__all__ = [
    "scores_state", "scores_figure", "ScoresExplorer",
    "scale_state", "scale_figure", "ScaleExplorer",
    "query_key_state", "query_key_figure", "QueryKeyExplorer",
    "mask_state", "mask_figure", "MaskExplorer",
    "heads_state", "heads_figure", "HeadsExplorer",
    "cost_state", "cost_figure", "CostExplorer",
    "learned_state", "learned_figure", "LearnedExplorer",
    "model_state", "model_figure", "ModelExplorer",
]


def _fmt(x) -> str:
    """Numbers as the readouts show them: rounded to 4 decimals, no negative zero."""
    arr = np.round(np.asarray(x, dtype=float), 4) + 0.0
    return np.array2string(arr, precision=4, separator=", ", suppress_small=True,
                           floatmode="fixed")


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                    f"<td><code>{html.escape(v)}</code></td></tr>" for k, v in rows)
    return f"<table>{cells}</table>"


# --------------------------------------------------------------------------- scores -> output
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
    return _weights_and_output_figure(state["weights"], tokens, state["output"],
                                      "attention weights", "output = weighted sum of values",
                                      figsize=(7.0, 2.8), fmt="%.3f")


def scores_svg(state: dict, tokens, output_range) -> str:
    """The weights (each bar labelled with its token and score) and the output's coordinates."""
    labels = [f"{t}\nscore {s:g}" for t, s in zip(tokens, state["scores"])]
    return svg.side_by_side(
        svg.bar_chart(state["weights"], labels, title="attention weights"),
        svg.bar_chart(state["output"], [f"out[{i}]" for i in range(state["output"].size)],
                      title="output = weighted sum of values", y_range=output_range,
                      width=200))


def _value_range(values):
    """Axis range for a weighted sum of ``values``: it always lies within their range."""
    v = np.asarray(values, dtype=float)
    return float(min(0.0, v.min())), float(max(0.0, v.max()))


def _weights_and_output_figure(weights, tokens, output, weights_title, output_title, *,
                               figsize, fmt):
    """Mixture bars (left) and the bars of an output vector's coordinates (right)."""
    fig, (ax_w, ax_o) = plt.subplots(1, 2, figsize=figsize, layout="constrained",
                                     gridspec_kw={"width_ratios": [3, 2]})
    mixture_bars(weights, tokens, title=weights_title, ax=ax_w)
    bars = ax_o.bar([f"out[{i}]" for i in range(output.size)], output, color=OKABE_ITO[2])
    ax_o.bar_label(bars, fmt=fmt, fontsize=8)
    ax_o.axhline(0, color="black", linewidth=0.6)
    ax_o.set_title(output_title)
    return fig


def _scores_rows(state):
    return [("scores", _fmt(state["scores"])), ("weights", _fmt(state["weights"])),
            ("output", _fmt(state["output"]))]


class _Explorer:
    """Common widget plumbing: controls -> update() -> readout text and redrawn figure."""

    def __init__(self, live_figure: bool = True):
        import ipywidgets as widgets

        self._widgets = widgets
        self.readout = widgets.HTML()
        # The figure is shown as a PNG inside an Image widget (not an Output widget), so
        # redrawing sends widget state only: no display messages leak into notebook cells.
        self.image = widgets.Image(format="png")
        self.live_figure = live_figure
        self.state: dict = {}

    def _connect(self, controls) -> None:
        for control in controls:
            control.observe(lambda _change: self.update(), names="value")
        self.update()

    def update(self) -> None:
        self.state = self.compute()
        self.readout.value = _table(self.rows())
        if self.live_figure:
            fig = self.figure()
            buffer = io.BytesIO()
            fig.savefig(buffer, format="png")
            plt.close(fig)
            self.image.value = buffer.getvalue()

    @property
    def widget(self):
        """The whole explorer as one widget (controls, numbers, figure)."""
        w = self._widgets
        return w.VBox([w.VBox(list(self.controls)), self.readout, self.image])

    def _ipython_display_(self):
        from IPython.display import display

        display(self.widget)


class ScoresExplorer(_Explorer):
    """A slider per score; the weights and the weighted sum of the values follow.

    Defaults: the Machine / Learning / Rocks scores [2, 4, 1] and values [1,0], [0,2], [1,1].
    """

    def __init__(self, scores=None, values=None, tokens=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        ex = examples.MACHINE_LEARNING_ROCKS
        scores = ex.scores if scores is None else np.asarray(scores, dtype=float)
        self.values = ex.values if values is None else np.asarray(values, dtype=float)
        self.tokens = tuple(ex.tokens if tokens is None else tokens)
        self.sliders = [self._widgets.FloatSlider(value=float(s), min=-10.0, max=10.0, step=0.1,
                                                  description=f"score {t}",
                                                  style={"description_width": "initial"})
                        for s, t in zip(scores, self.tokens)]
        self.controls = self.sliders
        self._connect(self.controls)

    def compute(self) -> dict:
        return scores_state([s.value for s in self.sliders], self.values)

    def rows(self):
        return _scores_rows(self.state)

    def figure(self):
        return scores_figure(self.state, self.tokens)

    def precomputed(self, vary=(-1,), *, shift: bool = False,
                    grid=tuple(range(-2, 9))) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: the scores of the positions ``vary``
        (indices) take the values of ``grid``, the others stay at this explorer's scores;
        with ``shift``, a second control adds one amount (-4 ... 4) to every score.
        """
        base = np.array([s.value for s in self.sliders])
        controls = [Control.numbers(f"score of {self.tokens[i]}", grid, base[i])
                    for i in vary]
        if shift:
            controls.append(Control.numbers("added to every score", range(-4, 5), 0,
                                            fmt="{:+g}"))
        output_range = _value_range(self.values)

        def render(*chosen):
            scores = base.copy()
            for i, value in zip(vary, chosen):
                scores[i] = value
            if shift:
                scores = scores + chosen[-1]
            state = scores_state(scores, self.values)
            return (scores_svg(state, self.tokens, output_range)
                    + readout_table(_scores_rows(state)))

        return PrecomputedExplorer(controls, render, name="scores explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- scale / temperature
def scale_state(raw_scores, d_k: int = 1, temperature: float = 1.0, *,
                variance_dims=(1, 4, 16, 64, 256), n_samples: int = 20_000, seed: int = 0) -> dict:
    """How the scale of the scores sharpens or flattens the weights, and why we divide by sqrt(d_k).

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
    ``variance`` = {"d_k": dims, "unscaled": var of q·k, "scaled": var of q·k/sqrt(d_k)}.

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
    scaled_var = [score_variance(rng, int(d), n_samples, scaled=True) for d in variance_dims]
    return {"scaled_scores": scaled, "weights": w, "max_weight": float(w.max()),
            "entropy": entropy,
            "variance": {"d_k": np.asarray(variance_dims), "unscaled": np.asarray(unscaled_var),
                         "scaled": np.asarray(scaled_var)}}


def scale_figure(state: dict, tokens) -> plt.Figure:
    """Weights at the chosen scale, and the simulated variance of q·k against d_k."""
    fig, (ax_w, ax_v) = plt.subplots(1, 2, figsize=(7.5, 2.9), layout="constrained")
    mixture_bars(state["weights"], tokens, title="weights at this scale", ax=ax_w)
    var = state["variance"]
    ax_v.loglog(var["d_k"], var["unscaled"], "o-", color=OKABE_ITO[0], label="q·k")
    ax_v.loglog(var["d_k"], var["scaled"], "s--", color=OKABE_ITO[1], label="q·k / √d_k")
    ax_v.set_xlabel("d_k")
    ax_v.set_ylabel("variance of the score")
    ax_v.set_title("why divide by √d_k")
    ax_v.legend(frameon=False)
    return fig


def scale_svg(state: dict, tokens) -> str:
    """The weights of the scaled scores (each bar labelled with its scaled score)."""
    labels = [f"{t}\nscore {s:.2f}" for t, s in zip(tokens, state["scaled_scores"])]
    return svg.bar_chart(state["weights"], labels, title="weights at this scale", width=320)


def _scale_rows(s):
    return [("scaled scores", _fmt(s["scaled_scores"])), ("weights", _fmt(s["weights"])),
            ("largest weight", _fmt(s["max_weight"])), ("entropy (nats)", _fmt(s["entropy"]))]


class ScaleExplorer(_Explorer):
    """Choose d_k and a temperature; see the weights of fixed raw scores sharpen or flatten.

    Default raw scores: the bank example's unscaled dot products ``2√2, √2, 0`` (d_k = 2 then
    gives the scores 2, 1, 0 of the book).
    """

    DK_CHOICES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)

    def __init__(self, raw_scores=None, tokens=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        ex = examples.BANK
        self.raw_scores = (ex.keys @ ex.query if raw_scores is None
                           else np.asarray(raw_scores, dtype=float))
        self.tokens = tuple(ex.tokens if tokens is None else tokens)
        w = self._widgets
        self.d_k = w.SelectionSlider(options=self.DK_CHOICES, value=2,
                                     description="d_k (divide by √d_k)",
                                     style={"description_width": "initial"})
        self.temperature = w.FloatLogSlider(value=1.0, base=10, min=-1, max=1, step=0.05,
                                            description="temperature",
                                            style={"description_width": "initial"})
        self.controls = [self.d_k, self.temperature]
        self._connect(self.controls)

    def compute(self) -> dict:
        return scale_state(self.raw_scores, self.d_k.value, self.temperature.value)

    def rows(self):
        return _scale_rows(self.state)

    def figure(self):
        return scale_figure(self.state, self.tokens)

    TEMPERATURES = tuple(10 ** (k / 4) for k in range(-4, 5))   # 0.1 ... 10, 9 positions

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: every d_k of :attr:`DK_CHOICES` times
        nine temperatures from 0.1 to 10."""
        controls = [Control.numbers("key width d_k (scores divided by √d_k)",
                                    self.DK_CHOICES, self.d_k.value),
                    Control.numbers("temperature (divides the scores once more)",
                                    self.TEMPERATURES, 1.0, fmt="{:.2f}")]

        def render(d_k, temperature):
            state = scale_state(self.raw_scores, d_k, temperature, variance_dims=())
            return scale_svg(state, self.tokens) + readout_table(_scale_rows(state))

        return PrecomputedExplorer(controls, render, name="scale explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- query/key playground
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
    """Arrows: the query, the keys (left) and the values with the output mixture (right)."""
    fig, (ax_k, ax_v) = plt.subplots(1, 2, figsize=(7.5, 3.4), layout="constrained")
    k = np.asarray(keys, dtype=float)
    v = np.asarray(values, dtype=float)
    q = np.asarray(query, dtype=float)

    def arrow(ax, vec, color, label, width=0.012):
        ax.annotate("", xy=vec, xytext=(0, 0),
                    arrowprops={"arrowstyle": "-|>", "color": color, "lw": 1.8})
        ax.text(vec[0], vec[1], f" {label}", color=color, fontsize=9, va="bottom")

    for j, (kv, t) in enumerate(zip(k, tokens)):
        arrow(ax_k, kv, OKABE_ITO[(j + 1) % len(OKABE_ITO)], f"k {t} (w={state['weights'][j]:.2f})")
    arrow(ax_k, q, "black", "query")
    for j, (vv, t) in enumerate(zip(v, tokens)):
        arrow(ax_v, vv, OKABE_ITO[(j + 1) % len(OKABE_ITO)], f"v {t}")
    arrow(ax_v, state["output"], "black", "output")
    for ax, pts, title in ((ax_k, np.vstack([k, q, [0, 0]]), "query and keys"),
                           (ax_v, np.vstack([v, state["output"], [0, 0]]), "values and output")):
        lo, hi = pts.min(axis=0) - 0.6, pts.max(axis=0) + 0.9
        ax.set_xlim(lo[0], hi[0])
        ax.set_ylim(lo[1], hi[1])
        ax.set_aspect("equal")
        ax.axhline(0, color="grey", lw=0.5)
        ax.axvline(0, color="grey", lw=0.5)
        ax.set_title(title)
    return fig


def query_key_svg(state: dict, query, keys, values, tokens, extent: float = 3.2) -> str:
    """The query among the keys (each labelled with its weight), and the output among the
    values, on fixed axes from ``-extent`` to ``extent``."""
    colors = [OKABE_ITO[(j + 1) % len(OKABE_ITO)] for j in range(len(tokens))] + ["black"]
    key_labels = [f"k {t} (w={w:.2f})" for t, w in zip(tokens, state["weights"])]
    return svg.side_by_side(
        svg.arrows(list(keys) + [query], key_labels + ["query"], colors=colors,
                   title="query and keys", extent=extent),
        svg.arrows(list(values) + [state["output"]], [f"v {t}" for t in tokens] + ["output"],
                   colors=colors, title="values and output", extent=extent))


def _query_key_rows(state):
    return [("scores q·k/√2", _fmt(state["scores"])), ("weights", _fmt(state["weights"])),
            ("output", _fmt(state["output"]))]


class QueryKeyExplorer(_Explorer):
    """Move a 2-D query (and the keys) with sliders; scores, weights and output follow.

    Defaults: the bank example (query [√2, 0]; keys [2,0], [1,1], [0,1]; values [2,0], [0,2], [1,1]).
    """

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        ex = examples.BANK
        self.tokens = ex.tokens
        self.values = ex.values
        w = self._widgets
        style = {"description_width": "initial"}

        def slider(value, label):
            return w.FloatSlider(value=float(value), min=-3.0, max=3.0, step=0.05,
                                 description=label, style=style)

        self.query_sliders = [slider(ex.query[0], "query x"), slider(ex.query[1], "query y")]
        self.key_sliders = [[slider(k[0], f"key {t} x"), slider(k[1], f"key {t} y")]
                            for k, t in zip(ex.keys, ex.tokens)]
        self.controls = self.query_sliders + [s for pair in self.key_sliders for s in pair]
        self._connect(self.controls)

    @property
    def query(self):
        return np.array([s.value for s in self.query_sliders])

    @property
    def keys(self):
        return np.array([[x.value, y.value] for x, y in self.key_sliders])

    def compute(self) -> dict:
        return query_key_state(self.query, self.keys, self.values)

    def rows(self):
        return _query_key_rows(self.state)

    def figure(self):
        return query_key_figure(self.state, self.query, self.keys, self.values, self.tokens)

    DIRECTIONS = tuple(22.5 * k for k in range(16))                      # degrees
    LENGTHS = (0.0, 0.25, 0.5, 0.75, 1.0, math.sqrt(2), 2.0, 2.5, 3.0)

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: the query's direction (16 positions,
        22.5° apart, counter-clockwise from the x axis) and length (9 positions, 0 to 3);
        the keys stay at this explorer's keys."""
        q = self.query
        length = float(np.hypot(*q))
        angle = math.degrees(math.atan2(q[1], q[0])) % 360 if length else 0.0
        controls = [Control.numbers("query direction (degrees from the x axis)",
                                    self.DIRECTIONS, angle, fmt="{:g}°"),
                    Control.numbers("query length", self.LENGTHS, length, fmt="{:.2f}")]
        keys = self.keys

        def render(direction, length):
            query = length * np.array([math.cos(math.radians(direction)),
                                       math.sin(math.radians(direction))])   # (2,)
            query = np.round(query, 12) + 0.0
            state = query_key_state(query, keys, self.values)
            rows = [("query", _fmt(query))] + _query_key_rows(state)
            return (query_key_svg(state, query, keys, self.values, self.tokens)
                    + readout_table(rows))

        return PrecomputedExplorer(controls, render, name="query and key explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- masks
MASK_KINDS = ("causal", "bidirectional", "padding")


def mask_state(tokens, kind: str = "causal", *, pad_to: int | None = None, seed: int = 0) -> dict:
    """The access map of a mask for a sentence, and the weights it leaves.

    Parameters
    ----------
    tokens : sequence of str (at least one)
    kind : {"causal", "bidirectional", "padding"}
        "padding" pads the sentence with "[PAD]" tokens up to ``pad_to`` and lets every real
        token attend every real token (a bidirectional encoder with a key padding mask).
    pad_to : int, optional; only for "padding" (default: two more than the sentence)
    seed : int, seeds the random scores the weights are computed from

    Returns
    -------
    dict with ``tokens`` (tuple), ``mask`` (L, L) bool, ``scores`` (L, L) and ``weights`` (L, L).

    Raises
    ------
    ValueError for an unknown kind or an empty sentence.
    """
    tokens = tuple(tokens)
    if not tokens:
        raise ValueError("the sentence has no tokens")
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}; got {kind!r}")
    n_real = len(tokens)
    if kind == "padding":
        pad_to = max(n_real, pad_to if pad_to is not None else n_real + 2)
        tokens = tokens + ("[PAD]",) * (pad_to - n_real)
        mask = padding_mask(np.array([n_real]), pad_to)[0] & np.ones((pad_to, 1), dtype=bool)
        mask = mask & (np.arange(pad_to) < n_real)[:, None]  # padding queries attend nothing
    elif kind == "causal":
        mask = causal_mask(n_real)
    else:
        mask = bidirectional_mask(n_real)
    n = len(tokens)
    scores = np.random.default_rng(seed).normal(size=(n, n))
    weights = softmax(scores, mask=mask)
    return {"tokens": tokens, "mask": mask, "scores": scores, "weights": weights}


def mask_figure(state: dict) -> plt.Figure:
    """The access map next to the weights it leaves (random scores, same seed)."""
    tokens = state["tokens"]
    n = len(tokens)
    fig, (ax_m, ax_w) = plt.subplots(1, 2, figsize=(max(6.0, 0.9 * n + 2.5), 0.45 * n + 1.8),
                                     layout="constrained")
    access_map(state["mask"], tokens, title="may attend", ax=ax_m)
    image = ax_w.imshow(state["weights"], vmin=0, vmax=1, cmap=WEIGHT_CMAP)
    ax_w.set_xticks(range(n), labels=literal_labels(tokens), rotation=90)
    ax_w.set_yticks(range(n), labels=literal_labels(tokens))
    ax_w.set_title("weights (random scores)")
    fig.colorbar(image, ax=ax_w, shrink=0.8, label="attention weight")
    return fig


ACCESS_CMAP = ListedColormap(["#f2f2f2", OKABE_ITO[0]])


def mask_svg(state: dict) -> str:
    """Which keys each query may attend (blue) next to the weights that are left."""
    t = state["tokens"]
    return svg.side_by_side(
        svg.heatmap(state["mask"], t, t, title="may attend (blue)", cmap=ACCESS_CMAP),
        svg.heatmap(state["weights"], None, t, title="weights (random scores)"))


def _mask_rows(s):
    allowed = s["mask"].sum(axis=1)
    last = int(np.flatnonzero(s["mask"].any(axis=1))[-1])
    return [("tokens", " | ".join(s["tokens"])),
            ("keys allowed per query", str(allowed.tolist())),
            ("row sums of the weights", _fmt(s["weights"].sum(axis=1))),
            (f"weights of the last query that attends ({s['tokens'][last]})",
             _fmt(s["weights"][last]))]


class MaskExplorer(_Explorer):
    """Edit a sentence and choose causal, bidirectional or padding; see access and weights.

    Default sentence: "The bank flooded after the storm ." (a separate token for the period).
    """

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.sentence = w.Text(value=" ".join(examples.FLOOD_TOKENS),
                               description="sentence (tokens split at spaces)", style=style)
        self.kind = w.ToggleButtons(options=MASK_KINDS, value="causal", description="mask")
        self.pad_to = w.IntSlider(value=len(examples.FLOOD_TOKENS) + 2, min=1, max=16,
                                  description="padded length", style=style)
        self.controls = [self.sentence, self.kind, self.pad_to]
        self._connect(self.controls)

    def tokens(self):
        toks = tuple(self.sentence.value.split())
        return toks if toks else ("(empty)",)

    def compute(self) -> dict:
        return mask_state(self.tokens(), self.kind.value, pad_to=self.pad_to.value)

    def rows(self):
        return _mask_rows(self.state)

    def figure(self):
        return mask_figure(self.state)

    SENTENCES = (" ".join(examples.FLOOD_TOKENS), "The cat sat on the mat .",
                 "I love building distributed systems")

    def precomputed(self, sentences=SENTENCES) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: the three masks times a few sentences
        (tokens split at spaces; padding adds two [PAD] tokens)."""
        sentences = list(sentences)
        default = self.sentence.value if self.sentence.value in sentences else sentences[0]
        controls = [Control("mask", tuple((k, k) for k in MASK_KINDS),
                            MASK_KINDS.index(self.kind.value), kind="list"),
                    Control("sentence", tuple((s, s) for s in sentences),
                            sentences.index(default), kind="dropdown")]

        def render(kind, sentence):
            tokens = tuple(sentence.split())
            state = mask_state(tokens, kind, pad_to=len(tokens) + 2)
            return mask_svg(state) + readout_table(_mask_rows(state))

        return PrecomputedExplorer(controls, render, name="mask explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- heads
def heads_state(head_scores, values, W_O) -> dict:
    """Several heads over the same positions: their mixtures, concatenation and projection.

    Parameters
    ----------
    head_scores : array_like, shape (H, L): one row of scores per head (one query)
    values : array_like, shape (H, L, d_head): each head's own value vectors
    W_O : array_like, shape (H * d_head, d_out): the output projection

    Returns
    -------
    dict with ``weights`` (H, L), ``head_outputs`` (H, d_head), ``concatenated`` (H*d_head,)
    and ``output`` (d_out,).

    Raises
    ------
    ValueError if the shapes disagree (the shapes are named).
    """
    s = np.asarray(head_scores, dtype=float)
    v = np.asarray(values, dtype=float)
    W = np.asarray(W_O, dtype=float)
    if s.ndim != 2 or v.ndim != 3 or v.shape[:2] != s.shape:
        raise ValueError(f"head_scores {s.shape} and values {v.shape} must be (H, L) and (H, L, d_head)")
    if W.shape[0] != v.shape[0] * v.shape[2]:
        raise ValueError(f"W_O {W.shape} must have H * d_head = {v.shape[0] * v.shape[2]} rows")
    w = softmax(s)                                         # (H, L)
    head_out = weighted_sum(w[:, None, :], v)[:, 0, :]     # (H, d_head)
    concat = merge_heads(head_out[:, None, :])[0]          # (H * d_head,)
    return {"weights": w, "head_outputs": head_out, "concatenated": concat, "output": concat @ W}


def heads_figure(state: dict, tokens) -> plt.Figure:
    """Each head's mixture as grouped bars, and the projected output."""
    return _weights_and_output_figure(state["weights"], tokens, state["output"],
                                      "one mixture per head", "concat(heads) · W_O",
                                      figsize=(7.5, 2.9), fmt="%.2f")


def heads_svg(state: dict, tokens, output_range) -> str:
    """Each head's weights as grouped bars, and the projected output on a fixed axis."""
    H = state["weights"].shape[0]
    return svg.side_by_side(
        svg.bar_chart(state["weights"], tokens, title="one mixture per head",
                      series=[f"head {h + 1}" for h in range(H)], width=320),
        svg.bar_chart(state["output"], [f"out[{i}]" for i in range(state["output"].size)],
                      title="concat(heads) · W_O", y_range=output_range, width=200))


def _heads_rows(s):
    rows = [(f"head {h + 1} weights", _fmt(w)) for h, w in enumerate(s["weights"])]
    rows += [("concatenated head outputs", _fmt(s["concatenated"])),
             ("output (· W_O)", _fmt(s["output"]))]
    return rows


class HeadsExplorer(_Explorer):
    """Two or more heads side by side: edit each head's scores; mixtures, concat and W_O follow.

    Defaults: the scores [2, 1, 0] and [1, 2, 0] over fisherman / net / bank; head h's values
    are the bank example's values (head 1) and seeded random vectors (further heads); W_O is
    a seeded random (H*2, 2) matrix.
    """

    def __init__(self, num_heads: int = 2, *, seed: int = 0, live_figure: bool = True):
        super().__init__(live_figure)
        if not 1 <= num_heads <= 4:
            raise ValueError(f"num_heads must be between 1 and 4; got {num_heads}")
        self.tokens = examples.BANK.tokens
        rng = np.random.default_rng(seed)
        defaults = np.vstack([examples.TWO_HEAD_SCORES,
                              rng.normal(size=(max(0, num_heads - 2), 3)).round(1)])[:num_heads]
        self.values = np.stack([examples.BANK.values] +
                               [rng.normal(size=(3, 2)).round(2) for _ in range(num_heads - 1)])
        self.W_O = rng.normal(scale=0.7, size=(2 * num_heads, 2)).round(2)
        w = self._widgets
        self.score_sliders = [[w.FloatSlider(value=float(v), min=-5.0, max=5.0, step=0.1,
                                             description=f"head {h + 1}: {t}",
                                             style={"description_width": "initial"})
                               for v, t in zip(row, self.tokens)]
                              for h, row in enumerate(defaults)]
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

    def precomputed(self, edits=((0, 0), (1, 1)), grid=tuple(range(-3, 6))
                    ) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: one score of each of two heads
        (``edits`` = (head, position) pairs) takes the values of ``grid``."""
        base = self.head_scores()
        controls = [Control.numbers(f"head {h + 1}: score of {self.tokens[j]}", grid,
                                    base[h, j]) for h, j in edits]
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
            return heads_svg(state, self.tokens, output_range) + readout_table(_heads_rows(state))

        return PrecomputedExplorer(controls, render, name="heads explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- cost
def cost_state(n: int, d: int = 64, *, heads: int = 1, block=None,
               bytes_per_number: int = 4) -> dict:
    """What one attention layer costs at sequence length ``n`` (counted, not measured).

    Parameters
    ----------
    n : int >= 1, sequence length (self-attention: ``L_q = L_k = n``)
    d : int >= 1, features per head (``d_k = d_v = d``)
    heads : int >= 1
    block : None, int or (int, int), the tile of tiled attention (queries x keys); None (the
        default) is :func:`attnlib.tiled.default_block_sizes`, the tile
        ``attnlib.tiled_attention`` uses (256 x 1,024 for long sequences); an int is a square
        tile. Tiles are capped at ``n``.
    bytes_per_number : 4 for float32, 2 for float16, 8 for float64

    Returns
    -------
    dict with the inputs, ``block_q`` and ``block_k`` (the tile), ``score_entries``
    (= heads * n^2), ``plain_scores_bytes`` (the full score table), ``tile_bytes`` (one tile
    per head), ``running_max_bytes`` and ``running_sum_bytes`` (one number per query and
    head each), ``running_weighted_sum_bytes`` (``d`` numbers per query and head, the size
    of the output), ``tiled_scores_bytes`` (tile + running maximum + running sum: what
    replaces the score table) and ``flops`` (about 4 n^2 d per head: n^2 d multiply-adds for
    Q K^T and as many for the weighted sum, two flops each).

    Raises
    ------
    ValueError if any count is below 1.

    Source: Dao et al. (2022), section 3.1, for the tiles and the running statistics.
    """
    from .tiled import default_block_sizes

    for name, value in (("n", n), ("d", d), ("heads", heads), ("bytes_per_number",
                                                                bytes_per_number)):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1; got {value}")
    n, d, heads = int(n), int(d), int(heads)
    if block is None:
        block_q, block_k = default_block_sizes(n, n)
    else:
        sizes = (block, block) if np.ndim(block) == 0 else tuple(block)
        if len(sizes) != 2 or min(int(b) for b in sizes) < 1:
            raise ValueError(f"block must be a positive int or a pair of them; got {block!r}")
        block_q, block_k = min(int(sizes[0]), n), min(int(sizes[1]), n)
    entries = heads * n * n
    per_query = heads * n * bytes_per_number
    tile = heads * block_q * block_k * bytes_per_number
    return {"n": n, "d": d, "heads": heads, "block_q": block_q, "block_k": block_k,
            "block": block, "bytes_per_number": bytes_per_number,
            "score_entries": entries,
            "plain_scores_bytes": entries * bytes_per_number,
            "tile_bytes": tile, "running_max_bytes": per_query,
            "running_sum_bytes": per_query, "running_weighted_sum_bytes": per_query * d,
            "tiled_scores_bytes": tile + 2 * per_query,
            "flops": 4 * heads * n * n * d}


def _cost_curves(state: dict, max_n: int = 131_072):
    ns = np.unique(np.geomspace(16, max(max_n, state["n"]), 40).astype(int))
    costs = [cost_state(k, state["d"], heads=state["heads"], block=state["block"],
                        bytes_per_number=state["bytes_per_number"]) for k in ns]
    return (ns, [c["plain_scores_bytes"] / 2**20 for c in costs],
            [c["tiled_scores_bytes"] / 2**20 for c in costs])


def _tile_name(state: dict) -> str:
    return ("the default tile (at most 262,144 scores)" if state["block"] is None
            else f"{state['block_q']:,} × {state['block_k']:,} tiles")


def cost_figure(state: dict, *, max_n: int = 131_072) -> plt.Figure:
    """Score-table memory of plain and tiled attention against n (log-log), this n marked."""
    ns, plain, tiled = _cost_curves(state, max_n)
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    ax.loglog(ns, plain, color=OKABE_ITO[0], label="plain: the whole n × n table")
    ax.loglog(ns, tiled, "--", color=OKABE_ITO[1],
              label=f"tiled, {_tile_name(state)}: one tile + running max and sum")
    ax.axvline(state["n"], color="grey", lw=0.8)
    ax.set_xlabel("sequence length n")
    ax.set_ylabel("score memory (MiB)")
    ax.legend(frameon=False, fontsize=8)
    return fig


def cost_svg(state: dict, *, max_n: int = 131_072) -> str:
    """The curves of :func:`cost_figure` as a drawing (fixed axes; this n dashed)."""
    ns, plain, tiled = _cost_curves(state, max_n)
    names = ("plain: the whole n × n table", "tiled: one tile + running max and sum")
    return svg.line_chart(ns, dict(zip(names, (plain, tiled))),
                          title=f"score memory, {state['heads']} head(s), float32",
                          xlabel="sequence length n", ylabel="MiB", mark_x=state["n"],
                          marked=dict(zip(names, (state["plain_scores_bytes"] / 2**20,
                                                  state["tiled_scores_bytes"] / 2**20))),
                          width=420)


def _cost_rows(s):
    mib = 2**20
    return [("score entries", f"{s['score_entries']:,}"),
            ("plain: score table (float32)", f"{s['plain_scores_bytes'] / mib:,.3f} MiB"),
            ("tiled: one tile per head",
             f"{s['block_q']:,} × {s['block_k']:,} = {s['tile_bytes'] / mib:,.3f} MiB"),
            ("tiled: running maximum (one per query)", f"{s['running_max_bytes'] / mib:,.3f} MiB"),
            ("tiled: running sum (one per query)", f"{s['running_sum_bytes'] / mib:,.3f} MiB"),
            ("tiled: running weighted sum of values (d per query, the output's size)",
             f"{s['running_weighted_sum_bytes'] / mib:,.3f} MiB"),
            ("floating-point operations (both forms)", f"{s['flops']:,}")]


class CostExplorer(_Explorer):
    """Slide the sequence length, width and heads, choose a tile; see entries, memory, FLOPs."""

    TILES = (("attnlib's default (1 MiB: 256 × 1,024 for long inputs)", None),
             ("64 × 64", 64),
             ("128 × 128", 128), ("256 × 256", 256), ("512 × 512", 512),
             ("1,024 × 1,024", 1024))

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.n = w.IntSlider(value=1_000, min=1, max=100_000, step=1,
                             description="sequence length n (tokens)", style=style)
        self.d = w.IntSlider(value=64, min=1, max=256, description="d per head", style=style)
        self.heads = w.IntSlider(value=1, min=1, max=16, description="heads", style=style)
        self.block = w.Dropdown(options=self.TILES, value=None,
                                description="tile (queries × keys)", style=style)
        self.controls = [self.n, self.d, self.heads, self.block]
        self._connect(self.controls)

    def compute(self) -> dict:
        return cost_state(self.n.value, self.d.value, heads=self.heads.value,
                          block=self.block.value)

    def rows(self):
        return _cost_rows(self.state)

    def figure(self):
        return cost_figure(self.state)

    LENGTHS = tuple(2 ** k for k in range(7, 18))         # 128 ... 131,072 tokens
    HEADS = (1, 2, 4, 8, 12, 16)

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: eleven sequence lengths (128 to
        131,072 tokens, each twice the last) times 1 to 16 heads; d and the tile as set here."""
        controls = [Control.numbers("sequence length n (tokens)", self.LENGTHS, 1024,
                                    fmt="{:,}"),
                    Control.numbers("heads", self.HEADS, self.heads.value)]

        def render(n, heads):
            state = cost_state(n, self.d.value, heads=heads, block=self.block.value)
            return cost_svg(state) + readout_table(_cost_rows(state))

        return PrecomputedExplorer(controls, render, name="cost explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- learned vs computed
def learned_state(model, sentence: str) -> dict:
    """Run a trained context classifier (frozen parameters) on one sentence.

    Parameters
    ----------
    model : attnlib.training.ContextClassifier, e.g. from ``train_context_classifier(seed=0)``
    sentence : str, words from ``attnlib.context_task.VOCAB`` with exactly one ambiguous word

    Returns
    -------
    dict with ``words`` (tuple), ``ambiguous`` (the ambiguous word), ``weights`` (L,) the
    ambiguous word's attention weights, ``probs`` (2,) and ``sense`` (the predicted sense name).

    Raises
    ------
    ValueError (from ``encode_sentences``) naming an unknown word, or when the sentence does
    not hold exactly one ambiguous word.
    """
    from .context_task import SENSES, encode_sentences
    from .training import forward

    batch = encode_sentences([sentence])
    result = forward(model, batch)
    words = tuple(batch.words(0))
    ambiguous = words[int(batch.query_index[0])]
    probs = result.probs[0]
    return {"words": words, "ambiguous": ambiguous, "weights": result.query_weights[0, :len(words)],
            "probs": probs, "sense": SENSES[ambiguous][int(np.argmax(probs))]}


def learned_figure(state: dict) -> plt.Figure:
    """The ambiguous word's attention over the sentence, and the predicted sense."""
    fig = mixture_bars(state["weights"], state["words"],
                       title=f"attention from '{state['ambiguous']}': predicted sense "
                             f"'{state['sense']}' ({state['probs'].max():.2f})")
    fig.set_size_inches(max(6.0, 0.75 * len(state["words"])), 3.0)
    return fig


def learned_svg(state: dict) -> str:
    """The ambiguous word's weights over the sentence, the prediction in the title."""
    words = state["words"]
    return svg.bar_chart(state["weights"], words,
                         title=f"attention from '{state['ambiguous']}': predicted sense "
                               f"'{state['sense']}' (p = {state['probs'].max():.2f})",
                         width=max(360, 62 * len(words)))


def _learned_rows(s):
    return [("words", " | ".join(s["words"])), ("weights", _fmt(s["weights"])),
            ("predicted sense", f"{s['sense']} (p = {s['probs'].max():.4f})")]


class LearnedExplorer(_Explorer):
    """Edit a sentence; a trained model with frozen parameters computes new attention weights.

    The parameters never change while you type: only the input does, and with it the weights
    and the prediction (the chapter's point about learned versus computed).
    """

    def __init__(self, model=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        from .training import train_context_classifier

        self.model = train_context_classifier(seed=0) if model is None else model
        w = self._widgets
        self.sentence = w.Text(value="The fisherman repaired his net beside the bank.",
                               description="sentence", style={"description_width": "initial"},
                               layout=w.Layout(width="95%"))
        self.controls = [self.sentence]
        self.error = ""
        self._last_good: dict = {}
        self._connect(self.controls)

    def compute(self) -> dict:
        try:
            self._last_good = learned_state(self.model, self.sentence.value)
            self.error = ""
        except ValueError as exc:       # an unknown word while typing: keep the last result
            self.error = str(exc)
            if not self._last_good:
                raise
        return self._last_good

    def rows(self):
        rows = _learned_rows(self.state)
        if self.error:
            rows.insert(0, ("not understood", self.error))
        return rows

    def figure(self):
        return learned_figure(self.state)

    SENTENCES = (
        "The fisherman repaired his net beside the bank.",
        "The bank was crowded because people were waiting to withdraw money.",
        "The cashier was waiting with the loan in the bank.",
        "The fisherman was waiting to withdraw money in the bank.",
        "The bank was crowded.",
        "The bat was in the cave with wings and fur.",
        "The pitcher was waiting with the bat and a glove.",
        "In april the spring flowers blossom.",
        "The mattress spring was metal.",
    )

    def precomputed(self, sentences=SENTENCES) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: a few sentences to choose from (the
        live explorer takes any sentence in the task's vocabulary)."""
        sentences = list(sentences)
        default = self.sentence.value if self.sentence.value in sentences else sentences[0]
        controls = [Control("sentence", tuple((t, t) for t in sentences),
                            sentences.index(default), kind="dropdown")]

        def render(sentence):
            state = learned_state(self.model, sentence)
            return learned_svg(state) + readout_table(_learned_rows(state))

        return PrecomputedExplorer(controls, render, name="learned-attention explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- a real model
def model_state(sentence: str, layer: int, head: int) -> dict:
    """One head of all-MiniLM-L6-v2 on a sentence: its attention map and its norm-weighted map.

    Parameters
    ----------
    sentence : str
    layer : int in [0, 6), head : int in [0, 12) (counted from 0)

    Returns
    -------
    dict with ``tokens`` (list of L str), ``weights`` (L, L) the attention weights alpha,
    ``norms`` (L, L) Kobayashi et al.'s ``||alpha_ij f(x_j)||``, and ``norm_share`` (L, L),
    the norms of each row divided by the row's total, comparable with the weights.

    Raises
    ------
    ValueError for a layer or head out of range (the ranges are named).

    Source: Kobayashi et al. (2020), section 3.
    """
    from . import minilm

    if not 0 <= int(layer) < 6 or not 0 <= int(head) < 12:
        raise ValueError(f"layer must be in 0..5 and head in 0..11; got layer={layer}, head={head}")
    out = _minilm_forward(sentence)
    weights = out.attention[int(layer), int(head)]
    norms = minilm.weighted_norms(weights, out.transformed[int(layer), int(head)])
    totals = norms.sum(axis=-1, keepdims=True)
    share = np.divide(norms, totals, out=np.zeros_like(norms), where=totals > 0)
    return {"tokens": list(out.tokens), "layer": int(layer), "head": int(head),
            "weights": weights, "norms": norms, "norm_share": share}


@functools.lru_cache(maxsize=8)
def _minilm_forward(sentence: str):
    """One forward pass per sentence, shared by all the layers and heads explored on it."""
    from . import minilm

    return minilm.forward(sentence)


def model_svg(state: dict) -> str:
    """The head's weights next to its norm-weighted contributions (shares of each row)."""
    t = state["tokens"]
    return svg.side_by_side(
        svg.heatmap(state["weights"], t, t, cell=16,
                    title=f"weights, layer {state['layer']} head {state['head']}"),
        svg.heatmap(state["norm_share"], None, t, cell=16,
                    title="norm-weighted ||α f(x)||, share per row"))


def _model_rows(s):
    return [("tokens", " | ".join(s["tokens"])),
            ("mean weight on [CLS]", _fmt(s["weights"][:, 0].mean())),
            ("mean norm share of [CLS]", _fmt(s["norm_share"][:, 0].mean()))]


def model_figure(state: dict) -> plt.Figure:
    """Attention weights next to the norm-weighted contributions (each row as shares of one)."""
    from .plots import attention_heatmap

    both = np.stack([state["weights"], state["norm_share"]])[None]   # (1, 2, L, L)
    fig = attention_heatmap(both, state["tokens"], state["tokens"], annotate=False,
                            titles=[f"weights, layer {state['layer']} head {state['head']}",
                                    "norm-weighted ||α f(x)||, share per row"],
                            panel_size=3.6)
    return fig


class ModelExplorer(_Explorer):
    """Pick or type a sentence, a layer and a head of the pretrained model; compare weights
    and norms."""

    def __init__(self, sentences=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        options = list(sentences) if sentences is not None else [
            examples.SENTENCES[k] for k in ("river", "money", "tired", "wide", "flood", "withdraw")]
        # A combo box: pick one of the book's sentences or type your own (Enter to run).
        self.sentence = w.Combobox(options=options, value=options[0], description="sentence",
                                   ensure_option=False, continuous_update=False,
                                   style=style, layout=w.Layout(width="95%"))
        self.layer = w.IntSlider(value=0, min=0, max=5, description="layer", style=style)
        self.head = w.IntSlider(value=10, min=0, max=11, description="head", style=style)
        self.controls = [self.sentence, self.layer, self.head]
        self._connect(self.controls)

    def compute(self) -> dict:
        return model_state(self.sentence.value, self.layer.value, self.head.value)

    def rows(self):
        return _model_rows(self.state)

    def precomputed(self, sentences=None) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: every layer and head of the model on a
        few sentences (default: the first two of this explorer's list, the river and the
        money sense of "bank")."""
        sentences = list(sentences or self.sentence.options[:2])
        default = self.sentence.value if self.sentence.value in sentences else sentences[0]
        controls = [Control("sentence", tuple((t, t) for t in sentences),
                            sentences.index(default), kind="dropdown"),
                    Control.numbers("layer (0 = first, 5 = last)", range(6), self.layer.value),
                    Control.numbers("head (0 to 11)", range(12), self.head.value)]

        def render(sentence, layer, head):
            state = model_state(sentence, layer, head)
            return model_svg(state) + readout_table(_model_rows(state))

        return PrecomputedExplorer(controls, render, name="model explorer",
                                   fallback_png=figure_png(self.figure()))

    def figure(self):
        return model_figure(self.state)


# --------------------------------------------------------------------------- position (order)
def position_state(position: int, offset: int, d_model: int = 16, *, pair: int = 0,
                   length: int = 64) -> dict:
    """Sinusoidal encodings at ``p`` and ``p + k``, and the fixed rotation between them.

    Parameters
    ----------
    position : int >= 0, ``p``;  offset : int, ``k`` (``p + k`` must stay >= 0)
    d_model : int, even;  pair : int, the coordinate pair drawn on its circle
    length : int, how many positions the similarity curve covers

    Returns
    -------
    dict with ``pe_p`` and ``pe_pk`` (d_model,), ``rotated`` = ``R_k pe_p``, ``max_error``
    = ``max |R_k pe_p - pe_pk|``, ``angles`` (d_model/2,) = ``k omega_i`` in radians, and
    ``similarity`` (length,) = ``PE(p) . PE(p + j)`` for ``j = 0 .. length-1``, with
    ``similarity_from_0`` the same from position 0 (equal: it depends on ``j`` only).

    Raises
    ------
    ValueError if ``p + k < 0``, ``pair`` is out of range or ``d_model`` is not even.

    Source: Vaswani et al. (2017), section 3.5.
    """
    from .positional_encoding import frequencies, sinusoidal_encoding, sinusoidal_shift_matrix

    p, k = int(position), int(offset)
    if p < 0 or p + k < 0:
        raise ValueError(f"positions must be non-negative; got p={p}, p+k={p + k}")
    omega = frequencies(d_model)
    if not 0 <= int(pair) < omega.size:
        raise ValueError(f"pair must be in 0..{omega.size - 1}; got {pair}")
    pe = sinusoidal_encoding(max(p, p + k) + length, d_model)            # (L, d)
    rotated = sinusoidal_shift_matrix(k, d_model) @ pe[p]                 # (d,)
    return {"position": p, "offset": k, "pair": int(pair), "omega": omega,
            "pe_p": pe[p], "pe_pk": pe[p + k], "rotated": rotated,
            "max_error": float(np.abs(rotated - pe[p + k]).max()),
            "angles": k * omega,
            "similarity": pe[p + np.arange(length)] @ pe[p],
            "similarity_from_0": pe[:length] @ pe[0]}


def position_figure(state: dict) -> plt.Figure:
    """Left: one coordinate pair on its circle, positions t and t + k marked. Right: the
    dot product PE(t) . PE(t + j) against j, from t and from 0 (the curves coincide)."""
    fig, (ax_c, ax_s) = plt.subplots(1, 2, figsize=(8.0, 3.4), layout="constrained",
                                     gridspec_kw={"width_ratios": [1, 1.6]})
    i, p, k = state["pair"], state["position"], state["offset"]
    w = state["omega"][i]
    t = np.linspace(0, 2 * np.pi, 200)
    ax_c.plot(np.sin(t), np.cos(t), color="0.8", linewidth=1)
    ts = np.arange(0, 40) * w
    ax_c.plot(np.sin(ts), np.cos(ts), "o", color="0.6", markersize=3)
    for pos, colour, marker, label in ((p, OKABE_ITO[0], "o", f"t = {p}"),
                                       (p + k, OKABE_ITO[5], "s", f"t + k = {p + k}")):
        ax_c.plot(np.sin(pos * w), np.cos(pos * w), marker, color=colour, markersize=9,
                  label=label)
    ax_c.set_aspect("equal")
    ax_c.set_xlim(-1.3, 1.3)
    ax_c.set_ylim(-1.3, 1.3)
    ax_c.set_xlabel(f"PE[·, {2 * i}] = sin(t·θ)")
    ax_c.set_ylabel(f"PE[·, {2 * i + 1}] = cos(t·θ)")
    ax_c.set_title(f"pair {i}: turn by k·θ = {state['angles'][i]:.2f} rad", fontsize=9)
    ax_c.legend(frameon=False, fontsize=8, loc="lower left")
    j = np.arange(state["similarity"].size)
    ax_s.plot(j, state["similarity"], color=OKABE_ITO[0], linewidth=2.2, label=f"from t = {p}")
    ax_s.plot(j, state["similarity_from_0"], "--", color=OKABE_ITO[1], label="from t = 0")
    ax_s.set_xlabel("offset j")
    ax_s.set_ylabel("PE(t) · PE(t + j)")
    ax_s.set_title("dot product depends on the offset only", fontsize=9)
    ax_s.legend(frameon=False, fontsize=8)
    return fig


def position_svg(state: dict) -> str:
    """The chosen pair of PE(t) and PE(t + k) as two unit arrows (sin on the x axis, cos on
    the y axis): the second is the first turned by the angle k·θ_i."""
    i, t, k = state["pair"], state["position"], state["offset"]
    a, b = state["pe_p"][2 * i:2 * i + 2], state["pe_pk"][2 * i:2 * i + 2]       # (2,)
    return svg.arrows([a, b], [f"PE(t = {t}), pair {i}", f"PE(t + k = {t + k}), pair {i}"],
                      title=f"pair {i}: turned by k·θ = {state['angles'][i]:.2f} rad",
                      extent=1.2, colors=[OKABE_ITO[0], OKABE_ITO[5]], size=240)


def _position_rows(s):
    i, t, k = s["pair"], s["position"], s["offset"]
    return [("position t, offset k, pair i", f"{t}, {k}, {i}"),
            ("angle k·θ_i (radians)", f"{s['angles'][i]:.4f}"),
            (f"PE(t), coordinates {2 * i}, {2 * i + 1}", _fmt(s["pe_p"][2 * i:2 * i + 2])),
            (f"PE(t + k), coordinates {2 * i}, {2 * i + 1}",
             _fmt(s["pe_pk"][2 * i:2 * i + 2])),
            ("R_k PE(t) equals PE(t + k) to 1e-12", str(s["max_error"] < 1e-12)),
            ("PE(t) · PE(t + k)", f"{s['similarity'][k]:.4f}"),
            ("PE(0) · PE(k), the same", f"{s['similarity_from_0'][k]:.4f}")]


class PositionExplorer(_Explorer):
    """Choose a position, an offset, the width and a coordinate pair; see the rotation."""

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.position = w.IntSlider(value=5, min=0, max=60, description="position t", style=style)
        self.offset = w.IntSlider(value=3, min=0, max=30, description="offset k", style=style)
        self.d_model = w.SelectionSlider(options=(4, 8, 16, 32, 64), value=16,
                                         description="width d", style=style)
        self.pair = w.IntSlider(value=0, min=0, max=31, description="pair drawn", style=style)
        self.controls = [self.position, self.offset, self.d_model, self.pair]
        self._connect(self.controls)

    def compute(self) -> dict:
        pair = min(self.pair.value, self.d_model.value // 2 - 1)
        return position_state(self.position.value, self.offset.value, self.d_model.value,
                              pair=pair)

    def rows(self):
        s = self.state
        return [("PE(t), first 4", _fmt(s["pe_p"][:4])),
                ("PE(t + k), first 4", _fmt(s["pe_pk"][:4])),
                ("R_k PE(t), first 4", _fmt(s["rotated"][:4])),
                ("R_k PE(t) equals PE(t + k) to 1e-12", str(s["max_error"] < 1e-12)),
                ("angles k·θ_i, first 4 pairs", _fmt(s["angles"][:4]))]

    def figure(self):
        return position_figure(self.state)

    POSITIONS = tuple(range(0, 45, 5))                 # 0, 5, ..., 40: 9 positions
    OFFSETS = (0, 1, 2, 3, 5, 8, 13, 20, 30)           # 9 offsets
    PAIRS = (0, 1, 2)                                   # the fastest three pairs

    def precomputed(self, d_model: int = 16) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: nine positions t (0 to 40), nine
        offsets k (0 to 30) and the coordinate pairs 0, 1, 2, with ``d_model`` fixed (16)."""
        controls = [Control.numbers("position t (tokens from the start)", self.POSITIONS,
                                    5),
                    Control.numbers("offset k (tokens further on)", self.OFFSETS, 3),
                    Control("coordinate pair drawn",
                            tuple((f"pair {i} (coordinates {2 * i}, {2 * i + 1})", i)
                                  for i in self.PAIRS), 0, "list")]

        def render(t, k, pair):
            state = position_state(t, k, d_model, pair=pair)
            return position_svg(state) + readout_table(_position_rows(state))

        return PrecomputedExplorer(controls, render, name="position explorer",
                                   fallback_png=figure_png(self.figure()))


# --------------------------------------------------------------------------- a whole layer
LAYER_STEPS = ("input X", "attention A", "feed-forward F", "output Y")


def layer_state(sentence: str, layer: int) -> dict:
    """Inside one layer of all-MiniLM-L6-v2: how much each sub-layer adds to each token.

    Parameters
    ----------
    sentence : str;  layer : int in [0, 6)

    Returns
    -------
    dict with ``tokens`` (L,), ``norms`` (4, L): the length of each token's vector for
    :data:`LAYER_STEPS` (the layer input X, the attention sub-layer's output A, the
    feed-forward output F, the layer output Y), ``change`` (L,) the cosine similarity of each
    token's output with its input, and ``max_error`` = max |shared encoder_layer - model|.

    Raises
    ------
    ValueError for a layer out of range.

    Source: Vaswani et al. (2017), section 3.1; Devlin et al. (2019).
    """
    from . import minilm
    from .encoder_layer import encoder_layer

    if not 0 <= int(layer) < 6:
        raise ValueError(f"layer must be in 0..5; got {layer}")
    out = minilm.forward(sentence)
    x = out.hidden_states[int(layer)]                                       # (L, 384)
    y, _, steps = encoder_layer(x, minilm.load_weights().layers[int(layer)],
                                return_intermediates=True)
    norms = np.stack([np.linalg.norm(a, axis=-1) for a in
                      (x, steps["attended"], steps["ff_out"], y)])           # (4, L)
    cos = np.sum(x * y, axis=-1) / (np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1))
    return {"tokens": list(out.tokens), "layer": int(layer), "norms": norms, "change": cos,
            "max_error": float(np.abs(y - out.hidden_states[int(layer) + 1]).max())}


def layer_figure(state: dict) -> plt.Figure:
    """Grouped bars of the four vector lengths per token, and each token's input-output cosine."""
    fig, (ax_n, ax_c) = plt.subplots(2, 1, figsize=(8.0, 4.6), layout="constrained",
                                     gridspec_kw={"height_ratios": [1.6, 1]}, sharex=True)
    L = len(state["tokens"])
    x = np.arange(L)
    width = 0.2
    hatches = ("", "//", "..", "xx")
    for s, name in enumerate(LAYER_STEPS):
        ax_n.bar(x + (s - 1.5) * width, state["norms"][s], width, color=OKABE_ITO[s],
                 hatch=hatches[s], edgecolor="white", label=name)
    ax_n.set_yscale("log")
    ax_n.set_ylabel("vector length (log scale)")
    ax_n.set_title(f"layer {state['layer']}: what each sub-layer adds to each token", fontsize=9)
    ax_n.legend(frameon=False, fontsize=8, ncol=4, loc="upper center")
    ax_n.set_ylim(state["norms"].min() / 2, state["norms"].max() * 8)
    ax_c.bar(x, state["change"], color=OKABE_ITO[2])
    ax_c.set_ylim(-0.2, 1.0)
    ax_c.axhline(0, color="black", linewidth=0.6)
    ax_c.set_ylabel("cos(X, Y)")
    ax_c.set_xticks(x, labels=state["tokens"], rotation=45, ha="right")
    return fig


def layer_svg(state: dict) -> str:
    """Bars of log10 of each token's vector length for X, A, F, Y (fixed axis 0 to 3), and
    each token's cosine between the layer's input and output."""
    tokens = state["tokens"]
    width = max(360, 58 * len(tokens))
    return svg.side_by_side(
        svg.bar_chart(np.log10(state["norms"]), tokens, series=list(LAYER_STEPS),
                      title=f"layer {state['layer']}: log10 of each vector's length",
                      y_range=(0.0, 3.0), fmt="{:.1f}", width=width, height=230),
        svg.bar_chart(state["change"], tokens, y_range=(-0.2, 1.0),
                      title="cosine of each token's output Y with its input X",
                      width=width))


def _layer_rows(s):
    mean = s["norms"].mean(axis=1)
    return [("tokens", " | ".join(s["tokens"])),
            ("mean length of X, A, F, Y", _fmt(mean)),
            ("cos(X, Y) per token", _fmt(s["change"])),
            ("mean cos(X, Y)", f"{s['change'].mean():.4f}"),
            ("attnlib.encoder_layer equals the model's layer to 1e-10",
             str(s["max_error"] < 1e-10))]


class LayerExplorer(_Explorer):
    """Pick a sentence and a layer of the pretrained model; see what its sub-layers add."""

    def __init__(self, sentences=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        options = list(sentences) if sentences is not None else [
            "The dog bit the man.", "The man bit the dog.",
            examples.SENTENCES["river"], examples.SENTENCES["money"]]
        self.sentence = w.Dropdown(options=options, value=options[0], description="sentence",
                                   style=style, layout=w.Layout(width="95%"))
        self.layer = w.IntSlider(value=0, min=0, max=5, description="layer", style=style)
        self.controls = [self.sentence, self.layer]
        self._connect(self.controls)

    def compute(self) -> dict:
        return layer_state(self.sentence.value, self.layer.value)

    def rows(self):
        s = self.state
        mean = s["norms"].mean(axis=1)
        return [("tokens", " | ".join(s["tokens"])),
                ("mean length of X, A, F, Y", _fmt(mean)),
                ("mean cos(X, Y)", _fmt(s["change"].mean())),
                ("attnlib.encoder_layer equals the model's layer to 1e-10",
                 str(s["max_error"] < 1e-10))]

    def figure(self):
        return layer_figure(self.state)

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: every sentence of the drop-down times
        the six layers."""
        controls = [Control("sentence", tuple((t, t) for t in self.sentence.options),
                            self.sentence.index, "dropdown"),
                    Control.numbers("layer (0 = first, 5 = last)", range(6),
                                    self.layer.value)]

        def render(sentence, layer):
            state = layer_state(sentence, layer)
            return layer_svg(state) + readout_table(_layer_rows(state))

        return PrecomputedExplorer(controls, render, name="layer explorer",
                                   fallback_png=figure_png(self.figure()))


__all__ += ["position_state", "position_figure", "position_svg", "PositionExplorer",
            "layer_state", "layer_figure", "layer_svg", "LayerExplorer"]
