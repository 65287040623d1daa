"""Issue 26, item 3: every text a plot, an explorer or an SVG drawing shows is drawn as
typed; degenerate data draws without warnings and without NaN coordinates.

Every public function of :mod:`book_support.figures` (the plots, the SVG drawings, the
explorers' figure and SVG functions) is found by introspection and must be in one of
three tables: :data:`DRAWERS` (it draws text it is given: an adapter below hands it
typed words and names the exact strings that must come out), :data:`NO_TEXT` (it
draws or computes numbers only) or :data:`TOKENISED` (it takes a sentence that a
tokeniser or a vocabulary turns into the tokens another, covered, function draws). A
new function in none of them fails the test, and so does a function listed in
:data:`NO_TEXT` that has a parameter named like text.

Drawn as typed means: in a matplotlib figure, after drawing, some text object shows
the string exactly and matplotlib does not read it as mathematics (``"$x$"`` stays
upright and literal, ``"Ba$$in"`` draws without a ParseException); in SVG and HTML,
the markup parses as XML and some element's text is the string exactly (so ``<``,
``&`` and quotes are escaped once, never twice); in a text alternative, the string
stands in it, next to its number.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import io
import pkgutil
import re
import warnings
import xml.etree.ElementTree as ET

import cost_explorer as cost_ex
import learned_and_computed_explorer as learned_ex
import learning_figures as learning
import masks_explorer as masks_ex
import matplotlib.pyplot as plt
import numpy as np
import order_and_position_explorer as position_ex
import pytest
import query_key_value_explorer as qk_ex
from book_files import chapter_module_names
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from matplotlib.figure import Figure
from matplotlib.text import Text

import book_support.figures
from book_support.figures import (
    charts,
    diagrams,
    heatmaps,
    precomputed,
    probes,
    style,
    svg,
    translation,
)
from book_support.figures import language_model as lm_fig
from book_support.figures.explorers import heads as heads_ex
from book_support.figures.explorers import induction as ind_ex
from book_support.figures.explorers import language_model as lm_ex
from book_support.figures.explorers import minilm as minilm_ex
from book_support.figures.explorers import weights as weights_ex

#: The issue's texts, and the characters markup must escape.
ISSUE_WORDS = ["$x$", "Ba$$in", "<b>&amp;\"'", "US$$5 & <5"]


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


# --- what was drawn -----------------------------------------------------------------


def drawn_in_figure(fig) -> set:
    """Every text of a drawn figure that matplotlib shows as plain text (not math)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        fig.canvas.draw()
    shown = set()
    for t in fig.findobj(Text):
        s, is_math = t._preprocess_math(t.get_text())
        if is_math is False:
            shown.add(s)
    return shown


def drawn_in_markup(markup: str) -> set:
    """The text of every element of SVG or HTML markup (which must parse as XML)."""
    root = ET.fromstring(f"<root>{markup}</root>")
    return {"".join(el.itertext()) for el in root.iter()} | {
        el.text for el in root.iter() if el.text
    }


def drawn(output) -> set:
    if isinstance(output, Figure):
        return drawn_in_figure(output)
    return drawn_in_markup(output)


# --- adapters: call a function with typed words, name the strings that must show ---


def spread(values):
    """Seeds that all agree: mean, lowest and highest equal (translation figures)."""
    return {"mean": values, "min": values, "max": values}


SPREAD = spread([0.5, 0.6])


def _uniform(n):
    return np.full(n, 1.0 / n)


def _title(words):
    return " | ".join(words)


def _scores_state(words):
    return weights_ex.scores_state(
        np.arange(len(words), dtype=float), np.eye(len(words))
    )


def _heads_state(words):
    n = len(words)
    return heads_ex.heads_state(np.zeros((2, n)), np.ones((2, n, 1)), np.ones((2, 1)))


def _qk_inputs(words):
    n = len(words)
    keys = np.stack([np.cos(np.arange(n)), np.sin(np.arange(n))], axis=1)  # (n, 2)
    return np.array([1.0, 0.0]), keys, keys


def _qk_labels(words, state, lead=""):
    keys = [f"{lead}k {t} (w={w:.2f})" for t, w in zip(words, state["weights"])]
    return keys + [f"{lead}v {t}" for t in words]


