"""Tests of attnlib.core.tiled: tiled (online-softmax) attention equals plain attention.

The reference is ``attnlib.attention``, which builds all L_q x L_k scores at once (a
different algorithm: one softmax over whole rows), plus values worked out by hand (issue
3, cases 2 and 3) and a log-sum-exp computed directly in float64. The memory test
measures, with tracemalloc, that the peak allocation grows like n * block and not like
n^2.
"""

import math
import tracemalloc
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib import attention, causal_mask, padding_mask
from attnlib.core.tiled import (
    FULL,
    PARTLY_MASKED,
    SKIPPED,
    default_block_sizes,
    online_softmax_trace,
    tile_plan,
    tiled_attention,
)

T, F = True, False
SETTINGS = settings(max_examples=60, deadline=None)
TOL = {np.float32: 1e-5, np.float64: 1e-10}


def _inputs(rng, batch, n_q, n_k, d, d_v, dtype):
    q = rng.normal(size=batch + (n_q, d)).astype(dtype)
    k = rng.normal(size=batch + (n_k, d)).astype(dtype)
    v = rng.normal(size=batch + (n_k, d_v)).astype(dtype)
    return q, k, v


def _mask(kind, rng, batch, n_q, n_k, block_k):
    """A mask of the given kind, and the arguments that ask tiled_attention for it."""
    if kind == "none":
        return None, {}
    if kind == "random":
        return rng.random(batch + (n_q, n_k)) < 0.6, {}
    if kind in ("causal-start", "causal-end"):
        align = kind.split("-")[1]
        return causal_mask(n_q, n_k, align=align), {"causal": True, "align": align}
    if kind in ("pad-right", "pad-left"):
        b = math.prod(batch[:1]) if batch else 1
        lens = rng.integers(0, n_k + 1, size=b)
        m = padding_mask(lens, n_k, side=kind.split("-")[1])  # (b, 1, L_k)
        m = m.reshape(batch[:1] + (1,) * (len(batch) - 1) + (1, n_k)) if batch else m[0]
        return m, {}
    if kind == "empty-rows":  # some queries may attend nothing at all
        m = rng.random(batch + (n_q, n_k)) < 0.7
        m[..., ::2, :] = False
        return m, {}
    if kind == "empty-tiles":  # whole key blocks that nobody may attend
        m = np.ones(batch + (n_q, n_k), dtype=bool)
        for k0 in range(0, n_k, 2 * block_k):
            m[..., k0 : k0 + block_k] = False
        return m, {}
    raise AssertionError(kind)


KINDS = [
    "none",
    "random",
    "causal-start",
    "causal-end",
    "pad-right",
    "pad-left",
    "empty-rows",
    "empty-tiles",
]


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    batch=st.sampled_from([(), (2,), (2, 3), (1, 2)]),
    n_q=st.integers(0, 40),
    n_k=st.integers(0, 40),
    d=st.integers(1, 8),
    d_v=st.integers(1, 6),
    block=st.one_of(
        st.integers(1, 50), st.tuples(st.integers(1, 20), st.integers(1, 20)), st.none()
    ),
    kind=st.sampled_from(KINDS),
    causal_too=st.booleans(),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_tiled_equals_plain_attention(
    seed, batch, n_q, n_k, d, d_v, block, kind, causal_too, dtype
):
    rng = np.random.default_rng(seed)
    q, k, v = _inputs(rng, batch, n_q, n_k, d, d_v, dtype)
    block_k = block if isinstance(block, int) else (block[1] if block else max(n_k, 1))
    mask, extra = _mask(kind, rng, batch, n_q, n_k, block_k)
    full = mask
    if causal_too and not extra:  # a mask and a causal constraint together
        extra = {"causal": True, "align": "end"}
        causal = causal_mask(n_q, n_k, align="end")
        full = causal if mask is None else mask & causal
    elif extra:
        mask = None  # the causal mask is generated tile by tile
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        want, _ = attention(q, k, v, full)
        got = tiled_attention(q, k, v, mask, block_size=block, **extra)
    assert got.dtype == dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[dtype])


