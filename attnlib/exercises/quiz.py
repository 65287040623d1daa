"""Self-check questions that a reader of the static website answers in the page.

A chapter builds its questions with :func:`numeric` and :func:`choice`, computing every
right answer with attnlib, and displays them with :func:`show`. :func:`show` hands them
to ``jupyterquiz`` (https://github.com/jmshea/jupyterquiz), which stores the questions
and their JavaScript in the cell's output: the built website then checks answers in the
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

Tag the cell ``remove-input`` (the reader sees the questions, not the code that computes
the answers) and ``quiz`` (the tests find it by this tag).
"""

from __future__ import annotations

import math
import re

import numpy as np

#: Colours of right and wrong feedback (Okabe-Ito blue and vermillion: colour-blind
#: safe).
COLORS = {
    "--jq-correct-color": "#0072B2",
    "--jq-incorrect-color": "#D55E00",
}


def _finite(x, what: str) -> float:
    try:
        value = float(x)
    except (TypeError, ValueError):
        raise TypeError(
            f"{what} must be a real number; got {type(x).__name__}"
        ) from None
    if not math.isfinite(value):
        raise ValueError(f"{what} must be finite; got {value}")
    return value


def _number(x: float) -> str:
    return f"{x:.6g}"


def numeric(
    question: str,
    answer,
    *,
    tolerance: float,
    slips=(),
    hint: str,
    explanation: str = "",
) -> dict:
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
    answers = [
        {
            "type": "range",
            "range": right,
            "correct": True,
            "feedback": ("Correct. " + explanation).strip(),
        }
    ]
    for slip in slips:
        wrong, diagnosis = slip[0], slip[1]
        w = _finite(wrong, "slip value")
        half = _finite(slip[2], "slip tolerance") if len(slip) > 2 else tol
        lo, hi = w - half, w + half
        if lo < right[1] and right[0] < hi:
            raise ValueError(f"slip {w} overlaps the right answer {value} +- {tol}")
        answers.append(
            {
                "type": "range",
                "range": [lo, hi],
                "correct": False,
                "feedback": f"Not yet. {diagnosis}",
            }
        )
    answers.append({"type": "default", "feedback": f"Not yet. {hint}"})
    return {
        "question": f"{question} (Accepted within ±{_number(tol)}.)",
        "type": "numeric",
        "answers": answers,
    }


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
        answers.append(
            {
                "answer": str(text),
                "correct": bool(correct),
                "feedback": prefix + explanation,
            }
        )
    return {"question": question, "type": "multiple_choice", "answers": answers}


def quiz_id(key: str) -> str:
    """The HTML id (and JavaScript identifier suffix) of the quiz named ``key``."""
    return "attnquiz_" + re.sub(r"\W", "_", key)


