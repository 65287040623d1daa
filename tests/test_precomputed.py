"""Precomputed explorers (the website's, with no kernel): every state, every link, every
   number.

Expected numbers are computed here with hand formulas, independently of attnlib.
"""

import math
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

pytest.importorskip("ipywidgets")

import cost_explorer
import masks_explorer
import order_and_position_explorer
import query_key_value_explorer

from book_support.figures import explorers as X  # noqa: E402
from book_support.figures import svg  # noqa: E402
from book_support.figures.precomputed import Control, PrecomputedExplorer, readout_table  # noqa: E402


def hand_softmax(s):
    e = [math.exp(x - max(s)) for x in s]
    return [x / sum(e) for x in e]


def fmt(xs):
    return "[" + ", ".join(f"{x:.4f}" for x in xs) + "]"


def test_control_checks_its_options():
    c = Control.numbers("length", [0, 0.5, 1.0], 0.5, fmt="{:.1f}")
    assert c.default == 1 and c.options[2] == ("1.0", 1.0)
    with pytest.raises(ValueError, match="not one of the values"):
        Control.numbers("length", [0, 1], 0.5)
    with pytest.raises(ValueError, match="kind"):
        Control("x", (("a", 1),), kind="knob")
    with pytest.raises(ValueError, match="no options"):
        Control("x", ())


def test_every_combination_is_a_state_and_every_stack_is_linked():
    controls = [
        Control.numbers("a", [1, 2, 3], 2),
        Control("b", (("x", "x"), ("y", "y")), 1, kind="dropdown"),
    ]
    ex = PrecomputedExplorer(controls, lambda a, b: f"<p>{a}{b}</p>", name="toy")
    assert ex.n_states == 6
    assert ex.state_html(0, 1) == "<div class='explorer-state'><p>1y</p></div>"
    assert ex.state_html(2, 0).endswith("<p>3x</p></div>")
    # level 0: one stack of 3, level 1: three stacks of 2; each linked to its control's
    # index
    assert [len(level) for level in ex.stacks] == [1, 3]
    links = {(l.source[0].description, l.target[0].model_id) for l in ex.links}
    assert links == {("a", ex.stacks[0][0].model_id)} | {
        ("b", s.model_id) for s in ex.stacks[1]
    }
    assert all(
        l.source[1] == "index" and l.target[1] == "selected_index" for l in ex.links
    )
    # the starting positions are shown
    assert ex.view.selected_index == 1 and ex.view.children[1].selected_index == 1
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == (
        "toy: 6 precomputed states (a: 3 positions, from 1 to 3; "
        "b: 2 positions, from x to y)"
    )


def test_a_list_control_is_a_native_list_box_that_the_arrow_keys_move():
    """Named choices are a <select> list box (ipywidgets.Select) showing every option,
    not radio buttons, whose inputs share no name (the arrow keys would not move
    them)."""
    import ipywidgets

    control = Control(
        "mask", (("causal", 0), ("bidirectional", 1), ("padding", 2)), 1, kind="list"
    )
    ex = PrecomputedExplorer([control], lambda kind: f"<p>{kind}</p>", name="toy")
    widget = ex.control_widgets[0]
    assert isinstance(widget, ipywidgets.Select) and widget.rows == 3
    assert widget.index == 1 and widget.description == "mask"
    assert not any(isinstance(w, ipywidgets.RadioButtons) for w in ex.control_widgets)


def test_readout_escapes_text():
    assert "&lt;b&gt;" in readout_table([("name", "<b>")])


def _parse_svgs(html):
    """Every <svg> of a state parses as XML and has a title (what a screen reader
    reads)."""
    found = 0
    start = 0
    while (i := html.find("<svg", start)) >= 0:
        j = html.index("</svg>", i) + len("</svg>")
        root = ET.fromstring(html[i:j])
        assert root.get("role") == "img"
        assert root.find("{http://www.w3.org/2000/svg}title").text
        found += 1
        start = j
    assert found
    return found


def _titles(html):
    """The text alternatives (``<title>``) of the drawings in ``html``, in order."""
    titles, start = [], 0
    while (i := html.find("<svg", start)) >= 0:
        j = html.index("</svg>", i) + len("</svg>")
        root = ET.fromstring(html[i:j])
        titles.append(root.find("{http://www.w3.org/2000/svg}title").text)
        start = j
    return titles


