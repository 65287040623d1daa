"""The character n-gram baseline of the language-model chapter: interpolated
Kneser-Ney probabilities checked against values worked out by hand, normalised over
the vocabulary for every history, never zero, and its discount chosen without the
validation text."""

from dataclasses import replace

import numpy as np
import pytest
from language_model_ngram import (
    baseline_table,
    count_ngrams,
    distribution,
    mean_loss,
    repeated_share,
    target_probabilities,
)

from attnlib.data.book_text import Split

A, B, C, D = 0, 1, 2, 3
AAB = np.array([[A, A, B]])  # the text "aab" as one piece

# By hand, for the text "aab", vocabulary {a, b, c} and discount 1/2:
# continuation counts of one character: a is preceded by 1 distinct character (a),
# b by 1 (a); C = 2, T = 2, so P0(a) = (1 - 1/2 + 1/2 * 2 * 1/3) / 2 = 5/12 = P0(b),
# P0(c) = (1/2 * 2 * 1/3) / 2 = 1/6.
# Raw bigram counts after "a": aa 1, ab 1; C = 2, T = 2:
# P(a | a) = (1/2 + 1/2 * 2 * 5/12) / 2 = 11/24 = P(b | a), P(c | a) = 1/12.
# Raw unigram counts (the top level of a model that reads no history): a 2, b 1;
# C = 3, T = 2: P(a) = (3/2 + 1/3) / 3 = 11/18, P(b) = 5/18, P(c) = 1/9.
AFTER_A = np.array([11 / 24, 11 / 24, 1 / 12])
LOWER = np.array([5 / 12, 5 / 12, 1 / 6])
NO_HISTORY = np.array([11 / 18, 5 / 18, 1 / 9])


def test_bigram_probabilities_match_the_hand_computed_values():
    counts = count_ngrams(AAB, 2, 3)
    np.testing.assert_allclose(
        distribution(counts, [A], order=2, discount=0.5), AFTER_A, rtol=1e-12
    )


def test_an_unseen_history_falls_back_to_the_continuation_probabilities():
    counts = count_ngrams(AAB, 2, 3)  # "b" is never followed by anything
    np.testing.assert_allclose(
        distribution(counts, [B], order=2, discount=0.5), LOWER, rtol=1e-12
    )


def test_a_model_without_history_uses_raw_counts():
    counts = count_ngrams(AAB, 2, 3)
    for order, history in ((1, [A, B]), (2, [])):
        np.testing.assert_allclose(
            distribution(counts, history, order=order, discount=0.5),
            NO_HISTORY,
            rtol=1e-12,
        )


def test_window_start_uses_the_longest_history_the_window_holds():
    counts = count_ngrams(AAB, 3, 3)
    # order 3, but the first prediction of a window has one character before it: the
    # raw bigram counts decide, as in the hand-computed bigram case
    p = target_probabilities(
        counts, np.array([[A, A]]), np.array([[B, C]]), order=3, discount=0.5
    )
    assert p[0, 0] == pytest.approx(11 / 24, rel=1e-12)
    # the second reads "aa" (raw trigram counts: aab 1; C = 1, T = 1). Below it, the
    # continuation counts of bigrams after "a": ab is preceded by 1 distinct
    # character, aa by none (it starts the piece); C = 1, T = 1, so
    # P1(c | a) = (1/2 * 1 * P0(c)) / 1 = 1/12 and P(c | aa) = (1/2 * 1 * 1/12) = 1/24
    assert p[0, 1] == pytest.approx(1 / 24, rel=1e-12)


def test_probabilities_sum_to_one_over_the_vocabulary_for_every_history():
    rng = np.random.default_rng(0)
    pieces = rng.integers(0, 5, size=(3, 40))  # characters 5 and 6 never occur
    counts = count_ngrams(pieces, 4, 7)
    histories = {g[-3:] for g in counts.raw} | {b"", bytes([6, 5]), bytes([0, 6, 1])}
    for order in (1, 2, 3, 4):
        for discount in (0.05, 0.5, 1.0):
            for h in histories:
                p = distribution(counts, list(h), order=order, discount=discount)
                assert p.shape == (7,)
                assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_characters_never_seen_in_training_get_probability_above_zero():
    counts = count_ngrams(AAB, 3, 4)  # d (id 3) never occurs
    for order in (1, 2, 3):
        for history in ([], [A], [A, A], [A, B], [D, D]):
            p = distribution(counts, history, order=order, discount=1.0)
            assert p.min() > 0.0
    # by hand, order 2 after "a": P0(d) = (1/2 * 2 * 1/4) / 2 = 1/8 and
    # P(d | a) = (1/2 * 2 * 1/8) / 2 = 1/16
    p = distribution(count_ngrams(AAB, 2, 4), [A], order=2, discount=0.5)
    assert p[D] == pytest.approx(1 / 16, rel=1e-12)


