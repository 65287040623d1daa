"""Build the PDF edition of the book from the built website (``make pdf``).

Every page of ``_build/html`` in the reading order of ``_toc.yml`` is printed by
Debian's Chromium (the browser the browser tests use, driven by Playwright, every
request to another host blocked), exactly as a reader sees it: MathJax's typeset
mathematics, every figure, the drawn explorer widgets in their stored state, and the
exercise solutions opened. A print style sheet (``tools/pdf.css``) drops the site's
navigation and makes long code lines wrap. Then pypdf puts together a title page, a
table of contents with page numbers, the chapters, page numbers on every page after the
title, and bookmarks for every part and chapter.

Usage: ``python tools/build_pdf.py [--site _build/html] [--out
_build/pdf/attention-executable.pdf]``
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import html
import http.server
import io
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

import yaml
from pypdf import PdfReader, PdfWriter

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))
from sitepages import CHROMIUM, CHROMIUM_ARGS, LOCAL_HOSTS  # noqa: E402

CSS = (Path(__file__).with_name("pdf.css")).read_text(encoding="utf-8")
PAGE = {
    "format": "A4",
    "margin": {"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
}
# Small grey running head: the chapter's title (Chromium fills <span class="title">).
HEADER = (
    '<div style="font-size:8px;color:#666;width:100%;padding:0 16mm;'
    'font-family:sans-serif;text-align:right"><span class="title"></span></div>'
)

_READY_JS = """async () => {
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await MathJax.startup.promise;
  const views = Array.from(document.querySelectorAll(
      'script[type="application/vnd.jupyter.widget-view+json"]'));
  const drawn = () => views.filter(
      v => v.parentElement.querySelector('.jupyter-widgets'));
  const t0 = Date.now();
  while (drawn().length < views.length && Date.now() - t0 < 60000)
    await new Promise(r => setTimeout(r, 100));
  const imgs = Array.from(document.images);
  imgs.forEach(img => { img.loading = "eager"; });
  await Promise.all(imgs.map(img => img.complete ? null : new Promise(r => {
      img.addEventListener("load", r); img.addEventListener("error", r);
      setTimeout(r, 10000); })));
  await document.fonts.ready;
  return {widgets: views.length, drawn: drawn().length};
}"""

# For paper: open every solution and dropdown, turn links to other pages of the site
# into plain text (they would point at this temporary local server), and load the print
# styles.
_PREPARE_JS = """(css) => {
  document.querySelectorAll(".toggle-hidden > .admonition-title .toggle-button, "
                            + "button.toggle-button.toggle-button-hidden")
    .forEach(button => button.click());
  document.querySelectorAll(".toggle-hidden")
    .forEach(el => el.classList.remove("toggle-hidden"));
  document.querySelectorAll("details").forEach(d => { d.open = true; });
  for (const a of document.querySelectorAll("a[href]")) {
    const url = new URL(a.href, document.baseURI);
    if (url.origin === location.origin) a.removeAttribute("href");
  }
  const style = document.createElement("style");
  style.textContent = css;
  document.head.append(style);
  return true;
}"""


# Self-check questions (jupyterquiz) are answered by clicking in the browser; on paper
# each quiz is followed by its answers, read from the questions the page embeds (`var
# questions<id> =`): the centre of a numeric question's accepted interval with its
# tolerance, the right option of a multiple-choice question with its explanation.
# Mathematics in them is typeset by MathJax.
_QUIZ_ANSWERS_JS = r"""async () => {
  const quizzes = Array.from(document.querySelectorAll("div[data-numquestions][id]"));
  const tex = s => s.replace(/\$\$(.+?)\$\$/g, "\\[$1\\]")
                    .replace(/\$(.+?)\$/g, "\\($1\\)");
  const esc = s => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const texHtml = s => s.replace(/\$\$(.+?)\$\$/g, (m, x) => "\\[" + esc(x) + "\\]")
                        .replace(/\$(.+?)\$/g, (m, x) => "\\(" + esc(x) + "\\)");
  const boxes = [];
  for (const quiz of quizzes) {
    const name = "questions" + quiz.id;
    const script = Array.from(quiz.parentElement.querySelectorAll("script"))
      .find(s => s.textContent.includes("var " + name + "="));
    if (!script) throw new Error("no questions for the quiz " + quiz.id);
    const text = script.textContent;
    const start = text.indexOf("=", text.indexOf("var " + name + "=")) + 1;
    const end = text.indexOf("];", start) + 1;
    const questions = JSON.parse(text.slice(start, end));
    const items = questions.map(q => {
      const right = q.answers.filter(a => a.correct);
      if (!right.length)
        throw new Error("a question of " + quiz.id + " has no right answer");
      if (q.type === "numeric") {
        const a = right[0];
        if ("value" in a) return esc(String(a.value));
        const tol = (a.range[1] - a.range[0]) / (2 + 1e-9);
        const digits = Math.max(0, Math.ceil(-Math.log10(tol)));
        return (a.range[0] + tol).toFixed(digits)
               + " (&plusmn;" + tol.toFixed(digits) + ")";
      }
      return right.map(a => {
        const why = (a.feedback || "").replace(/^Correct\.\s*/, "");
        // the answer and its explanation are HTML, as the site shows them
        // (<em>bank</em> in italics, not its markup); only the mathematics is escaped
        return "<strong>" + texHtml(String(a.answer)) + "</strong>"
               + (why ? ". " + texHtml(why) : "");
      }).join("; ");
    });
    const box = document.createElement("div");
    box.className = "pdf-quiz-answers";
    box.innerHTML =
      "<p class='pdf-quiz-answers-title'>Answers to these questions</p><ol>"
      + items.map(i => "<li>" + i + "</li>").join("") + "</ol>";
    quiz.after(box);
    boxes.push(box);
  }
  if (boxes.length && window.MathJax && MathJax.typesetPromise)
    await MathJax.typesetPromise(boxes);
  return quizzes.length;
}"""


def reading_order(repo: Path = REPO) -> list[dict]:
    """The book's pages in the order of ``_toc.yml``: dicts with ``file``, ``part``."""
    toc = yaml.safe_load((repo / "_toc.yml").read_text(encoding="utf-8"))
    entries = [{"file": toc["root"], "part": None}]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters", []):
            entries.append({"file": chapter["file"], "part": part.get("caption")})
            for section in chapter.get("sections", []):
                entries.append({"file": section["file"], "part": part.get("caption")})
    return entries


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".woff": "font/woff",
        ".woff2": "font/woff2",
        ".svg": "image/svg+xml",
    }

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def _serve(site: Path):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _block_other_hosts(route):
    host = urlparse(route.request.url).hostname
    if (
        urlparse(route.request.url).scheme in ("http", "https")
        and host not in LOCAL_HOSTS
    ):
        route.abort("blockedbyclient")
    else:
        route.continue_()