def two(x):
    return f"{x + 0.0:.2f}"


def test_text_alternatives_state_what_is_drawn_and_its_numbers():
    assert _titles(
        svg.bar_chart(
            [0.7, 0.2, 0.1], ["fisherman\nscore 2", "net", "bank"], title="weights"
        )
    ) == ["Bar chart, weights: fisherman (score 2) 0.70, net 0.20, bank 0.10."]
    assert _titles(
        svg.bar_chart(
            [[0.5, 0.5], [0.25, 0.75]],
            ["a", "b"],
            title="heads",
            series=["head 1", "head 2"],
        )
    ) == [
        (
            "Bar chart, heads, 2 bars per label: head 1: a 0.50, b 0.50; head "
            "2: a 0.25, b 0.75."
        )
    ]
    assert _titles(
        svg.arrows([[1, 0], [-0.5, 2]], ["key", "query"], title="q and k")
    ) == [
        "Arrows from the origin, q and k: key to (1.00, 0.00); query to (-0.50, 2.00)."
    ]
    mask = np.tril(np.ones((3, 3), dtype=bool))
    assert _titles(svg.heatmap(mask, list("abc"), list("abc"), title="may attend")) == [
        "Heat map, may attend, 3 queries (rows) by 3 keys (columns: a, "
        "b, c); the keys each "
        "query may attend: a: 1 key (a); b: 2 keys (a, b); c: all 3 keys."
    ]
    weights = np.array([[1.0, 0, 0], [0.25, 0.75, 0], [0.5, 0.3, 0.2]])
    assert _titles(svg.heatmap(weights, None, list("abc"), title="weights")) == [
        "Heat map, weights, 3 queries (rows) by 3 keys (columns: a, b, "
        "c); each query's "
        "largest values (at most 3): a: a 1.00; b: b 0.75, a 0.25; c: "
        "a 0.50, b 0.30, c 0.20."
    ]
    # a line's value at the marked x: interpolated on log-log axes (exact for a power
    # law), or the exact value given
    title = _titles(
        svg.line_chart(
            [10, 1000],
            {"n^2": [100, 1e6]},
            title="memory",
            xlabel="n",
            ylabel="MiB",
            mark_x=100,
        )
    )[0]
    assert title == (
        "Line chart on log-log axes, memory: MiB against n from 10 to 1,000; a "
        "dashed line marks n = 100; n^2: 100 MiB at 10, 10,000 MiB at 100, "
        "1,000,000 MiB at 1,000."
    )
    title = _titles(
        svg.line_chart(
            [10, 1000],
            {"n^2": [100, 1e6]},
            title="memory",
            xlabel="n",
            ylabel="MiB",
            mark_x=100,
            marked={"n^2": 12.5},
        )
    )[0]
    assert "12.5 MiB at 100" in title
    assert _titles(
        svg.bar_chart([1, 2], ["a", "b"], title="t", alt="Given alt text here.")
    ) == ["Given alt text here."]