def test_issue3_case2_worked_by_hand():
    """softmax([1, 0] / sqrt 2) = [.6698, .3302]; output .6698*[1,2] + .3302*[3,4]."""
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    k = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    v = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    mask = np.array([[T, T, F], [F, F, F]])
    w0 = 1 / (1 + math.exp(-1 / math.sqrt(2)))
    expected = np.array([[w0 * 1 + (1 - w0) * 3, w0 * 2 + (1 - w0) * 4], [0.0, 0.0]])
    for block in (1, 2, 3, 10, (1, 2)):
        out = tiled_attention(q, k, v, mask, block_size=block)
        np.testing.assert_allclose(out, expected, atol=1e-12)
    np.testing.assert_allclose(expected, [[1.6605, 2.6605], [0, 0]], atol=1e-4)


def test_issue3_case3_causal_zero_scores():
    """Zero scores, values 1, 2, 3: position t averages the first t values:
    1, 1.5, 2."""
    q = np.zeros((3, 1))
    k = np.zeros((3, 1))
    v = np.array([[1.0], [2.0], [3.0]])
    for block in (1, 2, 3, 4):
        out = tiled_attention(q, k, v, causal=True, block_size=block)
        np.testing.assert_allclose(out[:, 0], [1.0, 1.5, 2.0], atol=1e-15)


def test_causal_alignment_for_cross_lengths():
    """Lq=2, Lk=4, zero scores, values 1..4: 'start' sees keys <= i, 'end' keys
    <= i + 2."""
    q, k = np.zeros((2, 1)), np.zeros((4, 1))
    v = np.arange(1.0, 5.0)[:, None]
    start = tiled_attention(q, k, v, causal=True, align="start", block_size=1)
    end = tiled_attention(q, k, v, causal=True, align="end", block_size=3)
    np.testing.assert_allclose(start[:, 0], [1.0, 1.5], atol=1e-15)
    np.testing.assert_allclose(end[:, 0], [2.0, 2.5], atol=1e-15)
    with pytest.raises(ValueError, match="align"):
        tiled_attention(q, k, v, causal=True)
    with pytest.raises(ValueError, match="align"):
        tiled_attention(q, k, v, align="end")
    with pytest.raises(ValueError, match="align"):
        tiled_attention(q, k, v, causal=True, align="middle")


def test_fully_masked_rows_give_zeros_without_warnings():
    rng = np.random.default_rng(1)
    q, k, v = _inputs(rng, (2,), 5, 7, 3, 4, np.float32)
    mask = np.ones((2, 5, 7), dtype=bool)
    mask[0, 1] = False
    mask[1] = False  # one batch element attends nothing at all
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, lse = tiled_attention(q, k, v, mask, block_size=(2, 3), return_lse=True)
    assert not np.isnan(out).any()
    assert np.all(out[0, 1] == 0) and np.all(out[1] == 0)
    assert np.isneginf(lse[0, 1]) and np.isneginf(lse[1]).all()
    assert np.isfinite(lse[0, [0, 2, 3, 4]]).all()


def test_entirely_masked_tiles_are_skipped_whatever_they_hold():
    """Keys 4..7 form one tile that no query may attend; NaN and inf there change
    nothing."""
    rng = np.random.default_rng(2)
    q, k, v = _inputs(rng, (), 6, 12, 4, 3, np.float64)
    mask = np.ones((6, 12), dtype=bool)
    mask[:, 4:8] = False
    k_bad, v_bad = k.copy(), v.copy()
    k_bad[4:8] = np.nan
    v_bad[4:8] = np.inf
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = tiled_attention(q, k_bad, v_bad, mask, block_size=4)
    keep = np.r_[0:4, 8:12]
    want, _ = attention(q, k[keep], v[keep])  # the same keys, the masked ones removed
    np.testing.assert_allclose(out, want, atol=1e-12)


