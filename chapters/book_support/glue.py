"""Numbers for the prose, from the cells that compute them.

A cell computes a number; a hidden cell below it glues the number, formatted as the
text shows it, under a name; the prose writes ``{glue:text}`name``` where the number
goes. The value is stored as the cell's output, so nbval re-runs the cell and compares
it, and the site and the PDF show what the test re-ran::

    glue("softmax-learning-share", f"{100 * mlr_weights[1]:.1f}")

This writes the same output as myst-nb's ``glue(name, value)`` (display on), with
IPython alone, so it runs in the page's Python too.
"""

from __future__ import annotations

from IPython.display import display

__all__ = ["glue"]


def glue(name: str, text: str | int) -> None:
    """Store ``text`` (the number as the prose shows it) under ``name``.

    Raises TypeError for anything but a string or an integer (a float would be shown
    with all its digits, which differ between machines: format it first).
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if isinstance(text, bool) or not isinstance(text, str | int):
        raise TypeError(
            f"glue {name!r}: text must be a string (format the number as the prose "
            f"shows it, e.g. f'{{x:.2f}}') or an int, got {type(text).__name__}"
        )
    display(
        {"text/plain": repr(text)},
        raw=True,
        metadata={"scrapbook": {"name": name, "mime_prefix": ""}},
    )
