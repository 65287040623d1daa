// Starts the page's Python: Pyodide, the packages every chapter imports, the book's
// files and the kernel (live_kernel.py). Shared by worker.mjs (in the browser) and
// node_run.mjs (the tests and the build, under Node), so both start Python the same way.
//
// boot({loadPyodide, base, readBytes, progress, emit, folder, prepare, snapshot,
//       unpack, readUnpacked})
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
//   unpack       async (gzip bytes) -> Uint8Array, for the packages' and the book's
//                images; default: gunzip below, on this thread (the worker passes one
//                that runs on another: unpack.mjs)
//   readUnpacked async (path, how) -> Uint8Array: a gzipped file (the snapshot, an
//                image) unpacked; how: the function to unpack it with (gunzip or
//                unpack). Default: readBytes, then how (the worker's reads an unpacked
//                copy it kept on an earlier visit, if any: see worker.mjs)
// Returns {pyodide, kernel, manifest, restored} (restored: started from the snapshot).
//
// Everything is fetched at once, as soon as the manifest names it, so that the
// downloads overlap with the start of the runtime. The packages come as one file image
// (manifest.image, build_live.py's _packages_image): the files Pyodide's loadPackage
// would unpack from about thirty wheels, with the compiled bytecode of the modules the
// chapters import and matplotlib's font list beside them, written into the file
// system by writeImage below (no Python, no zip), then the packages' shared libraries
// loaded as loadPackage loads them. The book's files come as an image too. Without an
// image (the build's own runs that make it), the packages load from their wheels.
//
// The memory snapshot (manifest.snapshot, made at build time by makeSnapshot below,
// build_live.py): the runtime's memory just after Python started and imported the
// modules the chapters use that it can hold (the standard library's, IPython's and
// the pure-Python ones under pandas and matplotlib), saved by Pyodide's (experimental)
// makeMemorySnapshot. Starting from it skips Python's own start and those imports.
// Pyodide 0.27 cannot keep loaded packages with compiled code (numpy...) in a
// snapshot, nor the files: the packages' files, their libraries, the book's files and
// the kernel's shell load after it as without it. If it fails to restore, Python
// starts from scratch.

const HOME = "/home/pyodide";
const MPLCONFIGDIR = `${HOME}/.matplotlib`;
const ZONEINFO = "/usr/share/zoneinfo";

const options = (base) => ({
  indexURL: `${base}pyodide/`,
  env: { HOME, MPLCONFIGDIR },
  stdout: () => {},
  stderr: () => {},
});

// A gzip file's bytes, uncompressed (the snapshot: 44 MB, gzipped 11.5 MB; the
// packages' image: 94 MB, gzipped 28 MB). Every current browser has DecompressionStream
// (Chrome 80, Firefox 113, Safari 16.4); without it live code cannot start, and says
// why. unpack.mjs runs it on a thread of its own for the page's worker.
export async function gunzip(bytes) {
  if (typeof DecompressionStream === "undefined") {
    throw new Error("this browser cannot unpack gzip files (no DecompressionStream): " +
      "live code needs a current browser");
  }
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// A file image (build_live.py, _write_image: a 4-byte little-endian header length, the
// header as JSON, then the files' bytes in the header's order): its header and a map
// from each file's full path (under header.root) to a view of `bytes` (no copy).
export function readImage(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(0, true);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length)));
  const files = new Map();
  let at = 4 + length;
  for (const [path, size] of header.files) {
    files.set(`${header.root}/${path}`, bytes.subarray(at, at + size));
    at += size;
  }
  if (at !== bytes.length) throw new Error(`file image: ${bytes.length - at} bytes left over`);
  return { header, files };
}