def test_poisoned_masked_keys_inside_partly_masked_tiles():
    rng = np.random.default_rng(3)
    q, k, v = _inputs(rng, (2,), 4, 9, 3, 2, np.float64)
    lens = np.array([5, 9])
    mask = padding_mask(lens, 9)  # batch 0: keys 5..8 are padding
    k_bad, v_bad = k.copy(), v.copy()
    k_bad[0, 5:] = np.inf
    v_bad[0, 5:] = np.nan
    out = tiled_attention(q, k_bad, v_bad, mask, block_size=(3, 4))
    want0, _ = attention(q[0], k[0, :5], v[0, :5])
    want1, _ = attention(q[1], k[1], v[1])
    np.testing.assert_allclose(out[0], want0, atol=1e-12)
    np.testing.assert_allclose(out[1], want1, atol=1e-12)
    k_bad[1, 0] = np.nan  # a key that is attended: refused
    with pytest.raises(ValueError, match="NaN or inf"):
        tiled_attention(q, k_bad, v_bad, mask, block_size=(3, 4))


@pytest.mark.parametrize("side", ["left", "right"])
def test_padding_never_changes_the_real_tokens(side):
    rng = np.random.default_rng(4)
    real_q, real_k, real_v = _inputs(rng, (), 5, 5, 4, 3, np.float64)
    pad = 3
    zeros = np.zeros((pad, 4))
    if side == "right":
        k = np.vstack([real_k, zeros + 100.0])
        v = np.vstack([real_v, zeros[:, :3] - 100.0])
    else:
        k = np.vstack([zeros + 100.0, real_k])
        v = np.vstack([zeros[:, :3] - 100.0, real_v])
    mask = padding_mask([5], 8, side=side)[0]
    out = tiled_attention(real_q, k, v, mask, block_size=3)
    want, _ = attention(real_q, real_k, real_v)
    np.testing.assert_allclose(out, want, atol=1e-12)


def test_batch_element_alone_equals_inside_the_batch_and_workers_agree():
    rng = np.random.default_rng(5)
    q, k, v = _inputs(rng, (3, 2), 33, 21, 8, 5, np.float32)
    together = tiled_attention(q, k, v, block_size=(8, 5))
    threaded = tiled_attention(q, k, v, block_size=(8, 5), workers=2)
    np.testing.assert_array_equal(together, threaded)
    alone = tiled_attention(q[1, 0], k[1, 0], v[1, 0], block_size=(8, 5))
    np.testing.assert_array_equal(together[1, 0], alone)


def test_float16_is_computed_in_float32_and_returned_as_float16():
    rng = np.random.default_rng(6)
    q, k, v = _inputs(rng, (2,), 16, 24, 8, 4, np.float16)
    q, k = (
        q * np.float16(30),
        k * np.float16(30),
    )  # scores up to ~1e4: exp overflows float16
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = tiled_attention(q, k, v, block_size=5)
    assert out.dtype == np.float16
    want, _ = attention(
        q.astype(np.float64), k.astype(np.float64), v.astype(np.float64)
    )
    np.testing.assert_allclose(out.astype(np.float64), want, atol=5e-3)


def test_log_sum_exp_matches_the_direct_formula():
    rng = np.random.default_rng(7)
    q, k, v = _inputs(rng, (2,), 6, 10, 4, 3, np.float64)
    mask = rng.random((2, 6, 10)) < 0.5
    mask[0, 0] = False
    _, lse = tiled_attention(q, k, v, mask, block_size=3, return_lse=True)
    for b in range(2):
        for i in range(6):
            allowed = [j for j in range(10) if mask[b, i, j]]
            s = [float(q[b, i] @ k[b, j]) / 2.0 for j in allowed]  # sqrt(d_k) = 2
            want = math.log(sum(math.exp(x) for x in s)) if s else -math.inf
            assert lse[b, i] == pytest.approx(want, abs=1e-12)


