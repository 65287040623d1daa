"""Expert read 6d of chapters/11_interpretability.ipynb: its two definite errors stay
fixed.

1. Silence and fill are matched in weight only where the weights are frozen: no text
   claims "the same weights" for the whole-model edit, and the frozen run's printed
   cosines are those of ``minilm_sink.cls_edit_cosines`` (itself tested against a
   hand-written pass in tests/test_minilm_sink.py).
2. The numeric quiz question diagnoses the slip 0.03 / 0.4, typed exactly (0.075) or
   rounded (0.08), instead of accepting it; judged as quiz.js ``judge`` does (the
   right interval first, then the slips, each ``[lo, hi)``).
"""

from __future__ import annotations

import json
from pathlib import Path

from test_exercises_quiz import stored_questions  # tests/ is on the path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "chapters" / "11_interpretability.ipynb"


def _judge(value: float, answers: list) -> dict:
    ranges = [a for a in answers if a["type"] == "range"]
    for pool in (
        [a for a in ranges if a["correct"]],
        [a for a in ranges if not a["correct"]],
    ):
        for a in pool:
            if a["range"][0] <= value < a["range"][1]:
                return a
    return next(a for a in answers if a["type"] == "default")


def test_the_slip_of_dividing_by_the_other_terms_gets_its_diagnosis():
    (q,) = [
        q
        for q in stored_questions(NOTEBOOK)
        if q["type"] == "numeric" and "share of the delivered norm" in q["question"]
    ]
    share = 0.6 * 0.05 / (0.6 * 0.05 + 0.4 * 1.0)  # 0.0698
    for right in (share, 0.07):
        assert _judge(right, q["answers"]).get("correct"), right
    for slip in (0.03 / 0.4, 0.08):
        verdict = _judge(slip, q["answers"])
        assert (
            not verdict.get("correct")
            and "other keys' terms only" in verdict["feedback"]
        ), slip


def _prose() -> str:
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return " ".join(
        " ".join("".join(c["source"]).split())
        for c in cells
        if c["cell_type"] == "markdown"
    )


def test_only_the_frozen_run_is_called_matched_in_weight():
    prose = _prose()
    assert "exactly the same weights and differ only" not in prose
    assert "the same weight now fetches" not in prose
    assert "letting the same weight fetch" not in prose
    assert "matched in weight only in layer 0" in prose
    assert "frozen_weights=True" in prose