def test_explorer_states_have_text_alternatives_with_their_numbers():
    """Each state's drawings say what they show with the state's numbers, computed by
    hand."""
    ex = X.ScoresExplorer(live_figure=False).precomputed(vary=[2], shift=True)
    rocks, shift = ex.controls
    i, j = 10, 2  # Rocks scores 8, every score - 2
    scores = [
        2 + shift.values[j],
        4 + shift.values[j],
        rocks.values[i] + shift.values[j],
    ]
    w = hand_softmax(scores)
    bars, output = _titles(ex.state_html(i, j))
    assert bars == (
        "Bar chart, attention weights: "
        + ", ".join(
            f"{t} (score {s:g}) {two(x)}"
            for t, s, x in zip(("Machine", "Learning", "Rocks"), scores, w)
        )
        + "."
    )
    assert output == (
        f"Bar chart, output = weighted sum of values: out[0] {two(w[0] + w[2])}, "
        f"out[1] {two(2 * w[1] + w[2])}."
    )

    qk = query_key_value_explorer.QueryKeyExplorer(live_figure=False).precomputed()
    keys_title, values_title = _titles(qk.state_html(4, 6))  # 90°, length 2: q = (0, 2)
    w = hand_softmax([0.0, 2 / math.sqrt(2), 2 / math.sqrt(2)])
    assert "query to (0.00, 2.00)" in keys_title
    assert all(f"(w={two(x)})" in keys_title for x in w)
    assert f"output to ({two(2 * w[0] + w[2])}, {two(2 * w[1] + w[2])})" in values_title

    mask = masks_explorer.MaskExplorer(live_figure=False).precomputed()
    access, weights = _titles(mask.state_html(0, 1))  # causal, the cat sentence
    assert "sat: 3 keys (The, cat, sat)" in access and ".: all 7 keys" in access
    assert weights.startswith("Heat map, weights (random scores), 7 queries")
    assert "The: The 1.00" in weights  # the first query sees itself
    access = _titles(mask.state_html(2, 1))[0]  # padding
    assert "mat: 7 keys (The, cat, sat, on, the, mat, .)" in access
    assert access.endswith("[PAD]: no key; [PAD]: no key.")

    cost = cost_explorer.CostExplorer(live_figure=False).precomputed()
    title = _titles(cost.state_html(3, 2))[0]  # n = 1,024, 4 heads
    assert "a dashed line marks sequence length n = 1,024" in title
    assert f"{4 * 1024 * 1024 * 4 / 2**20:.4g} MiB at 1,024" in title  # 16 MiB
    tile = (4 * 256 * 1024 * 4 + 2 * 4 * 1024 * 4) / 2**20  # one tile + max and sum
    assert f"{tile:.4g} MiB at 1,024" in title

    position = order_and_position_explorer.PositionExplorer(
        live_figure=False
    ).precomputed()
    title = _titles(position.state_html(2, 4, 1))[0]  # t = 10, k = 5, pair 1
    theta = 10000 ** (-2 / 16)
    assert (
        f"PE(t = 10), pair 1 to ({two(math.sin(10 * theta))}, "
        f"{two(math.cos(10 * theta))})"
    ) in title
    assert (
        f"PE(t + k = 15), pair 1 to ({two(math.sin(15 * theta))}, "
        f"{two(math.cos(15 * theta))})"
    ) in title


def test_drawings_are_valid_svg():
    _parse_svgs(svg.bar_chart([0.2, 0.8], ["a", "b\nc"], title="t"))
    _parse_svgs(
        svg.bar_chart(
            [[0.2, 0.8], [0.5, 0.5]], ["a", "b"], title="t", series=["h1", "h2"]
        )
    )
    _parse_svgs(svg.arrows([[1, 0], [0, 0]], ["k", "q"], title="t"))
    _parse_svgs(svg.heatmap(np.eye(3), list("abc"), list("abc"), title="t"))
    _parse_svgs(
        svg.line_chart(
            [10, 100],
            {"a": [1, 100], "b": [2, 3]},
            title="t",
            xlabel="n",
            ylabel="MiB",
            mark_x=50,
        )
    )


def test_scores_explorer_states_match_hand_softmax():
    ex = X.ScoresExplorer(live_figure=False).precomputed(shift=True)
    rocks, shift = ex.controls
    assert len(rocks.options) >= 9 and len(shift.options) >= 9
    for i, j in [(0, 0), (rocks.default, shift.default), (10, 8)]:
        scores = [
            2 + shift.values[j],
            4 + shift.values[j],
            rocks.values[i] + shift.values[j],
        ]
        w = hand_softmax(scores)
        html = ex.state_html(i, j)
        assert fmt(w) in html
        assert fmt([w[0] + w[2], 2 * w[1] + w[2]]) in html  # values [1,0], [0,2], [1,1]
        _parse_svgs(html)


def test_query_key_explorer_states():
    ex = query_key_value_explorer.QueryKeyExplorer(live_figure=False).precomputed()
    direction, length = ex.controls
    assert len(direction.options) >= 9 and len(length.options) >= 9
    assert direction.options[direction.default][1] == 0
    assert length.options[length.default][1] == pytest.approx(math.sqrt(2))
    html = ex.state_html(2, 4)  # 45°, length 1
    q = [math.cos(math.pi / 4), math.sin(math.pi / 4)]
    keys = [[2, 0], [1, 1], [0, 1]]
    scores = [(q[0] * k[0] + q[1] * k[1]) / math.sqrt(2) for k in keys]
    assert fmt(hand_softmax(scores)) in html
    assert fmt([1 / 3, 1 / 3, 1 / 3]) in ex.state_html(5, 0)  # length 0: equal weights


