"""Tests of book_support.figures (issue 3, case 12): every helper returns a Figure and
checks input.

tests/conftest.py selects the Agg backend; every figure is closed after each test.
"""

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure

from book_support.figures import (
    DPI,
    access_map,
    attention_heatmap,
    mixture_bars,
    use_book_style,
)

T, F = True, False


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def image_axes(fig):
    """The axes of a figure that hold an image (the heatmap panels, not the colour
    bar)."""
    return [ax for ax in fig.axes if ax.images]


# --- attention_heatmap
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape,n_panels",
    [
        ((1, 1, 2, 2), 1),
        ((1, 3, 2, 2), 3),
        ((2, 2, 2, 2), 4),
        ((2, 3, 2, 2), 6),
        ((2, 2), 1),
    ],
)
def test_case12_one_panel_per_batch_element_and_head(shape, n_panels):
    fig = attention_heatmap(np.full(shape, 0.25))
    assert isinstance(fig, Figure)
    assert len(image_axes(fig)) == n_panels


@pytest.mark.parametrize(
    "weights",
    [
        np.full((2, 2), 0.5),
        np.array([[0.2, 0.3], [0.25, 0.25]]),
        np.zeros((3, 3)),
        np.ones((1, 2, 2, 2)),
    ],
)
def test_case12_colour_limits_stay_0_1_whatever_the_data(weights):
    fig = attention_heatmap(weights)
    for ax in image_axes(fig):
        assert ax.images[0].get_clim() == (0.0, 1.0)


@pytest.mark.parametrize("shape", [(2, 2, 2), (4,), (1, 1, 1, 2, 2)])
def test_case12_other_ranks_are_refused(shape):
    with pytest.raises(ValueError, match="shape"):
        attention_heatmap(np.full(shape, 0.5))


def test_heatmap_shows_the_weights_and_the_labels():
    w = np.array([[0.1, 0.9], [0.6, 0.4], [1.0, 0.0]])
    fig = attention_heatmap(w, ["a", "b", "c"], ["x", "y"])
    (ax,) = image_axes(fig)
    np.testing.assert_array_equal(ax.images[0].get_array(), w)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x", "y"]


def _colour_bar_label(fig):
    (bar,) = [ax for ax in fig.axes if not ax.images]  # the colour bar's own axes
    return bar.get_ylabel()


def test_heatmap_colour_bar_says_what_the_colours_are():
    w = np.array([[0.3, 0.7]])
    assert _colour_bar_label(attention_heatmap(w)) == "attention weight"
    fig = attention_heatmap(w, colorbar_label="row share of ||α f(x)||")
    assert _colour_bar_label(fig) == "row share of ||α f(x)||"
    # the model explorer's two panels, weights and norm shares, share one colour bar
    from book_support.figures.explorers.minilm import model_figure

    state = {
        "tokens": ["a", "b"],
        "weights": np.eye(2),
        "norm_share": np.eye(2),
        "layer": 0,
        "head": 0,
    }
    label = _colour_bar_label(model_figure(state))
    assert label == "weight (left), norm share (right)"


def test_heatmap_panels_follow_batch_then_head_order():
    w = np.zeros((2, 2, 1, 2))
    w[1, 0] = [[1.0, 0.0]]  # batch 1, head 0 is the third panel
    fig = attention_heatmap(w)
    panels = image_axes(fig)
    np.testing.assert_array_equal(panels[2].images[0].get_array(), [[1.0, 0.0]])
    assert panels[2].get_title() == "batch 1, head 0"


