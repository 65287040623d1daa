"""The exact permutation test of the modern decoder chapter
(``modern_decoder_runs.permutation_p``), against splits counted by hand."""

import pytest
from modern_decoder_runs import permutation_p


def test_three_against_three_apart_gives_the_smallest_p():
    # C(6, 3) = 20 splits; only {1, 2, 3} and its mirror {4, 5, 6} are as far apart
    assert permutation_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) == pytest.approx(2 / 20)


def test_two_against_two_by_hand():
    # pooled 0, 0, 1, 1: of the C(4, 2) = 6 splits, {0, 0} | {1, 1} and its mirror
    # have a gap of 1, the four mixed splits a gap of 0
    assert permutation_p([0.0, 0.0], [1.0, 1.0]) == pytest.approx(2 / 6)


def test_a_middle_gap_counts_every_split_as_far_apart():
    # a = {1, 4}, b = {2, 3}: observed gap 0; every split reaches it
    assert permutation_p([1.0, 4.0], [2.0, 3.0]) == pytest.approx(1.0)


def test_unequal_sizes_by_hand():
    # a = {0}, b = {1, 2}: the three splits of one against two have gaps
    # |0 - 1.5| = 1.5, |1 - 1| = 0, |2 - 0.5| = 1.5; two reach the observed 1.5
    assert permutation_p([0.0], [1.0, 2.0]) == pytest.approx(2 / 3)


def test_an_empty_sample_is_refused():
    with pytest.raises(ValueError, match="each sample needs a value"):
        permutation_p([], [1.0, 2.0])
