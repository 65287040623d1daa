"""Sphinx extension: the reader's path through the book.

* **Chapter labels.** The title of every document gets the label
  ``chapter-<file name>`` (``chapter-softmax`` for
  ``chapters/how_attention_works/softmax/softmax.ipynb``), so that prose can refer to a
  chapter by its number, which comes from the numbered table of contents (``_toc.yml``)
  and changes when chapters move: ``{numref}`chapter-softmax``` shows "Chapter <n>"
  (``numfig_format`` in ``_config.yml``), ``{numref}`the softmax chapter (%s)
  <chapter-softmax>``` a text of one's own. No file needs a label of its own, and a new
  chapter has one at once.
* **Previous and next.** Pages named in ``reader_outside_chain`` (``_config.yml``; the
  instructors' page) are left out of the previous/next links at the foot of every page:
  they have none, and their neighbours link past them.
* **The PDF edition.** The role ``{pdf-edition}`file.pdf``` is a download link to the
  PDF next to the site's pages when the PDF is there (``make pdf`` copies it into
  ``_build/html``) or is about to be (``make pdf`` builds the site with
  ``ATTENTION_PDF_EDITION=1``); otherwise it says that this build has no PDF, instead of
  a link that leads nowhere. The pages that use it are rebuilt when that changes.
* **Course time.** The role ``{course-time}`chapters``` is the sum of the times the
  chapters announce in their first cell ("**Time:** about 35 minutes"), written as
  "about 9 h 10 min", so that the landing page never disagrees with the chapters.
* **What the reader sees.** ``_ext/static/reader.css`` (explorers at every width and in
  both colour modes, self-check questions, code blocks, outputs and formulas that fit
  their column or visibly scroll, the back-to-top button) and ``reader.js`` (progress
  marks in the list of chapters, the value of a heat map's cell under the pointer or the
  keyboard focus) are loaded on every page; they live in the static folder that
  ``site_fixes`` registers.
* **Skip to the explorer.** On a page with an explorer (stored widget state), a target
  with the id ``first-explorer`` is put just before the first one, and the page's header
  gets a "Skip to the explorer" link to it (``_ext/templates/layout.html``).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from docutils import nodes
from sphinx.transforms import SphinxTransform

EXPLORER_ANCHOR = "first-explorer"
PDF_ENV = "ATTENTION_PDF_EDITION"
TIME = re.compile(r"\*\*Time:\*\*\s*about\s+(\d+)\s+minutes")
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def chapter_label(docname: str) -> str:
    """The label of a document's title: ``chapter-`` and the file name without
    suffix."""
    return "chapter-" + docname.rsplit("/", 1)[-1]


# ------------------------------------------------------------------ chapter labels
class ChapterLabel(SphinxTransform):
    """Gives the document's first section (its title) the label :func:`chapter_label`,
    as an explicit target, so that the standard domain registers it like
    ``(chapter-x)=`` written above the title."""

    default_priority = 200  # before the standard domain collects the labels

    def apply(self, **kwargs) -> None:
        section = next(iter(self.document.findall(nodes.section)), None)
        if section is None or not section["ids"]:
            return
        name = chapter_label(self.env.docname)
        if name in self.document.nameids:
            return
        section["names"].append(name)
        self.document.nameids[name] = section["ids"][0]
        self.document.nametypes[name] = True


# ------------------------------------------------------------------ previous / next
def _reading_order(env) -> list[str]:
    """Every document in the order of the previous/next chain Sphinx computed."""
    relations = env.collect_relations()
    order, doc, seen = [], env.config.root_doc, set()
    while doc and doc not in seen:
        order.append(doc)
        seen.add(doc)
        doc = relations.get(doc, [None, None, None])[2]
    return order


def _title(app, docname: str) -> str:
    """The document's title as the page shows it (with its chapter number, if any)."""
    return app.builder.render_partial(app.env.titles[docname])["title"]


def _link(app, pagename: str, docname: str | None):
    if docname is None:
        return None
    return {
        "link": app.builder.get_relative_uri(pagename, docname),
        "title": _title(app, docname),
    }


def _chain(app, pagename, templatename, context, doctree):
    if "next" not in context and "prev" not in context:
        return
    outside = set(app.config.reader_outside_chain)
    if pagename in outside:
        context["prev"] = context["next"] = None
        return
    order = [doc for doc in _reading_order(app.env) if doc not in outside]
    if pagename not in order:
        return
    i = order.index(pagename)
    context["prev"] = _link(app, pagename, order[i - 1] if i > 0 else None)
    context["next"] = _link(app, pagename, order[i + 1] if i + 1 < len(order) else None)


