"""The modern decoder chapter's checkers accept right answers (written here with plain
loops, not with the attnlib code the checkers call) and diagnose each common slip."""

from __future__ import annotations

import math

import numpy as np
import pytest
from modern_decoder_exercises import (
    check_rms_norm,
    check_rotary_cached,
    check_swiglu,
)


def loop_rms_norm(x, gain):
    x = np.asarray(x, dtype=float)
    out = np.empty_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        row = x[idx]
        rms = math.sqrt(sum(v * v for v in row) / len(row) + 1e-5)
        out[idx] = [v / rms * g for v, g in zip(row, gain)]
    return out


def _silu(z):
    return z / (1.0 + math.exp(-z))


def loop_swiglu(x, W_1, W_3, W_2):
    x = np.asarray(x, dtype=float)
    out = np.zeros(x.shape[:-1] + (W_2.shape[1],))
    for idx in np.ndindex(x.shape[:-1]):
        gate, value = x[idx] @ W_1, x[idx] @ W_3
        hidden = [_silu(g) * v for g, v in zip(gate, value)]
        out[idx] = np.array(hidden) @ W_2
    return out


def _rotate_row(row, position):
    d = len(row)
    out = np.empty(d)
    for i in range(d // 2):
        angle = position * 10000.0 ** (-2 * i / d)
        c, s = math.cos(angle), math.sin(angle)
        out[2 * i] = row[2 * i] * c - row[2 * i + 1] * s
        out[2 * i + 1] = row[2 * i] * s + row[2 * i + 1] * c
    return out


def loop_rotary_cached(q, k_cache, v_cache, start, angle_at=lambda p, i: p):
    """Query ``i`` sits at position ``p = start + i``: it sees keys ``0 .. p``, and is
    rotated at ``angle_at(p, i)`` (``p`` when right)."""
    out = np.zeros((len(q), v_cache.shape[1]))
    for i, row in enumerate(q):
        p = start + i
        qr = _rotate_row(row, angle_at(p, i))
        scores = [qr @ k_cache[j] / math.sqrt(len(row)) for j in range(p + 1)]
        top = max(scores)
        w = [math.exp(s - top) for s in scores]
        out[i] = sum(wj * v_cache[j] for j, wj in enumerate(w)) / sum(w)
    return out


def test_right_functions_are_accepted(capsys):
    assert check_rms_norm(loop_rms_norm)
    assert check_swiglu(loop_swiglu)
    assert check_rotary_cached(loop_rotary_cached)
    out = capsys.readouterr().out
    assert out.count("Correct") == 3 and "Not yet" not in out


def _centred(x, gain):
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * gain


def _eps_outside(x, gain):
    return x / (np.sqrt((x * x).mean(-1, keepdims=True)) + 1e-5) * gain


def _no_root(x, gain):
    return x / ((x * x).mean(-1, keepdims=True) + 1e-5) * gain


@pytest.mark.parametrize(
    "wrong, diagnosis",
    [
        (_centred, "you subtract the mean"),
        (_eps_outside, "eps goes inside the square root"),
        (_no_root, "divide by its square root"),
        (lambda x, g: loop_rms_norm(x, np.ones_like(g)), "multiply by the gain"),
        (lambda x, g: x / np.std(x, axis=-1, keepdims=True) * g, "standard deviation"),
        (
            lambda x, g: x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-7) * g,
            "or used a much smaller one",
        ),
    ],
)
def test_rms_norm_slips_are_diagnosed(wrong, diagnosis, capsys):
    assert not check_rms_norm(wrong)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and diagnosis in out


def _sig(z):
    return 1.0 / (1.0 + np.exp(-z))


def _silu_np(z):
    return z * _sig(z)


def _gelu_exact(z):
    """GELU with the exact error function (attnlib approximates erf)."""
    return np.vectorize(lambda v: 0.5 * v * (1.0 + math.erf(v / math.sqrt(2.0))))(z)


@pytest.mark.parametrize(
    "wrong, diagnosis",
    [
        (
            lambda x, W_1, W_3, W_2: ((x @ W_1) * (x @ W_3) * _sig(x @ W_3)) @ W_2,
            "the gate is on the wrong branch",
        ),
        (
            lambda x, W_1, W_3, W_2: (_sig(x @ W_1) * (x @ W_3)) @ W_2,
            "the original GLU",
        ),
        (
            lambda x, W_1, W_3, W_2: ((x @ W_1) * _sig(x @ W_1)) @ W_2,
            "there is no gate",
        ),
        (
            lambda x, W_1, W_3, W_2: (np.maximum(x @ W_1, 0) * (x @ W_3)) @ W_2,
            "not ReLU",
        ),
        (
            lambda x, W_1, W_3, W_2: (_gelu_exact(x @ W_1) * (x @ W_3)) @ W_2,
            "GEGLU",
        ),
        (
            lambda x, W_1, W_3, W_2: (_silu_np(x @ W_1) * _silu_np(x @ W_3)) @ W_2,
            "the value x W_3 enters unchanged",
        ),
    ],
)
def test_swiglu_slips_are_diagnosed(wrong, diagnosis, capsys):
    assert not check_swiglu(wrong)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and diagnosis in out


def _cached(angle_at):
    return lambda q, k, v, start: loop_rotary_cached(q, k, v, start, angle_at)


@pytest.mark.parametrize(
    "wrong, diagnosis",
    [
        (_cached(lambda p, i: i), "as if they sat at positions 0, 1"),
        (_cached(lambda p, i: -p), "you rotate by minus the position"),
        (_cached(lambda p, i: 0), "your new queries come out unrotated"),
        # every new query rotated at one position (start), whatever its own: the
        # first case has start = 0, where that rotates none of them
        (
            _cached(lambda p, i: p - i),
            "here start = 0, so rotating all of them at `start` turns none): rotate "
            "each at its own position start, start + 1, ...",
        ),
        (_cached(lambda p, i: p + 1), "your positions are one too far"),
    ],
)
def test_rotary_cache_slips_are_diagnosed(wrong, diagnosis, capsys):
    assert not check_rotary_cached(wrong)
    out = capsys.readouterr().out
    assert out.startswith("Not yet") and diagnosis in out
