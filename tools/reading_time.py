"""How long each chapter takes a newcomer, by a measured rule, and the pages quoting it.

The rule (issue 29): a chapter's time is what a reader spends on

* its prose: the words of the markdown cells, folded solutions left out, at
  ``WORDS_PER_MINUTE``;
* its code: the visible, non-blank, non-comment lines of its code cells (cells whose
  input the website hides do not count), at ``CODE_LINES_PER_MINUTE``, reading and
  running;
* its exercises: ``CORE_MINUTES`` for each core exercise and ``STRETCH_MINUTES`` for
  each stretch exercise, attempted and checked,

rounded to the nearest 5 minutes. Where the rates come from: adults read English
non-fiction silently at 238 words a minute on average (Brysbaert 2019,
doi:10.1016/j.jml.2019.104047); studying technical prose with formulas is slower, and
150 words a minute, 9 code lines a minute and 4 minutes a core exercise reproduce the
times that a trial reader who knew Python and numpy but no deep learning took for the
old chapters 9 and 11 (75 and 90 minutes, issue 29). A stretch exercise counts three
core ones. The one-hour skim reads a chapter's opening box and its summary at the same
rate, plus a minute per figure.

Usage: ``python tools/reading_time.py`` prints the table; ``--write`` rewrites the
"**Time:** about N minutes" line of every chapter, the time tables and paths of
``chapters/using_the_book/syllabus.md`` and the module tables of
``chapters/for_instructors/instructors.md``;
``--check`` exits 1 when any of them disagrees with the rule (``tests/test_syllabus.py``
runs the same check).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
WORDS_PER_MINUTE = 150
CODE_LINES_PER_MINUTE = 9
CORE_MINUTES = 4
STRETCH_MINUTES = 12
FIGURE_SKIM_MINUTES = 1

_SOLUTION = re.compile(r"(`{3,4})\{solution\}.*?\n\1(?=\n|$)", re.S)
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
_HIDDEN = {"remove-input", "hide-input", "remove-cell"}
_TIME_LINE = re.compile(r"\*\*Time:\*\* about \d+ minutes")


def _words(markdown: str) -> int:
    text = _SOLUTION.sub(" ", markdown)
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]*\$", " x ", text, flags=re.S)  # a formula
    # a link to a page reads as its title; count the target's last name, not its path
    text = re.sub(r"\{doc\}`(?:[^`<]*<)?/?(?:[\w]+/)*(\w+)>?`", r" \1 ", text)
    return len(_WORD.findall(text))


def toc_pages() -> list[tuple[str, str]]:
    """(part caption, document) of every notebook the table of contents lists, in
    reading order; a document is its ``{doc}`` target
    (``/chapters/<part>/<topic>/<topic>``)."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    pages = []
    for part in toc["parts"]:
        for entry in part["chapters"]:
            path = ROOT / f"{entry['file']}.ipynb"
            if path.is_file():
                pages.append((part.get("caption", ""), "/" + entry["file"]))
    return pages


def _cells(stem: str) -> list[dict]:
    path = ROOT / f"{stem.lstrip('/')}.ipynb"
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))["cells"]
    md = ROOT / f"{stem.lstrip('/')}.md"
    return [{"cell_type": "markdown", "source": md.read_text(encoding="utf-8")}]


def measure(stem: str) -> dict:
    """Words of prose, visible code lines, core and stretch exercises, figures, and the
    words of the opening box and the summary, of one page."""
    m = dict(words=0, code_lines=0, core=0, stretch=0, figures=0, skim_words=0)
    cells = _cells(stem)
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            m["words"] += _words(source)
            m["core"] += len(
                re.findall(r"\{exercise\}[^\n]*\n(?::[^\n]*\n)*\*\*Core", source)
            )
            m["stretch"] += len(
                re.findall(r"\{exercise\}[^\n]*\n(?::[^\n]*\n)*\*\*Stretch", source)
            )
            summary = source.split("## Summary", 1)
            if i == 0:
                m["skim_words"] += _words(source.split(":::\n", 2)[0] + ":::")
            if len(summary) == 2:
                m["skim_words"] += _words(summary[1].split("\n## ", 1)[0])
            continue
        tags = set(cell.get("metadata", {}).get("tags", []))
        if cell.get("metadata", {}).get("mystnb", {}).get("figure"):
            m["figures"] += 1
        if tags & _HIDDEN:
            continue
        m["code_lines"] += sum(
            1
            for line in source.splitlines()
            if line.strip() and not line.strip().startswith("#")
        )
    return m


def minutes(m: dict) -> int:
    """The rule: reading, code and exercises, rounded to the nearest 5 minutes."""
    raw = (
        m["words"] / WORDS_PER_MINUTE
        + m["code_lines"] / CODE_LINES_PER_MINUTE
        + CORE_MINUTES * m["core"]
        + STRETCH_MINUTES * m["stretch"]
    )
    return max(5, 5 * round(raw / 5))


def skim_minutes(m: dict) -> int:
    """Opening box and summary read, figures looked at; rounded up to a minute."""
    return math.ceil(
        m["skim_words"] / WORDS_PER_MINUTE + FIGURE_SKIM_MINUTES * m["figures"]
    )


def hours(total: int) -> str:
    """100 -> '1 h 40', 60 -> '1 h', 45 -> '45 min'."""
    h, rest = divmod(total, 60)
    if not h:
        return f"{rest} min"
    return f"{h} h" if not rest else f"{h} h {rest:02d}"


# --- the pages that quote the times


