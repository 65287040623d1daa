"""The book's figure style: fixed sizes, colour-blind-safe colours, text drawn as typed.

Colours: viridis (Smith & van der Walt, 2015) and the Okabe-Ito palette (Okabe & Ito,
2008), both readable with the common colour-vision deficiencies.
"""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt

__all__ = [
    "WEIGHT_CMAP",
    "OKABE_ITO",
    "DPI",
    "use_book_style",
    "literal",
    "literal_labels",
]

#: Colour map for weights (perceptually uniform, colour-blind safe).
WEIGHT_CMAP = "viridis"
#: Two colours distinguishable under the common colour-vision deficiencies (Okabe-Ito).
OKABE_ITO = (
    "#0072B2",
    "#E69F00",
    "#009E73",
    "#CC79A7",
    "#56B4E9",
    "#D55E00",
    "#F0E442",
    "#000000",
)
#: Figure resolution used everywhere in the book (PNG, fixed size and dpi).
DPI = 100


def use_book_style() -> None:
    """Fix figure size (6 x 3.5 in), dpi (100), font size and the Okabe-Ito colour
       cycle.

    Call once at the top of a notebook so every chapter draws identical PNGs. Returns
    None.
    """
    plt.rcParams.update(
        {
            "figure.figsize": (6.0, 3.5),
            "figure.dpi": DPI,
            "savefig.dpi": DPI,
            "font.size": 10,
            "axes.prop_cycle": matplotlib.cycler(color=OKABE_ITO),
            "svg.hashsalt": "attention-executable",
        }
    )


def literal(text) -> str:
    """``text`` as a string that matplotlib draws exactly as typed, never as
       mathematics.

    matplotlib reads a text with two unescaped dollar signs as mathtext: ``"$x$"`` is
    drawn as an italic x and ``"Ba$$in"`` raises ``ValueError`` when the figure is
    drawn. Every dollar sign is escaped (``\\$``), which matplotlib draws as ``$``;
    nothing else is changed. Every label and title that the plots and the explorers draw
    goes through here. Non-strings (numbers used as tick labels) are converted with
    ``str``.

    Example: ``literal("US$$5")`` is ``"US\\$\\$5"``, drawn as ``US$$5``.

    Parameters: ``text``, any object (no array shape: one label). Returns: ``str``.
    Raises: nothing of its own (only what ``str(text)`` raises).

    Source: matplotlib (2024), "Writing mathematical expressions": an even number of
    unescaped dollar signs starts mathtext, and ``\\$`` is a literal dollar sign.
    """
    return str(text).replace("$", r"\$")


def literal_labels(labels) -> list[str] | None:
    """:func:`literal` applied to every label of a sequence (``None`` stays ``None``).

    Parameters: ``labels``, a sequence of length n (any shape of list the axis needs) or
    None. Returns: a list of n ``str``. Raises: ``TypeError`` if ``labels`` is not
    iterable.

    Source: matplotlib (2024), "Writing mathematical expressions" (see :func:`literal`).
    """
    return None if labels is None else [literal(label) for label in labels]
