// The page's Python, in a Web Worker so that the page stays responsive while Python
// starts and while a cell runs. Messages from the page: {type: "boot", folder} (the
// page's folder, where its cells run),
// {type: "run", id, code}. To the page: {type: "progress", step, text},
// {type: "ready", seconds}, {type: "failed", error}, {type: "output", id, message}
// (one of the kernel's output messages, see live_kernel.py) and {type: "done", id, ok}.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { boot } from "./boot.mjs";

const base = new URL("./", import.meta.url).href;
let kernel = null;
let current = null;

async function readBytes(path) {
  const response = await fetch(base + path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

self.onmessage = async ({ data }) => {
  if (data.type === "boot") {
    const t0 = performance.now();
    try {
      ({ kernel } = await boot({
        folder: data.folder,
        loadPyodide,
        base,
        readBytes,
        progress: (p) => postMessage({ type: "progress", ...p }),
        emit: (message) => postMessage({ type: "output", id: current, message: JSON.parse(message) }),
      }));
      postMessage({ type: "ready", seconds: (performance.now() - t0) / 1000 });
    } catch (error) {
      postMessage({ type: "failed", error: String(error && error.message || error) });
    }
  } else if (data.type === "run") {
    current = data.id;
    let ok = false;
    try {
      ok = kernel.run(data.code);
    } catch (error) {
      postMessage({ type: "output", id: current, message: {
        type: "error", ename: "InternalError", evalue: String(error), traceback: [] } });
    }
    postMessage({ type: "done", id: data.id, ok });
  }
};
