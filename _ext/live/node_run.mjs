// Runs the page's Python under Node, started exactly as in the browser (boot.mjs), for
// the build (matplotlib's font list) and the tests (attnlib's unit tests, chapters'
// cells, exercises).
//
// Usage: node _ext/live/node_run.mjs LIVE_DIR JOB.json OUT.json
// LIVE_DIR is a built live folder (_site_assets/live or _build/html/live). JOB.json is
// a list of steps, run in order; OUT.json receives one result per step:
//   {"mount": [HOST_FOLDER, PYODIDE_FOLDER]}  the host folder, seen by Python there
//   {"wheels": [HOST_PATH, ...]}              more wheels (e.g. pytest, for the tests)
//   {"python": CODE}                          runPython; result: {value} (str of it)
//   {"cell": CODE}                            a cell, run by the kernel as in the page;
//                                             result: {ok, outputs: [messages]}
// Each result also has "seconds". The boot's own time is the first line of OUT.json's
// "boot_seconds".
//
// node _ext/live/node_run.mjs --snapshot LIVE_DIR MODULES.json OUT.bin writes the memory
// snapshot that the page starts from (boot.mjs, makeSnapshot; build_live.py), and prints
// makeSnapshot's report (imported, refused, swallowed) as its last line, in JSON.
import { readFile, writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import { boot, makeSnapshot } from "./boot.mjs";

if (process.argv[2] === "--snapshot") {
  const [liveDir, modulesPath, outPath] = process.argv.slice(3);
  const base = resolve(liveDir) + "/";
  const { loadPyodide } = await import(`${base}pyodide/pyodide.mjs`);
  const modules = JSON.parse(await readFile(modulesPath, "utf8"));
  try {
    const readBytes = async (path) => new Uint8Array(await readFile(base + path));
    const { bytes, ...report } = await makeSnapshot({ loadPyodide, base, readBytes, modules });
    await writeFile(outPath, bytes);
    // its last line of output: what it holds (written out before the process exits)
    await new Promise((done) => process.stdout.write(JSON.stringify(report) + "\n", done));
  } catch (error) {
    process.stderr.write(`${error && error.message}\n`);
    process.exit(1);
  }
  process.exit(0);
}

const [liveDir, jobPath, outPath] = process.argv.slice(2);
if (!outPath) throw new Error("usage: node node_run.mjs LIVE_DIR JOB.json OUT.json");
const base = resolve(liveDir) + "/";
const { loadPyodide } = await import(`${base}pyodide/pyodide.mjs`);
const steps = JSON.parse(await readFile(jobPath, "utf8"));

let outputs = [];
const t0 = performance.now();
const { pyodide, kernel } = await boot({
  loadPyodide,
  base,
  readBytes: async (path) => new Uint8Array(await readFile(base + path)),
  progress: ({ text }) => process.stderr.write(`live: ${text}\n`),
  emit: (message) => outputs.push(JSON.parse(message)),
});
const report = { boot_seconds: (performance.now() - t0) / 1000, results: [] };

for (const step of steps) {
  const start = performance.now();
  let result;
  if (step.mount) {
    pyodide.FS.mkdirTree(step.mount[1]);
    pyodide.FS.mount(pyodide.FS.filesystems.NODEFS, { root: resolve(step.mount[0]) }, step.mount[1]);
    result = { ok: true };
  } else if (step.wheels) {
    await pyodide.loadPackage(step.wheels.map((p) => resolve(p)), { messageCallback: () => {} });
    result = { ok: true };
  } else if (step.python !== undefined) {
    try {
      result = { ok: true, value: String(pyodide.runPython(step.python)) };
    } catch (error) {
      // the kernel owns sys.stderr, where Pyodide would write the traceback
      const traceback = pyodide.runPython(
        "import sys, traceback\n''.join(traceback.format_exception(sys.last_value))");
      result = { ok: false, error: traceback || String(error) };
    }
  } else if (step.cell !== undefined) {
    outputs = [];
    const ok = kernel.run(step.cell);
    result = { ok, outputs };
  } else {
    throw new Error(`unknown step: ${JSON.stringify(step)}`);
  }
  result.seconds = (performance.now() - start) / 1000;
  report.results.push(result);
}
await writeFile(outPath, JSON.stringify(report));
