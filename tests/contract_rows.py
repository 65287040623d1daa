"""The rows of the package-wide contract tests (issue 26): one :class:`Row` per public
function, checked by :func:`check_row`. Used by ``tests/test_contract_models_data.py``,
``tests/test_contract_figures.py`` and ``tests/test_contract_exercises.py``."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest


@dataclass
class Row:
    """The contract of one function.

    ok : a call with valid input; check(result) -> bool says its type and dtype are
        the documented ones (and, where given, its value)
    bad : (call, error class, words the message must hold: the argument's name)
    extreme : a call with extreme finite input; its result must be finite (or the
        call raises ``extreme_error``), with no warning
    """

    ok: object
    check: object
    bad: list = field(default_factory=list)
    extreme: object = None
    extreme_error: type | None = None


def f64(a) -> bool:
    return isinstance(a, np.ndarray) and a.dtype == np.float64


def finite(value) -> bool:
    """True if every number reachable in ``value`` is finite."""
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return all(finite(getattr(value, k)) for k in value.__dataclass_fields__)
    if isinstance(value, (np.ndarray, float, np.floating)):
        a = np.asarray(value)
        return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())
    return True


def run(call):
    """``call()`` with every warning turned into an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


def check_row(qualname: str, row: Row, *, finite_result=finite) -> None:
    """The valid call, every bad call and the extreme call of ``row``."""
    assert row.check(run(row.ok)), qualname
    for call, error, words in row.bad:
        with pytest.raises(error) as raised:
            run(call)
        assert words in str(raised.value), (qualname, words, str(raised.value))
    if row.extreme is None:
        return
    try:
        result = run(row.extreme)
    except Exception as exc:
        if row.extreme_error is None or not isinstance(exc, row.extreme_error):
            raise
    else:
        assert finite_result(result), qualname
