"""Charts: one query's mixture of values as bars."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.heatmaps import _as_probabilities
from book_support.figures.style import OKABE_ITO, literal, literal_labels

__all__ = ["mixture_bars"]


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
        If ``weights`` has more than 2 axes, its last axis does not match ``labels``, or
        it holds values outside [0, 1], NaN or inf.
    TypeError
        If ``weights`` is not numeric.

    Source: the weighted mixture of values, Vaswani et al. (2017), section 3.2.
    """
    w = _as_probabilities(weights, "mixture weights")
    if w.ndim == 1:
        w = w[None, :]
    if w.ndim != 2 or w.shape[1] != len(labels):
        raise ValueError(
            f"weights of shape {np.shape(weights)} do not match {len(labels)} labels "
            "(expected shape (L_k,) or (n_mixtures, L_k) with L_k labels)"
        )
    if ax is None:
        fig, ax = plt.subplots(figsize=(6.0, 3.0), layout="constrained")
    else:
        fig = ax.figure
    n = w.shape[0]
    width = 0.8 / n
    x = np.arange(w.shape[1])
    for m in range(n):
        bars = ax.bar(
            x + (m - (n - 1) / 2) * width,
            w[m],
            width,
            color=OKABE_ITO[m % len(OKABE_ITO)],
            label=f"head {m + 1}" if n > 1 else None,
        )
        ax.bar_label(bars, fmt="%.3f", fontsize=8)
    ax.set_xticks(x, labels=literal_labels(labels))
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("attention weight")
    if n > 1:
        ax.legend(frameon=False)
    if title:
        ax.set_title(literal(title))
    return fig
