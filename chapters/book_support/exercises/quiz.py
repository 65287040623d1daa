"""Self-check questions that a reader of the static website answers in the page.

A chapter builds its questions with :func:`numeric` and :func:`choice`, computing every
right answer with attnlib, and displays them with :func:`show`. :func:`show` hands them
to ``jupyterquiz`` (https://github.com/jmshea/jupyterquiz), which stores the questions
and their JavaScript in the cell's output: the built website then checks answers in the
browser, with no kernel and nothing loaded from the network. Feedback is immediate: a
numeric answer within the tolerance is "Correct", a recognised slip gets its diagnosis,
any other answer a hint; each option of a multiple-choice question carries its own
explanation. Three lines add a question to a chapter::

    from book_support.exercises import quiz
    quiz.show("softmax", [
        quiz.numeric("Weight of the score 1 in [1, 0]?",
                     attnlib.softmax(np.array([1., 0.]))[0],
                     tolerance=1e-3, slips=[(73.11, "That is a percentage ...")]),
        quiz.choice("Which value does a stable softmax subtract?", [
            ("The maximum", True, "Every exponent is then <= 0."),
            ("The minimum", False,
             "Then the largest exponent is max - min, which can overflow."),
        ]),
    ])

Tag the cell ``remove-input`` (the reader sees the questions, not the code that computes
the answers) and ``quiz`` (the tests find it by this tag).

Questions, options, hints and explanations are Markdown (``*word*``, ```code```, links)
with ``$...$`` for mathematics; they are turned into HTML here (markdown-it-py, the
parser the book's pages are built with), since jupyterquiz shows its texts as HTML. What
the page adds to jupyterquiz (numbers written with thousands separators, a decimal comma
or a percent sign; feedback cleared when the answer changes; a score; answers kept in
the browser; keyboard and screen-reader use) is in ``quiz.js`` next to this file, which
:func:`show` puts into the cell's output.
"""

from __future__ import annotations

import json
import math
import re
from importlib import resources

import numpy as np

#: jupyterquiz's colours, as the website's theme variables (pydata-sphinx-theme's, with
#: the values of its light theme where they are not defined, e.g. in Jupyter): the
#: questions sit on the page's surface colour in its text colour, in light and in dark
#: mode. Right and wrong feedback are Okabe-Ito colours (colour-blind safe) chosen per
#: theme by the site's style sheet (``--attn-quiz-right`` and ``--attn-quiz-wrong``):
#: blue #0072B2 (5.2:1 on white) and a darker vermillion #B34D00 (5.3:1; the palette's
#: #D55E00 has 3.9:1) in light mode, sky blue and orange (7.7:1 and 7.9:1) in dark mode.
COLORS = {
    "--jq-multiple-choice-bg": "var(--pst-color-surface, #f3f4f5)",
    "--jq-numeric-bg": "var(--pst-color-surface, #f3f4f5)",
    "--jq-mc-button-bg": "var(--pst-color-background, #ffffff)",
    "--jq-mc-button-border": "var(--pst-color-border, #d1d5da)",
    "--jq-numeric-input-bg": "var(--pst-color-background, #ffffff)",
    "--jq-numeric-input-label": "var(--pst-color-text-base, #222832)",
    "--jq-text-color": "var(--pst-color-text-base, #222832)",
    "--jq-link-color": "var(--pst-color-link, #0a7d91)",
    "--jq-correct-color": "var(--attn-quiz-right, #0072B2)",
    "--jq-incorrect-color": "var(--attn-quiz-wrong, #B34D00)",
}

_MATH = re.compile(r"\$\$.+?\$\$|\$[^$]+\$", re.S)


def markdown(text: str) -> str:
    """Inline Markdown as HTML, with ``$...$`` and ``$$...$$`` left as typed for
    MathJax.

    ``"*bank* scores `0`"`` becomes ``"<em>bank</em> scores <code>0</code>"``. The
    mathematics is set aside before the Markdown is parsed (so that ``_`` and ``*``
    inside it are not read as emphasis) and put back with ``<``, ``>`` and ``&``
    escaped. Returns a str; raises TypeError for a non-string.
    """
    if not isinstance(text, str):
        raise TypeError(
            f"a question's text must be a string; got {type(text).__name__}"
        )
    from markdown_it import MarkdownIt

    maths: list[str] = []

    def keep(match):
        maths.append(match.group(0))
        return f"\ue000{len(maths) - 1}\ue001"

    html = MarkdownIt("commonmark").renderInline(_MATH.sub(keep, text))
    return re.sub(
        "\ue000(\\d+)\ue001",
        lambda m: (
            maths[int(m.group(1))]
            .replace("&", "&amp;")
            .replace("<", "&lt;")
            .replace(">", "&gt;")
        ),
        html,
    )


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
    tolerance : float > 0, half-width of the accepted interval
        ``[answer - tol, answer + tol]``
    slips : sequence of ``(wrong_value, diagnosis)`` or ``(wrong_value, diagnosis,
        tol)``: the results of typical mistakes. An answer within ``tol`` (default:
        ``tolerance``) of ``wrong_value`` gets the diagnosis. A slip that overlaps the
        right interval raises ``ValueError``.
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
            "feedback": markdown(("Correct. " + explanation).strip()),
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
                "feedback": markdown(f"Not yet. {diagnosis}"),
            }
        )
    answers.append({"type": "default", "feedback": markdown(f"Not yet. {hint}")})
    return {
        "question": markdown(f"{question} (Accepted within ±{_number(tol)}.)"),
        "type": "numeric",
        "answers": answers,
    }


