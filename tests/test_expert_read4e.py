"""Expert read 4e's definite errors in chapter 11b (interventions), held by tests.

1. the alt text of fig-interp-alternative gives the bars' values;
2. the unchanged fisherman sentence's similarity to the cashier's *bank* is printed, so
   the "no closer to either" comparison rests on shown numbers;
3. the self-check question on the two rank correlations is right for the right reason
   (the paired interval of the difference, not two overlapping intervals);
4. the logit margin "comes back below", in the same section, not in "the next section".

And two suggestions taken: the per-token margins behind the alternative of the first
test sequence (recomputed here from the values and the readout), and the within-layer
rank correlations of the head-removal grid.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import numpy as np
import pytest

from attnlib.models import adversarial_attention as aa
from attnlib.models import context_classifier as cc

ROOT = Path(__file__).resolve().parents[1]
NB = nbformat.read(ROOT / "chapters" / "11b_interventions.ipynb", as_version=4)
CELLS = {c.id: c for c in NB.cells}


def _output(cell_id: str) -> str:
    out = []
    for o in CELLS[cell_id].get("outputs", []):
        text = o.get("text", "") or o.get("data", {}).get("text/plain", "")
        out.append("".join(text))
    return "".join(out)


def _prose() -> str:
    text = "\n".join(c.source for c in NB.cells if c.cell_type == "markdown")
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def first_sequence():
    model = cc.train_context_classifier(seed=0)
    test_batch = cc.context_datasets(seed=0)[1]
    alt = aa.search_alternative_attention(model, test_batch, 0, epsilon=0.01)
    return model, test_batch, alt


# ---- 1. the alternative's alt text ---------------------------------------------------


def test_alternative_alt_text_gives_the_bars_values(first_sequence):
    _, batch, alt = first_sequence
    words = alt.words
    alt_text = CELLS["59ddcc0f"].metadata["mystnb"]["image"]["alt"]
    clue = words[int(batch.clue_index[0])]
    own = alt.original_weights[words.index(clue)]
    spring, on = alt.weights[words.index("spring")], alt.weights[words.index("on")]
    assert f"about {own:.2f} on the clue {clue}" in alt_text
    assert f"about {spring:.2f} on spring and {on:.2f} on on" in alt_text
    assert alt.weights[words.index(clue)] < 0.01 and "almost nothing on" in alt_text


# ---- 2. the unchanged sentence's similarities are printed ----------------------------


def test_unchanged_sentence_is_a_row_of_the_confound_table():
    from attnlib.models import minilm, minilm_probes

    def final_bank(sentence):
        out = minilm.forward(sentence)
        return out.hidden_states[-1, out.index("bank")]

    river = final_bank("The fisherman repaired his net beside the bank.")
    cashier = final_bank("The cashier counted the money inside the bank.")
    teller = final_bank("The teller counted the money inside the bank.")
    before = (
        minilm_probes.cosine(river, cashier),
        minilm_probes.cosine(river, teller),
    )
    table = _output("swap-confound")
    row = re.search(r"unchanged sentence\s+8\s*\n", table)
    assert row, table
    rows = re.findall(r"^(\d)\s+([\d.]+)\s+([\d.]+)\s*$", table, re.M)
    first = next(r for r in rows if r[0] == "0")
    assert (float(first[1]), float(first[2])) == tuple(round(x, 3) for x in before)
    shifted = next(r for r in rows if r[0] == "3")
    assert float(shifted[1]) < before[0] and float(shifted[2]) < before[1]
    assert "'old' inserted (shift + adjective)" in table
    prose = _prose()
    assert (
        f"{shifted[1]} and {shifted[2]}, against {first[1]} and {first[2]} for the "
        "unchanged sentence" in prose
    )
    assert "(position only)" not in table + prose


# ---- 3. the quiz's right answer names the paired interval ----------------------------


def test_rank_correlation_question_rests_on_the_paired_interval():
    printed = _output("f8c5bdf1")
    low, high = re.search(
        r"weight - norm share:\s+[-\d.]+ \(95% bootstrap interval ([-\d.]+) to "
        r"([-\d.]+)\)",
        printed,
    ).groups()
    assert float(low) < 0 < float(high)
    script = next(
        "".join(o["data"]["application/javascript"])
        for o in CELLS["quiz-11b"].outputs
        if "application/javascript" in o.get("data", {})
    )
    questions = json.loads(re.search(r"(\[\{\"question\".*\}\])", script).group(1))
    question = next(q for q in questions if "rank the words' effects" in q["question"])
    right = [a for a in question["answers"] if a.get("correct")]
    assert len(right) == 1
    answer = right[0]["answer"]
    assert f"interval of their difference ({low} to {high}) spans zero" in answer
    assert "overlap widely" not in json.dumps(question)


# ---- 4. the logit margin comes back in the same section ------------------------------


def test_logit_margin_comes_back_below_not_in_the_next_section():
    ids = [c.id for c in NB.cells]
    start, back = ids.index("interv-exact-md"), ids.index("interv-strict-md")
    between = [NB.cells[k] for k in range(start, back + 1)]
    assert "we come back to it below" in CELLS["interv-exact-md"].source
    assert "the next section comes back" not in _prose()
    assert "*logit margin*" in CELLS["interv-strict-md"].source
    assert not any(
        re.search(r"^#+ ", c.source, re.M) for c in between if c.cell_type == "markdown"
    )


# ---- suggestion: how the adversary wins ----------------------------------------------


def test_token_margins_add_up_to_the_alternatives_margin(first_sequence):
    model, batch, alt = first_sequence
    n = len(alt.words)
    values = cc.forward(model, batch.subset(0)).V[0, :n]  # (n, d_v)
    logits = values @ model.W_out + model.b_out  # (n, 2): all weight on one token
    win = int(batch.labels[0])  # the model is right on every test sequence
    s = logits[:, win] - logits[:, 1 - win]  # (n,)
    assert np.isclose(alt.weights @ s, aa.logit_margin(model, batch, 0, alt.weights))
    printed = _output("interv-token-margins")
    for word, margin in zip(alt.words, s):
        assert re.search(rf"^{word}\s+{margin:.3f}\s", printed, re.M), word
    assert f"margin of the alternative's row: {alt.weights @ s:.2f}" in printed
    on, spring = alt.words.index("on"), alt.words.index("spring")
    assert round(s[on]) == 13 and round(s[spring], 1) == 1.5  # the prose's numbers
    assert alt.original_weights[on] < 0.05 and alt.weights[on] > 0.25
    assert "whose margin of 1.5 is too small on its own" in _prose()
    assert "a margin of 13 for the right sense" in _prose()


def test_within_layer_correlations_are_printed_for_every_layer():
    printed = _output("6fde1765")
    layers = re.findall(
        r"^\s+(\d): ([\d.]+), ([\d.]+); ([ -]\d\.\d\d) \(95% bootstrap interval "
        r"([ -]\d\.\d\d) to ([-\d.]+)\)",
        printed,
        re.M,
    )
    assert [int(r[0]) for r in layers] == list(range(6))
    est = [float(r[3]) for r in layers]
    low = [float(r[4]) for r in layers]
    clue = [float(r[1]) for r in layers]
    effect = [float(r[2]) for r in layers]
    # the prose: layers 0 and 5 lead in both; five positive, layer 1 near zero;
    # intervals include zero in all but the last two layers
    assert set(np.argsort(clue)[-2:]) == {0, 5} == set(np.argsort(effect)[-2:])
    assert sum(e > 0 for e in est) == 5 and abs(est[1]) < 0.1
    assert [lo < 0 for lo in low] == [True] * 4 + [False] * 2
