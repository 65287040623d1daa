"""Live code in the browser, offline: a chapter is made live, all its cells run in
order in the page, and one exercise is answered wrong, then right. In `make test` one
chapter (softmax); with BROWSER_MATRIX=full (`make test-all`) every chapter with an
exercise (:data:`PAGES`).

With every request to another host blocked (conftest's ``context``), each page in
:data:`PAGES`

* loads nothing of live code before the reader asks (only the small script and style
  sheet), and says what "Make this page live" loads;
* once live, runs every cell in order (the page's own "run all cells above" rule):
  every cell that can run raises nothing, and its printed text and displayed values
  equal the outputs stored in the notebook, as nbval compares them (live_support.py);
  the outputs appear under the cells, a figure among them;
* answers its first exercise as a reader would: types a wrong answer into the cell,
  presses its Run button, then the solution: each time the text under the cell is the
  checker's reply, equal to what the checker prints in CPython ("Not yet ..." then
  "Correct ...");
* sends no request anywhere but the local server.

The chapters that use the pretrained MiniLM model (order and position, the Transformer
layer, interpretability) run those cells too: the site serves the weights, read on the
first cell that needs them. Every chapter's exercise is tried (under Node, through the
same kernel) by test_live_node.py in `make test`.
Timings are printed, never asserted."""

from __future__ import annotations

from urllib.parse import urlparse

import nbformat
from live_support import (
    CHAPTERS,
    WRONG,
    cpython_replies,
    exercise_plan,
    live_manifest,
    live_text,
    stored_text,
    watched_page,
)
from sitepages import FULL_MATRIX, LIVE_OFF_JS, SCREENSHOTS

# Every chapter with an exercise (live_support.WRONG) with BROWSER_MATRIX=full (`make
# test-all`); in `make test` one of them, the softmax chapter: its cells, a figure and
# an exercise typed into the page. The other chapters' exercises run through the same
# kernel under Node (test_live_node.py) in `make test`. One test opens the pages one
# after the other in its worker's browser context, so that the second and later find
# Pyodide's files in the browser's cache (as a reader going on to the next chapter
# does), while the other worker of `make test-browser` runs the rest of the browser
# tests.
ALL_PAGES = [f"chapters/{name}.html" for name in WRONG]
MAKE_TEST_PAGES = ["chapters/how_attention_works/softmax/softmax.html"]
PAGES = ALL_PAGES if FULL_MATRIX else MAKE_TEST_PAGES
_CELLS_JS = """() => attnLive.cells().map(c => ({
  index: c.index, position: c.position, runnable: c.runnable, tags: c.tags,
  ran: c.ran, messages: c.messages || null,
  editor: !!c.editor, shown: !!c.node}))"""


def _live_or_fail():
    live_manifest()


def _named_files_fetched(urls) -> list[str]:
    """The files among ``urls`` that the live manifest names (all the runtime's files,
    the model's included; not manifest.json itself), by their path under live/."""
    named = set(live_manifest()["hashes"])
    return [p for u in urls if (p := urlparse(u).path.split("/live/")[-1]) in named]


def _gzipped_files() -> list[str]:
    """The gzipped files of the start: the memory snapshot, the packages' and the
    book's images."""
    manifest = live_manifest()
    return [manifest["snapshot"], manifest["image"], manifest["book"]]


def _stdout(messages) -> str:
    return "".join(
        m["text"] for m in messages if m["type"] == "stream" and m["name"] == "stdout"
    )


def _run_with_button(page, cell: dict, code: str) -> dict:
    """Type ``code`` into the cell, press its Run button, wait for the reply."""
    scope = page.locator(f".live-cell-{cell['index']}")
    scope.locator("textarea.live-editor").fill(code)
    page.evaluate(
        "p => { window.__liveBefore = attnLive.cells()[p].messages; }", cell["position"]
    )
    scope.locator("button.live-run").click()
    page.wait_for_function(
        """p => { const c = attnLive.cells()[p];
                  return c.messages !== window.__liveBefore
                         && /^(ran|stopped)/.test(c.state.textContent); }""",
        arg=cell["position"],
        timeout=60_000,
    )
    messages = page.evaluate("p => attnLive.cells()[p].messages", cell["position"])
    return {"messages": messages, "text": scope.locator(".live-output").inner_text()}


