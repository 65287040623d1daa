"""Every benchmark script still imports and parses its command line, so that a
benchmark target (`make bench`, `make bench-lm`, `make bench-pages`) cannot break
unnoticed. Nothing here times anything: benchmarks measure, tests do not."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).parent / "benchmarks").glob("bench_*.py"))


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_there_are_benchmarks():
    names = {p.stem for p in BENCHMARKS}
    assert {"bench_attention", "bench_kv_cache", "bench_pages", "bench_live"} <= names


@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda p: p.stem)
def test_benchmark_script_imports_and_answers_help(path, capsys):
    module = _load(path)
    assert callable(module.main)
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    assert "usage" in capsys.readouterr().out.lower()
