"""Chapter 2's prose, captions and alt texts against what they describe (expert read
4a): the decoder exercise's solution, the sentence of the alignment figure and the
rule that chose it, its alt text against a fresh decoding, and the length figure's line
styles and legend.

Expected values are computed here independently: the decoder step with ``math``, the
verb's move by scanning the sentences one by one, the decoding with the stored weights.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attnlib.data import translation_task as tt
from attnlib.figures import length_curves
from attnlib.models import translation_eval as te
from attnlib.models import translation_training as tr

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "chapters" / "02_bottleneck.ipynb"
CELLS = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
ORDINALS = "first second third fourth fifth sixth seventh eighth ninth tenth".split()


def _markdown() -> str:
    return " ".join(
        " ".join("".join(c["source"]).split())
        for c in CELLS
        if c["cell_type"] == "markdown"
    )


def _figure_cell(name: str) -> dict:
    (cell,) = [
        c
        for c in CELLS
        if c["metadata"].get("mystnb", {}).get("figure", {}).get("name") == name
    ]
    return cell


def _decoder_step_by_hand():
    """The exercise's step with math: h' = [1, -1], W_a = U_a = I, v_a = [1, 1]."""
    h = [[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]
    s = [math.tanh(1.0 + a) + math.tanh(-1.0 + b) for a, b in h]
    z = sum(math.exp(x) for x in s)
    w = [math.exp(x) / z for x in s]
    c = [sum(w[j] * h[j][k] for j in range(3)) for k in range(2)]
    return w, c


def test_decoder_solution_rounds_the_exact_values():
    w, c = _decoder_step_by_hand()
    assert f"{c[1]:.4f}" == "1.3468"  # 2 x 0.67342..., not 2 x 0.6734 rounded
    weights = ", ".join(f"{x:.4f}" for x in w)
    context = ", ".join(f"{x:.4f}" for x in c)
    prose = _markdown()
    assert f"my_weights, my_context = [{weights}], [{context}]" in prose
    assert f"\\approx [{context}]$" in prose
    assert "1.3469" not in prose


def _verb_position(source_ids) -> int:
    verbs = {tt.SOURCE_VOCAB.index(v) for v, _ in tt.VERBS}
    (at,) = [j for j, w in enumerate(source_ids) if int(w) in verbs]
    return at


def test_farthest_verb_is_the_first_sentence_with_the_longest_move():
    batch = te.test_batches([12])[0]
    moves = [11 - _verb_position(s) for s in batch.source]  # one sentence at a time
    best = moves.index(max(moves))
    chosen = te.farthest_verb(batch)
    assert len(chosen) == 1
    np.testing.assert_array_equal(chosen.source[0], batch.source[best])
    np.testing.assert_array_equal(chosen.alignment[0], batch.alignment[best])
    # the chapter's sentence: the verb stands first, so it moves the whole sentence
    assert moves[best] == 11 and chosen.alignment[0, -1] == 0


@pytest.fixture(scope="module")
def decoded():
    """Both seed-0 attention models on the figure's sentence, decoded afresh."""
    sentence = te.farthest_verb(te.test_batches([12])[0])
    runs = tr.load_runs()
    out = {}
    for kind in ("attention-bidirectional", "attention-forward"):
        words, weights = tr.encoder_decoder.translate_greedy(
            runs[tr.run_name(kind, 0)], sentence.source
        )
        out[kind] = (words[0], weights[0])  # (T,), (T, T)
    return sentence, out


def test_alignment_alt_text_matches_the_decoding(decoded):
    sentence, out = decoded
    cell = _figure_cell("fig-bottleneck-alignment")
    alt = " ".join(cell["metadata"]["mystnb"]["image"]["alt"].split())
    caption = cell["metadata"]["mystnb"]["figure"]["caption"]
    assert "whose verb moves farthest" in caption
    verb = tt.source_words(sentence.source[0])[sentence.alignment[0, -1]]
    assert f"the verb '{verb}' stands first" in caption
    assert "bottom-left corner" in alt  # the verb's ring: last row, first column
    assert "Both models translate all 12 words" in alt
    for kind, (words, weights) in out.items():
        np.testing.assert_array_equal(words, sentence.target[0])
        misses = np.flatnonzero(weights.argmax(axis=1) != sentence.alignment[0])
        text = re.search(rf"{kind.split('-')[1]}[^.]*\.", alt).group(0)
        count = {0: "every row", 3: "every row but three"}[len(misses)]
        assert count in text, (kind, count, text)
        for row in misses:
            name = "last" if row == len(words) - 1 else ORDINALS[row]
            assert f"{name} row" in text or f"{name} and" in text, (kind, row, text)
    words, weights = out["attention-forward"]
    # the forward-only model's last row: its largest weight on the last source word
    assert weights[-1].argmax() == 11 and "last column" in alt


def test_length_figure_tells_its_lines_apart_outside_the_axes():
    s = {"mean": [0.5, 0.4], "min": [0.4, 0.3], "max": [0.6, 0.5]}
    curves = {
        name: {"token": s, "sentence": s}
        for name in ("context, bidirectional", "attention, forward-only")
    }
    fig = length_curves([5, 10], curves, trained_up_to=7, chance=0.04)
    try:
        (legend,) = fig.legends
        assert not any(ax.get_legend() for ax in fig.axes)
        styles = {
            t.get_text(): h.get_linestyle()
            for t, h in zip(legend.get_texts(), legend.legend_handles)
        }
        assert styles == {
            "context, bidirectional": "-",
            "attention, forward-only": "--",
            "guessing": ":",
        }
        assert legend.handlelength >= 4
        fig.canvas.draw()
        box = legend.get_window_extent()
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent())
    finally:
        plt.close(fig)