def test_pages_cover_every_numbered_part_of_the_book():
    """The full tier's pages (every chapter with an exercise) hold a chapter of every
    numbered part of _toc.yml, and `make test`'s page is one of them."""
    import yaml

    toc = yaml.safe_load((CHAPTERS.parent / "_toc.yml").read_text(encoding="utf-8"))
    chosen = {p[: -len(".html")] for p in ALL_PAGES}
    assert set(MAKE_TEST_PAGES) <= set(ALL_PAGES)
    for part in toc["parts"]:
        if part.get("numbered"):
            files = {c["file"] for c in part["chapters"]}
            missing = f"no chapter of the part {part['caption']!r} in PAGES"
            assert files & chosen, missing


def test_one_chapter_per_part_runs_live_offline(module_context, site_url):
    # its own profile, each page with live code off before the click (making a page
    # live turns it on in the profile: test_live_code_stays_on_in_this_browser)
    context = module_context
    context.add_init_script(LIVE_OFF_JS)
    _live_or_fail()
    for page_path in PAGES:
        try:
            _chapter_runs_live_offline(context, site_url, page_path)
        except AssertionError as failure:
            raise AssertionError(f"{page_path}: {failure}") from failure


# every URL the page's worker keeps in Cache Storage
_KEPT_JS = """async () => {
  const urls = [];
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    for (const request of await cache.keys()) urls.push(request.url);
  }
  return urls;
}"""


def _chapter_runs_live_offline(context, site_url, page_path):
    # e.g. "how_attention_works/softmax/softmax", as in live_support.WRONG
    name = page_path[len("chapters/") : -len(".html")]
    nb = nbformat.read(CHAPTERS / f"{name}.ipynb", as_version=4)
    n_external = len(context.external_requests)
    page, requests, errors, stop = watched_page(context)
    try:
        page.goto(site_url + page_path, wait_until="load")
        banner = page.locator(".live-banner")
        assert "MB" in banner.inner_text()
        live_files = [urlparse(u).path for u in requests if "/live/" in u]
        assert all(p.endswith(("live-code.js", "live-code.css")) for p in live_files)

        page.get_by_role("button", name="Make this page live").click()
        page.wait_for_function("() => attnLive.cells() !== null", timeout=30_000)
        page.evaluate("() => attnLive.ready().then(() => true)")
        page.evaluate("() => attnLive.runAll().then(() => true)")
        cells = page.evaluate(_CELLS_JS)
        times = page.evaluate("() => attnLive.times()")
        # Python started from the build's memory snapshot (boot.mjs), not from scratch
        assert page.evaluate("() => attnLive.restored()") is True

        blocked = [c for c in cells if not c["runnable"] and c["shown"]]
        for cell in blocked:
            note = page.locator(f".live-cell-{cell['index']} .live-note").inner_text()
            assert note.startswith("This cell cannot run in the page"), note
        if name == "attention_in_practice/transformer_layer/transformer_layer":
            assert not blocked  # the model is served: its cells run in the page

        checked = 0
        for cell in cells:
            assert cell["ran"], cell["index"]
            if not cell["runnable"]:
                continue
            messages = cell["messages"]
            errors_in_cell = [m for m in messages if m["type"] == "error"]
            assert not errors_in_cell, (cell["index"], errors_in_cell)
            if cell["shown"] and "remove-input" not in cell["tags"]:
                assert cell["editor"], cell["index"]
            if "nbval-ignore-output" in cell["tags"]:
                continue
            stored = stored_text(nb.cells[cell["index"]].get("outputs", []))
            assert live_text(messages) == stored, cell["index"]
            checked += 1
        assert checked >= 5
        # a figure drawn in the page, where the chapter's stored outputs have one
        ran = {c["index"] for c in cells if c["runnable"]}
        figures = any(
            "image/png" in out.get("data", {})
            for i in ran
            for out in nb.cells[i].get("outputs", [])
        )
        drawn = page.locator(".live-output img[src^='data:image/png']").count()
        assert drawn >= 1 if figures else drawn == 0, (figures, drawn)
        printing = next(c for c in cells if c["runnable"] and _stdout(c["messages"]))
        first_line = _stdout(printing["messages"]).splitlines()[0].strip()
        under = page.locator(
            f".live-cell-{printing['index']} .live-output"
        ).inner_text()
        assert first_line in under, (first_line, under)

        exercise = next(c for c in cells if "exercise" in c["tags"])
        plan = next(p for p in exercise_plan() if p["chapter"] == name)
        expected = cpython_replies(plan["setup"], plan["codes"], plan["folder"])
        wrong = _run_with_button(page, exercise, plan["codes"][1])
        assert _stdout(wrong["messages"]) == expected[1]
        assert "Not yet" in wrong["text"] and "Correct" not in wrong["text"]
        right = _run_with_button(page, exercise, plan["codes"][2])
        assert _stdout(right["messages"]) == expected[2]
        assert "Correct" in right["text"] and "Not yet" not in right["text"]

        assert context.external_requests[n_external:] == []
        assert all(u.startswith((site_url, "data:", "blob:")) for u in requests), [
            u for u in requests if not u.startswith((site_url, "data:", "blob:"))
        ]
        # the runtime came from the site: fetched now, or kept in Cache Storage by an
        # earlier visit in this browser (worker.mjs), which fetched it from the site
        kept = page.evaluate(_KEPT_JS)
        assert any(
            urlparse(u).path.endswith("pyodide.asm.wasm") for u in requests + kept
        ), kept
        assert all(u.startswith(site_url) for u in kept), kept
        assert not errors, errors
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator(f".live-cell-{exercise['index']}").scroll_into_view_if_needed()
        page.screenshot(path=str(SCREENSHOTS / f"live__{name}.png"))
        t = {k: (v - times["click"]) / 1000 for k, v in times.items() if v is not None}
        figure = f"{t['figure']:.1f} s" if "figure" in t else "none in this chapter"
        print(
            f"\n{page_path}: Python ready {t['ready']:.1f} s after the click, first "
            f"output {t['output']:.1f} s, first figure {figure}; "
            f"{checked} cells compared with the stored outputs"
        )
    finally:
        stop()
        page.close()


