"""How the checkers write numbers, arrays, inputs and the reader's own answer."""

from __future__ import annotations

import inspect

import numpy as np


def shown(value, limit: int = 60) -> str:
    """A short ``repr`` of the reader's answer for a message, never an exception.

    Longer than ``limit`` characters, it is cut and ends in ``[...]``; an object whose
    ``repr`` fails is named by its type.
    """
    try:
        text = repr(value)
    except Exception:  # the reader's object: describe it, do not crash
        return f"a {type(value).__name__}"
    if not isinstance(text, str):
        return f"a {type(value).__name__}"
    return text if len(text) <= limit else text[: limit - 5] + "[...]"


def as_list(a: np.ndarray):
    """Nested lists of numbers with at most 4 decimals; whole numbers without ".0"."""
    if a.ndim == 0:
        x = round(float(a), 4) + 0.0
        return int(x) if x.is_integer() else x
    return [as_list(x) for x in a]


def _plain(value):
    """A short, readable form of an argument for messages (lists, not numpy reprs)."""
    if not isinstance(value, (np.ndarray, list, tuple)):
        return value
    try:
        if np.size(value) > 12:
            return value
        a = np.asarray(value, dtype=float)
    except Exception:  # text, ragged lists, objects: leave them as they are
        return value
    return as_list(a)


def placeholder_text(text: str, arguments: dict) -> str:
    """``text`` formatted with the checker's arguments (``{scores}`` -> ``[1, 0]``)."""
    values = {k: _plain(v) for k, v in arguments.items()}
    try:
        return text.format(**values)
    except Exception:  # a placeholder that does not fit the arguments: keep it
        return text


def fmt(array, prefix: str = "") -> str:
    """Print an array short and aligned: 4 decimals, columns lined up, never a number
    cut.

    ``prefix`` is the text that precedes the array on its first line (continuation
    lines are indented to line up under it).
    """
    a = np.asarray(array)
    if a.dtype == object:
        return prefix + repr(a.tolist())
    if a.ndim <= 1 and a.dtype.kind in "fiub":
        return prefix + str(
            as_list(a.astype(float)) if a.dtype.kind != "b" else a.tolist()
        )
    if a.dtype.kind in "fc":
        with np.errstate(over="ignore", invalid="ignore"):  # rounding 1e308 overflows
            r = np.round(a, 4) + 0.0  # + 0.0 turns -0.0 into 0.0
        a = np.where(np.isfinite(r) | ~np.isfinite(a), r, a)
    text = np.array2string(
        a,
        separator=", ",
        threshold=24,
        edgeitems=3,
        max_line_width=88,
        floatmode="maxprec",
        suppress_small=True,
        prefix=prefix,
    )
    return prefix + text


def number(x: float) -> str:
    """One number in a message: four significant digits."""
    return f"{x:.4g}"


def describe(args, names=()) -> str:
    """A short description of a case's arguments: shapes of arrays, values of scalars.

    ``names`` are the parameter names (e.g. of the reference function), used as labels.
    """
    names = list(names) + [f"argument {i + 1}" for i in range(len(names), len(args))]
    parts = []
    for name, a in zip(names, args):
        if isinstance(a, (bool, np.bool_)):
            parts.append(f"{name}={bool(a)}")
        elif np.ndim(a) == 0:
            parts.append(f"{name}={float(a):g}")
        else:
            parts.append(f"{name} of shape {np.shape(a)}")
    return "inputs " + ", ".join(parts)


def parameter_names(fn) -> list:
    """The names of ``fn``'s positional parameters (empty if it has no signature)."""
    try:
        return [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
    except (TypeError, ValueError):
        return []