def test_scale_explorer_states():
    ex = X.ScaleExplorer(live_figure=False).precomputed()
    d_k, temperature = ex.controls
    raw = [2 * math.sqrt(2), math.sqrt(2), 0.0]
    for i, j in [(d_k.default, temperature.default), (10, 0), (0, 8)]:
        dk, t = d_k.values[i], temperature.values[j]
        assert fmt(hand_softmax([r / math.sqrt(dk) / t for r in raw])) in ex.state_html(
            i, j
        )


def test_heads_mask_cost_model_learned_states():
    heads = X.HeadsExplorer(live_figure=False).precomputed()
    assert heads.n_states == 81
    html = heads.state_html(0, 0)  # both scores at -3
    assert (
        fmt(hand_softmax([-3, 1, 0])) in html and fmt(hand_softmax([1, -3, 0])) in html
    )
    mask = masks_explorer.MaskExplorer(live_figure=False).precomputed()
    assert mask.n_states == 9
    allowed = str(list(range(1, 8)))  # causal: 1, 2, ..., 7
    assert f"keys allowed per query</th><td><code>{allowed}" in mask.state_html(0, 0)
    cost = cost_explorer.CostExplorer(live_figure=False).precomputed()
    html = cost.state_html(10, 5)  # 131,072 tokens, 16 heads
    assert f"{16 * 131_072**2:,}" in html
    assert f"{16 * 131_072 * 4 / 2**20:,.3f} MiB" in html  # running max, running sum
    assert "256 × 1,024 = 16.000 MiB" in html


def test_model_explorer_states():
    from attnlib.models import minilm

    ex = X.ModelExplorer(live_figure=False).precomputed()
    sentence, layer, head = ex.controls
    assert len(head.options) == 12 and len(layer.options) == 6 and ex.n_states == 144
    out = minilm.forward(sentence.values[1])
    w = out.attention[2, 0]
    assert f"{np.round(w[:, 0].mean(), 4):.4f}" in ex.state_html(1, 2, 0)


def test_position_explorer_states():
    ex = order_and_position_explorer.PositionExplorer(live_figure=False).precomputed()
    position, offset, pair = ex.controls
    assert len(position.options) >= 9 and len(offset.options) >= 9
    assert ex.n_states == len(position.options) * len(offset.options) * len(
        pair.options
    )
    theta = [10000 ** (-2 * i / 16) for i in range(8)]  # d = 16
    for a, b, c in [(1, 3, 0), (8, 8, 2), (0, 0, 1)]:
        t, k, i = position.values[a], offset.values[b], pair.values[c]
        html = ex.state_html(a, b, c)
        dot = sum(math.cos(k * th) for th in theta)  # depends on k only
        assert (
            f"{round(dot, 4) + 0.0:.4f}</code></td></tr><tr><th>"
            f"PE(0) · PE(k), the same</th><td><code>"
            f"{round(dot, 4) + 0.0:.4f}" in html
        )
        assert f"{round(k * theta[i], 4) + 0.0:.4f}" in html
        for x in (
            math.sin(t * theta[i]),
            math.cos(t * theta[i]),
            math.sin((t + k) * theta[i]),
            math.cos((t + k) * theta[i]),
        ):
            assert f"{round(x, 4) + 0.0:.4f}" in html
        _parse_svgs(html)
    assert ex.state_html(1, 3, 0) != ex.state_html(2, 3, 0)  # the drawing moves
    assert ex.state_html(1, 3, 0) != ex.state_html(1, 4, 0)
    assert ex.state_html(1, 3, 0) != ex.state_html(1, 3, 1)


def test_layer_explorer_states():
    from attnlib.models import minilm

    ex = X.LayerExplorer(live_figure=False).precomputed()
    sentence, layer = ex.controls
    assert ex.n_states == len(sentence.options) * 6
    for a, b in [(0, 0), (1, 5), (3, 2)]:
        out = minilm.forward(sentence.values[a])
        x, y = out.hidden_states[b], out.hidden_states[b + 1]  # (L, 384)
        cos = (x * y).sum(-1) / (
            np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1)
        )
        html = ex.state_html(a, b)
        assert (
            f"mean cos(X, Y)</th><td><code>{round(float(cos.mean()), 4) + 0.0:.4f}"
            in html
        )
        assert " | ".join(out.tokens) in html
        _parse_svgs(html)
    assert ex.state_html(0, 0) != ex.state_html(0, 1) != ex.state_html(1, 1)
