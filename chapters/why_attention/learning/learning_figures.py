"""Figures of the learning primer: the loss along one weight with descent steps, and
training against validation loss over the steps of several runs."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.style import OKABE_ITO, literal

__all__ = ["descent_figure"]


def descent_figure(grid, losses, path, curve, *, best_step, stopped_at):
    """Two panels: steps of gradient descent along one weight, and when to stop.

    Parameters
    ----------
    grid : array_like, shape (G,), values of one weight
    losses : array_like, shape (G,), the training loss at each value of ``grid``
        (every other parameter held fixed)
    path : sequence of ``(label, weights, losses)``: descent paths drawn on the left,
        each a sequence of weight values and their losses (equal lengths)
    curve : an object with ``steps``, ``train_loss`` and ``val_loss`` (shape (E,) each),
        e.g. a run of ``attnlib.models.linear_classifier.train`` that was not stopped
    best_step, stopped_at : int, where the stopping rule found its best validation loss
        and where it stopped (drawn as vertical lines on the right)

    Returns
    -------
    matplotlib.figure.Figure of size 9 x 3.6 inches

    Raises
    ------
    ValueError if ``grid`` and ``losses`` are not 1-D arrays of one length.
    """
    grid, losses = np.asarray(grid, float), np.asarray(losses, float)
    if grid.shape != losses.shape or grid.ndim != 1:
        raise ValueError(
            f"grid and losses must be 1-D of one length; got {grid.shape}, "
            f"{losses.shape}"
        )
    fig, (ax_l, ax_r) = plt.subplots(1, 2, figsize=(9.0, 3.6), layout="constrained")
    ax_l.plot(grid, losses, color="grey", lw=1.5, label="training loss")
    markers = ("o", "s", "^", "D")
    for i, (label, ws, ls) in enumerate(path):
        colour = OKABE_ITO[(i + 1) % len(OKABE_ITO)]
        ax_l.plot(
            ws, ls, marker=markers[i % 4], color=colour, lw=1, label=literal(label)
        )
    ax_l.set_xlabel("value of one weight")
    ax_l.set_ylabel("training loss")
    ax_l.set_title("steps along one weight")
    ax_l.legend(frameon=False, fontsize=8)
    for losses, colour, style, label in (
        (curve.train_loss, OKABE_ITO[0], "--", "training loss"),
        (curve.val_loss, OKABE_ITO[1], "-", "validation loss"),
    ):
        ax_r.plot(curve.steps, losses, color=colour, ls=style, lw=2, label=label)
    ax_r.axvline(best_step, color="grey", ls=":", lw=1.2, label="best validation loss")
    ax_r.axvline(stopped_at, color="grey", ls="-.", lw=1.2, label="the rule stops")
    ax_r.set_xlabel("step")
    ax_r.set_ylabel("loss (cross-entropy)")
    ax_r.set_title("when to stop")
    ax_r.legend(frameon=False, fontsize=8)
    return fig
