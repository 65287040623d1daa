"""Small SVG drawings for the precomputed explorers: bars, arrows, heat maps and lines.

A static page shows every state of an explorer, so each state needs its own picture.
Drawing hundreds of matplotlib figures costs about a third of a second each, which would
make executing a chapter (and ``make test``) minutes slower; these drawings are plain
SVG text, written in microseconds and a few kilobytes each. Heat maps are one pixel per
cell (a tiny PNG scaled up without smoothing), with a colour scale, and carry their
values so that the page can show the value of the cell under the pointer or the keyboard
focus. Every drawing has ``role="img"`` and a ``<title>``, its text alternative (what a
screen reader reads): written from the same numbers as the drawing, it says what kind of
picture it is and states the numbers it shows (``alt=`` replaces it). The explorers also
put the numbers in a text readout next to it.

Text, axes and grid lines are drawn in ``currentColor``, the colour of the text around
the drawing, so that a drawing is readable on a light and on a dark page; data are drawn
in the Okabe-Ito colours (black, the eighth, also as ``currentColor``). The drawings
scale down to the width of their column (their ``viewBox`` keeps the proportions).

All functions return an SVG string (:func:`heatmap` an SVG in a ``<div>``); coordinates
are pixels; axes ranges are given by the caller so that they stay fixed while a control
moves.
"""

from __future__ import annotations

import base64
import html
import io

import numpy as np

from book_support.figures.style import OKABE_ITO, WEIGHT_CMAP

FONT = "font-family='sans-serif' font-size='12' fill='currentColor'"
# grid lines and axes: the text colour, faded
GRID = "stroke='currentColor' stroke-opacity='0.25'"
AXIS = "stroke='currentColor' stroke-opacity='0.6'"


def _esc(text) -> str:
    return html.escape(str(text), quote=True)


#: Drawings wider than this shrink to at most nine tenths of their size in a narrow
#: column (and scroll sideways beyond that), so that their text stays readable.
WIDE = 360


def _open(width: int, height: int, alt: str) -> str:
    floor = f" style='min-width:{round(0.9 * width)}px'" if width > WIDE else ""
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height}' "
        f"viewBox='0 0 {width} {height}' role='img' {FONT}{floor}>"
        f"<title>{_esc(alt)}</title>"
    )


def _paint(color: str) -> str:
    """A data colour as drawn: black becomes the text colour (readable on dark
    pages)."""
    return "currentColor" if color.lower() in ("#000", "#000000", "black") else color


def _one_line(label) -> str:
    """A label on one line: its first line, further lines in parentheses."""
    first, *more = [" ".join(line.split()) for line in str(label).split("\n")]
    return first + (f" ({', '.join(more)})" if more else "")


def _finite(values, what: str) -> np.ndarray:
    """``values`` as float64, or ``ValueError`` naming ``what`` if it holds NaN or
    inf."""
    v = np.asarray(values, dtype=float)
    if not np.isfinite(v).all():
        raise ValueError(f"{what} must be finite numbers; got NaN or inf")
    return v


def _span(lo: float, hi: float) -> tuple[float, float]:
    """An axis range that can be drawn: a single value (constant data) is widened by
    one unit on each side."""
    return (lo, hi) if hi > lo else (lo - 1.0, hi + 1.0)


def _number(x: float, fmt: str = "{:.2f}") -> str:
    """A number as the text alternatives state it (no negative zero)."""
    return fmt.format(float(x) + 0.0).replace("-0.00", "0.00")


def bar_chart_alt(
    values, labels, title: str, *, fmt: str = "{:.2f}", series=None
) -> str:
    """The text alternative of :func:`bar_chart`: its title and every bar's label and
    value."""
    v = np.atleast_2d(np.asarray(values, dtype=float))
    names = [_one_line(t) for t in labels]

    def bars(row):
        return ", ".join(f"{n} {_number(x, fmt)}" for n, x in zip(names, row))

    if v.shape[0] == 1:
        return f"Bar chart, {_one_line(title)}: {bars(v[0])}."
    series = series or [f"series {s + 1}" for s in range(v.shape[0])]
    return (
        f"Bar chart, {_one_line(title)}, {v.shape[0]} bars per label: "
        + "; ".join(f"{name}: {bars(row)}" for name, row in zip(series, v))
        + "."
    )


