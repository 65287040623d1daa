"""Expert read 5d of chapters/11_interpretability.ipynb: its definite error stays fixed.

1. The ``[CLS]`` norm figures (16.5 to 35 times shorter, under 0.27 of the norm) are
   averages over the 12 heads: every sentence, caption and alt text that states them
   says so, and the per-head spread is printed by a cell (computed in attnlib) and
   matches the per-head measures recomputed here.
Also: the content tokens are defined as every token but ``[CLS]`` and ``[SEP]``, as the
code edits them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from attnlib.models import minilm, minilm_probes, minilm_sink

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "chapters" / "11_interpretability.ipynb"


def _cells():
    return json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]


def _texts():
    """Every markdown cell, caption and alt text, each with line breaks removed."""
    for c in _cells():
        if c["cell_type"] == "markdown":
            yield " ".join("".join(c["source"]).split())
        mystnb = c.get("metadata", {}).get("mystnb", {})
        for text in (
            mystnb.get("figure", {}).get("caption"),
            mystnb.get("image", {}).get("alt"),
        ):
            if text:
                yield " ".join(text.split())


def test_every_cls_norm_figure_says_it_is_an_average_over_heads():
    stated = 0
    for text in _texts():
        for sentence in re.split(r"(?<=\.)\s", text):
            if (
                "16.5" in sentence
                or "0.27" in sentence
                or "ten times shorter" in sentence
            ):
                stated += 1
                assert re.search(r"average[sd]? over the (12 )?heads", sentence), (
                    sentence
                )
    assert stated >= 5  # cells 24, 28 and 36, the summary, the sink figure's caption


def _outputs() -> str:
    return "\n".join(
        "".join(o.get("text", "")) for c in _cells() for o in c.get("outputs", [])
    )


def test_the_per_head_spread_printed_is_the_per_head_measure():
    sentences = [
        "The fisherman repaired his net beside the bank.",
        "The cashier counted the money inside the bank.",
        "The teller counted the money inside the bank.",
        "His net was repaired by the fisherman beside the bank.",
        "The bank flooded after the storm.",
        "The bank was crowded because people were waiting to withdraw money.",
        "The animal didn't cross the street because it was too tired.",
        "The dog bit the man.",
        "The cat sat on the mat.",
        "Machine learning rocks!",
    ]
    lo, hi, below, share_max = np.inf, 0.0, 0, 0.0
    per_head_ratio = np.zeros((4, 12))
    for s in sentences:
        out = minilm.forward(s)
        f = np.linalg.norm(out.transformed[1:5], axis=-1)  # (4, 12, L)
        r = f[..., 1:-1].mean(axis=-1) / f[..., 0]  # (4, 12)
        lo, hi = min(lo, r.min()), max(hi, r.max())
        per_head_ratio += r / len(sentences)
        n = out.weighted_norms()[1:5]  # (4, 12, L, L)
        share_max = max(share_max, (n[..., 0] / n.sum(axis=-1)).mean(axis=-1).max())
    below = int((per_head_ratio < 16.5).sum())
    text = _outputs()
    assert f"over [CLS]'s {lo:.1f} to {hi:.0f}" in text
    assert f"is below 16.5: {below} of 48" in text
    assert below > 0 and lo < 16.5 < 35.4 < hi  # the averages do hide heads
    assert share_max > 0.5  # one head's [CLS] supplies over half ("over half")
    by_head = minilm_probes.attention_sink(
        [minilm.forward(s) for s in sentences[:1]], per_head=True
    )
    assert by_head["weight on [CLS]"].shape == (1, 6, 12)


def test_content_tokens_are_every_token_but_cls_and_sep():
    prose = " ".join(
        " ".join("".join(c["source"]).split())
        for c in _cells()
        if c["cell_type"] == "markdown"
    )
    assert "to every other token of each sentence except `[SEP]`" in prose
    assert "the punctuation are among them" in prose
    # the code edits positions 1 .. L-2: a sentence of 3 tokens has one content token
    effects = minilm_sink.key_edit_effects(["Hi"], edits=("silence",))
    assert effects["silence"]["content: embedding cosine"].shape == (1,)
