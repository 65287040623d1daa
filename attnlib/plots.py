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
