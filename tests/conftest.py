"""Test configuration: draw figures without a display; shared test helpers."""

import os
import sys
from pathlib import Path

import numpy as np
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")

# A chapter's notebook runs in its own folder and imports its modules by name
# (softmax_exercises, cost_explorer, ...): the tests see every chapter's folder too.
# (pathlib only: this file also runs in the page's Python, which has no yaml.)
_CHAPTERS = Path(__file__).resolve().parents[1] / "chapters"
for _folder in sorted({p.parent for p in _CHAPTERS.glob("*/*/*.ipynb")}):
    if str(_folder) not in sys.path:
        sys.path.append(str(_folder))

# The property tests draw the same examples on every run (each test's seed is fixed),
# so that `make test` passes or fails alike on every machine and in CI. To search for
# new failing examples: HYPOTHESIS_PROFILE=explore .venv/bin/pytest tests
settings.register_profile("book", derandomize=True)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "book"))


def central_difference(f, x, eps=1e-5):
    """An independent finite-difference loop (not attnlib's), in float64."""
    x = np.array(x, dtype=np.float64)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        old = x[idx]
        x[idx] = old + eps
        up = f(x)
        x[idx] = old - eps
        down = f(x)
        x[idx] = old
        grad[idx] = (up - down) / (2 * eps)
    return grad
