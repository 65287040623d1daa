"""Charts: one query's mixture of values as bars, and accuracy against length."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from attnlib.figures.heatmaps import _as_probabilities
from attnlib.figures.style import OKABE_ITO, literal, literal_labels

__all__ = ["mixture_bars", "length_curve"]


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
    matplotlib.figure.Figure with two panels: token accuracy and sentence accuracy (in
    %).

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
                raise ValueError(
                    f"{name!r} {what} accuracy must be {x.shape} values in [0, 1]; "
                    f"got {y}"
                )
            ax.plot(
                x,
                100 * y,
                marker=markers[k % 4],
                color=OKABE_ITO[(0, 5, 2, 3)[k % 4]],
                label=literal(name),
            )
    if chance is not None:
        axes[0].axhline(100 * chance, ls=":", color=OKABE_ITO[7], label="guessing")
    for ax, what in zip(
        axes, ("words translated correctly (%)", "sentences entirely correct (%)")
    ):
        ax.set_xlabel("source sentence length (words)")
        ax.set_ylabel(what)
        ax.set_ylim(-3, 103)
        ax.set_xticks(x)
    axes[0].legend(frameon=False, loc="center right")
    return fig
