"""Explorers of the real pretrained model (all-MiniLM-L6-v2): heads and one whole
layer."""

from __future__ import annotations

import functools
import html
import json

import matplotlib.pyplot as plt
import numpy as np

from attnlib.data import examples
from book_support.figures import svg
from book_support.figures.explorers._base import _Explorer, _fmt
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)
from book_support.figures.style import OKABE_ITO, literal_labels

__all__ = [
    "model_state",
    "model_svg",
    "model_figure",
    "ModelExplorer",
    "LAYER_STEPS",
    "layer_state",
    "layer_figure",
    "layer_svg",
    "LayerExplorer",
    "MAX_DRAWN_TOKENS",
    "check_own_sentence",
    "own_sentence_html",
    "head_summary",
    "head_description",
    "heads_overview_html",
    "show_own_sentence",
    "OwnSentenceForm",
]


# --------------------------------------------------------------------------- a real
# model
def model_state(sentence: str, layer: int, head: int) -> dict:
    """One head of all-MiniLM-L6-v2 on a sentence: its attention map and its
       norm-weighted map.

    Parameters
    ----------
    sentence : str
    layer : int in [0, 6), head : int in [0, 12) (counted from 0)

    Returns
    -------
    dict with ``tokens`` (list of L str), ``weights`` (L, L) the attention weights
    alpha, ``norms`` (L, L) Kobayashi et al.'s ``||alpha_ij f(x_j)||``, and
    ``norm_share`` (L, L), the norms of each row divided by the row's total, comparable
    with the weights.

    Raises
    ------
    ValueError for a layer or head out of range (the ranges are named).

    Source: Kobayashi et al. (2020), section 3.
    """
    from attnlib.models import minilm

    if not 0 <= int(layer) < 6 or not 0 <= int(head) < 12:
        raise ValueError(
            f"layer must be in 0..5 and head in 0..11; got layer={layer}, head={head}"
        )
    out = _minilm_forward(sentence)
    weights = out.attention[int(layer), int(head)]
    norms = minilm.weighted_norms(weights, out.transformed[int(layer), int(head)])
    totals = norms.sum(axis=-1, keepdims=True)
    share = np.divide(norms, totals, out=np.zeros_like(norms), where=totals > 0)
    return {
        "tokens": list(out.tokens),
        "layer": int(layer),
        "head": int(head),
        "weights": weights,
        "norms": norms,
        "norm_share": share,
    }


@functools.lru_cache(maxsize=8)
def _minilm_forward(sentence: str):
    """One forward pass per sentence, shared by all the layers and heads explored on
    it."""
    from attnlib.models import minilm

    return minilm.forward(sentence)


#: Colour steps of the model explorer's heat maps: a cell has the colour of its value
#: to two decimals, the value the page reads out for it (see :func:`svg.heatmap`).
MODEL_LEVELS = 100


def model_svg(state: dict) -> str:
    """The head's weights next to its norm-weighted contributions (shares of each row);
    both maps name their rows, as they stack one above the other in a narrow column.
    Each cell is coloured by its value to two decimals (:data:`MODEL_LEVELS`): the
    precomputed explorer stores a state for every layer and head of each sentence in
    its page, and this keeps their pictures about a third as large."""
    t = state["tokens"]
    return svg.side_by_side(
        svg.heatmap(
            state["weights"],
            t,
            t,
            cell=18,
            title=f"weights, layer {state['layer']} head {state['head']}",
            levels=MODEL_LEVELS,
        ),
        svg.heatmap(
            state["norm_share"],
            t,
            t,
            cell=18,
            title="norm-weighted ||α f(x)||, share per row",
            levels=MODEL_LEVELS,
        ),
    )


def _model_rows(s):
    return [
        ("tokens", " | ".join(s["tokens"])),
        ("mean weight on [CLS]", _fmt(s["weights"][:, 0].mean())),
        ("mean norm share of [CLS]", _fmt(s["norm_share"][:, 0].mean())),
    ]


