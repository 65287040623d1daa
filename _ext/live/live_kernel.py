"""The page's Python: runs a chapter's code cells as a Jupyter kernel would.

Loaded inside Pyodide (in the browser's worker, ``worker.mjs``, and under Node for the
tests, ``node_run.mjs``). One IPython shell per page: cells share its namespace, the
value of a cell's last line is displayed with IPython's formatters (pandas tables as
HTML, matplotlib figures as PNG through ``matplotlib_inline``, as in ipykernel),
``display()`` works, and an exception shows IPython's traceback. Every output is sent
to JavaScript as one JSON message through the function given to :func:`start`, in the
order the cell produced it: ``stream`` (``name``, ``text``), ``display`` and
``result`` (``data``: MIME type -> content, as in a notebook's outputs), ``error``
(``ename``, ``evalue``, ``traceback``) and ``clear``.

The pretrained model's files (``_live/model.json`` in the book's archive names them,
``build_live.py``) appear in ``MODEL_DIR`` as files that Emscripten fetches from the
website the first time Python reads them, and ``ATTNLIB_MINILM_DIR`` points
attnlib.models.minilm there: nothing is downloaded until a cell reads the model, and
the first read of the weights says its size on stderr before it loads. Once the files
have been downloaded, the page's worker keeps them in the browser's Cache Storage and
replaces them with links into ``MODEL_KEPT`` (``worker.mjs``): later visits read them
from there, and the first read then says so instead.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

BOOK = "/home/pyodide/book"
MODEL_DIR = f"{BOOK}/_model"
# where the page's worker puts the copies the browser kept (worker.mjs, keptModel)
MODEL_KEPT = f"{BOOK}/_live/kept"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_emit = None
_shell = None


def _send(message: dict) -> None:
    _emit(json.dumps(message))


def _json_safe(data: dict) -> dict:
    """A bundle as JSON: text stays text, bytes (a PNG) become base64, as in .ipynb."""
    import base64

    safe = {}
    for mime, value in data.items():
        if isinstance(value, bytes):
            value = base64.b64encode(value).decode("ascii")
        elif not isinstance(value, (str, dict, list)):
            value = str(value)
        safe[mime] = value
    return safe


class _Stream:
    """``sys.stdout`` / ``sys.stderr`` of the page: each write becomes a message."""

    encoding = "utf-8"
    errors = "strict"

    def __init__(self, name: str):
        self.name = name

    def write(self, text: str) -> int:
        if text:
            _send({"type": "stream", "name": self.name, "text": text})
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


def _make_shell():
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher
    from IPython.core.interactiveshell import InteractiveShell

    class Publisher(DisplayPublisher):
        def publish(self, data, metadata=None, source=None, **kwargs):
            _send(
                {
                    "type": "display",
                    "data": _json_safe(data),
                    "metadata": metadata or {},
                }
            )

        def clear_output(self, wait=False):
            _send({"type": "clear", "wait": wait})

    class Hook(DisplayHook):
        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            _send(
                {
                    "type": "result",
                    "data": _json_safe(format_dict),
                    "metadata": md_dict or {},
                }
            )

        def finish_displayhook(self):
            pass

    class Shell(InteractiveShell):
        # Libraries ask whether they run in a Jupyter kernel by this attribute (pandas
        # then sizes tables for a notebook, not for a terminal's width, as in Jupyter).
        kernel = None

        def _showtraceback(self, etype, evalue, stb):
            _send(
                {
                    "type": "error",
                    "ename": getattr(etype, "__name__", str(etype)),
                    "evalue": str(evalue),
                    "traceback": [_ANSI.sub("", line) for line in stb],
                }
            )

    return Shell.instance(
        displayhook_class=Hook, display_pub_class=Publisher, colors="NoColor"
    )


def start(emit, folder: str = "chapters") -> None:
    """Start the page's shell; ``emit(json_text)`` receives every output message.

    The working folder is the page's own folder (``folder``, e.g.
    ``chapters/how_attention_works/softmax``) in a copy of the repository's layout
    (``attnlib/``, ``chapters/book_support/``, each chapter's modules and data), as when
    a notebook runs in Jupyter from a clone: the chapter's own modules import and its
    relative paths work unchanged; ``book_support`` imports from ``chapters/``.
    """
    global _emit, _shell
    _forget_listings()
    _emit = emit
    # ipykernel's backend: figures are shown as PNG under the cell that drew them.
    os.environ["MPLBACKEND"] = "module://matplotlib_inline.backend_inline"
    enter(folder)
    sys.stdout, sys.stderr = _Stream("stdout"), _Stream("stderr")
    _serve_model()
    _shell = _make_shell()


# Called first by start(), after this module was imported: its own imports above must
# stay in the standard library (read from its zip, which the images did not change).
def _forget_listings() -> None:
    """What ``importlib.invalidate_caches()`` does, for the folders the page's worker
    has written files into since Python started (started from scratch, it listed
    site-packages before the packages' image was written), but without rereading the
    directory of every zip on ``sys.path`` (the standard library's, which never
    changes: zipimport reads it in Python, 0.1-0.3 s here): as
    ``PathFinder.invalidate_caches`` in Python 3.12 does, for the folders only (and
    without its epoch of namespace packages' paths: the snapshot imports none)."""
    import importlib.machinery

    for path, finder in list(sys.path_importer_cache.items()):
        if finder is None or not os.path.isabs(path):
            del sys.path_importer_cache[path]
        elif isinstance(finder, importlib.machinery.FileFinder):
            finder.invalidate_caches()
    if "importlib.metadata" in sys.modules:
        sys.modules["importlib.metadata"].MetadataPathFinder.invalidate_caches()


def _serve_model() -> None:
    """The model's files in ``MODEL_DIR``, fetched from the website when first read
    (``FS.createLazyFile``: a synchronous request, which a Web Worker may make; under
    Node a read of the built folder)."""
    spec_path = f"{BOOK}/_live/model.json"
    if not os.path.isfile(spec_path):
        return
    import pyodide_js

    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    os.makedirs(MODEL_DIR, exist_ok=True)
    # Pyodide's own folder (a URL in the browser, a path under Node) is <live>/pyodide/
    live = str(pyodide_js._api.config.indexURL).rstrip("/").rsplit("/", 1)[0]
    under_node = not live.startswith(("http:", "https:"))
    if under_node:  # the built folder itself, read in place (a lazy file needs XHR)
        mounted = f"{BOOK}/_live/served"
        os.makedirs(mounted, exist_ok=True)
        from js import Object
        from pyodide.ffi import to_js

        root = to_js({"root": live}, dict_converter=Object.fromEntries)
        pyodide_js.FS.mount(pyodide_js.FS.filesystems.NODEFS, root, mounted)
    for name, entry in spec["files"].items():
        if os.path.lexists(f"{MODEL_DIR}/{name}"):
            continue
        if under_node:
            os.symlink(f"{mounted}/{entry['path']}", f"{MODEL_DIR}/{name}")
        else:
            url = f"{live}/{entry['path']}"
            pyodide_js.FS.createLazyFile(MODEL_DIR, name, url, True, False)
    os.environ["ATTNLIB_MINILM_DIR"] = MODEL_DIR
    weights = f"{MODEL_DIR}/model.safetensors"
    megabytes = spec["files"]["model.safetensors"]["bytes"] / 1e6
    announced = []

    def announce(event, args):
        if event != "open" or announced or not isinstance(args[0], (str, Path)):
            return
        if os.fspath(args[0]) == weights:
            announced.append(True)
            if os.path.realpath(weights).startswith(MODEL_KEPT + "/"):
                sys.stderr.write(
                    f"Loading the pretrained model {spec['name']} from this "
                    "browser's storage ...\n"
                )
                return
            sys.stderr.write(
                f"Loading the pretrained model {spec['name']} from the website: "
                f"{megabytes:.0f} MB, once for this page ...\n"
            )

    sys.addaudithook(announce)


def enter(folder: str) -> None:
    """Work in ``folder`` (relative to the repository's copy) as Jupyter runs a
    notebook there: it is the working folder and importable, beside attnlib and
    ``chapters/`` (book_support)."""
    for path in (BOOK, f"{BOOK}/chapters", f"{BOOK}/{folder}"):
        if path not in sys.path:
            sys.path.insert(0, path)
    # a chapter's folder may hold nothing but its notebook, which the book's archive
    # leaves out (build_live.py): make it, as a clone has it
    os.makedirs(f"{BOOK}/{folder}", exist_ok=True)
    os.chdir(f"{BOOK}/{folder}")


def run(code: str) -> bool:
    """Run one cell; ``True`` if it raised nothing."""
    result = _shell.run_cell(code, store_history=True)
    return bool(result.success)


def warm(sources: list[str]) -> list[str]:
    """Import, in silence, the modules that the page's cells (``sources``) import from
    outside the page's own folder (numpy, pandas, matplotlib, attnlib, book_support...),
    so that the first cell the reader runs finds them imported. Called by the page's
    worker once Python is ready, while the reader reads; a module that cannot be
    imported is left for its cell to report. Returns the modules imported."""
    import ast
    import importlib
    import importlib.util

    names: list[str] = []
    for source in sources:
        try:
            tree = ast.parse(_shell.transform_cell(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.append(node.module)
    here = os.getcwd() + os.sep
    done = []
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = _Silent()
    # as inside a cell: get_ipython() is a builtin there, and pandas, for one, reads
    # it when imported to choose its table layout (a notebook's, not a terminal's)
    trap = _shell.builtin_trap
    trap.__enter__()
    try:
        for name in dict.fromkeys(names):
            try:
                spec = importlib.util.find_spec(name.split(".")[0])
                if spec is None or (spec.origin or "").startswith(here):
                    continue  # not installed, or the chapter's own module
                importlib.import_module(name)
                done.append(name)
            except Exception:  # noqa: BLE001 - the cell that imports it will say why
                pass
    finally:
        trap.__exit__(None, None, None)
        sys.stdout, sys.stderr = saved
    return done


class _Silent:
    """Where :func:`warm` sends what an import prints."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