// Write a file image (readImage) into Pyodide's file system; each file keeps its view.
// In a folder of the in-memory file system (MEMFS: all of them here), each file is
// made in its folder's node and given its view as its contents, as FS.writeFile with
// canOwn leaves it, without looking up and opening it by its path: 4-5 times faster
// (the packages' 4,240 files: 0.17-0.22 s under Node, 0.04-0.07 s so). A file that
// exists already, or a folder of another file system, is written as usual.
export function writeImage(pyodide, { files }) {
  const { FS } = pyodide;
  const folders = new Map();
  for (const [full, data] of files) {
    const cut = full.lastIndexOf("/");
    const folder = full.slice(0, cut) || "/";
    let parent = folders.get(folder);
    if (!parent) {
      FS.mkdirTree(folder);
      parent = FS.lookupPath(folder, { follow: true }).node;
      folders.set(folder, parent);
    }
    const name = full.slice(cut + 1);
    const memory = parent.mount.type === FS.filesystems.MEMFS && FS.isDir(parent.mode);
    if (!memory || parent.contents[name]) {
      FS.writeFile(full, data, { canOwn: true });
      continue;
    }
    // as FS.writeFile makes it: a regular file, mode 0o666
    const node = parent.node_ops.mknod(parent, name, 0o100666, 0);
    node.contents = data;
    node.usedBytes = data.length;
  }
}

// The time-zone database where Linux has it and Python's libraries look for it
// (/usr/share/zoneinfo: dateutil, the standard library's zoneinfo): pytz's copy of it,
// in the packages. Without it dateutil, asked for one zone, reads its own whole
// database from a tarball (353 zones): pandas asks for "UTC" when it is imported,
// 0.23 s of the page's imports under Node.
export function linkZones(pyodide, manifest) {
  const [major, minor] = manifest.python.split(".");
  const zones = `/lib/python${major}.${minor}/site-packages/pytz/zoneinfo`;
  const { FS } = pyodide;
  if (FS.analyzePath(ZONEINFO).exists || !FS.analyzePath(`${zones}/UTC`).exists) return;
  FS.mkdirTree(ZONEINFO.slice(0, ZONEINFO.lastIndexOf("/")));
  FS.symlink(zones, ZONEINFO);
}

// The image's shared libraries (header.dynlibs), each compiled as soon as the image is
// unpacked: the engine compiles on background threads while this one starts the
// runtime. Returns a map from each library's path to the promise of its module.
function compileLibraries({ header, files }) {
  const modules = new Map();
  for (const path of header.dynlibs) {
    const module = WebAssembly.compile(files.get(path));
    module.catch(() => {}); // awaited when the library loads
    modules.set(path, module);
  }
  return modules;
}

// Load the image's shared libraries in Pyodide's order from the modules compiled
// before. Pyodide's loadDynlib reads each file (FS.readFile) and compiles it
// (WebAssembly.instantiate, through Emscripten's dynamic linker, which then links it):
// while they load, the read returns the image's own view of the file and the
// instantiation of exactly that view uses its module compiled before. Anything else
// goes through unchanged.
async function loadLibraries(pyodide, { header, files }, modules) {
  const { FS } = pyodide;
  const readFile = FS.readFile;
  const instantiate = WebAssembly.instantiate;
  const compiled = new Map(header.dynlibs.map((path) => [files.get(path), modules.get(path)]));
  // a binary read of a library returns the image's own view, not a copy (the linker
  // only reads it)
  FS.readFile = (path, opts) =>
    modules.has(path) && (!opts || !opts.encoding || opts.encoding === "binary")
      ? files.get(path)
      : readFile(path, opts);
  WebAssembly.instantiate = (source, imports) => {
    const module = compiled.get(source);
    if (!module) return instantiate(source, imports);
    return module.then(async (m) => ({ module: m, instance: await instantiate(m, imports) }));
  };
  try {
    for (const path of header.dynlibs) await pyodide._api.loadDynlib(path, false);
  } finally {
    FS.readFile = readFile;
    WebAssembly.instantiate = instantiate;
  }
}

