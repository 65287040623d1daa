"""The text the book's language model learns from: the book's own prose, character by
character.

The corpus is the prose of the chapters (the Markdown cells of their notebooks, in the
order of their file names when it was frozen), which the repository may ship under its
own licence. It was extracted once by :func:`extract_prose` and frozen in
``attnlib/data/book_prose.txt``, so the stored model keeps matching its training text
while the chapters are edited. The extraction keeps running text and drops what is not
prose: code, display formulas, tables, directive lines and link targets; roles such as
``{doc}`` or ``{cite:t}`` become words; the few non-ASCII characters become ASCII.

The tokenizer is the simplest one there is: every distinct character of the corpus is
one token (:class:`CharTokenizer`), so the vocabulary is small (about 80 symbols), no
word is ever unknown, and a model must learn spelling as well as words.

The split into training and validation text is by blocks: the corpus is cut into
consecutive pieces of ``piece`` characters and every ``every``-th piece is held out, so
both splits sample the whole book and no validation window overlaps a training one.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlib.core._validation import as_generator, as_width

__all__ = [
    "CORPUS_PATH",
    "CharTokenizer",
    "Split",
    "extract_prose",
    "load_corpus",
    "split_pieces",
    "random_windows",
    "evaluation_windows",
]

#: The frozen corpus (written once by :func:`extract_prose`).
CORPUS_PATH = Path(__file__).with_name("book_prose.txt")

_ASCII = {"\u2212": "-", "\u00d7": "x", "\u2248": "~", "\u03c0": "pi", "\u00b7": "."}
_ASCII |= {"\u2013": "-", "\u2014": "-", "\u2019": "'", "\u2018": "'", "\u00b0": " deg"}
_ASCII |= {"\u201c": '"', "\u201d": '"', "\u2192": "->", "\u2026": "...", "\u03b5": "e"}


def _doc_name(target: str) -> str:
    """A ``{doc}`` target as the corpus spells it (the chapters' file names when the
    corpus was frozen): ``09_cost`` -> "chapter 9"; other documents by their name."""
    match = re.match(r"0*(\d+[a-z]?)_", target)
    return f"chapter {match.group(1)}" if match else target.replace("_", " ")


def _cite_name(key: str) -> str:
    """``vaswani2017`` -> "Vaswani (2017)"; ``wang2020minilm`` -> "Wang (2020)"."""
    match = re.match(r"([a-z]+)(\d{4})", key)
    return f"{match.group(1).capitalize()} ({match.group(2)})" if match else key


_TEX = {"le": "<=", "leq": "<=", "ge": ">=", "geq": ">=", "cdot": "*", "times": "x"}
_TEX |= {"approx": "~", "dots": "...", "ldots": "...", "to": "->", "top": "T"}


def _formula(tex: str) -> str:
    """An inline formula as plain characters: ``\\le`` -> ``<=``, ``\\sqrt{d_k}`` ->
    ``sqrt d_k``; spacing commands and braces are dropped."""
    tex = re.sub(r"\\[,;:!]", "", tex)
    tex = re.sub(r"\\(operatorname|mathrm|text|mathbf|mathcal|tfrac|frac)", "", tex)
    tex = re.sub(r"\\([A-Za-z]+)", lambda m: _TEX.get(m.group(1), m.group(1)), tex)
    return re.sub(r"[{}\\]", "", tex)


def _inline(text: str) -> str:
    """Roles, links, inline code and inline formulas of one paragraph as plain text."""
    text = re.sub(r"\{cite:p\}`[^`]*`", "", text)
    text = re.sub(
        r"\{cite:t\}`([^`]*)`",
        lambda m: " and ".join(_cite_name(k.strip()) for k in m.group(1).split(",")),
        text,
    )
    text = re.sub(r"\{doc\}`([^`]*)`", lambda m: _doc_name(m.group(1)), text)
    text = re.sub(r"\{term\}`([^`<]*?)\s*(<[^`]*>)?`", r"\1", text)
    text = re.sub(r"\{ref\}`([^`<]*?)\s*(<[^`]*>)?`", r"\1", text)
    text = re.sub(r"\{numref\}`[^`]*`", "the figure", text)
    text = re.sub(r"\{[a-z:]+\}`([^`]*)`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # [text](target) -> text
    text = text.replace("`", "")
    text = re.sub(r"\$([^$]*)\$", lambda m: _formula(m.group(1)), text)
    text = text.replace("**", "").replace("*", "")
    text = "".join(_ASCII.get(c, c) for c in text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    return re.sub(r"\s+", " ", text).strip()


def _paragraphs(markdown: str):
    """The prose paragraphs of one Markdown cell (code, maths and tables dropped)."""
    fence = None
    paragraph: list[str] = []
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence is not None:  # inside a code or a display-maths block
            if stripped.startswith(fence):
                fence = None
            continue
        if stripped.startswith("```python") or stripped == "```":
            fence = "```"
            continue
        if stripped.startswith("$$"):
            if not (len(stripped) > 2 and stripped.endswith("$$")):
                fence = "$$"
            continue
        skip = stripped.startswith(("```", ":::", ":", "|", "<", "!["))
        if not stripped or skip:
            if paragraph:
                yield " ".join(paragraph)
                paragraph = []
            continue
        paragraph.append(re.sub(r"^(#+|[-*]|\d+\.)\s+", "", stripped))
    if paragraph:
        yield " ".join(paragraph)


def extract_prose(notebooks) -> str:
    """The running text of the chapter notebooks ``notebooks``, one paragraph a line.

    Parameters
    ----------
    notebooks : a sequence of paths of ``*.ipynb`` chapters (their Markdown cells are
        read in that order; code cells and outputs are ignored)

    Returns
    -------
    str, ASCII only, paragraphs separated by ``"\\n"``; paragraphs shorter than 40
    characters (captions, labels) are dropped.

    Raises
    ------
    ValueError if ``notebooks`` is empty; FileNotFoundError if a notebook is missing.
    """
    notebooks = [Path(p) for p in notebooks]
    if not notebooks:
        raise ValueError("notebooks is empty: give the chapters' notebook paths")
    out = []
    for path in notebooks:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in cells:
            if cell["cell_type"] == "markdown":
                for p in _paragraphs("".join(cell["source"])):
                    text = _inline(p)
                    if len(text) >= 40:
                        out.append(text)
    return "\n".join(out) + "\n"


def load_corpus(path=CORPUS_PATH) -> str:
    """The frozen corpus as one string (ASCII, paragraphs separated by newlines)."""
    return Path(path).read_text(encoding="ascii")


@dataclass(frozen=True)
class CharTokenizer:
    """One token per character: ``chars[i]`` is token ``i``.

    Attributes
    ----------
    chars : str, the vocabulary, sorted, without repeats

    ``encode`` raises ``ValueError`` naming a character that is not in the vocabulary;
    ``decode`` raises ``ValueError`` for an id outside ``0 .. len(chars) - 1``.
    """

    chars: str

    def __post_init__(self):
        if len(set(self.chars)) != len(self.chars) or not self.chars:
            raise ValueError("chars must be a non-empty string without repeats")

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        """The tokenizer whose vocabulary is every character of ``text``."""
        return cls("".join(sorted(set(text))))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> np.ndarray:
        """``text`` as an int64 array of token ids, shape (len(text),)."""
        index = {c: i for i, c in enumerate(self.chars)}
        unknown = sorted(set(text) - set(index))
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {unknown!r}")
        return np.array([index[c] for c in text], dtype=np.int64)

    def decode(self, ids) -> str:
        """Token ids (any integer array_like) back to text."""
        ids = np.asarray(ids, dtype=np.int64).ravel()
        if ids.size and (ids.min() < 0 or ids.max() >= len(self.chars)):
            raise ValueError(
                f"token ids must lie in 0 .. {len(self.chars) - 1}; "
                f"got {ids.min()} .. {ids.max()}"
            )
        return "".join(self.chars[i] for i in ids)


@dataclass(frozen=True)
class Split:
    """Training and validation pieces of one token stream.

    Attributes
    ----------
    train : int64 array, shape (n_train_pieces, piece)
    validation : int64 array, shape (n_validation_pieces, piece)
    """

    train: np.ndarray
    validation: np.ndarray


def _integer_ids(ids, name: str) -> np.ndarray:
    """``ids`` as an int64 array; ``TypeError`` naming ``name`` unless integers,
    ``ValueError`` for a negative id."""
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integer token ids; got dtype {ids.dtype}")
    if ids.size and ids.min() < 0:
        raise ValueError(f"{name} must be token ids >= 0; got {ids.min()}")
    return ids.astype(np.int64)


def _windowed(pieces, context: int) -> np.ndarray:
    """``pieces`` (n, piece) int ids, each long enough for a window of ``context + 1``
    tokens."""
    pieces = _integer_ids(pieces, "pieces")
    if pieces.ndim != 2 or pieces.shape[0] < 1:
        raise ValueError(
            f"pieces must have shape (n, piece), n >= 1; got {pieces.shape}"
        )
    if pieces.shape[1] < context + 1:
        raise ValueError(
            f"context={context} needs pieces of at least {context + 1} tokens; they "
            f"have {pieces.shape[1]}"
        )
    return pieces


def split_pieces(ids, *, piece: int = 2000, every: int = 10) -> Split:
    """Cut ``ids`` into pieces of ``piece`` tokens and hold out every ``every``-th.

    Pieces ``every - 1, 2 * every - 1, ...`` go to validation, the others to training;
    a last piece shorter than ``piece`` is dropped.

    Raises
    ------
    TypeError for ids that are not integers or sizes that are not; ValueError if fewer
    than ``every`` whole pieces fit or a size is below 1.
    """
    piece, every = as_width(piece, "piece"), as_width(every, "every")
    ids = _integer_ids(ids, "ids")
    n = ids.size // piece
    if n < every:
        raise ValueError(f"{ids.size} tokens give {n} pieces of {piece}; need {every}")
    pieces = ids[: n * piece].reshape(n, piece)  # (n, piece)
    held = (np.arange(n) % every) == every - 1
    return Split(train=pieces[~held], validation=pieces[held])


def random_windows(pieces, rng, batch: int, context: int):
    """``batch`` random windows of ``context + 1`` tokens, each inside one piece.

    Returns ``(inputs, targets)``, int64 arrays of shape (batch, context): the targets
    are the inputs shifted by one (the next token at every position). ``rng`` is a
    Generator or a seed. Raises TypeError or ValueError naming a size that is not an
    integer >= 1, or ``context`` when a piece holds no window of ``context + 1``.
    """
    rng, batch = as_generator(rng), as_width(batch, "batch")
    pieces = _windowed(pieces, as_width(context, "context"))
    rows = rng.integers(0, pieces.shape[0], size=batch)
    starts = rng.integers(0, pieces.shape[1] - context, size=batch)
    idx = starts[:, None] + np.arange(context + 1)  # (batch, context + 1)
    windows = pieces[rows[:, None], idx]  # (batch, context + 1)
    return windows[:, :-1], windows[:, 1:]


def evaluation_windows(pieces, context: int):
    """Every non-overlapping window of ``context + 1`` tokens of every piece, in order.

    Returns ``(inputs, targets)`` of shape (n_windows, context): a fixed set, so the
    validation loss is the same number at every evaluation of the same parameters.
    Raises as :func:`random_windows` does for ``pieces`` and ``context``.
    """
    pieces = _windowed(pieces, as_width(context, "context"))
    per_piece = (pieces.shape[1] - 1) // context
    idx = np.arange(per_piece)[:, None] * context + np.arange(context + 1)
    windows = pieces[:, idx].reshape(-1, context + 1)  # (n_windows, context + 1)
    return windows[:, :-1], windows[:, 1:]