def _text(
    x,
    y,
    text,
    *,
    anchor="middle",
    weight="normal",
    size=None,
    color=None,
    rotate=None,
) -> str:
    extra = f" font-size='{size}'" if size else ""
    extra += f" font-weight='{weight}'" if weight != "normal" else ""
    extra += f" fill='{_paint(color)}'" if color else ""
    extra += f" text-anchor='{anchor}'" if anchor != "start" else ""
    if rotate is not None:
        extra += f" transform='rotate({rotate} {x:.1f} {y:.1f})'"
    return f"<text x='{x:.1f}' y='{y:.1f}'{extra}>{_esc(text)}</text>"


def bar_chart(
    values,
    labels,
    *,
    title: str,
    y_range=(0.0, 1.0),
    fmt: str = "{:.2f}",
    series=None,
    width: int = 300,
    height: int = 190,
    alt: str | None = None,
) -> str:
    """Vertical bars, one group per label; ``values`` (n,) or (n_series, n); fixed y
       range.

    Each bar carries its value as text. ``series`` names the rows of a 2-D ``values``
    (drawn in the Okabe-Ito colours, with a legend). The text alternative lists every
    bar (:func:`bar_chart_alt`) unless ``alt`` is given.
    """
    v = np.atleast_2d(_finite(values, "values"))
    lo, hi = _span(*(float(r) for r in _finite(y_range, "y_range")))
    left, right, top, bottom = 40, 8, 22, 34
    plot_w, plot_h = width - left - right, height - top - bottom

    def y(val):
        # halves: the span of a range like (-1e308, 1e308) does not overflow
        return top + (hi / 2 - min(max(val, lo), hi) / 2) / (hi / 2 - lo / 2) * plot_h

    n_series, n = v.shape
    group = plot_w / n
    bar_w = 0.8 * group / n_series
    alt = alt or bar_chart_alt(
        v if n_series > 1 else v[0], labels, title, fmt=fmt, series=series
    )
    parts = [_open(width, height, alt), _text(width / 2, 14, title, weight="bold")]
    for tick in (lo, lo + (hi / 2 - lo / 2), hi):  # as np.linspace(lo, hi, 3)
        parts.append(
            f"<line x1='{left}' x2='{width - right}' y1='{y(tick):.1f}' "
            f"y2='{y(tick):.1f}' {GRID}/>"
        )
        parts.append(_text(left - 4, y(tick) + 4, f"{tick:.2g}", anchor="end", size=10))
    zero = y(0.0)
    for s in range(n_series):
        color = (
            _paint(OKABE_ITO[s % len(OKABE_ITO)])
            if n_series > 1
            else OKABE_ITO[(s + 4) % 8]
        )
        for j in range(n):
            x0 = left + j * group + 0.1 * group + s * bar_w
            y1 = y(v[s, j])
            parts.append(
                f"<rect x='{x0:.1f}' y='{min(y1, zero):.1f}' width='{bar_w:.1f}' "
                f"height='{abs(zero - y1):.1f}' fill='{color}'/>"
            )
            ty = min(y1, zero) - 3 if v[s, j] >= 0 else max(y1, zero) + 10
            parts.append(_text(x0 + bar_w / 2, ty, _number(v[s, j], fmt), size=10))
    parts.append(
        f"<line x1='{left}' x2='{width - right}' y1='{zero:.1f}' y2='{zero:.1f}' "
        f"{AXIS}/>"
    )
    for j, label in enumerate(labels):
        for k, line in enumerate(str(label).split("\n")):
            parts.append(
                _text(
                    left + (j + 0.5) * group,
                    height - bottom + 13 + 12 * k,
                    line,
                    size=11,
                )
            )
    if series is not None and n_series > 1:
        for s, name in enumerate(series):
            x0 = width - right - 70 * (n_series - s)
            parts.append(
                f"<rect x='{x0}' y='{top - 2}' width='9' height='9' "
                f"fill='{OKABE_ITO[s % len(OKABE_ITO)]}'/>"
            )
            parts.append(_text(x0 + 12, top + 6, name, anchor="start", size=10))
    parts.append("</svg>")
    return "".join(parts)


