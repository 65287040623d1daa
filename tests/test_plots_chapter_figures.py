"""book_support.figures: the data-flow figure of the query-key-value chapter and the
layer-by-head grids of the interpretability chapter."""

import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from book_support.figures import data_flow_diagram


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _cells(fig):
    return [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]


@pytest.mark.parametrize("n,d,d_k,d_v", [(3, 4, 2, 2), (1, 1, 1, 1), (5, 6, 3, 2)])
def test_every_matrix_is_drawn_with_its_shape(n, d, d_k, d_v):
    tokens = [f"t{i}" for i in range(n)]
    fig = data_flow_diagram(tokens, d=d, d_k=d_k, d_v=d_v)
    assert isinstance(fig, Figure)
    # X (n x d), Q and K (n x d_k), V (n x d_v), scores and weights (n x n), output (n x
    # d_v)
    expected = n * d + 2 * n * d_k + n * d_v + 2 * n * n + n * d_v
    assert len(_cells(fig)) == expected
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert set(tokens) <= texts
    assert {"softmax", "embed", f"({n}, {n})", f"({n}, d={d})"} <= texts


def test_token_text_is_drawn_literally():
    fig = data_flow_diagram(["$x$", "a_b"])
    assert {"$x$", "a_b"} <= {t.get_text() for t in fig.axes[0].texts}


@pytest.mark.parametrize(
    "kwargs,error",
    [
        ({"tokens": "bank"}, TypeError),
        ({"tokens": [1, 2]}, TypeError),
        ({"tokens": []}, ValueError),
        ({"tokens": ["a"] * 9}, ValueError),
        ({"d": 0}, ValueError),
        ({"d_k": 9}, ValueError),
        ({"d_v": 2.0}, TypeError),
        ({"d": True}, TypeError),
    ],
)
def test_bad_input_is_named(kwargs, error):
    with pytest.raises(error):
        data_flow_diagram(**kwargs)


# --- layer_head_grids (the interpretability chapter)
# ---------------------------------------------------------------


def test_layer_head_grids_draws_one_panel_per_array_with_shared_limits():
    import numpy as np

    from book_support.figures import layer_head_grids

    a, b = np.zeros((6, 12)), np.ones((6, 12))
    fig = layer_head_grids(
        [a, b], ["a", "b"], vmin=-1, vmax=2, cmap="viridis", label="x"
    )
    images = [ax.images[0] for ax in fig.axes if ax.images]
    assert len(images) == 2
    assert all(im.get_clim() == (-1, 2) for im in images)
    assert [ax.get_title() for ax in fig.axes if ax.images] == ["a", "b"]


@pytest.mark.parametrize(
    "panels,titles,vmin",
    [
        ([], [], 0),
        ([[[0.0]]], ["a", "b"], 0),
        ([[[0.0]], [[0.0, 1.0]]], ["a", "b"], 0),
        ([[[float("nan")]]], ["a"], 0),
        ([[[0.0]]], ["a"], 1),
    ],
)
def test_layer_head_grids_rejects_bad_input(panels, titles, vmin):
    from book_support.figures import layer_head_grids

    with pytest.raises(ValueError):
        layer_head_grids(panels, titles, vmin=vmin, vmax=1, cmap="viridis", label="x")
