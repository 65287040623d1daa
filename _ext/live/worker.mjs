// The page's Python, in a Web Worker so that the page stays responsive while Python
// starts and while a cell runs. Messages from the page: {type: "boot", folder, early}
// (the page's folder, where its cells run; early: a start before the reader's click,
// made only if every file it needs is kept in Cache Storage, else the worker answers
// {type: "not-kept"} having downloaded none of them: only manifest.json),
// {type: "warm", sources} (the page's cells: their imports are imported once Python is
// ready, while the reader reads) and
// {type: "run", id, code}. To the page: {type: "progress", step, text, at},
// {type: "ready", seconds, restored, unpackedHere} (restored: from the memory snapshot,
// boot.mjs; unpackedHere: images unpacked on the worker's own thread, not by
// unpack.mjs's helper), {type: "failed", error}, {type: "output", id, message}
// (one of the kernel's output messages, see live_kernel.py) and {type: "done", id, ok}.
//
// What the browser keeps: every file the start fetches after manifest.json (the
// runtime, the packages' image, the book's files, the snapshot) is named in the
// manifest with its sha256 ("hashes"). The first visit downloads each one, checked against that hash by the
// browser (fetch's integrity), and keeps it in the site's Cache Storage under its URL
// and hash; later visits of any chapter read it from there, offline, whatever cache
// headers the host sends. A new build changes a file's hash, so an old copy is never
// used; copies the current manifest no longer names are deleted.
//
// The pretrained model's files (manifest.model, about 91 MB) are kept the same way but
// fetched only when a cell reads them; see keepModel() and keptModel() below.
import { loadPyodide } from "./pyodide/pyodide.mjs";
import { boot } from "./boot.mjs";
import { unpackOffThread } from "./unpack.mjs";

const base = new URL("./", import.meta.url).href;
const STORE = "attn-live";
const networkFetch = self.fetch.bind(self);
let kernel = null;
let pyodide = null;
let manifest = null;
let modelStep = Promise.resolve(); // keptModel() / keepModel(), awaited by each run
const modelKept = new Set(); // the model's files now read from Cache Storage
const modelTried = new Set(); // files found not to match their hash, or with no room
let current = null;
let warmSources = null;
let hashes = {};
let store = null;
const started = new Map(); // key -> promise of the whole file (a Response's bytes)

async function openStore() {
  try {
    return self.caches ? await self.caches.open(STORE) : null;
  } catch (error) {
    return null; // no Cache Storage here (e.g. plain http on another host): the network
  }
}

