"""Figures of the chapters on reading and testing attention in all-MiniLM-L6-v2.

* ``sink_chart(sink)``          per layer: the weight ``[CLS]`` receives against the
                                share of the norm it supplies, and the lengths of the
                                transformed vectors (``minilm_probes.attention_sink``)
* ``weight_norm_scatter(out)``  every (head, query, key) weight against the length of
                                what it adds, one panel per layer

Both return the matplotlib ``Figure``; every label is drawn as typed; colours and
markers come from the Okabe-Ito palette, so the lines differ in shape as well as in
colour.
"""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from book_support.figures.style import OKABE_ITO, literal

#: The measures of :func:`book_support.experiments.minilm_probes.attention_sink` that
#: :func:`sink_chart` draws.
SINK_CHART_MEASURES = (
    "weight on [CLS]",
    "weight on [SEP]",
    "norm share of [CLS]",
    "||f(x)|| of [CLS]",
    "||f(x)|| of [SEP]",
    "||f(x)|| of the other tokens",
)

__all__ = ["sink_chart", "weight_norm_scatter"]


def _band(ax, layers, values, colour, marker, linestyle, label):
    """Mean over sentences as a line, the range over sentences as a shaded band."""
    ax.fill_between(
        layers, values.min(axis=0), values.max(axis=0), color=colour, alpha=0.2
    )
    ax.plot(
        layers,
        values.mean(axis=0),
        marker=marker,
        linestyle=linestyle,
        color=colour,
        label=literal(label),
    )


def sink_chart(sink: dict):
    """Two panels for the attention sink, from :func:`minilm_probes.attention_sink`.

    Left: the mean weight on ``[CLS]`` and on ``[SEP]``, and ``[CLS]``'s share of the
    norm, per layer. Right: the mean length ``||f(x)||`` of the transformed vectors of
    ``[CLS]``, ``[SEP]`` and the other tokens (logarithmic axis). Lines are means over
    the sentences, bands their range.

    Parameters
    ----------
    sink : dict of arrays of shape (sentences, layers), with the keys of
        :data:`book_support.experiments.minilm_probes.SINK_MEASURES`

    Raises
    ------
    KeyError
        If a measure the chart needs is missing (named).
    """
    missing = [k for k in SINK_CHART_MEASURES if k not in sink]
    if missing:
        raise KeyError(f"sink_chart needs the measures {missing}")
    layers = np.arange(np.shape(sink["weight on [CLS]"])[1])
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 3.2), layout="constrained")
    for key, colour, marker, style in (
        ("weight on [CLS]", OKABE_ITO[0], "o", "-"),
        ("weight on [SEP]", OKABE_ITO[1], "^", "-"),
        ("norm share of [CLS]", OKABE_ITO[0], "s", "--"),
    ):
        _band(left, layers, np.asarray(sink[key]), colour, marker, style, key)
    left.set(xlabel="layer", ylabel="mean share per query", ylim=(0, 0.8))
    left.set_title("Weight taken and norm supplied")
    left.legend(fontsize=7, loc="upper right", frameon=False)
    for key, colour, marker, style in (
        ("||f(x)|| of [CLS]", OKABE_ITO[0], "o", "-"),
        ("||f(x)|| of [SEP]", OKABE_ITO[1], "^", "-"),
        ("||f(x)|| of the other tokens", OKABE_ITO[2], "D", ":"),
    ):
        _band(right, layers, np.asarray(sink[key]), colour, marker, style, key)
    right.set_yscale("log")
    right.set(xlabel="layer", ylabel="mean length of f(x)", ylim=(0.05, 60))
    right.set_title("Length of the transformed value vectors")
    right.legend(fontsize=7, loc="upper center", ncols=2, frameon=False)
    for ax in (left, right):
        ax.set_xticks(layers)
    return fig


def weight_norm_scatter(out, *, special: int = 0):
    """Each weight ``alpha`` against ``||alpha f(x)||`` of one sentence, per layer.

    Parameters
    ----------
    out : MiniLMOutput of one sentence (no batch of head masks)
    special : int, the key position drawn in its own colour (default 0, ``[CLS]``)

    Raises
    ------
    ValueError
        If ``out`` holds a batch of passes or ``special`` is not a position.
    """
    if out.attention.ndim != 4:
        raise ValueError("weight_norm_scatter draws one pass, not a batch of them")
    L = out.attention.shape[-1]
    if not 0 <= special < L:
        raise ValueError(f"special must be a position 0..{L - 1}; got {special}")
    norms = out.weighted_norms()  # (6, 12, L, L)
    is_special = np.zeros(L, dtype=bool)
    is_special[special] = True
    fig, axes = plt.subplots(
        2, 3, figsize=(7.5, 4.6), sharex=True, sharey=True, layout="constrained"
    )
    for n, ax in enumerate(axes.flat):
        a, w = out.attention[n], norms[n]
        ax.scatter(
            a[..., ~is_special].ravel(),
            w[..., ~is_special].ravel(),
            s=4,
            alpha=0.4,
            marker="o",
            color=OKABE_ITO[1],
            label="other keys",
        )
        ax.scatter(
            a[..., is_special].ravel(),
            w[..., is_special].ravel(),
            s=8,
            alpha=0.7,
            marker="s",
            color=OKABE_ITO[0],
            label=literal(out.tokens[special]),
        )
        ax.set_title(f"layer {n}", fontsize=9)
    for ax in axes[1]:
        ax.set_xlabel("weight alpha")
    for ax in axes[:, 0]:
        ax.set_ylabel("||alpha f(x)||")
    axes[0, 0].legend(fontsize=7, loc="upper left")
    return fig
