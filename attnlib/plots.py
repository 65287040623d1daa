"""Figures: attention heatmaps, mixture bar charts and mask (access) maps.

Every helper returns the matplotlib ``Figure`` and leaves showing it to the caller. Every
label and title is drawn exactly as typed (:func:`literal`: a ``$`` never starts
mathematics).
Probabilities are drawn on a fixed 0-1 colour scale with the colour-blind-safe
``viridis`` map, so two heatmaps can be compared by colour. Inputs are checked: weights
must be finite numbers in [0, 1] (a boolean array is a mask, refused as weights), labels
must match the axes, masks must be boolean.

* ``use_book_style()``                     fixed figure size, dpi, fonts and colours
* ``attention_heatmap(weights, queries, keys)``  one panel per (batch, head)
* ``mixture_bars(weights, labels)``        one query's weights as bars (several mixtures grouped)
* ``access_map(mask, tokens)``             which keys each query may attend
* ``data_flow_diagram(tokens)``            one head's path: tokens, X, Q/K/V, scores, weights, output
* ``layer_head_grids(panels, titles)``     one (layers x heads) grid per measured quantity
* ``length_curve(lengths, curves)``       accuracy against sentence length (trained models)
* ``alignment_heatmaps(panels)``           trained attention weights with the true alignment
* ``layer_flow_diagram(kind)``            one Transformer layer's data flow, with shapes

Colours: viridis (Smith & van der Walt, 2015) and the Okabe-Ito palette (Okabe & Ito, 2008),
both readable with the common colour-vision deficiencies.
"""
from __future__ import annotations

import matplotlib

import matplotlib.pyplot as plt
import numpy as np

from ._validation import as_bool_mask

#: Colour map for weights (perceptually uniform, colour-blind safe).
WEIGHT_CMAP = "viridis"
#: Two colours distinguishable under the common colour-vision deficiencies (Okabe-Ito).
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000")
#: Figure resolution used everywhere in the book (PNG, fixed size and dpi).
DPI = 100


def use_book_style() -> None:
    """Fix figure size (6 x 3.5 in), dpi (100), font size and the Okabe-Ito colour cycle.

    Call once at the top of a notebook so every chapter draws identical PNGs. Returns None.
    """
    plt.rcParams.update({
        "figure.figsize": (6.0, 3.5),
        "figure.dpi": DPI,
        "savefig.dpi": DPI,
        "font.size": 10,
        "axes.prop_cycle": matplotlib.cycler(color=OKABE_ITO),
        "svg.hashsalt": "attention-executable",
    })


def literal(text) -> str:
    """``text`` as a string that matplotlib draws exactly as typed, never as mathematics.

    matplotlib reads a text with two unescaped dollar signs as mathtext: ``"$x$"`` is drawn
    as an italic x and ``"Ba$$in"`` raises ``ValueError`` when the figure is drawn. Every
    dollar sign is escaped (``\\$``), which matplotlib draws as ``$``; nothing else is
    changed. Every label and title that the plots and the explorers draw goes through here.
    Non-strings (numbers used as tick labels) are converted with ``str``.

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
    None. Returns: a list of n ``str``. Raises: ``TypeError`` if ``labels`` is not iterable.

    Source: matplotlib (2024), "Writing mathematical expressions" (see :func:`literal`).
    """
    return None if labels is None else [literal(label) for label in labels]


def _as_probabilities(weights, what: str) -> np.ndarray:
    """``weights`` as a float array of finite numbers in [0, 1]; ``TypeError``/``ValueError`` otherwise.

    Booleans are refused, as everywhere in attnlib: a boolean array is a mask (draw it with
    :func:`access_map`), not weights.
    """
    w = np.asarray(weights)
    if w.dtype.kind == "b":
        raise TypeError(f"{what} must be real numbers, not a boolean mask (dtype bool); "
                        "draw a mask with access_map")
    if w.dtype.kind not in "fiu":
        raise TypeError(f"{what} must be real numbers; got dtype {w.dtype}")
    w = w.astype(float)
    if not np.isfinite(w).all():
        raise ValueError(f"{what} hold NaN or inf")
    if w.size and (w.min() < -1e-6 or w.max() > 1 + 1e-6):
        raise ValueError(f"{what} must be probabilities in [0, 1] (this plot uses a fixed 0-1 "
                         f"scale); got values from {w.min():g} to {w.max():g}. "
                         "Apply attnlib.softmax to scores first.")
    return w


