"""Precomputed explorers (the website's, with no kernel): every state, every link, every number.

Expected numbers are computed here with hand formulas, independently of attnlib.
"""
import math
import xml.etree.ElementTree as ET

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

pytest.importorskip("ipywidgets")

from attnlib import explorers as X  # noqa: E402
from attnlib import svg  # noqa: E402
from attnlib.precomputed import Control, PrecomputedExplorer, readout_table  # noqa: E402


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
    controls = [Control.numbers("a", [1, 2, 3], 2), Control("b", (("x", "x"), ("y", "y")), 1,
                                                            kind="dropdown")]
    ex = PrecomputedExplorer(controls, lambda a, b: f"<p>{a}{b}</p>", name="toy")
    assert ex.n_states == 6
    assert ex.state_html(0, 1) == "<div class='explorer-state'><p>1y</p></div>"
    assert ex.state_html(2, 0).endswith("<p>3x</p></div>")
    # level 0: one stack of 3, level 1: three stacks of 2; each linked to its control's index
    assert [len(level) for level in ex.stacks] == [1, 3]
    links = {(l.source[0].description, l.target[0].model_id) for l in ex.links}
    assert links == {("a", ex.stacks[0][0].model_id)} | {("b", s.model_id) for s in ex.stacks[1]}
    assert all(l.source[1] == "index" and l.target[1] == "selected_index" for l in ex.links)
    # the starting positions are shown
    assert ex.view.selected_index == 1 and ex.view.children[1].selected_index == 1
    bundle = ex._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["text/plain"] == ("toy: 6 precomputed states (a: 3 positions, from 1 to 3; "
                                    "b: 2 positions, from x to y)")


def test_readout_escapes_text():
    assert "&lt;b&gt;" in readout_table([("name", "<b>")])


def _parse_svgs(html):
    """Every <svg> of a state parses as XML and has a title (what a screen reader reads)."""
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


def test_drawings_are_valid_svg():
    _parse_svgs(svg.bar_chart([0.2, 0.8], ["a", "b\nc"], title="t"))
    _parse_svgs(svg.bar_chart([[0.2, 0.8], [0.5, 0.5]], ["a", "b"], title="t",
                              series=["h1", "h2"]))
    _parse_svgs(svg.arrows([[1, 0], [0, 0]], ["k", "q"], title="t"))
    _parse_svgs(svg.heatmap(np.eye(3), list("abc"), list("abc"), title="t"))
    _parse_svgs(svg.line_chart([10, 100], {"a": [1, 100], "b": [2, 3]}, title="t",
                               xlabel="n", ylabel="MiB", mark_x=50))


def test_scores_explorer_states_match_hand_softmax():
    ex = X.ScoresExplorer(live_figure=False).precomputed(shift=True)
    rocks, shift = ex.controls
    assert len(rocks.options) >= 9 and len(shift.options) >= 9
    for i, j in [(0, 0), (rocks.default, shift.default), (10, 8)]:
        scores = [2 + shift.values[j], 4 + shift.values[j], rocks.values[i] + shift.values[j]]
        w = hand_softmax(scores)
        html = ex.state_html(i, j)
        assert fmt(w) in html
        assert fmt([w[0] + w[2], 2 * w[1] + w[2]]) in html          # values [1,0], [0,2], [1,1]
        _parse_svgs(html)


def test_query_key_explorer_states():
    ex = X.QueryKeyExplorer(live_figure=False).precomputed()
    direction, length = ex.controls
    assert len(direction.options) >= 9 and len(length.options) >= 9
    assert direction.options[direction.default][1] == 0
    assert length.options[length.default][1] == pytest.approx(math.sqrt(2))
    html = ex.state_html(2, 4)                                         # 45°, length 1
    q = [math.cos(math.pi / 4), math.sin(math.pi / 4)]
    keys = [[2, 0], [1, 1], [0, 1]]
    scores = [(q[0] * k[0] + q[1] * k[1]) / math.sqrt(2) for k in keys]
    assert fmt(hand_softmax(scores)) in html
    assert fmt([1 / 3, 1 / 3, 1 / 3]) in ex.state_html(5, 0)          # length 0: equal weights


