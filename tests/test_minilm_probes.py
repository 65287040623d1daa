"""book_support.experiments.minilm_probes and the two margin checks of
adversarial_attention.

Every expected value is computed another way: the probes against minilm.forward and
attnlib's attention run head by head; the statistics against hand-worked examples.
"""

from __future__ import annotations

import adversarial_attention as aa
import numpy as np
import pytest

from attnlib.models import minilm
from book_support.experiments import context_classifier as cc
from book_support.experiments import minilm_probes as mp

RIVER = "The fisherman repaired his net beside the bank."
PASSIVE = "His net was repaired by the fisherman beside the bank."


# ---- one head on many sentences ------------------------------------------------------


@pytest.mark.parametrize("layer, head", [(0, 10), (2, 3)])
def test_head_rows_equal_the_full_forward_pass(layer, head):
    sentences = [RIVER, PASSIVE, "The teller counted the money inside the bank."]
    for (tokens, row), s in zip(
        mp.head_rows(sentences, "bank", layer, head), sentences
    ):
        out = minilm.forward(s)
        assert tokens == out.tokens
        np.testing.assert_allclose(
            row, out.attention[layer, head, out.index("bank")], atol=1e-12, rtol=0
        )


def test_controlled_weights_pick_the_word_in_each_frame():
    frames = [
        "The {} repaired his net beside the bank.",
        "The dog bit the {} beside the bank.",
    ]
    table = mp.controlled_weights(frames, ["fisherman", "farmer"], "bank", 0, 10)
    assert table.shape == (2, 2)
    out = minilm.forward("The dog bit the farmer beside the bank.")
    expected = out.attention[0, 10, out.index("bank"), out.index("farmer")]
    assert table[1, 1] == pytest.approx(expected, abs=1e-12)


def test_controlled_weights_refuse_words_of_several_tokens():
    with pytest.raises(ValueError, match="cash"):
        mp.controlled_weights(["The {} is near the bank."], ["cashier"], "bank", 0, 10)
    with pytest.raises(ValueError, match="exactly one"):
        mp.controlled_weights(["The bank."], ["dog"], "bank", 0, 10)
    with pytest.raises(ValueError, match="not a token"):
        mp.head_rows(["The dog slept."], "bank", 0, 10)
    with pytest.raises(ValueError, match="layer"):
        mp.head_rows([RIVER], "bank", 6, 0)


def test_variance_shares_of_additive_and_pure_tables():
    rows_only = np.array([[1.0, 1.0, 1.0], [3.0, 3.0, 3.0]])
    assert mp.variance_shares(rows_only)["rows"] == pytest.approx(1.0)
    cols_only = rows_only.T
    assert mp.variance_shares(cols_only)["columns"] == pytest.approx(1.0)
    # a hand-worked 2 x 2 table: grand mean 2.5; row means 1.5, 3.5; column means 2, 3
    t = np.array([[1.0, 2.0], [3.0, 4.0]])
    total = sum((x - 2.5) ** 2 for x in t.ravel())  # 5
    shares = mp.variance_shares(t)
    assert shares["rows"] == pytest.approx(2 * (1 + 1) / total)  # 4 / 5
    assert shares["columns"] == pytest.approx(2 * (0.25 + 0.25) / total)  # 1 / 5
    assert shares["rest"] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="no spread"):
        mp.variance_shares(np.ones((2, 2)))


# ---- the attention sink ------------------------------------------------------------


@pytest.fixture(scope="module")
def river():
    return minilm.forward(RIVER)


def test_attention_sink_measures_by_hand(river):
    sink = mp.attention_sink([river])
    assert set(sink) == set(mp.SINK_MEASURES)
    assert all(v.shape == (1, 6) for v in sink.values())
    layer = 2
    assert sink["weight on [CLS]"][0, layer] == pytest.approx(
        river.attention[layer, :, :, 0].mean()
    )
    f = np.linalg.norm(river.transformed[layer], axis=-1)  # (12, L)
    assert sink["||f(x)|| of [CLS]"][0, layer] == pytest.approx(f[:, 0].mean())
    # [CLS]'s share of sum_j ||alpha_ij f(x_j)||, query by query, head by head
    a, fx = river.attention[layer], river.transformed[layer]  # (12, L, L), (12, L, d)
    lengths = a * np.linalg.norm(fx, axis=-1)[:, None, :]  # (12, L, L)
    expected = (lengths[..., 0] / lengths.sum(axis=-1)).mean()
    assert sink["norm share of [CLS]"][0, layer] == pytest.approx(expected)


def test_attention_sink_per_head_by_hand(river):
    sink = mp.attention_sink([river], per_head=True)
    assert all(v.shape == (1, 6, 12) for v in sink.values())
    layer, head = 2, 9
    a = river.attention[layer, head]  # (L, L)
    fx = np.linalg.norm(river.transformed[layer, head], axis=-1)  # (L,)
    L = a.shape[0]
    assert sink["weight on [CLS]"][0, layer, head] == pytest.approx(a[:, 0].mean())
    assert sink["||f(x)|| of [CLS]"][0, layer, head] == pytest.approx(fx[0])
    others = sum(fx[j] for j in range(1, L - 1)) / (L - 2)
    assert sink["||f(x)|| of the other tokens"][0, layer, head] == pytest.approx(others)
    shares = [
        a[i, 0] * fx[0] / sum(a[i, k] * fx[k] for k in range(L)) for i in range(L)
    ]
    assert sink["norm share of [CLS]"][0, layer, head] == pytest.approx(np.mean(shares))
    # averaged over the heads, the per-head measures give the layer's measures
    mean = mp.attention_sink([river])
    for name in mp.SINK_MEASURES:
        np.testing.assert_allclose(sink[name].mean(axis=-1), mean[name], rtol=1e-9)


