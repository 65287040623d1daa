"""Self-check questions that a reader of the static website answers in the page.

A chapter builds its questions with :func:`numeric` and :func:`choice`, computing every right
answer with attnlib, and displays them with :func:`show`. :func:`show` hands them to
``jupyterquiz`` (https://github.com/jmshea/jupyterquiz), which stores the questions and
their JavaScript in the cell's output: the built website then checks answers in the
browser, with no kernel and nothing loaded from the network. Feedback is immediate: a
numeric answer within the tolerance is "Correct", a recognised slip gets its diagnosis,
any other answer a hint; each option of a multiple-choice question carries its own
explanation. Three lines add a question to a chapter::

    from attnlib.exercises import quiz
    quiz.show("05-softmax", [
        quiz.numeric("Weight of the score 1 in [1, 0]?", attnlib.softmax(np.array([1., 0.]))[0],
                     tolerance=1e-3, slips=[(73.11, "That is a percentage ...")]),
        quiz.choice("Which value does a stable softmax subtract?", [
            ("The maximum", True, "Every exponent is then <= 0."),
            ("The minimum", False, "Then the largest exponent is max - min, which can overflow."),
        ]),
    ])

Tag the cell ``remove-input`` (the reader sees the questions, not the code that computes the
answers) and ``quiz`` (the tests find it by this tag).
"""
from __future__ import annotations

import math
import re

import numpy as np

#: Colours of right and wrong feedback (Okabe-Ito blue and vermillion: colour-blind safe).
COLORS = {
    "--jq-correct-color": "#0072B2",
    "--jq-incorrect-color": "#D55E00",
}


