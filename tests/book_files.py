"""Where the book's files are, read from ``_toc.yml`` (the one place that orders them).

``NOTEBOOKS``: every notebook page in reading order; ``CHAPTER_NOTEBOOKS``: those of the
numbered parts (the chapters proper); ``notebook("softmax")``: a chapter's notebook by
its topic; ``page("glossary")``: a Markdown page by its name.
"""

from __future__ import annotations

import importlib
import pkgutil
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


#: the chapters' folders (where each chapter's own modules live, beside its notebook;
#: tests/conftest.py puts them on sys.path)
CHAPTER_DIRS = sorted({p.parent for p in NOTEBOOKS})


def exercise_modules() -> list:
    """Every module of exercise checkers: each chapter's ``<name>_exercises.py`` and
    the shared ones in ``book_support.exercises`` (not the framework, not quiz)."""
    import book_support.exercises as shared

    names = sorted(p.stem for d in CHAPTER_DIRS for p in d.glob("*_exercises.py"))
    modules = [importlib.import_module(name) for name in names]
    for info in pkgutil.iter_modules(shared.__path__):
        if not info.name.startswith("_") and info.name != "quiz":
            modules.append(importlib.import_module(f"{shared.__name__}.{info.name}"))
    return modules


def chapter_module_names(*patterns: str) -> list[str]:
    """The names of the chapters' own modules whose file names match ``patterns``
    (``"*_explorer.py"``), importable once this module is loaded."""
    return sorted(
        p.stem for d in CHAPTER_DIRS for pattern in patterns for p in d.glob(pattern)
    )