# ------------------------------------------------------------------ the PDF edition
def _pdf_offered(app) -> bool:
    return os.environ.get(PDF_ENV) == "1" or any(
        (Path(app.outdir) / name).is_file() for name in app.config.reader_pdf_files
    )


def pdf_edition_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    env.reader_pdf_docs = getattr(env, "reader_pdf_docs", set()) | {env.docname}
    if _pdf_offered(env.app):
        relative = "../" * env.docname.count("/") + text
        node = nodes.raw(
            "",
            f'<a class="reference external pdf-edition" href="{relative}" download>'
            f"{text}</a>",
            format="html",
        )
    else:
        node = nodes.inline(
            "",
            "",
            nodes.Text(f"{text} (not part of this copy of the site: "),
            nodes.literal("", "make pdf"),
            nodes.Text(" builds it)"),
            classes=["pdf-edition-missing"],
        )
    return [node], []


def _pdf_pages_outdated(app, env, added, changed, removed):
    offered = _pdf_offered(app)
    if getattr(env, "reader_pdf_offered", None) == offered:
        return []
    env.reader_pdf_offered = offered
    return sorted(getattr(env, "reader_pdf_docs", set()) - set(removed))


def _purge(app, env, docname):
    docs = getattr(env, "reader_pdf_docs", set())
    docs.discard(docname)


def _merge(app, env, docnames, other):
    env.reader_pdf_docs = getattr(env, "reader_pdf_docs", set()) | (
        getattr(other, "reader_pdf_docs", set()) & set(docnames)
    )


# ------------------------------------------------------------------ course time
def _announced_minutes(path: Path) -> int | None:
    """The minutes a chapter announces ("**Time:** about N minutes") in its first
    Markdown cell (a notebook) or its text (a Markdown file); None if it announces
    none."""
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".ipynb":
        cells = json.loads(text).get("cells", [])
        text = next(
            ("".join(c["source"]) for c in cells if c["cell_type"] == "markdown"), ""
        )
    match = TIME.search(text)
    return int(match.group(1)) if match else None


def course_minutes(env) -> int:
    """The sum of the minutes announced by the documents of the table of contents."""
    total = 0
    for docname in env.app.config.external_site_map:
        minutes = _announced_minutes(Path(env.doc2path(docname)))
        if minutes:
            env.note_dependency(env.doc2path(docname))
            total += minutes
    return total


def hours_and_minutes(minutes: int) -> str:
    """``550`` -> ``"about 9 h 10 min"`` (with no-break spaces inside the time)."""
    hours, rest = divmod(int(minutes), 60)
    if not hours:
        return f"about {rest}\u00a0min"
    return f"about {hours}\u00a0h {rest:02d}\u00a0min"


def course_time_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    return [nodes.Text(hours_and_minutes(course_minutes(env)))], []


# ------------------------------------------------------------------ skip link
def _explorer_target(app, doctree, docname):
    for raw in doctree.findall(nodes.raw):
        if WIDGET_VIEW in raw.astext():
            container = raw.parent if raw.parent is not None else raw
            anchor = nodes.raw(
                "",
                f'<span id="{EXPLORER_ANCHOR}" class="explorer-anchor"></span>',
                format="html",
            )
            container.parent.insert(container.parent.index(container), anchor)
            return


def _skip_link(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if isinstance(body, str) and f'id="{EXPLORER_ANCHOR}"' in body:
        context["reader_explorer_anchor"] = EXPLORER_ANCHOR


def setup(app):
    # after the theme's, the extensions' and the widgets' style sheets (900)
    app.add_css_file("reader.css", priority=950)
    app.add_js_file("reader.js", defer="defer")
    app.add_config_value("reader_outside_chain", [], "html")
    app.add_config_value("reader_pdf_files", ["attention-executable.pdf"], "html")
    app.add_transform(ChapterLabel)
    app.add_role("pdf-edition", pdf_edition_role)
    app.add_role("course-time", course_time_role)
    app.connect("env-get-outdated", _pdf_pages_outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("doctree-resolved", _explorer_target)
    app.connect("html-page-context", _chain)
    app.connect("html-page-context", _skip_link)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
