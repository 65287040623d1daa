"""attnlib.plots.data_flow_diagram: the one-head data-flow figure of chapter 3."""
import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle

from attnlib.plots import data_flow_diagram


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
    # X (n x d), Q and K (n x d_k), V (n x d_v), scores and weights (n x n), output (n x d_v)
    expected = n * d + 2 * n * d_k + n * d_v + 2 * n * n + n * d_v
    assert len(_cells(fig)) == expected
    texts = {t.get_text() for t in fig.axes[0].texts}
    assert set(tokens) <= texts
    assert {"softmax", "embed", f"({n}, {n})", f"({n}, d={d})"} <= texts


def test_token_text_is_drawn_literally():
    fig = data_flow_diagram(["$x$", "a_b"])
    assert {"$x$", "a_b"} <= {t.get_text() for t in fig.axes[0].texts}


@pytest.mark.parametrize("kwargs,error", [
    ({"tokens": "bank"}, TypeError), ({"tokens": [1, 2]}, TypeError),
    ({"tokens": []}, ValueError), ({"tokens": ["a"] * 9}, ValueError),
    ({"d": 0}, ValueError), ({"d_k": 9}, ValueError), ({"d_v": 2.0}, TypeError),
    ({"d": True}, TypeError)])
def test_bad_input_is_named(kwargs, error):
    with pytest.raises(error):
        data_flow_diagram(**kwargs)