def _chapter_texts() -> dict[Path, str]:
    """Every chapter notebook with its time line set by the rule (raw JSON text)."""
    out = {}
    for _, stem in toc_pages():
        path = ROOT / f"{stem.lstrip('/')}.ipynb"
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = _TIME_LINE.sub(
            f"**Time:** about {minutes(measure(stem))} minutes", text, 1
        )
        out[path] = new
    return out


def _row_time(row: str, times: dict) -> str:
    """A table row ``| ... {doc}`a`, {doc}`b` ... | T |``, T the sum of their times."""
    stems = re.findall(r"\{doc\}`([^`]+)`", row)
    total = sum(times[s] for s in stems if s in times)
    return re.sub(r"\| [^|]*\|$", f"| {hours(total)} |", row.rstrip())


def syllabus_text(times: dict, skims: dict, pages) -> str:
    path = ROOT / "chapters/using_the_book/syllabus.md"
    text = path.read_text(encoding="utf-8")
    old_rows = dict(
        re.findall(r"^\| \{doc\}`([\w/]+)` \| ([^|]*) \| \d+ min \|$", text, re.M)
    )
    rows = []
    for _, stem in pages:
        what = old_rows.get(stem, "").strip() or _title(stem)
        rows.append(f"| {{doc}}`{stem}` | {what} | {times[stem]} min |")
    total = sum(times.values())
    unit = "" if total % 60 == 0 else " min"
    table = (
        "| Chapter | You will learn to | Time |\n| --- | --- | --- |\n"
        + "\n".join(rows)
        + f"\n| **Total** | | **about {hours(total)}{unit}** |"
    )
    text = re.sub(
        r"\| Chapter \| You will learn to \| Time \|\n.*?\| \*\*Total\*\* \|[^\n]*",
        table.replace("\\", "\\\\"),
        text,
        flags=re.S,
    )
    # the skim: listed chapters keep their place, their times follow the rule
    text = re.sub(
        r"^\| \{doc\}`([\w/]+)` \| \d+ min \|$",
        lambda m: f"| {{doc}}`{m.group(1)}` | {skims[m.group(1)]} min |",
        text,
        flags=re.M,
    )
    # the full course: one session per part of the book
    parts: dict[str, list[str]] = {}
    for caption, stem in pages:
        parts.setdefault(caption, []).append(stem)
    sessions = [
        f"{i}. **{caption}** (about {hours(sum(times[s] for s in stems))}): "
        + ", ".join(f"{{doc}}`{s}`" for s in stems)
        + "."
        for i, (caption, stems) in enumerate(parts.items(), 1)
    ]
    text = re.sub(
        r"(### The full course\n\n).*?(\n\n## )",
        lambda m: (
            m.group(1) + "Read every chapter in order and do the exercises: about "
            f"{hours(total)}{unit}. The parts of the book are the stages; each is "
            "several sittings of about an hour.\n\n" + "\n".join(sessions) + m.group(2)
        ),
        text,
        flags=re.S,
    )
    return text


def instructors_text(times: dict) -> str:
    path = ROOT / "chapters/for_instructors/instructors.md"
    text = path.read_text(encoding="utf-8")
    out = []
    for line in text.splitlines():
        if line.startswith("| ") and "{doc}`" in line:
            line = _row_time(line, times)
        out.append(line)
    text = "\n".join(out) + ("\n" if text.endswith("\n") else "")
    for heading in re.findall(r"^### .*\(about [^)]*\)$", text, re.M):
        section = text.split(heading, 1)[1].split("\n### ", 1)[0]
        stems = {
            s
            for row in re.findall(r"^\| .*$", section, re.M)
            for s in re.findall(r"\{doc\}`([^`]+)`", row.split("|")[2])
        }
        total = sum(times[s] for s in stems if s in times)
        new = re.sub(
            r"\(about [^)]*? of student work\)|\(about [^),]*",
            lambda m: (
                f"(about {hours(total)} of student work)"
                if "student work" in m.group(0)
                else f"(about {hours(total)}"
            ),
            heading,
            count=1,
        )
        text = text.replace(heading, new)
    return text


def _title(stem: str) -> str:
    for cell in _cells(stem)[:1]:
        m = re.match(r"# (.+)", "".join(cell["source"]))
        if m:
            return m.group(1).strip()
    return stem


def expected() -> dict[Path, str]:
    """Every file the rule writes, with the text it should have."""
    pages = toc_pages()
    measured = {stem: measure(stem) for _, stem in pages}
    times = {s: minutes(m) for s, m in measured.items()}
    skims = {s: skim_minutes(m) for s, m in measured.items()}
    out = _chapter_texts()
    out[ROOT / "chapters/using_the_book/syllabus.md"] = syllabus_text(
        times, skims, pages
    )
    out[ROOT / "chapters/for_instructors/instructors.md"] = instructors_text(times)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    print(f"{'page':32} words code core stretch  time  skim")
    for _, stem in toc_pages():
        m = measure(stem)
        print(
            f"{stem:32} {m['words']:5} {m['code_lines']:4} {m['core']:4} "
            f"{m['stretch']:7} {minutes(m):5} {skim_minutes(m):5}"
        )
    stale = [
        p for p, text in expected().items() if p.read_text(encoding="utf-8") != text
    ]
    if args.write:
        for path, text in expected().items():
            path.write_text(text, encoding="utf-8")
        print("written:", ", ".join(p.name for p in stale) or "nothing to change")
        return 0
    if stale:
        print("disagree with the rule:", ", ".join(p.name for p in stale))
        return 1 if args.check else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
