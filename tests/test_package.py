"""Tests of the package as a whole: its table of contents, its stated semantics, its
   docstrings.

The issue asks that ``help(attnlib)`` reads as a table of contents, that the semantics
are written in the package docstring, and that every public function documents shapes,
dtypes, errors raised and its source.
"""

import inspect
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

import attnlib
import book_support.figures
from attnlib.core import attention as attention_module
from attnlib.core import heads, masks, scores
from attnlib.core import softmax as softmax_module
from attnlib.data import examples

PACKAGE_DIR = pathlib.Path(attnlib.__file__).parent
CORE_MODULES = [
    softmax_module,
    scores,
    masks,
    attention_module,
    heads,
    book_support.figures,
    examples,
]


def public_functions(module):
    """The functions a module offers: its ``__all__``, or else every public function
    it defines."""
    names = getattr(module, "__all__", None) or [
        n for n in vars(module) if not n.startswith("_")
    ]
    return [
        obj
        for name, obj in vars(module).items()
        if name in names
        and inspect.isfunction(obj)
        and obj.__module__ == module.__name__
    ]


def test_every_module_is_listed_in_the_table_of_contents():
    # the module map: lines that start (after any indent) with one or more module names,
    # separated by commas, then at least two spaces and a description
    listed = set()
    for line in attnlib.__doc__.splitlines():
        m = re.match(r"^ *([a-z_]+/?(?:, [a-z_]+)*)\s{2,}\S", line)
        if m:
            listed |= {name.strip().rstrip("/") for name in m.group(1).split(",")}
    on_disk = {p.stem for p in PACKAGE_DIR.rglob("*.py") if not p.stem.startswith("_")}
    on_disk |= {p.parent.name for p in PACKAGE_DIR.rglob("*/__init__.py")}
    # exercises and explorers are listed as families, one line each
    on_disk -= {p.stem for p in (PACKAGE_DIR / "exercises").glob("*.py")}
    on_disk -= {p.stem for p in (PACKAGE_DIR / "figures" / "explorers").glob("*.py")}
    missing = sorted(on_disk - listed)
    assert not missing, (
        f"modules missing from attnlib's docstring (help(attnlib)): {missing}"
    )


def test_every_exported_name_exists_and_is_listed_in_the_docstring():
    for name in attnlib.__all__:
        assert hasattr(attnlib, name), name
    for module in CORE_MODULES:
        for fn in public_functions(module):
            assert fn.__name__ in attnlib.__doc__, (
                f"{fn.__name__} is not in help(attnlib)"
            )


@pytest.mark.parametrize(
    "phrase",
    [
        '``True`` means "may attend"',
        "TypeError",
        "all-zero weights and a zero output",
        "Masked keys never influence the output",
        "left or the right",
        "same result alone as inside a batch",
        "Heads never mix tokens",
        "large negative constant",
        "float16 inputs are upcast to float32",
        "naming both shapes",
        "not\n  divisible by the number of heads",
        'align="end"',
    ],
)
def test_the_package_docstring_states_the_semantics(phrase):
    assert phrase in attnlib.__doc__


@pytest.mark.parametrize("module", CORE_MODULES, ids=lambda m: m.__name__)
def test_every_core_module_has_a_docstring(module):
    assert module.__doc__ and len(module.__doc__.strip()) > 40


@pytest.mark.parametrize(
    "fn",
    [
        fn
        for m in CORE_MODULES
        for fn in public_functions(m)
        if fn.__name__ != "use_book_style"
    ],
    ids=lambda fn: fn.__name__,
)
def test_public_functions_document_shapes_errors_and_source(fn):
    doc = inspect.getdoc(fn) or ""
    assert "shape" in doc.lower(), f"{fn.__name__}: no shapes"
    assert "Raises" in doc or "Raises:" in doc or "raises" in doc, (
        f"{fn.__name__}: no errors"
    )
    assert "Source" in doc, f"{fn.__name__}: no source"
    assert re.search(r"\(\d{4}\)", doc), f"{fn.__name__}: the source has no year"


def test_classes_document_their_source():
    assert "Source" in heads.MultiHeadParams.__doc__


def test_worked_examples_are_read_only():
    for arr in (
        examples.BANK.query,
        examples.BANK.keys,
        examples.BANK.values,
        examples.MACHINE_LEARNING_ROCKS.scores,
        examples.DOT_PRODUCT_Q,
        examples.TWO_HEAD_SCORES,
    ):
        with pytest.raises(ValueError):
            arr[0] = 99.0
    assert examples.BANK.query[0] == np.sqrt(2.0)


def test_importing_attnlib_emits_no_warning():
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", "import attnlib, book_support.figures"],
        capture_output=True,
        text=True,
        cwd=PACKAGE_DIR.parent,
    )
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
