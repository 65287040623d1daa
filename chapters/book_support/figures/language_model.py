"""Figures of the language-model chapters: loss curves, the cost of a generated token,
the phase change of the induction model, and the heads' scores.

Each function returns a matplotlib ``Figure`` of fixed size, in the Okabe-Ito colours,
with every label drawn as typed.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.style import OKABE_ITO, WEIGHT_CMAP, literal

__all__ = [
    "loss_curves",
    "token_cost_figure",
    "phase_change_figure",
    "head_scores_figure",
]


def _chance_line(ax, chance: float, right: float, label: str) -> None:
    """A thin horizontal line at the loss of a uniform guess, labelled at ``right``."""
    ax.axhline(chance, color="black", linewidth=0.6)
    ax.annotate(
        label,
        (right, chance),
        xytext=(0, 3),
        textcoords="offset points",
        ha="right",
        fontsize=9,
    )


def loss_curves(
    history: dict, *, title: str, chance: float | None = None
) -> plt.Figure:
    """Training and validation loss (nats per token) against the training step.

    ``history`` is a stored :class:`attnlib.models.lm_training.History` as a dict
    (``step``, ``train``, ``validation``, ``best_step``); the kept parameters' step is
    marked. ``chance`` draws the loss of a uniform guess, ``ln V``.
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    ax.plot(history["step"], history["train"], color=OKABE_ITO[0], label="training")
    ax.plot(
        history["step"],
        history["validation"],
        color=OKABE_ITO[1],
        linestyle="--",
        label="validation",
    )
    ax.axvline(history["best_step"], color="grey", linewidth=0.8, linestyle=":")
    ax.annotate(
        f"kept: step {history['best_step']:,}",
        (history["best_step"], max(history["validation"])),
        xytext=(-4, -2),
        textcoords="offset points",
        ha="right",
        va="top",
        fontsize=9,
    )
    if chance is not None:
        _chance_line(ax, chance, history["step"][-1], "uniform guess, ln V")
    ax.set(
        xlabel="training step", ylabel="loss (nats per character)", title=literal(title)
    )
    ax.legend(frameon=False)
    return fig


def token_cost_figure(rows) -> plt.Figure:
    """Processor seconds per generated token with and without the KV cache (left,
    log-log, with lines of slope 1 and 2 for comparison), and their ratio (right).

    ``rows`` is a sequence of dicts (or a DataFrame's records) with ``n``, ``cached_s``,
    ``fresh_s``, ``ratio_median``, ``ratio_min``, ``ratio_max``.
    """
    n = np.array([r["n"] for r in rows], dtype=float)
    cached = np.array([r["cached_s"] for r in rows]) * 1e3
    fresh = np.array([r["fresh_s"] for r in rows]) * 1e3
    ratio = np.array([r["ratio_median"] for r in rows])
    low = ratio - np.array([r["ratio_min"] for r in rows])
    high = np.array([r["ratio_max"] for r in rows]) - ratio
    fig, (ax_t, ax_r) = plt.subplots(1, 2, figsize=(9.0, 3.4), layout="constrained")
    ax_t.loglog(n, fresh, "o-", color=OKABE_ITO[1], label="without the cache")
    ax_t.loglog(n, cached, "s-", color=OKABE_ITO[0], label="with the cache")
    for slope, style in ((1, ":"), (2, "--")):
        ref = fresh[-1] * (n / n[-1]) ** slope
        ax_t.loglog(n, ref, style, color="grey", linewidth=0.8, label=f"slope {slope}")
    ax_t.set(
        xlabel="position n of the new token",
        ylabel="processor ms per token",
        title="cost of one generated token",
    )
    ax_t.legend(frameon=False, fontsize=8)
    ax_r.errorbar(n, ratio, yerr=[low, high], fmt="o-", color=OKABE_ITO[2], capsize=3)
    ax_r.set_xscale("log")
    ax_r.set_yscale("log")
    ax_r.set(
        xlabel="position n of the new token",
        ylabel="processor time without / with",
        title="how much the cache saves",
    )
    return fig


def phase_change_figure(histories: dict, chance: float) -> plt.Figure:
    """The loss on the repeated half (solid) and on the first half (dotted) during
    training, one colour per seed; ``histories`` maps a seed to a stored history whose
    ``extra`` holds ``repeated_half`` and ``first_half``."""
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    for i, (seed, h) in enumerate(histories.items()):
        colour = OKABE_ITO[i % len(OKABE_ITO)]
        ax.plot(
            h["step"],
            h["extra"]["repeated_half"],
            color=colour,
            label=f"seed {seed}: repeated half",
        )
        ax.plot(
            h["step"],
            h["extra"]["first_half"],
            color=colour,
            linestyle=":",
            linewidth=1.0,
        )
    _chance_line(ax, chance, h["step"][-1], "chance, ln V (dotted: first half)")
    ax.set(
        xlabel="training step",
        ylabel="loss (nats per token)",
        title="the repeated half's loss drops suddenly",
    )
    ax.set_ylim(bottom=0)
    ax.legend(frameon=False, fontsize=8, loc="center right")
    return fig


def head_scores_figure(previous, induction) -> plt.Figure:
    """Two (layers x heads) tables of scores between 0 and 1, each cell written out: the
    previous-token score and the induction score of every head."""
    fig, axes = plt.subplots(1, 2, figsize=(8.0, 2.6), layout="constrained")
    for ax, scores, title in (
        (axes[0], previous, "previous-token score"),
        (axes[1], induction, "induction score"),
    ):
        scores = np.asarray(scores)
        image = ax.imshow(scores, vmin=0, vmax=1, cmap=WEIGHT_CMAP)
        for (r, h), value in np.ndenumerate(scores):
            ax.text(
                h,
                r,
                f"{value:.2f}",
                ha="center",
                va="center",
                fontsize=9,
                color="black" if value > 0.5 else "white",
            )
        ax.set_xticks(
            range(scores.shape[1]), [f"head {h}" for h in range(scores.shape[1])]
        )
        ax.set_yticks(
            range(scores.shape[0]), [f"layer {r}" for r in range(scores.shape[0])]
        )
        ax.set_title(title)
    fig.colorbar(image, ax=axes, shrink=0.8)
    return fig
