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

import html
import io
import math

import matplotlib.pyplot as plt
import numpy as np

from . import examples
from .attention import attention, weighted_sum
from .heads import merge_heads
from .masks import bidirectional_mask, causal_mask, padding_mask
from .scaling import score_variance
from .scores import dot_product_scores, scaled_dot_product_scores
from .plots import OKABE_ITO, WEIGHT_CMAP, access_map, literal_labels, mixture_bars
from .softmax import softmax

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
        return [("scores", _fmt(self.state["scores"])), ("weights", _fmt(self.state["weights"])),
                ("output", _fmt(self.state["output"]))]

    def figure(self):
        return scores_figure(self.state, self.tokens)


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
        s = self.state
        return [("scaled scores", _fmt(s["scaled_scores"])), ("weights", _fmt(s["weights"])),
                ("largest weight", _fmt(s["max_weight"])), ("entropy (nats)", _fmt(s["entropy"]))]

    def figure(self):
        return scale_figure(self.state, self.tokens)


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
        return [("scores q·k/√2", _fmt(self.state["scores"])), ("weights", _fmt(self.state["weights"])),
                ("output", _fmt(self.state["output"]))]

    def figure(self):
        return query_key_figure(self.state, self.query, self.keys, self.values, self.tokens)


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
        s = self.state
        allowed = s["mask"].sum(axis=1)
        return [("tokens", " | ".join(s["tokens"])), ("keys allowed per query", _fmt(allowed)),
                ("row sums of the weights", _fmt(s["weights"].sum(axis=1)))]

    def figure(self):
        return mask_figure(self.state)


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
        s = self.state
        rows = [(f"head {h + 1} weights", _fmt(w)) for h, w in enumerate(s["weights"])]
        rows += [("concatenated head outputs", _fmt(s["concatenated"])),
                 ("output (· W_O)", _fmt(s["output"]))]
        return rows

    def figure(self):
        return heads_figure(self.state, self.tokens)


# --------------------------------------------------------------------------- cost
def cost_state(n: int, d: int = 64, *, heads: int = 1, block: int = 256, bytes_per_number: int = 4) -> dict:
    """What one attention layer costs at sequence length ``n`` (counted, not measured).

    Parameters
    ----------
    n : int >= 1, sequence length (self-attention: ``L_q = L_k = n``)
    d : int >= 1, features per head (``d_k = d_v = d``)
    heads : int >= 1
    block : int >= 1, tile size of tiled attention (queries and keys)
    bytes_per_number : 4 for float32, 2 for float16, 8 for float64

    Returns
    -------
    dict with the inputs (``block`` capped at ``n``), ``score_entries`` (= heads * n^2), ``plain_scores_bytes`` (the full score table),
    ``tiled_scores_bytes`` (one block x block tile per head plus running max and sum per query)
    and ``flops`` (about 4 n^2 d per head: n^2 d multiply-adds for Q K^T and as many for the
    weighted sum, two flops each).

    Raises
    ------
    ValueError if any count is below 1.
    """
    for name, value in (("n", n), ("d", d), ("heads", heads), ("block", block),
                        ("bytes_per_number", bytes_per_number)):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1; got {value}")
    n, d, heads, block = int(n), int(d), int(heads), int(block)
    entries = heads * n * n
    tile = min(block, n)
    return {"n": n, "d": d, "heads": heads, "block": tile, "bytes_per_number": bytes_per_number,
            "score_entries": entries,
            "plain_scores_bytes": entries * bytes_per_number,
            "tiled_scores_bytes": heads * (tile * tile + 2 * n) * bytes_per_number,
            "flops": 4 * heads * n * n * d}