def test_counts_never_cross_a_piece_boundary():
    counts = count_ngrams(np.array([[A, B], [C, A]]), 2, 3)
    assert bytes([B, C]) not in counts.raw
    assert counts.raw[bytes([A, B])] == 1 and counts.raw[bytes([C, A])] == 1


def test_mean_loss_is_the_mean_negative_log_of_each_distribution():
    rng = np.random.default_rng(1)
    counts = count_ngrams(rng.integers(0, 6, size=(4, 60)), 3, 6)
    inputs = rng.integers(0, 6, size=(2, 9))
    targets = rng.integers(0, 6, size=(2, 9))
    by_hand = [
        -np.log(distribution(counts, inputs[w, : i + 1], order=3, discount=0.7)[y])
        for w in range(2)
        for i, y in enumerate(targets[w])
    ]
    got = mean_loss(counts, inputs, targets, order=3, discount=0.7)
    assert got == pytest.approx(np.mean(by_hand), rel=1e-12)


def test_the_discount_is_chosen_without_reading_the_validation_text():
    rng = np.random.default_rng(2)
    text = np.tile(rng.integers(0, 8, size=50), 20)  # a text with repeats
    split = Split(
        train=text[:900].reshape(30, 30), validation=text[900:990].reshape(3, 30)
    )
    other = replace(split, validation=rng.integers(0, 8, size=(3, 30)))
    first = baseline_table(split, context=10, vocab_size=8, orders=(1, 2, 3))
    second = baseline_table(other, context=10, vocab_size=8, orders=(1, 2, 3))
    for a, b in zip(first, second, strict=True):
        assert (a["discount"], a["held_out_nats"]) == (
            b["discount"],
            b["held_out_nats"],
        )
    # and a longer history helps on a repeated text
    assert first[2]["validation_nats"] < first[0]["validation_nats"]


@pytest.mark.parametrize(
    "call, error, words",
    [
        (lambda c: distribution(c, [A], order=2, discount=0.0), ValueError, "discount"),
        (lambda c: distribution(c, [A], order=2, discount=1.5), ValueError, "discount"),
        (lambda c: distribution(c, [A], order=3, discount=0.5), ValueError, "order"),
        (lambda c: distribution(c, [5], order=2, discount=0.5), ValueError, "history"),
        (lambda c: distribution(c, [0.5], order=2, discount=0.5), TypeError, "history"),
        (lambda c: count_ngrams([[0.0, 1.0]], 2, 3), TypeError, "pieces"),
        (lambda c: count_ngrams(AAB, 0, 3), ValueError, "max_order"),
        (
            lambda c: mean_loss(c, [[A, A]], [[A]], order=2, discount=0.5),
            ValueError,
            "shape",
        ),
    ],
)
def test_bad_input_names_the_argument(call, error, words):
    with pytest.raises(error, match=words):
        call(count_ngrams(AAB, 2, 3))


def test_repeated_share_counts_strings_seen_in_training():
    # training "abcab"; the window "cab" with targets "abc" predicts a, b, c after
    # "c", "ca", "cab": the 2-character strings ending at the targets are ca, ab, bc,
    # all in training
    train = np.array([[A, B, C, A, B]])
    inputs, targets = np.array([[C, A, B]]), np.array([[A, B, C]])
    assert repeated_share(train, inputs, targets, 2) == 1.0
    # the 3-character strings: "cab" (seen) and "abc" (seen): both predictions that
    # have two characters before them
    assert repeated_share(train, inputs, targets, 3) == 1.0
    # targets "aaa": ca seen, aa not, ba not
    assert repeated_share(train, inputs, np.array([[A, A, A]]), 2) == 1 / 3
