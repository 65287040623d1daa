"""The syllabus agrees with the chapters: every chapter of the table of contents is listed, with
the time the chapter itself states at its top, and the total and the session times add up."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
SYLLABUS = (REPO / "chapters" / "syllabus.md").read_text(encoding="utf-8")
TOC = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
NUMBERED = [
    entry["file"].split("/")[-1]
    for part in TOC["parts"]
    for entry in part["chapters"]
    if re.match(r"\d\d[a-z]?_", entry["file"].split("/")[-1])
]


def _section(title: str) -> str:
    start = SYLLABUS.index(f"## {title}")
    nxt = SYLLABUS.find("\n## ", start + 1)
    return SYLLABUS[start : nxt if nxt != -1 else None]


def _minutes(text: str) -> int:
    """'1 h 40' -> 100, '7 h 20 min' -> 440, '35 min' -> 35."""
    match = re.fullmatch(r"(?:(\d+) h)?\s*(?:(\d+)(?: min)?)?", text.strip())
    assert match and any(match.groups()), text
    hours, minutes = (int(g) if g else 0 for g in match.groups())
    return 60 * hours + minutes


TABLE = {
    m.group(1): int(m.group(2))
    for m in re.finditer(
        r"^\| \{doc\}`(\d\d[a-z]?_\w+)` \|[^|]*\| (\d+) min \|$",
        _section("Chapters and time"),
        re.M,
    )
}


def _stated_time(stem: str) -> int | None:
    """Minutes from the chapter's own objectives box ('**Time:** about 35 minutes')."""
    path = REPO / "chapters" / f"{stem}.ipynb"
    if not path.is_file():
        return None
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"][:3]:
        match = re.search(r"Time:\**\s*about (\d+) minutes", "".join(cell["source"]))
        if match:
            return int(match.group(1))
    return None


def test_minutes_parser():
    assert _minutes("1 h 40") == 100
    assert _minutes("7 h 20 min") == 440
    assert _minutes("35 min") == 35


def test_every_chapter_of_the_toc_is_in_the_syllabus():
    assert len(NUMBERED) == 14
    assert list(TABLE) == NUMBERED


@pytest.mark.parametrize("stem", NUMBERED)
def test_time_matches_the_chapter(stem):
    stated = _stated_time(stem)
    if stated is None:
        pytest.skip(f"{stem} does not exist yet or states no time")
    assert TABLE[stem] == stated, (
        f"syllabus says {TABLE[stem]} min, {stem} says {stated} min"
    )


def test_total_is_the_sum():
    total = re.search(
        r"\*\*about (\d+ h \d+ min)\*\*", _section("Chapters and time")
    ).group(1)
    assert _minutes(total) == sum(TABLE.values())


def test_full_course_sessions_cover_every_chapter_once_and_add_up():
    full = _section("Suggested paths").split("### The full course")[1]
    seen = []
    for match in re.finditer(r"\(about ([\d h]+)\): (.*?)\.\n", full, re.S):
        stems = re.findall(r"\{doc\}`(\d\d[a-z]?_\w+)`", match.group(2))
        assert _minutes(match.group(1)) == sum(TABLE[s] for s in stems), match.group(0)
        seen += stems
    assert seen == NUMBERED


def test_one_hour_skim_takes_one_hour():
    skim = _section("Suggested paths").split("### The full course")[0]
    minutes = [
        int(m)
        for m in re.findall(r"^\| \{doc\}`\d\d[a-z]?_\w+` \| (\d+) min \|$", skim, re.M)
    ]
    assert sum(minutes) == 60 and len(minutes) >= 4
