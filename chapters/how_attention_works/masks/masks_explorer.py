"""Explorer: causal, bidirectional and padding masks on three sentences."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from attnlib.core.masks import bidirectional_mask, causal_mask, padding_mask
from attnlib.core.softmax import softmax
from attnlib.data import examples
from book_support.figures import svg
from book_support.figures.explorers._base import _Explorer, _fmt
from book_support.figures.heatmaps import access_map
from book_support.figures.precomputed import (
    Control,
    PrecomputedExplorer,
    figure_png,
    readout_table,
)
from book_support.figures.style import OKABE_ITO, WEIGHT_CMAP, literal_labels

__all__ = [
    "MASK_KINDS",
    "mask_state",
    "mask_figure",
    "ACCESS_CMAP",
    "mask_svg",
    "MaskExplorer",
]


# --------------------------------------------------------------------------- masks
MASK_KINDS = ("causal", "bidirectional", "padding")


def mask_state(
    tokens, kind: str = "causal", *, pad_to: int | None = None, seed: int = 0
) -> dict:
    """The access map of a mask for a sentence, and the weights it leaves.

    Parameters
    ----------
    tokens : sequence of str (at least one)
    kind : {"causal", "bidirectional", "padding"}
        "padding" pads the sentence with "[PAD]" tokens up to ``pad_to`` and lets every
        real token attend every real token (a bidirectional encoder with a key padding
        mask).
    pad_to : int, optional; only for "padding" (default: two more than the sentence)
    seed : int, seeds the random scores the weights are computed from

    Returns
    -------
    dict with ``tokens`` (tuple), ``mask`` (L, L) bool, ``scores`` (L, L) and
    ``weights`` (L, L).

    Raises
    ------
    ValueError for an unknown kind or an empty sentence.
    """
    tokens = tuple(tokens)
    if not tokens:
        raise ValueError("the sentence has no tokens")
    if kind not in MASK_KINDS:
        raise ValueError(f"kind must be one of {MASK_KINDS}; got {kind!r}")
    n_real = len(tokens)
    if kind == "padding":
        pad_to = max(n_real, pad_to if pad_to is not None else n_real + 2)
        tokens = tokens + ("[PAD]",) * (pad_to - n_real)
        mask = padding_mask(np.array([n_real]), pad_to)[0] & np.ones(
            (pad_to, 1), dtype=bool
        )
        mask = (
            mask & (np.arange(pad_to) < n_real)[:, None]
        )  # padding queries attend nothing
    elif kind == "causal":
        mask = causal_mask(n_real)
    else:
        mask = bidirectional_mask(n_real)
    n = len(tokens)
    scores = np.random.default_rng(seed).normal(size=(n, n))
    weights = softmax(scores, mask=mask)
    return {"tokens": tokens, "mask": mask, "scores": scores, "weights": weights}


def mask_figure(state: dict) -> plt.Figure:
    """The access map next to the weights it leaves (random scores, same seed)."""
    tokens = state["tokens"]
    n = len(tokens)
    fig, (ax_m, ax_w) = plt.subplots(
        1, 2, figsize=(max(6.0, 0.9 * n + 2.5), 0.45 * n + 1.8), layout="constrained"
    )
    access_map(state["mask"], tokens, title="may attend", ax=ax_m)
    image = ax_w.imshow(state["weights"], vmin=0, vmax=1, cmap=WEIGHT_CMAP)
    ax_w.set_xticks(range(n), labels=literal_labels(tokens), rotation=90)
    ax_w.set_yticks(range(n), labels=literal_labels(tokens))
    ax_w.set_title("weights (random scores)")
    fig.colorbar(image, ax=ax_w, shrink=0.8, label="attention weight")
    return fig


ACCESS_CMAP = ListedColormap(["#f2f2f2", OKABE_ITO[0]])


def mask_svg(state: dict) -> str:
    """Which keys each query may attend (blue) next to the weights that are left; both
    maps name their rows, as they stack one above the other in a narrow column."""
    t = state["tokens"]
    return svg.side_by_side(
        svg.heatmap(state["mask"], t, t, title="may attend (blue)", cmap=ACCESS_CMAP),
        svg.heatmap(state["weights"], t, t, title="weights (random scores)"),
    )


def _mask_rows(s):
    allowed = s["mask"].sum(axis=1)
    last = int(np.flatnonzero(s["mask"].any(axis=1))[-1])
    return [
        ("tokens", " | ".join(s["tokens"])),
        ("keys allowed per query", str(allowed.tolist())),
        ("row sums of the weights", _fmt(s["weights"].sum(axis=1))),
        (
            f"weights of the last query that attends ({s['tokens'][last]})",
            _fmt(s["weights"][last]),
        ),
    ]


class MaskExplorer(_Explorer):
    """Edit a sentence and choose causal, bidirectional or padding; see access and
       weights.

    Default sentence: "The bank flooded after the storm ." (a separate token for the
    period).
    """

    def __init__(self, *, live_figure: bool = True):
        super().__init__(live_figure)
        w = self._widgets
        style = {"description_width": "initial"}
        self.sentence = w.Text(
            value=" ".join(examples.FLOOD_TOKENS),
            description="sentence (tokens split at spaces)",
            style=style,
        )
        self.kind = w.ToggleButtons(
            options=MASK_KINDS, value="causal", description="mask"
        )
        self.pad_to = w.IntSlider(
            value=len(examples.FLOOD_TOKENS) + 2,
            min=1,
            max=16,
            description="padded length",
            style=style,
        )
        self.controls = [self.sentence, self.kind, self.pad_to]
        self._connect(self.controls)

    def tokens(self):
        toks = tuple(self.sentence.value.split())
        return toks if toks else ("(empty)",)

    def compute(self) -> dict:
        return mask_state(self.tokens(), self.kind.value, pad_to=self.pad_to.value)

    def rows(self):
        return _mask_rows(self.state)

    def figure(self):
        return mask_figure(self.state)

    SENTENCES = (
        " ".join(examples.FLOOD_TOKENS),
        "The cat sat on the mat .",
        "I love building distributed systems",
    )

    def precomputed(self, sentences=SENTENCES) -> PrecomputedExplorer:
        """The explorer for a page without a kernel: the three masks times a few
        sentences (tokens split at spaces; padding adds two [PAD] tokens)."""
        sentences = list(sentences)
        default = (
            self.sentence.value if self.sentence.value in sentences else sentences[0]
        )
        controls = [
            Control(
                "mask",
                tuple((k, k) for k in MASK_KINDS),
                MASK_KINDS.index(self.kind.value),
                kind="list",
            ),
            Control(
                "sentence",
                tuple((s, s) for s in sentences),
                sentences.index(default),
                kind="dropdown",
            ),
        ]

        def render(kind, sentence):
            tokens = tuple(sentence.split())
            state = mask_state(tokens, kind, pad_to=len(tokens) + 2)
            return mask_svg(state) + readout_table(_mask_rows(state))

        return PrecomputedExplorer(
            controls,
            render,
            name="mask explorer",
            fallback_png=figure_png(self.figure()),
        )
