"""The explorers' SVG drawings (book_support.figures.svg) as a reader meets them:
readable in light and dark mode, heat maps that can tell the value of a cell, and a
colour scale."""

from __future__ import annotations

import re

import numpy as np
import pytest

from book_support.figures import svg

TOKENS = ["The", "bank", "flooded"]


def _weights():
    rng = np.random.default_rng(1)
    return rng.dirichlet(np.ones(3), size=3)  # (3, 3), rows sum to 1


def test_text_and_axes_follow_the_page_colour():
    """No text is drawn in a fixed colour: black text vanished on a dark page."""
    drawings = [
        svg.bar_chart([0.2, 0.8], ["a", "b"], title="w"),
        svg.arrows([[1.0, 0.5], [0.0, 1.0]], ["q", "k"], title="v"),
        svg.line_chart(
            [1, 10, 100], {"s": [1, 2, 3]}, title="t", xlabel="n", ylabel="b"
        ),
        svg.heatmap(_weights(), TOKENS, TOKENS, title="weights"),
    ]
    for drawing in drawings:
        root = re.search(r"<svg [^>]*>", drawing).group(0)
        assert "fill='currentColor'" in root, root
        for text in re.findall(r"<text [^>]*>", drawing):
            fill = re.search(r"fill='([^']+)'", text)
            assert fill is None or fill.group(1) == "currentColor", text
        assert "stroke='black'" not in drawing and "#ddd" not in drawing
    # black data (the eighth Okabe-Ito colour) is drawn in the page's text colour too
    black = svg.arrows([[1.0, 0.0]], ["x"], title="t", colors=["#000000"])
    assert "stroke='#000000'" not in black and "stroke='currentColor'" in black


def test_heatmap_carries_its_values_and_grid():
    m = _weights()
    html = svg.heatmap(m, TOKENS, TOKENS, title="weights", cell=20)
    values = re.search(r"data-values='([^']*)'", html).group(1)
    rows = [row.split(",") for row in values.split(";")]
    assert rows == [[f"{x:.2f}" for x in row] for row in m]
    # beyond 15 digits in the exponent form, never an overflow
    huge = svg.heatmap(np.array([[1e308, -1e308]]), ["a"], ["x", "y"], title="t")
    assert "data-values='1.00e+308,-1.00e+308'" in huge
    assert re.search(r"data-rows='The\|bank\|flooded'", html)
    left, top, cell, width = map(
        int, re.search(r"data-grid='([^']*)'", html).group(1).split()
    )
    assert cell == 20 and left > 0 and top > 0
    assert f"viewBox='0 0 {width} " in html
    # one focusable map, named for what the arrow keys do, with a hidden outline to move
    assert html.startswith("<div class='explorer-heatmap' tabindex='0' role='group'")
    assert "the arrow keys read its cells" in html and "class='heatmap-mark'" in html


def test_heatmap_has_a_colour_scale_and_a_mask_its_legend():
    weights = svg.heatmap(_weights(), TOKENS, TOKENS, title="weights")
    assert weights.count("data:image/png;base64,") == 2  # the cells and the scale
    assert all(f">{v}</text>" in weights for v in ("0", "0.5", "1"))
    mask = np.tril(np.ones((3, 3), dtype=bool))
    legend = svg.heatmap(mask, TOKENS, TOKENS, title="may attend")
    assert ">may attend</text>" in legend and ">masked</text>" in legend
    assert re.search(r"data-values='1,0,0;1,1,0;1,1,1'", legend)
    assert "data-kind='mask'" in legend


def test_unlabelled_rows_still_name_the_queries_for_the_page():
    html = svg.heatmap(_weights(), None, TOKENS, title="weights")
    assert re.search(r"data-rows='The\|bank\|flooded'", html)


@pytest.mark.parametrize("size", [(1, 1), (2, 5)])
def test_heatmap_of_any_shape(size):
    m = np.full(size, 0.5)
    html = svg.heatmap(
        m,
        [f"q{i}" for i in range(size[0])],
        [f"k{j}" for j in range(size[1])],
        title="t",
    )
    assert re.search(r"data-values='([^']*)'", html).group(1).count(";") == size[0] - 1


def _cells_image(html):
    """The heat map's cells as the page draws them: the first PNG of the drawing."""
    import base64
    import io

    from PIL import Image

    data = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", html).group(1)
    return Image.open(io.BytesIO(base64.b64decode(data)))


def test_heatmap_in_levels_colours_a_cell_by_the_value_it_reads_out():
    """levels=100: each cell in the colour of its two-decimal value (what the page reads
    out), stored as a palette of the 101 steps, the same palette in every map."""
    from matplotlib import colormaps

    viridis = colormaps["viridis"]
    m = _weights()
    html = svg.heatmap(m, TOKENS, TOKENS, title="weights", levels=100)
    image = _cells_image(html)
    assert image.mode == "P" and image.size == (3, 3)
    shown = re.search(r"data-values='([^']*)'", html).group(1)
    values = np.array([[float(v) for v in row.split(",")] for row in shown.split(";")])
    expected = np.round(viridis(values)[..., :3] * 255).astype(int)  # (3, 3, 3)
    assert np.array_equal(np.asarray(image.convert("RGB")).astype(int), expected)
    assert len(image.getpalette()) == 3 * 101
    other = _cells_image(svg.heatmap(m[::-1], TOKENS, TOKENS, title="w", levels=100))
    assert other.getpalette() == image.getpalette()
    # the default keeps every cell's exact colour
    exact = _cells_image(svg.heatmap(m, TOKENS, TOKENS, title="weights"))
    assert exact.mode == "RGB"
    assert np.array_equal(
        np.asarray(exact).astype(int), np.round(viridis(m)[..., :3] * 255).astype(int)
    )
    # the colour scale, values and text alternative do not change with levels
    plain = svg.heatmap(m, TOKENS, TOKENS, title="weights")
    for pattern in (
        r"data-values='[^']*'",
        r"<title>.*?</title>",
        r"<text[^>]*>[^<]*</text>",
    ):
        assert re.findall(pattern, html) == re.findall(pattern, plain)


def test_heatmap_levels_leaves_a_mask_and_nan_in_exact_colours():
    mask = np.tril(np.ones((3, 3), dtype=bool))
    assert _cells_image(
        svg.heatmap(mask, TOKENS, TOKENS, title="m", levels=4)
    ).mode == ("RGB")
    m = _weights()
    m[0, 0] = np.nan
    assert _cells_image(svg.heatmap(m, TOKENS, TOKENS, title="w", levels=4)).mode == (
        "RGB"
    )