def _learned_state(words):
    return {
        "words": tuple(words),
        "ambiguous": words[0],
        "weights": _uniform(len(words)),
        "probs": np.array([0.75, 0.25]),
        "sense": words[-1],
    }


def _learned_title(words, p):
    return f"attention from '{words[0]}': predicted sense '{words[-1]}' ({p}0.75)"


def _model_state(words):
    n = len(words)
    return {"tokens": list(words), "layer": 0, "head": 1, "weights": np.eye(n),
            "norm_share": np.eye(n)}  # fmt: skip


def _layer_state(words):
    n = len(words)
    return {"tokens": list(words), "layer": 2, "norms": np.full((4, n), 10.0),
            "change": np.full(n, 0.5)}  # fmt: skip


def _next_token_state(words):
    # the words stand for characters: each is drawn as one label
    n = len(words)
    return {"chars": list(words), "top": list(words), "probs": _uniform(n),
            "greedy": words[0], "attention": _uniform(n),
            "temperature": 1.0}  # fmt: skip


def _induction_state(words):
    n = len(words)
    return {"weights": np.eye(n), "labels": list(words), "previous": 0.5,
            "induction": 0.5, "loss": 1.0, "loss_without": 2.0, "layer": 0,
            "head": 1}  # fmt: skip


_HISTORY = {
    "step": [1, 2],
    "train": [2.0, 1.5],
    "validation": [2.1, 1.6],
    "best_step": 2,
}


def _qk_figure(words):
    q, k, v = _qk_inputs(words)
    state = qk_ex.query_key_state(q, k, v)
    return [
        (qk_ex.query_key_figure(state, q, k, v, words), _qk_labels(words, state, " "))
    ]


def _qk_svg(words):
    q, k, v = _qk_inputs(words)
    state = qk_ex.query_key_state(q, k, v)
    return [(qk_ex.query_key_svg(state, q, k, v, words), _qk_labels(words, state))]


def _series(words):
    return {w: np.geomspace(1, 100, 3) * (i + 1) for i, w in enumerate(words)}


def _mask_state(words):
    return masks_ex.mask_state(words, "padding", pad_to=len(words) + 1)


class Curve:
    """The curves of a training run, as learning.descent_figure reads them."""

    steps = np.arange(4.0)
    train_loss = np.array([0.7, 0.5, 0.4, 0.35])
    val_loss = np.array([0.7, 0.6, 0.62, 0.65])


def _descent(words, scale=1.0):
    grid = np.linspace(-1.0, 1.0, 5) * scale
    path = [(w, grid[:2], grid[:2] ** 2) for w in words]
    return learning.descent_figure(
        grid, grid**2, path, Curve(), best_step=1, stopped_at=3
    )


@functools.lru_cache(maxsize=8)
def _minilm_pass(length: int):
    """One pass of the real model over ``length`` token ids (cached: it is slow)."""
    from attnlib.models import minilm

    return minilm.forward(np.arange(2000, 2000 + length))


def _scatter(words):
    # the scatter draws the label of one key, taken from the pass's tokens
    out = dataclasses.replace(_minilm_pass(len(words)), tokens=list(words))
    return probes.weight_norm_scatter(out)