def test_scale_explorer_states():
    ex = X.ScaleExplorer(live_figure=False).precomputed()
    d_k, temperature = ex.controls
    raw = [2 * math.sqrt(2), math.sqrt(2), 0.0]
    for i, j in [(d_k.default, temperature.default), (10, 0), (0, 8)]:
        dk, t = d_k.values[i], temperature.values[j]
        assert fmt(hand_softmax([r / math.sqrt(dk) / t for r in raw])) in ex.state_html(i, j)


def test_heads_mask_cost_model_learned_states():
    heads = X.HeadsExplorer(live_figure=False).precomputed()
    assert heads.n_states == 81
    html = heads.state_html(0, 0)                                      # both scores at -3
    assert fmt(hand_softmax([-3, 1, 0])) in html and fmt(hand_softmax([1, -3, 0])) in html
    mask = X.MaskExplorer(live_figure=False).precomputed()
    assert mask.n_states == 9
    allowed = str(list(range(1, 8)))                                   # causal: 1, 2, ..., 7
    assert f"keys allowed per query</th><td><code>{allowed}" in mask.state_html(0, 0)
    cost = X.CostExplorer(live_figure=False).precomputed()
    html = cost.state_html(10, 5)                                      # 131,072 tokens, 16 heads
    assert f"{16 * 131_072 ** 2:,}" in html
    assert f"{16 * 131_072 * 4 / 2**20:,.3f} MiB" in html              # running max, running sum
    assert "256 × 1,024 = 16.000 MiB" in html


def test_model_explorer_states():
    from attnlib import minilm

    ex = X.ModelExplorer(live_figure=False).precomputed()
    sentence, layer, head = ex.controls
    assert len(head.options) == 12 and len(layer.options) == 6 and ex.n_states == 144
    out = minilm.forward(sentence.values[1])
    w = out.attention[2, 0]
    assert f"{np.round(w[:, 0].mean(), 4):.4f}" in ex.state_html(1, 2, 0)


def test_position_explorer_states():
    ex = X.PositionExplorer(live_figure=False).precomputed()
    position, offset, pair = ex.controls
    assert len(position.options) >= 9 and len(offset.options) >= 9
    assert ex.n_states == len(position.options) * len(offset.options) * len(pair.options)
    theta = [10000 ** (-2 * i / 16) for i in range(8)]                 # d = 16
    for a, b, c in [(1, 3, 0), (8, 8, 2), (0, 0, 1)]:
        t, k, i = position.values[a], offset.values[b], pair.values[c]
        html = ex.state_html(a, b, c)
        dot = sum(math.cos(k * th) for th in theta)                    # depends on k only
        assert f"{round(dot, 4) + 0.0:.4f}</code></td></tr><tr><th style='text-align:left;" \
               f"padding-right:1em'>PE(0) · PE(k), the same</th><td><code>" \
               f"{round(dot, 4) + 0.0:.4f}" in html
        assert f"{round(k * theta[i], 4) + 0.0:.4f}" in html
        for x in (math.sin(t * theta[i]), math.cos(t * theta[i]),
                  math.sin((t + k) * theta[i]), math.cos((t + k) * theta[i])):
            assert f"{round(x, 4) + 0.0:.4f}" in html
        _parse_svgs(html)
    assert ex.state_html(1, 3, 0) != ex.state_html(2, 3, 0)             # the drawing moves
    assert ex.state_html(1, 3, 0) != ex.state_html(1, 4, 0)
    assert ex.state_html(1, 3, 0) != ex.state_html(1, 3, 1)


def test_layer_explorer_states():
    from attnlib import minilm

    ex = X.LayerExplorer(live_figure=False).precomputed()
    sentence, layer = ex.controls
    assert ex.n_states == len(sentence.options) * 6
    for a, b in [(0, 0), (1, 5), (3, 2)]:
        out = minilm.forward(sentence.values[a])
        x, y = out.hidden_states[b], out.hidden_states[b + 1]           # (L, 384)
        cos = (x * y).sum(-1) / (np.linalg.norm(x, axis=-1) * np.linalg.norm(y, axis=-1))
        html = ex.state_html(a, b)
        assert f"mean cos(X, Y)</th><td><code>{round(float(cos.mean()), 4) + 0.0:.4f}" in html
        assert " | ".join(out.tokens) in html
        _parse_svgs(html)
    assert ex.state_html(0, 0) != ex.state_html(0, 1) != ex.state_html(1, 1)