def test_attention_sink_refuses_head_masked_passes():
    mask = np.ones((6, 12), dtype=bool)
    mask[0, 0] = False
    with pytest.raises(ValueError, match="every head"):
        mp.attention_sink([minilm.forward(RIVER, head_mask=mask)])


# ---- rank correlations ---------------------------------------------------------------


def test_rank_correlation_hand_worked_with_ties():
    # ranks of a: 1, 2.5, 2.5, 4; of b: 1, 2, 3, 4
    ra, rb = np.array([1, 2.5, 2.5, 4]), np.array([1, 2, 3, 4])
    expected = np.corrcoef(ra, rb)[0, 1]
    assert mp.rank_correlation([0.1, 0.5, 0.5, 0.9], [3, 4, 5, 6]) == pytest.approx(
        expected
    )
    assert mp.rank_correlation([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    # invariant under any increasing transformation
    x, y = np.array([0.3, 0.1, 0.7, 0.2, 0.9]), np.array([2.0, 1.0, 5.0, 4.0, 3.0])
    assert mp.rank_correlation(x, y) == pytest.approx(
        mp.rank_correlation(np.exp(x), y**3)
    )
    with pytest.raises(ValueError, match="constant"):
        mp.rank_correlation([1, 1, 1], [1, 2, 3])


def test_bootstrap_rank_correlations_intervals():
    effect = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    perfect = mp.bootstrap_rank_correlations(effect, {"same": effect}, n_boot=300)
    assert perfect["same"] == pytest.approx((1.0, 1.0, 1.0))
    noisy = [2.0, 1.0, 3.0, 6.0, 4.0, 5.0]
    r = mp.bootstrap_rank_correlations(effect, {"a": noisy, "b": noisy}, n_boot=500)
    est, low, high = r["a"]
    assert low <= est <= high
    assert r["a - b"] == pytest.approx((0.0, 0.0, 0.0))  # paired: identical predictors
    assert 0 < r["resamples used"] <= 500
    again = mp.bootstrap_rank_correlations(effect, {"a": noisy, "b": noisy}, n_boot=500)
    assert again == r


def test_count_parameters_by_hand():
    w = minilm.load_weights()
    d, d_ff = 384, 1536
    per_layer = 4 * (d * d + d) + (d * d_ff + d_ff) + (d_ff * d + d) + 4 * d
    assert mp.count_parameters(w.layers[0]) == per_layer == 1_774_464
    embeddings = (minilm.VOCAB_SIZE + minilm.MAX_TOKENS + 2) * d + 2 * d
    assert mp.count_parameters(w) == embeddings + 6 * per_layer


# ---- how strict the adversarial test is ----------------------------------------------


@pytest.fixture(scope="module")
def classifier():
    model = cc.train_context_classifier(seed=0)
    return model, cc.context_datasets(seed=0)[1]


def test_logit_margin_of_the_models_own_row(classifier):
    model, test = classifier
    own = cc.forward(model, test.subset(0))
    n = int(test.lengths[0])
    p = own.probs[0]
    expected = abs(np.log(p[1] / p[0]))
    assert aa.logit_margin(model, test, 0, own.query_weights[0, :n]) == pytest.approx(
        expected, rel=1e-9
    )
    with pytest.raises(ValueError, match="distribution"):
        aa.logit_margin(model, test, 0, np.ones(n))


def test_share_of_random_rows_within(classifier):
    model, test = classifier
    shares = [
        aa.share_of_random_rows_within(model, test, 0, e, samples=500)
        for e in (1e-6, 1e-2, 1.0)
    ]
    assert shares[0] <= shares[1] <= shares[2] == 1.0
    with pytest.raises(ValueError, match="epsilon"):
        aa.share_of_random_rows_within(model, test, 0, 0.0)


def test_search_reproduces_the_model_prediction(classifier):
    model, test = classifier
    found = aa.search_alternative_attention(model, test, 0, epsilon=0.01, steps=20)
    assert found.original_probs == pytest.approx(
        cc.forward(model, test.subset(0)).probs[0]
    )


def test_cosine_by_hand():
    assert mp.cosine([1.0, 0.0], [3.0, 0.0]) == pytest.approx(1.0)
    assert mp.cosine([1.0, 0.0], [0.0, 2.0]) == pytest.approx(0.0)
    assert mp.cosine([1.0, 1.0], [1.0, 0.0]) == pytest.approx(1 / np.sqrt(2))
    with pytest.raises(ValueError, match="zero"):
        mp.cosine([0.0, 0.0], [1.0, 0.0])
