"""Heat maps: attention weights, mask (access) maps, grids of layers and heads,
   alignments.

Probabilities are drawn on a fixed 0-1 colour scale with the colour-blind-safe
``viridis`` map, so two heat maps can be compared by colour. Weights must be finite
numbers in [0, 1] (a boolean array is a mask, refused as weights); labels must match the
axes.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from attnlib.core._validation import as_bool_mask
from book_support.figures.style import OKABE_ITO, WEIGHT_CMAP, literal, literal_labels

__all__ = ["attention_heatmap", "access_map", "layer_head_grids", "alignment_heatmaps"]


def _as_probabilities(weights, what: str) -> np.ndarray:
    """``weights`` as a float array of finite numbers in [0, 1];
       ``TypeError``/``ValueError`` otherwise.

    Booleans are refused, as everywhere in attnlib: a boolean array is a mask (draw it
    with :func:`access_map`), not weights.
    """
    w = np.asarray(weights)
    if w.dtype.kind == "b":
        raise TypeError(
            f"{what} must be real numbers, not a boolean mask (dtype bool); "
            "draw a mask with access_map"
        )
    if w.dtype.kind not in "fiu":
        raise TypeError(f"{what} must be real numbers; got dtype {w.dtype}")
    w = w.astype(float)
    if not np.isfinite(w).all():
        raise ValueError(f"{what} hold NaN or inf")
    if w.size and (w.min() < -1e-6 or w.max() > 1 + 1e-6):
        raise ValueError(
            f"{what} must be probabilities in [0, 1] (this plot uses a fixed 0-1 "
            f"scale); got values from {w.min():g} to {w.max():g}. "
            "Apply attnlib.softmax to scores first."
        )
    return w


def _check_labels(labels, n: int, what: str) -> None:
    if labels is not None and len(labels) != n:
        raise ValueError(f"{len(labels)} {what} labels given for {n} {what}s")


def _as_panels(weights) -> tuple[np.ndarray, tuple]:
    w = _as_probabilities(weights, "attention weights")
    if w.ndim == 2:
        w = w[None, None]
    if w.ndim != 4:
        raise ValueError(
            "attention_heatmap expects weights of shape (L_q, L_k) or "
            f"(B, H, L_q, L_k); got shape {w.shape}"
        )
    return w, w.shape


def attention_heatmap(
    weights,
    queries=None,
    keys=None,
    *,
    titles=None,
    annotate: bool | None = None,
    panel_size: float = 2.6,
    cmap: str = WEIGHT_CMAP,
    colorbar_label: str = "attention weight",
):
    """Heatmap(s) of attention weights on a fixed 0-1 colour scale.

    Parameters
    ----------
    weights : array_like, shape (L_q, L_k) or (B, H, L_q, L_k)
        A 2-D input is promoted to one panel; a 4-D input gives ``B * H`` panels (one
        per batch element and head). Any other rank raises ``ValueError``.
    queries, keys : sequence of str, optional
        Labels for the rows (queries) and columns (keys).
    titles : sequence of str, optional
        One title per panel; default "batch b, head h" when there is more than one
        panel.
    annotate : bool, optional
        Write each weight in its cell; default when the map has at most 12 x 12 cells.
    colorbar_label : str, default "attention weight"
        The label of the colour bar, for panels that show other shares of one (e.g.
        row shares of ``||alpha f(x)||`` next to the weights).

    Returns
    -------
    matplotlib.figure.Figure
        One image axis per panel, each with colour limits (0, 1) whatever the data, and
        a colour bar. Unused grid cells are hidden.

    Raises
    ------
    ValueError
        If ``weights`` is not 2-D or 4-D (3-D is ambiguous: batch or heads?), holds
        values outside [0, 1], NaN or inf, or has no panel; or the labels or titles do
        not match.
    TypeError
        If ``weights`` is not numeric.

    Source: the heatmap presentation of Bahdanau et al. (2015), figure 3, and Vaswani et
    al. (2017), figures 3-5.
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
    fig, axes = plt.subplots(
        rows,
        cols,
        figsize=(panel_size * cols + 0.8, panel_size * rows),
        squeeze=False,
        layout="constrained",
    )
    if annotate is None:
        annotate = Lq <= 12 and Lk <= 12
    image = None
    for p, ax in enumerate(axes.flat):
        if p >= n:
            ax.set_visible(False)
            continue
        b, h = divmod(p, H)
        image = ax.imshow(w[b, h], vmin=0.0, vmax=1.0, cmap=cmap, aspect="auto")
        ax.set_xticks(
            range(Lk),
            labels=literal_labels(keys if keys is not None else range(Lk)),
            rotation=90 if keys is not None else 0,
        )
        ax.set_yticks(
            range(Lq),
            labels=literal_labels(queries if queries is not None else range(Lq)),
        )
        ax.set_xlabel("key")
        ax.set_ylabel("query")
        if titles is not None:
            ax.set_title(literal(titles[p]))
        elif n > 1:
            ax.set_title(f"batch {b}, head {h}")
        if annotate:
            for i in range(Lq):
                for j in range(Lk):
                    ax.text(
                        j,
                        i,
                        f"{w[b, h, i, j]:.2f}",
                        ha="center",
                        va="center",
                        color="black" if w[b, h, i, j] > 0.6 else "white",
                        fontsize=8,
                    )
    fig.colorbar(image, ax=axes, label=literal(colorbar_label), shrink=0.8)
    return fig