export async function boot({ loadPyodide, base, readBytes, progress = () => {}, emit, folder = "chapters", prepare = async () => {}, snapshot = true, unpack = gunzip, readUnpacked = async (path, how) => how(await readBytes(path)) }) {
  const text = async (path) => new TextDecoder().decode(await readBytes(path));
  const manifest = JSON.parse(await text("manifest.json"));
  await prepare(manifest);
  const later = (path) => {
    const bytes = path ? readBytes(path) : Promise.resolve(null);
    bytes.catch(() => {}); // awaited below; a failure is reported there
    return bytes;
  };
  // The gzipped files (snapshot, images), unpacked by `readUnpacked`: where the worker
  // keeps an unpacked copy, read from it. Otherwise the snapshot is unpacked here (this
  // thread has nothing else to do until the runtime starts from it), and each image as
  // soon as it has arrived with `unpack` (in the browser on the helper's thread,
  // unpack.mjs, while this one starts the runtime). Then the packages' shared
  // libraries are compiled, on the engine's background threads.
  const unpacked = (path, how, then = (bytes) => bytes) => {
    const result = (path ? readUnpacked(path, how) : Promise.resolve(null)).then(
      (bytes) => bytes && then(bytes),
    );
    result.catch(() => {});
    return result;
  };
  const saved = unpacked(snapshot && manifest.snapshot, gunzip);
  const image = unpacked(manifest.image, unpack, readImage);
  const libraries = image.then((files) => files && compileLibraries(files));
  libraries.catch(() => {});
  const book = unpacked(manifest.book, unpack, readImage);
  const fontlist = later(!manifest.image && manifest.fontlist);
  const pycache = later(!manifest.image && manifest.pycache);

  progress({ step: "runtime", text: `Starting Python ${manifest.python} (Pyodide ${manifest.pyodide})` });
  let pyodide = null;
  try {
    const bytes = await saved;
    if (bytes) {
      pyodide = await loadPyodide({ ...options(base), _loadSnapshot: bytes });
      // loadPyodide puts "" in front of sys.path again; and the snapshot's random
      // numbers would be the same on every visit
      pyodide.runPython(`import sys
if sys.path[:2] == ["", ""]:
    del sys.path[0]
if "random" in sys.modules:
    sys.modules["random"].seed()`);
    }
  } catch (error) {
    // a start before the reader's click that finds a file no longer kept stops (the
    // worker's NotKept)
    if (error && error.name === "NotKept") throw error;
    pyodide = null; // e.g. another runtime's snapshot, or a damaged one: start as usual
  }
  const restored = pyodide !== null;
  pyodide ??= await loadPyodide(options(base));

  progress({ step: "packages", text: `Loading ${manifest.packages.join(", ")}` });
  pyodide.FS.mkdirTree(MPLCONFIGDIR);
  if (manifest.image) {
    // the image was checked against its sha256 as it was fetched (the worker), and
    // its wheels against Pyodide's lock file when it was made (build_live.py)
    const files = await image;
    writeImage(pyodide, files);
    for (const name of files.header.packages) pyodide.loadedPackages[name] ??= "default channel";
    await loadLibraries(pyodide, files, await libraries);
  } else {
    // Pyodide's packages are checked against the sha256 of each wheel in its lock file
    // as they load; the pure-Python wheels it does not distribute were checked at
    // build time.
    await pyodide.loadPackage(
      [...manifest.packages, ...manifest.wheels.map((name) => `${base}wheels/${name}`)],
      { messageCallback: () => {}, checkIntegrity: true },
    );
    const compiled = await pycache;
    if (compiled) pyodide.unpackArchive(compiled, "zip", { extractDir: "/" });
    // matplotlib's font list, made at build time where matplotlib reads it: without it
    // the first import of matplotlib spends 20-30 s scanning its fonts (build_live.py).
    if (manifest.fontlist) {
      pyodide.FS.writeFile(manifest.fontlist_target, await fontlist);
    }
  }

  linkZones(pyodide, manifest);

  progress({ step: "book", text: "Unpacking attnlib and the chapters' data" });
  writeImage(pyodide, await book);

  progress({ step: "kernel", text: "Starting the shell" });
  pyodide.runPython(`import sys
sys.path.insert(0, "${HOME}/book/_live")`);
  const kernel = pyodide.pyimport("live_kernel");
  kernel.start(emit, folder);
  return { pyodide, kernel, manifest, restored };
}