from playwright.sync_api import TimeoutError as PlaywrightTimeout  # noqa: E402


def _print_page(context, url: str, header: bool) -> tuple[bytes, str, dict]:
    page = context.new_page()
    try:
        page.goto(url, wait_until="load")
        # network idle first (30 s at most); then MathJax, widgets, images and fonts
        # are awaited explicitly (_READY_JS)
        try:
            page.wait_for_load_state("networkidle", timeout=30_000)
        except PlaywrightTimeout:
            pass
        widgets = page.evaluate(_READY_JS)
        if widgets["drawn"] < widgets["widgets"]:
            raise RuntimeError(
                f"{url}: only {widgets['drawn']} of {widgets['widgets']} "
                f"explorer widgets were drawn"
            )
        quizzes = page.evaluate(_QUIZ_ANSWERS_JS)
        page.evaluate(_PREPARE_JS, CSS)
        page.wait_for_timeout(300)
        # the article's own title, numbered as the site numbers its chapters ("6.
        # Softmax: ..."); not the theme's print-only copy above the article
        # (#jb-print-docs-body), which comes first in the page and has no number
        title = page.evaluate(
            "() => (document.querySelector('article h1') "
            "|| document.querySelector('main h1') || document.querySelector('h1') "
            "|| {textContent: document.title}).textContent"
            ".replace(/[#¶]/g, '').replace(/\\s+/g, ' ').trim()"
        )
        pdf = page.pdf(
            **PAGE,
            print_background=True,
            display_header_footer=header,
            header_template=HEADER if header else "",
            footer_template="<span></span>",
        )
        return pdf, title, {**widgets, "quizzes": quizzes}
    finally:
        page.close()


