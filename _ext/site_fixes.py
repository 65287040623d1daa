"""Sphinx extension: each page lists every ``<script>`` once (no console error from duplicates).

sphinx-thebe 0.3.1 adds its inline configuration script (``const THEBE_JS_URL = ...``) while
documents are being read; Sphinx 7.4 then holds it twice (once with the file name ``None``, once
with ``''``), so every page declared the constant twice and the browser reported
``SyntaxError: Identifier 'THEBE_JS_URL' has already been declared``. This extension removes
scripts that are identical (same source, attributes and body) just before a page is written.
"""
from __future__ import annotations


def _key(script) -> tuple:
    return (script.filename or "", script.priority, tuple(sorted(script.attributes.items())))


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


def setup(app):
    # Run after every other extension has added its scripts to the page context.
    app.connect("html-page-context", _dedupe, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
