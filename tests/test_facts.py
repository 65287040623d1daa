"""The facts checklist (tests/facts/*.yml) is honest: every value appears in its chapter."""
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
        for out in cell.get("outputs", []):
            if "text" in out:
                parts.append("".join(out["text"]))
            for mime in ("text/plain", "text/html", "text/markdown"):
                if mime in out.get("data", {}):
                    parts.append("".join(out["data"][mime]))
    return "\n".join(parts)


def _entries():
    for path in FACTS:
        for i, entry in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
            yield pytest.param(entry, id=f"{path.stem}-{i}")


@pytest.mark.parametrize("entry", list(_entries()))
def test_fact_is_shown_by_its_chapter(entry):
    notebook = ROOT / entry["chapter"]
    assert notebook.exists(), f"{entry['fact']}: chapter {entry['chapter']} does not exist"
    text = _outputs_text(notebook)
    missing = [s for s in entry["shows"] if str(s) not in text]
    assert not missing, f"{entry['fact']}: {entry['chapter']} outputs do not show {missing}"
