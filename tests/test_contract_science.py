"""The contract (issue 26) of the functions the science helper added: results in the
documented type, bad input raising the documented error with a message that names the
argument, and extreme finite input giving the right value without NaN, inf or a
warning (RuntimeWarning is an error in this suite).
"""

from __future__ import annotations

import adversarial_attention as aa
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from attnlib.models import minilm
from book_support.experiments import context_classifier as cc
from book_support.experiments import minilm_probes as mp
from book_support.figures.diagrams import pipeline_diagram
from book_support.figures.probes import (
    SINK_CHART_MEASURES,
    sink_chart,
    weight_norm_scatter,
)

RIVER = "The fisherman repaired his net beside the bank."


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_minilm_probes_contract():
    # statistics: documented types, named errors, extreme finite input
    huge = np.array([1e300, -1e300, 5e299, 2e299])
    assert isinstance(mp.rank_correlation(huge, [1, 2, 3, 4]), float)
    assert mp.rank_correlation(huge, huge) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="a and b"):
        mp.rank_correlation([1.0, np.nan, 2.0], [1, 2, 3])
    with pytest.raises(ValueError, match="a and b"):
        mp.rank_correlation([1, 2], [1, 2])
    result = mp.bootstrap_rank_correlations(huge, {"x": huge * 0.5}, n_boot=50)
    assert result["x"] == pytest.approx((1.0, 1.0, 1.0))
    assert isinstance(result["resamples used"], int)
    with pytest.raises(ValueError, match="n_boot"):
        mp.bootstrap_rank_correlations([1, 2, 3], {"x": [1, 2, 3]}, n_boot=0)
    with pytest.raises(ValueError, match="level"):
        mp.bootstrap_rank_correlations([1, 2, 3], {"x": [1, 2, 3]}, level=1.5)
    table = np.array([[1e308, 1e308], [-1e308, -1e308]])
    shares = mp.variance_shares(table)  # would overflow squared without rescaling
    assert shares["rows"] == pytest.approx(1.0)
    assert all(isinstance(v, float) for v in shares.values())
    with pytest.raises(ValueError, match="table"):
        mp.variance_shares([[1.0, np.inf], [0.0, 1.0]])
    assert mp.cosine([1e300, 1e300], [1e300, 0.0]) == pytest.approx(1 / np.sqrt(2))
    assert mp.cosine([1e-300, 0.0], [1e-300, 0.0]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="u and v"):
        mp.cosine([np.nan, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="u and v"):
        mp.cosine([1.0, 2.0], [1.0, 2.0, 3.0])
    assert mp.count_parameters(np.zeros((3, 4))) == 12
    assert mp.count_parameters("not an array") == 0
    # the model probes: float64 rows, named errors
    ((tokens, row),) = mp.head_rows([RIVER], "bank", 0, 10)
    assert row.dtype == np.float64 and row.sum() == pytest.approx(1.0)
    with pytest.raises(TypeError, match="sentences"):
        mp.head_rows(RIVER, "bank", 0, 10)
    table = mp.controlled_weights(["The {} is near the bank."], ["dog"], "bank", 0, 0)
    assert table.dtype == np.float64 and table.shape == (1, 1)
    with pytest.raises(TypeError, match="frames and words"):
        mp.controlled_weights("The {} bank.", ["dog"], "bank", 0, 0)
    sink = mp.attention_sink([minilm.forward("The dog bit the man.")])
    assert all(v.dtype == np.float64 and np.isfinite(v).all() for v in sink.values())
    with pytest.raises(TypeError, match="outputs"):
        mp.attention_sink(minilm.forward("The dog bit the man."))
    with pytest.raises(TypeError, match="outputs"):
        mp.attention_sink(["not an output"])


def test_minilm_embed_contract():
    _, ids = minilm.encode(RIVER)
    x = minilm.embed(ids)
    assert x.dtype == np.float64 and x.shape == (len(ids), minilm.D_MODEL)
    batch = minilm.embed(np.stack([ids, ids]))
    np.testing.assert_array_equal(batch[0], x)
    np.testing.assert_allclose(x, minilm.forward(ids).hidden_states[0], atol=0, rtol=0)
    with pytest.raises(TypeError, match="ids"):
        minilm.embed(np.array([1.5, 2.0]))
    with pytest.raises(ValueError, match="ids"):
        minilm.embed(np.array([minilm.VOCAB_SIZE]))
    with pytest.raises(ValueError, match="ids"):
        minilm.embed(np.zeros(minilm.MAX_TOKENS + 1, dtype=np.int64))


@pytest.fixture(scope="module")
def classifier():
    return cc.train_context_classifier(seed=0), cc.context_datasets(seed=0)[1]


def test_adversarial_margin_contract(classifier):
    model, test = classifier
    n = int(test.lengths[0])
    own = cc.forward(model, test.subset(0)).query_weights[0, :n]
    margin = aa.logit_margin(model, test, 0, own)
    assert isinstance(margin, float) and np.isfinite(margin)
    with pytest.raises(ValueError, match="weights"):
        aa.logit_margin(model, test, 0, np.full(n, np.nan))
    with pytest.raises(ValueError, match="index"):
        aa.logit_margin(model, test, 10**6, own)
    share = aa.share_of_random_rows_within(model, test, 0, 1e300, samples=20)
    assert isinstance(share, float) and share == 1.0
    assert aa.share_of_random_rows_within(model, test, 0, 1e-300, samples=20) == 0.0
    with pytest.raises(ValueError, match="epsilon"):
        aa.share_of_random_rows_within(model, test, 0, -1.0)
    with pytest.raises(ValueError, match="samples"):
        aa.share_of_random_rows_within(model, test, 0, 0.1, samples=0)


def test_figures_probes_contract():
    assert isinstance(pipeline_diagram(), Figure)
    extreme = {
        k: np.full((2, 6), 1e300 if "||" in k else 0.5) for k in SINK_CHART_MEASURES
    }
    fig = sink_chart(extreme)
    assert isinstance(fig, Figure)
    fig.canvas.draw()  # drawn without warnings
    with pytest.raises(KeyError, match="measures"):
        sink_chart({"weight on [CLS]": np.ones((1, 6))})
    out = minilm.forward("The dog bit the man.")
    fig = weight_norm_scatter(out)
    assert isinstance(fig, Figure) and len(fig.axes) == 6
    with pytest.raises(ValueError, match="special"):
        weight_norm_scatter(out, special=99)
