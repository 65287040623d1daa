"""Explorer: sinusoidal position encodings as points on circles."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures import svg
from book_support.figures.explorers._base import _Explorer, _fmt
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)
from book_support.figures.style import OKABE_ITO

__all__ = ["position_state", "position_figure", "position_svg", "PositionExplorer"]


# --------------------------------------------------------------------------- position
# (order)
def position_state(
    position: int, offset: int, d_model: int = 16, *, pair: int = 0, length: int = 64
) -> dict:
    """Sinusoidal encodings at ``p`` and ``p + k``, and the fixed rotation between them.

    Parameters
    ----------
    position : int >= 0, ``p``;  offset : int, ``k`` (``p + k`` must stay >= 0)
    d_model : int, even;  pair : int, the coordinate pair drawn on its circle
    length : int, how many positions the similarity curve covers

    Returns
    -------
    dict with ``pe_p`` and ``pe_pk`` (d_model,), ``rotated`` = ``R_k pe_p``,
    ``max_error`` = ``max |R_k pe_p - pe_pk|``, ``angles`` (d_model/2,) =
    ``k omega_i`` in radians, and ``similarity`` (length,) = ``PE(p) . PE(p + j)``
    for ``j = 0 .. length-1``, with ``similarity_from_0`` the same from position 0
    (equal: it depends on ``j`` only).

    Raises
    ------
    ValueError if ``p + k < 0``, ``pair`` is out of range or ``d_model`` is not even.

    Source: Vaswani et al. (2017), section 3.5.
    """
    from attnlib.layers.positional_encoding import (
        frequencies,
        sinusoidal_encoding,
        sinusoidal_shift_matrix,
    )

    p, k = int(position), int(offset)
    if p < 0 or p + k < 0:
        raise ValueError(f"positions must be non-negative; got p={p}, p+k={p + k}")
    omega = frequencies(d_model)
    if not 0 <= int(pair) < omega.size:
        raise ValueError(f"pair must be in 0..{omega.size - 1}; got {pair}")
    pe = sinusoidal_encoding(max(p, p + k) + length, d_model)  # (L, d)
    rotated = sinusoidal_shift_matrix(k, d_model) @ pe[p]  # (d,)
    return {
        "position": p,
        "offset": k,
        "pair": int(pair),
        "omega": omega,
        "pe_p": pe[p],
        "pe_pk": pe[p + k],
        "rotated": rotated,
        "max_error": float(np.abs(rotated - pe[p + k]).max()),
        "angles": k * omega,
        "similarity": pe[p + np.arange(length)] @ pe[p],
        "similarity_from_0": pe[:length] @ pe[0],
    }


def position_figure(state: dict) -> plt.Figure:
    """Left: one coordinate pair on its circle, positions t and t + k marked. Right: the
    dot product PE(t) . PE(t + j) against j, from t and from 0 (the curves coincide)."""
    fig, (ax_c, ax_s) = plt.subplots(
        1,
        2,
        figsize=(8.0, 3.4),
        layout="constrained",
        gridspec_kw={"width_ratios": [1, 1.6]},
    )
    i, p, k = state["pair"], state["position"], state["offset"]
    w = state["omega"][i]
    t = np.linspace(0, 2 * np.pi, 200)
    ax_c.plot(np.sin(t), np.cos(t), color="0.8", linewidth=1)
    ts = np.arange(0, 40) * w
    ax_c.plot(np.sin(ts), np.cos(ts), "o", color="0.6", markersize=3)
    for pos, colour, marker, label in (
        (p, OKABE_ITO[0], "o", f"t = {p}"),
        (p + k, OKABE_ITO[5], "s", f"t + k = {p + k}"),
    ):
        ax_c.plot(
            np.sin(pos * w),
            np.cos(pos * w),
            marker,
            color=colour,
            markersize=9,
            label=label,
        )
    ax_c.set_aspect("equal")
    ax_c.set_xlim(-1.3, 1.3)
    ax_c.set_ylim(-1.3, 1.3)
    ax_c.set_xlabel(f"PE[·, {2 * i}] = sin(t·θ)")
    ax_c.set_ylabel(f"PE[·, {2 * i + 1}] = cos(t·θ)")
    ax_c.set_title(f"pair {i}: turn by k·θ = {state['angles'][i]:.2f} rad", fontsize=9)
    ax_c.legend(frameon=False, fontsize=8, loc="lower left")
    j = np.arange(state["similarity"].size)
    ax_s.plot(
        j, state["similarity"], color=OKABE_ITO[0], linewidth=2.2, label=f"from t = {p}"
    )
    ax_s.plot(
        j, state["similarity_from_0"], "--", color=OKABE_ITO[1], label="from t = 0"
    )
    ax_s.set_xlabel("offset j")
    ax_s.set_ylabel("PE(t) · PE(t + j)")
    ax_s.set_title("dot product depends on the offset only", fontsize=9)
    ax_s.legend(frameon=False, fontsize=8)
    return fig


def position_svg(state: dict) -> str:
    """The chosen pair of PE(t) and PE(t + k) as two unit arrows (sin on the x axis,
    cos on the y axis): the second is the first turned by the angle k·θ_i."""
    i, t, k = state["pair"], state["position"], state["offset"]
    a, b = state["pe_p"][2 * i : 2 * i + 2], state["pe_pk"][2 * i : 2 * i + 2]  # (2,)
    return svg.arrows(
        [a, b],
        [f"PE(t = {t}), pair {i}", f"PE(t + k = {t + k}), pair {i}"],
        title=f"pair {i}: turned by k·θ = {state['angles'][i]:.2f} rad",
        extent=1.2,
        colors=[OKABE_ITO[0], OKABE_ITO[5]],
        size=240,
    )


def _position_rows(s):
    i, t, k = s["pair"], s["position"], s["offset"]
    return [
        ("position t, offset k, pair i", f"{t}, {k}, {i}"),
        ("angle k·θ_i (radians)", f"{s['angles'][i]:.4f}"),
        (
            f"PE(t), coordinates {2 * i}, {2 * i + 1}",
            _fmt(s["pe_p"][2 * i : 2 * i + 2]),
        ),
        (
            f"PE(t + k), coordinates {2 * i}, {2 * i + 1}",
            _fmt(s["pe_pk"][2 * i : 2 * i + 2]),
        ),
        ("R_k PE(t) equals PE(t + k) to 1e-12", str(s["max_error"] < 1e-12)),
        ("PE(t) · PE(t + k)", f"{s['similarity'][k]:.4f}"),
        ("PE(0) · PE(k), the same", f"{s['similarity_from_0'][k]:.4f}"),
    ]


class PositionExplorer(_Explorer):
    """Choose a position, an offset, the width and a coordinate pair; see the
    rotation."""

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.position = w.IntSlider(
            value=5, min=0, max=60, description="position t", style=style
        )
        self.offset = w.IntSlider(
            value=3, min=0, max=30, description="offset k", style=style
        )
        self.d_model = w.SelectionSlider(
            options=(4, 8, 16, 32, 64), value=16, description="width d", style=style
        )
        self.pair = w.IntSlider(
            value=0, min=0, max=31, description="pair drawn", style=style
        )
        self.controls = [self.position, self.offset, self.d_model, self.pair]
        self._connect(self.controls)

    def compute(self) -> dict:
        pair = min(self.pair.value, self.d_model.value // 2 - 1)
        return position_state(
            self.position.value, self.offset.value, self.d_model.value, pair=pair
        )

    def rows(self):
        s = self.state
        return [
            ("PE(t), first 4", _fmt(s["pe_p"][:4])),
            ("PE(t + k), first 4", _fmt(s["pe_pk"][:4])),
            ("R_k PE(t), first 4", _fmt(s["rotated"][:4])),
            ("R_k PE(t) equals PE(t + k) to 1e-12", str(s["max_error"] < 1e-12)),
            ("angles k·θ_i, first 4 pairs", _fmt(s["angles"][:4])),
        ]

    def figure(self):
        return position_figure(self.state)

    POSITIONS = tuple(range(0, 45, 5))  # 0, 5, ..., 40: 9 positions
    OFFSETS = (0, 1, 2, 3, 5, 8, 13, 20, 30)  # 9 offsets
    PAIRS = (0, 1, 2)  # the fastest three pairs

    def precomputed(self, d_model: int = 16) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: nine positions t (0 to 40), nine
        offsets k (0 to 30) and the coordinate pairs 0, 1, 2, with ``d_model`` fixed
        (16)."""
        controls = [
            Control.numbers("position t (tokens from the start)", self.POSITIONS, 5),
            Control.numbers("offset k (tokens further on)", self.OFFSETS, 3),
            Control(
                "coordinate pair drawn",
                tuple(
                    (f"pair {i} (coordinates {2 * i}, {2 * i + 1})", i)
                    for i in self.PAIRS
                ),
                0,
                "list",
            ),
        ]

        def render(t, k, pair):
            state = position_state(t, k, d_model, pair=pair)
            return position_svg(state) + readout_table(_position_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="position explorer",
            fallback_png=figure_png(self.figure()),
        )
