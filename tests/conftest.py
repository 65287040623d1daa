"""Test configuration: draw figures without a display; shared test helpers."""

import os

import book_files  # noqa: F401  (puts the chapters' folders on sys.path)
import numpy as np
from hypothesis import settings

os.environ.setdefault("MPLBACKEND", "Agg")

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
