"""What every explorer shares: the readout table, number formatting and widget
plumbing."""

from __future__ import annotations

import html
import io
from collections.abc import Mapping

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.charts import mixture_bars
from book_support.figures.style import OKABE_ITO


def _fmt(x, decimals: int = 4) -> str:
    """Numbers as the readouts show them: rounded to ``decimals`` (4, unless only
    fewer digits are stable across machines), no negative zero."""
    arr = np.round(np.asarray(x, dtype=float), decimals) + 0.0
    return np.array2string(
        arr, precision=decimals, separator=", ", suppress_small=True, floatmode="fixed"
    )


def _in_float64(params: dict) -> dict:
    """A trained model's float32 parameters as float64, for an explorer's state: its
    readout then shows the same digits on every machine (float32 sums differ in the 7th
    digit between machines' BLAS: a head's score of 0.87405 showed 0.8740 on one
    machine and 0.8741 on another). Anything but a mapping is returned as it is, for the
    model's own checks to name what is wrong with it."""
    if not isinstance(params, Mapping):
        return params
    return {name: np.asarray(value, dtype=np.float64) for name, value in params.items()}


def _table(rows: list[tuple[str, str]]) -> str:
    cells = "".join(
        f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
        f"<td><code>{html.escape(v)}</code></td></tr>"
        for k, v in rows
    )
    return f"<table>{cells}</table>"


def _value_range(values):
    """Axis range for a weighted sum of ``values``: it always lies within their
    range."""
    v = np.asarray(values, dtype=float)
    return float(min(0.0, v.min())), float(max(0.0, v.max()))


def _weights_and_output_figure(
    weights, tokens, output, weights_title, output_title, *, figsize, fmt
):
    """Mixture bars (left) and the bars of an output vector's coordinates (right)."""
    fig, (ax_w, ax_o) = plt.subplots(
        1,
        2,
        figsize=figsize,
        layout="constrained",
        gridspec_kw={"width_ratios": [3, 2]},
    )
    mixture_bars(weights, tokens, title=weights_title, ax=ax_w)
    bars = ax_o.bar(
        [f"out[{i}]" for i in range(output.size)], output, color=OKABE_ITO[2]
    )
    ax_o.bar_label(bars, fmt=fmt, fontsize=8)
    ax_o.axhline(0, color="black", linewidth=0.6)
    ax_o.set_title(output_title)
    return fig


class _Explorer:
    """Common widget plumbing: controls -> update() -> readout text and redrawn
    figure."""

    def __init__(self, live_figure: bool = True):
        import ipywidgets as widgets

        self._widgets = widgets
        self.readout = widgets.HTML()
        # The figure is shown as a PNG inside an Image widget (not an Output widget), so
        # redrawing sends widget state only: no display messages leak into notebook
        # cells.
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
