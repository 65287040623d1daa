"""Explorer of the book's trained language model: a prompt and a temperature give the
next-character distribution and the attention of the last position."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures import svg
from book_support.figures.charts import mixture_bars
from book_support.figures.explorers._base import _Explorer, _fmt, _in_float64
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)

__all__ = [
    "show_char",
    "next_token_state",
    "next_token_svg",
    "next_token_figure",
    "NextTokenExplorer",
]

#: How many of the most likely characters the explorer shows, and how many of the
#: prompt's last characters its attention chart shows.
TOP, SHOWN = 8, 24
#: the title of the attention chart, and the fuller wording of its text alternative
ATTENTION_TITLE = "last position's attention (last layer)"
ATTENTION_ALT = "attention of the last position (last layer, mean of heads)"


def show_char(c: str) -> str:
    """A character as a label: the space as ``␣``, the newline as ``⏎``."""
    return {" ": "␣", "\n": "⏎"}.get(c, c)


def next_token_state(model, prompt: str, temperature: float) -> dict:
    """The model's next-character distribution after ``prompt``, and where the last
    position looks.

    Parameters
    ----------
    model : ``(params, config, tokenizer)`` of a character-level language model (e.g.
        :func:`book_support.experiments.lm_runs.load_main` without its last item)
    prompt : str of at least one character from the tokenizer's vocabulary (the last
        ``config.context`` characters are read)
    temperature : float >= 0 (0: greedy, all probability on the most likely character)

    Returns
    -------
    dict, computed in float64 (the model's float32 weights converted), with ``chars``
    (the characters read), ``top`` (the ``TOP`` most likely next
    characters), ``probs`` (their probabilities at this temperature), ``greedy`` (the
    most likely character), ``attention`` (L,), the last position's weights in the last
    layer averaged over its heads, and ``temperature``.

    Raises
    ------
    ValueError naming characters outside the vocabulary, or an empty prompt.
    """
    from attnlib.models.generation import next_token_distribution
    from attnlib.models.language_model import forward

    params, config, tokenizer = model
    params = _in_float64(params)
    if not prompt:
        raise ValueError("the prompt needs at least one character")
    ids = tokenizer.encode(prompt)[-config.context :]
    logits, weights = forward(params, config, ids[None])
    probs = next_token_distribution(logits[0, -1], temperature)  # (V,)
    order = np.argsort(-probs, kind="stable")[:TOP]
    return {
        "chars": [tokenizer.chars[i] for i in ids],
        "top": [tokenizer.chars[i] for i in order],
        "probs": probs[order],
        "greedy": tokenizer.chars[int(np.argmax(logits[0, -1]))],
        "attention": weights[-1][0, :, -1].mean(axis=0),  # (L,)
        "temperature": float(temperature),
    }


def _shown(state):
    chars = state["chars"][-SHOWN:]
    return [show_char(c) for c in chars], state["attention"][-SHOWN:]


def next_token_svg(state: dict) -> str:
    """Bars of the most likely next characters, and the last position's attention over
    the last characters of the prompt."""
    labels, weights = _shown(state)
    return svg.side_by_side(
        svg.bar_chart(
            state["probs"],
            [show_char(c) for c in state["top"]],
            title=f"next character, temperature {state['temperature']:g}",
            width=300,
        ),
        svg.bar_chart(
            weights,
            labels,
            # short enough for the narrowest chart (300 px; the long form overflowed
            # at both ends); the text alternative keeps the long form
            title=ATTENTION_TITLE,
            width=max(300, 22 * len(labels)),
            fmt="{:.2f}",
            alt=svg.bar_chart_alt(weights, labels, ATTENTION_ALT, fmt="{:.2f}"),
        ),
    )


def _rows(s):
    return [
        ("prompt (last characters)", "".join(s["chars"][-SHOWN:])),
        ("most likely next", " ".join(show_char(c) for c in s["top"])),
        ("their probabilities", _fmt(s["probs"])),
        (
            "largest attention weight on",
            show_char(s["chars"][int(np.argmax(s["attention"]))]),
        ),
    ]


def next_token_figure(state: dict) -> plt.Figure:
    """The same two panels as :func:`next_token_svg`, drawn with matplotlib."""
    labels, weights = _shown(state)
    fig, (ax_p, ax_a) = plt.subplots(
        1,
        2,
        figsize=(9.0, 3.0),
        layout="constrained",
        gridspec_kw={"width_ratios": [1, 2]},
    )
    mixture_bars(
        state["probs"],
        [show_char(c) for c in state["top"]],
        title=f"next character, temperature {state['temperature']:g}",
        ax=ax_p,
    )
    ax_p.set_ylabel("probability")
    mixture_bars(
        weights,
        labels,
        title=ATTENTION_TITLE,
        ax=ax_a,
    )
    return fig


class NextTokenExplorer(_Explorer):
    """Type a prompt and move the temperature: the next-character distribution and the
    last position's attention follow (the model's parameters never change)."""

    PROMPTS = (
        "The query",
        "Attention weights",
        "softmax",
        "The model ",
        "A mask",
        "each position",
    )
    TEMPERATURES = (0.0, 0.5, 0.8, 1.0, 1.5)

    def __init__(self, model, *, live_figure: bool = True):
        super().__init__(live_figure)
        self.model = model
        w = self._widgets
        style = {"description_width": "initial"}
        self.prompt = w.Combobox(
            options=list(self.PROMPTS),
            value=self.PROMPTS[0],
            description="prompt",
            ensure_option=False,
            continuous_update=False,
            style=style,
            layout=w.Layout(width="95%"),
        )
        self.temperature = w.FloatSlider(
            value=1.0,
            min=0.0,
            max=2.0,
            step=0.1,
            description="temperature",
            style=style,
        )
        self.controls = [self.prompt, self.temperature]
        self.error = ""
        self._last_good: dict = {}
        self._connect(self.controls)

    def compute(self) -> dict:
        try:
            self._last_good = next_token_state(
                self.model, self.prompt.value, self.temperature.value
            )
            self.error = ""
        except ValueError as exc:  # a character the model does not know: keep the last
            self.error = str(exc)
            if not self._last_good:
                raise
        return self._last_good

    def rows(self):
        rows = _rows(self.state)
        return [("not understood", self.error)] + rows if self.error else rows

    def figure(self):
        return next_token_figure(self.state)

    def precomputed(
        self, prompts=PROMPTS, temperatures=TEMPERATURES
    ) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: a few prompts and temperatures."""
        prompts = list(prompts)
        controls = [
            Control("prompt", tuple((repr(p), p) for p in prompts), 0, kind="dropdown"),
            # five temperatures: a list box showing them all (too few for a slider)
            Control.numbers("temperature", temperatures, 1.0, kind="list"),
        ]

        def render(prompt, temperature):
            state = next_token_state(self.model, prompt, temperature)
            return next_token_svg(state) + readout_table(_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="next-character explorer",
            fallback_png=figure_png(self.figure()),
        )