#: qualified name (below book_support.figures) -> adapter(words) -> [(output, strings)]
DRAWERS = {
    "probes.weight_norm_scatter": lambda w: [(_scatter(w), w[:1])],
    "learning_figures.descent_figure": lambda w: [(_descent(w), w)],
    "style.literal": lambda w: [(_text_figure(style.literal(w[0])), w[:1])],
    "style.literal_labels": lambda w: [(_tick_figure(style.literal_labels(w)), w)],
    "charts.mixture_bars": lambda w: [
        (charts.mixture_bars(_uniform(len(w)), w, title=_title(w)), w + [_title(w)])
    ],
    "translation.length_curves": lambda w: [
        (
            translation.length_curves(
                [5, 6], {t: {"token": SPREAD, "sentence": SPREAD} for t in w}
            ),
            w,
        )
    ],
    "translation.position_curves": lambda w: [
        (
            translation.position_curves(
                2,
                {t: {"teacher_forced": SPREAD, "greedy": SPREAD} for t in w},
                title=_title(w),
            ),
            [_title(w)] + [f"{t}, fed its own words" for t in w],
        )
    ],
    "translation.training_curves": lambda w: [
        (
            translation.training_curves(
                {
                    t: [{"step": [1], "validation_loss": [1.0], "best_step": [1]}]
                    for t in w
                }
            ),
            w,
        )
    ],
    "heatmaps.attention_heatmap": lambda w: [
        (
            heatmaps.attention_heatmap(np.eye(len(w)), w, w, titles=[_title(w)]),
            w + [_title(w)],
        )
    ],
    "heatmaps.access_map": lambda w: [
        (
            heatmaps.access_map(np.eye(len(w), dtype=bool), w, title=_title(w)),
            w + [_title(w)],
        )
    ],
    "heatmaps.layer_head_grids": lambda w: [
        (
            heatmaps.layer_head_grids(
                [np.zeros((2, 3))],
                [_title(w)],
                vmin=0,
                vmax=1,
                cmap="viridis",
                label=w[0],
            ),
            [_title(w), w[0]],
        )
    ],
    "heatmaps.alignment_heatmaps": lambda w: [
        (
            heatmaps.alignment_heatmaps(
                [
                    {
                        "weights": np.eye(len(w)),
                        "source": w,
                        "target": w[::-1],
                        "alignment": np.arange(len(w)),
                        "title": _title(w),
                    }
                ]
            ),
            w + [_title(w)],
        )
    ],
    "diagrams.data_flow_diagram": lambda w: [(diagrams.data_flow_diagram(w), w)],
    "svg.bar_chart": lambda w: [
        (
            svg.bar_chart(
                np.stack([_uniform(len(w))] * 2), w, title=_title(w), series=w[:2] * 2
            ),
            w + [_title(w)],
        )
    ],
    "svg.bar_chart_alt": lambda w: [
        (svg.bar_chart_alt(_uniform(len(w)) * 0 + 0.5, w, _title(w)), None)
    ],
    "svg.arrows": lambda w: [
        (svg.arrows(np.ones((len(w), 2)), w, title=_title(w)), w + [_title(w)])
    ],
    "svg.arrows_alt": lambda w: [
        (svg.arrows_alt(np.ones((len(w), 2)), w, _title(w)), None)
    ],
    "svg.heatmap": lambda w: [
        (svg.heatmap(np.eye(len(w)), w, w, title=_title(w)), w + [_title(w)])
    ],
    "svg.heatmap_alt": lambda w: [
        (svg.heatmap_alt(np.eye(len(w)), w, w, _title(w)), None)
    ],
    "svg.line_chart": lambda w: [
        (
            svg.line_chart(
                [1, 10, 100], _series(w), title=_title(w), xlabel=w[0], ylabel=w[-1]
            ),
            w + [_title(w)],
        )
    ],
    "svg.line_chart_alt": lambda w: [
        (
            svg.line_chart_alt(
                [1, 10, 100], _series(w), _title(w), xlabel="x", ylabel="y"
            ),
            None,
        )
    ],  # fmt: skip
    "svg.side_by_side": lambda w: [
        (svg.side_by_side(svg.arrows(np.ones((len(w), 2)), w, title="t")), w)
    ],
    "precomputed.readout_table": lambda w: [
        (precomputed.readout_table([(t, t + "!") for t in w]), w + [t + "!" for t in w])
    ],
    "explorers.weights.scores_figure": lambda w: [
        (weights_ex.scores_figure(_scores_state(w), w), w)
    ],
    "explorers.weights.scores_svg": lambda w: [
        (weights_ex.scores_svg(_scores_state(w), w, (0.0, 1.0)), w)
    ],
    "explorers.weights.scale_figure": lambda w: [
        (
            weights_ex.scale_figure(
                weights_ex.scale_state(np.zeros(len(w)), n_samples=10), w
            ),
            w,
        )
    ],
    "explorers.weights.scale_svg": lambda w: [
        (
            weights_ex.scale_svg(
                weights_ex.scale_state(np.zeros(len(w)), variance_dims=()), w
            ),
            w,
        )
    ],
    "query_key_value_explorer.query_key_figure": _qk_figure,
    "query_key_value_explorer.query_key_svg": _qk_svg,
    "masks_explorer.mask_state": lambda w: [
        (masks_ex.mask_svg(_mask_state(w)), w),
        (masks_ex.mask_figure(_mask_state(w)), w),
    ],
    "masks_explorer.mask_figure": lambda w: [(masks_ex.mask_figure(_mask_state(w)), w)],
    "masks_explorer.mask_svg": lambda w: [(masks_ex.mask_svg(_mask_state(w)), w)],
    "explorers.heads.heads_figure": lambda w: [
        (heads_ex.heads_figure(_heads_state(w), w), w)
    ],
    "explorers.heads.heads_svg": lambda w: [
        (heads_ex.heads_svg(_heads_state(w), w, (0.0, 1.0)), w)
    ],
    "learned_and_computed_explorer.learned_figure": lambda w: [
        (learned_ex.learned_figure(_learned_state(w)), w + [_learned_title(w, "")])
    ],
    "learned_and_computed_explorer.learned_svg": lambda w: [
        (learned_ex.learned_svg(_learned_state(w)), w + [_learned_title(w, "p = ")])
    ],
    "explorers.minilm.model_figure": lambda w: [
        (minilm_ex.model_figure(_model_state(w)), w)
    ],
    "explorers.minilm.model_svg": lambda w: [(minilm_ex.model_svg(_model_state(w)), w)],
    "explorers.minilm.layer_figure": lambda w: [
        (minilm_ex.layer_figure(_layer_state(w)), w)
    ],
    "explorers.minilm.layer_svg": lambda w: [(minilm_ex.layer_svg(_layer_state(w)), w)],
    "explorers.minilm.own_sentence_html": lambda w: [_own_sentence(" ".join(w))],
    "explorers.language_model.next_token_figure": lambda w: [
        (lm_ex.next_token_figure(_next_token_state(w)), w)
    ],
    "explorers.language_model.next_token_svg": lambda w: [
        (lm_ex.next_token_svg(_next_token_state(w)), w)
    ],
    "explorers.induction.induction_figure": lambda w: [
        (ind_ex.induction_figure(_induction_state(w)), w)
    ],
    "explorers.induction.induction_svg": lambda w: [
        (ind_ex.induction_svg(_induction_state(w)), w)
    ],
    "language_model.loss_curves": lambda w: [
        (lm_fig.loss_curves(_HISTORY, title=_title(w)), [_title(w)])
    ],
}


