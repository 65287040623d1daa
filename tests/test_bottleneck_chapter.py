"""The bottleneck chapter's prose, captions and alt texts against what they describe
(expert read 4a): the decoder exercise's solution, the sentence of the alignment figure
and the rule that chose it, its alt text against a fresh decoding, and the length
figure's line styles and legend.

Expected values are computed here independently: the decoder step with ``math``, the
verb's move by scanning the sentences one by one, the decoding with the stored weights.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest

from attnlib.data import translation_task as tt
from book_support.experiments import translation_eval as te
from book_support.experiments import translation_training as tr
from book_support.figures import length_curves

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "chapters" / "why_attention/bottleneck/bottleneck.ipynb"
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
    moves = [11 - _verb_position(s) for s in te.test_batches([12])[0].source]
    tied = moves.count(max(moves))
    assert f"the first of the {tied} that tie for the farthest move" in caption
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


def test_chance_of_separation_counts_the_orderings():
    # every way of giving 3 of 6 ranks to kind a; only the top three put a above all b
    for n_a, n_b in ((3, 3), (2, 4), (1, 1)):
        orders = list(itertools.combinations(range(n_a + n_b), n_a))
        top = tuple(range(n_b, n_a + n_b))
        want = sum(o == top for o in orders) / len(orders)
        assert te.chance_of_separation(n_a, n_b) == pytest.approx(want)
    assert te.chance_of_separation(3, 3) == pytest.approx(1 / 20)


def _scores(length, greedy):
    nan, pos = float("nan"), np.zeros(length)
    return te.Scores(length, greedy, greedy, greedy, nan, nan, nan, pos, pos, pos)


def test_separated_lists_the_lengths_where_no_seed_overlaps():
    # two kinds, two seeds, three lengths, written out: a above at 5, b above at 15,
    # touching ranges at 10 are not a separation
    greedy = {
        "a-seed0": (0.9, 0.5, 0.1),
        "a-seed1": (0.8, 0.6, 0.2),
        "b-seed0": (0.7, 0.6, 0.3),
        "b-seed1": (0.1, 0.4, 0.4),
    }
    evaluation = {
        run: [_scores(T, g) for T, g in zip((5, 10, 15), row)]
        for run, row in greedy.items()
    }
    assert te.separated(evaluation, "greedy", "a", "b") == {
        "a_above": [5],
        "b_above": [15],
    }


def test_verb_moves_match_a_scan_of_the_sentences():
    batch = te.test_batches([12])[0]
    want = [11 - _verb_position(s) for s in batch.source]
    assert te.verb_moves(batch).tolist() == want


def test_alignment_by_correctness_adds_up_to_the_alignment_accuracy():
    """The two shares, weighted by their word counts, give back the overall hit rate
    that :func:`evaluate` splits by word kind instead."""
    batch = te.test_batches([30], n=40)[0]
    model = tr.load_runs()[tr.run_name("attention-forward", 0)]
    split = te.alignment_by_correctness(model, batch)
    scores = te.evaluate(model, batch)
    kinds = batch.kinds()
    counts = [(kinds == k).sum() for k in (tt.KEPT, tt.NEAR, tt.VERB)]
    shares = (scores.alignment_kept, scores.alignment_near, scores.alignment_verb)
    overall = sum(c * s for c, s in zip(counts, shares)) / kinds.size
    n_right = round(scores.teacher_forced * kinds.size)
    assert n_right + split["n_wrong"] == kinds.size
    mixed = split["correct"] * n_right + split["wrong"] * split["n_wrong"]
    mixed /= kinds.size
    assert mixed == pytest.approx(overall)
    assert split["correct"] > split["wrong"]


def test_late_fall_compares_the_best_before_the_window_with_the_best():
    history = {
        "step": [1000, 2000, 3000, 4000, 5000, 6000],
        "validation_loss": [2.0, 1.0, 1.2, 0.9, 0.8, 0.85],
        "stopped_at": [6000],
    }
    # window of 3,000 steps: evaluations up to step 3,000 count as "before" (best 1.0)
    got = te.late_fall(history, last_steps=3000)
    assert got["before"] == 1.0 and got["best"] == 0.8
    assert got["fall"] == pytest.approx(0.2)
    # a window of 1,000 steps: the best up to 5,000 is already 0.8, so no fall
    assert te.late_fall(history, last_steps=1000)["fall"] == 0.0
    with pytest.raises(ValueError, match="no evaluation"):
        te.late_fall(history, last_steps=5500)
    with pytest.raises(ValueError, match="last_steps"):
        te.late_fall(history, last_steps=0)
    with pytest.raises(ValueError, match="last_steps"):
        te.late_fall(history, last_steps=True)
    with pytest.raises(ValueError, match="one length"):
        te.late_fall({**history, "step": history["step"][:-1]})
