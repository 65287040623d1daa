// Starts the page's Python: Pyodide, the packages every chapter imports, the book's
// files and the kernel (live_kernel.py). Shared by worker.mjs (in the browser) and
// node_run.mjs (the tests and the build, under Node), so both start Python the same way.
//
// boot({loadPyodide, base, readBytes, progress, emit, folder, prepare, snapshot})
// (folder: the page's folder in the repository, where its cells run; default
// "chapters"):
//   loadPyodide  the function exported by pyodide/pyodide.mjs
//   base         where manifest.json is (a URL in the browser, a folder under Node)
//   readBytes    async (path relative to base) -> Uint8Array
//   progress     called with {step, text} as each stage starts
//   emit         receives each output message of the kernel, as JSON text
//   prepare      async (manifest), called once the manifest is read (the worker's
//                cache of files, see worker.mjs); optional
//   snapshot     false: start Python from scratch even if the manifest names a
//                snapshot (the build, the tests that compare both); default true
// Returns {pyodide, kernel, manifest, restored} (restored: started from the snapshot).
//
// Everything is fetched at once, as soon as the manifest names it, so that the
// downloads overlap with the start of the runtime; the packages load in one call
// (Pyodide fetches them in parallel). Then the compiled bytecode of the modules the
// chapters import (pycache-*.zip, made at build time by this same Python) goes beside
// their sources, so that no import compiles Python source in the page.
//
// The memory snapshot (manifest.snapshot, made at build time by makeSnapshot below,
// build_live.py): the runtime's memory just after Python started and imported the
// standard library's modules the chapters use, saved by Pyodide's (experimental)
// makeMemorySnapshot. Starting from it skips Python's own start and those imports.
// Pyodide 0.27 cannot keep loaded packages with compiled code (numpy...) in a
// snapshot, nor the files: the packages, the book's files and the kernel load after
// it as without it. If it fails to restore, Python starts from scratch.

const HOME = "/home/pyodide";
const MPLCONFIGDIR = `${HOME}/.matplotlib`;

const options = (base) => ({
  indexURL: `${base}pyodide/`,
  env: { HOME, MPLCONFIGDIR },
  stdout: () => {},
  stderr: () => {},
});

// A gzip file's bytes, uncompressed (the snapshot: 25 MB, gzipped 7.5 MB).
async function gunzip(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export async function boot({ loadPyodide, base, readBytes, progress = () => {}, emit, folder = "chapters", prepare = async () => {}, snapshot = true }) {
  const text = async (path) => new TextDecoder().decode(await readBytes(path));
  const manifest = JSON.parse(await text("manifest.json"));
  await prepare(manifest);
  const later = (path) => {
    const bytes = path ? readBytes(path) : Promise.resolve(null);
    bytes.catch(() => {}); // awaited below; a failure is reported there
    return bytes;
  };
  const book = later(manifest.book);
  const fontlist = later(manifest.fontlist);
  const pycache = later(manifest.pycache);
  const saved = later(snapshot && manifest.snapshot);

  progress({ step: "runtime", text: `Starting Python ${manifest.python} (Pyodide ${manifest.pyodide})` });
  let pyodide = null;
  try {
    const bytes = await saved;
    if (bytes) {
      pyodide = await loadPyodide({ ...options(base), _loadSnapshot: await gunzip(bytes) });
      // loadPyodide puts "" in front of sys.path again; and the snapshot's random
      // numbers would be the same on every visit
      pyodide.runPython(`import sys
if sys.path[:2] == ["", ""]:
    del sys.path[0]
if "random" in sys.modules:
    sys.modules["random"].seed()`);
    }
  } catch (error) {
    pyodide = null; // e.g. no DecompressionStream, or another runtime: start as usual
  }
  const restored = pyodide !== null;
  pyodide ??= await loadPyodide(options(base));

  progress({ step: "packages", text: `Loading ${manifest.packages.join(", ")}` });
  // Pyodide's packages are checked against the sha256 of each wheel in its lock file as
  // they load; the pure-Python wheels it does not distribute were checked at build time.
  await pyodide.loadPackage(
    [...manifest.packages, ...manifest.wheels.map((name) => `${base}wheels/${name}`)],
    { messageCallback: () => {}, checkIntegrity: true },
  );

  progress({ step: "book", text: "Unpacking attnlib and the chapters' data" });
  pyodide.unpackArchive(await book, "zip", { extractDir: `${HOME}/book` });
  const compiled = await pycache;
  if (compiled) pyodide.unpackArchive(compiled, "zip", { extractDir: "/" });
  // matplotlib's font list, made at build time where matplotlib reads it: without it
  // the first import of matplotlib spends 20-30 s scanning its fonts (build_live.py).
  pyodide.FS.mkdirTree(MPLCONFIGDIR);
  if (manifest.fontlist) {
    pyodide.FS.writeFile(manifest.fontlist_target, await fontlist);
  }

  progress({ step: "kernel", text: "Starting the shell" });
  pyodide.runPython(`import sys; sys.path.insert(0, "${HOME}/book/_live")`);
  const kernel = pyodide.pyimport("live_kernel");
  kernel.start(emit, folder);
  return { pyodide, kernel, manifest, restored };
}

// The snapshot boot() starts from (build_live.py, under Node): Python started as boot()
// starts it, then `modules` imported (standard library only: modules of packages with
// compiled code cannot be in a snapshot). Returns its bytes (not compressed).
export async function makeSnapshot({ loadPyodide, base, modules }) {
  const pyodide = await loadPyodide({ ...options(base), _makeSnapshot: true });
  pyodide.runPython(`def _warm(names):
    import importlib
    for name in names:
        try:
            importlib.import_module(name)
        except Exception:
            pass
_warm(${JSON.stringify(modules)})
del _warm
import os
os.environ["_"] = "./this.program"  # as in a browser (Node gives its script's path)
del os`);
  return pyodide.makeMemorySnapshot();
}