def _own_sentence(sentence):
    """The page's own-sentence explorer: a sentence the model can read stands in its
    table as typed; one it refuses gets a message (which must parse too)."""
    html = minilm_ex.own_sentence_html(sentence, 0, 0)
    try:
        minilm_ex.check_own_sentence(sentence)
    except ValueError:
        return html, []
    return html, [sentence]


def _text_figure(text):
    fig = plt.figure(figsize=(3, 1))
    fig.text(0.1, 0.5, text)
    return fig


def _tick_figure(labels):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_xticks(range(len(labels)), labels=labels)
    return fig


#: Functions that draw or compute numbers only (no text of the caller's), with why.
NO_TEXT = {
    "style.use_book_style": "sets matplotlib's defaults",
    "style.palette_png": "re-encodes a drawn PNG, adds no text",
    "diagrams.layer_flow_diagram": "its labels are the book's, with the sizes given",
    "diagrams.pipeline_diagram": "its labels are the book's; it takes no input",
    "probes.sink_chart": "draws numbers under fixed labels (the measures' names)",
    "precomputed.figure_png": "turns a drawn figure into PNG bytes",
    "precomputed.grid": "counts the states of a list of controls",
    "explorers.weights.scores_state": "computes weights from numbers",
    "explorers.weights.scale_state": "computes weights from numbers",
    "query_key_value_explorer.query_key_state": "computes weights from vectors",
    "explorers.heads.heads_state": "computes weights from numbers",
    "order_and_position_explorer.position_state": "computes encodings from positions",
    "order_and_position_explorer.position_figure": "draws positions and numbers",
    "order_and_position_explorer.position_svg": "draws positions and numbers",
    "cost_explorer.cost_state": "counts bytes and operations",
    "cost_explorer.cost_figure": "draws sizes and numbers",
    "cost_explorer.cost_svg": "draws sizes and numbers",
    "explorers.language_model.show_char": "names the space and the newline; draws "
    "nothing",
    "language_model.token_cost_figure": "draws lengths and times",
    "language_model.phase_change_figure": "draws seeds and losses",
    "language_model.head_scores_figure": "draws layer and head numbers and scores",
    "svg.thumbnail_png": "draws a matrix's cells only",
}