def test_large_scores_do_not_overflow_float32():
    q = np.array([[100.0, 0.0]], dtype=np.float32)
    k = np.array([[100.0, 0.0], [90.0, 0.0], [-100.0, 0.0]], dtype=np.float32)
    v = np.array([[1.0], [2.0], [3.0]], dtype=np.float32)
    out = tiled_attention(
        q, k, v, block_size=1, scale=1.0
    )  # scores 10000, 9000, -10000
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[1.0]], atol=1e-6)


def test_errors_name_what_is_wrong():
    q, k, v = np.zeros((2, 3)), np.zeros((4, 3)), np.zeros((4, 5))
    with pytest.raises(TypeError, match="float64"):
        tiled_attention(q, k, v, np.ones((2, 4)))
    with pytest.raises(ValueError, match=r"\(1, 2, 2\).*\(2, 4\)"):
        tiled_attention(q, k, v, np.ones((1, 2, 2), dtype=bool))
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(4, 2\)"):
        tiled_attention(q, np.zeros((4, 2)), v)
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(5, 5\)"):
        tiled_attention(q, k, np.zeros((5, 5)))
    for bad in (0, -1, 1.5, (1, 2, 3), (2, 0), True):
        with pytest.raises(ValueError, match="block"):
            tiled_attention(q, k, v, block_size=bad)
    with pytest.raises(ValueError, match="workers"):
        tiled_attention(q, k, v, workers=0)
    with pytest.raises(ValueError, match="shape"):
        tiled_attention(np.zeros(3), k, v)
    with pytest.raises(ValueError, match="d_k = 0"):
        tiled_attention(np.zeros((2, 0)), np.zeros((4, 0)), v)
    for bad in (np.inf, np.nan, np.ones(2)):
        with pytest.raises(ValueError, match="scale"):
            tiled_attention(q, k, v, scale=bad)
    for bad in (
        "2",
        True,
        np.bool_(False),
        1j,
    ):  # not a number: the rule of attention too
        with pytest.raises(TypeError, match="scale"):
            tiled_attention(q, k, v, scale=bad)
    # with d_k = 0 and an explicit scale every score is 0: each query averages the
    # values
    out = tiled_attention(
        np.zeros((2, 0)), np.zeros((4, 0)), np.arange(4.0)[:, None], scale=1.0
    )
    np.testing.assert_allclose(out, [[1.5], [1.5]], atol=1e-15)


def test_default_blocks_fit_the_lengths_and_a_one_megabyte_tile():
    assert default_block_sizes(5, 3) == (5, 3)
    bq, bk = default_block_sizes(100_000, 100_000)
    assert bq * bk * 4 <= 1 << 20 and bq >= 64 and bk >= 256
    # 256 queries per block from 512 keys on; the query side fills the tile for fewer
    # keys
    assert default_block_sizes(512, 512) == (256, 512)
    assert default_block_sizes(4_096, 511) == (513, 511)
    assert default_block_sizes(2_000, 256) == (1024, 256)
    assert default_block_sizes(300, 2_000) == (256, 1024)