function keyOf(url) {
  const rel = url.startsWith(base) ? url.slice(base.length).split(/[?#]/)[0] : null;
  const hash = rel && hashes[rel];
  return hash ? `${base}${rel}?sha256=${hash.slice(7).replace(/[+/=]/g, (c) => ({ "+": "-", "/": "_", "=": "" })[c])}` : null;
}

// The file at `key`: from Cache Storage if kept, else downloaded (checked against its
// hash) and kept. Each file is fetched once per start, however often it is asked for.
function load(key, hash) {
  if (!started.has(key)) {
    started.set(key, (async () => {
      const kept = store && (await store.match(key));
      if (kept) return kept;
      const response = await networkFetch(key, { integrity: hash });
      if (!response.ok) return response;
      if (store) {
        // kept only once the whole body has arrived and matched its hash
        await store.put(key, response.clone()).catch(() => {});
      }
      return response;
    })());
  }
  return started.get(key).then((response) => response.clone());
}

// Pyodide fetches its files with the worker's fetch: files the manifest names come
// from load(), anything else from the network.
self.fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input), base).href;
  const key = keyOf(url);
  return key ? load(key, hashes[url.slice(base.length).split(/[?#]/)[0]]) : networkFetch(input, init);
};

async function readBytes(path) {
  const response = await self.fetch(base + path, path === "manifest.json" ? { cache: "no-cache" } : {});
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// The gzipped files of the start (the snapshot, the packages' and the book's images)
// are also kept unpacked, so that a later visit reads them as they are used and
// unpacks nothing: the first time one is unpacked, a copy is made at once (a Blob,
// before Python can change the bytes) and kept once Python is ready (keepUnpacked).
// An unpacked copy is kept under its gzipped file's key plus UNPACKED (so under its
// hash); tidy() then deletes the gzipped copy, and both once the manifest no longer
// names the file.
const UNPACKED = "&unpacked";
const toKeep = []; // [key, Blob] made by readUnpacked, kept by keepUnpacked
const readKept = []; // the unpacked copies this start read

// Another tab may keep the unpacked copy, then delete the gzipped one, between two of
// these reads: looking for the unpacked copy again after the gzipped one finds it. An
// early start (before the reader's click) downloads nothing: NotKept.
// A kept copy that cannot be read is deleted; one the start then fails on is deleted
// when the start fails (readKept).
async function readUnpacked(path, how, early) {
  const key = keyOf(base + path);
  for (const look of store && key ? [UNPACKED, "", UNPACKED] : []) {
    let bytes = null;
    try {
      const kept = await store.match(key + look);
      bytes = kept && new Uint8Array(await kept.arrayBuffer());
    } catch (error) {
      await store.delete(key + look).catch(() => {});
    }
    if (bytes && look) {
      readKept.push(key + look);
      return bytes;
    }
    if (bytes) return unpackAndKeep(key, bytes, how);
  }
  if (early) throw new NotKept();
  return unpackAndKeep(key, await readBytes(path), how);
}

async function unpackAndKeep(key, gzipped, how) {
  const bytes = await how(gzipped);
  if (store && key) toKeep.push([key, new Blob([bytes])]);
  return bytes;
}

async function keepUnpacked() {
  while (toKeep.length) {
    const [key, blob] = toKeep.shift();
    // no room: the gzipped copy stays, and is unpacked on every visit
    await store.put(key + UNPACKED, new Response(blob)).catch(() => {});
  }
}

class NotKept extends Error {
  name = "NotKept"; // boot.mjs passes it on by this name
}

// Whether every file the start fetches (all the manifest names, the model's files
// apart: they load only when a cell reads them) is kept in Cache Storage.
async function allKept(manifest) {
  if (!store) return false;
  const model = new Set(Object.values((manifest.model || {}).files || {}).map((f) => f.path));
  for (const rel of Object.keys(hashes)) {
    const key = keyOf(base + rel);
    if (model.has(rel) || (await store.match(key)) || (await store.match(key + UNPACKED))) continue;
    return false;
  }
  return true;
}

// The worker's cache of files, and pyodide.asm.js from it (Pyodide would otherwise
// import that from the network on every visit). early: stop (NotKept) unless every
// file is kept, before anything is fetched.
async function prepare(manifest, early) {
  hashes = manifest.hashes || {};
  store = await openStore();
  if (early && !(await allKept(manifest))) throw new NotKept();
  if (hashes["pyodide/pyodide.asm.js"] && typeof globalThis._createPyodideModule !== "function") {
    const source = await (await self.fetch(base + "pyodide/pyodide.asm.js")).text();
    const url = URL.createObjectURL(new Blob([source], { type: "text/javascript" }));
    try {
      await import(url);
    } finally {
      URL.revokeObjectURL(url);
    }
  }
}

// Delete the kept files that the current manifest no longer names (an older build),
// and each gzipped copy whose unpacked copy is kept.
async function tidy() {
  if (!store) return;
  const wanted = new Set(Object.keys(hashes).map((rel) => keyOf(base + rel)).flatMap((key) => [key, key + UNPACKED]));
  const keys = (await store.keys()).map((request) => request.url);
  const unpacked = new Set(keys.filter((url) => url.endsWith(UNPACKED)));
  for (const url of keys) {
    if (!url.startsWith(base)) continue;
    if (!wanted.has(url) || unpacked.has(url + UNPACKED)) await store.delete(url);
  }
  started.clear();
}

// The pretrained model (manifest.model). The kernel makes its files lazy files in
// MODEL_DIR (live_kernel._serve_model): the first cell that reads them downloads them
// with a synchronous request. After that cell, keepModel() checks each downloaded file
// against its sha256 (manifest.hashes) and keeps it in Cache Storage; from then on, and
// on later visits of any chapter, keptModel() puts each kept copy in MODEL_DIR instead
// (a symbolic link into a WORKERFS folder holding the Blob read from Cache Storage:
// Python reads it from the browser's storage, with no copy of its bytes held in the
// worker). No Cache Storage: the lazy files stay, as before.
function modelFiles() {
  if (!store || !pyodide || !manifest || !manifest.model) return [];
  const dir = String(kernel.MODEL_DIR);
  return Object.entries(manifest.model.files).map(([name, entry]) => ({
    name, path: `${dir}/${name}`, key: keyOf(base + entry.path), hash: hashes[entry.path],
  })).filter((file) => file.key && !modelKept.has(file.name) && pyodide.FS.analyzePath(file.path).exists);
}

async function keptModel() {
  const FS = pyodide && pyodide.FS;
  for (const file of modelFiles()) {
    const response = await store.match(file.key);
    if (!response) continue;
    const blob = await response.blob();
    const folder = `${kernel.MODEL_KEPT}/${file.name}`;
    FS.mkdirTree(folder);
    FS.mount(FS.filesystems.WORKERFS, { blobs: [{ name: file.name, data: blob }] }, folder);
    FS.unlink(file.path);
    FS.symlink(`${folder}/${file.name}`, file.path);
    modelKept.add(file.name);
  }
}

async function keepModel() {
  let added = false;
  for (const file of modelFiles()) {
    const node = pyodide.FS.lookupPath(file.path).node;
    const lazy = node.contents;
    // a lazy file (createLazyFile) whose every chunk has been downloaded
    if (!lazy || !lazy.lengthKnown || !Array.isArray(lazy.chunks)) continue;
    const count = Math.ceil(lazy._length / lazy._chunkSize);
    if (!Array.from({ length: count }, (_, i) => lazy.chunks[i]).every(Boolean)) continue;
    if (modelTried.has(file.key) || (await store.match(file.key))) continue;
    modelTried.add(file.key);
    const bytes = count === 1 ? lazy.chunks[0] : new Uint8Array(lazy._length);
    if (count > 1) lazy.chunks.forEach((chunk, i) => bytes.set(chunk, i * lazy._chunkSize));
    if (bytes.length !== lazy._length) continue;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
    if (`sha256-${btoa(String.fromCharCode(...digest))}` !== file.hash) continue;
    try {
      await store.put(file.key, new Response(bytes, { headers: { "Content-Length": String(bytes.length) } }));
      added = true;
    } catch (error) {
      // no room: this file stays a lazy file, as without Cache Storage
    }
  }
  if (added) await keptModel(); // the downloaded copies can go
}

// The page's imports, before the reader runs a cell (a cell that arrives meanwhile
// waits for them: it would have imported them itself).
function warmUp() {
  if (!kernel || !warmSources) return;
  const sources = warmSources;
  warmSources = null;
  try {
    const done = kernel.warm(sources);
    if (done && done.destroy) done.destroy();
  } catch (error) {
    // the cells import them again and report what fails
  }
}

self.onmessage = async ({ data }) => {
  if (data.type === "boot") {
    const t0 = performance.now();
    const unpacker = unpackOffThread();
    try {
      let restored;
      ({ kernel, pyodide, manifest, restored } = await boot({
        folder: data.folder,
        loadPyodide,
        base,
        readBytes,
        prepare: (m) => prepare(m, data.early),
        unpack: unpacker.unpack,
        readUnpacked: (path, how) => readUnpacked(path, how, data.early),
        progress: (p) => postMessage({ type: "progress", at: performance.timeOrigin + performance.now(), ...p }),
        emit: (message) => postMessage({ type: "output", id: current, message: JSON.parse(message) }),
      }));
      postMessage({
        type: "ready", seconds: (performance.now() - t0) / 1000, restored,
        unpackedHere: unpacker.unpackedHere() });
      setTimeout(warmUp, 0);
      keepUnpacked().then(tidy).catch(() => {});
      modelStep = keptModel().catch(() => {});
    } catch (error) {
      toKeep.length = 0;
      if (error instanceof NotKept) postMessage({ type: "not-kept" });
      else {
        // a kept unpacked copy may be what failed: the next start reads the file again
        for (const key of readKept) await store.delete(key).catch(() => {});
        postMessage({ type: "failed", error: String(error && error.message || error) });
      }
    } finally {
      unpacker.stop();
    }
  } else if (data.type === "warm") {
    warmSources = data.sources;
    if (kernel) warmUp();
  } else if (data.type === "run") {
    const before = modelStep;
    let after;
    modelStep = new Promise((resolve) => { after = resolve; });
    await before;
    current = data.id;
    let ok = false;
    try {
      ok = kernel.run(data.code);
    } catch (error) {
      postMessage({ type: "output", id: current, message: {
        type: "error", ename: "InternalError", evalue: String(error), traceback: [] } });
    }
    postMessage({ type: "done", id: data.id, ok });
    await keepModel().catch(() => {});
    after();
  }
};
