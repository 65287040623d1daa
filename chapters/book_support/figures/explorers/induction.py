"""Explorer of the induction-head model: pick a repeated sequence and a head, see its
attention pattern, its two scores and what removing it costs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures import svg
from book_support.figures.explorers._base import _Explorer, _fmt, _in_float64
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)

__all__ = ["induction_state", "induction_svg", "induction_figure", "InductionExplorer"]


def induction_state(model, tokens, layer: int, head: int) -> dict:
    """One head of the induction model on one sequence whose second half repeats the
    first.

    Parameters
    ----------
    model : ``(params, config)`` from :func:`book_support.experiments.induction.load`
    tokens : int array (2 h,), a sequence of the task with period ``h``
    layer : 0 or 1;  head : int in ``0 .. H - 1``

    Returns
    -------
    dict, computed in float64 (the model's float32 weights converted), with
    ``weights`` (L, L), the head's attention pattern (L = 2 h - 1 inputs),
    ``labels`` (the input tokens as text), ``previous`` and ``induction`` (the head's
    two scores on this sequence), ``loss`` and ``loss_without`` (the repeated half's
    loss of the intact model and with this head removed), ``layer`` and ``head``.

    Raises
    ------
    ValueError for a layer or head out of range (named).
    """
    from book_support.experiments import induction

    params, config = model
    params = _in_float64(params)
    if not (0 <= layer < config.num_layers and 0 <= head < config.num_heads):
        raise ValueError(
            f"layer must be in 0..{config.num_layers - 1} and head in "
            f"0..{config.num_heads - 1}; got layer={layer}, head={head}"
        )
    seq = np.asarray(tokens)[None]  # (1, 2h)
    task = induction.InductionTask(half=seq.shape[1] // 2, vocab_size=config.vocab_size)
    _, weights = induction.forward(params, config, seq[:, :-1])
    mask = np.ones((config.num_layers, config.num_heads))
    mask[layer, head] = 0.0
    return {
        "weights": weights[layer][0, head],
        "labels": [str(t) for t in seq[0, :-1]],
        "previous": float(induction.previous_token_scores(weights)[layer, head]),
        "induction": float(induction.induction_scores(weights, task)[layer, head]),
        "loss": induction.half_losses(params, config, seq, task)[1],
        "loss_without": induction.half_losses(params, config, seq, task, mask)[1],
        "layer": int(layer),
        "head": int(head),
    }


def induction_svg(state: dict) -> str:
    """The head's attention pattern as a heat map (rows: queries, columns: keys)."""
    return svg.heatmap(
        state["weights"],
        state["labels"],
        state["labels"],
        cell=11,
        title=f"layer {state['layer']}, head {state['head']}",
    )


def _rows(s):
    # 3 decimals are enough to compare heads; the state is computed in float64, so
    # they are the same on every machine
    return [
        ("previous-token score", _fmt(s["previous"], 3)),
        ("induction score", _fmt(s["induction"], 3)),
        ("repeated half's loss (nats)", _fmt(s["loss"], 3)),
        ("... with this head removed", _fmt(s["loss_without"], 3)),
    ]


def induction_figure(state: dict) -> plt.Figure:
    """The pattern drawn with matplotlib (for the live explorer)."""
    from book_support.figures.heatmaps import attention_heatmap

    return attention_heatmap(
        state["weights"],
        state["labels"],
        state["labels"],
        annotate=False,
        titles=[f"layer {state['layer']}, head {state['head']}"],
        panel_size=4.2,
    )


class InductionExplorer(_Explorer):
    """Pick one of a few repeated sequences, a layer and a head of the trained model."""

    def __init__(self, model, sequences, *, live_figure: bool = True):
        super().__init__(live_figure)
        self.model, self.sequences = model, [np.asarray(s) for s in sequences]
        w = self._widgets
        style = {"description_width": "initial"}
        config = model[1]
        self.sequence = w.IntSlider(
            value=0,
            min=0,
            max=len(self.sequences) - 1,
            description="sequence",
            style=style,
        )
        self.layer = w.IntSlider(
            value=1, min=0, max=config.num_layers - 1, description="layer", style=style
        )
        self.head = w.IntSlider(
            value=0, min=0, max=config.num_heads - 1, description="head", style=style
        )
        self.controls = [self.sequence, self.layer, self.head]
        self._connect(self.controls)

    def compute(self) -> dict:
        return induction_state(
            self.model,
            self.sequences[self.sequence.value],
            self.layer.value,
            self.head.value,
        )

    def rows(self):
        return _rows(self.state)

    def figure(self):
        return induction_figure(self.state)

    def precomputed(self) -> PrecomputedExplorer:
        """Every sequence, layer and head, chosen in the page."""
        config = self.model[1]
        controls = [
            # a few choices each: list boxes showing every option (a slider of 2 or 4
            # positions is too coarse to drag on a phone)
            Control.numbers(
                "sequence",
                range(len(self.sequences)),
                self.sequence.value,
                kind="list",
            ),
            Control.numbers(
                "layer", range(config.num_layers), self.layer.value, kind="list"
            ),
            Control.numbers(
                "head", range(config.num_heads), self.head.value, kind="list"
            ),
        ]

        def render(sequence, layer, head):
            state = induction_state(self.model, self.sequences[sequence], layer, head)
            return induction_svg(state) + readout_table(_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="induction-head explorer",
            fallback_png=figure_png(self.figure()),
        )
