"""Print the book's contents in reading order, with each page's file: the order and the
numbers come from ``_toc.yml`` alone (the folders are named by topic, and ``ls`` sorts
them by name).

Usage: ``python tools/contents.py`` (or ``make contents``).
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def contents() -> list[str]:
    """One line per part and per page: the chapter number where the part is numbered."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    lines, number = [f"   {toc['root']}.md"], 0
    for part in toc["parts"]:
        lines.append(part["caption"])
        for entry in part["chapters"]:
            stem = entry["file"]
            suffix = ".ipynb" if (ROOT / f"{stem}.ipynb").is_file() else ".md"
            if part.get("numbered"):
                number += 1
                lines.append(f"{number:>3}  {stem}{suffix}")
            else:
                lines.append(f"     {stem}{suffix}")
    return lines


if __name__ == "__main__":
    print("\n".join(contents()))
