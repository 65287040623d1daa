"""Self-check questions on the built website (issue 15): every question of every chapter page
is answered once wrongly and once rightly in Chromium, with the network blocked, and the
feedback shown in the page is read.

The questions come from the chapters' quiz cells (attnlib.exercises.quiz, rendered by
jupyterquiz from the stored outputs). The wrong answer is a recognised slip where the
question has one (its diagnosis must appear), otherwise a value far from the answer (the
hint must appear); for a multiple-choice question every wrong option is tried once.
"""

from __future__ import annotations

import json
import re

import pytest
from sitepages import SITE, site_pages

# Generous: on a loaded 2-core machine a chapter page (MathJax and its fonts, figures)
# can take tens of seconds to fire "load"; the quiz script runs after it.
LOAD_TIMEOUT_MS = 120_000
QUIZ_PAGES = [
    p for p in site_pages() if re.search(r"(^|/)(0\d|1[0-2])[a-z]?_[a-z_]+\.html$", p)
]


def _feedback(wrapper) -> str:
    fb = wrapper.locator(".Feedback")
    fb.wait_for(state="visible", timeout=30000)
    return " ".join(fb.inner_text().split())


def _answer_numeric(wrapper, value: float) -> str:
    box = wrapper.locator("input.Input-text")
    box.fill(repr(value))
    box.press("Enter")
    return _feedback(wrapper)


def _midpoint(rng) -> float:
    return (rng[0] + rng[1]) / 2


@pytest.mark.parametrize("page_path", QUIZ_PAGES)
def test_every_question_answered_wrongly_then_rightly(context, site_url, page_path):
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    n_external = len(context.external_requests)
    page.goto(site_url + page_path, wait_until="load", timeout=LOAD_TIMEOUT_MS)
    html = (SITE / page_path).read_text(encoding="utf-8")
    expected = len(re.findall(r'"type": "(?:numeric|multiple_choice)"', html))
    assert expected >= 3, f"{page_path}: fewer than 3 self-check questions in the page"
    page.wait_for_function(
        f"() => document.querySelectorAll('.Quiz').length >= {expected}",
        timeout=LOAD_TIMEOUT_MS,
    )
    wrappers = page.locator(".Quiz")
    assert wrappers.count() == expected
    for i in range(expected):
        wrapper = wrappers.nth(i)
        wrapper.scroll_into_view_if_needed()
        question = " ".join(wrapper.inner_text().split())[:80]
        options = wrapper.locator("label.MCButton")
        if options.count():
            wrong = wrapper.locator('label.MCButton[data-correct="false"]')
            assert wrong.count() >= 1, question
            for j in range(wrong.count()):
                option = wrong.nth(j)
                option.click()
                text = _feedback(wrapper)
                assert text.startswith("Not quite."), (question, text)
                assert "incorrect" in wrapper.locator(".Feedback").get_attribute(
                    "class"
                )
            wrapper.locator('label.MCButton[data-correct="true"]').click()
            text = _feedback(wrapper)
            assert text.startswith("Correct."), (question, text)
        else:
            answers = json.loads(
                wrapper.locator("input.Input-text").get_attribute("data-answers")
            )
            right = next(a["range"] for a in answers if a.get("correct"))
            slips = [
                a for a in answers if a.get("type") == "range" and not a["correct"]
            ]
            if slips:
                text = _answer_numeric(wrapper, _midpoint(slips[0]["range"]))
                assert text.startswith("Not yet."), (question, text)
                first_words = " ".join(slips[0]["feedback"].split()[2:5])
                assert "$" in slips[0]["feedback"] or first_words in text, (
                    question,
                    text,
                )
            far = right[1] + 1000 * (right[1] - right[0]) + 1000
            text = _answer_numeric(wrapper, far)
            assert text.startswith("Not yet."), (question, text)
            assert "incorrect" in wrapper.locator(".Feedback").get_attribute("class")
            text = _answer_numeric(wrapper, _midpoint(right))
            assert text.startswith("Correct."), (question, text)
            assert (
                "correct" in wrapper.locator(".Feedback").get_attribute("class").split()
            )
    assert context.external_requests[n_external:] == [], (
        "the quiz requested another host"
    )
    assert errors == [], errors
    page.close()
