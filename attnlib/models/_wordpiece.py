"""BERT's uncased WordPiece tokenizer in plain Python, as the ``tokenizers`` package
   runs it for all-MiniLM-L6-v2 (its ``tokenizer.json``).

Used by :mod:`attnlib.models.minilm` everywhere (in Jupyter and in the page's Python,
which cannot load the Rust package): one code path, so a sentence gets the same token
ids in both. ``tests/test_wordpiece.py`` checks that the ids equal the package's over
thousands of varied sentences and every single code point.

The steps, for text outside the special tokens (Devlin et al. 2019, section 3, and
the package's ``BertNormalizer``, ``BertPreTokenizer`` and ``WordPiece`` model):

1. the special tokens (``[CLS]``, ``[SEP]``, ``[PAD]``, ``[MASK]``, ``[UNK]``), typed
   exactly, are cut out of the raw text first and become those tokens;
2. clean: NUL, U+FFFD and control/format/private-use characters are dropped, every
   whitespace character becomes a space; a CJK ideograph gets a space on each side;
3. strip accents (NFD, then drop non-spacing marks) and lower-case, character by
   character;
4. split at whitespace (dropped) and around each punctuation character (kept alone);
5. WordPiece: each word is cut greedily into the longest pieces in the vocabulary,
   later pieces written ``##...``; a word with a part no piece matches, or longer than
   100 characters, becomes ``[UNK]``;
6. ``[CLS]`` first, ``[SEP]`` last.

The character classes of steps 2-4 are those of the Rust package, read from it by
``tests/make_wordpiece_tables.py`` into ``_wordpiece_tables`` (Python's ``unicodedata``
has another Unicode version and would disagree on some characters).
"""

from __future__ import annotations

import bisect
import functools
import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from attnlib.models import _wordpiece_tables as _tables

#: The ideograph blocks the package spaces out (its ``is_chinese_char``, ranges as
#: it writes them).
_CJK = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B920, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)


def _membership(ranges):
    """A test ``code point -> bool`` for sorted inclusive ranges (bisect, cached)."""
    ranges = sorted(ranges)
    starts = [a for a, _ in ranges]
    ends = [b for _, b in ranges]

    @functools.lru_cache(maxsize=4096)
    def contains(cp: int) -> bool:
        k = bisect.bisect_right(starts, cp) - 1
        return k >= 0 and cp <= ends[k]

    return contains


_removed = _membership(_tables.REMOVED)
_whitespace = _membership(_tables.WHITESPACE)
_punctuation = _membership(_tables.PUNCTUATION)
_nonspacing_mark = _membership(_tables.NONSPACING_MARK)
_cjk = _membership(_CJK)
_NFD_KEEP = re.compile("([" + "".join(re.escape(chr(cp)) for cp in _tables.NFD) + "])")


@dataclass(frozen=True)
class Encoding:
    """The tokens of one text and their ids (the names of ``tokenizers.Encoding``)."""

    tokens: list
    ids: list


def _nfd(text: str) -> str:
    """NFD as the package computes it (its table where it differs from Python's)."""
    if not _tables.NFD:
        return unicodedata.normalize("NFD", text)
    parts = _NFD_KEEP.split(text)  # odd items: the characters the package treats apart
    return "".join(
        _tables.NFD[ord(p)] if k % 2 else unicodedata.normalize("NFD", p)
        for k, p in enumerate(parts)
    )


def normalize(text: str) -> str:
    """Steps 2-3: clean, space out CJK ideographs, strip accents, lower-case."""
    out = []
    for c in text:
        cp = ord(c)
        if _removed(cp):
            continue
        if _whitespace(cp):
            out.append(" ")
        elif _cjk(cp):
            out.append(f" {c} ")
        else:
            out.append(c)
    text = "".join(c for c in _nfd("".join(out)) if not _nonspacing_mark(ord(c)))
    return "".join(_tables.LOWER.get(ord(c)) or c.lower() for c in text)


def pre_tokenize(text: str) -> list[str]:
    """Step 4: words split at whitespace, each punctuation character a word."""
    words, word = [], []
    for c in text:
        cp = ord(c)
        if _whitespace(cp) or _punctuation(cp):
            if word:
                words.append("".join(word))
                word = []
            if not _whitespace(cp):
                words.append(c)
        else:
            word.append(c)
    if word:
        words.append("".join(word))
    return words