def _print_html(
    context, base_url: str, body: str, title: str, extra_css: str = ""
) -> bytes:
    """A page of our own (title page, contents, page numbers), printed with the
    site's fonts."""
    page = context.new_page()
    try:
        page.goto(
            base_url + "genindex.html", wait_until="load"
        )  # the site's origin and fonts
        page.set_content(
            f"<!doctype html><html><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{extra_css}</style>"
            f"</head><body>{body}</body></html>"
        )
        page.evaluate("() => document.fonts.ready.then(() => true)")
        return page.pdf(**PAGE, print_background=True)
    finally:
        page.close()


FRONT_CSS = """
body { font-family: "DejaVu Serif", Georgia, serif; color: #111; }
.title-page { text-align: center; padding-top: 70mm; }
.title-page h1 { font-size: 34pt; margin: 0 0 8mm; }
.title-page .subtitle { font-size: 15pt; color: #333; margin-bottom: 40mm; }
.title-page .meta { font-size: 10pt; color: #444; line-height: 1.6; }
h1.contents { font-size: 22pt; margin: 0 0 8mm; }
.toc { width: 100%; border-collapse: collapse; font-size: 11pt; }
.toc td { padding: 1.2mm 0; vertical-align: bottom; }
.toc td.page { text-align: right; width: 14mm; font-variant-numeric: tabular-nums; }
.toc tr.part td { font-weight: bold; padding-top: 5mm; font-size: 11.5pt; }
.toc td.chapter { padding-left: 6mm; }
.toc td.chapter a { color: inherit; text-decoration: none; }
.toc .dots { border-bottom: 1px dotted #999; }
"""

NUMBERS_CSS = """
@page { size: A4; margin: 0; }
body { margin: 0; font-family: "DejaVu Sans", sans-serif; }
.n { height: 297mm; position: relative; break-after: page; }
.n span { position: absolute; bottom: 8mm; left: 0; right: 0; text-align: center;
          font-size: 9pt; color: #444; }
"""


def _title_page(config: dict, commit: str, date: str) -> str:
    return (
        f"<div class='title-page'><h1>{html.escape(config['title'])}</h1>"
        f"<div class='subtitle'>An executable textbook about the attention mechanism"
        f"</div><div class='meta'>{html.escape(config.get('author', ''))}<br>"
        f"PDF edition, built {date} from commit {html.escape(commit)}<br>"
        f"Source, runnable notebooks and the website with its interactive explorers: "
        f"{html.escape(config['repository']['url'])}</div></div>"
    )


def _contents(entries: list[dict], starts: list[int] | None) -> str:
    rows, part = [], None
    for i, entry in enumerate(entries):
        if entry["part"] != part and entry["part"]:
            part = entry["part"]
            rows.append(
                f"<tr class='part'><td colspan='2'>{html.escape(part)}</td></tr>"
            )
        number = str(starts[i]) if starts else "000"
        rows.append(
            f"<tr><td class='chapter'>{html.escape(entry['title'])}</td>"
            f"<td class='page'>{number}</td></tr>"
        )
    return (
        f"<h1 class='contents'>Contents</h1><table class='toc'>{''.join(rows)}</table>"
    )


def _page_count(pdf: bytes) -> int:
    return len(PdfReader(io.BytesIO(pdf)).pages)


