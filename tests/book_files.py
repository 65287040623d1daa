"""Where the book's files are, read from ``_toc.yml`` (the one place that orders them).

``NOTEBOOKS``: every notebook page in reading order; ``CHAPTER_NOTEBOOKS``: those of the
numbered parts (the chapters proper); ``notebook("softmax")``: a chapter's notebook by
its topic; ``page("glossary")``: a Markdown page by its name.
"""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ROOT / "chapters"
TOC = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))


def _entries(numbered_only: bool = False) -> list[Path]:
    out = []
    for part in TOC["parts"]:
        if numbered_only and not part.get("numbered"):
            continue
        out += [ROOT / entry["file"] for entry in part["chapters"]]
    return out


def _with_suffix(stems: list[Path], suffix: str) -> list[Path]:
    return [s.with_suffix(suffix) for s in stems if s.with_suffix(suffix).exists()]


NOTEBOOKS = _with_suffix(_entries(), ".ipynb")
CHAPTER_NOTEBOOKS = _with_suffix(_entries(numbered_only=True), ".ipynb")
PAGES = _with_suffix(_entries(), ".md")


def notebook(topic: str) -> Path:
    """The notebook of the chapter named ``topic`` (its file's stem)."""
    [path] = [p for p in NOTEBOOKS if p.stem == topic]
    return path


def page(name: str) -> Path:
    """The Markdown page named ``name`` (its file's stem)."""
    [path] = [p for p in PAGES if p.stem == name]
    return path
