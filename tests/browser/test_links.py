"""Internal links of the built website: every link, image, script and stylesheet that
points inside the site leads to a file that exists, and every ``#anchor`` to an element
with that id.

This complements the nitpicky build (``-n -W``), which catches unresolved
cross-references before they become HTML; this test reads the HTML as the browser gets
it. No browser is needed.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path, PurePosixPath
from urllib.parse import unquote, urlsplit

import pytest
from sitepages import SITE, site_pages

PAGES = site_pages()
if not PAGES:
    pytest.skip(
        f"no built site at {SITE}: run `make test-browser` (it builds first)",
        allow_module_level=True,
    )


LINK_ATTRIBUTES = {
    "a": "href",
    "link": "href",
    "img": "src",
    "script": "src",
    "iframe": "src",
    "source": "src",
}


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []  # (tag, url)
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("name"):
            self.ids.add(attrs["name"])
        attr = LINK_ATTRIBUTES.get(tag)
        if attr and attrs.get(attr):
            self.links.append((tag, attrs[attr]))


_PARSED: dict[Path, _Collector] = {}


def _parse(path: Path) -> _Collector:
    if path not in _PARSED:
        collector = _Collector()
        collector.feed(path.read_text(encoding="utf-8"))
        _PARSED[path] = collector
    return _PARSED[path]


def _internal_target(page: str, url: str) -> tuple[Path, str] | None:
    """(file, fragment) that an internal URL on ``page`` points at; None for external
    URLs."""
    parts = urlsplit(url)
    if (
        parts.scheme
        or parts.netloc
        or url.startswith(("mailto:", "javascript:", "data:"))
    ):
        return None
    if not parts.path:  # "#anchor" on the same page
        return SITE / page, unquote(parts.fragment)
    target = PurePosixPath(page).parent / unquote(parts.path)
    # normalise "a/../b" without touching the file system
    resolved: list[str] = []
    for part in target.parts:
        if part == "..":
            if not resolved:
                return SITE / "__outside_the_site__", ""
            resolved.pop()
        elif part != ".":
            resolved.append(part)
    path = SITE.joinpath(*resolved)
    if url.split("#")[0].split("?")[0].endswith("/") or path.is_dir():
        path = path / "index.html"
    return path, unquote(parts.fragment)


def test_link_resolution_is_sound():
    """The resolver itself: relative paths, parent folders and anchors."""
    assert _internal_target("chapters/a.html", "b.html#x") == (
        SITE / "chapters" / "b.html",
        "x",
    )
    assert _internal_target("chapters/a.html", "../_static/s.css?v=1") == (
        SITE / "_static" / "s.css",
        "",
    )
    assert _internal_target("chapters/a.html", "#top") == (
        SITE / "chapters" / "a.html",
        "top",
    )
    assert _internal_target("index.html", "https://example.org/x") is None
    assert (
        _internal_target("index.html", "../../etc/passwd")[0].name
        == "__outside_the_site__"
    )


@pytest.mark.parametrize("page", PAGES)
def test_internal_links_resolve(page):
    broken = []
    for tag, url in _parse(SITE / page).links:
        target = _internal_target(page, url)
        if target is None:
            continue
        path, fragment = target
        if not path.is_file():
            broken.append(f"<{tag}> {url}: no file {path.relative_to(SITE.parent)}")
            continue
        if fragment and path.suffix == ".html" and fragment not in _parse(path).ids:
            broken.append(
                f"<{tag}> {url}: no element with id {fragment!r} in "
                f"{path.relative_to(SITE).as_posix()}"
            )
    assert broken == [], f"{page} has broken internal links:\n" + "\n".join(broken)