def arrows_alt(vectors, labels, title: str) -> str:
    """The text alternative of :func:`arrows`: its title and where every arrow
    points."""
    ends = "; ".join(
        f"{_one_line(label)} to ({_number(x)}, {_number(y)})"
        for (x, y), label in zip(np.asarray(vectors, dtype=float), labels)
    )
    return f"Arrows from the origin, {_one_line(title)}: {ends}."


def arrows(
    vectors,
    labels,
    *,
    title: str,
    extent: float = 3.0,
    colors=None,
    size: int = 220,
    alt: str | None = None,
) -> str:
    """2-D arrows from the origin on square axes from ``-extent`` to ``extent``; the
    labels are listed under the plot in the arrows' colours (so that they never
    overlap). The text alternative gives every arrow's end point (:func:`arrows_alt`)
    unless ``alt`` is given."""
    _finite(vectors, "vectors")
    if not extent > 0:
        raise ValueError(f"extent must be positive; got {extent}")
    pad = 14
    scale = (size - 2 * pad) / (2 * extent)

    def px(p):
        # an arrow longer than the axes points out of them, clipped at 2 extents
        x, y = (min(max(float(c), -2 * extent), 2 * extent) for c in p[:2])
        return pad + (x + extent) * scale, pad + 8 + (extent - y) * scale

    height = size + 8 + 13 * len(labels)
    alt = alt or arrows_alt(vectors, labels, title)
    parts = [_open(size, height, alt), _text(size / 2, 12, title, weight="bold")]
    cx, cy = px((0.0, 0.0))
    parts.append(
        f"<line x1='{pad}' x2='{size - pad}' y1='{cy:.1f}' y2='{cy:.1f}' {GRID}/>"
    )
    parts.append(
        f"<line x1='{cx:.1f}' x2='{cx:.1f}' y1='{pad + 8}' y2='{size - pad + 8}' "
        f"{GRID}/>"
    )
    colors = [
        _paint(c)
        for c in (colors or [OKABE_ITO[(j + 1) % 8] for j in range(len(labels))])
    ]
    for k, (vec, label, color) in enumerate(zip(vectors, labels, colors)):
        x1, y1 = px(vec)
        length = float(np.hypot(x1 - cx, y1 - cy))
        if length > 1e-9:
            ux, uy = (x1 - cx) / length, (y1 - cy) / length
            head = min(8.0, length)
            bx, by = x1 - head * ux, y1 - head * uy
            parts.append(
                f"<line x1='{cx:.1f}' y1='{cy:.1f}' x2='{bx:.1f}' y2='{by:.1f}' "
                f"stroke='{color}' stroke-width='2'/>"
            )
            parts.append(
                f"<polygon points='{x1:.1f},{y1:.1f} {bx - 4 * uy:.1f},"
                f"{by + 4 * ux:.1f} {bx + 4 * uy:.1f},{by - 4 * ux:.1f}' "
                f"fill='{color}'/>"
            )
        else:
            parts.append(f"<circle cx='{cx:.1f}' cy='{cy:.1f}' r='3' fill='{color}'/>")
        y_label = size + 8 + 13 * k + 4
        parts.append(
            f"<line x1='{pad}' x2='{pad + 14}' y1='{y_label - 4}' "
            f"y2='{y_label - 4}' stroke='{color}' stroke-width='2'/>"
        )
        parts.append(_text(pad + 18, y_label, label, anchor="start", size=11))
    parts.append("</svg>")
    return "".join(parts)


