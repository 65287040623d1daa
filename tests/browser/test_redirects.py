"""Links into the book keep working: every old page address (the chapters' files were
once named ``chapters/05_softmax.ipynb`` and so on) redirects to its topic-named page.

The redirects are listed once, in ``_config.yml`` (``redirects``, sphinx-reredirects);
this test opens each old address in Chromium (network blocked) and checks where the
reader lands: the new page, with the anchor the reader asked for and the title the built
file has. Landing is judged once the new page's HTML is parsed (its title is in the
head); its figures and mathematics are checked on the page's own visits, not here.
"""

from __future__ import annotations

import html
import posixpath
import re

import pytest
import yaml
from sitepages import REPO, SITE

CONFIG = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
REDIRECTS = CONFIG["sphinx"]["config"]["redirects"]
if not (SITE / "index.html").is_file():
    pytest.skip(f"no built site at {SITE}", allow_module_level=True)


def _built_title(page: str) -> str:
    """The ``<title>`` of a built page, as the browser shows it (entities decoded,
    white space collapsed)."""
    text = (SITE / page).read_text(encoding="utf-8")
    found = re.search(r"<title>(.*?)</title>", text, re.DOTALL)
    assert found, f"{page} has no <title>"
    return " ".join(html.unescape(found.group(1)).split())


def test_every_old_chapter_file_name_has_a_redirect():
    """The 21 notebooks and 5 pages that once sat flat in chapters/."""
    assert len(REDIRECTS) == 26
    assert all(old.startswith("chapters/") and "/" not in old[9:] for old in REDIRECTS)


@pytest.mark.parametrize("old", sorted(REDIRECTS))
def test_old_address_lands_on_its_new_page(context, site_url, old):
    new = posixpath.normpath(posixpath.join(posixpath.dirname(old), REDIRECTS[old]))
    assert (SITE / new).is_file(), f"{old} redirects to {new}, which was not built"
    tab = context.new_page()
    try:
        tab.goto(f"{site_url}/{old}.html#a-section", wait_until="commit")
        tab.wait_for_url(
            f"**/{new}#a-section", wait_until="domcontentloaded", timeout=10_000
        )
        assert tab.title() == _built_title(new)
    finally:
        tab.close()