#: Functions that take a sentence a vocabulary or a tokeniser turns into tokens; the
#: functions that draw those tokens are in DRAWERS.
TOKENISED = {
    "learned_and_computed_explorer.learned_state": "learned_figure, learned_svg",
    "explorers.minilm.model_state": "model_figure, model_svg",
    "explorers.minilm.layer_state": "layer_figure, layer_svg",
    "explorers.minilm.check_own_sentence": "own_sentence_html (returns the tokens)",
    "explorers.minilm.show_own_sentence": "own_sentence_html (displays it)",
    "explorers.minilm.heads_overview_html": "own_sentence_html (shows it)",
    "explorers.minilm.head_summary": "own_sentence_html (its key's token, in the "
    "readout and the overview)",
    "explorers.minilm.head_description": "own_sentence_html (the readout's last row)",
    "explorers.language_model.next_token_state": "next_token_figure, next_token_svg",
    "explorers.induction.induction_state": "induction_figure, induction_svg (token "
    "ids as labels)",
}

TEXT_LIKE = re.compile(
    r"^(text|texts|title|titles|label|labels|tokens|words|names|series|sentence|"
    r"queries|row_labels|col_labels|xlabel|ylabel|source|target|alt|description)$"
)


def figure_functions() -> dict:
    """Every public function of every book_support.figures module, by qualified name."""
    found = {}
    modules = pkgutil.walk_packages(
        book_support.figures.__path__, "book_support.figures."
    )
    names = [
        info.name
        for info in modules
        if not any(part.startswith("_") for part in info.name.split("."))
    ]
    # a chapter's own figures and explorer, beside its notebook
    names += chapter_module_names("*_figures.py", "*_explorer.py")
    for module_name in names:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if (
                inspect.isfunction(obj)
                and not name.startswith("_")
                and obj.__module__ == module.__name__
            ):
                found[
                    f"{module.__name__.removeprefix('book_support.figures.')}.{name}"
                ] = obj
    return found


def test_every_figure_function_is_in_one_table():
    functions = figure_functions()
    tables = set(DRAWERS) | set(NO_TEXT) | set(TOKENISED)
    new = sorted(set(functions) - tables)
    assert not new, (
        f"{new}: a function that draws text must have an adapter in DRAWERS "
        "(tests/test_figures_text_as_typed.py); one that draws numbers only goes in "
        "NO_TEXT with the reason"
    )
    assert not tables - set(functions), sorted(tables - set(functions))
    assert len(set(DRAWERS) & set(NO_TEXT)) == 0
    for name in NO_TEXT:
        texty = [
            p
            for p in inspect.signature(functions[name]).parameters
            if TEXT_LIKE.match(p)
        ]
        assert not texty, f"{name} takes {texty}: it draws text, give it an adapter"


words = st.lists(
    st.text(
        st.characters(exclude_categories=["Cc", "Cs", "Cn", "Z"]) | st.just(" "),
        min_size=1,
        max_size=8,
    )
    .map(lambda t: " ".join(t.split()))
    .filter(bool),
    min_size=1,
    max_size=4,
    unique=True,
)


@pytest.mark.parametrize("qualname", sorted(DRAWERS))
@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(words=words)
@example(words=ISSUE_WORDS[:2])
@example(words=ISSUE_WORDS[2:])
@example(words=["a$b$c$d", r"\$$", "$", "x"])
def test_every_text_is_drawn_as_typed(qualname, words):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        outputs = DRAWERS[qualname](list(words))
        for output, strings in outputs:
            if strings is None:  # a text alternative: each word with its number
                for word in words:
                    assert re.search(re.escape(word) + r" (to \()?\d", output) or (
                        f"{word}: " in output
                    ), (qualname, word, output)
                continue
            shown = drawn(output)
            missing = [s for s in strings if s not in shown]
            assert not missing, (qualname, missing, sorted(shown)[:40])
    plt.close("all")


# --- degenerate data ----------------------------------------------------------------

NAN = re.compile(r"\b(nan|inf)\b", re.IGNORECASE)
LETTERS = ["a", "b", "c", "d"]
ONE = ["a"]


def _layer_degenerate():
    return {
        "tokens": ONE,
        "layer": 0,
        "norms": np.full((4, 1), 7.0),
        "change": np.ones(1),
    }


