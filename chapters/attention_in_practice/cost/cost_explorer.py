"""Explorer: what a longer sequence costs, plain and tiled."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures import svg
from book_support.figures.explorers._base import _Explorer
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)
from book_support.figures.style import OKABE_ITO

__all__ = ["cost_state", "cost_figure", "cost_svg", "CostExplorer"]


# --------------------------------------------------------------------------- cost
def cost_state(
    n: int, d: int = 64, *, heads: int = 1, block=None, bytes_per_number: int = 4
) -> dict:
    """What one attention layer costs at sequence length ``n`` (counted, not measured).

    Parameters
    ----------
    n : int >= 1, sequence length (self-attention: ``L_q = L_k = n``)
    d : int >= 1, features per head (``d_k = d_v = d``)
    heads : int >= 1
    block : None, int or (int, int), the tile of tiled attention (queries x keys);
        None (the default) is :func:`attnlib.core.tiled.default_block_sizes`, the tile
        ``attnlib.tiled_attention`` uses (256 x 1,024 for long sequences); an int is a
        square tile. Tiles are capped at ``n``.
    bytes_per_number : 4 for float32, 2 for float16, 8 for float64

    Returns
    -------
    dict with the inputs, ``block_q`` and ``block_k`` (the tile), ``score_entries``
    (= heads * n^2), ``plain_scores_bytes`` (the full score table), ``tile_bytes``
    (one tile per head), ``running_max_bytes`` and ``running_sum_bytes`` (one number
    per query and head each), ``running_weighted_sum_bytes`` (``d`` numbers per query
    and head, the size of the output), ``tiled_scores_bytes`` (tile + running maximum
    + running sum: what replaces the score table) and ``flops`` (about 4 n^2 d per
    head: n^2 d multiply-adds for Q K^T and as many for the weighted sum, two flops
    each).

    Raises
    ------
    ValueError if any count is below 1.

    Source: Dao et al. (2022), section 3.1, for the tiles and the running statistics.
    """
    from attnlib.core.tiled import default_block_sizes

    for name, value in (
        ("n", n),
        ("d", d),
        ("heads", heads),
        ("bytes_per_number", bytes_per_number),
    ):
        if int(value) < 1:
            raise ValueError(f"{name} must be at least 1; got {value}")
    n, d, heads = int(n), int(d), int(heads)
    if block is None:
        block_q, block_k = default_block_sizes(n, n)
    else:
        sizes = (block, block) if np.ndim(block) == 0 else tuple(block)
        if len(sizes) != 2 or min(int(b) for b in sizes) < 1:
            raise ValueError(
                f"block must be a positive int or a pair of them; got {block!r}"
            )
        block_q, block_k = min(int(sizes[0]), n), min(int(sizes[1]), n)
    entries = heads * n * n
    per_query = heads * n * bytes_per_number
    tile = heads * block_q * block_k * bytes_per_number
    return {
        "n": n,
        "d": d,
        "heads": heads,
        "block_q": block_q,
        "block_k": block_k,
        "block": block,
        "bytes_per_number": bytes_per_number,
        "score_entries": entries,
        "plain_scores_bytes": entries * bytes_per_number,
        "tile_bytes": tile,
        "running_max_bytes": per_query,
        "running_sum_bytes": per_query,
        "running_weighted_sum_bytes": per_query * d,
        "tiled_scores_bytes": tile + 2 * per_query,
        "flops": 4 * heads * n * n * d,
    }


def _cost_curves(state: dict, max_n: int = 131_072):
    ns = np.unique(np.rint(np.geomspace(16, max(max_n, state["n"]), 40)).astype(int))
    costs = [
        cost_state(
            k,
            state["d"],
            heads=state["heads"],
            block=state["block"],
            bytes_per_number=state["bytes_per_number"],
        )
        for k in ns
    ]
    return (
        ns,
        [c["plain_scores_bytes"] / 2**20 for c in costs],
        [c["tiled_scores_bytes"] / 2**20 for c in costs],
    )


def _tile_name(state: dict) -> str:
    return (
        "the default tile (at most 262,144 scores)"
        if state["block"] is None
        else f"{state['block_q']:,} × {state['block_k']:,} tiles"
    )


def cost_figure(state: dict, *, max_n: int = 131_072) -> plt.Figure:
    """Score-table memory of plain and tiled attention against n (log-log), this n
    marked."""
    ns, plain, tiled = _cost_curves(state, max_n)
    fig, ax = plt.subplots(figsize=(6.0, 3.2), layout="constrained")
    ax.loglog(ns, plain, color=OKABE_ITO[0], label="plain: the whole n × n table")
    ax.loglog(
        ns,
        tiled,
        "--",
        color=OKABE_ITO[1],
        label=f"tiled, {_tile_name(state)}: one tile + running max and sum",
    )
    ax.axvline(state["n"], color="grey", lw=0.8)
    ax.set_xlabel("sequence length n")
    ax.set_ylabel("score memory (MiB)")
    ax.legend(frameon=False, fontsize=8)
    return fig


def cost_svg(state: dict, *, max_n: int = 131_072) -> str:
    """The curves of :func:`cost_figure` as a drawing (fixed axes; this n dashed)."""
    ns, plain, tiled = _cost_curves(state, max_n)
    names = ("plain: the whole n × n table", "tiled: one tile + running max and sum")
    return svg.line_chart(
        ns,
        dict(zip(names, (plain, tiled))),
        title=f"score memory, {state['heads']} head(s), float32",
        xlabel="sequence length n",
        ylabel="MiB",
        mark_x=state["n"],
        marked=dict(
            zip(
                names,
                (
                    state["plain_scores_bytes"] / 2**20,
                    state["tiled_scores_bytes"] / 2**20,
                ),
            )
        ),
        width=420,
    )


def _cost_rows(s):
    mib = 2**20
    return [
        ("score entries", f"{s['score_entries']:,}"),
        ("plain: score table (float32)", f"{s['plain_scores_bytes'] / mib:,.3f} MiB"),
        (
            "tiled: one tile per head",
            f"{s['block_q']:,} × {s['block_k']:,} = {s['tile_bytes'] / mib:,.3f} MiB",
        ),
        (
            "tiled: running maximum (one per query)",
            f"{s['running_max_bytes'] / mib:,.3f} MiB",
        ),
        (
            "tiled: running sum (one per query)",
            f"{s['running_sum_bytes'] / mib:,.3f} MiB",
        ),
        (
            "tiled: running weighted sum of values (d per query, the output's size)",
            f"{s['running_weighted_sum_bytes'] / mib:,.3f} MiB",
        ),
        ("floating-point operations (both forms)", f"{s['flops']:,}"),
    ]


class CostExplorer(_Explorer):
    """Slide the sequence length, width and heads, choose a tile; see entries, memory,
    FLOPs."""

    #: The sequence length both explorers start at: a power of two, as the precomputed
    #: explorer's lengths are, and the first at which the default tile is 256 x 1,024.
    START = 1_024

    TILES = (
        ("attnlib's default (1 MiB: 256 × 1,024 for long inputs)", None),
        ("64 × 64", 64),
        ("128 × 128", 128),
        ("256 × 256", 256),
        ("512 × 512", 512),
        ("1,024 × 1,024", 1024),
    )

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.n = w.IntSlider(
            value=self.START,  # the precomputed explorer's start too
            min=1,
            max=100_000,
            step=1,
            description="sequence length n (tokens)",
            style=style,
        )
        self.d = w.IntSlider(
            value=64, min=1, max=256, description="d per head", style=style
        )
        self.heads = w.IntSlider(
            value=1, min=1, max=16, description="heads", style=style
        )
        self.block = w.Dropdown(
            options=self.TILES,
            value=None,
            description="tile (queries × keys)",
            style=style,
        )
        self.controls = [self.n, self.d, self.heads, self.block]
        self._connect(self.controls)

    def compute(self) -> dict:
        return cost_state(
            self.n.value, self.d.value, heads=self.heads.value, block=self.block.value
        )

    def rows(self):
        return _cost_rows(self.state)

    def figure(self):
        return cost_figure(self.state)

    LENGTHS = tuple(2**k for k in range(7, 18))  # 128 ... 131,072 tokens
    HEADS = (1, 2, 4, 8, 12, 16)

    def precomputed(self) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: eleven sequence lengths (128 to
        131,072 tokens, each twice the last) times 1 to 16 heads; d and the tile as set
        here."""
        controls = [
            Control.numbers(
                "sequence length n (tokens)", self.LENGTHS, self.START, fmt="{:,}"
            ),
            Control.numbers("heads", self.HEADS, self.heads.value),
        ]

        def render(n, heads):
            state = cost_state(n, self.d.value, heads=heads, block=self.block.value)
            return cost_svg(state) + readout_table(_cost_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="cost explorer",
            fallback_png=figure_png(self.figure()),
        )
