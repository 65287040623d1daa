"""Self-check questions on the built website (issues 15 and 27): on the visit of each
chapter page in QUIZ_PAGES (one chapter of each part in `make test`, every chapter with
BROWSER_MATRIX=full) on a phone (390 x 844, touch, light mode; conftest's ``visit``),
with the network blocked, every question is answered once wrongly and once rightly and
the feedback shown in the page is read.

The questions come from the chapters' quiz cells (book_support.exercises.quiz, rendered
by jupyterquiz from the stored outputs, with ``quiz.js``). The wrong answer is a
recognised slip where the question has one (its diagnosis must appear), otherwise a
value far from the answer (the hint must appear); for a multiple-choice question every
wrong option is tried once. A numeric question is also answered in the forms people
write numbers (with thousands separators, a decimal comma, as a percentage, with a
Unicode minus), each of which must be accepted; a text that is no number gets the hint
about the format; the feedback disappears when the answer is changed; the box asks for a
numeric keyboard. No text of a question or an option is raw Markdown, and the score
counts the right answers. After a reload every answer is shown again, and the chapter is
ticked in the list of chapters.
"""

from __future__ import annotations

import json
import re

import pytest
from sitepages import FULL_MATRIX, MATRIX_PAGES, SITE, register_check, site_pages

# Every chapter page with self-check questions (the chapters' pages were once named
# 01_*.html ...; they are chapters/<part>/<topic>/<topic>.html now, so the pages are
# found by the questions' markup). In `make test` the questions are answered on the
# pages checked in every profile (sitepages.MATRIX_PAGES, one chapter of each part);
# on every such page with BROWSER_MATRIX=full (`make test-all`).
ALL_QUIZ_PAGES = [
    p
    for p in site_pages()
    if p.startswith("chapters/") and 'id="attnquiz_' in (SITE / p).read_text("utf-8")
]
QUIZ_PAGES = [p for p in ALL_QUIZ_PAGES if FULL_MATRIX or p in MATRIX_PAGES]
PROFILE = "phone-light"
RAW_MARKDOWN = re.compile(r"(?<![\w*])\*[^*\s][^*]*\*(?!\w)|`[^`]+`|\*\*[^*]+\*\*")


def _feedback(wrapper) -> str:
    fb = wrapper.locator(".Feedback")
    fb.wait_for(state="visible", timeout=5000)
    return " ".join(fb.inner_text().split())


def _type(wrapper, text: str) -> str:
    box = wrapper.locator("input.Input-text")
    box.fill(text)
    box.press("Enter")
    return _feedback(wrapper)


def _midpoint(rng) -> float:
    return (rng[0] + rng[1]) / 2


def _written_forms(value: float) -> list[str]:
    """``value`` as people write it: thousands separators (comma, space), a decimal
    comma, a percentage, a Unicode minus. Only forms that mean ``value`` exactly."""
    forms = []
    if abs(value) >= 1000 and float(value).is_integer():
        forms += [f"{int(value):,}", f"{int(value):,}".replace(",", " ")]
    if not float(value).is_integer():
        text = f"{value:.6g}"
        if "e" not in text:
            forms.append(text.replace(".", ","))
            if 0 < abs(value) < 1:
                forms.append(f"{100 * value:.6g}%")
    if value < 0:
        forms.append(f"{value:.6g}".replace("-", "\u2212"))
    return forms