DEGENERATE = {
    "mixture bars, equal weights": lambda: charts.mixture_bars([0.25] * 4, LETTERS),
    "mixture bars, one key": lambda: charts.mixture_bars([1.0], ONE),
    "mixture bars, negative zero": lambda: charts.mixture_bars([-0.0, 1.0], ["a", "b"]),
    "heat map 1 x 1": lambda: heatmaps.attention_heatmap([[1.0]], ONE, ONE),
    "heat map, equal weights": lambda: heatmaps.attention_heatmap(np.full((2, 2), 0.5)),
    "heat map, negative zero": lambda: heatmaps.attention_heatmap([[-0.0, 1.0]]),
    "access map 1 x 1": lambda: heatmaps.access_map(np.ones((1, 1), dtype=bool), ONE),
    "access map, nothing allowed": lambda: heatmaps.access_map(
        np.zeros((1, 1), dtype=bool), ONE
    ),
    "layer-head grid 1 x 1, constant": lambda: heatmaps.layer_head_grids(
        [np.zeros((1, 1))], ["t"], vmin=0, vmax=1, cmap="viridis", label="l"
    ),
    "alignment 1 x 1": lambda: heatmaps.alignment_heatmaps(
        [{"weights": [[1.0]], "source": ONE, "target": ONE, "alignment": [0]}]
    ),
    "length curves, one point": lambda: translation.length_curves(
        [5], {"m": {"token": spread([0.5]), "sentence": spread([0.5])}}
    ),
    "length curves, constant, negative zero": lambda: translation.length_curves(
        [5, 6],
        {"m": {"token": spread([0.5, 0.5]), "sentence": spread([-0.0, 0.0])}},
        chance=0.5,
    ),
    "position curves, one position": lambda: translation.position_curves(
        1, {"m": {"teacher_forced": spread([1.0]), "greedy": spread([0.0])}}
    ),
    "training curves, one evaluation": lambda: translation.training_curves(
        {"m": [{"step": [1], "validation_loss": [1.0], "best_step": [1]}]}
    ),
    "data flow, one token of width 1": lambda: diagrams.data_flow_diagram(
        ONE, d=1, d_k=1, d_v=1
    ),
    "descent, constant loss": lambda: learning.descent_figure(
        np.zeros(1),
        np.zeros(1),
        [("a", [0.0], [0.0])],
        Curve(),
        best_step=0,
        stopped_at=0,
    ),
    "layer flow, one position": lambda: diagrams.layer_flow_diagram(
        "decoder", L=1, d_model=1, heads=1, d_ff=1
    ),
    "svg bars, one": lambda: svg.bar_chart([0.3], ONE, title="t"),
    "svg bars, equal": lambda: svg.bar_chart([0.5, 0.5], ["a", "b"], title="t"),
    "svg bars, negative zero": lambda: svg.bar_chart(
        [-0.0, 1.0], ["a", "b"], title="t"
    ),
    "svg bars, all zero on a range of one value": lambda: svg.bar_chart(
        [0.0, 0.0], ["a", "b"], title="t", y_range=(0.0, 0.0)
    ),
    "svg arrows, zero vectors": lambda: svg.arrows(
        [[0, 0], [-0.0, 0]], ["a", "b"], title="t"
    ),
    "svg arrows, one": lambda: svg.arrows([[1.0, -1.0]], ONE, title="t"),
    "svg heat map 1 x 1": lambda: svg.heatmap([[1.0]], ONE, ONE, title="t"),
    "svg heat map, constant": lambda: svg.heatmap(
        [[0.5, 0.5]], ONE, ["b", "c"], title="t"
    ),
    "svg heat map, negative zero": lambda: svg.heatmap([[-0.0]], ONE, ONE, title="t"),
    "svg lines, constant on a decade": lambda: svg.line_chart(
        [1, 10, 100], {"a": [10, 10, 10]}, title="t", xlabel="x", ylabel="y"
    ),
    "svg lines, one point on a decade": lambda: svg.line_chart(
        [100], {"a": [10]}, title="t", xlabel="x", ylabel="y", mark_x=100
    ),
    "svg lines, negative zero": lambda: svg.line_chart(
        [1, 10], {"a": [-0.0, 1.0]}, title="t", xlabel="x", ylabel="y"
    ),
    "scores, one token": lambda: weights_ex.scores_svg(
        weights_ex.scores_state([1.0], np.ones((1, 2))), ONE, (0.0, 1.0)
    ),
    "scores, equal": lambda: weights_ex.scores_figure(
        weights_ex.scores_state([1.0, 1.0], np.zeros((2, 2))), ["a", "b"]
    ),
    "scale, one score": lambda: weights_ex.scale_figure(
        weights_ex.scale_state([0.0], variance_dims=(1,), n_samples=10), ONE
    ),
    "mask, one token": lambda: masks_ex.mask_svg(masks_ex.mask_state(ONE)),
    "mask, one token, no padding": lambda: masks_ex.mask_figure(
        masks_ex.mask_state(ONE, "padding", pad_to=1)
    ),
    "heads, one head, zero output": lambda: heads_ex.heads_svg(
        heads_ex.heads_state([[0.0]], [[[0.0]]], [[0.0]]), ONE, (0.0, 0.0)
    ),
    "heads, one head, figure": lambda: heads_ex.heads_figure(
        heads_ex.heads_state([[0.0]], [[[0.0]]], [[0.0]]), ONE
    ),
    "query and keys, zero vectors": lambda: qk_ex.query_key_svg(
        qk_ex.query_key_state([0, 0], [[0, 0]], [[0, 0]]),
        [0, 0],
        [[0, 0]],
        [[0, 0]],
        ONE,
    ),
    "query and keys, zero vectors, figure": lambda: qk_ex.query_key_figure(
        qk_ex.query_key_state([0, 0], [[0, 0]], [[0, 0]]),
        [0, 0],
        [[0, 0]],
        [[0, 0]],
        ONE,
    ),
    "position 0, offset 0": lambda: position_ex.position_svg(
        position_ex.position_state(0, 0, 2, length=1)
    ),
    "position 0, offset 0, figure": lambda: position_ex.position_figure(
        position_ex.position_state(0, 0, 2, length=1)
    ),
    "cost, one position": lambda: cost_ex.cost_svg(cost_ex.cost_state(1, 1)),
    "cost, one position, figure": lambda: cost_ex.cost_figure(cost_ex.cost_state(1, 1)),
    "learned, one word": lambda: learned_ex.learned_svg(_learned_state(ONE)),
    "learned, one word, figure": lambda: learned_ex.learned_figure(_learned_state(ONE)),
    "model, one token": lambda: minilm_ex.model_svg(_model_state(ONE)),
    "model, one token, figure": lambda: minilm_ex.model_figure(_model_state(ONE)),
    "layer, one token, constant": lambda: minilm_ex.layer_svg(_layer_degenerate()),
    "layer, one token, figure": lambda: minilm_ex.layer_figure(_layer_degenerate()),
}