# keep the gzipped copies again instead of the unpacked ones (as a browser that kept
# them before unpacked copies were kept: they are unpacked and kept unpacked again)
_BACK_TO_GZIPPED_JS = """async () => { const c = await caches.open('attn-live');
  for (const r of await c.keys()) {
    if (!r.url.endsWith('&unpacked')) continue;
    const url = r.url.slice(0, -'&unpacked'.length);
    await c.put(url, await fetch(url));
    await c.delete(r);
  } }"""


# forget the kept copy of the book's files, as a new build or cleared storage would
_FORGET_BOOK_JS = """async () => { const c = await caches.open('attn-live');
  for (const r of await c.keys())
    if (r.url.includes('/live/book-')) await c.delete(r); }"""


def test_live_code_stays_on_in_this_browser(fresh_context, site_url):
    """A reader who made one page live finds Python starting on the next page while
    they read, with the page unchanged until they press the button; the button then
    makes the cells live, and they run. A later visit in a new tab of the same browser
    starts Python too (nothing downloaded again), but not if a file it needs is no
    longer kept (then it waits for the click). "Stop starting Python on each page"
    turns this off: nothing of live code loads before the click again."""
    context = fresh_context
    _live_or_fail()
    first, second, third = (
        "chapters/how_attention_works/softmax/softmax.html",
        "chapters/how_attention_works/values/values.html",
        "chapters/how_attention_works/scoring/scoring.html",
    )
    page, requests, errors, stop = watched_page(context)

    def live_requests_since(n):
        return [
            urlparse(u).path
            for u in requests[n:]
            if "/live/" in u and not u.endswith(("live-code.js", "live-code.css"))
        ]

    try:
        page.goto(site_url + first, wait_until="load")
        page.get_by_role("button", name="Make this page live").click()
        page.evaluate("() => attnLive.ready().then(() => true)")

        # the next page of the same tab: Python starts before any click
        page.goto(site_url + second, wait_until="load")
        assert (
            "made a page of this book live before"
            in page.locator(".live-early").inner_text()
        )
        page.wait_for_function("() => attnLive.ready() !== null", timeout=10_000)
        page.evaluate("() => attnLive.ready().then(() => true)")
        assert page.evaluate("() => attnLive.cells()") is None
        assert page.locator("textarea.live-editor").count() == 0
        page.get_by_role("button", name="Make this page live").click()
        page.wait_for_function("() => attnLive.cells() !== null", timeout=30_000)
        assert page.locator(".live-early").count() == 0
        times = page.evaluate("() => attnLive.times()")
        assert times["ready"] < times["click"]  # Python was ready before the click
        assert page.locator("textarea.live-editor").count() > 0
        nb = nbformat.read(CHAPTERS / "how_attention_works/values/values.ipynb", 4)
        cells = page.evaluate(_CELLS_JS)
        printing = next(
            c
            for c in cells
            if c["runnable"]
            and "nbval-ignore-output" not in c["tags"]
            and "stdout" in str(nb.cells[c["index"]].get("outputs", []))
        )
        page.evaluate("p => attnLive.run(p).then(() => true)", printing["position"])
        cells = page.evaluate(_CELLS_JS)
        messages = cells[printing["position"]]["messages"]
        stored = stored_text(nb.cells[printing["index"]].get("outputs", []))
        assert live_text(messages) == stored

        # a later visit, in a new tab of the same browser: Python starts while the
        # reader reads, from what the browser kept (no runtime file downloaded again)
        other, other_requests, other_errors, other_stop = watched_page(context)
        try:
            other.goto(site_url + first, wait_until="load")
            assert other.locator(".live-early").count() == 1
            other.wait_for_function("() => attnLive.ready() !== null", timeout=10_000)
            other.evaluate("() => attnLive.ready().then(() => true)")
            # none of the files the manifest names (all but manifest.json itself)
            fetched = _named_files_fetched(other_requests)
            assert fetched == [], fetched
            assert not other_errors, other_errors
        finally:
            other_stop()
            other.close()

        # a file the start needs is no longer kept (a new build, storage cleared):
        # nothing is fetched and the page waits for the click
        page.evaluate(_FORGET_BOOK_JS)
        n = len(requests)
        page.goto(site_url + third, wait_until="load")
        page.wait_for_function(
            "() => !document.querySelector('.live-early')", timeout=10_000
        )
        assert page.evaluate("() => attnLive.ready()") is None
        asked = live_requests_since(n)
        assert any(u.endswith("/live/manifest.json") for u in asked), asked  # it tried
        fetched = _named_files_fetched(asked)
        assert fetched == [], fetched
        page.get_by_role("button", name="Make this page live").click()
        page.evaluate("() => attnLive.ready().then(() => true)")

        # the same, but the reader presses the button before the worker has answered
        # that a file is missing: Python then starts at once, and a cell runs
        page.evaluate(_FORGET_BOOK_JS)
        held = []

        def hold(route):
            held.append(route)

        context.route("**/live/manifest.json", hold)
        try:
            page.goto(site_url + second, wait_until="load")
            assert page.locator(".live-early").count() == 1
            page.get_by_role("button", name="Make this page live").click()
            for _ in range(50):
                if held:
                    break
                page.wait_for_timeout(100)
            assert held, "the worker's request for manifest.json was not seen"
        finally:
            context.unroute("**/live/manifest.json", hold)
            for route in held:
                route.continue_()
        page.wait_for_function("() => attnLive.cells() !== null", timeout=30_000)
        printed = page.evaluate("() => attnLive.python('print(6 * 7)')")
        assert "42" in "".join(m.get("text", "") for m in printed), printed

        # turned off: the page after it loads nothing of live code before a click
        page.goto(site_url + third, wait_until="load")
        page.get_by_role("button", name="Stop starting Python on each page").click()
        assert "Live code is off" in page.locator(".live-status").inner_text()
        assert page.locator(".live-early").count() == 0
        page.goto(site_url + first, wait_until="load")
        n = len(requests)
        page.wait_for_timeout(1_000)
        assert page.evaluate("() => attnLive.ready()") is None
        assert live_requests_since(n) == []
        assert not errors, errors
    finally:
        stop()
        page.close()


