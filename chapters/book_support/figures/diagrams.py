"""Diagrams: one head's data flow, the steps of one head, and the data flow through one
Transformer layer."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.style import OKABE_ITO

__all__ = ["data_flow_diagram", "layer_flow_diagram", "pipeline_diagram"]


def data_flow_diagram(
    tokens=("fisherman", "net", "bank"), *, d: int = 4, d_k: int = 2, d_v: int = 2
):
    """The path of one attention head: tokens -> X -> Q, K, V -> scores -> weights ->
       output.

    Every matrix is drawn as a grid with its real shape (one row per position), so the
    figure shows which sizes change at each step: the scores and the weights are ``n x
    n``, the output has the values' width ``d_v``.

    Parameters
    ----------
    tokens : sequence of str, length n >= 1
        Labels of the positions (the rows of X).
    d, d_k, d_v : int, keyword-only, each between 1 and 8
        Width of the inputs, of queries and keys, and of values.

    Returns
    -------
    matplotlib.figure.Figure

    Raises
    ------
    TypeError
        If ``tokens`` is not a sequence of str, or a width is not an int.
    ValueError
        If there are no tokens or more than 8, or a width is outside 1..8.

    Source: scaled dot-product attention with learned projections, Vaswani et al.
    (2017), sections 3.2.1 and 3.2.2.
    """
    from matplotlib.patches import FancyArrowPatch, Rectangle

    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise TypeError("tokens must be a sequence of str, one per position")
    n = len(tokens)
    if not 1 <= n <= 8:
        raise ValueError(f"data_flow_diagram draws 1 to 8 tokens; got {n}")
    for name, value in (("d", d), ("d_k", d_k), ("d_v", d_v)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an int; got {type(value).__name__}")
        if not 1 <= value <= 8:
            raise ValueError(f"{name} must be between 1 and 8; got {value}")

    cell = 0.32
    fig, ax = plt.subplots(figsize=(9.6, 3.9), layout="constrained")
    ax.set_axis_off()

    def grid(x, y_top, rows, cols, colour, title, shape):
        # A matrix as a grid of cells, its top-left corner at (x, y_top).
        for i in range(rows):
            for j in range(cols):
                ax.add_patch(
                    Rectangle(
                        (x + j * cell, y_top - (i + 1) * cell),
                        cell,
                        cell,
                        facecolor=colour,
                        edgecolor="white",
                        linewidth=1.2,
                    )
                )
        centre = x + cols * cell / 2
        ax.text(centre, y_top + 0.12, title, ha="center", va="bottom", fontsize=9)
        ax.text(
            centre,
            y_top - rows * cell - 0.1,
            shape,
            ha="center",
            va="top",
            fontsize=8,
            color="#444444",
        )
        return (x, y_top, x + cols * cell, y_top - rows * cell)

    def arrow(start, end, text=None):
        ax.add_patch(
            FancyArrowPatch(
                start,
                end,
                arrowstyle="->",
                mutation_scale=12,
                linewidth=1.0,
                color="black",
            )
        )
        if text:
            ax.text(
                (start[0] + end[0]) / 2,
                (start[1] + end[1]) / 2 + 0.1,
                text,
                ha="center",
                va="bottom",
                fontsize=8,
            )

    height = n * cell
    mid = 0.0
    # tokens, as a column of labels
    for i, token in enumerate(tokens):
        ax.text(
            0.0,
            mid + height / 2 - (i + 0.5) * cell,
            token,
            ha="left",
            va="center",
            fontsize=9,
            parse_math=False,
        )
    ax.text(0.0, mid + height / 2 + 0.12, "tokens", ha="left", va="bottom", fontsize=9)
    x_in = 2.15
    bx = grid(x_in, mid + height / 2, n, d, "#bbbbbb", "inputs $X$", f"({n}, d={d})")
    arrow((1.4, mid), (x_in - 0.05, mid), "embed")
    # Q, K, V stacked
    x_p = bx[2] + 1.3
    gap = height + 0.75
    boxes = {}
    for k, (name, width, colour) in enumerate(
        (("Q", d_k, OKABE_ITO[4]), ("K", d_k, OKABE_ITO[1]), ("V", d_v, OKABE_ITO[2]))
    ):
        y_top = mid + height / 2 + gap * (1 - k)
        wname = {"Q": "d_k", "K": "d_k", "V": "d_v"}[name]
        boxes[name] = grid(
            x_p,
            y_top,
            n,
            width,
            colour,
            f"${name} = X W_{name}$",
            f"({n}, {wname}={width})",
        )
        arrow((bx[2] + 0.05, mid), (x_p - 0.05, y_top - height / 2))
    # scores and weights
    x_s = x_p + max(d_k, d_v) * cell + 1.5
    y_s = mid + height / 2 + gap / 2
    sb = grid(
        x_s, y_s, n, n, "#dddddd", r"scores $QK^{\top}/\sqrt{d_k}$", f"({n}, {n})"
    )
    for name in ("Q", "K"):
        b = boxes[name]
        arrow((b[2] + 0.05, (b[1] + b[3]) / 2), (x_s - 0.05, y_s - height / 2))
    x_a = sb[2] + 1.4
    ab = grid(x_a, y_s, n, n, OKABE_ITO[3], "weights $A$", f"({n}, {n}), rows sum to 1")
    arrow((sb[2] + 0.05, y_s - height / 2), (x_a - 0.05, y_s - height / 2), "softmax")
    # output
    x_z = ab[2] + 1.4
    y_z = mid + height / 2 - gap / 2
    grid(x_z, y_z, n, d_v, OKABE_ITO[2], "output $Z = AV$", f"({n}, d_v={d_v})")
    arrow((ab[2] + 0.05, y_s - height / 2), (x_z - 0.05, y_z - height / 2))
    vb = boxes["V"]
    arrow((vb[2] + 0.05, (vb[1] + vb[3]) / 2), (x_z - 0.05, y_z - height / 2 - 0.05))
    ax.set_xlim(-0.1, x_z + d_v * cell + 0.9)
    ax.set_ylim(mid - height / 2 - gap - 0.55, mid + height / 2 + gap + 0.5)
    ax.set_aspect("equal")
    return fig


def layer_flow_diagram(
    kind: str = "encoder",
    *,
    L: int = 8,
    d_model: int = 384,
    heads: int = 12,
    d_ff: int = 1536,
    L_source: int | None = None,
):
    """The data flow through one Transformer layer, every box labelled with its output
       shape.

    Boxes run bottom to top: the input, the attention sub-layer(s), the feed-forward
    network, each followed by "add & norm" (residual connection, then layer
    normalisation); the residual paths are drawn as arrows that bypass the sub-layer.

    Parameters
    ----------
    kind : "encoder" or "decoder" (causal self-attention, then cross-attention to the
        encoder)
    L, d_model, heads, d_ff : int, the sizes written into the labels
    L_source : int, the encoder's length for the decoder's cross-attention (default
        ``L``)

    Returns
    -------
    matplotlib.figure.Figure, 4.6 x 7.6 in (encoder) or 4.6 x 10 in (decoder)

    Raises
    ------
    ValueError for an unknown ``kind``.

    Source: Vaswani et al. (2017), figure 1 and sections 3.1-3.3.
    """
    if kind not in ("encoder", "decoder"):
        raise ValueError(f"kind must be 'encoder' or 'decoder'; got {kind!r}")
    Ls = L if L_source is None else L_source
    dh = d_model // heads
    if kind == "encoder":
        blocks = [
            ("input X", f"({L}, {d_model})", "0.92"),
            (
                "multi-head self-attention",
                (
                    f"{heads} heads: Q, K, V ({heads}, {L}, {dh}); weights ({heads}, "
                    f"{L}, {L})"
                ),
                OKABE_ITO[4],
            ),
            ("add & layer norm", f"H = LN(X + A)  ({L}, {d_model})", OKABE_ITO[6]),
            (
                "feed-forward, GELU",
                f"({L}, {d_ff}) inside, F ({L}, {d_model})",
                OKABE_ITO[1],
            ),
            ("add & layer norm", f"Y = LN(H + F)  ({L}, {d_model})", OKABE_ITO[6]),
        ]
    else:
        blocks = [
            ("decoder input", f"({L}, {d_model})", "0.92"),
            (
                "causal self-attention",
                f"weights ({heads}, {L}, {L}), zero above the diagonal",
                OKABE_ITO[4],
            ),
            ("add & layer norm", f"H1  ({L}, {d_model})", OKABE_ITO[6]),
            (
                "cross-attention",
                f"Q from H1, K and V from the encoder ({Ls}, {d_model});"
                f" weights ({heads}, {L}, {Ls})",
                OKABE_ITO[3],
            ),
            ("add & layer norm", f"H2  ({L}, {d_model})", OKABE_ITO[6]),
            (
                "feed-forward",
                f"({L}, {d_ff}) inside, ({L}, {d_model}) out",
                OKABE_ITO[1],
            ),
            ("add & layer norm", f"output  ({L}, {d_model})", OKABE_ITO[6]),
        ]
    n = len(blocks)
    fig, ax = plt.subplots(figsize=(5.6, 1.25 * n + 1.2), layout="constrained")
    ax.set_xlim(0, 10)
    ax.set_ylim(-0.6, 1.5 * n)
    ax.axis("off")
    ys = [1.5 * i for i in range(n)]
    for (title, shape, colour), y in zip(blocks, ys):
        ax.add_patch(
            matplotlib.patches.FancyBboxPatch(
                (1.2, y),
                6.6,
                0.95,
                boxstyle="round,pad=0.05",
                facecolor=colour,
                edgecolor="black",
                alpha=0.9 if colour != "0.92" else 1.0,
            )
        )
        ax.text(
            4.5, y + 0.62, title, ha="center", va="center", fontsize=10, weight="bold"
        )
        ax.text(4.5, y + 0.25, shape, ha="center", va="center", fontsize=7.5)
    for a, b in zip(ys, ys[1:]):
        ax.annotate(
            "",
            xy=(4.5, b - 0.02),
            xytext=(4.5, a + 1.0),
            arrowprops={"arrowstyle": "-|>", "color": "black", "lw": 1.3},
        )
    # residual paths: from the input of each sub-layer around it into the add & norm box
    adds = [i for i, (title, _, _) in enumerate(blocks) if title.startswith("add")]
    for k, i in enumerate(adds):
        start, end = ys[i - 2] + 0.35, ys[i] + 0.6
        x_bar = 8.3 + 0.7 * (k % 2)  # alternate, so two paths never overlap
        ax.plot([7.85, x_bar, x_bar], [start, start, end], color=OKABE_ITO[5], lw=1.6)
        ax.annotate(
            "",
            xy=(7.85, end),
            xytext=(x_bar, end),
            arrowprops={"arrowstyle": "-|>", "color": OKABE_ITO[5], "lw": 1.6},
        )
        ax.text(
            x_bar + 0.25,
            (start + end) / 2,
            "residual",
            rotation=90,
            va="center",
            ha="center",
            fontsize=8,
            color=OKABE_ITO[5],
        )
    if kind == "decoder":
        y = ys[3] + 0.5
        ax.annotate(
            "",
            xy=(1.15, y),
            xytext=(0.1, y),
            arrowprops={"arrowstyle": "-|>", "color": OKABE_ITO[3], "lw": 1.6},
        )
        ax.text(
            0.05,
            y + 0.2,
            "encoder\noutput",
            fontsize=7.5,
            color="black",
            ha="left",
            va="bottom",
        )
    return fig


def pipeline_diagram():
    """The steps of one attention head as boxes and arrows: project, score, mask,
    softmax, weighted sum, then concatenation and ``W_O`` (the chapter "Summary").

    Returns the matplotlib ``Figure`` (9 x 3.2 inches). Source: Vaswani et al. (2017),
    Figure 2.
    """
    from matplotlib.patches import FancyBboxPatch

    fig, ax = plt.subplots(figsize=(9.0, 3.2), layout="constrained")
    ax.set_xlim(0, 18)
    ax.set_ylim(0, 6)
    ax.axis("off")

    def box(x, y, text, colour, w=2.6, h=1.0):
        patch = FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.08", fc=colour, ec="black", lw=0.8
        )
        ax.add_patch(patch)
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9)

    def arrow(x0, y0, x1, y1):
        ax.annotate(
            "", xy=(x1, y1), xytext=(x0, y0), arrowprops={"arrowstyle": "->", "lw": 1.0}
        )

    light = {"q": "#cfe6f5", "k": "#fbe3b3", "v": "#c8ecdf", "op": "#eeeeee"}
    box(0.2, 2.5, "X  (n, d)", light["op"], w=2.0)
    box(3.2, 4.4, "Q = X W_Q", light["q"])
    box(3.2, 2.5, "K = X W_K", light["k"])
    box(3.2, 0.6, "V = X W_V", light["v"])
    for y in (4.9, 3.0, 1.1):
        arrow(2.2, 3.0, 3.2, y)
    box(6.8, 3.45, "scores\nQ K^T / sqrt(d_k)", light["op"], w=3.0, h=1.2)
    arrow(5.8, 4.9, 6.8, 4.2)
    arrow(5.8, 3.0, 6.8, 3.8)
    box(10.5, 3.55, "mask\n(causal, padding)", light["op"], h=1.0)
    arrow(9.8, 4.05, 10.5, 4.05)
    box(13.8, 3.55, "softmax\n(each row)", light["op"], w=2.2)
    arrow(13.1, 4.05, 13.8, 4.05)
    box(13.8, 0.6, "weighted sum\nZ = A V", light["op"], w=2.2)
    arrow(14.9, 3.55, 14.9, 1.6)
    ax.text(15.05, 2.55, "weights A", fontsize=8)
    arrow(5.8, 1.1, 13.8, 1.1)
    ax.text(16.3, 1.1, "one head\n-> concat heads\n-> W_O", fontsize=8, va="center")
    return fig
