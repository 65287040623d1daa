"""The source documents' worked examples, as named data.

Chapters and tests read the inputs from here, so the book and its tests share one
source. Only *inputs* live here; every result (scores, weights, outputs) is computed by
attnlib. Every array is read-only, so a chapter cannot change an example for the
chapters after it.

* ``BANK``                    query at "bank" against fisherman / net / bank
                              (article, d_k = 2)
* ``MACHINE_LEARNING_ROCKS``  scores 2, 4, 1 given directly
                              (chapter "How does attention work")
* ``DOT_PRODUCT_Q/K``         q = [1, 2], k = [3, 4]: the dot product 11
* ``RAW_SCORE``, ``RAW_SCORE_D_K``  40 / sqrt(64) = 5
* ``TWO_HEAD_SCORES``         two heads' scores over fisherman / net / bank
* ``FLOOD_TOKENS``, ``SENTENCES``, ``COST_SEQUENCE_LENGTHS``

Sources: /work/shared/seeds "What is attention, and what is it for?" and "How does
attention work" (the book's source documents).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def _frozen(values) -> np.ndarray:
    """A read-only float array (writing to it raises ``ValueError``)."""
    arr = np.array(values, dtype=float)
    arr.setflags(write=False)
    return arr


@dataclass(frozen=True)
class WorkedExample:
    """One query against a few keys, with values to mix.

    ``query``: shape (d_k,); ``keys``: (L, d_k); ``values``: (L, d_v); ``tokens``: L
    labels. ``scores`` is given instead of query/keys when the source states scores
    directly.
    """

    name: str
    tokens: tuple
    values: np.ndarray
    query: np.ndarray | None = None
    keys: np.ndarray | None = None
    scores: np.ndarray | None = None
    d_k: int | None = None


#: "The fisherman repaired his net beside the bank." Query at "bank", d_k = 2.
#: Scores 2, 1, 0; weights 0.6652, 0.2447, 0.0900; output [1.4205, 0.5795].
BANK = WorkedExample(
    name="bank",
    tokens=("fisherman", "net", "bank"),
    query=_frozen([math.sqrt(2.0), 0.0]),
    keys=_frozen([[2.0, 0.0], [1.0, 1.0], [0.0, 1.0]]),
    values=_frozen([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]]),
    d_k=2,
)

#: "The cashier counted the money inside the bank.": the same query at "bank" as in
#: :data:`BANK` (same token, same position, first layer), meeting new neighbours. The
#: keys and values of "cashier" and "money" are invented; "bank" keeps its own key and
#: value.
CASHIER = WorkedExample(
    name="cashier",
    tokens=("cashier", "money", "bank"),
    query=BANK.query,
    keys=_frozen([[0.5, 1.0], [1.5, 0.0], [0.0, 1.0]]),
    values=_frozen([[-1.0, 1.0], [-2.0, 0.0], [1.0, 1.0]]),
    d_k=2,
)

#: Machine / Learning / Rocks: scores given directly. Weights ~[0.114, 0.844, 0.042];
#: output ~[0.156, 1.730].
MACHINE_LEARNING_ROCKS = WorkedExample(
    name="machine-learning-rocks",
    tokens=("Machine", "Learning", "Rocks"),
    scores=_frozen([2.0, 4.0, 1.0]),
    values=_frozen([[1.0, 0.0], [0.0, 2.0], [1.0, 1.0]]),
)

#: Dot product of q = [1, 2] and k = [3, 4] (= 11).
DOT_PRODUCT_Q = _frozen([1.0, 2.0])
DOT_PRODUCT_K = _frozen([3.0, 4.0])

#: A raw score of 40 with d_k = 64 scales to 40 / 8 = 5.
RAW_SCORE = 40.0
RAW_SCORE_D_K = 64

#: Two heads over fisherman / net / bank: the second swaps the first two scores.
TWO_HEAD_SCORES = _frozen([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0]])

#: The causal-mask sentence, one token per word and a separate token for the period.
FLOOD_TOKENS = ("The", "bank", "flooded", "after", "the", "storm", ".")

#: Sentences the documents use.
SENTENCES = {
    "river": "The fisherman repaired his net beside the bank.",
    "money": "The cashier counted the money inside the bank.",
    "flood": "The bank flooded after the storm.",
    "tired": "The animal didn't cross the street because it was too tired.",
    "wide": "The animal didn't cross the street because it was too wide.",
    "rnn": "I love building distributed systems",
    "cat": "The cat sat on the mat.",
    "withdraw": "The bank was crowded because people were waiting to withdraw money.",
}

#: Sequence lengths of the quadratic-cost table (100 -> 10,000 ... 100,000 -> 10^10
#: entries).
COST_SEQUENCE_LENGTHS = (100, 1_000, 10_000, 100_000)
