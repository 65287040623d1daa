"""A toy language pair with a known word alignment, for training encoder-decoders.

The source language is a bag of English words; the target language is a made-up,
French-like one. Translation is word by word, with one rule of word order borrowed from
French: an adjective follows its noun ("red cat" -> "chat rouge")::

    source:  big dog sees red cat
    target:  chien grand voit chat rouge
    aligned:   1    0     2    4    3       (the source position each target word translates)

Because every target word translates exactly one source word, the correct *alignment* is
known for every sentence, so the attention weights of a trained model can be checked
against it (cf. Bahdanau, Cho & Bengio 2015, section 5.2.1 and Figure 3).

Sentences are random sequences of *chunks*: a noun, an adjective followed by a noun, a
verb, or another word. They mean nothing; what matters is that the model must carry
every word to the output and reorder each adjective-noun pair. Source and target have
the same length, so a decoder is told how many words to write.

Arrays: token ids are int64, ``(B, T)`` for ``B`` sentences of length ``T``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

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
_OTHER_IDS = len(NOUNS) + len(ADJECTIVES) + np.arange(len(VERBS) + len(OTHERS))
#: Chunk kinds and their probabilities: noun, adjective + noun, verb or other word.
_CHUNK_P = (0.3, 0.35, 0.35)


@dataclass(frozen=True)
class TranslationBatch:
    """Sentences of one length ``T`` with their translations.

    source : (B, T) int64 -- source token ids (into :data:`SOURCE_VOCAB`). target : (B,
    T) int64 -- target token ids (into :data:`TARGET_VOCAB`, never ``START``). alignment
    : (B, T) int64 -- ``alignment[b, i]`` is the source position that target word ``i``
    translates.
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
        """``(B, T)`` the words the decoder reads under teacher forcing: ``<s>``, then the
        target shifted right by one."""
        start = np.full((len(self), 1), START, dtype=np.int64)
        return np.concatenate([start, self.target[:, :-1]], axis=1)


def _sentence(rng: np.random.Generator, length: int):
    """One source sentence (list of ids) and its alignment (list of source positions)."""
    source, alignment = [], []
    while len(source) < length:
        kind = rng.choice(3, p=_CHUNK_P)
        pos = len(source)
        if kind == 1 and pos + 2 <= length:  # adjective noun -> noun adjective
            source += [int(rng.choice(_ADJ_IDS)), int(rng.choice(_NOUN_IDS))]
            alignment += [pos + 1, pos]
        elif kind == 0 or kind == 1:  # a noun (also if a pair does not fit)
            source.append(int(rng.choice(_NOUN_IDS)))
            alignment.append(pos)
        else:
            source.append(int(rng.choice(_OTHER_IDS)))
            alignment.append(pos)
    return source, alignment


def make_batch(rng, n: int, length: int) -> TranslationBatch:
    """``n`` random sentences of ``length`` words, translated, with their alignments.

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
    n : int >= 1 -- number of sentences
    length : int >= 1 -- words per sentence (source and target)

    Returns
    -------
    TranslationBatch with arrays of shape ``(n, length)``.

    Raises
    ------
    ValueError
        If ``n`` or ``length`` is smaller than 1.
    """
    if n < 1 or length < 1:
        raise ValueError(
            f"need n >= 1 sentences of length >= 1; got n={n}, length={length}"
        )
    rng = np.random.default_rng(rng)
    source = np.zeros((n, length), dtype=np.int64)
    alignment = np.zeros((n, length), dtype=np.int64)
    for b in range(n):
        source[b], alignment[b] = _sentence(rng, length)
    # word-by-word lexicon: target id == source id of the aligned word
    target = np.take_along_axis(source, alignment, axis=1)
    return TranslationBatch(source, target, alignment)


def translate(words) -> list:
    """The reference translation of a source sentence given as words (strings).

    >>> translate("big dog sees red cat".split())
    ['chien', 'grand', 'voit', 'chat', 'rouge']

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
    out, i = [], 0
    while i < len(ids):
        if ids[i] in _ADJ_IDS and i + 1 < len(ids) and ids[i + 1] in _NOUN_IDS:
            out += [ids[i + 1], ids[i]]
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return [TARGET_VOCAB[t] for t in out]


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