def _check_labels(labels, n: int, what: str) -> None:
    if labels is not None and len(labels) != n:
        raise ValueError(f"{len(labels)} {what} labels given for {n} {what}s")


def _as_panels(weights) -> tuple[np.ndarray, tuple]:
    w = _as_probabilities(weights, "attention weights")
    if w.ndim == 2:
        w = w[None, None]
    if w.ndim != 4:
        raise ValueError("attention_heatmap expects weights of shape (L_q, L_k) or "
                         f"(B, H, L_q, L_k); got shape {w.shape}")
    return w, w.shape


def attention_heatmap(weights, queries=None, keys=None, *, titles=None, annotate: bool | None = None,
                      panel_size: float = 2.6, cmap: str = WEIGHT_CMAP):
    """Heatmap(s) of attention weights on a fixed 0-1 colour scale.

    Parameters
    ----------
    weights : array_like, shape (L_q, L_k) or (B, H, L_q, L_k)
        A 2-D input is promoted to one panel; a 4-D input gives ``B * H`` panels (one per
        batch element and head). Any other rank raises ``ValueError``.
    queries, keys : sequence of str, optional
        Labels for the rows (queries) and columns (keys).
    titles : sequence of str, optional
        One title per panel; default "batch b, head h" when there is more than one panel.
    annotate : bool, optional
        Write each weight in its cell; default when the map has at most 12 x 12 cells.

    Returns
    -------
    matplotlib.figure.Figure
        One image axis per panel, each with colour limits (0, 1) whatever the data, and a
        colour bar. Unused grid cells are hidden.

    Raises
    ------
    ValueError
        If ``weights`` is not 2-D or 4-D (3-D is ambiguous: batch or heads?), holds values
        outside [0, 1], NaN or inf, or has no panel; or the labels or titles do not match.
    TypeError
        If ``weights`` is not numeric.

    Source: the heatmap presentation of Bahdanau et al. (2015), figure 3, and Vaswani et al.
    (2017), figures 3-5.
    """
    w, (B, H, Lq, Lk) = _as_panels(weights)
    n = B * H
    if n == 0:
        raise ValueError(f"attention weights of shape {w.shape} give no panel to draw")
    _check_labels(queries, Lq, "query")
    _check_labels(keys, Lk, "key")
    if titles is not None and len(titles) != n:
        raise ValueError(f"{len(titles)} titles given for {n} panels")
    cols = min(n, 4)
    rows = -(-n // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(panel_size * cols + 0.8, panel_size * rows),
                             squeeze=False, layout="constrained")
    if annotate is None:
        annotate = Lq <= 12 and Lk <= 12
    image = None
    for p, ax in enumerate(axes.flat):
        if p >= n:
            ax.set_visible(False)
            continue
        b, h = divmod(p, H)
        image = ax.imshow(w[b, h], vmin=0.0, vmax=1.0, cmap=cmap, aspect="auto")
        ax.set_xticks(range(Lk), labels=literal_labels(keys if keys is not None else range(Lk)),
                      rotation=90 if keys is not None else 0)
        ax.set_yticks(range(Lq),
                      labels=literal_labels(queries if queries is not None else range(Lq)))
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        if titles is not None:
            ax.set_title(literal(titles[p]))
        elif n > 1:
            ax.set_title(f"batch {b}, head {h}")
        if annotate:
            for i in range(Lq):
                for j in range(Lk):
                    ax.text(j, i, f"{w[b, h, i, j]:.2f}", ha="center", va="center",
                            color="black" if w[b, h, i, j] > 0.6 else "white", fontsize=8)
    fig.colorbar(image, ax=axes, label="attention weight", shrink=0.8)
    return fig