def choice(question: str, options) -> dict:
    """A multiple-choice question with exactly one right option.

    Parameters
    ----------
    question : str
    options : sequence of ``(text, correct, explanation)``; every option, right or
        wrong, needs its explanation, shown when the reader picks it

    Returns
    -------
    dict in jupyterquiz's question format (``type: "multiple_choice"``)

    Raises
    ------
    ValueError unless exactly one option is correct, there are at least two options and
    every option has an explanation.
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
                "answer": markdown(str(text)),
                "correct": bool(correct),
                "feedback": markdown(prefix + explanation),
            }
        )
    return {
        "question": markdown(question),
        "type": "multiple_choice",
        "answers": answers,
    }


def quiz_id(key: str) -> str:
    """The HTML id (and JavaScript identifier suffix) of the quiz named ``key``."""
    return "attnquiz_" + re.sub(r"\W", "_", key)


#: Runs jupyterquiz's script as soon as the page reaches it (the questions' element is
#: just above), then the page's additions (``quiz.js``: keyboard and screen readers,
#: numbers in the forms people write them, a score, answers kept in the browser).
#: jupyterquiz does not see MathJax (its name is hidden from it): left to itself it
#: typesets half a second later and, finding MathJax 3 not yet loaded, fetches another
#: copy from a CDN. Instead the questions are typeset once MathJax has loaded and
#: typeset the page (the page's own pass skips notebook outputs), or at once if it has
#: already (in Jupyter), and the feedback when it is shown (``quiz.js``). So the
#: questions can be answered before the page's images and fonts have loaded, instead of
#: after its load event.
_DEFER = """(function () {{
  var quiz = document.getElementById("{quiz_id}");
  (function (MathJax) {{
{script}
    if (quiz) {{
      (function (quiz, quizKey) {{
{additions}
      }})(quiz, {key});
    }}
  }})(undefined);
  function typeset() {{
    var mathJax = window.MathJax;
    if (quiz && mathJax && mathJax.startup && mathJax.startup.promise) {{
      mathJax.startup.promise.then(function () {{
        return mathJax.typesetPromise([quiz]);
      }});
    }}
  }}
  if (document.readyState === "loading") {{
    document.addEventListener("DOMContentLoaded", typeset);
  }} else {{
    typeset();
  }}
}})();
"""


def _additions() -> str:
    """The page's additions to jupyterquiz (``quiz.js`` next to this module)."""
    return (
        resources.files("book_support.exercises").joinpath("quiz.js").read_text("utf-8")
    )


#: Styles for what ``quiz.js`` adds and for jupyterquiz's parts that the theme's colours
#: do not reach: an option's button looks like the option around it; the focused option,
#: number box or button has a visible outline (WCAG 2.4.7) in the link colour; the
#: option's text follows the theme (jupyterquiz fixes it to #333, unreadable on a dark
#: page); the question is the size of the text around it, with its code in the page's
#: code style; the Check and "Forget my answers" buttons and the score.
_STYLE = """<style>
#{quiz_id} .Quiz {{ font-size: 1.05rem; line-height: 1.45; }}
#{quiz_id} .Quiz code {{ background: var(--pst-color-surface, #f3f4f5);
  color: var(--pst-color-inline-code, #912583); }}
#{quiz_id} .MCButton {{ padding: 0; align-items: stretch;
  color: var(--jq-text-color); }}
#{quiz_id} .MCOption {{
  all: unset; box-sizing: border-box; flex: 1; display: flex; align-items: center;
  justify-content: center; padding: 10px; cursor: pointer; font: inherit;
  color: inherit; text-align: center;
}}
#{quiz_id} .MCOption:focus-visible, #{quiz_id} .Input-text:focus-visible,
#{quiz_id} button.QuizCheck:focus-visible, #{quiz_id} button.QuizForget:focus-visible {{
  outline: 3px solid var(--pst-color-link, #0a7d91); outline-offset: 2px;
}}
#{quiz_id} .Input-text {{ display: inline-block; margin: 10px 8px 10px 0;
  border: 1px solid var(--pst-color-border, #d1d5da); font-size: 1.1rem; }}
#{quiz_id} .InpLabel {{ display: block; font-size: 1rem; }}
#{quiz_id} .Answer:has(.Input-text) {{ display: block; }}
#{quiz_id} button.QuizCheck, #{quiz_id} button.QuizForget {{
  font: inherit; padding: 6px 14px; border-radius: 0.25rem; cursor: pointer;
  border: 1px solid var(--pst-color-border, #d1d5da);
  background: var(--pst-color-background, #ffffff); color: var(--jq-text-color);
}}
#{quiz_id} .Feedback {{ font-size: 1rem; line-height: 1.45; text-align: left;
  padding: 0 4px; }}
#{quiz_id} .QuizScore {{ display: flex; flex-wrap: wrap; align-items: center; gap: 12px;
  margin-top: 16px; }}
#{quiz_id} .QuizScore p {{ margin: 0; font-weight: 600; }}
</style>"""


def show(key: str, questions) -> None:
    """Display ``questions`` with jupyterquiz, with a stable output for the same
       questions.

    ``key`` names the quiz (e.g. ``"softmax"``); the quiz's HTML element gets the id
    :func:`quiz_id` ``(key)`` instead of jupyterquiz's random one, so re-running the
    cell stores the same output (nbval compares it). jupyterquiz's script is wrapped
    with the page's additions (see :data:`_DEFER`).
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
        script=script.replace(random_id, new_id),
        quiz_id=new_id,
        key=json.dumps(key),
        additions=_additions(),
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
