"""Expert read 6e's definite errors in chapter 11b (interventions), held by tests.

1. that an alternative attention row exists is automatic for any epsilon > 0 (the
   model's own row passes with room to spare), so the chapter says so once and no
   longer presents "12 of 12" or "an alternative for every sequence" as a finding;
2. the solution of ex-interp-design reads only the change of the cosine with the river
   reference between the masked and the unmasked cashier sentence.

And suggestions taken: the earlier search's history is no longer told, and Wiegreffe &
Pinter's seed yardstick (the JSD between two trained models' rows) is printed.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from test_expert_read4e import CELLS, NB, _output, _prose  # the notebook, read once

from attnlib.models import adversarial_attention as aa
from attnlib.models import context_classifier as cc


def _outputs() -> str:
    return "".join(_output(c.id) for c in NB.cells if c.cell_type == "code")


@pytest.fixture(scope="module")
def seed0():
    return cc.train_context_classifier(seed=0), cc.context_datasets(seed=0)[1]


# ---- 1. existence is automatic -------------------------------------------------------


@pytest.mark.parametrize("epsilon", [0.01, 1e-6, 1e-9])
def test_rows_near_the_models_own_always_pass(seed0, epsilon):
    model, batch = seed0
    for index in range(12):
        one = batch.subset(index)
        n = int(one.lengths[0])
        f = cc.forward(model, one)
        own, p0 = f.query_weights[0, :n], f.probs[0]
        lose = int(np.argmin(p0))
        near = 0.999 * own + 0.001 * np.eye(n)[int(np.argmin(own))]  # not own itself
        w = np.zeros(one.tokens.shape)
        w[0, :n] = near
        moved = abs(aa.predict_with_attention(model, one, w)[0, lose] - p0[lose])
        # shrink towards own until it passes: a few halvings always suffice
        for _ in range(60):
            if moved <= epsilon:
                break
            near = 0.5 * (near + own)
            w[0, :n] = near
            moved = abs(aa.predict_with_attention(model, one, w)[0, lose] - p0[lose])
        assert moved <= epsilon and aa.jensen_shannon(near, own) > 0


def test_existence_is_said_once_and_never_presented_as_a_finding():
    prose, printed = _prose(), _outputs()
    assert "is guaranteed in advance" in prose and "for any $\\epsilon > 0$" in prose
    assert "That some alternative exists is automatic for any" in prose
    for phrase in (
        "do not disappear",
        "still has an alternative",
        "but remain",
        "an alternative for every sequence",
        "every sequence has an alternative",
        "not the only ones that would do, by a margin",
    ):
        assert phrase not in prose, phrase
    for phrase in ("alternatives exist for", "alternatives found: 12", "found 12 of"):
        assert phrase not in printed, phrase
    assert "found" not in _output("16afc323").splitlines()[3]  # no "found" column
    # the informative quantity is printed instead: the distance, median and smallest
    assert re.search(r"median 0\.\d\d, smallest 0\.\d\d", _output("16afc323"))
    assert "median 0.29, smallest 0.12" in _output("interv-exact-all")


# ---- 2. the design exercise's solution is self-consistent ----------------------------


def test_design_solution_reads_only_the_change_of_the_cosine():
    from attnlib.models import minilm

    solution = re.sub(r"\s+", " ", CELLS["interv-exercises"].source)
    assert "Keep every comparison within the cashier sentence" not in solution
    assert "Read only that change, not the cosine itself" in solution
    assert "(8, not 9)" in solution and "removes the position difference" in solution
    tok = minilm.load_tokenizer()

    def bank_at(sentence):
        return tok.encode(sentence).tokens.index("bank")

    cashier = "The cashier counted the money inside the bank."
    fisherman = "The fisherman repaired his net beside the bank."
    assert bank_at(cashier) == 9 and bank_at(fisherman) == 8
    masked = cashier.replace("money", "[MASK]")
    assert bank_at(masked) == 9  # masking keeps the position: the offset is shared
    assert bank_at(fisherman.replace("The ", "The old ")) == 9


# ---- suggestions ---------------------------------------------------------------------


def test_the_earlier_search_is_no_longer_a_story():
    prose = _prose()
    assert "A first version of the search" not in prose
    assert "nor did it from its three random starts" not in prose
    assert "logit margin -18.1" in _output("interv-exact")


def test_seed_yardstick_is_computed_and_printed(seed0):
    model, batch = seed0
    printed = _output("interv-exact-seeds")
    own = cc.forward(model, batch).query_weights  # (B, L)
    for seed, said in ((1, "0.03"), (2, "0.02")):
        other = cc.forward(cc.train_context_classifier(seed=seed), batch).query_weights
        m = 0.5 * (own + other)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = [
                np.where(a > 0, a * np.log(a / m), 0.0).sum(axis=1)
                for a in (own, other)
            ]
        between = 0.5 * (kl[0] + kl[1])  # (B,)
        line = f"JSD between the rows of seeds 0 and {seed} on seed 0's test sequences"
        assert f"{line}: median {np.median(between):.2f}" in printed
        assert f"{np.median(between):.2f}" == said
        assert f"by {said}" in _prose() or f"JSD of {said}" in _prose()