#: Runs jupyterquiz's script once the page has loaded and MathJax (if the page has it)
#: has started, so that jupyterquiz finds a complete MathJax 3, then makes the questions
#: usable with the keyboard and a screen reader (see :data:`_ACCESSIBLE`) and typesets
#: their maths at once (jupyterquiz itself waits half a second).
_DEFER = """(function () {{
  function run() {{
{script}
    var quiz = document.getElementById("{quiz_id}");
    if (quiz) {{
{accessible}
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

#: What jupyterquiz 2.9 leaves out for keyboard and screen-reader users (WCAG 2.1.1,
#: 2.4.7, 1.3.1, 4.1.2, 4.1.3), added to the questions it has drawn in ``quiz``:
#:
#: * a multiple-choice option is a ``<label>`` around a visually hidden radio button: only one
#:   option of a question was a Tab stop, Enter did nothing and the focus was invisible. The
#:   radio button is replaced by a ``<button>`` holding the option's text, so every option is a
#:   Tab stop and Enter or Space picks it (jupyterquiz's handler on the label still checks it);
#:   ``aria-pressed`` tells which option was picked; the options form a group named by the
#:   question;
#: * a number box had no label: jupyterquiz's visible prompt ("Type numeric answer here:")
#:   becomes its ``<label>``, and the question its description;
#: * the feedback is a live region (``role="status"``), so it is read out when it appears.
_ACCESSIBLE = """\
      quiz.querySelectorAll(".Quiz").forEach(function (wrap) {
        var question = wrap.querySelector("[id^=quizQn]");
        var feedback = wrap.querySelector(".Feedback");
        if (feedback) { feedback.setAttribute("role", "status"); }
        var box = wrap.querySelector("input.Input-text");
        var prompt = wrap.querySelector("label.InpLabel");
        if (box && prompt) { prompt.htmlFor = box.id; }
        if (box && question) { box.setAttribute("aria-describedby", question.id); }
        var options = wrap.querySelectorAll("label.MCButton");
        if (options.length && question) {
          options[0].parentElement.setAttribute("role", "group");
          options[0].parentElement.setAttribute("aria-labelledby", question.id);
        }
        options.forEach(function (option) {
          var radio = option.querySelector("input[type=radio]");
          if (radio) { radio.remove(); }
          var button = document.createElement("button");
          button.type = "button";
          button.className = "MCOption";
          button.setAttribute("aria-pressed", "false");
          while (option.firstChild) { button.appendChild(option.firstChild); }
          option.appendChild(button);
          // a click on the label's padding is checked once, not again through its button
          option.addEventListener("click", function (event) {
            if (event.target === option) { event.preventDefault(); }
          }, true);
          option.addEventListener("click", function () {
            options.forEach(function (other) {
              other.firstChild.setAttribute("aria-pressed", String(other === option));
            });
          });
        });
      });"""

#: Styles for what :data:`_ACCESSIBLE` adds: the option's button looks like the option
#: around it, and the focused option or number box has a visible outline (WCAG 2.4.7):
#: Okabe-Ito blue, 5.2:1 against white and above 3:1 against the dark theme, with a dark
#: ring inside an option.
_STYLE = """<style>
#{quiz_id} .MCButton {{ padding: 0; align-items: stretch; }}
#{quiz_id} .MCOption {{
  all: unset; box-sizing: border-box; flex: 1; display: flex; align-items: center;
  justify-content: center; padding: 10px; cursor: pointer; font: inherit; color: inherit;
  text-align: center;
}}
#{quiz_id} .MCOption:focus-visible, #{quiz_id} .Input-text:focus-visible {{
  outline: 3px solid #0072B2; outline-offset: 2px;
}}
#{quiz_id} .MCOption:focus-visible {{ box-shadow: inset 0 0 0 2px #1a1a1a; }}
</style>"""


def show(key: str, questions) -> None:
    """Display ``questions`` with jupyterquiz, with a stable output for the same
       questions.

    ``key`` names the quiz (e.g. ``"05-softmax"``); the quiz's HTML element gets the id
    :func:`quiz_id` ``(key)`` instead of jupyterquiz's random one, so re-running the
    cell stores the same output (nbval compares it). jupyterquiz's script is wrapped so
    that it runs after the page has loaded and MathJax has started (see :data:`_DEFER`).
    Options are shuffled in the browser each time the page is loaded.

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
        display_quiz(
            questions, shuffle_answers=True, colors=dict(COLORS), max_width=760
        )
    html = captured.outputs[0].data["text/html"]
    script = captured.outputs[1].data["application/javascript"]
    random_id = re.match(r'<div id="(\w+)"', html).group(1)
    new_id = quiz_id(key)
    html = html.replace(random_id, new_id)
    html = html.replace("<style>", _STYLE.format(quiz_id=new_id) + "<style>", 1)
    script = _DEFER.format(
        script=script.replace(random_id, new_id), quiz_id=new_id, accessible=_ACCESSIBLE
    )
    display(
        {"text/html": html, "text/plain": f"Self-check questions ({len(questions)})"},
        raw=True,
    )
    display(
        {
            "application/javascript": script,
            "text/plain": "(the script that checks the answers in the page)",
        },
        raw=True,
    )


def rounded(x, decimals: int = 4) -> float:
    """``x`` as a plain float rounded to ``decimals`` (stable across machines)."""
    return round(float(np.asarray(x, dtype=float)), decimals)
