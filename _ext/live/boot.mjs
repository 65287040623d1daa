// Starts the page's Python: Pyodide, the packages every chapter imports, the book's
// files and the kernel (live_kernel.py). Shared by worker.mjs (in the browser) and
// node_run.mjs (the tests and the build, under Node), so both start Python the same way.
//
// boot({loadPyodide, base, readBytes, progress, emit, folder}) (folder: the page's
// folder in the repository, where its cells run; default "chapters"):
//   loadPyodide  the function exported by pyodide/pyodide.mjs
//   base         where manifest.json is (a URL in the browser, a folder under Node)
//   readBytes    async (path relative to base) -> Uint8Array
//   progress     called with {step, text} as each stage starts
//   emit         receives each output message of the kernel, as JSON text
// Returns {pyodide, kernel, manifest}.

const HOME = "/home/pyodide";
const MPLCONFIGDIR = `${HOME}/.matplotlib`;

export async function boot({ loadPyodide, base, readBytes, progress = () => {}, emit, folder = "chapters" }) {
  const text = async (path) => new TextDecoder().decode(await readBytes(path));
  const manifest = JSON.parse(await text("manifest.json"));

  progress({ step: "runtime", text: `Starting Python ${manifest.python} (Pyodide ${manifest.pyodide})` });
  const pyodide = await loadPyodide({
    indexURL: `${base}pyodide/`,
    env: { HOME, MPLCONFIGDIR },
    stdout: () => {},
    stderr: () => {},
  });

  progress({ step: "packages", text: `Loading ${manifest.packages.join(", ")}` });
  // Checked against the sha256 of each wheel in Pyodide's lock file as they load.
  await pyodide.loadPackage(manifest.packages, { messageCallback: () => {}, checkIntegrity: true });
  // Pure-Python wheels that Pyodide does not distribute (sha256 checked at build time).
  await pyodide.loadPackage(manifest.wheels.map((name) => `${base}wheels/${name}`), {
    messageCallback: () => {},
  });

  progress({ step: "book", text: "Unpacking attnlib and the chapters' data" });
  pyodide.unpackArchive(await readBytes(manifest.book), "zip", { extractDir: `${HOME}/book` });
  // matplotlib's font list, made at build time where matplotlib reads it: without it
  // the first import of matplotlib spends 20-30 s scanning its fonts (build_live.py).
  pyodide.FS.mkdirTree(MPLCONFIGDIR);
  if (manifest.fontlist) {
    pyodide.FS.writeFile(manifest.fontlist_target, await readBytes(manifest.fontlist));
  }

  progress({ step: "kernel", text: "Starting the shell" });
  pyodide.runPython(`import sys; sys.path.insert(0, "${HOME}/book/_live")`);
  const kernel = pyodide.pyimport("live_kernel");
  kernel.start(emit, folder);
  return { pyodide, kernel, manifest };
}