@pytest.mark.parametrize(
    "weights,kwargs,pattern",
    [
        (np.array([[0.5, 1.5]]), {}, r"\[0, 1\]"),
        (np.array([[-0.5, 0.5]]), {}, r"\[0, 1\]"),
        (np.array([[np.nan, 0.5]]), {}, "NaN"),
        (np.full((2, 2), 0.5), {"queries": ["a"]}, "query"),
        (np.full((2, 2), 0.5), {"keys": ["a", "b", "c"]}, "key"),
        (np.full((1, 2, 2, 2), 0.5), {"titles": ["only one"]}, "titles"),
        (np.zeros((0, 1, 2, 2)), {}, "no panel"),
    ],
)
def test_heatmap_bad_input(weights, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        attention_heatmap(weights, **kwargs)


# --- mixture_bars
# --------------------------------------------------------------------------------


def test_mixture_bars_returns_a_figure_with_one_bar_per_key():
    fig = mixture_bars([0.2, 0.5, 0.3], ["a", "b", "c"])
    assert isinstance(fig, Figure)
    heights = [patch.get_height() for patch in fig.axes[0].patches]
    np.testing.assert_allclose(heights, [0.2, 0.5, 0.3])


def test_mixture_bars_groups_several_mixtures():
    fig = mixture_bars(np.array([[0.2, 0.8], [0.5, 0.5]]), ["a", "b"])
    assert len(fig.axes[0].patches) == 4
    assert fig.axes[0].get_legend() is not None


def test_mixture_bars_draws_into_a_given_axis():
    fig, ax = plt.subplots()
    assert mixture_bars([1.0, 0.0], ["a", "b"], ax=ax) is fig


@pytest.mark.parametrize(
    "weights,labels,pattern",
    [
        ([0.5, 0.5], ["a", "b", "c"], "3 labels"),
        (np.full((1, 2, 2), 0.5), ["a", "b"], "labels"),
        ([2.0, -1.0], ["a", "b"], r"\[0, 1\]"),
        ([np.nan, 1.0], ["a", "b"], "NaN"),
    ],
)
def test_mixture_bars_bad_input(weights, labels, pattern):
    with pytest.raises(ValueError, match=pattern):
        mixture_bars(weights, labels)


# --- access_map
# ----------------------------------------------------------------------------------


def test_access_map_returns_a_figure_showing_the_mask():
    mask = np.array([[T, F, F], [T, T, F], [T, T, T]])
    fig = access_map(mask, ["The", "bank", "flooded"])
    assert isinstance(fig, Figure)
    (ax,) = image_axes(fig)
    np.testing.assert_array_equal(ax.images[0].get_array(), mask.astype(float))
    assert [t.get_text() for t in ax.get_xticklabels()] == ["The", "bank", "flooded"]


def test_access_map_with_separate_query_and_key_labels():
    fig = access_map(np.ones((2, 3), dtype=bool), (["q1", "q2"], ["k1", "k2", "k3"]))
    (ax,) = image_axes(fig)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["q1", "q2"]


@pytest.mark.parametrize(
    "mask,tokens,error",
    [
        (np.ones((2, 2)), ["a", "b"], TypeError),
        (np.ones((1, 2, 2), dtype=bool), ["a", "b"], ValueError),
        (np.ones((2, 2), dtype=bool), ["a", "b", "c"], ValueError),
        (np.ones((2, 3), dtype=bool), ["a", "b", "c"], ValueError),
    ],
)
def test_access_map_bad_input(mask, tokens, error):
    with pytest.raises(error):
        access_map(mask, tokens)


def test_book_style_fixes_size_and_dpi():
    with matplotlib.rc_context():
        use_book_style()
        assert plt.rcParams["figure.dpi"] == DPI == plt.rcParams["savefig.dpi"]
        assert tuple(plt.rcParams["figure.figsize"]) == (6.0, 3.5)


def _png_of(fig, **savefig):
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", **savefig)
    return buffer.getvalue()


def _pixels(png):
    import io

    from PIL import Image

    image = Image.open(io.BytesIO(png))
    return image, np.asarray(image.convert("RGBA")).astype(int)


def test_palette_png_looks_the_same_in_at_most_the_colours_asked():
    from book_support.figures import palette_png

    rng = np.random.default_rng(0)
    fig = attention_heatmap(rng.dirichlet(np.ones(6), size=6), list("abcdef"))
    original = _png_of(fig)
    small = palette_png(original)
    image, after = _pixels(small)
    _, before = _pixels(original)
    assert image.mode == "P" and after.shape == before.shape
    assert len(np.unique(after.reshape(-1, 4), axis=0)) <= 256
    # every pixel within a few levels of 255 of the original, in every channel
    assert np.abs(after - before).max() <= 16
    assert len(small) < 0.6 * len(original)
    assert (
        len(np.unique(_pixels(palette_png(original, 8))[1].reshape(-1, 4), axis=0)) <= 8
    )


def test_palette_png_leaves_a_transparent_image_alone():
    from book_support.figures import palette_png

    fig, ax = plt.subplots(figsize=(1, 1))
    ax.plot([0, 1])
    transparent = _png_of(fig, transparent=True)
    assert palette_png(transparent) == transparent


@pytest.mark.parametrize("colours", [1, 257, 2.0, True, "256"])
def test_palette_png_and_book_style_refuse_a_bad_number_of_colours(colours):
    from book_support.figures import palette_png

    fig, ax = plt.subplots(figsize=(1, 1))
    with pytest.raises(ValueError, match="colours"):
        palette_png(_png_of(fig), colours)
    with matplotlib.rc_context(), pytest.raises(ValueError, match="colours"):
        use_book_style(png_colours=colours)


def test_book_style_with_png_colours_shows_figures_as_palette_pngs():
    """In IPython, every figure the notebook shows is stored as a palette PNG."""
    import base64

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        with matplotlib.rc_context():
            use_book_style(png_colours=64)
            fig, ax = plt.subplots()
            ax.imshow(np.arange(16.0).reshape(4, 4))
            data, _ = shell.display_formatter.format(fig)
        image, pixels = _pixels(base64.b64decode(data["image/png"]))
        assert image.mode == "P"
        assert len(np.unique(pixels.reshape(-1, 4), axis=0)) <= 64
    finally:
        formatter.pop(Figure, None)
        InteractiveShell.clear_instance()