def mixture_bars(weights, labels, *, title: str | None = None, ax=None):
    """Bar chart of one query's attention weights (a mixture that sums to one).

    Parameters
    ----------
    weights : array_like, shape (L_k,) or (n_mixtures, L_k)
        One or several mixtures (e.g. one per head), drawn as grouped bars.
    labels : sequence of str, length L_k

    title : str, optional
    ax : matplotlib Axes, optional; draw into it instead of a new figure

    Returns
    -------
    matplotlib.figure.Figure (the figure of ``ax`` if one is given)

    Raises
    ------
    ValueError
        If ``weights`` has more than 2 axes, its last axis does not match ``labels``, or it
        holds values outside [0, 1], NaN or inf.
    TypeError
        If ``weights`` is not numeric.

    Source: the weighted mixture of values, Vaswani et al. (2017), section 3.2.
    """
    w = _as_probabilities(weights, "mixture weights")
    if w.ndim == 1:
        w = w[None, :]
    if w.ndim != 2 or w.shape[1] != len(labels):
        raise ValueError(f"weights of shape {np.shape(weights)} do not match {len(labels)} labels "
                         "(expected shape (L_k,) or (n_mixtures, L_k) with L_k labels)")
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 3.0), layout="constrained")
    else:
        fig = ax.figure
    n = w.shape[0]
    width = 0.8 / n
    x = np.arange(w.shape[1])
    for m in range(n):
        bars = ax.bar(x + (m - (n - 1) / 2) * width, w[m], width, color=OKABE_ITO[m % len(OKABE_ITO)],
                      label=f"head {m + 1}" if n > 1 else None)
        ax.bar_label(bars, fmt="%.3f", fontsize=8)
    ax.set_xticks(x, labels=literal_labels(labels))
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("attention weight")
    if n > 1:
        ax.legend(frameon=False)
    if title:
        ax.set_title(literal(title))
    return fig


def access_map(mask, tokens, *, title: str | None = None, ax=None):
    """Which keys each query may attend: a grid of allowed (dark) and blocked (light) cells.

    Parameters
    ----------
    mask : array_like of bool, shape (L_q, L_k); ``True`` = may attend
    tokens : sequence of str, labels for the keys (and the queries when ``L_q == L_k``),
        or a pair ``(query_tokens, key_tokens)``.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError if the mask is not boolean; ValueError if it is not 2-D or the labels do not fit.

    Source: the masks of Vaswani et al. (2017), section 3.2.3; see :mod:`attnlib.masks`.
    """
    m = as_bool_mask(mask)
    if m.ndim != 2:
        raise ValueError(f"access_map expects a mask of shape (L_q, L_k); got {m.shape}")
    if len(tokens) == 2 and not isinstance(tokens[0], str):
        q_tokens, k_tokens = tokens
    else:
        q_tokens = k_tokens = tokens
    if (len(q_tokens), len(k_tokens)) != m.shape:
        raise ValueError(f"mask of shape {m.shape} does not match {len(q_tokens)} query and "
                         f"{len(k_tokens)} key labels")
    if ax is None:
        fig, ax = plt.subplots(figsize=(0.45 * m.shape[1] + 1.6, 0.45 * m.shape[0] + 1.2),
                               layout="constrained")
    else:
        fig = ax.figure
    ax.imshow(m.astype(float), vmin=0, vmax=1, cmap="Greys", aspect="equal")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(j, i, "✓" if m[i, j] else "·", ha="center", va="center",
                    color="white" if m[i, j] else "black", fontsize=9)
    ax.set_xticks(range(m.shape[1]), labels=literal_labels(k_tokens), rotation=90)
    ax.set_yticks(range(m.shape[0]), labels=literal_labels(q_tokens))
    ax.set_xlabel("key (may be attended)")
    ax.set_ylabel("query")
    if title:
        ax.set_title(literal(title))
    return fig


