"""The book's figures (matplotlib), SVG drawings and explorers.

Every helper returns the matplotlib ``Figure`` and leaves showing it to the caller.
Every label and title is drawn exactly as typed (:func:`literal`: a ``$`` never starts
mathematics). Colours are colour-blind safe (viridis and the Okabe-Ito palette).

* ``use_book_style()``                  fixed figure size, dpi, fonts and colours
* ``palette_png(png, colours)``         a figure's PNG in at most 256 colours
* ``attention_heatmap(weights, queries, keys)``  one panel per (batch, head)
* ``mixture_bars(weights, labels)``     one query's weights as bars
* ``access_map(mask, tokens)``          which keys each query may attend
* ``data_flow_diagram(tokens)``         one head's path from tokens to output
* ``layer_head_grids(panels, titles)``  one (layers x heads) grid per quantity
* ``length_curves(lengths, curves)``    accuracy against length, spread over seeds
* ``position_curves(length, curves)``   accuracy by target position, two decodings
* ``training_curves(histories)``        validation loss of every training run
* ``alignment_heatmaps(panels)``        trained attention with the true alignment
* ``layer_flow_diagram(kind)``          one Transformer layer's data flow
* ``pipeline_diagram()``                the steps of one head, in order
* ``sink_chart(sink)``                  the attention sink of MiniLM, per layer
* ``weight_norm_scatter(out)``          weights against the norms they deliver

The explorers live in :mod:`book_support.figures.explorers`, one module per family.
"""

from book_support.figures.charts import mixture_bars
from book_support.figures.diagrams import (
    data_flow_diagram,
    layer_flow_diagram,
    pipeline_diagram,
)
from book_support.figures.heatmaps import (
    access_map,
    alignment_heatmaps,
    attention_heatmap,
    layer_head_grids,
)
from book_support.figures.probes import sink_chart, weight_norm_scatter
from book_support.figures.style import (
    DPI,
    OKABE_ITO,
    WEIGHT_CMAP,
    literal,
    literal_labels,
    palette_png,
    use_book_style,
)
from book_support.figures.translation import (
    length_curves,
    position_curves,
    training_curves,
)

__all__ = [
    "DPI",
    "OKABE_ITO",
    "WEIGHT_CMAP",
    "use_book_style",
    "palette_png",
    "literal",
    "literal_labels",
    "attention_heatmap",
    "access_map",
    "layer_head_grids",
    "alignment_heatmaps",
    "mixture_bars",
    "length_curves",
    "position_curves",
    "training_curves",
    "data_flow_diagram",
    "layer_flow_diagram",
    "pipeline_diagram",
    "sink_chart",
    "weight_norm_scatter",
]
