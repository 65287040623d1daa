"""The bottleneck chapter's figures of the trained translators: accuracy with its spread
over seeds.

Each curve is the mean over a model's seeds, drawn with a band from the lowest to the
highest seed, in the manner of Bahdanau, Cho & Bengio (2015), Figure 2 (there: BLEU
against sentence length). A model whose name contains "attention" or "context" gets
that kind's Okabe-Ito colour and marker (a context-vector name containing "matched" or
"gru" one of its own), and a name containing "forward" a dashed line
(a forward-only encoder), so no curve is told apart by colour alone.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.style import OKABE_ITO, literal

__all__ = ["length_curves", "position_curves", "training_curves"]

_COLOURS = (OKABE_ITO[5], OKABE_ITO[0], OKABE_ITO[1], OKABE_ITO[2])
_MARKERS = ("o", "s", "^", "D")


def _style(name: str, k: int) -> tuple:
    """(colour, marker, line style) of the ``k``-th model, from its name."""
    order = (("attention", 1), ("matched", 2), ("gru", 3), ("context", 0))
    kind = next((i for word, i in order if word in name), k % 4)
    return _COLOURS[kind], _MARKERS[kind], "--" if "forward" in name else "-"


def _summary(values, n: int, what: str):
    """``values`` -> (mean, low, high) arrays of shape (n,) in [0, 1], checked."""
    out = []
    for key in ("mean", "min", "max"):
        y = np.asarray(values[key], dtype=float)
        if y.shape != (n,) or not np.all((0 <= y) & (y <= 1)):
            raise ValueError(
                f"{what}: {key!r} must be {n} accuracies in [0, 1]; got {y.tolist()}"
            )
        out.append(y)
    if np.any(out[1] > out[0] + 1e-12) or np.any(out[0] > out[2] + 1e-12):
        raise ValueError(f"{what}: need min <= mean <= max at every point")
    return out


def _band(ax, x, values, what, style, label):
    """The mean in % as a line in ``style`` (colour, marker, line style), the range of
    the seeds as a band behind it."""
    mean, low, high = _summary(values, len(x), what)
    colour, marker, ls = style
    ax.fill_between(x, 100 * low, 100 * high, color=colour, alpha=0.2, lw=0)
    (line,) = ax.plot(x, 100 * mean, ls=ls, marker=marker, ms=4, color=colour)
    line.set_label(label)
    return line


def _legend(ax, handles, **kwargs):
    """A legend of exactly these lines, under their labels as typed (matplotlib's own
    collection skips a label that starts with an underscore, such as a model named
    ``_``)."""
    return ax.legend(handles, [h.get_label() for h in handles], **kwargs)


def length_curves(lengths, curves: dict, *, trained_up_to=None, chance=None):
    """Word and sentence accuracy against source length, mean and range over seeds.

    Parameters
    ----------
    lengths : sequence of int, shape (n,) -- the test lengths (x axis)
    curves : dict, model name -> {"token": summary, "sentence": summary}, where a
        summary is a dict with "mean", "min", "max", each (n,) in [0, 1]
    trained_up_to : int, optional -- the longest training sentence, drawn as a dotted
        vertical line
    chance : float, optional -- word accuracy of guessing, drawn as a dotted line

    Returns
    -------
    matplotlib.figure.Figure with two panels (in %) and one legend below them, with
    handles long enough to show each line's style (solid, or dashed for a
    forward-only encoder).

    Raises
    ------
    ValueError
        If a summary does not have one value per length in [0, 1] with min <= mean <=
        max.
    """
    x = np.asarray(lengths)
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 4.0), layout="constrained")
    handles = []
    for k, (name, acc) in enumerate(curves.items()):
        for ax, what in zip(axes, ("token", "sentence")):
            line = _band(
                ax, x, acc[what], f"{name} {what}", _style(name, k), literal(name)
            )
            if what == "token":
                handles.append(line)
    for ax, what in zip(
        axes, ("words translated correctly (%)", "sentences entirely correct (%)")
    ):
        if trained_up_to is not None:
            ax.axvline(trained_up_to, ls=":", color=OKABE_ITO[7], lw=1)
        ax.set_xlabel("source sentence length (words)")
        ax.set_ylabel(what)
        ax.set_ylim(-3, 103)
        ax.set_xticks(x)
    if trained_up_to is not None:
        axes[1].text(
            trained_up_to + 0.5,
            8,
            "longer than\nany training\nsentence",
            va="bottom",
            fontsize=8,
        )
    if chance is not None:
        handles.append(
            axes[0].axhline(
                100 * chance, ls=":", color=OKABE_ITO[7], lw=1, label="guessing"
            )
        )
    fig.legend(
        handles,
        [h.get_label() for h in handles],
        loc="outside lower center",
        ncol=3,
        frameon=False,
        fontsize=8,
        handlelength=4,
    )
    return fig


def position_curves(length: int, curves: dict, *, title=None):
    """Word accuracy at each target position of sentences of one length, mean and range
    over seeds, for teacher-forced and greedy decoding.

    Parameters
    ----------
    length : int -- the sentence length T (positions 1 .. T on the x axis)
    curves : dict, model name -> {"teacher_forced": summary, "greedy": summary}, a
        summary as in :func:`length_curves` with arrays of shape (T,)
    title : str, optional

    Returns
    -------
    matplotlib.figure.Figure, one panel: solid lines teacher-forced, dotted greedy.

    Raises
    ------
    ValueError
        As :func:`length_curves`.
    """
    x = np.arange(1, int(length) + 1)
    fig, ax = plt.subplots(figsize=(6.4, 4.0), layout="constrained")
    handles = []
    for k, (name, acc) in enumerate(curves.items()):
        colour, marker, _ = _style(name, k)
        for what, ls, how in (
            ("teacher_forced", "-", "fed the correct words"),
            ("greedy", ":", "fed its own words"),
        ):
            label = literal(f"{name}, {how}")
            style = (colour, marker, ls)
            handles.append(_band(ax, x, acc[what], f"{name} {what}", style, label))
    ax.set_xlabel("target position (word being written)")
    ax.set_ylabel("words correct (%)")
    ax.set_ylim(-3, 103)
    _legend(
        ax,
        handles,
        frameon=False,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.16),
        ncol=2,
        fontsize=8,
    )
    if title:
        ax.set_title(literal(title))
    return fig


def training_curves(histories: dict, *, max_steps=None):
    """Validation loss against training step, one line per run, coloured by kind.

    Parameters
    ----------
    histories : dict, kind -> list of histories (dicts with "step" and
        "validation_loss", of equal lengths, and "best_step"), one per seed
    max_steps : int, optional -- the budget cap, drawn as a dotted vertical line

    Returns
    -------
    matplotlib.figure.Figure, one panel, logarithmic loss axis; a dot marks each
    run's best step (the parameters it keeps).

    Raises
    ------
    ValueError
        If a history's steps and losses differ in length or a loss is not positive.
    OverflowError
        If a loss lies outside 1e-150 .. 1e150 (the log axis cannot place it).
    """
    fig, ax = plt.subplots(figsize=(6.4, 3.4), layout="constrained")
    handles = []
    lowest, highest = np.inf, 0.0
    for k, (kind, runs) in enumerate(histories.items()):
        colour, marker, ls = _style(kind, k)
        for j, h in enumerate(runs):
            step = np.asarray(h["step"], dtype=float)
            loss = np.asarray(h["validation_loss"], dtype=float)
            if step.shape != loss.shape or not np.all(loss > 0):
                raise ValueError(
                    f"{kind}: need one positive validation loss per step; got "
                    f"{step.shape} steps and {loss.shape} losses"
                )
            lowest = min(lowest, float(loss.min()))
            highest = max(highest, float(loss.max()))
            if not (1e-150 < lowest and highest < 1e150):
                plt.close(fig)
                raise OverflowError(
                    "validation losses must lie between 1e-150 and 1e150 to be drawn "
                    f"on a log axis; got {lowest:g} to {highest:g}"
                )
            (line,) = ax.plot(step, loss, color=colour, ls=ls, lw=1)
            if j == 0:
                line.set_label(literal(kind))
                handles.append(line)
            best = int(np.flatnonzero(step == h["best_step"][0])[0])
            ax.plot(step[best], loss[best], marker, color=colour, ms=5)
    if max_steps is not None:
        ax.axvline(max_steps, ls=":", color=OKABE_ITO[7], lw=1)
        ax.text(
            max_steps,
            1,
            "budget cap ",
            ha="right",
            va="top",
            fontsize=8,
            transform=ax.get_xaxis_transform(),
        )
    ax.set_yscale("log")
    if np.isfinite(lowest):
        ax.set_ylim(lowest / 2, highest * 2)
    ax.set_xlabel("training step")
    ax.set_ylabel("validation loss")
    _legend(ax, handles, frameon=False, fontsize=8)
    return fig
