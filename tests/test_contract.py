"""Issue 12: one contract for every entry point that takes queries, keys, values and a
   mask.

``attention``, ``tiled_attention``, ``multi_head_attention`` (one head, identity
projections) and ``attention_backward`` must accept the same inputs, refuse the same
inputs with the same error class, agree on the results, emit no warning, and the
backward pass must match central finite differences wherever the forward pass is
accepted. The expected outcome of every generated case comes from an independent float64
loop below, not from attnlib.

The second half turns the faults of issue 12 into tests with the issue's values.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import central_difference
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import attnlib
import attnlib.models.minilm
from attnlib import (
    MultiHeadParams,
    attention,
    attention_backward,
    causal_mask,
    multi_head_attention,
    tiled_attention,
)
from attnlib.core.tiled import tile_plan
from book_support.figures import access_map, attention_heatmap, mixture_bars

T, F = True, False
DTYPES = (np.float16, np.float32, np.float64, np.int64)
#: scales: valid ones (odd on purpose), and ones every entry point must refuse
GOOD_SCALES = (None, 1.0, 0.0, -0.5, 2.5, 3, np.float32(0.3), np.int64(2))
BAD_SCALES = (
    (True, TypeError),
    (np.bool_(False), TypeError),
    ("1", TypeError),
    (1j, TypeError),
    (float("nan"), ValueError),
    (float("inf"), ValueError),
    (np.ones(2), ValueError),
)


# --- an independent reference: plain loops in float64
# --------------------------------------------


def reference(q, k, v, mask, scale):
    """Output of attention, or the exception class the contract demands, by explicit
    loops."""
    if scale is not None and (isinstance(scale, (bool, np.bool_, str, complex))):
        return TypeError
    if scale is not None and (np.ndim(scale) or not math.isfinite(float(scale))):
        return ValueError
    dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    work = np.promote_types(dtype, np.float32)
    limit = float(np.finfo(work).max)
    d_k = q.shape[-1]
    s = 1.0 / math.sqrt(d_k) if scale is None else float(scale)
    batch = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    n_q, n_k = q.shape[-2], k.shape[-2]
    qb = np.broadcast_to(q.astype(np.float64), batch + q.shape[-2:])
    kb = np.broadcast_to(k.astype(np.float64), batch + k.shape[-2:])
    vb = np.broadcast_to(v.astype(np.float64), batch + v.shape[-2:])
    mb = np.broadcast_to(True if mask is None else mask, batch + (n_q, n_k))
    out = np.zeros(batch + (n_q, v.shape[-1]))
    error = None
    for idx in np.ndindex(*batch):
        for i in range(n_q):
            for j in range(n_k):
                if not mb[idx + (i, j)]:
                    continue
                if not (
                    np.isfinite(qb[idx + (i,)]).all()
                    and np.isfinite(kb[idx + (j,)]).all()
                    and np.isfinite(vb[idx + (j,)]).all()
                ):
                    return ValueError  # a value that takes part is not finite
                with np.errstate(over="ignore", invalid="ignore"):
                    dot = float(np.sum(qb[idx + (i,)] * kb[idx + (j,)]))
                    big = not (
                        abs(dot) < limit
                        and abs(dot * s) < limit
                        and np.all(np.abs(qb[idx + (i,)] * s) < limit)
                    )
                if big:
                    error = OverflowError
    if error is not None:
        return error
    for idx in np.ndindex(*batch):
        for i in range(n_q):
            allowed = [j for j in range(n_k) if mb[idx + (i, j)]]
            if not allowed:
                continue  # no allowed key: a zero output
            scores = [
                s * float(np.sum(qb[idx + (i,)] * kb[idx + (j,)])) for j in allowed
            ]
            top = max(scores)
            e = [math.exp(x - top) for x in scores]
            for w, j in zip(e, allowed):
                out[idx + (i,)] += w / sum(e) * vb[idx + (j,)]
    return out


# --- generated cases
# ---------------------------------------------------------------------------


@st.composite
def sub_shape(draw, shape):
    """A shape that broadcasts to ``shape``: some leading axes dropped, some others set
    to 1."""
    drop = draw(st.integers(0, len(shape)))
    return tuple(n if draw(st.booleans()) else 1 for n in shape[drop:])


@st.composite
def cases(draw):
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    n_q, n_k = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    d_k, d_v = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    dtype = draw(st.sampled_from(DTYPES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    huge = dtype in (np.float32, np.float64) and draw(st.integers(0, 9)) == 0
    size = (
        (1e25 if dtype == np.float32 else 1e200)
        if huge
        else draw(st.sampled_from([1.0, 3.0]))
    )
    arrays = []
    for rows, width in ((n_q, d_k), (n_k, d_k), (n_k, d_v)):
        shape = draw(sub_shape(batch)) + (rows, width)
        if dtype == np.int64:
            arrays.append(rng.integers(-3, 4, size=shape))
        else:
            arrays.append((rng.normal(size=shape) * size).astype(dtype))
    q, k, v = arrays
    scores_shape = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]) + (
        n_q,
        n_k,
    )
    mask = None
    if draw(st.booleans()):  # every allowed form, fully masked rows too
        p_allowed = draw(st.sampled_from([0.0, 0.4, 0.8, 1.0]))
        mask = rng.random(draw(sub_shape(scores_shape))) < p_allowed
    causal = n_q == n_k and draw(st.booleans())
    poison = draw(st.sampled_from([None, np.nan, np.inf, -np.inf]))
    if poison is not None and dtype != np.int64:
        target = draw(st.sampled_from([0, 1, 2]))
        if arrays[target].size:
            arrays[target].flat[draw(st.integers(0, arrays[target].size - 1))] = poison
    scale = draw(st.sampled_from(GOOD_SCALES + tuple(s for s, _ in BAD_SCALES)))
    return dict(
        q=q,
        k=k,
        v=v,
        mask=mask,
        causal=causal,
        scale=scale,
        block=draw(st.integers(1, 3)),
        workers=draw(st.sampled_from([1, 2])),
        fd=not huge and poison is None,
        huge=huge,
    )


def run(f, *args, **kwargs):
    """Call ``f``; return its result or the class of the exception it raised."""
    try:
        return f(*args, **kwargs)
    except (TypeError, ValueError, OverflowError) as exc:
        return type(exc) if not isinstance(exc, OverflowError) else OverflowError


def one_head_params(d_k, d_v, scale):
    """Identity projections that make multi_head_attention plain attention with
    ``scale``."""
    d_model = max(d_k, d_v)
    eye = np.eye(max(d_model, d_k, d_v))
    s = 1.0 / math.sqrt(d_k) if scale is None else float(scale)
    return MultiHeadParams(
        eye[:d_k, :d_model] * s * math.sqrt(d_model),
        eye[:d_k, :d_model],
        eye[:d_v, :d_model],
        eye[:d_model, :d_v],
        1,
    )


def tolerance(dtype, v):
    scale = 1.0 + float(np.abs(v.astype(np.float64)[np.isfinite(v)]).max(initial=0.0))
    return {np.dtype(np.float16): 4e-3, np.dtype(np.float32): 5e-5}.get(
        np.dtype(dtype), 1e-12
    ) * scale


# 60 examples (were 120, issue 37): each entry point's own properties are drawn again in
# test_attention.py, test_tiled.py, test_heads.py and test_mask_rule.py, and its edges
# and bad inputs are rows of test_contract_core.py
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_every_entry_point_keeps_one_contract(case):
    q, k, v, mask, scale = case["q"], case["k"], case["v"], case["mask"], case["scale"]
    full_mask = mask
    if case["causal"]:
        c = causal_mask(q.shape[-2])
        full_mask = (
            c
            if mask is None
            else np.broadcast_to(mask, np.broadcast_shapes(mask.shape, c.shape)) & c
        )
    want = reference(q, k, v, full_mask, scale)
    grad_out = np.ones(1)[..., None]  # (1, 1): broadcasts to the output
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning at all fails the test
        got = {
            "attention": run(lambda: attention(q, k, v, full_mask, scale=scale)[0]),
            "tiled": run(
                tiled_attention,
                q,
                k,
                v,
                mask,
                causal=case["causal"],
                scale=scale,
                block_size=case["block"],
                workers=case["workers"],
            ),
            "backward": run(
                attention_backward, q, k, v, grad_out, full_mask, scale=scale
            ),
        }
        # multi-head attention has no scale=: it is folded into W_Q, which changes what
        # overflows (q . k is checked before scaling), so huge inputs use the default
        # scale
        if not any(scale is s for s, _ in BAD_SCALES) and (
            not case["huge"] or scale is None
        ):
            params = one_head_params(q.shape[-1], v.shape[-1], scale)
            got["multi-head"] = run(
                lambda: multi_head_attention(q, k, v, params, full_mask)[0]
            )
    event(f"outcome: {want.__name__ if isinstance(want, type) else 'accepted'}")
    if isinstance(want, type):
        outcome = {
            name: r if isinstance(r, type) else "accepted" for name, r in got.items()
        }
        assert outcome == {name: want for name in got}, f"expected {want.__name__}"
        return
    out_dtype = np.result_type(
        q.dtype, k.dtype, v.dtype, np.float16
    )  # integers: float64
    for name, result in got.items():
        assert not isinstance(result, type), f"{name} raised {result.__name__}"
        if name == "backward":
            continue
        assert result.dtype == out_dtype and result.shape == want.shape, name
        np.testing.assert_allclose(
            result.astype(np.float64),
            want,
            atol=tolerance(out_dtype, v),
            rtol=0,
            err_msg=name,
        )
    if case["fd"]:
        event("backward checked by finite differences")
        check_backward_by_finite_differences(q, k, v, full_mask, scale, got["backward"])


def check_backward_by_finite_differences(q, k, v, mask, scale, grads):
    q64, k64, v64 = (x.astype(np.float64) for x in (q, k, v))
    g = np.random.default_rng(0).normal(
        size=attention(q64, k64, v64, mask, scale=scale)[0].shape
    )
    grads = attention_backward(q64, k64, v64, g, mask, scale=scale)
    loss = {
        0: lambda x: np.sum(attention(x, k64, v64, mask, scale=scale)[0] * g),
        1: lambda x: np.sum(attention(q64, x, v64, mask, scale=scale)[0] * g),
        2: lambda x: np.sum(attention(q64, k64, x, mask, scale=scale)[0] * g),
    }
    for i, x in enumerate((q64, k64, v64)):
        assert grads[i].shape == x.shape
        np.testing.assert_allclose(
            grads[i], central_difference(loss[i], x), atol=1e-6, rtol=1e-5
        )


# --- inputs every entry point must refuse, with one error class
# ---------------------------------


def entry_points(q, k, v, mask=None, scale=None):
    d_k, d_v = np.shape(q)[-1], np.shape(v)[-1]
    params = one_head_params(d_k, d_v, None if scale is None else 1.0)
    return {
        "attention": lambda: attention(q, k, v, mask, scale=scale),
        "tiled": lambda: tiled_attention(q, k, v, mask, scale=scale),
        "backward": lambda: attention_backward(q, k, v, np.ones(1), mask, scale=scale),
        "multi-head": lambda: multi_head_attention(q, k, v, params, mask),
    }


X = np.ones((2, 3))


@pytest.mark.parametrize(
    "args,error",
    [
        ((X.astype(bool), X, X), TypeError),  # a mask in the values' place
        ((X, X, X.astype(complex)), TypeError),
        ((X, X, X, X[:, :2]), TypeError),  # a float mask
        ((X, X, X, np.ones((2, 2), dtype=np.int64)), TypeError),  # an integer mask
        ((X, X, X, np.ones((3, 2, 2), dtype=bool)), ValueError),  # a mask that enlarges
        ((X, X, X, np.ones((2, 3), dtype=bool)), ValueError),  # L_q and L_k swapped
        ((np.ones(3), X, X), ValueError),  # queries without positions
        (
            (np.ones((2, 2, 3)), np.ones((3, 2, 3)), np.ones((3, 2, 3))),
            ValueError,
        ),  # batch 2 vs 3
        (
            (np.array([[np.nan, 1, 1], [1, 1, 1]]), X, X),
            ValueError,
        ),  # NaN in a query that asks
    ],
)
def test_bad_inputs_are_refused_alike(args, error):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for name, call in entry_points(*args).items():
            if name == "multi-head" and np.shape(args[0])[-1] != np.shape(args[1])[-1]:
                continue
            with pytest.raises(error):
                call()


@pytest.mark.parametrize("scale,error", BAD_SCALES)
def test_scale_is_refused_alike(scale, error):
    for name in ("attention", "tiled", "backward"):
        with pytest.raises(error, match="scale"):
            entry_points(X, X, X, scale=scale)[name]()


# --- the faults of issue 12, with the values
# -------------------------------------------


def test_backward_with_the_batch_axis_from_the_values_only():
    q = [[1, 0], [0, 1]]
    k = [[1, 0], [0, 1], [1, 1]]
    v = [[[1], [2], [3]], [[4], [5], [6]]]
    mask = np.array([[[T, T, F]], [[T, F, T]]])
    assert attention(q, k, v, mask)[0].shape == (2, 2, 1)
    dq, dk, dv = attention_backward(q, k, v, np.ones((2, 2, 1)), mask)
    np.testing.assert_allclose(
        dq, [[-0.156399, 0.509952], [-0.156399, 0.469196]], atol=1e-6
    )
    np.testing.assert_allclose(
        dk,
        [[-0.509952, -0.469196], [0.156399, 0.156399], [0.353553, 0.312797]],
        atol=1e-6,
    )
    np.testing.assert_allclose(
        dv, [[[1], [1], [0]], [[0.830238], [0], [1.169762]]], atol=1e-6
    )
    # and central differences agree to 1e-9
    qf, kf, vf = (np.array(x, dtype=float) for x in (q, k, v))
    loss = lambda fq, fk, fv: attention(fq, fk, fv, mask)[0].sum()  # noqa: E731
    np.testing.assert_allclose(
        dq, central_difference(lambda x: loss(x, kf, vf), qf), atol=1e-9
    )
    np.testing.assert_allclose(
        dk, central_difference(lambda x: loss(qf, x, vf), kf), atol=1e-9
    )
    np.testing.assert_allclose(
        dv, central_difference(lambda x: loss(qf, kf, x), vf), atol=1e-9
    )


def test_float32_overflow_is_one_overflow_error_without_a_warning():
    q = np.array([[1e20, 1e20]], dtype=np.float32)
    k = np.array([[1e20, 1e20], [1.0, 0.0]], dtype=np.float32)
    v = np.array([[1.0], [2.0]], dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in (attention, tiled_attention):
            with pytest.raises(OverflowError, match="float32"):
                f(q, k, v)
        # the overflowing key masked out: accepted by both, and equal
        mask = np.array([[F, T]])
        np.testing.assert_array_equal(tiled_attention(q, k, v, mask), [[2.0]])
        np.testing.assert_array_equal(attention(q, k, v, mask)[0], [[2.0]])
        # a query and a key that both take part, but whose own score (2e40) is masked
        q2 = np.array([[1e20, 1e20], [1.0, 0.0]], dtype=np.float32)
        mask2 = np.array([[F, T], [T, T]])
        want = attention(q2.astype(np.float64), k, v, mask2)[0]
        for got in (
            attention(q2, k, v, mask2)[0],
            tiled_attention(q2, k, v, mask2),
            tiled_attention(q2, k, v, mask2, block_size=1),
        ):
            np.testing.assert_allclose(got, want, rtol=1e-6)


def test_scale_true_is_refused_by_both_and_tile_plan_wants_integers():
    for f in (attention, tiled_attention):
        with pytest.raises(TypeError, match="bool is not a number"):
            f(X, X, X, scale=True)
    with pytest.raises(TypeError, match="integer"):
        tile_plan(2.5, 2)
    with pytest.raises(TypeError, match="integer"):
        causal_mask(2.5)
    with pytest.raises(TypeError, match="integer"):
        tile_plan(2, 2.5)


def test_plots_refuse_a_boolean_array_as_weights():
    with pytest.raises(TypeError, match="bool"):
        attention_heatmap(np.eye(2, dtype=bool))
    with pytest.raises(TypeError, match="bool"):
        mixture_bars(np.array([True, False]), ["a", "b"])
    access_map(np.eye(2, dtype=bool), ["a", "b"])  # a mask is drawn as a mask


def test_the_rank_of_a_mask_decides_per_example_or_per_head():
    # Issue 26 replaced issue 12's refusal of "ambiguous" masks by one rule: at most as
    # many axes as the scores without a head axis = per example (shared by the heads);
    # one axis more = per head. With B = H = 2 an (H, L, L) mask is therefore read per
    # example, exactly as for B = 3 (where it must fit the batch), and mask[None] is
    # the per-head form.
    rng = np.random.default_rng(0)
    H = B = 2
    params = attnlib.init_multi_head(rng, 4, H)
    x = rng.normal(size=(B, 3, 4))
    two = np.stack([np.eye(3, dtype=bool), np.ones((3, 3), dtype=bool)])  # (2, L, L)
    _, w_example = multi_head_attention(x, x, x, params, two)  # (B, H, L, L)
    for b in range(B):
        alone = multi_head_attention(x[b], x[b], x[b], params, two[b])[1]
        np.testing.assert_array_equal(w_example[b], alone)
    np.testing.assert_array_equal(w_example[0, 1], np.eye(3))  # example 0, every head
    _, w_head = multi_head_attention(x, x, x, params, two[None])  # per head
    for b in range(B):
        np.testing.assert_array_equal(w_head[b, 0], np.eye(3))  # head 0: the diagonal
        assert np.all(w_head[b, 1] > 0)  # head 1: everything


def test_with_three_heads_and_two_examples_the_rank_decides_too():
    rng = np.random.default_rng(1)
    params = attnlib.init_multi_head(rng, 6, 3)
    x = rng.normal(size=(2, 3, 6))
    three = rng.random((3, 3, 3)) < 0.7
    # (3, 3, 3) has as many axes as the scores (2, 3, 3): per example, and 3 examples
    # do not fit 2; the message says how to write it per head
    with pytest.raises(ValueError, match=r"per example.*\(2, 3, 3, 3\)"):
        multi_head_attention(x, x, x, params, three)
    _, w = multi_head_attention(x, x, x, params, three[None])
    for h in range(3):
        assert np.all(w[:, h][~np.broadcast_to(three[h], (2, 3, 3))] == 0)


def test_docstrings_describe_the_code():
    doc = attnlib.__doc__
    assert "float64 policy" not in doc
    assert "scale=True" in doc and "check_attention" in doc
    assert "One mask rule" in doc and "per_head" not in doc
    assert "batches are not supported" in attnlib.models.minilm.encode.__doc__
