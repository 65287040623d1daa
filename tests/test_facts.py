"""The facts checklist (tests/facts/*.yml) is honest: every value appears in its
   chapter.

``shows`` lists strings the chapter's stored outputs must contain (computed, so nbval
guards them); ``says`` lists strings its prose (markdown cells) must contain, for facts
that are statements rather than numbers.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FACTS = sorted((ROOT / "tests" / "facts").glob("*.yml"))


def _outputs_text(notebook: Path) -> str:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    parts = []
    for cell in nb["cells"]:
        previous = None
        for out in cell.get("outputs", []):
            if "text" in out:
                text = "".join(out["text"])
                if previous is not None and previous.get("name") == out.get("name"):
                    parts[-1] += text  # one print split in two messages by the kernel
                else:
                    parts.append(text)
                previous = out
                continue
            previous = None
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in out.get("data", {}):
                    parts.append("".join(out["data"][mime]))
    return "\n".join(parts)


def _markdown_text(notebook: Path) -> str:
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return "\n".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
    )


def _entries():
    for path in FACTS:
        for i, entry in enumerate(
            yaml.safe_load(path.read_text(encoding="utf-8")) or []
        ):
            yield pytest.param(entry, id=f"{path.stem}-{i}")


@pytest.mark.parametrize("entry", list(_entries()))
def test_fact_is_shown_by_its_chapter(entry):
    notebook = ROOT / entry["chapter"]
    assert notebook.exists(), (
        f"{entry['fact']}: chapter {entry['chapter']} does not exist"
    )
    text = _outputs_text(notebook)
    missing = [s for s in entry.get("shows", []) if str(s) not in text]
    assert not missing, (
        f"{entry['fact']}: {entry['chapter']} outputs do not show {missing}"
    )
    prose = " ".join(_markdown_text(notebook).split())  # line breaks do not matter
    unsaid = [s for s in entry.get("says", []) if " ".join(str(s).split()) not in prose]
    assert not unsaid, (
        f"{entry['fact']}: {entry['chapter']} prose does not say {unsaid}"
    )
    assert entry.get("shows") or entry.get("says"), f"{entry['fact']}: nothing to check"
