"""Explorer: one trained classifier's attention on sentences of the reader's choice."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures import svg
from book_support.figures.charts import mixture_bars
from book_support.figures.explorers._base import _Explorer, _fmt
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)

__all__ = ["learned_state", "learned_figure", "learned_svg", "LearnedExplorer"]


# --------------------------------------------------------------------------- learned vs
# computed
def learned_state(model, sentence: str) -> dict:
    """Run a trained context classifier (frozen parameters) on one sentence.

    Parameters
    ----------
    model : book_support.experiments.context_classifier.ContextClassifier, e.g. from
        ``train_context_classifier(seed=0)``
    sentence : str, words from ``attnlib.data.context_task.VOCAB`` with exactly one
        ambiguous word

    Returns
    -------
    dict with ``words`` (tuple), ``ambiguous`` (the ambiguous word), ``weights`` (L,)
    the ambiguous word's attention weights, ``probs`` (2,) and ``sense`` (the predicted
    sense name).

    Raises
    ------
    ValueError (from ``encode_sentences``) naming an unknown word, or when the sentence
    does not hold exactly one ambiguous word.
    """
    from attnlib.data.context_task import SENSES, encode_sentences
    from book_support.experiments.context_classifier import forward

    batch = encode_sentences([sentence])
    result = forward(model, batch)
    words = tuple(batch.words(0))
    ambiguous = words[int(batch.query_index[0])]
    probs = result.probs[0]
    return {
        "words": words,
        "ambiguous": ambiguous,
        "weights": result.query_weights[0, : len(words)],
        "probs": probs,
        "sense": SENSES[ambiguous][int(np.argmax(probs))],
    }


def learned_figure(state: dict) -> plt.Figure:
    """The ambiguous word's attention over the sentence, and the predicted sense."""
    fig = mixture_bars(
        state["weights"],
        state["words"],
        title=f"attention from '{state['ambiguous']}': predicted sense "
        f"'{state['sense']}' ({state['probs'].max():.2f})",
    )
    fig.set_size_inches(max(6.0, 0.75 * len(state["words"])), 3.0)
    return fig


def learned_svg(state: dict) -> str:
    """The ambiguous word's weights over the sentence, the prediction in the title (in a
    block of its own, which scrolls sideways in a column too narrow for the chart)."""
    words = state["words"]
    return svg.side_by_side(
        svg.bar_chart(
            state["weights"],
            words,
            title=f"attention from '{state['ambiguous']}': predicted sense "
            f"'{state['sense']}' (p = {state['probs'].max():.2f})",
            width=max(360, 62 * len(words)),
        )
    )


def _learned_rows(s):
    return [
        ("words", " | ".join(s["words"])),
        ("weights", _fmt(s["weights"])),
        ("predicted sense", f"{s['sense']} (p = {s['probs'].max():.4f})"),
    ]


class LearnedExplorer(_Explorer):
    """Edit a sentence; a trained model with frozen parameters computes new attention
       weights.

    The parameters never change while you type: only the input does, and with it the
    weights and the prediction (the chapter's point about learned versus computed).
    """

    def __init__(self, model=None, *, live_figure: bool = True):
        super().__init__(live_figure)
        from book_support.experiments.context_classifier import train_context_classifier

        self.model = train_context_classifier(seed=0) if model is None else model
        w = self._widgets
        self.sentence = w.Text(
            value="The fisherman repaired his net beside the bank.",
            description="sentence",
            style={"description_width": "initial"},
            layout=w.Layout(width="95%"),
        )
        self.controls = [self.sentence]
        self.error = ""
        self._last_good: dict = {}
        self._connect(self.controls)

    def compute(self) -> dict:
        try:
            self._last_good = learned_state(self.model, self.sentence.value)
            self.error = ""
        except ValueError as exc:  # an unknown word while typing: keep the last result
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
        default = (
            self.sentence.value if self.sentence.value in sentences else sentences[0]
        )
        controls = [
            Control(
                "sentence",
                tuple((t, t) for t in sentences),
                sentences.index(default),
                kind="dropdown",
            )
        ]

        def render(sentence):
            state = learned_state(self.model, sentence)
            return learned_svg(state) + readout_table(_learned_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="learned-attention explorer",
            fallback_png=figure_png(self.figure()),
        )