def _pixels_png(rgb) -> str:
    """An (h, w, 3) uint8 array as a base64 PNG (one pixel per cell)."""
    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgb), mode="RGB").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _levels_png(index, palette) -> str:
    """An (h, w) array of indices into ``palette`` ((n, 3) uint8 colours) as a base64
    palette PNG (one pixel per cell). The whole palette is stored even where a map uses
    a few of its colours: every map then carries the same bytes, which the page's
    compression stores once."""
    from PIL import Image

    image = Image.fromarray(np.ascontiguousarray(index, dtype=np.uint8), mode="P")
    image.putpalette(np.asarray(palette, dtype=np.uint8).ravel().tolist())
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _plural(n: int) -> str:
    return "keys" if n > 1 else "key"


def heatmap_alt(
    matrix, row_labels, col_labels, title: str, *, max_listed: int = 3
) -> str:
    """The text alternative of :func:`heatmap`: its title, then for each query (row) the
    keys (columns) with the largest values (at most ``max_listed``, each with its value;
    values below 0.005 are not listed). A boolean matrix (a mask) lists every key that
    is True in each row."""
    m = np.asarray(matrix)
    rows, cols = m.shape
    names = [_one_line(t) for t in col_labels]
    if row_labels is None or not any(row_labels):
        row_labels = (
            col_labels if rows == cols else [f"row {i + 1}" for i in range(rows)]
        )
    described = []
    for label, row in zip(row_labels, m):
        if m.dtype == bool:
            chosen = [names[j] for j in np.flatnonzero(row)]
            which = (
                f"all {cols} keys"
                if len(chosen) == cols
                else f"{len(chosen)} {_plural(len(chosen))} ({', '.join(chosen)})"
                if chosen
                else "no key"
            )
            described.append(f"{_one_line(label)}: {which}")
            continue
        order = [
            j for j in np.argsort(-row, kind="stable")[:max_listed] if row[j] > 0.005
        ]
        cells = ", ".join(f"{names[j]} {_number(row[j])}" for j in order)
        described.append(f"{_one_line(label)}: {cells if cells else 'all 0'}")
    kind = (
        "the keys each query may attend"
        if m.dtype == bool
        else f"each query's largest values (at most {max_listed})"
    )
    return (
        f"Heat map, {_one_line(title)}, {rows} queries (rows) by {cols} keys (columns: "
        f"{', '.join(names)}); {kind}: " + "; ".join(described) + "."
    )


def _cell_values(m: np.ndarray) -> str:
    """A matrix as the page reads it for the value under the pointer: rows separated by
    ``;``, values by ``,``, each written as the read-out shows it (``0.66``;
    ``1.00e+308`` beyond 15 digits; a mask's cells are ``1`` or ``0``)."""
    m = np.asarray(m)
    if m.dtype == bool:
        return ";".join(",".join("1" if v else "0" for v in row) for row in m)

    def shown(v: float) -> str:
        text = f"{v:.2f}" if abs(v) < 1e15 else f"{v:.2e}"
        return "0.00" if text == "-0.00" else text

    return ";".join(",".join(shown(float(v)) for v in row) for row in m)


def _colour_scale(cmap, vmin, vmax, x, y, width) -> str:
    """A horizontal colour scale from ``vmin`` to ``vmax`` (a 64-pixel PNG strip) with
    three numbers under it."""
    ramp = (cmap(np.linspace(0.0, 1.0, 64))[None, :, :3] * 255).round()
    parts = [
        f"<image x='{x}' y='{y}' width='{width}' height='8' preserveAspectRatio='none' "
        f"href='data:image/png;base64,{_pixels_png(ramp.astype(np.uint8))}'/>",
        f"<rect x='{x}' y='{y}' width='{width}' height='8' fill='none' {AXIS}/>",
    ]
    for frac, anchor in ((0.0, "start"), (0.5, "middle"), (1.0, "end")):
        value = vmin + frac * (vmax - vmin)
        parts.append(
            _text(x + frac * width, y + 20, f"{value:.2g}", anchor=anchor, size=10)
        )
    return "".join(parts)


