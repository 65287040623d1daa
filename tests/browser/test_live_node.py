"""Live code's Python, under Node: what the site serves runs attnlib's tests and every
chapter's exercises.

The page's Python (Pyodide 0.27.7: Python 3.12, numpy 2.0.2, matplotlib 3.8.4, the
lower bounds in pyproject.toml) is started from the built site's ``live/`` folder
exactly as the page starts it (``_ext/live/boot.mjs``), once, in one Node process that
then

1. runs a stated subset of attnlib's unit tests (:data:`UNIT_TESTS`, less
   :data:`DESELECTED` and :data:`SLOW`) with pytest; the property tests draw 10
   examples each there, derandomized (100 in CPython, where the whole suite runs), to
   keep the time in `make test` small;
2. for every chapter, in a fresh namespace: the chapter's first code cell (its
   imports), its first exercise cell as stored (the checker says "Not answered yet"), a
   wrong answer (:data:`WRONG`: a typical slip) and the right one (the folded solution),
   through the page's kernel, as the reader would run them in the page. Each reply
   must equal, line for line, what the same checker prints in CPython; the wrong answer
   gets a "Not yet" diagnosis, the right one "Correct".

The browser test (test_live_pages.py) does the same for one exercise of one chapter
per part by typing into the page. Also here: every file of ``live/pyodide/`` is
checked again against the sha256 of the official lock file (npm pyodide), and a build
without live code fails.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import subprocess

import pytest
from live_support import CHAPTERS, WRONG, cpython_replies, exercise_plan
from sitepages import REPO, SITE

# One worker runs every test of this module (`--dist loadgroup`), so the other goes on
# with other pages while Node runs, instead of waiting for the shared report.
pytestmark = pytest.mark.xdist_group("live-node")

LIVE = SITE / "live"
NODE_RUN = REPO / "_ext" / "live" / "node_run.mjs"
TEST_WHEELS = REPO / "_build" / "live-cache" / "test-wheels"
LOCK = REPO / "node_modules" / "pyodide" / "pyodide-lock.json"
# The unit tests run in the page's Python: the attention mechanism (core), the layers'
# normalisation, and the checkers' diagnoses of typical slips.
UNIT_TESTS = [
    "test_attention.py",
    "test_softmax.py",
    "test_masks.py",
    "test_scores.py",
    "test_heads.py",
    "test_backward.py",
    "test_tiled.py",
    "test_layer_norm_feed_forward.py",
    "test_exercises_diagnoses.py",
]
# ... less these two, which cannot pass in the page's Python (they do in CPython),
DESELECTED = {
    # Pyodide cannot start threads; tiled_attention(workers=2) raises "can't start new
    # thread" there (the default, one worker, runs)
    "test_tiled.py::test_batch_element_alone_equals_inside_the_batch_and_workers_agree",
    # needs the pretrained MiniLM model, which the page's kernel serves
    # (live_kernel._serve_model) but this run of the test files does not mount
    "test_exercises_diagnoses.py::test_slip_counting_from_one",
}
# ... and one that passes there but takes a quarter of the time (a peak-memory
# measurement at n = 4,096, about 25 s in Pyodide); CPython's run keeps it
SLOW = {"test_tiled.py::test_peak_memory_grows_like_n_times_block_not_n_squared"}
_PLUGIN = """
import os
from hypothesis import settings
# tests/conftest.py loads the profile this names (else its own, "book")
os.environ["HYPOTHESIS_PROFILE"] = "pyodide"
settings.register_profile(
    "pyodide", max_examples=10, derandomize=True, database=None, deadline=None
)
settings.load_profile("pyodide")
"""


def _available() -> dict:
    manifest_path = LIVE / "manifest.json"
    if not manifest_path.is_file():
        pytest.fail(f"no {manifest_path}: the site was built without `make live`")
    manifest = json.loads(manifest_path.read_text())
    if not manifest["available"]:
        pytest.fail(f"live code is not in this build: {manifest['reason']}")
    return manifest


def test_live_code_is_in_this_build():
    manifest = _available()
    assert manifest["pyodide"] == "0.27.7"
    assert manifest["python"].startswith("3.12")
    assert manifest["versions"]["numpy"] == "2.0.2"
    assert manifest["versions"]["matplotlib"] == "3.8.4"


def test_every_chapter_with_exercises_has_a_wrong_answer_to_try():
    # chapters/<part>/<topic>/<topic>.ipynb, named as in WRONG: "<part>/<topic>/<topic>"
    with_exercises = {
        path.relative_to(CHAPTERS).with_suffix("").as_posix()
        for path in CHAPTERS.glob("*/*/*.ipynb")
        if '"exercise"' in path.read_text(encoding="utf-8")
    }
    assert with_exercises == set(WRONG)


def test_every_served_wheel_matches_the_official_lock_file():
    _available()
    lock = json.loads(LOCK.read_text())["packages"]
    by_file = {entry["file_name"]: entry["sha256"] for entry in lock.values()}
    served = [p for p in (LIVE / "pyodide").iterdir() if p.suffix in (".whl", ".zip")]
    runtime = {"python_stdlib.zip"}  # from npm pyodide itself, checked by npm
    checked = [p for p in served if p.name not in runtime]
    assert len(checked) == len(_available()["versions"])
    for path in checked:
        assert path.name in by_file, f"{path.name} is not in Pyodide's lock file"
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert digest == by_file[path.name], path.name
    npm_lock = REPO / "node_modules" / "pyodide" / "pyodide-lock.json"
    assert (
        LIVE / "pyodide" / "pyodide-lock.json"
    ).read_bytes() == npm_lock.read_bytes()


def _stdout(result: dict) -> str:
    return "".join(
        m["text"]
        for m in result["outputs"]
        if m["type"] == "stream" and m["name"] == "stdout"
    )


@pytest.fixture(scope="session")
def node_run(tmp_path_factory):
    """One Node process for the whole session: the unit tests, then every chapter's
    exercise. The module's tests share one xdist group; should two workers still ask
    (another way of distributing tests), the first runs Node and writes the report
    where the other finds it (a file lock)."""
    _available()
    # under xdist the workers share the parent of their base folders and the run's id;
    # alone, the session's own base folder (a report never outlives its run)
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    base = tmp_path_factory.getbasetemp()
    shared, name = (base.parent, f"live-node-{run}") if run else (base, "live-node")
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        report_file = shared / f"{name}.json"
        if not report_file.is_file():
            report_file.write_text(json.dumps(_run_node(tmp_path_factory)))
        return json.loads(report_file.read_text())


# Right after pandas's import: which time-zone files dateutil read (pandas asks it for
# "UTC" when imported), and what Python's libraries find in the page for a zone.
_ZONES = """
import datetime, json, os, sys, zoneinfo
import dateutil.tz, dateutil.zoneinfo
json.dumps({
    "pandas": "pandas" in sys.modules,
    "link": os.path.islink("/usr/share/zoneinfo"),
    "tarball": hasattr(dateutil.zoneinfo.get_zonefile_instance, "_cached_instance"),
    "utc": repr(dateutil.tz.gettz("UTC")),
    "paris": str(datetime.datetime(
        2024, 7, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")).utcoffset()),
})
"""


def _run_node(tmp_path_factory) -> dict:
    wheels = sorted(TEST_WHEELS.glob("*.whl"))
    if len(wheels) < 5:
        pytest.fail(f"the tests' wheels are not in {TEST_WHEELS}: run `make live`")
    tmp = tmp_path_factory.mktemp("live")
    tests = [f"tests/{name}" for name in UNIT_TESTS]
    for node_id in sorted(DESELECTED | SLOW):
        tests += ["--deselect", f"tests/{node_id}"]
    pytest_cell = (
        "import os, sys\n"
        "sys.dont_write_bytecode = True\n"
        "sys.path.insert(0, '/tmp/live_plugin')\n"
        "os.chdir('/home/pyodide/repo')\n"
        "import pytest\n"
        # pytest's default capture duplicates file descriptors, which Pyodide lacks
        f"_code = pytest.main({tests!r} + ['-q', '--capture=sys', '-p', "
        "'live_hypothesis', "
        "'-p', 'no:cacheprovider', '-c', '/home/pyodide/repo/pyproject.toml', "
        "'--rootdir', '/home/pyodide/repo'])\n"
        "print(f'pytest exit code: {int(_code)}')\n"
        "os.chdir('/home/pyodide/book/chapters')"
    )
    plugin = (
        "import os\nos.makedirs('/tmp/live_plugin', exist_ok=True)\n"
        f"open('/tmp/live_plugin/live_hypothesis.py', 'w').write({_PLUGIN!r})\n'ok'"
    )
    steps = [
        {"mount": [str(REPO), "/home/pyodide/repo"]},
        {"wheels": [str(w) for w in wheels]},
        {"python": plugin},
        # as the page's worker does once Python is ready, before any cell runs
        {"python": "import live_kernel\nstr(live_kernel.warm(['import pandas']))"},
        {"python": _ZONES},
        {"cell": pytest_cell},
    ]
    plan = exercise_plan()
    for item in plan:
        # the page's folder, entered as the page's kernel enters it
        enter = f"import live_kernel\nlive_kernel.enter({item['folder']!r})"
        steps.append({"cell": "%reset -f\n" + enter})
        steps.append({"cell": item["page_setup"]})
        steps.extend({"cell": code} for code in item["codes"])
    steps.append(
        {"cell": "import pandas as pd\nprint(pd.get_option('display.max_columns'))"}
    )
    job, out = tmp / "job.json", tmp / "out.json"
    job.write_text(json.dumps(steps))
    done = subprocess.run(
        ["node", str(NODE_RUN), str(LIVE), str(job), str(out)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0 and out.is_file(), done.stderr[-3000:]
    report = json.loads(out.read_text())
    results = report["results"]
    seconds = sum(r["seconds"] for r in results) + report["boot_seconds"]
    print(
        f"\nlive under Node: boot {report['boot_seconds']:.1f} s, unit tests "
        f"{results[5]['seconds']:.1f} s, all {seconds:.1f} s"
    )
    return {
        "zones": results[4],
        "pytest": results[5],
        "exercises": results[6:-1],
        "pandas_columns": results[-1],
        "plan": plan,
    }


def test_attnlib_unit_tests_pass_in_the_page_python(node_run):
    result = node_run["pytest"]
    text = _stdout(result)
    assert result["ok"], result["outputs"]
    assert "pytest exit code: 0" in text, text[-4000:]
    summary = text.split("pytest exit code")[0].strip().splitlines()[-1]
    assert " passed" in summary and "failed" not in summary, summary


def test_time_zones_are_read_where_linux_has_them_not_from_dateutils_tarball(
    node_run,
):
    # /usr/share/zoneinfo in the page (pytz's copy): pandas's import reads one file, not
    # dateutil's whole database, and the standard library's zoneinfo finds zones
    result = node_run["zones"]
    assert result["ok"], result.get("error")
    assert json.loads(result["value"]) == {
        "pandas": True,
        "link": True,
        "tarball": False,
        "utc": "tzfile('/usr/share/zoneinfo/UTC')",
        "paris": "2:00:00",
    }


def test_warmed_pandas_lays_out_tables_as_in_jupyter(node_run):
    # pandas, imported by the kernel's warm() before any cell, must still see a Jupyter
    # kernel: it then shows up to 20 columns, as in the notebooks' stored outputs, where
    # a terminal's setting (0) cuts a wide table to the console's width
    assert _stdout(node_run["pandas_columns"]).strip() == "20"


@pytest.mark.parametrize("chapter", list(WRONG))
def test_exercise_replies_in_the_page_equal_cpython(node_run, chapter):
    plan = node_run["plan"]
    i = [p["chapter"] for p in plan].index(chapter)
    item = plan[i]
    results = node_run["exercises"][i * 5 : i * 5 + 5]  # reset, setup, 3 codes
    assert all(r["ok"] for r in results), [r["outputs"] for r in results if not r["ok"]]
    live = [_stdout(r) for r in results[2:]]
    expected = cpython_replies(item["setup"], item["codes"], item["folder"])
    assert live == expected
    stored, wrong, right = live
    assert "Not answered yet" in stored and "Correct" not in stored
    assert "Not yet" in wrong and "Correct" not in wrong, wrong
    assert "Correct" in right and "Not" not in right, right


def _node_script(script: str):
    """Run a module script under Node with BOOT, UNPACK and BASE standing for the built
    boot.mjs, unpack.mjs and live folder; its last line of output, as JSON."""
    script = script.replace("BOOT", (LIVE / "boot.mjs").as_uri())
    script = script.replace("UNPACK", (LIVE / "unpack.mjs").as_uri())
    script = script.replace("BASE", str(LIVE) + "/")
    done = subprocess.run(
        ["node", "--input-type=module", "-e", script],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.splitlines()[-1])


# Started twice under Node as boot.mjs starts the page's Python: from the build's memory
# snapshot, and from a snapshot whose bytes are spoiled (so from scratch). Each prints
# what Python holds of its start.
_SNAPSHOT_JS = """
import { readFile } from "node:fs/promises";
import { boot } from "BOOT";
const base = "BASE";
const { loadPyodide } = await import(base + "pyodide/pyodide.mjs");
const state = `import json, os, random, sys
json.dumps({"environ": dict(os.environ), "path": sys.path, "cwd": os.getcwd(),
            "random": random.random(), "modules": "numpy" in sys.modules,
            "history": type(
                sys.modules["IPython"].get_ipython().history_manager.db).__module__})`;
// what Python holds as soon as it has started, before the packages' files are written
const held = `import json, sys
json.dumps({"shell": "IPython.core.interactiveshell" in sys.modules,
            "pygments": "pygments.lexers" in sys.modules,
            "dateutil": "dateutil" in sys.modules,
            "compiled": [n for n in sys.modules if n.split(".")[0] in (
                "numpy", "pandas", "matplotlib", "PIL", "kiwisolver", "_sqlite3")],
            "sqlite3": "connect" in vars(sys.modules.get("sqlite3", sys))})`;
const out = [];
for (const spoil of [false, true]) {
  const readBytes = async (path) => {
    const bytes = new Uint8Array(await readFile(base + path));
    return spoil && path.startsWith("snapshot-") ? bytes.subarray(0, 1000) : bytes;
  };
  const printed = [];
  const emit = (message) => printed.push(JSON.parse(message));
  let started = null;
  const load = async (options) => {
    const pyodide = await loadPyodide(options);
    started = JSON.parse(pyodide.runPython(held));
    return pyodide;
  };
  const { pyodide, kernel, restored } = await boot({
    loadPyodide: load, base, readBytes, emit });
  kernel.run("import numpy as np\\nprint(np.arange(3) @ np.arange(3))");
  kernel.run("%history -l 1");
  out.push({ restored, started, state: JSON.parse(pyodide.runPython(state)), printed });
}
console.log(JSON.stringify(out));
"""


def test_the_snapshot_starts_python_as_a_start_from_scratch_and_a_bad_one_is_skipped():
    manifest = _available()
    assert (LIVE / manifest["snapshot"]).is_file()
    from_snapshot, from_scratch = _node_script(_SNAPSHOT_JS)
    assert from_snapshot["restored"] is True
    assert from_scratch["restored"] is False
    for started in (from_snapshot, from_scratch):
        # the shell's history (sqlite3) works, whether sqlite3 was made lazy or not
        assert _stdout({"outputs": started["printed"]}) == (
            "5\nimport numpy as np\nprint(np.arange(3) @ np.arange(3))\n"
        )
        assert started["state"]["modules"] is True
        assert started["state"]["history"] == "sqlite3"
    # the snapshot holds IPython and pygments imported, not dateutil (its import keeps
    # the year), nothing with compiled code, and sqlite3 not run yet (it needs its
    # shared library); a start from scratch, none
    assert from_snapshot["started"] == {
        "shell": True,
        "pygments": True,
        "dateutil": False,
        "compiled": [],
        "sqlite3": False,
    }
    assert from_scratch["started"]["shell"] is False
    snap, scratch = from_snapshot["state"], from_scratch["state"]
    # the same environment, except the script's name, which Node gives (not a path
    # of the machine that built the site, in the snapshot)
    assert snap["environ"].pop("_") == "./this.program"
    scratch["environ"].pop("_")
    assert snap["environ"] == scratch["environ"]
    assert (snap["path"], snap["cwd"]) == (scratch["path"], scratch["cwd"])
    # the random numbers are seeded anew, not those saved in the snapshot
    assert snap["random"] != scratch["random"]


# makeSnapshot asked for a module with compiled code beside pure ones; then Python
# restored from that snapshot, as boot() restores it.
_MAKE_SNAPSHOT_JS = """
import { readFile } from "node:fs/promises";
import { makeSnapshot } from "BOOT";
const base = "BASE";
const { loadPyodide } = await import(base + "pyodide/pyodide.mjs");
const readBytes = async (path) => new Uint8Array(await readFile(base + path));
const modules = [
  "json", "numpy.linalg", "pygments.lexers", "IPython.core.interactiveshell"];
const { bytes, ...report } = await makeSnapshot({
  loadPyodide, base, readBytes, modules });
const pyodide = await loadPyodide({
  indexURL: base + "pyodide/", _loadSnapshot: bytes });
const held = JSON.parse(pyodide.runPython(`import json, sys
tops = ("numpy", "pygments", "IPython")
json.dumps([n for n in sys.modules if n.split(".")[0] in tops])`));
console.log(JSON.stringify({ report, held }));
"""


def test_a_snapshot_leaves_out_every_module_of_a_package_with_compiled_code():
    _available()
    out = _node_script(_MAKE_SNAPSHOT_JS)
    report, held = out["report"], out["held"]
    assert report["imported"] == [
        "json",
        "pygments.lexers",
        "IPython.core.interactiveshell",
    ]
    # numpy's first compiled module was refused; the pure modules numpy had imported
    # before it (numpy._globals...) were dropped with the package
    assert "numpy._core._multiarray_umath" in report["refused"]
    assert report["swallowed"] == []
    assert not [n for n in held if n.startswith("numpy")]
    assert "pygments.lexers" in held and "IPython.core.history" in held


# unpack.mjs's unpackOffThread with stand-ins for its helper worker: one that answers
# as the helper does, one that fails to start (an error event, whose default action,
# reaching the page, must be prevented), one that cannot read a message, one that
# cannot unpack (no DecompressionStream there), one whose constructor throws, none at
# all (Worker null), and one given a file that is not gzip. Then boot.mjs's start with
# an unpack that records the files it is given.
_UNPACK_JS = """
import { readFile } from "node:fs/promises";
import { gzipSync, gunzipSync } from "node:zlib";
import { unpackOffThread } from "UNPACK";
import { boot } from "BOOT";
const data = new TextEncoder().encode("attention ".repeat(1000));
const gz = new Uint8Array(gzipSync(data));
const same = (a) => Buffer.compare(Buffer.from(a), Buffer.from(data)) === 0;
const later = (f) => setTimeout(f, 0);
let prevented = 0;
class Answers {
  postMessage({ id, bytes }) {
    let answer;
    try {
      answer = { id, files: new Uint8Array(gunzipSync(bytes)) };
    } catch (error) {
      answer = { id, error: "incorrect header check" };
    }
    later(() => this.onmessage({ data: answer }));
  }
  terminate() {}
}
class Fails {
  postMessage() {
    if (this.failed) return;  // one error: a worker that failed reports it once
    this.failed = true;
    later(() => this.onerror({ preventDefault: () => { prevented += 1; } }));
  }
  terminate() {}
}
class CannotRead {
  postMessage() { later(() => this.onmessageerror({})); }
  terminate() {}
}
class CannotReadThere {  // the helper could not read a message: {cannot}, no id
  postMessage() { later(() => this.onmessage({ data: { cannot: true } })); }
  terminate() {}
}
class CannotUnpack {
  postMessage({ id }) { later(() => this.onmessage({ data: { id, cannot: true } })); }
  terminate() {}
}
class Throws { constructor() { throw new Error("no workers inside workers"); } }
const helpers = { answers: Answers, fails: Fails, cannotRead: CannotRead,
                  cannotReadThere: CannotReadThere, cannotUnpack: CannotUnpack,
                  throws: Throws, none: null };
const out = { helpers: {} };
for (const [name, Worker] of Object.entries(helpers)) {
  const unpacker = unpackOffThread({ url: "unused", Worker });
  const files = await Promise.all([unpacker.unpack(gz), unpacker.unpack(gz)]);
  out.helpers[name] = { same: files.every(same), here: unpacker.unpackedHere() };
}
out.prevented = prevented;
const spoiled = unpackOffThread({ url: "unused", Worker: Answers });
out.notGzip = await spoiled.unpack(data).then(() => "unpacked", (e) => e.message);
out.notGzipHere = spoiled.unpackedHere();
const base = "BASE";
const { loadPyodide } = await import(base + "pyodide/pyodide.mjs");
const names = new WeakMap();
const readBytes = async (path) => {
  const bytes = new Uint8Array(await readFile(base + path));
  names.set(bytes, path);
  return bytes;
};
out.unpacked = [];
const unpack = (bytes) => {
  out.unpacked.push(names.get(bytes));
  return new Uint8Array(gunzipSync(bytes));
};
const printed = [];
const { kernel, restored } = await boot({ loadPyodide, base, readBytes, unpack,
  emit: (m) => printed.push(JSON.parse(m)) });
kernel.run("print(sum(range(7)))");
out.printed = printed;
out.restored = restored;
console.log(JSON.stringify(out));
"""

# The packages' image written into a fresh runtime's file system (writeImage), over one
# of its files made beforehand with other bytes; then what the file system holds.
_WRITE_IMAGE_JS = """
import { readFile } from "node:fs/promises";
import { gunzip, readImage, writeImage } from "BOOT";
const base = "BASE";
const { loadPyodide } = await import(base + "pyodide/pyodide.mjs");
const manifest = JSON.parse(await readFile(base + "manifest.json", "utf8"));
const gzipped = new Uint8Array(await readFile(base + manifest.image));
const image = readImage(await gunzip(gzipped));
const pyodide = await loadPyodide({ indexURL: base + "pyodide/" });
const [first] = image.files.keys();
pyodide.FS.mkdirTree(first.slice(0, first.lastIndexOf("/")));
pyodide.FS.writeFile(first, "other bytes");
writeImage(pyodide, image);
const FS = pyodide.FS;
let equal = 0;
for (const [path, data] of image.files) {
  const read = Buffer.from(FS.readFile(path));
  if (Buffer.compare(read, Buffer.from(data)) === 0) equal += 1;
}
const six = "/lib/python3.12/site-packages/six.py";
const python = pyodide.runPython(`import json, os
path = "${six}"
size = os.path.getsize(path)
with open(path, "a") as f:
    f.write("# changed")
listed = sorted(os.listdir(os.path.dirname(path)))
import six
json.dumps({"grew": os.path.getsize(path) - size, "mode": oct(os.stat(path).st_mode),
            "six": six.__file__, "listed": "six.py" in listed})`);
// a folder reached through a symbolic link; a file at the root of the file system
FS.mkdirTree("/tmp/real");
FS.symlink("/tmp/real", "/tmp/link");
const bytes = new TextEncoder().encode("through a link");
const extra = new Map([["/tmp/link/a.txt", bytes], ["/b.txt", bytes]]);
writeImage(pyodide, { files: extra });
const linked = new TextDecoder().decode(FS.readFile("/tmp/real/a.txt"));
const rooted = new TextDecoder().decode(FS.readFile("/b.txt"));
const files = image.files.size;
const out = { files, equal, python: JSON.parse(python), linked, rooted };
console.log(JSON.stringify(out));
"""


def test_an_image_is_written_as_files_that_python_reads_and_changes():
    """writeImage makes every file of the packages' image, each equal to its bytes in
    the image, a file that existed before included; Python lists, imports, appends to
    it and sees a regular file of mode 0o666, as FS.writeFile would have made it. A
    folder reached through a symbolic link, and the root folder, work too."""
    out = _node_script(_WRITE_IMAGE_JS)
    assert out["files"] > 4000 and out["equal"] == out["files"], out
    assert out["linked"] == out["rooted"] == "through a link"
    assert out["python"] == {
        "grew": len("# changed"),
        "mode": oct(0o100666),
        "six": "/lib/python3.12/site-packages/six.py",
        "listed": True,
    }


def test_images_are_unpacked_off_thread_or_here_and_a_bad_one_fails():
    manifest = _available()
    out = _node_script(_UNPACK_JS)
    assert out["helpers"] == {
        "answers": {"same": True, "here": 0},  # the helper unpacked both
        "fails": {"same": True, "here": 2},  # then this thread did
        "cannotRead": {"same": True, "here": 2},
        "cannotReadThere": {"same": True, "here": 2},
        "cannotUnpack": {"same": True, "here": 2},
        "throws": {"same": True, "here": 2},
        "none": {"same": True, "here": 2},
    }
    assert out["prevented"] == 1  # the helper's error did not go on to the page
    # not gzip: the helper's message, and no second try on this thread
    assert (out["notGzip"], out["notGzipHere"]) == ("incorrect header check", 0)
    # both images go through `unpack`, each once; the snapshot is unpacked by boot
    assert sorted(out["unpacked"]) == sorted([manifest["image"], manifest["book"]])
    assert out["restored"] is True
    assert _stdout({"outputs": out["printed"]}) == "21\n"