def data_flow_diagram(tokens=("fisherman", "net", "bank"), *, d: int = 4, d_k: int = 2,
                      d_v: int = 2):
    """The path of one attention head: tokens -> X -> Q, K, V -> scores -> weights -> output.

    Every matrix is drawn as a grid with its real shape (one row per position), so the figure
    shows which sizes change at each step: the scores and the weights are ``n x n``, the
    output has the values' width ``d_v``.

    Parameters
    ----------
    tokens : sequence of str, length n >= 1
        Labels of the positions (the rows of X).
    d, d_k, d_v : int, keyword-only, each between 1 and 8
        Width of the inputs, of queries and keys, and of values.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``tokens`` is not a sequence of str, or a width is not an int.
    ValueError
        If there are no tokens or more than 8, or a width is outside 1..8.

    Source: scaled dot-product attention with learned projections, Vaswani et al. (2017),
    sections 3.2.1 and 3.2.2.
    """
    from matplotlib.patches import FancyArrowPatch, Rectangle

    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise TypeError("tokens must be a sequence of str, one per position")
    n = len(tokens)
    if not 1 <= n <= 8:
        raise ValueError(f"data_flow_diagram draws 1 to 8 tokens; got {n}")
    for name, value in (("d", d), ("d_k", d_k), ("d_v", d_v)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int; got {type(value).__name__}")
        if not 1 <= value <= 8:
            raise ValueError(f"{name} must be between 1 and 8; got {value}")

    cell = 0.32
    fig, ax = plt.subplots(figsize=(9.6, 3.9), layout="constrained")
    ax.set_axis_off()

    def grid(x, y_top, rows, cols, colour, title, shape):
        # A matrix as a grid of cells, its top-left corner at (x, y_top).
        for i in range(rows):
            for j in range(cols):
                ax.add_patch(Rectangle((x + j * cell, y_top - (i + 1) * cell), cell, cell,
                                       facecolor=colour, edgecolor="white", linewidth=1.2))
        centre = x + cols * cell / 2
        ax.text(centre, y_top + 0.12, title, ha="center", va="bottom", fontsize=9)
        ax.text(centre, y_top - rows * cell - 0.1, shape, ha="center", va="top", fontsize=8,
                color="#444444")
        return (x, y_top, x + cols * cell, y_top - rows * cell)

    def arrow(start, end, text=None):
        ax.add_patch(FancyArrowPatch(start, end, arrowstyle="->", mutation_scale=12,
                                     linewidth=1.0, color="black"))
        if text:
            ax.text((start[0] + end[0]) / 2, (start[1] + end[1]) / 2 + 0.1, text,
                    ha="center", va="bottom", fontsize=8)

    height = n * cell
    mid = 0.0
    # tokens, as a column of labels
    for i, token in enumerate(tokens):
        ax.text(0.0, mid + height / 2 - (i + 0.5) * cell, token, ha="left", va="center",
                fontsize=9, parse_math=False)
    ax.text(0.0, mid + height / 2 + 0.12, "tokens", ha="left", va="bottom", fontsize=9)
    x_in = 2.15
    bx = grid(x_in, mid + height / 2, n, d, "#bbbbbb", "inputs $X$", f"({n}, d={d})")
    arrow((1.4, mid), (x_in - 0.05, mid), "embed")
    # Q, K, V stacked
    x_p = bx[2] + 1.3
    gap = height + 0.75
    boxes = {}
    for k, (name, width, colour) in enumerate((("Q", d_k, OKABE_ITO[4]), ("K", d_k, OKABE_ITO[1]),
                                               ("V", d_v, OKABE_ITO[2]))):
        y_top = mid + height / 2 + gap * (1 - k)
        wname = {"Q": "d_k", "K": "d_k", "V": "d_v"}[name]
        boxes[name] = grid(x_p, y_top, n, width, colour, f"${name} = X W_{name}$",
                           f"({n}, {wname}={width})")
        arrow((bx[2] + 0.05, mid), (x_p - 0.05, y_top - height / 2))
    # scores and weights
    x_s = x_p + max(d_k, d_v) * cell + 1.5
    y_s = mid + height / 2 + gap / 2
    sb = grid(x_s, y_s, n, n, "#dddddd", r"scores $QK^{\top}/\sqrt{d_k}$", f"({n}, {n})")
    for name in ("Q", "K"):
        b = boxes[name]
        arrow((b[2] + 0.05, (b[1] + b[3]) / 2), (x_s - 0.05, y_s - height / 2))
    x_a = sb[2] + 1.4
    ab = grid(x_a, y_s, n, n, OKABE_ITO[3], "weights $A$", f"({n}, {n}), rows sum to 1")
    arrow((sb[2] + 0.05, y_s - height / 2), (x_a - 0.05, y_s - height / 2), "softmax")
    # output
    x_z = ab[2] + 1.4
    y_z = mid + height / 2 - gap / 2
    grid(x_z, y_z, n, d_v, OKABE_ITO[2], "output $Z = AV$", f"({n}, d_v={d_v})")
    arrow((ab[2] + 0.05, y_s - height / 2), (x_z - 0.05, y_z - height / 2))
    vb = boxes["V"]
    arrow((vb[2] + 0.05, (vb[1] + vb[3]) / 2), (x_z - 0.05, y_z - height / 2 - 0.05))
    ax.set_xlim(-0.1, x_z + d_v * cell + 0.9)
    ax.set_ylim(mid - height / 2 - gap - 0.55, mid + height / 2 + gap + 0.5)
    ax.set_aspect("equal")
    return fig


def layer_head_grids(panels, titles, *, vmin: float, vmax: float, cmap: str, label: str):
    """One (layers x heads) grid per panel, sharing one colour scale and one colour bar.

    Used for quantities measured once per head of a model, such as the weight one token puts
    on another in every head, or the effect of removing each head.

    Parameters
    ----------
    panels : sequence of array_like, each of shape (n_layers, n_heads), all the same shape
    titles : sequence of str, one per panel
    vmin, vmax : float, keyword-only; the shared colour limits (vmin < vmax)
    cmap : str, keyword-only; a matplotlib colour map name
    label : str, keyword-only; the colour bar's label

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    ValueError
        If there are no panels, the titles do not match, a panel is not 2-D or shapes differ,
        a value is NaN or infinite, or ``vmin >= vmax``.

    Source: one value per (layer, head), as in the head-by-head analyses of Clark et al.
    (2019) and the norm-based view of Kobayashi et al. (2020).
    """
    arrays = [np.asarray(p, dtype=np.float64) for p in panels]
    if not arrays or len(arrays) != len(titles):
        raise ValueError(f"need one title per panel; got {len(arrays)} panels and "
                         f"{len(titles)} titles")
    shape = arrays[0].shape
    if len(shape) != 2 or any(a.shape != shape for a in arrays):
        raise ValueError("every panel must be a 2-D (layers, heads) array of the same shape; "
                         f"got {[a.shape for a in arrays]}")
    if not all(np.isfinite(a).all() for a in arrays):
        raise ValueError("panels must not contain NaN or infinite values")
    if not vmin < vmax:
        raise ValueError(f"vmin must be smaller than vmax; got {vmin} and {vmax}")
    n_layers, n_heads = shape
    fig, axes = plt.subplots(1, len(arrays), figsize=(4.2 * len(arrays) + 0.8, 2.9),
                             squeeze=False, layout="constrained")
    for ax, values, title in zip(axes[0], arrays, titles):
        image = ax.imshow(values, vmin=vmin, vmax=vmax, cmap=cmap, aspect="auto")
        ax.set_xticks(range(n_heads))
        ax.set_yticks(range(n_layers))
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_title(title, fontsize=9)
    fig.colorbar(image, ax=axes, label=label, shrink=0.9)
    return fig


def length_curve(lengths, curves: dict, *, chance: float | None = None):
    """Accuracy against source length for several models, in the manner of Bahdanau,
    Cho & Bengio (2015), Figure 2 (there: BLEU against sentence length).

    Parameters
    ----------
    lengths : sequence of int, the source lengths (x axis), shape (n,)
    curves : dict, model name -> dict with "token" and "sentence" accuracies in [0, 1],
        each of shape (n,). Drawn in the Okabe-Ito colours, one marker per model.
    chance : float, optional -- token accuracy of guessing, drawn as a dotted line

    Returns
    -------
    matplotlib.figure.Figure with two panels: token accuracy and sentence accuracy (in %).

    Raises
    ------
    ValueError
        If an accuracy curve does not have one value per length or leaves [0, 1].

    Source: the presentation of Bahdanau, Cho & Bengio (2015), Figure 2.
    """
    x = np.asarray(lengths)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 3.4), layout="constrained")
    markers = ("o", "s", "^", "D")
    for k, (name, acc) in enumerate(curves.items()):
        for ax, what in zip(axes, ("token", "sentence")):
            y = np.asarray(acc[what], dtype=float)
            if y.shape != x.shape or not ((0 <= y) & (y <= 1)).all():
                raise ValueError(f"{name!r} {what} accuracy must be {x.shape} values in [0, 1]; "
                                 f"got {y}")
            ax.plot(x, 100 * y, marker=markers[k % 4], color=OKABE_ITO[(0, 5, 2, 3)[k % 4]],
                    label=name)
    if chance is not None:
        axes[0].axhline(100 * chance, ls=":", color=OKABE_ITO[7], label="guessing")
    for ax, what in zip(axes, ("words translated correctly (%)",
                               "sentences entirely correct (%)")):
        ax.set_xlabel("source sentence length (words)")
        ax.set_ylabel(what)
        ax.set_ylim(-3, 103)
        ax.set_xticks(x)
    axes[0].legend(frameon=False, loc="center right")
    return fig


