"""Issue 39: the contract of the modern decoder's public functions (RMSNorm, SiLU,
SwiGLU, their backward passes, the block's normalisation switch, AdamW's decay rule).

One row per function (:data:`ROWS`, checked by ``contract_rows.check_row``): a valid
call with the documented type, dtype and a value; bad input raising the documented
class with a message naming the argument; extreme finite input (1e308) giving a finite
result or the documented OverflowError, with no warning.
"""

from __future__ import annotations

import numpy as np
import pytest
from contract_rows import Row, check_row, f64

from attnlib.layers import causal_block as cb
from attnlib.layers import feed_forward as ff
from attnlib.layers import layer_backward as lb
from attnlib.layers import layer_norm as ln
from attnlib.models import adam

BIG = 1e308
X = np.array([[3.0, -4.0]])  # root mean square sqrt(12.5)
W = np.eye(2)


def swiglu_expected(x):
    silu = x / (1 + np.exp(-x))
    return silu * x  # W_1 = W_3 = W_2 = I


ROWS = {
    "attnlib.layers.layer_norm.rms_norm": Row(
        ok=lambda: ln.rms_norm(X, np.array([1.0, 2.0])),
        check=lambda y: f64(y) and np.allclose(y, X / np.sqrt(12.5 + 1e-5) * [1, 2]),
        bad=[
            (lambda: ln.rms_norm(X, np.ones(3)), ValueError, "gain"),
            (lambda: ln.rms_norm(X, eps=0.0), ValueError, "eps"),
            (lambda: ln.rms_norm("a"), TypeError, "x"),
        ],
        extreme=lambda: ln.rms_norm(np.array([BIG, -BIG]), np.array([BIG, 1.0])),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.feed_forward.sigmoid": Row(
        ok=lambda: ff.sigmoid(np.array([0.0, 2.0])),
        check=lambda s: f64(s) and np.allclose(s, [0.5, 1 / (1 + np.exp(-2.0))]),
        extreme=lambda: ff.sigmoid(np.array([BIG, -BIG])),
    ),
    "attnlib.layers.feed_forward.silu": Row(
        ok=lambda: ff.silu(np.array([0.0, 2.0], np.float32)),
        check=lambda s: (
            s.dtype == np.float32 and np.allclose(s, [0, 2 / (1 + 1 / 7.389056)])
        ),
        bad=[(lambda: ff.silu("a"), TypeError, "x")],
        extreme=lambda: ff.silu(np.array([BIG, -BIG, 1e-300])),
    ),
    "attnlib.layers.feed_forward.swiglu": Row(
        ok=lambda: ff.swiglu(X, W, W, W),
        check=lambda y: f64(y) and np.allclose(y, swiglu_expected(X)),
        bad=[
            (lambda: ff.swiglu(X, W, np.eye(3), W), ValueError, "W_3"),
            (lambda: ff.swiglu(X, np.eye(3), W, W), ValueError, "W_1"),
            (lambda: ff.swiglu(X, W, W * np.nan, W), ValueError, "W_3"),
        ],
        extreme=lambda: ff.swiglu(np.full((1, 2), BIG), W, W, W),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.layer_backward.rms_norm_stats": Row(
        ok=lambda: lb.rms_norm_stats(X),
        check=lambda r: f64(r[0]) and np.allclose(r[0], ln.rms_norm(X)),
        extreme=lambda: lb.rms_norm_stats(np.array([[BIG, -BIG]])),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.layer_backward.rms_norm_backward": Row(
        ok=lambda: lb.rms_norm_backward(X, *lb.rms_norm_stats(X), np.ones(2)),
        check=lambda r: (
            f64(r[0]) and r[1].shape == (2,) and np.allclose(r[0], 0, atol=1e-5)
        ),
        extreme=lambda: lb.rms_norm_backward(
            np.full((1, 2), BIG), *lb.rms_norm_stats(X), np.full(2, BIG)
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.layers.layer_backward.silu_backward": Row(
        ok=lambda: lb.silu_backward(np.array([0.0]), np.ones(1)),
        check=lambda g: f64(g) and g[0] == 0.5,
        extreme=lambda: lb.silu_backward(np.array([BIG, -BIG, 1e-300]), np.ones(3)),
    ),
    "attnlib.layers.layer_backward.swiglu_backward": Row(
        ok=lambda: lb.swiglu_backward(np.ones((1, 2)), X, W, W, W),
        check=lambda r: f64(r[0]) and [a.shape for a in r] == [(1, 2)] + [(2, 2)] * 3,
    ),
    "attnlib.layers.causal_block.norm": Row(
        ok=lambda: cb.norm(X, {"ln1_gain": np.ones(2)}, "ln1", "rms"),
        check=lambda y: f64(y) and np.allclose(y, ln.rms_norm(X)),
        bad=[(lambda: cb.norm(X, {"ln1_gain": np.ones(3)}, "ln1"), ValueError, "gain")],
        extreme=lambda: cb.norm(np.array([[BIG, -BIG]]), {"g_gain": np.ones(2)}, "g"),
    ),
    "attnlib.layers.causal_block.norm_backward": Row(
        ok=lambda: cb.norm_backward(X, X, {"f_gain": np.ones(2), "f_bias": X[0]}, "f"),
        check=lambda r: f64(r[0]) and set(r[1]) == {"f_gain", "f_bias"},
        extreme=lambda: cb.norm_backward(
            np.full((1, 2), BIG), X, {"f_gain": np.ones(2)}, "f", "rms"
        ),
        extreme_error=OverflowError,
    ),
    "attnlib.models.adam.decays": Row(
        ok=lambda: [
            adam.decays(n, np.ones(s))
            for n, s in [("blocks.0.W_Q", (2, 2)), ("tok_emb", (3, 2)), ("b_1", 2)]
        ],
        check=lambda r: r == [True, False, False],
    ),
}


@pytest.mark.parametrize("qualname", sorted(ROWS))
def test_contract(qualname):
    check_row(qualname, ROWS[qualname])
