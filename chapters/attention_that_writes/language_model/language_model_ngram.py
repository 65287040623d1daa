"""A character n-gram baseline for the chapter's language model: interpolated
Kneser-Ney smoothing with one discount.

An n-gram model predicts the next character from the ``n - 1`` characters before it
and nothing else, using counts of the training text. Counts alone give probability 0
to whatever the training text never showed, so the counts are *smoothed*. The rule
here is interpolated Kneser-Ney (Kneser and Ney 1995, in the form of Chen and Goodman
1999) with a single discount ``D`` shared by every order. With ``h`` the history and
``h'`` the history without its oldest character,

    P(x | h) = (max(c(h x) - D, 0) + D * R(h) * P(x | h')) / C(h),

where ``C(h) = sum_x c(h x)`` and ``R(h)`` is the number of characters ``x`` with
``c(h x) > 0``; a history with ``C(h) = 0`` passes ``P(x | h')`` on unchanged, and the
empty history interpolates with the uniform ``1 / |V|``, so every character of the
vocabulary gets a probability above 0. At the longest history the model uses, ``c``
is the raw count of the string in the training text; at the shorter ones it is the
*continuation count*, the number of distinct characters seen before the string (a
character that follows many different contexts is a better guess for an unseen one).

The discount is the model's one free number. :func:`baseline_table` chooses it for
each order on the training text alone: it holds out every tenth training piece (the
rule the validation split itself uses), fits on the rest, keeps the ``D`` of
:data:`DISCOUNTS` with the lowest held-out loss, and refits on all the training
pieces. The validation pieces are read once, to report the loss.

Counts never cross a piece boundary (just as the model's training windows never cross a
piece, although many training pieces are neighbours in the book), and a
prediction sees only the characters of its own evaluation window before it, as the
attention model does: at the start of a window the history is shorter, and the model
uses the longest one it has.

* :func:`count_ngrams`      the raw and continuation counts of training pieces
* :func:`distribution`      P(x | history) for every character x, shape (|V|,)
* :func:`target_probabilities`  P(target | history) of every prediction of windows
* :func:`mean_loss`         the mean loss in nats over evaluation windows
* :func:`choose_discount`   the held-out choice of ``D`` on training pieces only
* :func:`repeated_share`    how often the validation text repeats a training string
* :func:`baseline_table`    one row per order: ``D``, losses, counts kept

Plain numpy and the standard library; about 3 s of processor time for orders 1 to 8
on the book's 170,000 training characters.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from attnlib.data.book_text import evaluation_windows, split_pieces

__all__ = [
    "DISCOUNTS",
    "NGramCounts",
    "count_ngrams",
    "distribution",
    "target_probabilities",
    "mean_loss",
    "choose_discount",
    "repeated_share",
    "baseline_table",
]

#: The discounts tried on the held-out training pieces: 0.05, 0.10, ..., 1.00.
DISCOUNTS = tuple(round(0.05 * i, 2) for i in range(1, 21))


@dataclass(frozen=True)
class NGramCounts:
    """The counts of training pieces, for every order up to ``max_order``.

    Attributes
    ----------
    max_order : int, the longest string counted (history plus the predicted character)
    vocab_size : int, |V|
    raw : {bytes: int}, how often each string of 1 .. max_order characters occurs
    continuation : {bytes: int}, for strings of 1 .. max_order - 1 characters, the
        number of distinct characters seen just before them
    raw_context, continuation_context : {bytes: (C, T)}, per history (the string
        without its last character): the sum of the counts of its continuations and
        how many of them are above 0

    Strings are token ids as bytes (one byte per character, so |V| <= 256).
    """

    max_order: int
    vocab_size: int
    raw: dict
    continuation: dict
    raw_context: dict
    continuation_context: dict

    def strings_counted(self, order: int) -> int:
        """How many distinct strings of 1 .. ``order`` characters the order-``order``
        model keeps a count for (its analogue of a parameter count)."""
        return sum(1 for g in self.raw if len(g) <= order)


def _check_order(order, name: str, largest: int | None = None) -> int:
    if isinstance(order, bool) or not isinstance(order, int | np.integer):
        raise TypeError(f"{name} must be an integer; got {type(order).__name__}")
    if order < 1 or (largest is not None and order > largest):
        top = "" if largest is None else f" and at most {largest} (the counts' order)"
        raise ValueError(f"{name} must be at least 1{top}; got {order}")
    return int(order)


def _check_discount(discount) -> float:
    discount = float(discount)
    if not 0.0 < discount <= 1.0:
        raise ValueError(
            f"discount must lie in (0, 1] so that every probability stays above 0 "
            f"and they sum to 1; got {discount}"
        )
    return discount


def _ids(pieces, vocab_size: int, name: str) -> np.ndarray:
    pieces = np.asarray(pieces)
    if pieces.dtype.kind not in "iu":
        raise TypeError(f"{name} must be integer token ids; got dtype {pieces.dtype}")
    if pieces.ndim != 2:
        raise ValueError(f"{name} must have shape (n, length); got {pieces.shape}")
    if pieces.size and (pieces.min() < 0 or pieces.max() >= vocab_size):
        raise ValueError(
            f"{name} must be token ids in 0 .. {vocab_size - 1} (vocab_size "
            f"{vocab_size}); got {pieces.min()} .. {pieces.max()}"
        )
    return pieces


def _context_totals(counts: dict) -> dict:
    """``{history: (C, T)}`` of a table of string counts."""
    totals: dict = {}
    for gram, c in counts.items():
        total, types = totals.get(gram[:-1], (0, 0))
        totals[gram[:-1]] = (total + c, types + 1)
    return totals


def count_ngrams(pieces, max_order: int, vocab_size: int) -> NGramCounts:
    """Count every string of 1 .. ``max_order`` characters inside each piece.

    ``pieces``: int array (n, length) of token ids in 0 .. vocab_size - 1. Raises
    TypeError for ids or sizes that are not integers, ValueError for an id outside the
    vocabulary, ``max_order < 1`` or ``vocab_size`` outside 1 .. 256.
    """
    max_order = _check_order(max_order, "max_order")
    vocab_size = _check_order(vocab_size, "vocab_size", 256)
    pieces = _ids(pieces, vocab_size, "pieces")
    raw: Counter = Counter()
    for piece in pieces:
        text = bytes(piece.astype(np.uint8))
        for m in range(1, max_order + 1):
            raw.update(text[i : i + m] for i in range(len(text) - m + 1))
    continuation = Counter(g[1:] for g in raw if len(g) >= 2)
    return NGramCounts(
        max_order,
        vocab_size,
        dict(raw),
        dict(continuation),
        _context_totals(raw),
        _context_totals(continuation),
    )


def distribution(counts: NGramCounts, history, *, order: int, discount: float):
    """P(x | history) for every character x: float64 array of shape (|V|,), sum 1.

    ``history``: the token ids before the prediction (any length; the model reads the
    last ``order - 1`` of them). Raises ValueError for an order above the counts'
    ``max_order``, a discount outside (0, 1] or an id outside the vocabulary.
    """
    order = _check_order(order, "order", counts.max_order)
    discount = _check_discount(discount)
    history = np.asarray(history).reshape(1, -1)
    if history.size == 0:
        history = history.astype(np.int64)  # no characters before the prediction
    history = _ids(history, counts.vocab_size, "history")[0]
    h = bytes(history.astype(np.uint8))[max(0, history.size - (order - 1)) :]
    p = np.full(counts.vocab_size, 1.0 / counts.vocab_size)
    for m in range(len(h) + 1):  # history lengths 0, 1, ..., the longest
        context = h[len(h) - m :]
        top = m == len(h)
        table = counts.raw if top else counts.continuation
        totals = counts.raw_context if top else counts.continuation_context
        total, types = totals.get(context, (0, 0))
        if total == 0:
            continue  # an unseen history passes the shorter one's P on
        c = np.array([table.get(context + bytes([x]), 0) for x in range(p.size)])
        p = (np.maximum(c - discount, 0.0) + discount * types * p) / total
    return p


def _statistics(counts: NGramCounts, inputs, targets, order: int):
    """For every prediction and history length m = 0 .. order - 1: the count of the
    history plus the target, the history's C and T (all 0 when the window holds fewer
    than m characters before the target). Arrays of shape (predictions, order)."""
    inputs = _ids(inputs, counts.vocab_size, "inputs")
    targets = _ids(targets, counts.vocab_size, "targets")
    if inputs.shape != targets.shape:
        raise ValueError(
            f"inputs and targets must have one shape; got {inputs.shape} and "
            f"{targets.shape}"
        )
    stats = np.zeros((3, targets.size, order))  # count, C, T
    row = 0
    for window, following in zip(inputs, targets, strict=True):
        text = bytes(window.astype(np.uint8))
        for i, x in enumerate(following):
            longest = min(order - 1, i + 1)  # characters of the window before x
            for m in range(longest + 1):
                top = m == longest
                context = text[i + 1 - m : i + 1]
                table = counts.raw if top else counts.continuation
                totals = counts.raw_context if top else counts.continuation_context
                total, types = totals.get(context, (0, 0))
                stats[:, row, m] = (table.get(context + bytes([x]), 0), total, types)
            row += 1
    return stats


def _probabilities(stats, discount: float, vocab_size: int) -> np.ndarray:
    """P(target | history) of every prediction, from :func:`_statistics`."""
    count, total, types = stats
    p = np.full(count.shape[0], 1.0 / vocab_size)
    for m in range(count.shape[1]):
        seen = total[:, m] > 0
        mixed = np.maximum(count[:, m] - discount, 0.0) + discount * types[:, m] * p
        p = np.where(seen, mixed / np.maximum(total[:, m], 1.0), p)
    return p


def _loss(stats, discount: float, vocab_size: int) -> float:
    """The mean of -ln P(target | history) from :func:`_statistics`, in nats."""
    return float(-np.log(_probabilities(stats, discount, vocab_size)).mean())


def target_probabilities(counts, inputs, targets, *, order: int, discount: float):
    """P(target | the window's characters before it) of every prediction.

    ``inputs``, ``targets``: int arrays (n_windows, context), as
    :func:`attnlib.data.book_text.evaluation_windows` returns them; the prediction of
    ``targets[w, i]`` reads ``inputs[w, :i + 1]``. Returns float64, the targets'
    shape. Raises as :func:`distribution` does, and ValueError for shapes that differ.
    """
    order = _check_order(order, "order", counts.max_order)
    discount = _check_discount(discount)
    stats = _statistics(counts, inputs, targets, order)
    p = _probabilities(stats, discount, counts.vocab_size)
    return p.reshape(np.shape(targets))


def mean_loss(counts: NGramCounts, inputs, targets, *, order: int, discount: float):
    """The mean of -ln :func:`target_probabilities`, in nats (a float)."""
    p = target_probabilities(counts, inputs, targets, order=order, discount=discount)
    return float(-np.log(p).mean())


def choose_discount(counts, inputs, targets, *, order: int, discounts=DISCOUNTS):
    """The discount of ``discounts`` with the lowest :func:`mean_loss` on held-out
    windows, and that loss: ``(discount, nats)``. ``counts`` must come from text that
    excludes the windows."""
    order = _check_order(order, "order", counts.max_order)
    stats = _statistics(counts, inputs, targets, order)
    losses = [_loss(stats, _check_discount(d), counts.vocab_size) for d in discounts]
    best = int(np.argmin(losses))
    return float(discounts[best]), losses[best]


def repeated_share(train_pieces, inputs, targets, length: int) -> float:
    """The share of predictions whose last ``length`` characters, the target included,
    occur somewhere in ``train_pieces`` (within one piece): how often the text to
    predict repeats a training string verbatim.

    Only predictions with at least ``length - 1`` characters of their window before
    them count. ``inputs``, ``targets``: int arrays (n_windows, context). Raises
    ValueError if ``length`` leaves no prediction to count or shapes differ.
    """
    length = _check_order(length, "length")
    train_pieces = _ids(train_pieces, 256, "train_pieces")
    inputs, targets = _ids(inputs, 256, "inputs"), _ids(targets, 256, "targets")
    if inputs.shape != targets.shape or inputs.ndim != 2:
        raise ValueError(
            f"inputs and targets must have one shape (n_windows, context); got "
            f"{inputs.shape} and {targets.shape}"
        )
    if length > inputs.shape[1] + 1:
        raise ValueError(
            f"length={length} leaves no prediction: windows have {inputs.shape[1]} "
            "characters"
        )
    seen = set()
    for piece in train_pieces:
        text = bytes(piece.astype(np.uint8))
        seen.update(text[i : i + length] for i in range(len(text) - length + 1))
    hits = [
        bytes(window[i + 2 - length : i + 1].astype(np.uint8)) + bytes([y]) in seen
        for window, following in zip(inputs, targets, strict=True)
        for i, y in enumerate(following)
        if i >= length - 2
    ]
    return float(np.mean(hits))


def baseline_table(split, *, context: int, vocab_size: int, orders=range(1, 7)):
    """Fit and evaluate one model per order on a training/validation ``split``.

    ``split``: an :class:`attnlib.data.book_text.Split`. For each order the discount is
    chosen on the training pieces alone (every tenth held out, as
    :func:`attnlib.data.book_text.split_pieces` does), the counts are then taken on
    all training pieces, and the model is evaluated on
    ``evaluation_windows(split.validation, context)``, the attention model's windows.

    Returns a list of dicts, one per order: ``order``, ``discount``,
    ``held_out_nats`` (on the held-out training pieces), ``validation_nats``,
    ``strings_counted``.
    """
    orders = [_check_order(n, "orders") for n in orders]
    length = split.train.shape[1]
    inner = split_pieces(split.train.ravel(), piece=length)
    held_x, held_y = evaluation_windows(inner.validation, context)
    val_x, val_y = evaluation_windows(split.validation, context)
    inner_counts = count_ngrams(inner.train, max(orders), vocab_size)
    counts = count_ngrams(split.train, max(orders), vocab_size)
    rows = []
    for n in orders:
        discount, held = choose_discount(inner_counts, held_x, held_y, order=n)
        rows.append(
            {
                "order": n,
                "discount": discount,
                "held_out_nats": held,
                "validation_nats": mean_loss(
                    counts, val_x, val_y, order=n, discount=discount
                ),
                "strings_counted": counts.strings_counted(n),
            }
        )
    return rows