def model_figure(state: dict) -> plt.Figure:
    """Attention weights next to the norm-weighted contributions (each row as shares of
    one)."""
    from book_support.figures.heatmaps import attention_heatmap

    both = np.stack([state["weights"], state["norm_share"]])[None]  # (1, 2, L, L)
    fig = attention_heatmap(
        both,
        state["tokens"],
        state["tokens"],
        annotate=False,
        titles=[
            f"weights, layer {state['layer']} head {state['head']}",
            "norm-weighted ||α f(x)||, share per row",
        ],
        panel_size=3.6,
        colorbar_label="weight (left), norm share (right)",
    )
    return fig


class ModelExplorer(_Explorer):
    """Pick or type a sentence, a layer and a head of the pretrained model; compare
    weights and norms."""

    def __init__(self, sentences=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        options = (
            list(sentences)
            if sentences is not None
            else [
                examples.SENTENCES[k]
                for k in ("river", "money", "tired", "wide", "flood", "withdraw")
            ]
        )
        # A combo box: pick one of the book's sentences or type your own (Enter to run).
        self.sentence = w.Combobox(
            options=options,
            value=options[0],
            description="sentence",
            ensure_option=False,
            continuous_update=False,
            style=style,
            layout=w.Layout(width="95%"),
        )
        self.layer = w.IntSlider(
            value=0, min=0, max=5, description="layer", style=style
        )
        self.head = w.IntSlider(
            value=10, min=0, max=11, description="head", style=style
        )
        self.controls = [self.sentence, self.layer, self.head]
        self._connect(self.controls)

    def compute(self) -> dict:
        return model_state(self.sentence.value, self.layer.value, self.head.value)

    def rows(self):
        return _model_rows(self.state)

    def precomputed(self, sentences=None) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: every layer and head of the model
        on a few sentences (default: the first two of this explorer's list, the river
        and the money sense of "bank")."""
        sentences = list(sentences or self.sentence.options[:2])
        default = (
            self.sentence.value if self.sentence.value in sentences else sentences[0]
        )
        controls = [
            Control(
                "sentence",
                tuple((t, t) for t in sentences),
                sentences.index(default),
                kind="dropdown",
            ),
            Control.numbers("layer (0 = first, 5 = last)", range(6), self.layer.value),
            Control.numbers("head (0 to 11)", range(12), self.head.value),
        ]

        def render(sentence, layer, head):
            state = model_state(sentence, layer, head)
            return model_svg(state) + readout_table(_model_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="model explorer",
            fallback_png=figure_png(self.figure()),
        )

    def figure(self):
        return model_figure(self.state)

    def own_sentence_form(self) -> OwnSentenceForm:
        """The website's form for the reader's own sentence (:class:`OwnSentenceForm`),
        offering this explorer's sentences, layer and head."""
        return OwnSentenceForm(
            list(self.sentence.options), self.layer.value, self.head.value
        )


# --------------------------------------------------------------------------- the
# reader's own sentence, in the page
#: The most tokens the page's own-sentence explorer draws: each map has one row and
#: one column per token, and beyond this a map no longer fits a page's column.
MAX_DRAWN_TOKENS = 64


def check_own_sentence(sentence) -> list[str]:
    """The tokens of a sentence typed by a reader, or the reason it cannot be shown.

    Parameters
    ----------
    sentence : str

    Returns
    -------
    list of str: the WordPiece tokens, ``[CLS]`` first and ``[SEP]`` last (L tokens).

    Raises
    ------
    TypeError if ``sentence`` is not a str. ValueError, with a message meant for the
    page, if the sentence is empty (or only spaces), gives more tokens than the model's
    512 positions, holds text the tokenizer reads as ``[UNK]`` (the message names it),
    or gives more than :data:`MAX_DRAWN_TOKENS` tokens (more than the maps can show).
    """
    from attnlib.models import minilm
    from attnlib.models._wordpiece import normalize, pre_tokenize

    if not isinstance(sentence, str):
        raise TypeError(f"sentence must be a str; got {type(sentence).__name__}")
    if not sentence.strip():
        raise ValueError("The box is empty: type a sentence, or pick one of the list.")
    tokenizer = minilm.load_tokenizer()
    try:
        tokens = tokenizer.encode(sentence).tokens
    except ValueError as error:  # a lone surrogate
        raise ValueError(f"The sentence cannot be read: {error}.") from None
    n = len(tokens)
    if n > minilm.MAX_TOKENS:
        raise ValueError(
            f"The sentence is too long for the model: it gives {n} tokens ([CLS] and "
            f"[SEP] included), and the model has {minilm.MAX_TOKENS} positions. "
            "Shorten it."
        )
    if tokenizer.unk_token in tokens:
        unknown = [
            w
            for w in pre_tokenize(normalize(sentence))
            if tokenizer.tokenize(w) == [tokenizer.unk_token]
        ] or [tokenizer.unk_token]
        unknown = list(dict.fromkeys(unknown))
        shown = ", ".join(f"“{w}”" for w in unknown)
        it = "it" if len(unknown) == 1 else "them"
        raise ValueError(
            f"The tokenizer does not know {shown}: the model would read {it} as "
            f"{tokenizer.unk_token}, one token for any unknown text, so its maps would "
            f"say nothing about {it}. Replace {it} or remove {it}."
        )
    if n > MAX_DRAWN_TOKENS:
        raise ValueError(
            f"The sentence gives {n} tokens ([CLS] and [SEP] included). The model "
            f"accepts up to {minilm.MAX_TOKENS}, but these maps show at most "
            f"{MAX_DRAWN_TOKENS}, one row and one column per token: shorten it, or "
            "call model_state in a notebook."
        )
    return list(tokens)


def own_sentence_html(sentence, layer: int = 0, head: int = 10) -> str:
    """The page's own-sentence explorer for one state: the HTML of the head's weights
    and norm-weighted map (:func:`model_svg`, with hover values, keyboard reading and
    text alternative), the readout table and every head at a glance
    (:func:`heads_overview_html`), or, for a sentence :func:`check_own_sentence`
    refuses, its message in a paragraph with ``role="alert"``. The reader's text
    appears only escaped (as text, never as markup). Raises ValueError for a layer or
    head out of range (as :func:`model_state`)."""
    try:
        check_own_sentence(sentence)
    except ValueError as error:
        return (
            "<p class='own-sentence-message' role='alert'>"
            f"{html.escape(str(error))}</p>"
        )
    state = model_state(sentence, layer, head)
    summary = head_summary(state["weights"], state["tokens"])
    rows = [
        ("your sentence", sentence),
        *_model_rows(state),
        ("this head on average", head_description(summary)),
    ]
    return (
        f"<div class='explorer-state' data-layer='{state['layer']}' "
        f"data-head='{state['head']}'>{model_svg(state)}{readout_table(rows)}"
        f"{heads_overview_html(sentence, state['layer'], state['head'])}</div>"
    )


#: The three diagonal lines of a head's map that :func:`head_summary` compares: a key
#: at the query's own position, one before it, one after it.
_LINES = ("the token itself", "the previous token", "the next token")


def head_summary(weights, tokens) -> dict:
    """Where one head's attention weights go on average over the queries: a
    description of the numbers, not of what the head does.

    ``weights`` is an (L, L) array (queries by keys, L >= 2); ``tokens`` its L tokens.
    Returns a dict: ``key`` (the token of the key with the largest mean weight over
    the queries, the brightest column), ``key_index`` (its position) and
    ``key_mean``; ``line`` (of :data:`_LINES`, the diagonal line with the largest
    mean weight, over the queries that have that neighbour) and ``line_mean``;
    ``even`` = 1 / L, every key's weight if the head spread its weight evenly.
    Raises ValueError if ``tokens`` does not give one token per key.
    """
    w = np.asarray(weights, dtype=float)
    if w.ndim != 2 or w.shape[0] != w.shape[1] or w.shape[0] < 2:
        raise ValueError(f"weights must be (L, L) with L >= 2; got shape {w.shape}")
    if len(tokens) != w.shape[1]:
        raise ValueError(
            f"tokens must give one token per key: {len(tokens)} tokens for "
            f"{w.shape[1]} keys"
        )
    columns = w.mean(axis=0)  # (L,): each key's mean weight over the queries
    k = int(np.argmax(columns))
    lines = [np.diagonal(w, offset=d).mean() for d in (0, -1, 1)]
    best = int(np.argmax(lines))
    return {
        "key": str(tokens[k]),
        "key_index": k,
        "key_mean": float(columns[k]),
        "line": _LINES[best],
        "line_mean": float(lines[best]),
        "even": 1.0 / w.shape[0],
    }


def head_description(summary: dict) -> str:
    """:func:`head_summary` in one sentence, as the overview and the readout say it."""
    s = summary
    return (
        f"most weight on “{s['key']}” (position {s['key_index']}): "
        f"{s['key_mean']:.2f} on average over the queries, where an even spread "
        f"gives {s['even']:.2f}; of the diagonal lines, {s['line_mean']:.2f} on "
        f"{s['line']}"
    )


#: Side of each small map of the overview, in CSS pixels, whatever the sentence's
#: length.
THUMB_PX = 34


def heads_overview_html(sentence: str, layer: int, head: int) -> str:
    """Every layer's and head's attention weights on ``sentence`` at a glance: a table
    of small maps, 6 layers (rows) by 12 heads (columns), each the head's (L, L)
    weights in the colours of the maps above (two-decimal steps). Each map is a button
    (``own-sentence-pick``, ``data-layer``, ``data-head``) that shows that head in the
    maps above (the page's script, ``_ext/live/live-code.js``); the chosen
    (``layer``, ``head``) is pressed (``aria-pressed``). Each map's text alternative
    and tooltip describe where its weights go on average (:func:`head_description`).
    The figure keeps the sentence it shows (``data-sentence``), which a press shows
    again even if the text box has changed since. The table scrolls sideways in a
    narrow column.
    """
    out = _minilm_forward(sentence)
    n_layers, n_heads = out.attention.shape[:2]
    esc = html.escape
    head_row = "".join(f"<th scope='col'>{h}</th>" for h in range(n_heads))
    body = []
    for i in range(n_layers):
        cells = []
        for j in range(n_heads):
            summary = head_summary(out.attention[i, j], out.tokens)
            label = f"Layer {i}, head {j}: {head_description(summary)}"
            png = svg.thumbnail_png(out.attention[i, j], levels=MODEL_LEVELS)
            pressed = "true" if (i, j) == (int(layer), int(head)) else "false"
            cells.append(
                f"<td><button type='button' class='own-sentence-pick' "
                f"data-layer='{i}' data-head='{j}' aria-pressed='{pressed}' "
                f"title='{esc(label, quote=True)}'><img alt='{esc(label, quote=True)}' "
                f"width='{THUMB_PX}' height='{THUMB_PX}' "
                f"src='data:image/png;base64,{png}'/></button></td>"
            )
        body.append(f"<tr><th scope='row'>{i}</th>{''.join(cells)}</tr>")
    return (
        "<figure class='own-sentence-heads' "
        f"data-sentence='{esc(str(sentence), quote=True)}'><figcaption>Every head at "
        f"a glance: the attention weights of all {n_layers * n_heads} heads on your "
        f"sentence, one small map per head (rows of the table: layers 0 to "
        f"{n_layers - 1}; columns: heads 0 to {n_heads - 1}; in each map, queries "
        "down and keys across, in the colours of the maps above, 0 to 1: a bright "
        "left edge is weight on [CLS]; a bright line on the diagonal is weight on "
        "the token itself, just below it on the previous token, just above it on the "
        "next). Press a map to show that head above. Hover over a map to read where "
        "its weight goes on average over the queries (a screen reader reads the same "
        "when the Tab key reaches the map; pressing a map puts its description in "
        "the table above). A largest mean near the "
        "even spread means that no key draws the weight of most queries; each query "
        "may still put all of its weight on one key (look for a bright line). On a "
        "narrow screen the table scrolls sideways.</figcaption>"
        "<div class='own-sentence-heads-scroll' role='region' tabindex='0' "
        "aria-label='All heads, one small map each (scrolls sideways)'>"
        f"<table><tr><th scope='col'>layer / head</th>{head_row}</tr>"
        f"{''.join(body)}</table></div></figure>"
    )


def show_own_sentence(sentence, layer: int = 0, head: int = 10) -> None:
    """Display :func:`own_sentence_html` as HTML (what the page's form calls in the
    page's Python)."""
    from IPython.display import HTML, display

    display(HTML(own_sentence_html(sentence, layer, head)))


class OwnSentenceForm:
    """The form of the page's own-sentence explorer: a text box, a list of the
    chapter's sentences, a layer and a head, and a button. On the website, once live
    code is on (the button turns it on), the page's script (``_ext/live/live-code.js``)
    calls :func:`show_own_sentence` in the page's Python and shows its answer under the
    form. In Jupyter the form does nothing: the live explorer takes any sentence.

    Displaying the object shows the form (HTML); its plain-text form names it."""

    def __init__(self, sentences, layer: int = 0, head: int = 10):
        self.sentences = [str(s) for s in sentences]
        if not self.sentences:
            raise ValueError("sentences must hold at least one sentence")
        if not 0 <= int(layer) < 6 or not 0 <= int(head) < 12:
            raise ValueError(
                f"layer must be in 0..5 and head in 0..11; got layer={layer}, "
                f"head={head}"
            )
        self.layer, self.head = int(layer), int(head)

    def __repr__(self) -> str:
        return (
            f"own-sentence explorer: {len(self.sentences)} example sentences, any "
            f"typed sentence of up to {MAX_DRAWN_TOKENS} tokens"
        )

    def _repr_html_(self) -> str:
        esc = html.escape

        def select(name, label, values, chosen):
            options = "".join(
                f"<option value='{esc(str(v))}'"
                + (" selected" if i == chosen else "")
                + f">{esc(str(v))}</option>"
                for i, v in enumerate(values)
            )
            return (
                f"<label class='own-sentence-{name}'>{esc(label)} "
                f"<select>{options}</select></label>"
            )

        first = self.sentences[0]
        return (
            "<div class='explorer own-sentence' role='group' "
            "aria-label='Your own sentence in the pretrained model' "
            f"data-sentences='{esc(json.dumps(self.sentences))}'>"
            "<p class='own-sentence-intro'>Type a sentence, or pick one of the "
            "chapter's, choose a layer and a head, and press <em>Show its attention"
            "</em>: that head's maps, and a small map of every head under them. The "
            "model runs in this page: the first time, the button makes "
            "the page live and loads the model's weights (the page says how much "
            "it loads); nothing leaves your computer. "
            "(In Jupyter, use the live explorer instead.)</p>"
            "<label class='own-sentence-text'>Your sentence "
            f"<input type='text' value='{esc(first)}' spellcheck='false'></label>"
            + select("example", "or one of the chapter's", self.sentences, 0)
            + select("layer", "layer (0 = first, 5 = last)", range(6), self.layer)
            + select("head", "head (0 to 11)", range(12), self.head)
            + "<button type='button' class='own-sentence-show'>Show its attention"
            "</button>"
            "<p class='own-sentence-status' role='status' aria-live='polite'></p>"
            "<div class='own-sentence-result'></div></div>"
        )


# --------------------------------------------------------------------------- a whole
# layer
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
    feed-forward output F, the layer output Y), ``change`` (L,) the cosine similarity of
    each token's output with its input, and ``max_error`` = max |shared encoder_layer -
    model|.

    Raises
    ------
    ValueError for a layer out of range.

    Source: Vaswani et al. (2017), section 3.1; Devlin et al. (2019).
    """
    from attnlib.layers.encoder_layer import encoder_layer
    from attnlib.models import minilm

    if not 0 <= int(layer) < 6:
        raise ValueError(f"layer must be in 0..5; got {layer}")
    out = minilm.forward(sentence)
    x = out.hidden_states[int(layer)]  # (L, 384)
    y, _, steps = encoder_layer(
        x, minilm.load_weights().layers[int(layer)], return_intermediates=True
    )
    norms = np.stack(
        [np.linalg.norm(a, axis=-1) for a in (x, steps["attended"], steps["ff_out"], y)]
    )  # (4, L)
    cos = np.sum(x * y, axis=-1) / (
        np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1)
    )
    return {
        "tokens": list(out.tokens),
        "layer": int(layer),
        "norms": norms,
        "change": cos,
        "max_error": float(np.abs(y - out.hidden_states[int(layer) + 1]).max()),
    }


def layer_figure(state: dict) -> plt.Figure:
    """Grouped bars of the four vector lengths per token, and each token's input-output
    cosine."""
    fig, (ax_n, ax_c) = plt.subplots(
        2,
        1,
        figsize=(8.0, 4.6),
        layout="constrained",
        gridspec_kw={"height_ratios": [1.6, 1]},
        sharex=True,
    )
    L = len(state["tokens"])
    x = np.arange(L)
    width = 0.2
    hatches = ("", "//", "..", "xx")
    for s, name in enumerate(LAYER_STEPS):
        ax_n.bar(
            x + (s - 1.5) * width,
            state["norms"][s],
            width,
            color=OKABE_ITO[s],
            hatch=hatches[s],
            edgecolor="white",
            label=name,
        )
    ax_n.set_yscale("log")
    ax_n.set_ylabel("vector length (log scale)")
    ax_n.set_title(
        f"layer {state['layer']}: what each sub-layer adds to each token", fontsize=9
    )
    ax_n.legend(frameon=False, fontsize=8, ncol=4, loc="upper center")
    ax_n.set_ylim(state["norms"].min() / 2, state["norms"].max() * 8)
    ax_c.bar(x, state["change"], color=OKABE_ITO[2])
    ax_c.set_ylim(-0.2, 1.0)
    ax_c.axhline(0, color="black", linewidth=0.6)
    ax_c.set_ylabel("cos(X, Y)")
    ax_c.set_xticks(x, labels=literal_labels(state["tokens"]), rotation=45, ha="right")
    return fig


def layer_svg(state: dict) -> str:
    """Bars of log10 of each token's vector length for X, A, F, Y (fixed axis -1 to 3),
    and each token's cosine between the layer's input and output."""
    tokens = state["tokens"]
    width = max(360, 58 * len(tokens))
    return svg.side_by_side(
        svg.bar_chart(
            np.log10(state["norms"]),
            tokens,
            series=list(LAYER_STEPS),
            title=f"layer {state['layer']}: log10 of each vector's length",
            y_range=(-1.0, 3.0),
            fmt="{:.1f}",
            width=width,
            height=230,
        ),
        svg.bar_chart(
            state["change"],
            tokens,
            y_range=(-0.2, 1.0),
            title="cosine of each token's output Y with its input X",
            width=width,
        ),
    )


def _layer_rows(s):
    mean = s["norms"].mean(axis=1)
    return [
        ("tokens", " | ".join(s["tokens"])),
        ("mean length of X, A, F, Y", _fmt(mean)),
        ("cos(X, Y) per token", _fmt(s["change"])),
        ("mean cos(X, Y)", f"{s['change'].mean():.4f}"),
        (
            "attnlib.encoder_layer equals the model's layer to 1e-10",
            str(s["max_error"] < 1e-10),
        ),
    ]


class LayerExplorer(_Explorer):
    """Pick a sentence and a layer of the pretrained model; see what its sub-layers
    add."""

    def __init__(self, sentences=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        options = (
            list(sentences)
            if sentences is not None
            else [
                "The dog bit the man.",
                "The man bit the dog.",
                examples.SENTENCES["river"],
                examples.SENTENCES["money"],
            ]
        )
        self.sentence = w.Dropdown(
            options=options,
            value=options[0],
            description="sentence",
            style=style,
            layout=w.Layout(width="95%"),
        )
        self.layer = w.IntSlider(
            value=0, min=0, max=5, description="layer", style=style
        )
        self.controls = [self.sentence, self.layer]
        self._connect(self.controls)

    def compute(self) -> dict:
        return layer_state(self.sentence.value, self.layer.value)

    def rows(self):
        s = self.state
        mean = s["norms"].mean(axis=1)
        return [
            ("tokens", " | ".join(s["tokens"])),
            ("mean length of X, A, F, Y", _fmt(mean)),
            ("mean cos(X, Y)", _fmt(s["change"].mean())),
            (
                "attnlib.encoder_layer equals the model's layer to 1e-10",
                str(s["max_error"] < 1e-10),
            ),
        ]

    def figure(self):
        return layer_figure(self.state)

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: every sentence of the drop-down
        times the six layers."""
        controls = [
            Control(
                "sentence",
                tuple((t, t) for t in self.sentence.options),
                self.sentence.index,
                "dropdown",
            ),
            Control.numbers("layer (0 = first, 5 = last)", range(6), self.layer.value),
        ]

        def render(sentence, layer):
            state = layer_state(sentence, layer)
            return layer_svg(state) + readout_table(_layer_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="layer explorer",
            fallback_png=figure_png(self.figure()),
        )