// The snapshot boot() starts from (build_live.py, under Node): Python started as boot()
// starts it, then `modules` imported (build_live.py lists them: the standard library's
// that the chapters use, and those of its SNAPSHOT_PACKAGES, IPython's among them). A
// snapshot cannot hold a module with compiled code (numpy...: a shared library lives
// outside the memory it saves), so the packages' files are written first (no library
// loaded) and every import of a compiled module is refused: a module that needs one is
// left out, with every module of its package, and imports in the page as without a
// snapshot. `lazy` modules are made lazy (run at the first use of a name they define,
// in the page): sqlite3, which IPython imports at the top of its history module but
// uses only when the shell opens its history, in the page.
// Returns {bytes (not compressed), imported: the names of `modules` held, refused: the
// compiled modules refused, swallowed: the modules held that imported although an
// import beneath them was refused (so not as in the page: build_live.py stops)}.
export async function makeSnapshot({ loadPyodide, base, readBytes, modules, lazy = ["sqlite3"] }) {
  const pyodide = await loadPyodide({ ...options(base), _makeSnapshot: true });
  const manifest = JSON.parse(new TextDecoder().decode(await readBytes("manifest.json")));
  if (manifest.image) writeImage(pyodide, readImage(await gunzip(await readBytes(manifest.image))));
  linkZones(pyodide, manifest); // as boot() does
  const report = pyodide.runPython(`import os
os.environ["_"] = "./this.program"  # as in a browser (Node gives its script's path)
del os


def _warm(names, lazy):
    import importlib, importlib.machinery, importlib.util, sys

    refused = {}  # compiled module -> the modules being imported when it was asked for

    class Compiled:
        @staticmethod
        def find_spec(name, path=None, target=None):
            spec = importlib.machinery.PathFinder.find_spec(name, path, target)
            if spec and isinstance(spec.loader, importlib.machinery.ExtensionFileLoader):
                frame, importing = sys._getframe(1), refused.setdefault(name, set())
                while frame:
                    if frame.f_code.co_name == "<module>":
                        importing.add(frame.f_globals.get("__name__"))
                    frame = frame.f_back
                raise ImportError(f"{name} has compiled code", name=name)
            return None

    # (importlib.util.LazyLoader runs a module at any use of an attribute, which the
    # import statement itself makes: its __spec__)
    def make_lazy(name):
        spec = importlib.util.find_spec(name)
        module = importlib.util.module_from_spec(spec)

        def __getattr__(attr):  # a name the module does not have yet: run it
            del module.__getattr__
            try:
                spec.loader.exec_module(module)
            except BaseException:
                module.__getattr__ = __getattr__
                raise
            return getattr(module, attr)

        module.__getattr__ = __getattr__
        sys.modules[name] = module

    for name in lazy:
        make_lazy(name)
    sys.meta_path.insert(0, Compiled)
    try:
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:
                pass
        # a module whose package failed to import would not be bound to the package
        # when the page imports it again: drop it
        for name in sorted(sys.modules, key=lambda n: n.count(".")):
            if "." in name and name.rpartition(".")[0] not in sys.modules:
                del sys.modules[name]
        importlib.invalidate_caches()
    finally:
        sys.meta_path.remove(Compiled)
    importing = set().union(*refused.values()) - {"__main__"}
    return {
        "imported": [name for name in names if name in sys.modules],
        "refused": sorted(refused),
        "swallowed": sorted(name for name in importing if name in sys.modules),
    }


import json
_report = json.dumps(_warm(${JSON.stringify(modules)}, ${JSON.stringify(lazy)}))
del _warm, json
_report`);
  pyodide.runPython("del _report");
  return { bytes: pyodide.makeMemorySnapshot(), ...JSON.parse(report) };
}