def markup_of(output) -> str:
    if isinstance(output, Figure):
        buffer = io.StringIO()
        output.savefig(buffer, format="svg")
        return buffer.getvalue()
    return output


@pytest.mark.parametrize("case", sorted(DEGENERATE))
def test_degenerate_data_draws_without_warnings_or_nan_coordinates(case):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        text = markup_of(DEGENERATE[case]())
    text = re.sub(r"base64,[A-Za-z0-9+/=\s]+", "", text)  # the pixels of a heat map
    ET.fromstring(text if text.startswith("<?xml") else f"<root>{text}</root>")
    assert not NAN.search(text), NAN.search(text)


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: svg.bar_chart([np.nan], ONE, title="t"), "values must be finite"),
        (lambda: svg.bar_chart([1.0], ONE, title="t", y_range=(0, np.inf)), "y_range"),
        (lambda: svg.arrows([[np.inf, 0]], ONE, title="t"), "vectors must be finite"),
        (lambda: svg.arrows([[1, 0]], ONE, title="t", extent=0), "extent must be"),
        (lambda: svg.heatmap([[0.5]], ONE, ONE, title="t", vmin=1, vmax=1), "vmin"),
        (
            lambda: svg.line_chart(
                [0, 1], {"a": [1, 2]}, title="t", xlabel="x", ylabel="y"
            ),
            "x must be positive",
        ),
        (
            lambda: svg.line_chart(
                [1, 2], {"a": [1, np.nan]}, title="t", xlabel="x", ylabel="y"
            ),
            "series 'a' must be finite",
        ),
    ],
)
def test_drawings_refuse_what_they_cannot_draw_naming_it(call, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        call()