def _wait_until_kept_unpacked(page, names):
    """Until the page's worker has kept the files ``names`` unpacked and deleted their
    gzipped copies (once Python is ready, while the reader reads); fails after 60 s."""
    keys = "async () => (await (await caches.open('attn-live')).keys()).map(r => r.url)"
    for _ in range(120):
        urls = page.evaluate(keys)
        unpacked = [u for u in urls if u.endswith("&unpacked")]
        gzipped = [u for u in urls if not u.endswith("&unpacked")]
        if all(any(f"/live/{n}?" in u for u in unpacked) for n in names) and not any(
            f"/live/{n}?" in u for u in gzipped for n in names
        ):
            return
        page.wait_for_timeout(500)
    raise AssertionError(f"not kept unpacked after 60 s: {urls}")


def test_the_worker_unpacks_its_files_on_a_thread_of_its_own(fresh_context, site_url):
    """The page's worker has the packages' and the book's images (gzip files)
    unpacked by a worker of its own (unpack.mjs) while it starts the runtime: in
    Chromium, on a first visit and on a second that finds them kept gzipped (Python
    started before the click; as before unpacked copies were kept:
    test_a_later_visit_reads_the_files_kept_unpacked), neither is unpacked on the
    worker's own thread, a cell runs, and on the second visit nothing is downloaded
    and the unpacked copies are kept again. (Where that helper cannot start or fails,
    the worker unpacks them itself: test_live_node.py.)"""
    context = fresh_context
    _live_or_fail()
    chapter = MAKE_TEST_PAGES[0]
    code = "import numpy as np; print(int(np.arange(7).sum()))"
    page, requests, errors, stop = watched_page(context)
    gzipped = _gzipped_files()
    try:
        for visit in ("first", "second"):
            if visit == "second":
                _wait_until_kept_unpacked(page, gzipped)
                page.evaluate(_BACK_TO_GZIPPED_JS)
                before = len(requests)
            page.goto(site_url + chapter, wait_until="load")
            page.get_by_role("button", name="Make this page live").click()
            page.wait_for_function("() => attnLive.ready() !== null", timeout=10_000)
            page.evaluate("() => attnLive.ready().then(() => true)")
            assert page.evaluate("() => attnLive.unpackedHere()") == 0, visit
            printed = page.evaluate("c => attnLive.python(c)", code)
            assert "21" in "".join(m.get("text", "") for m in printed), printed
        times = page.evaluate("() => attnLive.times()")
        assert (
            times["ready"] < times["click"] or times["start_runtime"] < times["click"]
        )
        fetched = _named_files_fetched(requests[before:])
        assert not fetched, fetched
        _wait_until_kept_unpacked(page, gzipped)
        assert not errors, errors
    finally:
        stop()
        page.close()


