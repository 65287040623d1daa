"""Sphinx extension: fixes to the theme and the extensions, each for a problem a reader
met.

**The chapter list on phones and tablets.** pydata-sphinx-theme 0.17.1 shows its own
header whenever ``navbar_persistent`` is set, and sets it (to its search field) unless
the site does. sphinx-book-theme 1.3.0 hides that header and draws its own "Toggle
primary sidebar" and "Toggle secondary sidebar" buttons in the article's header; but the
theme's script binds the drawers to the first ``.primary-toggle`` and
``.secondary-toggle`` of the page, which are then the hidden header's. Below 960 px the
visible buttons opened nothing (pydata-sphinx-theme issue 2451, sphinx-book-theme issues
988 and 999). Setting
``navbar_persistent`` to nothing, as sphinx-book-theme's own configuration intends,
leaves the hidden header out, so the visible buttons are the ones the script binds. The
search field stays in the sidebar, and the header keeps its search button.

**Scripts listed once.** sphinx-thebe 0.3.1 adds its inline configuration script
(``const THEBE_JS_URL = ...``) while documents are being read; Sphinx 7.4 then holds it
twice (once with the file name
``None``, once with ``''``), so every page declared the constant twice and the browser
reported ``SyntaxError: Identifier 'THEBE_JS_URL' has already been declared``. This
extension removes scripts that are identical (same source, attributes and body) just
before a page is written.

It also puts ``_ext/templates/`` first on the template path, so that its copies of theme
templates replace the theme's: the colour-mode and search buttons, whose
accessible names differed from the text they show (axe-core's
``label-content-name-mismatch``, WCAG 2.5.3; see the comment in each template),
the layout (no search index on pages without search; a link that skips to the explorer),
and myst-nb's "Show code cell source" toggles, whose ``<summary>`` was labelled "Toggle
hidden content" instead of the text it shows. It gives the bibliography's entries the
role ``listitem`` (docutils' ``doc-biblioentry`` is deprecated in ARIA 1.3 and is no
list item of the ``role="list"`` around them), and it loads
``_ext/static/site_fixes.css`` (link contrast in admonitions) and ``site_fixes.js`` (tab
stops on code blocks, display equations and drawings that scroll sideways, also once
opened or typeset). It leaves out the theme's ``fontawesome.js`` (see
:func:`_without_fontawesome_js`); on the pages that load the widgets' script it moves
that script before MathJax and adds its style sheet (:func:`_widgets_first_and_styled`).
``tests/browser/test_a11y.py`` runs axe-core on every page.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

TEMPLATES = Path(__file__).resolve().parent / "templates"
STATIC = Path(__file__).resolve().parent / "static"


def _filename(script) -> str:
    return getattr(script, "filename", None) or ""


def _key(script) -> tuple:
    attributes = tuple(sorted(script.attributes.items()))
    return (_filename(script), script.priority, attributes)


def _dedupe(app, pagename, templatename, context, doctree):
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen, unique = set(), []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


WIDGETS_JS = "static-widgets/static-widgets.js"
WIDGETS_CSS = "../vendor/static-widgets/static-widgets.css"


def _widgets_first_and_styled(app, pagename, templatename, context, doctree):
    """On the pages that load the widgets' script (myst-nb adds it, from
    ``nb_ipywidgets_js`` in _config.yml, to pages that hold widget state): move it
    before MathJax, so that the explorers are drawn before MathJax's 1 MB script is
    evaluated (both are deferred and run in document order), and add the widgets' style
    sheet."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    widgets, rest = [], []
    for script in scripts:
        (widgets if _filename(script).endswith(WIDGETS_JS) else rest).append(script)
    if not widgets:
        return
    first_mathjax = next(
        (i for i, script in enumerate(rest) if "mathjax" in _filename(script)),
        len(rest),
    )
    context["script_files"] = rest[:first_mathjax] + widgets + rest[first_mathjax:]
    app.add_css_file(WIDGETS_CSS, priority=900)  # after the theme's and site_fixes.css


def _without_fontawesome_js(app) -> Path:
    """A copy of the theme's ``static/webpack-macros.html`` without its
       ``fontawesome.js``.

    pydata-sphinx-theme loads Font Awesome twice: as web fonts from its style sheet,
    which draw every icon the site shows, and as a 1.5 MB script that redraws each icon
    as an SVG and watches every change to the page (0.2-0.3 s of the main thread on a
    chapter with explorers, `make bench-pages`). The copy is made from the installed
    theme at each build, so it follows the theme's version; only the line that loads the
    script is left out.
    """
    import pydata_sphinx_theme

    theme = Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme"
    macros = (theme / "static" / "webpack-macros.html").read_text(encoding="utf-8")
    kept = [
        line
        for line in macros.splitlines(keepends=True)
        if "scripts/fontawesome.js" not in line
    ]
    if len(kept) != len(macros.splitlines()) - 1:
        raise RuntimeError(
            "site_fixes: pydata-sphinx-theme's webpack-macros.html changed; "
            "look again at how it loads fontawesome.js"
        )
    folder = Path(app.doctreedir) / "site_fixes_templates"
    (folder / "static").mkdir(parents=True, exist_ok=True)
    (folder / "static" / "webpack-macros.html").write_text(
        "".join(kept), encoding="utf-8"
    )
    return folder


def _use_fixed_templates(app, config):
    # No pydata-sphinx-theme header (see the module's docstring); an explicit setting
    # in html_theme_options wins.
    config.html_theme_options.setdefault("navbar_persistent", [])
    # Before the themes' own component folders, which they append to templates_path.
    for folder in (_without_fontawesome_js(app), TEMPLATES):
        if str(folder) not in config.templates_path:
            config.templates_path.insert(0, str(folder))
    if str(STATIC) not in config.html_static_path:
        config.html_static_path.append(str(STATIC))


def _bibliography_entries_as_list_items(app, pagename, templatename, context, doctree):
    body = context.get("body")
    if isinstance(body, str) and 'role="doc-biblioentry"' in body:
        context["body"] = body.replace('role="doc-biblioentry"', 'role="listitem"')


def _visit_hidden_cell(self, node):
    # myst-nb 1.x's visit_HideCellInput, without aria-label on <summary>: its name is
    # then the prompt it shows ("Show code cell source" / "Hide code cell source"), as
    # WCAG 2.5.3 asks.
    self.body.append(f'<details class="admonition hide {" ".join(node["classes"])}">\n')
    self.body.append("<summary>\n")
    self.body.append(
        f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n'
    )
    self.body.append(
        f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n'
    )
    self.body.append("</summary>\n")


def _depart_hidden_cell(self, node):
    self.body.append("</details>\n")


def _label_hidden_cells_by_their_text(app):
    try:
        from myst_nb.sphinx_ import HideCodeCellNode
    except (
        ImportError
    ):  # another myst-nb: leave its markup (the accessibility test checks it)
        return
    app.add_node(
        HideCodeCellNode, override=True, html=(_visit_hidden_cell, _depart_hidden_cell)
    )


def setup(app):
    app.connect("builder-inited", _label_hidden_cells_by_their_text)
    app.connect("config-inited", _use_fixed_templates)
    app.connect("html-page-context", _bibliography_entries_as_list_items)
    app.add_css_file("site_fixes.css")
    app.add_js_file("site_fixes.js")
    # Run after every other extension has added its scripts to the page context.
    app.connect("html-page-context", _widgets_first_and_styled, priority=850)
    app.connect("html-page-context", _dedupe, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
