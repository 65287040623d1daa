"""Argument checks of the data layer (private; the data layer imports nothing else from
attnlib, so these mirror the few rules of :mod:`attnlib.core._validation` it needs).
Errors name the argument: ``TypeError`` for a wrong type (floats and bools are not
counts), ``ValueError`` for a value out of range."""

from __future__ import annotations

import operator

import numpy as np


def as_length(n, name: str) -> int:
    """An integer >= 0 (numpy integers too; 2.5 and ``True`` raise ``TypeError``)."""
    try:
        if isinstance(n, (bool, np.bool_)):
            raise TypeError  # a switch, never a count
        n = operator.index(n)
    except TypeError:
        raise TypeError(
            f"{name} must be an integer; got {n!r} of type {type(n).__name__}"
        ) from None
    if n < 0:
        raise ValueError(f"{name} must be non-negative; got {n}")
    return n


def as_width(n, name: str) -> int:
    """An integer >= 1."""
    n = as_length(n, name)
    if n < 1:
        raise ValueError(f"{name} must be at least 1; got {n}")
    return n


def as_real_number(value, name: str) -> float:
    """One real number (``True``, complex numbers and strings raise ``TypeError``)."""
    kind = "U" if isinstance(value, (str, bytes)) else np.asarray(value).dtype.kind
    if kind not in "iuf" or np.ndim(value) != 0:
        raise TypeError(f"{name} must be a real number; got {value!r}")
    return float(value)


def as_generator(rng, name: str = "rng") -> np.random.Generator:
    """A numpy Generator, or one seeded by a non-negative integer ``rng``."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(as_length(rng, name))
