"""Tests of attnlib.softmax: exact values (issue 3, cases 4-7), properties, dtypes,
   errors.

Expected values come from hand formulas such as e^a / (e^a + e^b), never from attnlib.
"""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from attnlib import softmax

T, F = True, False
SETTINGS = settings(max_examples=40, deadline=None)


def reference_softmax(row, allowed):
    """Softmax of one 1-D row written as a loop, for moderate scores (|s| < 50)."""
    exps = [math.exp(s) if ok else 0.0 for s, ok in zip(row, allowed)]
    total = sum(exps)
    return [e / total if total > 0 else 0.0 for e in exps]


@pytest.fixture
def no_warnings():
    """Turn every warning inside the test into an error (the issue says "no
    warnings")."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# --- issue 3, case 4: masked softmax and mask polarity
# ------------------------------------


def test_case4_masked_row(no_warnings):
    e1, e2 = math.e, math.e**2
    got = softmax(np.array([[1.0, 2.0, 3.0]]), mask=np.array([[T, T, F]]))
    np.testing.assert_allclose(got, [[e1 / (e1 + e2), e2 / (e1 + e2), 0.0]], rtol=1e-12)
    np.testing.assert_allclose(got, [[0.2689, 0.7311, 0.0]], atol=5e-5)
    assert got[0, 2] == 0.0


def test_case4_inverted_mask_selects_the_other_entry(no_warnings):
    got = softmax(np.array([[1.0, 2.0, 3.0]]), mask=np.array([[F, F, T]]))
    np.testing.assert_array_equal(got, [[0.0, 0.0, 1.0]])


@pytest.mark.parametrize(
    "bad_mask",
    [
        np.array([[1.0, 1.0, 0.0]]),
        np.array([[1, 1, 0]]),
        np.array([[1, 1, 0]], dtype=np.uint8),
        [[1.0, 1.0, 0.0]],
    ],
)
def test_case4_non_boolean_mask_is_a_type_error_naming_the_dtype(bad_mask):
    with pytest.raises(TypeError, match=str(np.asarray(bad_mask).dtype)):
        softmax(np.array([[1.0, 2.0, 3.0]]), mask=bad_mask)


# --- case 5: a huge score at a masked position
# ----------------------------------------------


def test_case5_masked_huge_score_has_no_effect(no_warnings):
    got = softmax(
        np.array([[1.0, 1.0, 2.0], [1.0, 1.0, 1000.0]]), mask=np.array([T, T, F])
    )
    np.testing.assert_array_equal(got, [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]])


# --- case 6: magnitudes, axis, float32
# ----------------------------------------------------------


def test_case6_large_scores(no_warnings):
    got = softmax(np.array([800.0, 1.0, 1.0]))
    np.testing.assert_allclose(got, [1.0, 0.0, 0.0], atol=1e-300)
    np.testing.assert_allclose(
        got[1], math.exp(1 - 800) / (1 + 2 * math.exp(1 - 800)), rtol=1e-9
    )


def test_case6_very_negative_equal_scores(no_warnings):
    np.testing.assert_array_equal(softmax(np.array([-1e4, -1e4])), [0.5, 0.5])


def test_case6_three_equal_large_scores(no_warnings):
    np.testing.assert_allclose(
        softmax(np.array([1000.0, 1000.0, 1000.0])), [1 / 3] * 3, rtol=1e-15
    )


def test_case6_float32_keeps_its_dtype(no_warnings):
    got = softmax(np.array([100.0, 100.0], dtype=np.float32))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.array([0.5, 0.5], dtype=np.float32))


def test_case6_axis_0(no_warnings):
    got = softmax(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0)
    low = 1 / (1 + math.e**2)  # e^1 / (e^1 + e^3)
    np.testing.assert_allclose(got, [[low, low], [1 - low, 1 - low]], rtol=1e-12)
    np.testing.assert_allclose(got, [[0.1192, 0.1192], [0.8808, 0.8808]], atol=5e-5)


# --- case 7: float16
# -----------------------------------------------------------------------------


def test_case7_float16_masked(no_warnings):
    got = softmax(
        np.array([[1, 2, 3, 4]], dtype=np.float16), mask=np.array([[T, T, F, F]])
    )
    assert got.dtype == np.float16
    np.testing.assert_allclose(
        got.astype(float), [[0.2690, 0.7310, 0.0, 0.0]], atol=2e-4
    )
    assert got[0, 2] == 0 and got[0, 3] == 0


def test_case7_float16_fully_masked_row_is_zero(no_warnings):
    got = softmax(
        np.array([[1, 2, 3, 4]], dtype=np.float16), mask=np.zeros((1, 4), dtype=bool)
    )
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, np.zeros((1, 4)))


# --- the kinds behind those cases
# ----------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_extreme_magnitudes_in_every_dtype(no_warnings, dtype):
    big = np.finfo(dtype).max
    got = softmax(
        np.array([[big, -big, 0.0], [-big, -big, -big], [big, big, big]], dtype=dtype)
    )
    assert got.dtype == dtype
    np.testing.assert_array_equal(got[0], [1, 0, 0])
    np.testing.assert_allclose(got[1:].astype(float), 1 / 3, rtol=1e-3)


@pytest.mark.parametrize("poison", [np.nan, np.inf, -np.inf, 1e308, -1e308])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_masked_entries_may_hold_anything(no_warnings, poison, dtype):
    scores = np.array([[0.5, poison, 1.5], [poison, poison, poison]], dtype=np.float64)
    with np.errstate(
        over="ignore"
    ):  # 1e308 does not fit float16: the poison becomes inf
        scores = scores.astype(dtype)
    mask = np.array([[T, F, T], [F, F, F]])
    got = softmax(scores, mask=mask)
    a, b = math.exp(0.5), math.exp(1.5)
    np.testing.assert_allclose(
        got.astype(float),
        [[a / (a + b), 0, b / (a + b)], [0, 0, 0]],
        atol=1e-3 if dtype == np.float16 else 1e-7,
    )


def test_minus_infinity_gets_weight_zero_and_an_all_minus_inf_row_gives_zeros(
    no_warnings,
):
    got = softmax(np.array([[0.0, -np.inf, 0.0], [-np.inf, -np.inf, -np.inf]]))
    np.testing.assert_array_equal(got, [[0.5, 0, 0.5], [0, 0, 0]])


@pytest.mark.parametrize(
    "shape,axis", [((3, 0), -1), ((0, 3), -1), ((0,), 0), ((2, 0, 4), 1)]
)
def test_empty_axes_give_empty_results(no_warnings, shape, axis):
    got = softmax(np.zeros(shape), axis=axis)
    assert got.shape == shape


def test_integer_scores_are_accepted_as_float64(no_warnings):
    got = softmax(np.array([0, 0, 0, 0]))
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, [0.25] * 4)


# --- properties
# ----------------------------------------------------------------------------------

finite_rows = hnp.arrays(
    np.float64,
    hnp.array_shapes(min_dims=1, max_dims=3, max_side=6),
    elements=st.floats(-1e6, 1e6),
)


@SETTINGS
@given(finite_rows, st.data())
def test_rows_sum_to_one_or_zero_when_fully_masked(scores, data):
    mask = data.draw(hnp.arrays(bool, scores.shape))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = softmax(scores, mask=mask)
    assert np.all(w >= 0) and np.all(w[~mask] == 0)
    expected = np.where(mask.any(axis=-1), 1.0, 0.0)
    np.testing.assert_allclose(w.sum(axis=-1), expected, atol=1e-12)


@SETTINGS
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 6)),
        elements=st.floats(-30, 30),
    ),
    st.data(),
)
def test_equals_a_loop_with_plain_exponentials(scores, data):
    mask = data.draw(hnp.arrays(bool, scores.shape))
    w = softmax(scores, mask=mask)
    for i in range(scores.shape[0]):
        np.testing.assert_allclose(
            w[i], reference_softmax(scores[i], mask[i]), rtol=1e-9, atol=1e-300
        )


@SETTINGS
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 6)),
        elements=st.floats(-1e3, 1e3),
    ),
    hnp.arrays(np.float64, 4, elements=st.floats(-1e4, 1e4)),
    st.data(),
)
def test_adding_a_constant_per_row_changes_nothing(scores, shifts, data):
    mask = data.draw(hnp.arrays(bool, scores.shape))
    shifted = scores + shifts[: scores.shape[0], None]
    np.testing.assert_allclose(
        softmax(shifted, mask=mask), softmax(scores, mask=mask), atol=1e-9
    )


@SETTINGS
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(1, 3)),
        elements=st.floats(-100, 100),
    ),
    st.integers(0, 2),
)
def test_any_axis_equals_moving_that_axis_last(scores, axis):
    moved = np.moveaxis(scores, axis, -1)
    np.testing.assert_allclose(
        softmax(scores, axis=axis), np.moveaxis(softmax(moved), -1, axis), rtol=1e-12
    )


@SETTINGS
@given(
    hnp.arrays(np.float64, st.integers(2, 8), elements=st.floats(-50, 50), unique=True)
)
def test_a_higher_score_never_gets_a_lower_weight(scores):
    w = softmax(scores)
    assert np.all(np.diff(w[np.argsort(scores)]) >= 0)


@SETTINGS
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(1, 6)),
        elements=st.floats(-60000, 60000),
    ),
    st.sampled_from([np.float16, np.float32]),
)
def test_low_precision_is_returned_in_its_dtype_and_close_to_float64(scores, dtype):
    low = scores.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = softmax(low)
    assert got.dtype == dtype
    np.testing.assert_allclose(
        got.astype(float),
        softmax(low.astype(float)),
        atol=1e-3 if dtype == np.float16 else 1e-6,
    )


# --- errors
# --------------------------------------------------------------------------------------


def test_mask_that_does_not_broadcast_names_both_shapes():
    with pytest.raises(ValueError, match=r"\(2, 2\).*\(2, 3\)"):
        softmax(np.zeros((2, 3)), mask=np.ones((2, 2), dtype=bool))


def test_mask_may_not_enlarge_the_scores():
    with pytest.raises(ValueError, match=r"\(4, 3\).*\(3,\)"):
        softmax(np.zeros(3), mask=np.ones((4, 3), dtype=bool))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_nan_or_plus_inf_at_an_allowed_position_is_an_error(bad):
    with pytest.raises(ValueError, match="NaN or \\+inf"):
        softmax(np.array([0.0, bad, 1.0]))


@pytest.mark.parametrize(
    "scores,dtype",
    [
        (np.array([1 + 1j, 2]), "complex"),
        (np.array([True, False]), "bool"),
        (np.array(["a", "b"]), "<U1"),
    ],
)
def test_non_real_scores_are_a_type_error_naming_the_dtype(scores, dtype):
    with pytest.raises(TypeError, match=dtype):
        softmax(scores)


def test_axis_out_of_range():
    with pytest.raises(ValueError):
        softmax(np.zeros((2, 3)), axis=2)