def _answer_every_question(tab, page_path) -> dict:
    found = {"problems": [], "questions": 0, "markdown": [], "score": ""}
    html = (SITE / page_path).read_text(encoding="utf-8")
    expected = len(re.findall(r'"type": "(?:numeric|multiple_choice)"', html))
    found["expected"] = expected
    wrappers = tab.locator("[id^='attnquiz_'] .Quiz")
    found["questions"] = wrappers.count()
    problems = found["problems"]
    for i in range(wrappers.count()):
        wrapper = wrappers.nth(i)
        wrapper.scroll_into_view_if_needed()
        text = " ".join(wrapper.inner_text().split())
        question = text[:80]
        found["markdown"] += RAW_MARKDOWN.findall(text)
        options = wrapper.locator("label.MCButton")
        if options.count():
            wrong = wrapper.locator('label.MCButton[data-correct="false"] button')
            if not wrong.count():
                problems.append(f"{question}: no wrong option")
            for j in range(wrong.count()):
                wrong.nth(j).tap()
                said = _feedback(wrapper)
                if not said.startswith("Not quite."):
                    problems.append(f"{question}: wrong option said {said!r}")
            wrapper.locator('label.MCButton[data-correct="true"] button').tap()
            said = _feedback(wrapper)
            if not said.startswith("Correct."):
                problems.append(f"{question}: right option said {said!r}")
            continue
        box = wrapper.locator("input.Input-text")
        if box.get_attribute("inputmode") != "decimal":
            problems.append(f"{question}: no numeric keyboard (inputmode)")
        answers = json.loads(box.get_attribute("data-answers"))
        right = next(a["range"] for a in answers if a.get("correct"))
        slips = [a for a in answers if a.get("type") == "range" and not a["correct"]]
        if slips:
            said = _type(wrapper, repr(_midpoint(slips[0]["range"])))
            first_words = " ".join(
                re.sub("<[^>]+>", "", slips[0]["feedback"]).split()[2:5]
            )
            if not said.startswith("Not yet.") or (
                "$" not in slips[0]["feedback"] and first_words not in said
            ):
                problems.append(f"{question}: the slip got {said!r}")
        far = right[1] + 1000 * (right[1] - right[0]) + 1000
        said = _type(wrapper, repr(far))
        if not said.startswith("Not yet.") or "incorrect" not in (
            wrapper.locator(".Feedback").get_attribute("class") or ""
        ):
            problems.append(f"{question}: a far answer got {said!r}")
        said = _type(wrapper, "abc")
        if "could not read that as a number" not in said:
            problems.append(f"{question}: 'abc' got {said!r}")
        value = _midpoint(right)
        for written in _written_forms(round(value, 6)):
            said = _type(wrapper, written)
            if not said.startswith("Correct."):
                problems.append(f"{question}: {written!r} got {said!r}")
        said = _type(wrapper, repr(value))
        if not said.startswith("Correct."):
            problems.append(f"{question}: the right answer got {said!r}")
        # changing the answer clears the verdict
        box.press_sequentially("7")
        if wrapper.locator(".Feedback").is_visible():
            problems.append(
                f"{question}: feedback still shown after the answer changed"
            )
        _type(wrapper, repr(value))
    found["score"] = tab.locator("[id^='attnquiz_'] .QuizScore p").first.inner_text()
    # every answer is kept: after a reload the questions show them, and the chapter is
    # ticked in the list of chapters
    tab.reload(wait_until="domcontentloaded")
    tab.wait_for_selector("[id^='attnquiz_'] .QuizScore", timeout=10000)
    found["after_reload"] = tab.evaluate(
        """() => ({score: document.querySelector("[id^='attnquiz_'] .QuizScore p")
                            .textContent,
                   right: document.querySelectorAll(
                     "[id^='attnquiz_'] .Feedback.correct").length,
                   ticked: Array.from(document.querySelectorAll(
                     ".bd-docs-nav a .reader-progress.done"))
                     .map(m => m.textContent)})"""
    )
    forget = tab.locator("[id^='attnquiz_'] button.QuizForget").first
    if forget.is_visible():
        forget.click()
    return found


def _quiz_check(tab, page_path) -> dict | None:
    if page_path not in QUIZ_PAGES:
        return None
    return _answer_every_question(tab, page_path)


register_check("quiz", _quiz_check, profiles=(PROFILE,), order=60)


@pytest.mark.parametrize("page_path", QUIZ_PAGES)
def test_every_question_answered_wrongly_then_rightly(visit, page_path):
    seen = visit(page_path, PROFILE)
    found = seen["quiz"]
    assert found["expected"] >= 3, f"{page_path}: fewer than 3 self-check questions"
    assert found["questions"] == found["expected"]
    assert found["problems"] == [], f"{page_path}:\n  " + "\n  ".join(found["problems"])
    assert found["markdown"] == [], f"{page_path}: raw Markdown {found['markdown']}"
    n = found["expected"]
    assert found["score"].startswith(f"Score: all {n} answered correctly"), found[
        "score"
    ]
    after = found["after_reload"]
    assert after["score"] == found["score"] and after["right"] == n, after
    assert "\u2713" in after["ticked"], f"{page_path}: not ticked in the list: {after}"
    assert seen["external_requests"] == [], "the quiz requested another host"
    assert seen["console_errors_after_checks"] == [], seen[
        "console_errors_after_checks"
    ]


def test_questions_are_found_on_the_site():
    """The pages with questions are found (the old file-name pattern matched none once
    the chapters moved), and in `make test` one chapter of each part is answered."""
    if not ALL_QUIZ_PAGES:
        pytest.skip(f"no built site at {SITE}")
    assert len(ALL_QUIZ_PAGES) >= 10, ALL_QUIZ_PAGES
    assert len(QUIZ_PAGES) >= 3, QUIZ_PAGES


def test_written_forms_mean_the_value():
    assert _written_forms(4194304.0) == ["4,194,304", "4 194 304"]
    assert _written_forms(0.7311) == ["0,7311", "73.11%"]
    assert _written_forms(-1.5) == ["-1,5", "\u22121.5"]