def alignment_heatmaps(panels, *, panel_height: float = 3.6):
    """Trained attention weights of whole sentences, one panel per sentence, with the
    correct alignment marked (Bahdanau, Cho & Bengio 2015, Figure 3).

    Parameters
    ----------
    panels : sequence of dicts with keys
        "weights" of shape (L_target, L_source), in [0, 1], rows: target words, columns:
        source words;
        "source", "target": word labels; optional "alignment" (L_target,) int: the source
        position each target word translates, marked with a red-orange ring;
        optional "title".

    Returns
    -------
    matplotlib.figure.Figure, panel widths proportional to the source lengths, colour
    scale fixed to 0-1 (viridis).

    Raises
    ------
    ValueError
        If a panel's weights are not 2-D probabilities or its labels do not fit.

    Source: the presentation of Bahdanau, Cho & Bengio (2015), Figure 3.
    """
    widths = [len(p["source"]) for p in panels]
    total = sum(widths)
    fig, axes = plt.subplots(1, len(panels), figsize=(0.26 * total + 1.8 * len(panels),
                                                      panel_height),
                             width_ratios=widths, squeeze=False, layout="constrained")
    image = None
    for ax, p in zip(axes[0], panels):
        w = _as_probabilities(p["weights"], "weights")
        if w.ndim != 2:
            raise ValueError(f"weights must be (L_target, L_source); got {w.shape}")
        _check_labels(p["target"], w.shape[0], "target")
        _check_labels(p["source"], w.shape[1], "source")
        image = ax.imshow(w, vmin=0.0, vmax=1.0, cmap=WEIGHT_CMAP, aspect="equal")
        if p.get("alignment") is not None:
            rows = np.arange(w.shape[0])
            ax.scatter(np.asarray(p["alignment"]), rows, s=60, facecolors="none",
                       edgecolors=OKABE_ITO[5], linewidths=1.2, label="correct alignment")
        ax.set_xticks(range(w.shape[1]), labels=p["source"], rotation=90)
        ax.set_yticks(range(w.shape[0]), labels=p["target"])
        ax.set_xlabel("source word (key)")
        ax.set_ylabel("target word being written (query)")
        if p.get("title"):
            ax.set_title(p["title"])
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="attention weight")
    return fig


