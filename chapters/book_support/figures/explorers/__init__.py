"""Interactive explorers: move a score, a scale, a query, a mask or a head and watch
   attention respond.

One module per family: ``weights`` (scores, scale), ``query_key``, ``masks``, ``heads``,
``position``, ``cost``, ``learned`` (the trained classifier) and ``minilm`` (the real
model's heads and one of its layers); ``_base`` holds what they share.

Each explorer has three layers, so that nothing a reader sees depends on a running
kernel:

1. a **pure function** (``*_state``) that does the arithmetic with attnlib and returns
   the numbers as a dict; the tests call these directly;
2. a **figure function** (``*_figure``, ``*_svg``) that draws a state; the chapters
   store it so the static website shows every precomputed state (a dict that lacks
   an entry of its family's state raises KeyError naming it);
3. a thin **widget class** built with ipywidgets: its controls feed the pure function,
   its ``readout`` shows the numbers and its ``image`` shows the redrawn figure as a
   PNG. Tests set a control's value and read the numbers back from ``readout``.

Controls have labels a learner understands, bounded ranges and steps; every state
function accepts the controls' extreme values without raising.
"""

from book_support.figures.explorers.heads import (
    HeadsExplorer,
    heads_figure,
    heads_state,
    heads_svg,
)
from book_support.figures.explorers.minilm import (
    LAYER_STEPS,
    LayerExplorer,
    ModelExplorer,
    layer_figure,
    layer_state,
    layer_svg,
    model_figure,
    model_state,
    model_svg,
)
from book_support.figures.explorers.weights import (
    ScaleExplorer,
    ScoresExplorer,
    scale_figure,
    scale_state,
    scale_svg,
    scores_figure,
    scores_state,
    scores_svg,
)

__all__ = [
    "scores_state",
    "scores_figure",
    "scores_svg",
    "ScoresExplorer",
    "scale_state",
    "scale_figure",
    "scale_svg",
    "ScaleExplorer",
    "heads_state",
    "heads_figure",
    "heads_svg",
    "HeadsExplorer",
    "model_state",
    "model_svg",
    "model_figure",
    "ModelExplorer",
    "LAYER_STEPS",
    "layer_state",
    "layer_figure",
    "layer_svg",
    "LayerExplorer",
]