def _git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=REPO,
            text=True,
            capture_output=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def build(site: Path, out: Path) -> dict:
    from playwright.sync_api import sync_playwright

    started = time.monotonic()
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    entries = reading_order()
    for entry in entries:
        entry["html"] = site / f"{entry['file']}.html"
        if not entry["html"].is_file():
            raise SystemExit(
                f"{entry['html']} is missing: build the website first (make book)"
            )
    server, base_url = _serve(site)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
            )
            context = browser.new_context(
                viewport={"width": 1000, "height": 1400}, service_workers="block"
            )
            context.route("**/*", _block_other_hosts)
            context.set_default_timeout(180_000)  # a loaded machine is slow, not broken
            chapters = []
            for entry in entries:
                rel = entry["html"].relative_to(site).as_posix()
                pdf, entry["title"], entry["printed"] = _print_page(
                    context, base_url + rel, header=True
                )
                chapters.append(pdf)
                print(f"  printed {rel}: {_page_count(pdf)} pages", flush=True)
            date = dt.date.today().isoformat()
            title = _print_html(
                context,
                base_url,
                _title_page(config, _git_commit(), date),
                config["title"],
                FRONT_CSS,
            )
            n_contents = _page_count(
                _print_html(
                    context, base_url, _contents(entries, None), "Contents", FRONT_CSS
                )
            )
            starts, page = [], _page_count(title) + n_contents + 1
            for pdf in chapters:
                starts.append(page)
                page += _page_count(pdf)
            contents = _print_html(
                context, base_url, _contents(entries, starts), "Contents", FRONT_CSS
            )
            if _page_count(contents) != n_contents:
                raise RuntimeError(
                    "the table of contents changed length with its numbers"
                )
            total = page - 1
            numbers = _print_html(
                context,
                base_url,
                "".join(
                    f"<div class='n'><span>{i}</span></div>"
                    for i in range(1, total + 1)
                ),
                "numbers",
                NUMBERS_CSS,
            )
            browser.close()
    finally:
        server.shutdown()

    writer = PdfWriter()
    for part in [title, contents, *chapters]:
        writer.append(PdfReader(io.BytesIO(part)))
    number_pages = PdfReader(io.BytesIO(numbers)).pages
    assert len(writer.pages) == total == len(number_pages), (len(writer.pages), total)
    for i, page in enumerate(writer.pages):
        if i > 0:  # no number on the title page
            page.merge_page(number_pages[i])
    # bookmarks: one per part, one per page of the book under it
    parents: dict[str, object] = {}
    writer.add_outline_item(title="Contents", page_number=1)
    for entry, start in zip(entries, starts):
        parent = None
        if entry["part"]:
            if entry["part"] not in parents:
                parents[entry["part"]] = writer.add_outline_item(
                    title=entry["part"], page_number=start - 1
                )
            parent = parents[entry["part"]]
        writer.add_outline_item(
            title=entry["title"], page_number=start - 1, parent=parent
        )
    # links from the contents page to the chapters
    contents_first = len(PdfReader(io.BytesIO(title)).pages)
    writer.add_metadata(
        {
            "/Title": config["title"],
            "/Author": config.get("author", ""),
            "/Subject": "An executable textbook about the attention mechanism",
        }
    )
    writer.page_mode = "/UseOutlines"
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as handle:
        writer.write(handle)
    # The website links to the PDF beside its pages (chapters/intro.md,
    # chapters/using_the_book/running.md: ../attention-executable.pdf), so the built
    # site offers it offline, and GitHub Pages publishes it with the site.
    shutil.copyfile(out, site / out.name)
    seconds = time.monotonic() - started
    summary = {
        "pdf": str(out),
        "pages": total,
        "bytes": out.stat().st_size,
        "seconds": round(seconds, 1),
        "contents_pages": n_contents,
        "contents_first_page": contents_first + 1,
        "chapters": [
            {
                "file": e["file"],
                "title": e["title"],
                "first_page": s,
                "html": e["html"].relative_to(site).as_posix(),
                **e["printed"],
            }
            for e, s in zip(entries, starts)
        ],
    }
    out.with_suffix(".json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    return summary


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=REPO / "_build" / "html")
    parser.add_argument(
        "--out", type=Path, default=REPO / "_build" / "pdf" / "attention-executable.pdf"
    )
    args = parser.parse_args(argv)
    summary = build(args.site.resolve(), args.out.resolve())
    print(
        f"{summary['pdf']}: {summary['pages']} pages, "
        f"{summary['bytes'] / 2**20:.1f} MiB, built in {summary['seconds']:.0f} s"
    )


if __name__ == "__main__":
    main()
