// Starts the page's Python: Pyodide, the packages every chapter imports, the book's
// files and the kernel (live_kernel.py). Shared by worker.mjs (in the browser) and
// node_run.mjs (the tests and the build, under Node), so both start Python the same way.
//
// boot({loadPyodide, base, readBytes, progress, emit, folder, prepare}) (folder: the
// page's folder in the repository, where its cells run; default "chapters"):
//   loadPyodide  the function exported by pyodide/pyodide.mjs
//   base         where manifest.json is (a URL in the browser, a folder under Node)
//   readBytes    async (path relative to base) -> Uint8Array
//   progress     called with {step, text} as each stage starts
//   emit         receives each output message of the kernel, as JSON text
//   prepare      async (manifest), called once the manifest is read (the worker's
//                cache of files, see worker.mjs); optional
// Returns {pyodide, kernel, manifest}.
//
// Everything is fetched at once, as soon as the manifest names it, so that the
// downloads overlap with the start of the runtime; the packages load in one call
// (Pyodide fetches them in parallel). Then the compiled bytecode of the modules the
// chapters import (pycache-*.zip, made at build time by this same Python) goes beside
// their sources, so that no import compiles Python source in the page.

const HOME = "/home/pyodide";
const MPLCONFIGDIR = `${HOME}/.matplotlib`;

export async function boot({ loadPyodide, base, readBytes, progress = () => {}, emit, folder = "chapters", prepare = async () => {} }) {
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

  progress({ step: "runtime", text: `Starting Python ${manifest.python} (Pyodide ${manifest.pyodide})` });
  const pyodide = await loadPyodide({
    indexURL: `${base}pyodide/`,
    env: { HOME, MPLCONFIGDIR },
    stdout: () => {},
    stderr: () => {},
  });

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
  return { pyodide, kernel, manifest };
}
