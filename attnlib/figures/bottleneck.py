"""The figures of chapter 2's optional section: how an untrained RNN forgets.

``fading_plot`` draws the size of ``d h_n / d x_t`` against the distance from the end
with its geometric bound; ``recovery_plot`` draws the held-out R^2 of the two readers of
:func:`attnlib.models.bottleneck.recovery_experiment` with the ceiling for one vector.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from attnlib.figures.style import OKABE_ITO

__all__ = ["fading_plot", "recovery_plot"]


def fading_plot(distance, measured, bound, *, radius: float = 0.9):
    """Sensitivity of the final state to each input, by distance from the end.

    Parameters
    ----------
    distance : (n,) ints, ``n - t``
    measured : (n,) positive floats, the mean size of ``d h_n / d x_t``
    bound : (n,) positive floats, ``radius**(n - t) * |W_x|``
    radius : float, the spectral radius named in the legend

    Returns
    -------
    matplotlib.figure.Figure, one panel on a logarithmic axis.

    Raises
    ------
    ValueError
        If the three arrays differ in length or hold a value that is not positive.
    """
    k, y, b = (np.asarray(a, dtype=float) for a in (distance, measured, bound))
    if not (k.shape == y.shape == b.shape) or np.any(y <= 0) or np.any(b <= 0):
        raise ValueError(
            "distance, measured and bound must be equally long, the last two positive; "
            f"got shapes {k.shape}, {y.shape}, {b.shape}"
        )
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    ax.semilogy(
        k, b, "--", color=OKABE_ITO[7], label=f"upper bound ${radius}^{{n-t}}\\,\\|W_x\\|$"
    )
    ax.semilogy(
        k, y, "o-", color=OKABE_ITO[0], ms=3, label="measured (mean of the sequences)"
    )
    ax.set_xlabel("distance from the end, $n - t$ (steps)")
    ax.set_ylabel("size of $\\partial h_n / \\partial x_t$")
    ax.legend(frameon=False)
    return fig


def recovery_plot(result, n_detail: int = 32):
    """Held-out R^2 of the final-state and attention readers (two panels).

    Parameters
    ----------
    result : :class:`attnlib.models.bottleneck.RecoveryResult`
    n_detail : int, one of ``result.lengths``, drawn position by position on the right

    Returns
    -------
    matplotlib.figure.Figure: left, the mean over positions against the length with the
    ceiling for one vector; right, each position of the ``n_detail``-step sequences.

    Raises
    ------
    ValueError
        If ``n_detail`` is not one of the measured lengths.
    """
    if n_detail not in result.lengths:
        raise ValueError(f"n_detail={n_detail} is not one of {result.lengths}")
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.0, 3.4), layout="constrained")
    T = np.array(result.lengths)
    left.plot(T, result.bound, "--", color=OKABE_ITO[7], label="ceiling for one vector")
    left.plot(
        T, result.final_mean, "o-", color=OKABE_ITO[5], label="final-state reader"
    )
    left.plot(
        T, result.attention_mean, "s-", color=OKABE_ITO[0], label="attention reader"
    )
    left.set_xscale("log", base=2)
    left.set_xticks(T, labels=[str(t) for t in T])
    left.set_xlabel("sequence length n")
    left.set_ylabel("mean held-out $R^2$ over positions")
    left.set_ylim(-0.05, 1.05)
    left.legend(frameon=False, loc="lower left")
    i = result.lengths.index(n_detail)
    pos = np.arange(1, n_detail + 1)
    for values, style, colour, label in (
        (result.final_by_position[i], "o-", OKABE_ITO[5], "final-state reader"),
        (result.attention_by_position[i], "s-", OKABE_ITO[0], "attention reader"),
    ):
        right.plot(pos, values, style, ms=3, color=colour, label=label)
    right.set_xlabel(f"position t of the input (n = {n_detail})")
    right.set_ylabel("held-out $R^2$ for $x_t$")
    right.set_ylim(-0.05, 1.05)
    right.legend(frameon=False, loc="center left")
    return fig