def _mask_legend(cmap, x, y) -> str:
    """The two colours of a mask: may attend (True) and masked (False)."""
    parts = []
    for k, (value, name) in enumerate(((1.0, "may attend"), (0.0, "masked"))):
        rgb = (np.asarray(cmap(value)[:3]) * 255).round().astype(int)
        colour = "#{:02x}{:02x}{:02x}".format(*rgb)
        x0 = x + 92 * k
        parts.append(
            f"<rect x='{x0}' y='{y}' width='10' height='10' fill='{colour}' {AXIS}/>"
        )
        parts.append(_text(x0 + 14, y + 9, name, anchor="start", size=10))
    return "".join(parts)


def _cells_png(raw: np.ndarray, vmin: float, vmax: float, cmap, levels) -> str:
    """The cells of a matrix coloured as :func:`heatmap` colours them (see there for
    ``levels``), as a base64 PNG of one pixel per cell."""
    scaled = np.clip((raw.astype(float) - vmin) / (vmax - vmin), 0, 1)
    if levels is None or raw.dtype == bool or np.isnan(scaled).any():
        rgb = (cmap(scaled)[..., :3] * 255).round()
        return _pixels_png(rgb.astype(np.uint8))
    steps = (cmap(np.linspace(0.0, 1.0, levels + 1))[:, :3] * 255).round()
    return _levels_png(np.round(scaled * levels), steps.astype(np.uint8))


def thumbnail_png(matrix, *, levels: int | None = None) -> str:
    """A matrix of values from 0 to 1 (attention weights) as a base64 PNG of one pixel
    per cell, in the colours of :func:`heatmap` (no labels, no scale): for a small map
    among many. ``levels`` as in :func:`heatmap`."""
    from matplotlib import colormaps

    return _cells_png(np.asarray(matrix), 0.0, 1.0, colormaps[WEIGHT_CMAP], levels)


