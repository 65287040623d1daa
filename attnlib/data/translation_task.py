"""A toy language pair with a known word alignment, for training encoder-decoders.

The source language is a bag of English words; the target language is a made-up,
French-like one. Translation is word by word, with two rules of word order:

1. an adjective follows its noun, as in French ("red cat" -> "chat rouge");
2. the verb goes to the end of the sentence, as in a German subordinate clause or in
   Japanese ("... dass der Hund die Katze sieht")::

    source:  big dog sees red cat
    target:  chien grand chat rouge voit
    aligned:   1    0     4    3    2     (the source word each target word translates)

Because every target word translates exactly one source word, the correct *alignment* is
known for every sentence, so the attention weights of a trained model can be checked
against it (cf. Bahdanau, Cho & Bengio 2015, section 5.2.1 and Figure 3).

Why two rules: under the first alone every word moves by at most one place, and a
bidirectional encoder's state at a word already describes its neighbours, so a decoder
can translate the swapped pairs without its attention ever leaving the diagonal. The
verb's move to the end can be of any length, up to the whole sentence, so reading it
needs a jump.

Sentences hold exactly one verb, never as the last word (so that it always moves), and
random *chunks* on either side of it: a noun, an adjective followed by a noun, or one of
a few small words. They mean nothing; what matters is that the model must carry every
word to the output and reorder it. Source and target have the same length, so a decoder
is told how many words to write.

Arrays: token ids are int64, ``(B, T)`` for ``B`` sentences of length ``T``.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from attnlib.core._validation import as_generator, as_width

#: The lexicon, by word class: (source word, target word).
NOUNS = (
    ("cat", "chat"),
    ("dog", "chien"),
    ("house", "maison"),
    ("car", "voiture"),
    ("tree", "arbre"),
    ("book", "livre"),
    ("bird", "oiseau"),
    ("apple", "pomme"),
    ("river", "fleuve"),
    ("city", "ville"),
)
ADJECTIVES = (
    ("red", "rouge"),
    ("big", "grand"),
    ("small", "petit"),
    ("green", "vert"),
    ("old", "vieux"),
    ("new", "neuf"),
)
VERBS = (
    ("sees", "voit"),
    ("likes", "aime"),
    ("eats", "mange"),
    ("finds", "trouve"),
    ("has", "a"),
)
OTHERS = (("and", "et"), ("with", "avec"), ("not", "pas"), ("very", "tres"))

_LEXICON = NOUNS + ADJECTIVES + VERBS + OTHERS
#: Source vocabulary (token id = index).
SOURCE_VOCAB = tuple(s for s, _ in _LEXICON)
#: Target vocabulary; word ``i`` translates ``SOURCE_VOCAB[i]``. The last id is the
#: start symbol ``<s>`` that the decoder reads before its first word.
TARGET_VOCAB = tuple(t for _, t in _LEXICON) + ("<s>",)
#: Id of the start symbol in the target vocabulary.
START = len(TARGET_VOCAB) - 1

_NOUN_IDS = np.arange(len(NOUNS))
_ADJ_IDS = len(NOUNS) + np.arange(len(ADJECTIVES))
_VERB_IDS = len(NOUNS) + len(ADJECTIVES) + np.arange(len(VERBS))
_OTHER_IDS = len(NOUNS) + len(ADJECTIVES) + len(VERBS) + np.arange(len(OTHERS))
#: Chunk kinds and their probabilities: noun, adjective + noun, small word.
_CHUNK_P = (0.3, 0.4, 0.3)

#: Codes of :meth:`TranslationBatch.kinds`, and what they mean.
KEPT, NEAR, VERB = 0, 1, 2
KIND_NAMES = (
    "kept in place",
    "moved one or two places",
    "the verb, moved to the end",
)


@dataclass(frozen=True)
class TranslationBatch:
    """Sentences of one length ``T`` with their translations.

    source : (B, T) int64 -- source token ids (into :data:`SOURCE_VOCAB`).
    target : (B, T) int64 -- target token ids (into :data:`TARGET_VOCAB`, never
    ``START``).
    alignment : (B, T) int64 -- ``alignment[b, i]`` is the source position that target
    word ``i`` translates.
    """

    source: np.ndarray
    target: np.ndarray
    alignment: np.ndarray

    def __len__(self) -> int:
        return self.source.shape[0]

    @property
    def length(self) -> int:
        """The sentence length ``T`` (source and target alike)."""
        return self.source.shape[1]

    def decoder_inputs(self) -> np.ndarray:
        """``(B, T)`` the words the decoder reads under teacher forcing: ``<s>``, then
        the target shifted right by one."""
        start = np.full((len(self), 1), START, dtype=np.int64)
        return np.concatenate([start, self.target[:, :-1]], axis=1)

    def kinds(self) -> np.ndarray:
        """``(B, T)`` int64: how far each target word moved from its source position.

        :data:`VERB` for the verb (whatever the distance), :data:`KEPT` for a word that
        translates the source word at its own position, :data:`NEAR` for the others
        (the words of an adjective-noun pair and those after the verb, which move one
        or two places). Names in :data:`KIND_NAMES`.
        """
        positions = np.arange(self.length)
        kinds = np.where(self.alignment == positions, KEPT, NEAR)
        return np.where(np.isin(self.target, _VERB_IDS), VERB, kinds)


def _chunks(rng: np.random.Generator, length: int, offset: int):
    """Random chunks filling ``length`` source positions from ``offset`` on: their ids
    and their alignment (source positions in target order, adjective after noun)."""
    source, alignment = [], []
    while len(source) < length:
        kind = _draw_kind(rng)
        pos = offset + len(source)
        if kind == 1 and len(source) + 2 <= length:  # adjective noun -> noun adjective
            source += [_draw(rng, _ADJ_IDS), _draw(rng, _NOUN_IDS)]
            alignment += [pos + 1, pos]
        elif kind == 0 or kind == 1:  # a noun (also if a pair does not fit)
            source.append(_draw(rng, _NOUN_IDS))
            alignment.append(pos)
        else:
            source.append(_draw(rng, _OTHER_IDS))
            alignment.append(pos)
    return source, alignment


def _sentence(rng: np.random.Generator, length: int):
    """One source sentence (list of ids) and its alignment (source positions)."""
    verb_at = int(rng.integers(0, length - 1))  # never the last word: the verb moves
    before, first = _chunks(rng, verb_at, 0)
    after, second = _chunks(rng, length - 1 - verb_at, verb_at + 1)
    source = before + [_draw(rng, _VERB_IDS)] + after
    return source, first + second + [verb_at]


# The draws of ``rng.choice(3, p=_CHUNK_P)`` and ``rng.choice(ids)``, written out: the
# same random numbers and the same results (tests/test_translation_task.py compares
# them), without ``choice``'s checks of its arguments on every word, which took about
# half of ``make train``'s time.
_CHUNK_CDF = np.cumsum(_CHUNK_P)
_CHUNK_CDF = (_CHUNK_CDF / _CHUNK_CDF[-1]).tolist()  # as Generator.choice builds it


def _draw_kind(rng: np.random.Generator) -> int:
    """A chunk kind (0, 1 or 2) with the probabilities ``_CHUNK_P``."""
    return bisect.bisect_right(_CHUNK_CDF, rng.random())


def _draw(rng: np.random.Generator, ids: np.ndarray) -> int:
    """One of ``ids``, uniformly."""
    return int(ids[rng.integers(0, len(ids))])


def make_batch(rng, n: int, length: int) -> TranslationBatch:
    """``n`` random sentences of ``length`` words, translated, with their alignments.

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
    n : int >= 1 -- number of sentences
    length : int >= 2 -- words per sentence (source and target; one is the verb)

    Returns
    -------
    TranslationBatch with arrays of shape ``(n, length)``.

    Raises
    ------
    ValueError
        If ``n`` is smaller than 1 or ``length`` smaller than 2.
    TypeError
        If ``n`` or ``length`` is not an integer (2.5 and ``True`` included).
    """
    n, length = as_width(n, "n"), as_width(length, "length")
    if length < 2:
        raise ValueError(
            f"need n >= 1 sentences of length >= 2 (a verb and a word after it); "
            f"got n={n}, length={length}"
        )
    rng = as_generator(rng)
    source = np.zeros((n, length), dtype=np.int64)
    alignment = np.zeros((n, length), dtype=np.int64)
    for b in range(n):
        source[b], alignment[b] = _sentence(rng, length)
    # word-by-word lexicon: target id == source id of the aligned word
    target = np.take_along_axis(source, alignment, axis=1)
    return TranslationBatch(source, target, alignment)


def translate(words) -> list:
    """The reference translation of a source sentence given as words (strings).

    Every adjective directly followed by a noun is put after it; every verb goes to the
    end of the sentence, verbs keeping their order.

    >>> translate("big dog sees red cat".split())
    ['chien', 'grand', 'chat', 'rouge', 'voit']

    Raises
    ------
    ValueError
        If a word is not in :data:`SOURCE_VOCAB`.
    """
    ids = []
    for w in words:
        if w not in SOURCE_VOCAB:
            raise ValueError(f"{w!r} is not in the source vocabulary {SOURCE_VOCAB}")
        ids.append(SOURCE_VOCAB.index(w))
    out, verbs, i = [], [], 0
    while i < len(ids):
        if ids[i] in _ADJ_IDS and i + 1 < len(ids) and ids[i + 1] in _NOUN_IDS:
            out += [ids[i + 1], ids[i]]
            i += 2
        else:
            (verbs if ids[i] in _VERB_IDS else out).append(ids[i])
            i += 1
    return [TARGET_VOCAB[t] for t in out + verbs]


def source_words(ids) -> list:
    """Source token ids -> words.

    Raises TypeError if ``ids`` are not integers, ValueError if one lies outside
    :data:`SOURCE_VOCAB` (a negative id would otherwise count from the end).
    """
    return [SOURCE_VOCAB[i] for i in _token_ids(ids, len(SOURCE_VOCAB))]


def target_words(ids) -> list:
    """Target token ids -> words (errors as for :func:`source_words`)."""
    return [TARGET_VOCAB[i] for i in _token_ids(ids, len(TARGET_VOCAB))]


def _token_ids(ids, size: int) -> list:
    a = np.asarray(ids)
    if a.dtype.kind not in "iu" and a.size:
        raise TypeError(f"ids must be integer token ids; got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() >= size):
        raise ValueError(
            f"ids must lie in 0..{size - 1}; got values from {a.min()} to {a.max()}"
        )
    return [int(i) for i in a.reshape(-1)]
