"""Issue 28's definite errors 7, 8 and 9, held where a test can hold them."""

from __future__ import annotations

import math
import re
from pathlib import Path

import nbformat

from attnlib.layers.positional_encoding import frequencies

CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"


def _markdown(stem: str) -> str:
    nb = nbformat.read(CHAPTERS / f"{stem}.ipynb", as_version=4)
    return "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def test_07_ties_divisibility_to_the_usual_choice_of_d_k():
    text = _markdown("07_heads")
    assert "$d$ must be divisible by the number of heads" in text
    for sentence in re.findall(r"[^.]*must be divisible[^.]*", text):
        assert "usual $d_k = d/h$" in sentence, sentence


def test_08b_last_wavelength_for_d_16_is_what_the_prose_says():
    theta_last = frequencies(16)[-1]  # 10000^(-14/16)
    assert math.isclose(1 / theta_last, 10000 ** (14 / 16))
    wavelength = 2 * math.pi / theta_last
    text = _markdown("08b_order_and_position")
    assert f"{round(1 / theta_last)}" in text  # 3162
    assert f"about {round(wavelength, -1):,.0f} positions" in text  # 19,870
    assert "almost 2π · 10000" not in text


def test_08b_rotary_caption_names_the_offset_it_defines():
    nb = nbformat.read(CHAPTERS / "08b_order_and_position.ipynb", as_version=4)
    captions = [
        c.metadata["mystnb"]["figure"]["caption"]
        for c in nb.cells
        if c.metadata.get("mystnb", {}).get("figure", {}).get("name")
        == "fig-pos-rotary"
    ]
    assert captions and "i - j" in captions[0] and "m - n" not in captions[0]
    assert "query position i" in captions[0] and "key position j" in captions[0]


def test_08b_cites_the_position_free_language_models():
    text = _markdown("08b_order_and_position")
    sentence = text[text.index("no\nposition encoding at all") - 200 :][:600]
    assert "haviv2022" in sentence and "kazemnejad2023" in sentence