def layer_flow_diagram(kind: str = "encoder", *, L: int = 8, d_model: int = 384, heads: int = 12,
                       d_ff: int = 1536, L_source: int | None = None):
    """The data flow through one Transformer layer, every box labelled with its output shape.

    Boxes run bottom to top: the input, the attention sub-layer(s), the feed-forward network,
    each followed by "add & norm" (residual connection, then layer normalisation); the
    residual paths are drawn as arrows that bypass the sub-layer.

    Parameters
    ----------
    kind : "encoder" or "decoder" (causal self-attention, then cross-attention to the encoder)
    L, d_model, heads, d_ff : int, the sizes written into the labels
    L_source : int, the encoder's length for the decoder's cross-attention (default ``L``)

    Returns
    -------
    matplotlib.figure.Figure, 4.6 x 7.6 in (encoder) or 4.6 x 10 in (decoder)

    Raises
    ------
    ValueError for an unknown ``kind``.

    Source: Vaswani et al. (2017), figure 1 and sections 3.1-3.3.
    """
    if kind not in ("encoder", "decoder"):
        raise ValueError(f"kind must be 'encoder' or 'decoder'; got {kind!r}")
    Ls = L if L_source is None else L_source
    dh = d_model // heads
    if kind == "encoder":
        blocks = [("input X", f"({L}, {d_model})", "0.92"),
                  ("multi-head self-attention",
                   f"{heads} heads: Q, K, V ({heads}, {L}, {dh}); weights ({heads}, {L}, {L})",
                   OKABE_ITO[4]),
                  ("add & layer norm", f"H = LN(X + A)  ({L}, {d_model})", OKABE_ITO[6]),
                  ("feed-forward, GELU", f"({L}, {d_ff}) inside, F ({L}, {d_model})", OKABE_ITO[1]),
                  ("add & layer norm", f"Y = LN(H + F)  ({L}, {d_model})", OKABE_ITO[6])]
    else:
        blocks = [("decoder input", f"({L}, {d_model})", "0.92"),
                  ("causal self-attention", f"weights ({heads}, {L}, {L}), zero above the diagonal",
                   OKABE_ITO[4]),
                  ("add & layer norm", f"H1  ({L}, {d_model})", OKABE_ITO[6]),
                  ("cross-attention", f"Q from H1, K and V from the encoder ({Ls}, {d_model});"
                   f" weights ({heads}, {L}, {Ls})", OKABE_ITO[3]),
                  ("add & layer norm", f"H2  ({L}, {d_model})", OKABE_ITO[6]),
                  ("feed-forward", f"({L}, {d_ff}) inside, ({L}, {d_model}) out", OKABE_ITO[1]),
                  ("add & layer norm", f"output  ({L}, {d_model})", OKABE_ITO[6])]
    n = len(blocks)
    fig, ax = plt.subplots(figsize=(5.6, 1.25 * n + 1.2), layout="constrained")
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.6, 1.5 * n)
    ax.axis("off")
    ys = [1.5 * i for i in range(n)]
    for (title, shape, colour), y in zip(blocks, ys):
        ax.add_patch(matplotlib.patches.FancyBboxPatch((1.2, y), 6.6, 0.95,
                                                       boxstyle="round,pad=0.05",
                                                       facecolor=colour, edgecolor="black",
                                                       alpha=0.9 if colour != "0.92" else 1.0))
        ax.text(4.5, y + 0.62, title, ha="center", va="center", fontsize=10, weight="bold")
        ax.text(4.5, y + 0.25, shape, ha="center", va="center", fontsize=7.5)
    for a, b in zip(ys, ys[1:]):
        ax.annotate("", xy=(4.5, b - 0.02), xytext=(4.5, a + 1.0),
                    arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 1.3})
    # residual paths: from the input of each sub-layer around it into the add & norm box
    adds = [i for i, (title, _, _) in enumerate(blocks) if title.startswith("add")]
    for k, i in enumerate(adds):
        start, end = ys[i - 2] + 0.35, ys[i] + 0.6
        x_bar = 8.3 + 0.7 * (k % 2)                  # alternate, so two paths never overlap
        ax.plot([7.85, x_bar, x_bar], [start, start, end], color=OKABE_ITO[5], lw=1.6)
        ax.annotate("", xy=(7.85, end), xytext=(x_bar, end),
                    arrowprops={"arrowstyle": "-|>", "color": OKABE_ITO[5], "lw": 1.6})
        ax.text(x_bar + 0.25, (start + end) / 2, "residual", rotation=90, va="center",
                ha="center", fontsize=8, color=OKABE_ITO[5])
    if kind == "decoder":
        y = ys[3] + 0.5
        ax.annotate("", xy=(1.15, y), xytext=(0.1, y),
                    arrowprops={"arrowstyle": "-|>", "color": OKABE_ITO[3], "lw": 1.6})
        ax.text(0.05, y + 0.2, "encoder\noutput", fontsize=7.5, color="black", ha="left",
                va="bottom")
    return fig