def heatmap(
    matrix,
    row_labels,
    col_labels,
    *,
    title: str,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap=None,
    cell: int = 22,
    alt: str | None = None,
    levels: int | None = None,
) -> str:
    """A matrix as coloured cells (rows = queries, columns = keys), labels on both axes
    (``row_labels=None`` leaves the rows unlabelled), and a colour scale under it (for a
    boolean matrix, a mask, the legend of its two colours).

    The SVG sits in a ``<div class="explorer-heatmap">`` that holds the cells' values
    (``data-values``, :func:`_cell_values`) and the geometry of the grid, from which the
    page's script (``_ext/static/reader.js``) shows the value of the cell under the
    pointer, or of the cell chosen with the arrow keys when the map has the keyboard
    focus. The text alternative names each row's largest cells (:func:`heatmap_alt`)
    unless ``alt`` is given.

    ``levels`` (an int from 1 to 255, for a matrix of numbers) colours each cell by its
    value rounded to one of ``levels + 1`` evenly spaced steps from ``vmin`` to
    ``vmax`` and stores the cells as a palette PNG of those steps' colours: with
    ``levels=100`` on a 0-1 scale, a cell has the colour of the two-decimal value that
    the page reads out for it, in about a third of the bytes of the default
    (every cell in its exact colour; also used for a mask, and for a matrix holding
    NaN). Raises ``ValueError`` if ``vmin >= vmax`` or ``levels`` is out of range.
    """
    from matplotlib import colormaps

    if not vmin < vmax:
        raise ValueError(f"vmin must be smaller than vmax; got {vmin} and {vmax}")
    alt = alt or heatmap_alt(matrix, row_labels, col_labels, title)
    raw = np.asarray(matrix)
    m = raw.astype(float)
    cmap = cmap or WEIGHT_CMAP
    cmap = colormaps[cmap] if isinstance(cmap, str) else cmap
    if levels is not None and not (
        isinstance(levels, (int, np.integer)) and 1 <= levels <= 255
    ):
        raise ValueError(f"levels must be an int from 1 to 255; got {levels!r}")
    cells = _cells_png(raw, vmin, vmax, cmap, levels)
    rows, cols = m.shape
    labelled = row_labels is not None and any(row_labels)
    row_labels = list(row_labels) if labelled else [""] * rows
    col_labels = list(col_labels)
    left = int(7 * max(len(str(t)) for t in row_labels)) + 8
    top = 22
    below = int(7 * max(len(str(t)) for t in col_labels)) + 8
    scale_y = top + rows * cell + below
    width = max(left + cols * cell + 10, int(6.8 * len(title)) + 8, left + 190)
    height = scale_y + 28
    parts = [
        _open(width, height, alt),
        _text(width / 2, 14, title, weight="bold"),
        f"<image x='{left}' y='{top}' width='{cols * cell}' height='{rows * cell}' "
        "preserveAspectRatio='none' style='image-rendering:pixelated' "
        f"href='data:image/png;base64,{cells}'/>",
        # the cell under the pointer or the keyboard focus, moved by the page's script
        f"<rect class='heatmap-mark' x='{left}' y='{top}' width='{cell}' "
        f"height='{cell}' fill='none' stroke='currentColor' stroke-width='2' "
        "visibility='hidden'/>",
    ]
    for i, label in enumerate(row_labels if labelled else ()):
        parts.append(
            _text(left - 4, top + (i + 0.5) * cell + 4, label, anchor="end", size=11)
        )
    for j, label in enumerate(col_labels):
        x, y0 = left + (j + 0.5) * cell + 4, top + rows * cell + 4
        parts.append(_text(x, y0, label, anchor="end", size=11, rotate=-90))
    if raw.dtype == bool:
        parts.append(_mask_legend(cmap, left, scale_y))
    else:
        parts.append(_colour_scale(cmap, vmin, vmax, left, scale_y, 180))
    parts.append("</svg>")
    names = "|".join(_one_line(t) for t in col_labels)
    row_names = "|".join(_one_line(t) for t in row_labels) if labelled else names
    data = (
        f"data-values='{_cell_values(raw)}' data-rows='{_esc(row_names)}' "
        f"data-cols='{_esc(names)}' data-grid='{left} {top} {cell} {width}' "
        f"data-kind='{'mask' if raw.dtype == bool else 'value'}'"
    )
    return (
        f"<div class='explorer-heatmap' tabindex='0' role='group' "
        f"aria-label='{_esc(_one_line(title))}: heat map; "
        "the arrow keys read its cells' "
        f"{data}>{''.join(parts)}</div>"
    )


def line_chart_alt(
    x,
    series: dict,
    title: str,
    *,
    xlabel: str,
    ylabel: str,
    mark_x=None,
    marked: dict | None = None,
) -> str:
    """The text alternative of :func:`line_chart`: its title, the range of x, and each
    line's values at both ends and at the marked x (``marked`` maps a series name to its
    exact value there; otherwise interpolated on the log-log axes)."""
    x = np.asarray(x, dtype=float)

    def at(y, where):
        return float(10 ** np.interp(np.log10(where), np.log10(x), np.log10(y)))

    def g(value):
        return (
            f"{value:,.0f}"
            if value >= 1000
            else f"{value:.4g}"
            if value >= 1
            else f"{value:.3g}"
        )

    text = [
        f"Line chart on log-log axes, {_one_line(title)}: {ylabel} against "
        f"{xlabel} from "
        f"{g(x[0])} to {g(x[-1])}"
    ]
    if mark_x is not None:
        text.append(f"a dashed line marks {xlabel} = {g(mark_x)}")
    points = sorted(
        {float(x[0]), float(x[-1])} | ({float(mark_x)} if mark_x else set())
    )
    for name, y in series.items():
        y = np.maximum(np.asarray(y, dtype=float), 1e-12)
        exact = dict(marked or {})

        def value(p):
            return (
                exact[name]
                if mark_x is not None and p == mark_x and name in exact
                else at(y, p)
            )

        text.append(
            f"{name}: " + ", ".join(f"{g(value(p))} {ylabel} at {g(p)}" for p in points)
        )
    return "; ".join(text) + "."