def cost_figure(state: dict, *, max_n: int = 131_072) -> plt.Figure:
    """Score-table memory of plain and tiled attention against n (log-log), this n marked."""
    ns = np.unique(np.geomspace(16, max(max_n, state["n"]), 40).astype(int))
    tile = state["block"]
    plain = [cost_state(k, state["d"], heads=state["heads"], block=tile,
                        bytes_per_number=state["bytes_per_number"]) for k in ns]
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    ax.loglog(ns, [c["plain_scores_bytes"] / 2**20 for c in plain], color=OKABE_ITO[0],
              label="plain: the whole n × n table")
    ax.loglog(ns, [c["tiled_scores_bytes"] / 2**20 for c in plain], "--", color=OKABE_ITO[1],
              label=f"tiled: one {tile} × {tile} tile")
    ax.axvline(state["n"], color="grey", lw=0.8)
    ax.set_xlabel("sequence length n")
    ax.set_ylabel("score memory (MiB)")
    ax.legend(frameon=False)
    return fig


class CostExplorer(_Explorer):
    """Slide the sequence length, width, heads and tile size; see entries, memory and FLOPs."""

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.n = w.IntSlider(value=1_000, min=1, max=100_000, step=1,
                             description="sequence length n", style=style)
        self.d = w.IntSlider(value=64, min=1, max=256, description="d per head", style=style)
        self.heads = w.IntSlider(value=1, min=1, max=16, description="heads", style=style)
        self.block = w.IntSlider(value=256, min=1, max=4096, description="tile size", style=style)
        self.controls = [self.n, self.d, self.heads, self.block]
        self._connect(self.controls)

    def compute(self) -> dict:
        return cost_state(self.n.value, self.d.value, heads=self.heads.value, block=self.block.value)

    def rows(self):
        s = self.state
        return [("score entries", f"{s['score_entries']:,}"),
                ("plain score memory (float32)", f"{s['plain_scores_bytes'] / 2**20:,.1f} MiB"),
                ("tiled score memory (float32)", f"{s['tiled_scores_bytes'] / 2**20:,.3f} MiB"),
                ("floating-point operations", f"{s['flops']:,}")]

    def figure(self):
        return cost_figure(self.state)


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
        s = self.state
        rows = [("words", " | ".join(s["words"])), ("weights", _fmt(s["weights"])),
                ("predicted sense", f"{s['sense']} (p = {s['probs'].max():.4f})")]
        if self.error:
            rows.insert(0, ("not understood", self.error))
        return rows

    def figure(self):
        return learned_figure(self.state)


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
    out = minilm.forward(sentence)
    weights = out.attention[int(layer), int(head)]
    norms = minilm.weighted_norms(weights, out.transformed[int(layer), int(head)])
    totals = norms.sum(axis=-1, keepdims=True)
    share = np.divide(norms, totals, out=np.zeros_like(norms), where=totals > 0)
    return {"tokens": list(out.tokens), "layer": int(layer), "head": int(head),
            "weights": weights, "norms": norms, "norm_share": share}


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
    """Pick a sentence, a layer and a head of the pretrained model; compare weights and norms."""

    def __init__(self, sentences=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        options = list(sentences) if sentences is not None else [
            examples.SENTENCES[k] for k in ("river", "money", "tired", "wide", "flood", "withdraw")]
        self.sentence = w.Dropdown(options=options, value=options[0], description="sentence",
                                   style=style, layout=w.Layout(width="95%"))
        self.layer = w.IntSlider(value=0, min=0, max=5, description="layer", style=style)
        self.head = w.IntSlider(value=10, min=0, max=11, description="head", style=style)
        self.controls = [self.sentence, self.layer, self.head]
        self._connect(self.controls)

    def compute(self) -> dict:
        return model_state(self.sentence.value, self.layer.value, self.head.value)

    def rows(self):
        s = self.state
        cls_w = s["weights"][:, 0].mean()
        cls_n = s["norm_share"][:, 0].mean()
        return [("tokens", " | ".join(s["tokens"])),
                ("mean weight on [CLS]", _fmt(cls_w)),
                ("mean norm share of [CLS]", _fmt(cls_n))]

    def figure(self):
        return model_figure(self.state)