# the site's Cache Storage: {url: [byte length, sha256 hex]} of the kept copies whose
# URL holds one of the names given
_KEPT_DIGESTS_JS = """async (names) => {
  const cache = await caches.open('attn-live');
  const out = {};
  for (const request of await cache.keys()) {
    if (!names.some((name) => request.url.includes(name))) continue;
    const bytes = await (await cache.match(request)).arrayBuffer();
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
    out[request.url] = [bytes.byteLength,
      Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')];
  }
  return out;
}"""


def test_a_later_visit_reads_the_files_kept_unpacked(fresh_context, site_url):
    """After a first visit, the browser keeps the snapshot and the two images unpacked
    (each equal to the served gzip file, unpacked here with Python's gzip) instead of
    gzipped; a later visit starts Python from those copies, without requesting any of
    the three files, and a cell runs."""
    import gzip
    import hashlib

    from sitepages import SITE

    context = fresh_context
    gzipped = _gzipped_files()
    chapter = MAKE_TEST_PAGES[0]
    code = "import numpy as np; print(int(np.arange(7).sum()))"
    page, requests, errors, stop = watched_page(context)
    try:
        page.goto(site_url + chapter, wait_until="load")
        page.get_by_role("button", name="Make this page live").click()
        page.evaluate("() => attnLive.ready().then(() => true)")
        _wait_until_kept_unpacked(page, gzipped)
        kept = page.evaluate(_KEPT_DIGESTS_JS, gzipped)
        for name in gzipped:
            unpacked = gzip.decompress((SITE / "live" / name).read_bytes())
            mine = [u for u in kept if f"/live/{name}?" in u]
            assert len(mine) == 1 and mine[0].endswith("&unpacked"), (name, mine)
            assert kept[mine[0]] == [
                len(unpacked),
                hashlib.sha256(unpacked).hexdigest(),
            ], name

        before = len(requests)
        page.goto(site_url + chapter, wait_until="load")  # Python starts at once
        page.wait_for_function("() => attnLive.ready() !== null", timeout=10_000)
        page.evaluate("() => attnLive.ready().then(() => true)")
        page.get_by_role("button", name="Make this page live").click()
        printed = page.evaluate("c => attnLive.python(c)", code)
        assert "21" in "".join(m.get("text", "") for m in printed), printed
        assert page.evaluate("() => attnLive.restored()")  # from the snapshot
        fetched = _named_files_fetched(requests[before:])
        assert not fetched, fetched
        assert not errors, errors
    finally:
        stop()
        page.close()
