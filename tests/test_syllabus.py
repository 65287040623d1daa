"""The syllabus's times are the measured ones (issue 29).

``tools/reading_time.py`` turns each chapter into minutes by one rule (words of prose,
visible code lines, core and stretch exercises; the rates and their source are in its
docstring) and writes them into the chapters' boxes,
``chapters/using_the_book/syllabus.md`` and ``chapters/for_instructors/instructors.md``.
This test recomputes the rule on the chapters as they are: when a chapter grows, its
time must follow (``python tools/reading_time.py --write``). It also checks the pages'
own arithmetic and that every page of the table of contents is listed once, in order.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "reading_time", REPO / "tools" / "reading_time.py"
)
rt = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rt)

SYLLABUS = (REPO / "chapters/using_the_book/syllabus.md").read_text(encoding="utf-8")
PAGES = [stem for _, stem in rt.toc_pages()]


def _section(title: str) -> str:
    start = SYLLABUS.index(f"## {title}")
    nxt = SYLLABUS.find("\n## ", start + 1)
    return SYLLABUS[start : nxt if nxt != -1 else None]


def _minutes(text: str) -> int:
    """'1 h 40' -> 100, '7 h 20 min' -> 440, '35 min' -> 35, '2 h' -> 120."""
    match = re.fullmatch(r"(?:(\d+) h)?\s*(?:(\d+)(?: min)?)?", text.strip())
    assert match and any(match.groups()), text
    hours, minutes = (int(g) if g else 0 for g in match.groups())
    return 60 * hours + minutes


TABLE = {
    m.group(1): int(m.group(2))
    for m in re.finditer(
        r"^\| \{doc\}`([\w/]+)` \|[^|]*\| (\d+) min \|$",
        _section("Chapters and time"),
        re.M,
    )
}


def test_minutes_parser_and_hours_printer():
    assert _minutes("1 h 40") == 100 and _minutes("7 h 20 min") == 440
    assert _minutes("35 min") == 35 and _minutes("2 h") == 120
    for total in (45, 60, 100, 835):
        assert _minutes(rt.hours(total)) == total


def test_the_rule_on_a_made_up_chapter():
    # 1,500 words at 150/min, 90 lines at 9/min, 2 core and 1 stretch exercise
    m = dict(words=1500, code_lines=90, core=2, stretch=1, figures=0, skim_words=0)
    assert rt.minutes(m) == 10 + 10 + 2 * 4 + 12
    assert rt.minutes({**m, "words": 1500 + 1500}) == rt.minutes(m) + 10


def test_every_page_of_the_toc_is_in_the_syllabus_in_order():
    assert "/chapters/why_attention/learning/learning" in PAGES and len(PAGES) >= 15
    assert list(TABLE) == PAGES


@pytest.mark.parametrize("path", sorted(rt.expected(), key=str), ids=lambda p: p.name)
def test_times_follow_the_rule(path):
    assert path.read_text(encoding="utf-8") == rt.expected()[path], (
        f"{path.name} disagrees with the measured rule: run "
        "`python tools/reading_time.py --write`"
    )


def test_total_is_the_sum():
    total = re.search(
        r"\*\*about ([\d h]+(?: min)?)\*\*", _section("Chapters and time")
    )
    assert _minutes(total.group(1)) == sum(TABLE.values())


def test_full_course_parts_cover_every_chapter_once_and_add_up():
    full = _section("Suggested paths").split("### The full course")[1]
    seen = []
    for match in re.finditer(r"\(about ([\d h]+(?: min)?)\): (.*?)\.\n", full, re.S):
        stems = re.findall(r"\{doc\}`([\w/]+)`", match.group(2))
        assert _minutes(match.group(1)) == sum(TABLE[s] for s in stems), match.group(0)
        seen += stems
    assert seen == PAGES


def test_one_hour_skim_fits_in_an_hour():
    skim = _section("Suggested paths").split("### The full course")[0]
    minutes = [
        int(m) for m in re.findall(r"^\| \{doc\}`[\w/]+` \| (\d+) min \|$", skim, re.M)
    ]
    assert 45 <= sum(minutes) <= 60 and len(minutes) >= 4
