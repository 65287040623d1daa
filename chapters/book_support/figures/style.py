"""The book's figure style: fixed sizes, colour-blind-safe colours, text drawn as typed.

Colours: viridis (Smith & van der Walt, 2015) and the Okabe-Ito palette (Okabe & Ito,
2008), both readable with the common colour-vision deficiencies.
"""

from __future__ import annotations

import base64
import io

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

__all__ = [
    "WEIGHT_CMAP",
    "OKABE_ITO",
    "DPI",
    "use_book_style",
    "palette_png",
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


def use_book_style(png_colours: int | None = None) -> None:
    """Fix figure size (6 x 3.5 in), dpi (100), font size and the Okabe-Ito colour
    cycle.

    Call once at the top of a notebook so every chapter draws identical PNGs. With
    ``png_colours`` (an int from 2 to 256), every figure the notebook shows is stored as
    a PNG of at most that many colours (:func:`palette_png`): about a third of the bytes
    for the book's plots, which use a few flat colours and the shades that smooth their
    edges; the same size in pixels. Outside IPython there is nothing to show and the
    argument only sets the style. Returns None.

    Raises ``ValueError`` (from :func:`palette_png`'s check) if ``png_colours`` is not
    an int from 2 to 256.
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
    if png_colours is not None:
        _check_colours(png_colours)
        _show_figures_as_palette_png(png_colours)


def _check_colours(colours) -> None:
    if isinstance(colours, bool) or not isinstance(colours, (int, np.integer)):
        raise ValueError(f"colours must be an int from 2 to 256; got {colours!r}")
    if not 2 <= colours <= 256:
        raise ValueError(f"colours must be an int from 2 to 256; got {colours}")


def palette_png(png: bytes, colours: int = 256) -> bytes:
    """An opaque PNG redrawn with at most ``colours`` colours, stored as a palette PNG.

    The colours are chosen by Pillow's maximum-coverage quantiser, without dithering:
    the book's plots have a few flat colours (cells, bars, lines, text) and the blended
    shades at their edges, all of which 256 colours keep within a few levels of 255 per
    channel, so the figure looks the same at about a third of the bytes. An image with
    any transparent pixel is returned unchanged (its transparency would be lost).

    Parameters: ``png``, the bytes of a PNG image (any size, RGB or RGBA); ``colours``,
    an int from 2 to 256. Returns: the bytes of a PNG of the same width and height
    (mode ``P``, 8-bit indices into a palette of at most ``colours`` entries).

    Raises: ``TypeError`` if ``png`` is not bytes; ``ValueError`` if ``colours`` is not
    an int from 2 to 256, or if ``png`` is not a PNG image.

    Source: Pillow (2024), ``Image.quantize`` with ``Quantize.MAXCOVERAGE``; the PNG
    palette (PLTE) chunk of the PNG specification (W3C, 2003, section 11.2.3).
    """
    from PIL import Image

    if not isinstance(png, (bytes, bytearray)):
        raise TypeError(
            f"png must be the bytes of a PNG image; got {type(png).__name__}"
        )
    _check_colours(colours)
    if not bytes(png[:8]) == b"\x89PNG\r\n\x1a\n":
        raise ValueError("png is not a PNG image (its first 8 bytes are not PNG's)")
    image = Image.open(io.BytesIO(png))
    image.load()
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        alpha = np.asarray(image.convert("RGBA"))[..., 3]
        if alpha.min() < 255:
            return bytes(png)
    quantised = image.convert("RGB").quantize(
        colors=int(colours),
        method=Image.Quantize.MAXCOVERAGE,
        dither=Image.Dither.NONE,
    )
    buffer = io.BytesIO()
    quantised.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _show_figures_as_palette_png(colours: int) -> None:
    """Make IPython show every matplotlib figure as a :func:`palette_png`."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        return
    shell = get_ipython()
    if shell is None:
        return
    from IPython.core.pylabtools import print_figure
    from matplotlib.figure import Figure

    # Load the inline backend now: loading it (at the first figure otherwise) resets
    # the figure formatters and would drop the one set here.
    plt.switch_backend(matplotlib.get_backend())

    def show(fig):
        png = print_figure(fig, "png", bbox_inches="tight")
        if png is None:  # a figure with nothing drawn: IPython shows no image
            return None
        return base64.b64encode(palette_png(png, colours)).decode("ascii")

    shell.display_formatter.formatters["image/png"].for_type(Figure, show)


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
