"""Test configuration: draw figures without a display; shared test helpers."""

import os

import numpy as np

os.environ.setdefault("MPLBACKEND", "Agg")


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