def line_chart(
    x,
    series: dict,
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    mark_x=None,
    marked: dict | None = None,
    width: int = 360,
    height: int = 220,
    alt: str | None = None,
) -> str:
    """Lines on log-log axes (decade ticks); ``series`` maps a legend name to y values.
    The text alternative gives each line's values (:func:`line_chart_alt`, with the
    exact values ``marked`` at ``mark_x``) unless ``alt`` is given."""
    x = _finite(x, "x")
    if not (x > 0).all():
        raise ValueError("x must be positive: the axes are logarithmic")
    alt = alt or line_chart_alt(
        x, series, title, xlabel=xlabel, ylabel=ylabel, mark_x=mark_x, marked=marked
    )
    x = np.log10(x)
    ys = {
        k: np.log10(np.maximum(_finite(v, f"series {k!r}"), 1e-12))
        for k, v in series.items()
    }
    all_y = np.concatenate(list(ys.values()))
    x_lo, x_hi = _span(np.floor(x.min()), np.ceil(x.max()))
    y_lo, y_hi = _span(np.floor(all_y.min()), np.ceil(all_y.max()))
    left, right, top, bottom = 48, 10, 22, 36
    pw, ph = width - left - right, height - top - bottom

    def px(a, b):
        return (
            left + pw * (a - x_lo) / (x_hi - x_lo),
            top + ph * (y_hi - b) / (y_hi - y_lo),
        )

    parts = [
        _open(width, height, alt),
        _text(width / 2, 14, title, weight="bold"),
        f"<rect x='{left}' y='{top}' width='{pw}' height='{ph}' fill='none' {AXIS}/>",
    ]
    y_step = max(1, int(np.ceil((y_hi - y_lo) / 6)))
    for e in np.arange(y_lo, y_hi + 1, y_step):
        _, yy = px(x_lo, e)
        parts.append(
            f"<line x1='{left}' x2='{left + pw}' y1='{yy:.1f}' y2='{yy:.1f}' {GRID}/>"
        )
        parts.append(_text(left - 3, yy + 4, f"1e{int(e)}", anchor="end", size=10))
    for e in np.arange(x_lo, x_hi + 1):
        xx, _ = px(e, y_lo)
        parts.append(_text(xx, top + ph + 12, f"1e{int(e)}", size=10))
    parts.append(_text(left + pw / 2, height - 4, xlabel, size=11))
    parts.append(_text(11, top + ph / 2, ylabel, size=11, rotate=-90))
    if mark_x is not None:
        xx, _ = px(np.log10(mark_x), y_lo)
        parts.append(
            f"<line x1='{xx:.1f}' x2='{xx:.1f}' y1='{top}' y2='{top + ph}' "
            f"{AXIS} stroke-dasharray='3,2'/>"
        )
    for s, (name, yv) in enumerate(ys.items()):
        points = " ".join(
            f"{a:.1f},{b:.1f}" for a, b in (px(p, q) for p, q in zip(x, yv))
        )
        dash = "" if s == 0 else " stroke-dasharray='6,3'"
        parts.append(
            f"<polyline points='{points}' fill='none' stroke='{OKABE_ITO[s]}' "
            f"stroke-width='2'{dash}/>"
        )
        parts.append(
            f"<line x1='{left + 8}' x2='{left + 26}' y1='{top + 12 + 13 * s}' "
            f"y2='{top + 12 + 13 * s}' stroke='{OKABE_ITO[s]}' stroke-width='2'{dash}/>"
        )
        parts.append(_text(left + 30, top + 16 + 13 * s, name, anchor="start", size=10))
    parts.append("</svg>")
    return "".join(parts)


def side_by_side(*svgs: str) -> str:
    """Drawings next to each other, one under the other in a column too narrow for
    both."""
    cells = "".join(f"<div>{s}</div>" for s in svgs)
    return (
        "<div class='explorer-drawings' style='display:flex;flex-wrap:wrap;gap:8px;"
        f"align-items:flex-start'>{cells}</div>"
    )