def access_map(mask, tokens, *, title: str | None = None, ax=None):
    """Which keys each query may attend: a grid of allowed (dark) and blocked (light)
       cells.

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
    TypeError if the mask is not boolean; ValueError if it is not 2-D or the labels do
    not fit.

    Source: the masks of Vaswani et al. (2017), section 3.2.3; see
    :mod:`attnlib.core.masks`.
    """
    m = as_bool_mask(mask)
    if m.ndim != 2:
        raise ValueError(
            f"access_map expects a mask of shape (L_q, L_k); got {m.shape}"
        )
    if len(tokens) == 2 and not isinstance(tokens[0], str):
        q_tokens, k_tokens = tokens
    else:
        q_tokens = k_tokens = tokens
    if (len(q_tokens), len(k_tokens)) != m.shape:
        raise ValueError(
            f"mask of shape {m.shape} does not match {len(q_tokens)} query and "
            f"{len(k_tokens)} key labels"
        )
    if ax is None:
        fig, ax = plt.subplots(
            figsize=(0.45 * m.shape[1] + 1.6, 0.45 * m.shape[0] + 1.2),
            layout="constrained",
        )
    else:
        fig = ax.figure
    ax.imshow(m.astype(float), vmin=0, vmax=1, cmap="Greys", aspect="equal")
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(
                j,
                i,
                "✓" if m[i, j] else "·",
                ha="center",
                va="center",
                color="white" if m[i, j] else "black",
                fontsize=9,
            )
    ax.set_xticks(range(m.shape[1]), labels=literal_labels(k_tokens), rotation=90)
    ax.set_yticks(range(m.shape[0]), labels=literal_labels(q_tokens))
    ax.set_xlabel("key (may be attended)")
    ax.set_ylabel("query")
    if title:
        ax.set_title(literal(title))
    return fig


def layer_head_grids(
    panels, titles, *, vmin: float, vmax: float, cmap: str, label: str
):
    """One (layers x heads) grid per panel, sharing one colour scale and one colour bar.

    Used for quantities measured once per head of a model, such as the weight one token
    puts on another in every head, or the effect of removing each head.

    Parameters
    ----------
    panels : sequence of array_like, each of shape (n_layers, n_heads), all the same
        shape
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
        If there are no panels, the titles do not match, a panel is not 2-D or shapes
        differ, a value is NaN or infinite, or ``vmin >= vmax``.

    Source: one value per (layer, head), as in the head-by-head analyses of Clark et al.
    (2019) and the norm-based view of Kobayashi et al. (2020).
    """
    arrays = [np.asarray(p, dtype=np.float64) for p in panels]
    if not arrays or len(arrays) != len(titles):
        raise ValueError(
            f"need one title per panel; got {len(arrays)} panels and "
            f"{len(titles)} titles"
        )
    shape = arrays[0].shape
    if len(shape) != 2 or any(a.shape != shape for a in arrays):
        raise ValueError(
            "every panel must be a 2-D (layers, heads) array of the same shape; "
            f"got {[a.shape for a in arrays]}"
        )
    if not all(np.isfinite(a).all() for a in arrays):
        raise ValueError("panels must not contain NaN or infinite values")
    if not vmin < vmax or not np.isfinite(float(vmax) - float(vmin)):
        raise ValueError(
            f"vmin must be smaller than vmax, by a finite span; got {vmin} and {vmax}"
        )
    n_layers, n_heads = shape
    fig, axes = plt.subplots(
        1,
        len(arrays),
        figsize=(4.2 * len(arrays) + 0.8, 2.9),
        squeeze=False,
        layout="constrained",
    )
    for ax, values, title in zip(axes[0], arrays, titles):
        image = ax.imshow(values, vmin=vmin, vmax=vmax, cmap=cmap, aspect="auto")
        ax.set_xticks(range(n_heads))
        ax.set_yticks(range(n_layers))
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_title(literal(title), fontsize=9)
    fig.colorbar(image, ax=axes, label=literal(label), shrink=0.9)
    return fig


def alignment_heatmaps(panels, *, panel_height: float = 3.6):
    """Trained attention weights of whole sentences, one panel per sentence, with the
    correct alignment marked (Bahdanau, Cho & Bengio 2015, Figure 3).

    Parameters
    ----------
    panels : sequence of dicts with keys
        "weights" of shape (L_target, L_source), in [0, 1], rows: target words, columns:
        source words;
        "source", "target": word labels; optional "alignment" (L_target,) int: the
        source position each target word translates, marked with a red-orange ring;
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
    fig, axes = plt.subplots(
        1,
        len(panels),
        figsize=(0.26 * total + 1.8 * len(panels), panel_height),
        width_ratios=widths,
        squeeze=False,
        layout="constrained",
    )
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
            ax.scatter(
                np.asarray(p["alignment"]),
                rows,
                s=60,
                facecolors="none",
                edgecolors=OKABE_ITO[5],
                linewidths=1.2,
                label="correct alignment",
            )
        ax.set_xticks(
            range(w.shape[1]), labels=literal_labels(p["source"]), rotation=90
        )
        ax.set_yticks(range(w.shape[0]), labels=literal_labels(p["target"]))
        ax.set_xlabel("source word (key)")
        ax.set_ylabel("target word being written (query)")
        if p.get("title"):
            ax.set_title(literal(p["title"]))
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="attention weight")
    return fig
