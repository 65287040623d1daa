"""Welch's test of the modern decoder chapter (``modern_decoder_runs.welch``), against
values worked out by hand and the closed forms of Student's t with 1 and 2 degrees of
freedom."""

import math

import pytest
from modern_decoder_runs import welch


def test_t_and_degrees_of_freedom_by_hand():
    # means 2 and 5, sample variances 1 and 4, three values each
    result = welch([1.0, 2.0, 3.0], [3.0, 5.0, 7.0])
    se2 = 1 / 3 + 4 / 3
    assert result["t"] == pytest.approx(-3 / math.sqrt(se2))
    assert result["df"] == pytest.approx(se2**2 / ((1 / 3) ** 2 / 2 + (4 / 3) ** 2 / 2))


def test_p_value_matches_students_t_in_closed_form():
    # two values each with equal spread give df = 2, where P(|T| >= t) = 1 - t /
    # sqrt(2 + t^2)
    for a, b in (([0.0, 1.0], [2.0, 3.0]), ([0.0, 2.0], [5.0, 7.0])):
        r = welch(a, b)
        assert r["df"] == pytest.approx(2.0)
        t = abs(r["t"])
        assert r["p"] == pytest.approx(1 - t / math.sqrt(2 + t * t), rel=1e-10)
    with pytest.raises(ValueError, match="at least two"):
        welch([1.0], [2.0, 3.0])
    with pytest.raises(ValueError, match="no spread"):
        welch([1.0, 1.0], [2.0, 2.0])


def test_incomplete_beta_matches_the_binomial_sum():
    from modern_decoder_runs import _incomplete_beta

    # for whole a and b, I_x(a, b) = sum_{j=a}^{a+b-1} C(a+b-1, j) x^j (1-x)^(a+b-1-j)
    for x, a, b in ((0.3, 4, 6), (0.8, 2, 9), (0.5, 7, 3)):
        n = a + b - 1
        expected = sum(
            math.comb(n, j) * x**j * (1 - x) ** (n - j) for j in range(a, n + 1)
        )
        assert _incomplete_beta(x, a, b) == pytest.approx(expected, rel=1e-12)


def test_p_value_of_one_degree_of_freedom_is_cauchy():
    # df = 1 needs df = (va + vb)^2 / (va^2 + vb^2) = 1: one sample without spread
    r = welch([0.0, 0.0], [1.0, 3.0])
    assert r["df"] == pytest.approx(1.0)
    t = abs(r["t"])
    assert r["p"] == pytest.approx(1 - 2 / math.pi * math.atan(t), rel=1e-10)


def test_no_difference_gives_p_of_one():
    assert welch([1.0, 2.0, 3.0], [3.0, 1.0, 2.0])["p"] == pytest.approx(1.0)
