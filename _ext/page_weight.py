"""Sphinx extension: each page loads only what it uses.

* **MathJax only where there is mathematics.** Sphinx puts MathJax on a page when the
  page, or any page in its table of contents, has a formula; the landing page, whose
  table of contents is the whole book, therefore loaded it for none. Here a page keeps
  MathJax (and its configuration script) only if it has a formula of its own, or TeX in
  its self-check questions or in its explorers' stored state (typeset in the browser).
  Which MathJax is loaded is set in ``_config.yml`` (the loader and the three
  components the book needs, not the 1.2 MB combined file with its menu).
* **No unused widget models.** A notebook stores the state of every widget alive when
  it was executed, including the live explorers, which the website does not show (their
  cells are removed from the page) and which cannot work without a kernel: 40-100 kB of
  models per chapter, among them the PNG of the live figure. The page keeps the models
  that its widget views show (a view's model and every model its state names, followed
  to the end) and the links between kept models (``jslink``, which no view names), and
  drops the rest.
* **Only the icons the site shows.** The theme's Font Awesome fonts hold some 2,000
  icons in 0.3 MB (solid and brands, loaded by every page that shows one of each); the
  site shows about thirty. After the build, the fonts are cut down (fontTools) to the
  icons named in the pages and scripts (``fa-rocket``...) and those the theme's style
  sheets draw themselves (admonitions, the contents' caret), written to
  ``_static/icons/`` as WOFF, and ``_static/icons/icons.css`` (loaded after the theme's
  style sheet) points the theme's font names at them, so that the full fonts are never
  fetched.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.builders.html._assets import _JavaScript

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
WIDGET_VIEW_RE = re.compile(
    r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>', re.S
)
MODEL_REF = re.compile(r"IPY_MODEL_([0-9A-Za-z_-]+)")
# TeX as MathJax finds it in text: $...$, $$...$$, \(...\), \[...\] or an environment
TEX = re.compile(r"\$[^$\s][^$]*\$|\\\(|\\\[|\\begin\{")


def _filename(script) -> str:
    return getattr(script, "filename", None) or ""


def _is_mathjax(script, app) -> bool:
    name = str(_filename(script))
    # Sphinx prefixes a relative mathjax_path with _static/
    if name and name.split("?")[0].endswith(app.config.mathjax_path.lstrip("./")):
        return True
    body = getattr(script, "attributes", {}).get("body", "") or ""
    return not name and body.lstrip().startswith("window.MathJax")


def _widget_state_script(scripts):
    for i, script in enumerate(scripts):
        if getattr(script, "attributes", {}).get("type") == WIDGET_STATE:
            return i, script
    return None, None


def _needs_mathjax(app, pagename: str, body: str, widget_state: str) -> bool:
    domain = app.env.get_domain("math")
    if domain.data["has_equations"].get(pagename):
        return True
    if TEX.search(widget_state):
        return True
    quiz = body.find('id="attnquiz_')
    return quiz >= 0 and bool(TEX.search(body[quiz:]))


def _mathjax_where_needed(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    _, state = _widget_state_script(scripts)
    state_body = state.attributes.get("body", "") if state is not None else ""
    body = context.get("body") if isinstance(context.get("body"), str) else ""
    if _needs_mathjax(app, pagename, body, state_body):
        return
    context["script_files"] = [s for s in scripts if not _is_mathjax(s, app)]


def used_models(state: dict, view_ids) -> set[str]:
    """The ids of the models that the views ``view_ids`` need.

    ``state`` maps a model id to its stored record (``model_name``, ``state``, ...). A
    view needs its model and, recursively, every model named in a kept model's state
    (``"IPY_MODEL_<id>"``: children, layout, style); a model without a view of its own
    (a link) is kept when it names a kept model.
    """

    def refs(model_id):
        return set(MODEL_REF.findall(json.dumps(state[model_id].get("state", {}))))

    kept: set[str] = set()

    def keep(model_id):
        todo = [model_id]
        while todo:
            current = todo.pop()
            if current in kept or current not in state:
                continue
            kept.add(current)
            todo.extend(refs(current))

    for view in view_ids:
        keep(view)
    grew = True
    while grew:
        grew = False
        for model_id, record in state.items():
            if model_id in kept or record.get("state", {}).get("_view_name"):
                continue
            if refs(model_id) & kept:
                keep(model_id)
                grew = True
    return kept


def _prune_widget_state(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    body = context.get("body")
    if not isinstance(scripts, list) or not isinstance(body, str):
        return
    i, script = _widget_state_script(scripts)
    if script is None:
        return
    stored = json.loads(script.attributes["body"])
    views = [json.loads(v)["model_id"] for v in WIDGET_VIEW_RE.findall(body)]
    kept = used_models(stored["state"], views)
    stored["state"] = {k: v for k, v in stored["state"].items() if k in kept}
    attributes = dict(script.attributes)
    attributes["body"] = json.dumps(stored).replace("</", "<\\/")
    scripts[i] = _JavaScript(script.filename, priority=script.priority, **attributes)


# ------------------------------------------------------------------ icon fonts
ICON_FONTS = (
    # (file in the theme's webfonts/, CSS family, weight)
    ("fa-solid-900.ttf", "Font Awesome 6 Free", 900),
    ("fa-regular-400.ttf", "Font Awesome 6 Free", 400),
    ("fa-brands-400.ttf", "Font Awesome 6 Brands", 400),
)
ICONS_DIR = "icons"
# .fa-rocket:before{content:"\f135"}, several names per rule possible
ICON_RULE = re.compile(r'((?:\.fa-[\w-]+:(?:before|after),?)+)\{content:"([^"]+)"\}')
ICON_NAME = re.compile(r"\bfa-[a-z0-9-]+")
PRIVATE_USE = re.compile(r"[\ue000-\uf8ff]|\\[ef][0-9a-f]{3}\b")


def _codepoint(text: str) -> int | None:
    """The code point of a CSS ``content`` string that is one icon (``\\f135`` or the
    character itself); None for any other text."""
    if re.fullmatch(r"\\[0-9a-f]{4,5}", text):
        return int(text[1:], 16)
    return ord(text) if len(text) == 1 else None


def icon_codepoints(outdir: Path) -> set[int]:
    """The code points of every icon the built site can show: those of the icon classes
    named in its pages and scripts, and those its style sheets use directly."""
    static = outdir / "_static"
    css = "\n".join(
        p.read_text("utf-8", errors="replace") for p in static.rglob("*.css")
    )
    names: dict[str, int] = {}

    def collect(match):
        point = _codepoint(match.group(2))
        if point is None:
            return match.group(0)
        for name in re.findall(r"\.(fa-[\w-]+):", match.group(1)):
            names[name] = point
        return ""

    rest = ICON_RULE.sub(collect, css)
    points = {_codepoint(m.group(0)) for m in PRIVATE_USE.finditer(rest)} - {None}
    texts = [p for p in outdir.rglob("*.html")] + list(static.rglob("*.js"))
    used = set()
    for path in texts:
        used |= set(ICON_NAME.findall(path.read_text("utf-8", errors="replace")))
    return points | {names[n] for n in used if n in names}


def _cut_icon_fonts(app, exception):
    if exception or app.builder.format != "html":
        return
    from fontTools import subset

    outdir = Path(app.outdir)
    webfonts = outdir / "_static" / "vendor" / "fontawesome" / "webfonts"
    if not webfonts.is_dir():
        return
    points = icon_codepoints(outdir)
    folder = outdir / "_static" / ICONS_DIR
    folder.mkdir(exist_ok=True)
    faces = []
    for name, family, weight in ICON_FONTS:
        source = webfonts / name
        if not source.is_file():
            continue
        options = subset.Options()
        options.flavor = "woff"
        options.layout_features = []
        options.name_IDs = ["*"]
        options.notdef_outline = True
        font = subset.load_font(str(source), options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(points))
        subsetter.subset(font)
        target = folder / (Path(name).stem + ".woff")
        subset.save_font(font, str(target), options)
        faces.append(
            f'@font-face {{ font-family: "{family}"; font-style: normal; '
            f"font-weight: {weight}; font-display: block; "
            f'src: url("{target.name}") format("woff"); }}'
        )
    (folder / "icons.css").write_text(
        "/* The icons the site shows, cut from the theme's Font Awesome fonts by\n"
        "   _ext/page_weight.py; these faces replace the theme's full fonts. */\n"
        + "\n".join(faces)
        + "\n",
        encoding="utf-8",
    )


def setup(app):
    app.add_css_file(f"{ICONS_DIR}/icons.css", priority=960)
    app.connect("build-finished", _cut_icon_fonts)
    # after myst-nb (500) has added the page's widget state and Sphinx its MathJax
    app.connect("html-page-context", _prune_widget_state, priority=800)
    app.connect("html-page-context", _mathjax_where_needed, priority=800)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