def _finite(x, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a real number; got {type(x).__name__}") from None
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite; got {value}")
    return value


def _number(x: float) -> str:
    return f"{x:.6g}"


def numeric(question: str, answer, *, tolerance: float, slips=(), hint: str,
            explanation: str = "") -> dict:
    """A question answered with one number, right within ``tolerance``.

    Parameters
    ----------
    question : str (Markdown; ``$...$`` for maths)
    answer : real number, computed with attnlib by the caller
    tolerance : float > 0, half-width of the accepted interval ``[answer - tol, answer + tol]``
    slips : sequence of ``(wrong_value, diagnosis)`` or ``(wrong_value, diagnosis, tol)``: the
        results of typical mistakes. An answer within ``tol`` (default: ``tolerance``) of
        ``wrong_value`` gets the diagnosis. A slip that overlaps the right interval raises
        ``ValueError``.
    hint : str, the feedback for any other wrong answer (a hint, not the answer)
    explanation : str, added after "Correct." when the answer is right

    Returns
    -------
    dict in jupyterquiz's question format (``type: "numeric"``)

    Raises
    ------
    ValueError for a non-positive tolerance, an overlapping slip or an empty hint;
    TypeError for a non-numeric answer.
    """
    value = _finite(answer, "answer")
    tol = _finite(tolerance, "tolerance")
    if tol <= 0:
        raise ValueError(f"tolerance must be positive; got {tol}")
    if not hint:
        raise ValueError("a numeric question needs a hint for wrong answers")
    right = [value - tol, value + tol * (1 + 1e-9)]
    answers = [{"type": "range", "range": right, "correct": True,
                "feedback": ("Correct. " + explanation).strip()}]
    for slip in slips:
        wrong, diagnosis = slip[0], slip[1]
        w = _finite(wrong, "slip value")
        half = _finite(slip[2], "slip tolerance") if len(slip) > 2 else tol
        lo, hi = w - half, w + half
        if lo < right[1] and right[0] < hi:
            raise ValueError(f"slip {w} overlaps the right answer {value} +- {tol}")
        answers.append({"type": "range", "range": [lo, hi], "correct": False,
                        "feedback": f"Not yet. {diagnosis}"})
    answers.append({"type": "default", "feedback": f"Not yet. {hint}"})
    return {"question": f"{question} (Accepted within ±{_number(tol)}.)", "type": "numeric",
            "answers": answers}


def choice(question: str, options) -> dict:
    """A multiple-choice question with exactly one right option.

    Parameters
    ----------
    question : str
    options : sequence of ``(text, correct, explanation)``; every option, right or wrong,
        needs its explanation, shown when the reader picks it

    Returns
    -------
    dict in jupyterquiz's question format (``type: "multiple_choice"``)

    Raises
    ------
    ValueError unless exactly one option is correct, there are at least two options and every
    option has an explanation.
    """
    options = list(options)
    if len(options) < 2:
        raise ValueError("a multiple-choice question needs at least two options")
    if sum(bool(c) for _, c, _ in options) != 1:
        raise ValueError("exactly one option must be correct")
    answers = []
    for text, correct, explanation in options:
        if not explanation:
            raise ValueError(f"option {text!r} has no explanation")
        prefix = "Correct. " if correct else "Not quite. "
        answers.append({"answer": str(text), "correct": bool(correct),
                        "feedback": prefix + explanation})
    return {"question": question, "type": "multiple_choice", "answers": answers}


def quiz_id(key: str) -> str:
    """The HTML id (and JavaScript identifier suffix) of the quiz named ``key``."""
    return "attnquiz_" + re.sub(r"\W", "_", key)


#: Runs jupyterquiz's script once the page has loaded and MathJax (if the page has it) has
#: started, so that jupyterquiz finds a complete MathJax 3, then typesets the questions' maths
#: at once (jupyterquiz itself waits half a second).
_DEFER = """(function () {{
  function run() {{
{script}
    var quiz = document.getElementById("{quiz_id}");
    if (quiz) {{
      // jupyterquiz's number boxes have no label: name each one for screen readers
      quiz.querySelectorAll("input:not([aria-label])").forEach(function (box, i) {{
        box.setAttribute("aria-label", "Your answer, a number (box " + (i + 1) + ")");
      }});
    }}
    if (quiz && window.MathJax && window.MathJax.typesetPromise) {{
      window.MathJax.typesetPromise([quiz]);
    }}
  }}
  function ready() {{
    if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {{
      window.MathJax.startup.promise.then(run);
    }} else {{
      run();
    }}
  }}
  if (document.readyState === "complete") {{ ready(); }}
  else {{ window.addEventListener("load", ready); }}
}})();
"""


def show(key: str, questions) -> None:
    """Display ``questions`` with jupyterquiz, with a stable output for the same questions.

    ``key`` names the quiz (e.g. ``"05-softmax"``); the quiz's HTML element gets the id
    :func:`quiz_id` ``(key)`` instead of jupyterquiz's random one, so re-running the cell
    stores the same output (nbval compares it). jupyterquiz's script is wrapped so that it
    runs after the page has loaded and MathJax has started (see :data:`_DEFER`). Options are
    shuffled in the browser each time the page is loaded.

    Raises
    ------
    ValueError if ``questions`` is empty.
    """
    from IPython.display import display
    from IPython.utils.capture import capture_output
    from jupyterquiz import display_quiz

    questions = list(questions)
    if not questions:
        raise ValueError("a quiz needs at least one question")
    with capture_output(stdout=False, stderr=False) as captured:
        display_quiz(questions, shuffle_answers=True, colors=dict(COLORS), max_width=760)
    html = captured.outputs[0].data["text/html"]
    script = captured.outputs[1].data["application/javascript"]
    random_id = re.match(r'<div id="(\w+)"', html).group(1)
    new_id = quiz_id(key)
    html = html.replace(random_id, new_id)
    script = _DEFER.format(script=script.replace(random_id, new_id), quiz_id=new_id)
    display({"text/html": html, "text/plain": f"Self-check questions ({len(questions)})"},
            raw=True)
    display({"application/javascript": script,
             "text/plain": "(the script that checks the answers in the page)"}, raw=True)


def rounded(x, decimals: int = 4) -> float:
    """``x`` as a plain float rounded to ``decimals`` (stable across machines)."""
    return round(float(np.asarray(x, dtype=float)), decimals)
