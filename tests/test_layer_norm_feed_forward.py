"""Layer normalisation and the position-wise feed-forward network, against hand
formulas."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from attnlib.layers import feed_forward as feed_forward_module
from attnlib.layers.feed_forward import erf, feed_forward, gelu, relu
from attnlib.layers.layer_norm import layer_norm


def test_layer_norm_by_hand():
    x = [
        [1.0, 2.0, 3.0, 6.0],
        [0.0, 0.0, 4.0, 4.0],
    ]  # means 3 and 2, variances 3.5 and 4
    got = layer_norm(x, gain=[2.0, 2.0, 2.0, 2.0], bias=[1.0, 0.0, 0.0, 0.0], eps=1e-12)
    row0 = [(v - 3.0) / math.sqrt(3.5) * 2.0 for v in (1.0, 2.0, 3.0, 6.0)]
    row1 = [(v - 2.0) / 2.0 * 2.0 for v in (0.0, 0.0, 4.0, 4.0)]
    row0[0] += 1.0
    row1[0] += 1.0
    np.testing.assert_allclose(got, [row0, row1], atol=1e-9)


def test_layer_norm_statistics_and_eps():
    rng = np.random.default_rng(0)
    x = rng.normal(3.0, 5.0, size=(2, 3, 16))
    y = layer_norm(x)
    np.testing.assert_allclose(y.mean(-1), 0.0, atol=1e-12)
    var = x.var(-1)
    np.testing.assert_allclose(y.var(-1), var / (var + 1e-5), atol=1e-12)
    # a constant row gives zeros, not NaN (eps > 0)
    np.testing.assert_array_equal(layer_norm(np.full((1, 4), 7.0)), np.zeros((1, 4)))


def test_layer_norm_acts_per_position():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(5, 8))
    np.testing.assert_allclose(layer_norm(x)[2], layer_norm(x[2:3])[0], atol=1e-15)


def test_layer_norm_dtypes():
    assert layer_norm(np.array([[1, 2, 3]], dtype=np.float32)).dtype == np.float32
    assert layer_norm([[1, 2, 3]]).dtype == np.float64


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (
            dict(x=np.ones((2, 3)), gain=np.ones(4)),
            ValueError,
            r"gain must have shape \(3,\)",
        ),
        (
            dict(x=np.ones((2, 3)), bias=np.ones((1, 3))),
            ValueError,
            "bias must have shape",
        ),
        (dict(x=np.ones((2, 3)), eps=0.0), ValueError, "eps"),
        (dict(x=np.array([[1.0, np.nan]])), ValueError, "NaN"),
        (dict(x=np.ones((2, 0))), ValueError, "d >= 1"),
        (dict(x=np.array([[True, False]])), TypeError, "bool"),
    ],
)
def test_layer_norm_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        layer_norm(**kwargs)


def test_erf_gelu_relu_against_math():
    xs = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(erf(xs), [math.erf(v) for v in xs], atol=2e-7)
    np.testing.assert_allclose(
        gelu(xs), [0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in xs], atol=1e-6
    )
    np.testing.assert_array_equal(relu([-1.0, 0.0, 2.5]), [0.0, 0.0, 2.5])
    assert gelu(np.float32([1.0])).dtype == np.float32


@pytest.mark.parametrize("without_blas", [False, True])
def test_feed_forward_by_loop_and_position_wise(without_blas, monkeypatch):
    # as native numpy computes the affine maps' product, and as the book's pages do
    # (Pyodide's numpy has no BLAS: einsum there for large W, here every W)
    monkeypatch.setattr(feed_forward_module, "_WITHOUT_BLAS", without_blas)
    monkeypatch.setattr(feed_forward_module, "_EINSUM_FROM", 1)
    rng = np.random.default_rng(2)
    x = rng.normal(size=(4, 3))
    W1, b1, W2, b2 = (
        rng.normal(size=(3, 5)),
        rng.normal(size=5),
        rng.normal(size=(5, 3)),
        rng.normal(size=3),
    )
    got = feed_forward(x, W1, b1, W2, b2, "relu")
    for i in range(4):
        hidden = [
            max(0.0, sum(x[i, a] * W1[a, j] for a in range(3)) + b1[j])
            for j in range(5)
        ]
        want = [sum(hidden[j] * W2[j, c] for j in range(5)) + b2[c] for c in range(3)]
        np.testing.assert_allclose(got[i], want, atol=1e-12)
    # position-wise: permuting the positions permutes the outputs
    perm = [2, 0, 3, 1]
    np.testing.assert_allclose(
        feed_forward(x[perm], W1, b1, W2, b2),
        feed_forward(x, W1, b1, W2, b2)[perm],
        atol=1e-14,
    )
    out, hidden = feed_forward(x, W1, b1, W2, b2, return_hidden=True)
    assert hidden.shape == (4, 5) and out.shape == (4, 3)


@pytest.mark.parametrize(
    "args, match",
    [
        (
            (np.ones((2, 4)), np.ones((3, 5)), None, np.ones((5, 3)), None),
            "rows of W_1",
        ),
        ((np.ones((2, 3)), np.ones((3, 5)), None, np.ones((4, 3)), None), "d_ff"),
        (
            (np.ones((2, 3)), np.ones((3, 5)), np.ones(4), np.ones((5, 3)), None),
            r"b_1 \(4,\) does not fit W_1 \(3, 5\)",
        ),
    ],
)
def test_feed_forward_shape_errors(args, match):
    with pytest.raises(ValueError, match=match):
        feed_forward(*args)


def test_feed_forward_unknown_activation():
    with pytest.raises(ValueError, match="activation"):
        feed_forward(
            np.ones((1, 2)), np.ones((2, 2)), None, np.ones((2, 2)), None, "tanh"
        )


def test_gelu_caption_gives_the_minimum_of_x_phi_x():
    """The transformer-layer chapter's GELU caption types the minimum of x Phi(x)
    (captions are not glued): it is GELU's, found here on a fine grid with math.erf,
    not with attnlib. (json and pathlib only: this file also runs in the page's
    Python.)"""
    import json
    import re
    from pathlib import Path

    xs = np.linspace(-3, 0, 300_001)
    ys = [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs[::100]]
    i = int(np.argmin(ys))
    low, where = ys[i], xs[::100][i]
    chapter = "chapters/attention_in_practice/transformer_layer/transformer_layer.ipynb"
    nb = json.loads((Path(__file__).resolve().parents[1] / chapter).read_text("utf-8"))
    [cell] = [c for c in nb["cells"] if c.get("id") == "layer-gelu"]
    caption = cell["metadata"]["mystnb"]["figure"]["caption"]
    stated = re.search(r"minimum of about (-0\.\d+) near x = (-0\.\d+)", caption)
    assert stated
    assert round(low, 2) == float(stated.group(1))
    assert round(where, 2) == float(stated.group(2))


@pytest.mark.parametrize("without_blas", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("d_in, d_out", [(3, 5), (64, 80)])
def test_affine_product_choice_and_value(without_blas, dtype, d_in, d_out, monkeypatch):
    """The product of the affine maps is einsum only without BLAS (Pyodide, where it is
    the default: sys.platform "emscripten"), for W of at least 64 x 64 entries and in
    float32 or float64 (einsum sums float16 in float16); either way it equals the sums
    of products, to the dtype's precision."""
    assert feed_forward_module._WITHOUT_BLAS == (sys.platform == "emscripten")
    monkeypatch.setattr(feed_forward_module, "_WITHOUT_BLAS", without_blas)
    used = []
    einsum = feed_forward_module._einsum_product
    monkeypatch.setattr(
        feed_forward_module,
        "_einsum_product",
        lambda a, b: used.append(b.shape) or einsum(a, b),
    )
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 3, d_in)).astype(dtype)
    W = rng.normal(size=(d_in, d_out)).astype(dtype)
    got = feed_forward_module._affine(x, W, None)
    assert got.dtype == dtype
    want = [
        [
            [math.fsum(x[i, t, a] * W[a, j] for a in range(d_in)) for j in range(d_out)]
            for t in range(3)
        ]
        for i in range(2)
    ]
    # float16 keeps about 3 digits; sums of up to 64 products of normals stay below 40
    tol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 0.05}[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
    large = d_in * d_out >= 4096
    assert used == (
        [(d_in, d_out)] if without_blas and large and dtype != np.float16 else []
    )
