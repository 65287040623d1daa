"""Self-check questions (book_support.exercises.quiz) and the quizzes stored in the
chapters.

The chapters' quiz cells are tagged ``quiz``; their stored output (what the website
shows) holds the questions as JSON inside jupyterquiz's script. The browser tests
(tests/browser/test_quiz.py) answer them in the built pages; here the content is
checked.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest
from book_files import CHAPTER_NOTEBOOKS, NOTEBOOKS, notebook

from book_support.exercises import quiz

QUESTIONS_JSON = re.compile(
    r"var questions(\w+)=(\[.*?\]);\n\nif \(typeof Question", re.S
)


def stored_questions(path: Path) -> list:
    """The questions of every quiz cell of a chapter, read from the stored outputs."""
    nb = nbformat.read(path, as_version=4)
    questions = []
    for cell in nb.cells:
        if cell.cell_type != "code" or "quiz" not in cell.metadata.get("tags", []):
            continue
        assert "remove-input" in cell.metadata["tags"], cell.id
        scripts = [
            o["data"]["application/javascript"]
            for o in cell.outputs
            if o.get("output_type") == "display_data"
            and "application/javascript" in o.get("data", {})
        ]
        assert len(scripts) == 1, (
            f"{path.name} {cell.id}: run the chapter to store the quiz"
        )
        m = QUESTIONS_JSON.search(scripts[0])
        assert m, cell.id
        html = "".join(
            o["data"].get("text/html", "")
            for o in cell.outputs
            if o.get("output_type") == "display_data"
        )
        assert f'id="{m.group(1)}"' in html  # the script fills this element
        questions += json.loads(m.group(2))
    return questions


def _right_range(q: dict) -> list:
    return next(a["range"] for a in q["answers"] if a.get("correct"))


# --- the helper
# --------------------------------------------------------------------------


def test_numeric_accepts_within_the_tolerance_and_diagnoses_slips():
    q = quiz.numeric(
        "Weight?",
        0.7311,
        tolerance=5e-4,
        slips=[(73.11, "percent", 0.5)],
        hint="exponentiate",
    )
    lo, hi = _right_range(q)
    assert lo <= 0.7311 <= hi and lo <= 0.7315 <= hi and not lo <= 0.732 <= hi
    slip = q["answers"][1]
    assert slip["correct"] is False and slip["range"] == [72.61, 73.61]
    assert slip["feedback"] == "Not yet. percent"
    assert q["answers"][-1] == {"type": "default", "feedback": "Not yet. exponentiate"}
    assert "±0.0005" in q["question"]


@pytest.mark.parametrize(
    "kwargs, error",
    [
        (dict(answer=1.0, tolerance=0.0, hint="h"), ValueError),
        (dict(answer=math.nan, tolerance=0.1, hint="h"), ValueError),
        (dict(answer="one", tolerance=0.1, hint="h"), TypeError),
        (dict(answer=1.0, tolerance=0.1, hint=""), ValueError),
        (
            dict(answer=1.0, tolerance=0.1, hint="h", slips=[(1.05, "too close")]),
            ValueError,
        ),
    ],
)
def test_numeric_rejects_bad_questions(kwargs, error):
    with pytest.raises(error):
        quiz.numeric("Q?", **kwargs)


def test_choice_needs_one_right_option_and_an_explanation_for_each():
    q = quiz.choice("Q?", [("a", True, "why a"), ("b", False, "why not b")])
    assert [a["correct"] for a in q["answers"]] == [True, False]
    assert q["answers"][1]["feedback"] == "Not quite. why not b"
    with pytest.raises(ValueError, match="exactly one"):
        quiz.choice("Q?", [("a", True, "x"), ("b", True, "y")])
    with pytest.raises(ValueError, match="no explanation"):
        quiz.choice("Q?", [("a", True, "x"), ("b", False, "")])
    with pytest.raises(ValueError, match="two options"):
        quiz.choice("Q?", [("a", True, "x")])


def _shown(key, questions) -> list:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    InteractiveShell.instance()  # display() needs a shell to publish to
    with capture_output() as captured:
        quiz.show(key, questions)
    return [o.data for o in captured.outputs]


def test_show_gives_a_stable_output_named_after_the_key():
    qs = [quiz.choice("Q?", [("a", True, "x"), ("b", False, "y")])]
    first, second = _shown("softmax", qs), _shown("softmax", qs)
    assert first == second and len(first) == 2
    html, script = first[0]["text/html"], first[1]["application/javascript"]
    assert html.startswith('<div id="attnquiz_softmax"')
    assert 'var questionsattnquiz_softmax=[{"question": "Q?"' in script
    # jupyterquiz's script runs where the page reaches it, with MathJax hidden from it
    # (so that it neither typesets too early nor fetches MathJax from a CDN); MathJax
    # typesets the questions once it has loaded
    assert script.index("(function (MathJax) {") < script.index("show_questions")
    assert "})(undefined);" in script and "typesetPromise([quiz])" in script
    # the page's additions (quiz.js) follow jupyterquiz's script, with the quiz's key:
    # options become buttons, number boxes get their visible prompt as label, a numeric
    # keyboard, a score and answers kept in the browser
    assert script.index("show_questions") < script.index('createElement("button")')
    assert (
        "prompt.htmlFor = box.id" in script
        and 'setAttribute("role", "status")' in script
        and 'setAttribute("inputmode", "decimal")' in script
        and "window.localStorage.setItem(STORE + quizKey" in script
        and '})(quiz, "softmax");' in script
    )
    assert "#attnquiz_softmax .MCOption:focus-visible" in html
    assert _shown("other", qs)[0]["text/html"].startswith('<div id="attnquiz_other"')
    with pytest.raises(ValueError):
        quiz.show("k", [])


def test_texts_are_markdown_with_mathematics_left_for_mathjax():
    q = quiz.choice(
        "Which token does `[CLS]` attend to, *fisherman* or $x_1 * y_2 < 3$?",
        [
            ("*fisherman*", True, "it scores **2**"),
            ("`[SEP]`", False, "see [the map](#m)"),
        ],
    )
    assert q["question"] == (
        "Which token does <code>[CLS]</code> attend to, <em>fisherman</em> or "
        "$x_1 * y_2 &lt; 3$?"
    )
    assert [a["answer"] for a in q["answers"]] == [
        "<em>fisherman</em>",
        "<code>[SEP]</code>",
    ]
    assert q["answers"][0]["feedback"] == "Correct. it scores <strong>2</strong>"
    assert q["answers"][1]["feedback"] == 'Not quite. see <a href="#m">the map</a>'
    n = quiz.numeric(
        "Entries for *n* = 2,048?", 2048.0**2, tolerance=0.5, hint="Square `n`."
    )
    assert n["question"].startswith("Entries for <em>n</em> = 2,048?")
    assert n["answers"][-1]["feedback"] == "Not yet. Square <code>n</code>."
    assert quiz.markdown("$$a_1 * b_1$$ and $c$") == "$$a_1 * b_1$$ and $c$"
    with pytest.raises(TypeError):
        quiz.markdown(3)


# --- the chapters' quizzes
# ----------------------------------------------------------------


@pytest.mark.parametrize("path", CHAPTER_NOTEBOOKS, ids=lambda p: p.stem)
def test_every_chapter_has_at_least_three_well_formed_questions(path):
    questions = stored_questions(path)
    assert len(questions) >= 3, path.name
    kinds = {q["type"] for q in questions}
    assert kinds <= {"numeric", "multiple_choice"}
    for q in questions:
        if q["type"] == "multiple_choice":
            assert sum(a["correct"] for a in q["answers"]) == 1, q["question"]
            assert len(q["answers"]) >= 2
            for a in q["answers"]:
                assert a["feedback"].startswith(
                    "Correct. " if a["correct"] else "Not quite. "
                )
                assert len(a["feedback"]) > 20, a  # an explanation, not a bare verdict
        else:
            lo, hi = _right_range(q)
            assert lo < hi
            wrong = [
                a for a in q["answers"] if a.get("type") == "range" and not a["correct"]
            ]
            for a in wrong:
                assert a["range"][1] <= lo or a["range"][0] >= hi, (q["question"], a)
            assert q["answers"][-1]["type"] == "default"
            assert len(q["answers"][-1]["feedback"]) > 15


def test_all_chapters_together_have_numeric_and_multiple_choice_questions():
    kinds = [q["type"] for p in NOTEBOOKS for q in stored_questions(p)]
    assert kinds.count("numeric") >= 12 and kinds.count("multiple_choice") >= 10


# Right answers worked out independently of attnlib (by hand, with math only).
_E = math.e
INDEPENDENT = {
    "word_in_context": 1.0,  # distinct vectors after equal-weight averaging
    "bottleneck": math.tanh(1 * 1 + 0.5 * 0),  # one tanh RNN step: x_1 = 1, h_0 = 0
    "softmax": math.exp(2)
    / (2 * math.exp(2) + _E + 1),  # fisherman, a 2nd key scoring 2
    "masks": 100 * 101 / 2,  # causal pairs, n = 100
    "order_and_position": math.cos(6 - 2),  # rotary score, d = 2: query at 6, key at 2
    "transformer_layer": -1.5 / math.sqrt(1.25),  # layer norm of [1..4]
    "cost": 24 * 1024**2 / (4 * 1024),  # 4 n^2 d = 24 n d^2 at n = 6 d, d = 1,024
    "benchmark_method": 6 / 2,  # load average per core
    "learned_and_computed": 0.5 * 1.0
    + 0.5 * 0.5,  # mean pooling with half the sequences decoyed
    "why_self_attention": 5 * 9,  # cross-attention weights, 5 targets x 9 sources
    "interpretability": 0.6
    * 0.05
    / (0.6 * 0.05 + 0.4 * 1.0),  # [CLS]'s share of the norm
    "interventions": math.log(999_999) - math.log(99),  # margin the adversary may spend
    "summary": 1.0,  # causal: first query
    "modern_decoder": 2 * 2048 / 3,  # SwiGLU width with the weights of 2 x 512 x 2048
}


@pytest.mark.parametrize("chapter, value", sorted(INDEPENDENT.items()))
def test_a_numeric_answer_per_chapter_agrees_with_an_independent_computation(
    chapter, value
):
    path = notebook(chapter)
    numeric = [q for q in stored_questions(path) if q["type"] == "numeric"]
    assert any(_right_range(q)[0] <= value <= _right_range(q)[1] for q in numeric), (
        chapter
    )


# --- slips the stored numeric questions diagnose (expert reads 4b, 6d) ----------------


def _judge(value: float, answers: list) -> dict:
    """As quiz.js judges: the right interval first, then the slips, each [lo, hi)."""
    ranges = [a for a in answers if a["type"] == "range"]
    for pool in (
        [a for a in ranges if a.get("correct")],
        [a for a in ranges if not a.get("correct")],
    ):
        for a in pool:
            if a["range"][0] <= value < a["range"][1]:
                return a
    return next((a for a in answers if a["type"] == "default"), {"feedback": ""})


def test_cost_crossover_question_names_the_mistake_behind_each_slip():
    d = 1024
    (q,) = [
        q
        for q in stored_questions(notebook("cost"))
        if q["type"] == "numeric" and _right_range(q)[0] <= 6 * d <= _right_range(q)[1]
    ]
    n = np.arange(1, 8 * d + 1)

    def meet(attention, dense):  # the n at which the two counts are equal
        return int(n[attention(n) == dense(n)][0])

    right = meet(lambda n: 4 * n**2 * d, lambda n: 24 * n * d**2)
    forgot_ffn = meet(lambda n: 4 * n**2 * d, lambda n: 8 * n * d**2)
    forgot_projections = meet(lambda n: 4 * n**2 * d, lambda n: 16 * n * d**2)
    only_qk = meet(lambda n: 2 * n**2 * d, lambda n: 8 * n * d**2)
    assert (right, forgot_ffn, forgot_projections, only_qk) == (6144, 2048, 4096, 4096)
    assert _judge(right, q["answers"]).get("correct")
    for slip, words in (
        (forgot_ffn, "feed-forward network"),
        (forgot_projections, "four projections"),
        (only_qk, "Q K^T"),
    ):
        verdict = _judge(slip, q["answers"])
        assert not verdict.get("correct") and words in verdict["feedback"], slip


def test_interpretability_share_question_diagnoses_dividing_by_the_other_terms():
    (q,) = [
        q
        for q in stored_questions(notebook("interpretability"))
        if q["type"] == "numeric" and "share of the delivered norm" in q["question"]
    ]
    share = 0.6 * 0.05 / (0.6 * 0.05 + 0.4 * 1.0)  # 0.0698
    for right in (share, round(share, 2)):
        assert _judge(right, q["answers"]).get("correct"), right
    slip = 0.6 * 0.05 / (0.4 * 1.0)  # [CLS]'s term over the other keys' terms only
    for typed in (slip, math.floor(slip * 100 + 0.5) / 100):  # 0.075, typed 0.08
        verdict = _judge(typed, q["answers"])
        assert not verdict.get("correct"), typed
        assert "other keys' terms only" in verdict["feedback"], typed


def test_cost_quiz_asks_about_lengths_where_the_default_tile_is_fixed():
    """Expert read 3a: the question whose tile size stays put as the sequence grows
    asks about lengths where attnlib's default tile really is the same."""
    from attnlib.core.tiled import default_block_sizes

    found = [
        re.search(r"grows from ([\d,]+) to ([\d,]+) tokens", q["question"])
        for q in stored_questions(notebook("cost"))
    ]
    [grows] = [m for m in found if m]
    low, high = (int(x.replace(",", "")) for x in grows.groups())
    assert low < high
    assert default_block_sizes(low, low) == default_block_sizes(high, high)