def _peak_bytes(n, block, d=16):
    rng = np.random.default_rng(8)
    q, k, v = _inputs(rng, (), n, n, d, d, np.float32)
    tracemalloc.start()
    tracemalloc.reset_peak()
    tiled_attention(q, k, v, block_size=block)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def test_peak_memory_grows_like_n_times_block_not_n_squared():
    n, block = 8192, 256
    peak = _peak_bytes(n, block)
    scores_bytes = n * n * 4  # 256 MiB of float32 scores
    tile_bytes = block * block * 4
    inputs_bytes = n * 16 * 4
    # What tiling needs: a few tiles plus a few copies of the (n, d) inputs and output.
    assert peak < 4 * tile_bytes + 8 * inputs_bytes
    assert peak < scores_bytes / 50
    # Doubling n doubles (not quadruples) the peak.
    half = _peak_bytes(n // 2, block)
    assert peak / half < 2.5


def test_tile_plan_for_a_causal_mask_counts_tiles_by_hand():
    """12 positions in blocks of 4: the 3 tiles above the diagonal are skipped, the 3 on
    it are partly masked, the 3 below it are used whole."""
    plan = tile_plan(12, 12, 4, causal=True)
    np.testing.assert_array_equal(
        plan,
        [
            [PARTLY_MASKED, SKIPPED, SKIPPED],
            [FULL, PARTLY_MASKED, SKIPPED],
            [FULL, FULL, PARTLY_MASKED],
        ],
    )
    # L_q = 6 queries at the end of 12 keys: query i sees keys j <= i + 6.
    plan = tile_plan(6, 12, (2, 4), causal=True, align="end")
    assert plan[0].tolist() == [FULL, PARTLY_MASKED, SKIPPED]
    assert plan[2].tolist() == [FULL, FULL, PARTLY_MASKED]
    # A user mask: key block 1 is blocked for everyone.
    mask = np.ones((4, 8), dtype=bool)
    mask[:, 4:] = False
    mask[0, 0] = False
    assert tile_plan(4, 8, 4, mask=mask).tolist() == [[PARTLY_MASKED, SKIPPED]]
    with pytest.raises(TypeError):
        tile_plan(4, 8, 4, mask=mask.astype(int))
    with pytest.raises(ValueError, match="align"):
        tile_plan(4, 8, 4, causal=True)


@given(n=st.integers(1, 40), block=st.integers(1, 12), seed=st.integers(0, 1000))
@settings(max_examples=25, deadline=None)
def test_skipped_tiles_really_hold_no_allowed_entry(n, block, seed):
    mask = np.random.default_rng(seed).random((n, n)) < 0.2
    plan = tile_plan(n, n, block, causal=True, mask=mask)
    full = mask & causal_mask(n)
    for a in range(plan.shape[0]):
        for b in range(plan.shape[1]):
            sub = full[a * block : (a + 1) * block, b * block : (b + 1) * block]
            expected = (
                SKIPPED if not sub.any() else FULL if sub.all() else PARTLY_MASKED
            )
            assert plan[a, b] == expected


def test_online_softmax_trace_of_the_scores_2_4_1():
    """Blocks [2, 4] then [1]: the max becomes 4 at once; the last block adds
    e^(1 - 4)."""
    steps = online_softmax_trace([2.0, 4.0, 1.0], np.eye(3), block_size=2)
    assert [s["keys"] for s in steps] == [[0, 1], [2]]
    assert steps[0]["running max m"] == 4.0 and steps[1]["running max m"] == 4.0
    assert steps[0]["running sum l"] == pytest.approx(math.exp(-2) + 1.0, abs=1e-15)
    assert steps[1]["running sum l"] == pytest.approx(
        math.exp(-2) + 1.0 + math.exp(-3), abs=1e-15
    )
    total = math.exp(2) + math.exp(4) + math.exp(1)
    np.testing.assert_allclose(
        steps[1]["output so far"],
        [math.exp(2) / total, math.exp(4) / total, math.exp(1) / total],
        atol=1e-15,
    )
    # Increasing scores force a rescaling at every step: exp(m_old - m_new) = exp(-1).
    steps = online_softmax_trace([0.0, 1.0, 2.0], np.ones((3, 1)), block_size=1)
    assert [s["rescale exp(m_old - m)"] for s in steps[1:]] == pytest.approx(
        [math.exp(-1)] * 2
    )
    with pytest.raises(ValueError):
        online_softmax_trace([], np.ones((0, 1)))
    with pytest.raises(ValueError):
        online_softmax_trace([1.0, np.nan], np.ones((2, 1)))


def test_leading_axes_broadcast_and_integers_become_float64():
    rng = np.random.default_rng(9)
    q = rng.normal(size=(1, 5, 4))  # one query set shared by 3 batch elements
    k = rng.normal(size=(3, 7, 4))
    v = rng.normal(size=(7, 2))  # one value set shared by all
    mask = rng.random((7,)) < 0.6  # a key mask broadcast over queries and batch
    got = tiled_attention(q, k, v, mask, block_size=(2, 3))
    want, _ = attention(q, k, v, mask)
    assert got.shape == (3, 5, 2)
    np.testing.assert_allclose(got, want, atol=1e-12)
    ints = tiled_attention(
        np.arange(6).reshape(3, 2),
        np.ones((4, 2), dtype=int),
        np.arange(4)[:, None],
        block_size=2,
    )
    assert ints.dtype == np.float64
    np.testing.assert_allclose(
        ints[:, 0], [1.5, 1.5, 1.5], atol=1e-12
    )  # equal scores per row


def test_causal_tiles_are_kept_only_up_to_the_default_tile_size():
    """Diagonal tiles are cached for reuse across heads, but never a tile larger than
    the default one: a huge explicit block must not stay in memory after the call."""
    from attnlib.core import tiles as tiled

    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((2, 600, 4)) for _ in range(3))  # (H, L, d)
    want = attention(q, k, v, causal_mask(600))[0]  # (H, L, d)
    tiled._kept_causal_tile.cache_clear()
    big = tiled_attention(q, k, v, causal=True, block_size=600)  # 360,000 > 262,144
    assert tiled._kept_causal_tile.cache_info().currsize == 0
    small = tiled_attention(q, k, v, causal=True, block_size=(64, 128))
    assert tiled._kept_causal_tile.cache_info().currsize > 0
    np.testing.assert_allclose(big, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(small, want, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="read-only"):
        tiled._kept_causal_tile(64, 128, 0)[0, 0] = False


# ---- the default tile and what a causal mask saves (expert reads 3a, 4b) -------------


def test_default_tile_never_exceeds_the_table_or_one_tile_and_is_the_one_used():
    from attnlib.core.tiles import TILE_ENTRIES
    from attnlib.data.examples import COST_SEQUENCE_LENGTHS

    for n in COST_SEQUENCE_LENGTHS:
        block_q, block_k = default_block_sizes(n, n)
        assert block_q * block_k <= min(n * n, TILE_ENTRIES), n
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(100, 4)) for _ in range(3))
    np.testing.assert_array_equal(  # for 100 positions: the whole 100 x 100 table
        tiled_attention(q, k, v),
        tiled_attention(q, k, v, block_size=default_block_sizes(100, 100)),
    )
    assert default_block_sizes(100, 100) == (100, 100)


