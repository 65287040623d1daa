"""Explorers that work without a kernel: every state computed in advance, chosen in the
   browser.

A static web page has no Python behind it, but the Jupyter widgets packages still draw
widgets from their stored state and run links between widgets in the browser
(``ipywidgets.jslink``; the website's script for this is built from ``_ext/widgets/``).
An explorer for the website is therefore built from

* **controls**: a slider over a list of positions, a drop-down or a list box (all
  options shown, one chosen), each with a label in words; only their ``index`` matters.
  Each is a native control that the keyboard moves: Tab reaches it, the arrow keys
  change it. (Not ipywidgets' radio buttons: their inputs share no ``name``, so the
  arrow keys do not move between them.)
* nested ``ipywidgets.Stack`` widgets, one level per control, whose leaves are the
  precomputed **states**: one ``HTML`` widget each, holding the drawing (SVG, see
  :mod:`book_support.figures.svg`) and a readout of the numbers.

Every control's ``index`` is linked in the browser (``jslink``) to the
``selected_index`` of every stack of its level, so the page shows the state for the
current positions of all the controls. Nothing runs in Python after the notebook was
executed. In Jupyter the same widget works too; the live explorers of
:mod:`book_support.figures.explorers` accept any value.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Control", "PrecomputedExplorer", "readout_table"]

KINDS = ("slider", "dropdown", "list")


@dataclass(frozen=True)
class Control:
    """One control of a precomputed explorer.

    Attributes
    ----------
    description : str, the label shown next to the control (words, with units)
    options : tuple of (label, value) pairs; the label is shown, the value is passed to
        the state function
    default : int, index of the starting option
    kind : "slider" (ordered positions, moved with the mouse or the arrow keys),
        "dropdown" (a native drop-down) or "list" (a native list box showing every
        option; for a few named choices, e.g. the kinds of mask)
    """

    description: str
    options: tuple
    default: int = 0
    kind: str = "slider"

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}; got {self.kind!r}")
        if not self.options:
            raise ValueError(f"control {self.description!r} has no options")
        if not 0 <= self.default < len(self.options):
            raise ValueError(
                f"default {self.default} is not an index of the "
                f"{len(self.options)} options of {self.description!r}"
            )

    @classmethod
    def numbers(
        cls,
        description: str,
        values: Sequence,
        default,
        fmt: str = "{:g}",
        kind: str = "slider",
    ) -> Control:
        """A control over numbers; ``default`` must be one of ``values``."""
        values = list(values)
        index = min(range(len(values)), key=lambda i: abs(values[i] - default))
        if abs(values[index] - default) > 1e-9 * max(1.0, abs(default)):
            raise ValueError(
                f"default {default} is not one of the values of {description!r}"
            )
        return cls(description, tuple((fmt.format(v), v) for v in values), index, kind)

    @property
    def values(self) -> list:
        return [value for _, value in self.options]


def readout_table(rows) -> str:
    """``(name, value)`` rows as a small HTML table (the numbers a state shows).

    The page's style sheet lets long values wrap and, in a narrow column, puts each name
    above its value, so that no number is cut off on a phone."""
    cells = "".join(
        f"<tr><th>{html.escape(k)}</th><td><code>{html.escape(v)}</code></td></tr>"
        for k, v in rows
    )
    return f"<table class='explorer-readout'>{cells}</table>"


def figure_png(fig) -> bytes:
    """A matplotlib figure as PNG bytes (the figure is closed)."""
    import matplotlib.pyplot as plt

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    return buffer.getvalue()


class PrecomputedExplorer:
    """Controls linked in the browser to nested stacks of precomputed states.

    Parameters
    ----------
    controls : sequence of :class:`Control` (at least one)
    render : callable taking one value per control (in order) and returning the state's
        HTML: a drawing and a readout of its numbers (:func:`readout_table`)
    name : str, what the explorer shows (used in the text shown where widgets cannot be)
    fallback_png : bytes, optional, a PNG of the default state for outputs that cannot
        show widgets (e.g. a PDF)

    Displaying the object shows the widget; its plain-text form names the controls and
    the number of states (that is what ``nbval`` compares).
    """

    def __init__(
        self,
        controls: Sequence[Control],
        render: Callable[..., str],
        *,
        name: str,
        fallback_png: bytes | None = None,
    ):
        import ipywidgets as widgets

        self.controls = list(controls)
        if not self.controls:
            raise ValueError("a precomputed explorer needs at least one control")
        self.name = name
        self.fallback_png = fallback_png
        style = {"description_width": "initial"}
        self.control_widgets = []
        for c in self.controls:
            options = [(label, i) for i, (label, _) in enumerate(c.options)]
            common = dict(
                options=options, value=c.default, description=c.description, style=style
            )
            if c.kind == "slider":
                w = widgets.SelectionSlider(
                    **common,
                    continuous_update=True,
                    layout=widgets.Layout(width="100%"),
                )
            elif c.kind == "dropdown":
                w = widgets.Dropdown(**common, layout=widgets.Layout(width="auto"))
            else:
                w = widgets.Select(
                    **common, rows=len(options), layout=widgets.Layout(width="auto")
                )
            self.control_widgets.append(w)
        self.stacks: list[list] = [[] for _ in self.controls]
        self.leaves: dict[tuple, object] = {}

        # One layout and one style shared by all the states and stacks: each widget
        # would otherwise store its own copy of the defaults (about 1.5 kB per state in
        # the page).
        leaf_layout, leaf_style = widgets.Layout(), widgets.widget_string.HTMLStyle()
        stack_layout = widgets.Layout()

        def build(level: int, prefix: tuple):
            if level == len(self.controls):
                values = [c.options[i][1] for c, i in zip(self.controls, prefix)]
                leaf = widgets.HTML(
                    f"<div class='explorer-state'>{render(*values)}</div>",
                    layout=leaf_layout,
                    style=leaf_style,
                )
                self.leaves[prefix] = leaf
                return leaf
            c = self.controls[level]
            children = [build(level + 1, prefix + (i,)) for i in range(len(c.options))]
            stack = widgets.Stack(
                children, selected_index=c.default, layout=stack_layout
            )
            self.stacks[level].append(stack)
            return stack

        self.view = build(0, ())
        self.links = [
            widgets.jslink((w, "index"), (stack, "selected_index"))
            for w, level in zip(self.control_widgets, self.stacks)
            for stack in level
        ]
        # The box's look (border, colours in light and dark mode, labels above the
        # tracks in a narrow column) comes from the page's style sheet, through its
        # class.
        self.widget = widgets.VBox(self.control_widgets + [self.view])
        self.widget.add_class("explorer")

    @property
    def n_states(self) -> int:
        return len(self.leaves)

    def state_html(self, *indices: int) -> str:
        """The HTML of the state at these option indices (one per control)."""
        return self.leaves[tuple(indices)].value

    def __repr__(self) -> str:
        controls = "; ".join(
            f"{c.description}: {len(c.options)} positions, from "
            f"{c.options[0][0]} to {c.options[-1][0]}"
            for c in self.controls
        )
        return f"{self.name}: {self.n_states} precomputed states ({controls})"

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = repr(self)
        if self.fallback_png:
            bundle["image/png"] = base64.b64encode(self.fallback_png).decode("ascii")
        return bundle


def grid(controls: Sequence[Control]):
    """Every combination of option indices, in the order the stacks hold them."""
    return itertools.product(*(range(len(c.options)) for c in controls))
