"""A synthetic task where context decides: which sense of an ambiguous word is meant?

Each sequence holds one ambiguous word ("bank", "bat" or "spring"), one *clue* word that
settles its sense (for "bank": a river word such as "fisherman", or a money word such as
"withdraw"), one *decoy* (a clue word of a different ambiguous word, pointing to the
other sense number) and neutral filler words, all at random positions. The label is the
sense of the ambiguous word: 0 (river, animal, season) or 1 (money, sport, coil).

A sequence with a decoy contains exactly one clue for sense 0 and one for sense 1, so
counting words cannot solve it: a model must relate the ambiguous word to *its own*
clue, which attention from the ambiguous word's position can do and an average cannot. A
quarter of the sequences (by default) have no decoy; they rule out the shortcut of
attending to the decoy instead of the clue (the decoy alone also gives the label away,
inverted).

The bank sentences of the source documents ("The fisherman repaired his net beside the
bank.", "The bank was crowded because people were waiting to withdraw money.") can be
written with this vocabulary (see :func:`encode_sentences`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core._validation import as_generator, as_real_number, as_width

#: The ambiguous words and the names of their two senses (label 0, label 1).
SENSES = {
    "bank": ("river", "money"),
    "bat": ("animal", "sport"),
    "spring": ("season", "coil"),
}

#: Clue words: CLUES[word][label] settles ``word`` to that sense.
CLUES = {
    "bank": (
        ("fisherman", "net", "river", "shore"),
        ("money", "withdraw", "cashier", "loan"),
    ),
    "bat": (
        ("cave", "wings", "fur", "insects"),
        ("baseball", "pitcher", "swing", "glove"),
    ),
    "spring": (
        ("april", "flowers", "blossom", "warm"),
        ("metal", "coil", "mattress", "bounce"),
    ),
}

#: Neutral words that fill the rest of a sequence (they include the source sentences'
#: words).
FILLERS = (
    "the",
    "was",
    "crowded",
    "because",
    "people",
    "were",
    "waiting",
    "to",
    "repaired",
    "his",
    "beside",
    "a",
    "and",
    "of",
    "in",
    "on",
    "it",
    "with",
    "after",
    "they",
    ".",
)

#: Padding token (index 0); padded positions are masked out of attention.
PAD = "<pad>"

AMBIGUOUS = tuple(SENSES)
VOCAB = (
    (PAD,)
    + AMBIGUOUS
    + tuple(w for word in AMBIGUOUS for sense in CLUES[word] for w in sense)
    + FILLERS
)
TOKEN_ID = {w: i for i, w in enumerate(VOCAB)}


@dataclass(frozen=True)
class ContextBatch:
    """A batch of padded sequences of the context task.

    Attributes
    ----------
    tokens : int64 array, shape (B, L) -- token ids into :data:`VOCAB`; 0 is padding.
    lengths : int64 array, shape (B,) -- number of real tokens of each sequence.
    query_index : int64 array, shape (B,) -- position of the ambiguous word (the
        classifier reads the attention output at this position).
    labels : int64 array, shape (B,) -- the sense, 0 or 1 (-1 when unknown).
    clue_index, decoy_index : int64 arrays, shape (B,) -- positions of the deciding clue
        and of the decoy (-1 when there is none, or the sequence was written by hand).
    """

    tokens: np.ndarray
    lengths: np.ndarray
    query_index: np.ndarray
    labels: np.ndarray
    clue_index: np.ndarray
    decoy_index: np.ndarray

    def __len__(self) -> int:
        return int(self.tokens.shape[0])

    def key_mask(self) -> np.ndarray:
        """Boolean key-padding mask, shape (B, 1, L): ``True`` where a real token
        sits."""
        positions = np.arange(self.tokens.shape[1])
        return (positions[None, :] < self.lengths[:, None])[:, None, :]

    def words(self, i: int) -> list:
        """The words of sequence ``i`` (without padding)."""
        return [VOCAB[t] for t in self.tokens[i, : self.lengths[i]]]

    def subset(self, index) -> ContextBatch:
        """The sequences selected by ``index`` (an int, slice or array of ints)."""
        index = np.atleast_1d(np.arange(len(self))[index])
        return ContextBatch(
            *(
                getattr(self, f)[index]
                for f in (
                    "tokens",
                    "lengths",
                    "query_index",
                    "labels",
                    "clue_index",
                    "decoy_index",
                )
            )
        )


def make_context_task(
    n: int, rng, *, min_len: int = 6, max_len: int = 12, decoy_rate: float = 0.75
) -> ContextBatch:
    """Draw ``n`` sequences of the context task.

    Each sequence: a length uniform in ``[min_len, max_len]``; one ambiguous word and
    its clue (sense = the label, uniform 0/1); with probability ``decoy_rate`` also a
    decoy (a clue of another ambiguous word, for the *other* sense number); these at
    distinct random positions, fillers elsewhere (drawn uniformly with replacement).
    Padding to ``max_len`` at the right.

    Parameters
    ----------
    n : int, number of sequences (>= 1)
    rng : numpy.random.Generator (or an int seed)
    min_len, max_len : int, 3 <= min_len <= max_len
    decoy_rate : float in [0, 1], the probability that a sequence holds a decoy

    Returns
    -------
    ContextBatch

    Raises
    ------
    ValueError
        If ``n < 1``, the lengths or ``decoy_rate`` are out of range (the values are
        named).
    TypeError
        If ``n`` or a length is not an integer, or ``decoy_rate`` is not a real number
        (each named).
    """
    decoy_rate = as_real_number(decoy_rate, "decoy_rate")
    if not 0.0 <= decoy_rate <= 1.0:
        raise ValueError(f"decoy_rate must lie in [0, 1]; got {decoy_rate}")
    n = as_width(n, "n")
    min_len, max_len = as_width(min_len, "min_len"), as_width(max_len, "max_len")
    if not 3 <= min_len <= max_len:
        raise ValueError(
            f"need 3 <= min_len <= max_len; got min_len={min_len}, max_len={max_len}"
        )
    rng = as_generator(rng)
    tokens = np.zeros((n, max_len), dtype=np.int64)
    lengths = rng.integers(min_len, max_len + 1, size=n)
    query_index = np.zeros(n, dtype=np.int64)
    clue_index = np.zeros(n, dtype=np.int64)
    decoy_index = np.zeros(n, dtype=np.int64)
    labels = rng.integers(0, 2, size=n)
    has_decoy = rng.random(n) < decoy_rate
    for i in range(n):
        length = int(lengths[i])
        word = AMBIGUOUS[rng.integers(len(AMBIGUOUS))]
        other = [w for w in AMBIGUOUS if w != word][rng.integers(len(AMBIGUOUS) - 1)]
        clue = CLUES[word][labels[i]][rng.integers(len(CLUES[word][labels[i]]))]
        decoy_words = CLUES[other][1 - labels[i]]
        decoy = decoy_words[rng.integers(len(decoy_words))]
        row = [FILLERS[j] for j in rng.integers(len(FILLERS), size=length)]
        spots = rng.permutation(length)[:3]
        row[spots[0]], row[spots[1]] = word, clue
        if has_decoy[i]:
            row[spots[2]] = decoy
        tokens[i, :length] = [TOKEN_ID[w] for w in row]
        query_index[i], clue_index[i] = spots[:2]
        decoy_index[i] = spots[2] if has_decoy[i] else -1
    return ContextBatch(
        tokens,
        lengths.astype(np.int64),
        query_index,
        labels.astype(np.int64),
        clue_index,
        decoy_index,
    )


def encode_sentences(
    sentences, labels=None, *, max_len: int | None = None
) -> ContextBatch:
    """Turn hand-written sentences into a batch (one ambiguous word per sentence).

    Words are lower-cased and a final "." is split off as its own token.

    Parameters
    ----------
    sentences : sequence of str, each containing exactly one of :data:`AMBIGUOUS`
    labels : sequence of int, optional (default -1, unknown)
    max_len : int, optional, the padded length (default: the longest sentence)

    Returns
    -------
    ContextBatch (``clue_index`` and ``decoy_index`` are -1)

    Raises
    ------
    ValueError
        If a word is not in :data:`VOCAB` (the word is named), a sentence does not
        contain exactly one ambiguous word, or ``max_len`` is below 1 or shorter than a
        sentence.
    TypeError
        If ``sentences`` is one str (give a list of sentences) or holds a non-str, or
        ``max_len`` is not an integer.
    """
    if isinstance(sentences, str) or not all(isinstance(s, str) for s in sentences):
        raise TypeError("sentences must be a list of str, one sentence each")
    if max_len is not None:
        max_len = as_width(max_len, "max_len")  # 0 or 2.5 refused, never "no limit"
    rows = []
    for s in sentences:
        text = s.lower().strip()
        words = text[:-1].split() + ["."] if text.endswith(".") else text.split()
        unknown = [w for w in words if w not in TOKEN_ID]
        if unknown:
            raise ValueError(
                f"words not in the task's vocabulary: {unknown} (in {s!r})"
            )
        amb = [j for j, w in enumerate(words) if w in SENSES]
        if len(amb) != 1:
            raise ValueError(
                f"a sentence needs exactly one ambiguous word {AMBIGUOUS}; {s!r} "
                f"has {len(amb)}"
            )
        rows.append((words, amb[0]))
    n = len(rows)
    width = max(len(w) for w, _ in rows) if max_len is None else max_len
    tokens = np.zeros((n, width), dtype=np.int64)
    for i, (words, _) in enumerate(rows):
        if len(words) > width:
            raise ValueError(
                f"sentence {i} has {len(words)} tokens, more than max_len={width}"
            )
        tokens[i, : len(words)] = [TOKEN_ID[w] for w in words]
    lab = (
        np.full(n, -1, dtype=np.int64)
        if labels is None
        else np.asarray(labels, dtype=np.int64)
    )
    return ContextBatch(
        tokens,
        np.array([len(w) for w, _ in rows], dtype=np.int64),
        np.array([a for _, a in rows], dtype=np.int64),
        lab,
        np.full(n, -1, dtype=np.int64),
        np.full(n, -1, dtype=np.int64),
    )