def _causal_scores_by_key_tiles(n: int) -> int:
    from attnlib.core.tiles import check_causal, key_tiles

    block_q, block_k = default_block_sizes(n, n)
    diagonal = check_causal(True, None, n, n)
    computed = 0
    for q0 in range(0, n, block_q):
        q1 = min(q0 + block_q, n)
        for k0, k1, _ in key_tiles(None, None, diagonal, q0, q1, n, block_k):
            computed += (q1 - q0) * (k1 - k0)
    return computed


@pytest.mark.parametrize("n", [512, 1024, 2048, 4096])
def test_causal_tiles_compute_the_closed_form_share_of_the_scores(n):
    # closed form: query block i (of T) sees keys up to its last query, block_q (i + 1)
    block_q, _ = default_block_sizes(n, n)
    t = n // block_q
    assert t * block_q == n
    assert _causal_scores_by_key_tiles(n) == block_q**2 * t * (t + 1) // 2


def test_causal_tiles_skip_a_quarter_at_512_and_nearly_half_at_4096():
    assert _causal_scores_by_key_tiles(512) / 512**2 == 0.75
    assert 0.45 < 1 - _causal_scores_by_key_tiles(4096) / 4096**2 < 0.5


@pytest.mark.parametrize("dtype, bound", [("float64", 1e-15), ("float32", 1e-6)])
def test_tiled_and_plain_agree_to_the_precision_of_the_dtype(dtype, bound):
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(2, 3, 10, 8)).astype(dtype) for _ in range(3))
    plain = attention(q, k, v)[0]
    tiled = tiled_attention(q, k, v, block_size=(3, 4))
    assert np.abs(tiled - plain).max() < bound * 10