class WordPieceTokenizer:
    """The tokenizer of a BERT-style ``tokenizer.json`` (see the module's steps).

    Build it with :meth:`from_file`. The methods used by the book have the names and
    results of ``tokenizers.Tokenizer``'s: :meth:`encode` (``.tokens``, ``.ids``),
    :meth:`token_to_id`, :meth:`id_to_token`. Never pads or truncates.
    """

    def __init__(
        self,
        vocab: dict,
        special_tokens: tuple,
        *,
        unk_token: str = "[UNK]",
        prefix: str = "##",
        max_input_chars_per_word: int = 100,
        cls_token: str = "[CLS]",
        sep_token: str = "[SEP]",
    ):
        self.vocab = dict(vocab)
        self._tokens = {i: t for t, i in self.vocab.items()}
        self.unk_token, self.prefix = unk_token, prefix
        self.max_input_chars_per_word = max_input_chars_per_word
        self.cls_token, self.sep_token = cls_token, sep_token
        for token in (unk_token, cls_token, sep_token, *special_tokens):
            if token not in self.vocab:
                raise ValueError(f"special token {token!r} is not in the vocabulary")
        longest_first = sorted(special_tokens, key=len, reverse=True)
        self._special = re.compile("|".join(map(re.escape, longest_first)))

    @classmethod
    def from_file(cls, path) -> WordPieceTokenizer:
        """Read a ``tokenizer.json`` of the kind this class implements.

        Raises ``ValueError`` naming the setting if the file asks for anything else
        (another normalizer, pre-tokenizer, model or template).
        """
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        norm, model = doc.get("normalizer") or {}, doc.get("model") or {}
        expected = {
            "normalizer": (
                norm.get("type") == "BertNormalizer"
                and norm.get("clean_text") is True
                and norm.get("handle_chinese_chars") is True
                and norm.get("lowercase") is True
                and norm.get("strip_accents") in (None, True)
            ),
            "pre_tokenizer": (doc.get("pre_tokenizer") or {}).get("type")
            == "BertPreTokenizer",
            "model": model.get("type") == "WordPiece",
            "post_processor": [
                next(iter(step.values()))["id"]
                for step in (doc.get("post_processor") or {}).get("single", [])
            ]
            == ["[CLS]", "A", "[SEP]"],
            "added_tokens": all(
                t.get("special")
                and not (t.get("normalized") or t.get("single_word"))
                and not (t.get("lstrip") or t.get("rstrip"))
                for t in doc.get("added_tokens", [])
            ),
        }
        for setting, ok in expected.items():
            if not ok:
                raise ValueError(
                    f"{path}: its {setting} is not the uncased BERT WordPiece setting "
                    "this tokenizer implements"
                )
        return cls(
            model["vocab"],
            tuple(t["content"] for t in doc.get("added_tokens", [])),
            unk_token=model["unk_token"],
            prefix=model["continuing_subword_prefix"],
            max_input_chars_per_word=model["max_input_chars_per_word"],
        )

    def _word_pieces(self, word: str) -> list[str]:
        """Step 5 on one word: the longest vocabulary piece first, then the next."""
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces, start = [], 0
        while start < len(word):
            for end in range(len(word), start, -1):
                piece = word[start:end] if start == 0 else self.prefix + word[start:end]
                if piece in self.vocab:
                    break
            else:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text``, without ``[CLS]`` and ``[SEP]``."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a str; got {type(text).__name__}")
        if any(0xD800 <= ord(c) <= 0xDFFF for c in text):
            raise ValueError(
                "text holds a lone surrogate (a half of a UTF-16 pair), which is not "
                "a character"
            )
        tokens, at = [], 0
        for match in [*self._special.finditer(text), None]:
            stop = match.start() if match else len(text)
            for word in pre_tokenize(normalize(text[at:stop])):
                tokens += self._word_pieces(word)
            if match:
                tokens.append(match.group())
                at = match.end()
        return tokens

    def encode(self, text: str, add_special_tokens: bool = True) -> Encoding:
        """Tokens and ids of ``text``: ``[CLS] ... [SEP]`` unless
        ``add_special_tokens=False``. Raises ``TypeError`` for a non-str, ``ValueError``
        for a lone surrogate."""
        tokens = self.tokenize(text)
        if add_special_tokens:
            tokens = [self.cls_token, *tokens, self.sep_token]
        return Encoding(tokens=tokens, ids=[self.vocab[t] for t in tokens])

    def token_to_id(self, token: str):
        """The id of ``token``, or ``None`` if it is not in the vocabulary."""
        return self.vocab.get(token)

    def id_to_token(self, id: int):
        """The token of ``id``, or ``None`` if no token has it."""
        return self._tokens.get(int(id))
