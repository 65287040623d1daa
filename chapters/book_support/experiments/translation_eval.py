"""Held-out evaluation of the bottleneck chapter's translators: by length, by word kind,
by position.

For one model and one batch of held-out sentences of length ``T``, :func:`evaluate`
measures

* **greedy** word (token) accuracy and sentence accuracy: the model translates on its
  own, reading the word *it* wrote last (what a translator does);
* **teacher-forced** word accuracy: at every step the model reads the correct previous
  word, as in training, so one mistake cannot cause the next;
* **alignment accuracy**: the share of target words whose largest attention weight
  (teacher-forced) falls on the source word they translate, separately for the three
  kinds of :meth:`attnlib.data.translation_task.TranslationBatch.kinds` (kept in place,
  moved one or two places, the verb moved to the end); NaN without attention;
* all three **by target position** ``i = 1 .. T``, averaged over the sentences.

:func:`evaluate_runs` does this for every stored run at every test length, and
:func:`across_seeds` summarises the seeds of each kind of model by their mean, minimum
and maximum. Test sentences come from their own seeds (:func:`test_batches`), never
used in training or for stopping.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attnlib.data.translation_task import (
    KEPT,
    NEAR,
    VERB,
    TranslationBatch,
    make_batch,
)
from attnlib.models.encoder_decoder import _check, forward, translate_greedy

#: Source lengths of the held-out evaluation (training used 3 to 20 words).
TEST_LENGTHS = (5, 10, 15, 20, 25, 30, 35, 40)
#: Held-out sentences per length.
TEST_SENTENCES = 200
#: Seed of the test sentences (one stream per length: ``TEST_SEED + length``).
TEST_SEED = 12345


def test_batches(lengths=TEST_LENGTHS, n: int = TEST_SENTENCES, seed: int = TEST_SEED):
    """Held-out test sentences: ``n`` of every length, from their own seed.

    Training and validation draw from other streams
    (:mod:`book_support.experiments.translation_training`); these use ``seed + length``,
    so the draws are the models' own only by chance: a test sentence can also occur in
    the training stream, which happens for a small share of the shortest (5-word) ones
    and ever more rarely as the sentences grow longer.
    """
    return [make_batch(seed + int(T), n, int(T)) for T in lengths]


@dataclass(frozen=True)
class Scores:
    """Held-out results of one model at one sentence length ``T`` (shares in [0, 1]).

    greedy, sentence : word and whole-sentence accuracy of greedy translation.
    teacher_forced : word accuracy when every step reads the correct previous word.
    alignment_kept, alignment_near, alignment_verb : alignment accuracy (teacher-forced
        attention) on the words kept in place, moved one or two places, and on the verb
        moved to the end; NaN without attention or without such words.
    greedy_by_position, teacher_forced_by_position, alignment_by_position : (T,) arrays,
        the same accuracies at each target position (alignment: NaN without attention).
    """

    length: int
    greedy: float
    sentence: float
    teacher_forced: float
    alignment_kept: float
    alignment_near: float
    alignment_verb: float
    greedy_by_position: np.ndarray
    teacher_forced_by_position: np.ndarray
    alignment_by_position: np.ndarray

    def to_dict(self) -> dict:
        """Plain numbers and lists (NaN as None), for JSON."""

        def plain(v):
            if isinstance(v, np.ndarray):
                return [plain(float(x)) for x in v]
            return None if isinstance(v, float) and np.isnan(v) else v

        return {k: plain(v) for k, v in vars(self).items()}


def evaluate(model, batch) -> Scores:
    """Greedy, teacher-forced and alignment accuracy of ``model`` on ``batch``.

    Raises
    ------
    TypeError
        If ``model`` or ``batch`` has the wrong type.
    """
    _check(model, batch)
    words, _ = translate_greedy(model, batch.source)
    greedy = words == batch.target  # (B, T)
    f = forward(model, batch)
    forced = np.argmax(f.logits, axis=-1) == batch.target  # (B, T)
    T = batch.length
    nan = np.full(T, np.nan)
    shares = [np.nan, np.nan, np.nan]
    by_position = nan
    if f.weights is not None:
        hit = np.argmax(f.weights, axis=-1) == batch.alignment  # (B, T)
        kinds = batch.kinds()  # (B, T)
        for k in (KEPT, NEAR, VERB):
            where = kinds == k
            shares[k] = float(hit[where].mean()) if where.any() else np.nan
        by_position = hit.mean(axis=0)
    return Scores(
        length=T,
        greedy=float(greedy.mean()),
        sentence=float(greedy.all(axis=1).mean()),
        teacher_forced=float(forced.mean()),
        alignment_kept=shares[KEPT],
        alignment_near=shares[NEAR],
        alignment_verb=shares[VERB],
        greedy_by_position=greedy.mean(axis=0),
        teacher_forced_by_position=forced.mean(axis=0),
        alignment_by_position=by_position,
    )


def evaluate_runs(runs: dict, lengths=TEST_LENGTHS, n: int = TEST_SENTENCES) -> dict:
    """Every run at every length: run name -> list of :class:`Scores` (one per length),
    all on the same test sentences."""
    batches = test_batches(lengths, n)
    return {name: [evaluate(m, b) for b in batches] for name, m in runs.items()}


def alignment_offsets(model, batch) -> np.ndarray:
    """Where the largest attention weight of each target word falls, counted from the
    source word it translates (teacher-forced, as the alignment accuracy of
    :func:`evaluate`).

    Returns
    -------
    (B, T) int64: ``argmax_j alpha_ij - alignment_i``; 0 is a hit, +1 the next source
    position, -1 the one before.

    Raises
    ------
    TypeError
        If ``model`` or ``batch`` has the wrong type.
    ValueError
        If ``model`` has no attention (it has no weights to place).
    """
    weights = _attention_forward(model, batch, "offsets").weights  # (B, T, T)
    return np.argmax(weights, axis=-1) - batch.alignment  # (B, T)


def _attention_forward(model, batch, what: str):
    """The teacher-forced pass of an attention model; ValueError naming ``what`` the
    weights cannot have without attention."""
    _check(model, batch)
    if not model.attend:
        raise ValueError(f"model has no attention, so its weights have no {what}")
    return forward(model, batch)


def farthest_verb(batch) -> TranslationBatch:
    """The sentence of ``batch`` whose verb moves farthest to reach the end of its
    translation (the first such sentence, when several share the farthest move), as a
    batch of one; the bottleneck chapter draws its alignment figure from it, a choice
    made from the sentences alone, before any model has read them.

    Raises
    ------
    TypeError
        If ``batch`` is not a :class:`~attnlib.data.translation_task.TranslationBatch`.
    """
    i = int(np.argmax(verb_moves(batch)))  # the first of the farthest (checks batch)
    one = slice(i, i + 1)
    return TranslationBatch(batch.source[one], batch.target[one], batch.alignment[one])


def verb_moves(batch) -> np.ndarray:
    """How many places the verb of each sentence of ``batch`` moves to reach the end
    of its translation: ``(T - 1) -`` its source position (the verb is the last target
    word).

    Returns
    -------
    (B,) int64, from 0 (the verb already stood last) to ``T - 1`` (it stood first).

    Raises
    ------
    TypeError
        If ``batch`` is not a :class:`~attnlib.data.translation_task.TranslationBatch`.
    """
    if not isinstance(batch, TranslationBatch):
        raise TypeError(
            "batch must be an attnlib.data.translation_task.TranslationBatch; "
            f"got {type(batch).__name__}"
        )
    return (batch.length - 1 - batch.alignment[:, -1]).astype(np.int64)  # (B,)


def alignment_by_correctness(model, batch) -> dict:
    """Alignment accuracy split by whether the word was predicted correctly, both
    teacher-forced (as in :func:`evaluate`): does the largest weight of a target word
    fall on its aligned source word more often when the model predicts that word
    correctly?

    Returns
    -------
    dict with "correct" and "wrong": the share (in [0, 1]) of correctly / wrongly
    predicted target words whose largest weight hits the aligned word (NaN where there
    are no such words), and "n_wrong": how many target words were predicted wrongly.

    Raises
    ------
    TypeError
        If ``model`` or ``batch`` has the wrong type.
    ValueError
        If ``model`` has no attention (it has no weights to place).
    """
    f = _attention_forward(model, batch, "alignment")
    right = np.argmax(f.logits, axis=-1) == batch.target  # (B, T)
    hit = np.argmax(f.weights, axis=-1) == batch.alignment  # (B, T)
    return {
        "correct": float(hit[right].mean()) if right.any() else np.nan,
        "wrong": float(hit[~right].mean()) if (~right).any() else np.nan,
        "n_wrong": int((~right).sum()),
    }


def separated(evaluation: dict, metric: str, kind_a: str, kind_b: str) -> dict:
    """The evaluated lengths at which the seeds of two kinds of model do not overlap
    on one metric (a scalar field of :class:`Scores`): every run of one kind strictly
    above every run of the other.

    Returns
    -------
    dict, ``{"a_above": [lengths], "b_above": [lengths]}``: where every run of
    ``kind_a`` is above every run of ``kind_b``, and the other way round. Lengths not
    listed have overlapping (or touching) ranges. How little a separation of three
    runs against three shows: :func:`chance_of_separation`.

    Raises
    ------
    ValueError
        If ``metric`` is unknown or a kind has no run in ``evaluation``.
    """
    table = across_seeds(evaluation, metric)
    for kind in (kind_a, kind_b):
        if kind not in table:
            raise ValueError(f"no run of kind {kind!r}; have {sorted(table)}")
    lengths = [s.length for s in next(iter(evaluation.values()))]
    a, b = table[kind_a], table[kind_b]
    return {
        "a_above": [T for T, lo, hi in zip(lengths, a["min"], b["max"]) if lo > hi],
        "b_above": [T for T, lo, hi in zip(lengths, b["min"], a["max"]) if lo > hi],
    }


def chance_of_separation(n_a: int, n_b: int) -> float:
    """The probability that ``n_a`` runs of one kind all come out above ``n_b`` runs
    of another when the kind makes no difference (all ``n_a + n_b`` results
    exchangeable, no ties): one order of the two groups out of ``C(n_a + n_b, n_a)``.
    For three runs against three, 1/20 in one given direction and 1/10 in either (the
    exact permutation test's smallest p-value).

    Raises
    ------
    ValueError
        If ``n_a`` or ``n_b`` is not a positive integer.
    """
    n_a, n_b = _positive_int(n_a, "n_a"), _positive_int(n_b, "n_b")
    return 1.0 / math.comb(n_a + n_b, n_a)


def _positive_int(n, name: str) -> int:
    """``n`` as an int; ValueError naming ``name`` unless it is a positive integer."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"{name} must be a positive integer; got {n!r}")
    return int(n)


def kind_of(run: str) -> str:
    """The kind of a run from its name: ``"attention-forward-seed1"`` ->
    ``"attention-forward"``."""
    kind, sep, seed = run.rpartition("-seed")
    if not sep or not seed.isdigit():
        raise ValueError(f"{run!r} is not a run name like 'attention-forward-seed1'")
    return kind


def across_seeds(evaluation: dict, metric: str) -> dict:
    """Summarise the seeds of every kind of model for one metric (a field of
    :class:`Scores`).

    Returns
    -------
    dict, kind -> {"seeds": (S, L) array (S runs of that kind, L lengths), "mean",
    "min", "max": (L,) arrays}. By-position metrics: :func:`by_position`.

    Raises
    ------
    ValueError
        If ``metric`` is not a scalar field of :class:`Scores`.
    """
    scalar = ("greedy", "sentence", "teacher_forced") + tuple(
        f"alignment_{k}" for k in ("kept", "near", "verb")
    )
    if metric not in scalar:
        raise ValueError(f"metric must be one of {scalar}; got {metric!r}")
    grouped: dict = {}
    for run, scores in evaluation.items():
        grouped.setdefault(kind_of(run), []).append(
            [getattr(s, metric) for s in scores]
        )
    out = {}
    for kind, rows in grouped.items():
        a = np.array(rows, dtype=float)  # (S, L)
        out[kind] = {"seeds": a, "mean": a.mean(0), "min": a.min(0), "max": a.max(0)}
    return out


def by_position(evaluation: dict, length: int, metric: str) -> dict:
    """One by-position metric (``"greedy"``, ``"teacher_forced"`` or ``"alignment"``) at
    one test length, summarised over the seeds of every kind: kind -> {"seeds": (S, T),
    "mean", "min", "max": (T,)}.

    Raises
    ------
    ValueError
        If the metric is unknown or ``length`` was not evaluated.
    """
    if metric not in ("greedy", "teacher_forced", "alignment"):
        raise ValueError(
            f"metric must be 'greedy', 'teacher_forced' or 'alignment'; got {metric!r}"
        )
    grouped: dict = {}
    for run, scores in evaluation.items():
        match = [s for s in scores if s.length == length]
        if not match:
            raise ValueError(f"length {length} was not evaluated for {run!r}")
        grouped.setdefault(kind_of(run), []).append(
            getattr(match[0], f"{metric}_by_position")
        )
    return {
        kind: {
            "seeds": (a := np.array(rows, dtype=float)),
            "mean": a.mean(0),
            "min": a.min(0),
            "max": a.max(0),
        }
        for kind, rows in grouped.items()
    }


def summary_lines(evaluation: dict) -> list:
    """One line per kind and length: mean (min-max) over seeds of the main metrics, in
    %, for ``make train``'s printout."""
    lines = []
    metrics = ("greedy", "sentence", "teacher_forced", "alignment_near")
    tables = {m: across_seeds(evaluation, m) for m in metrics}
    lengths = [s.length for s in next(iter(evaluation.values()))]
    for kind in tables["greedy"]:
        for i, T in enumerate(lengths):
            parts = []
            for m in metrics:
                t = tables[m][kind]
                if not np.isnan(t["mean"][i]):
                    parts.append(
                        f"{m} {100 * t['mean'][i]:5.1f} "
                        f"({100 * t['min'][i]:.1f}-{100 * t['max'][i]:.1f})"
                    )
            lines.append(f"{kind:24} T={T:2d}  " + "  ".join(parts))
    return lines


def mean_and_range(summary: dict, digits: int = 1) -> list:
    """A summary of :func:`across_seeds` or :func:`by_position` as text in %, one
    string per entry: ``"97.5 (96.0-99.0)"`` is the mean over seeds, then the lowest
    and the highest seed; ``"97.5"`` alone where the seeds agree to the digits shown
    (always, for one seed); ``"-"`` where the mean is NaN."""
    out = []
    for mean, low, high in zip(summary["mean"], summary["min"], summary["max"]):
        if np.isnan(mean):
            out.append("-")
        elif f"{100 * low:.{digits}f}" == f"{100 * high:.{digits}f}":
            out.append(f"{100 * mean:.{digits}f}")
        else:
            m, lo, hi = (f"{100 * v:.{digits}f}" for v in (mean, low, high))
            out.append(f"{m} ({lo}-{hi})")
    return out


def late_fall(history: dict, last_steps: int = 4000) -> dict:
    """How much a run's validation loss fell over its last ``last_steps`` steps.

    Compares the lowest validation loss recorded at or before step
    ``stopped_at - last_steps`` with the lowest over the whole run (the rule's best).
    A run that the stopping rule ends while this fall is large was still improving.

    Parameters
    ----------
    history : dict with ``"step"``, ``"validation_loss"`` (E,) sequences of floats
        and ``"stopped_at"`` (a one-entry sequence), as stored by
        :func:`book_support.experiments.translation_training.train`.
    last_steps : positive int, the window before the stop.

    Returns
    -------
    dict with ``"before"`` (float, lowest loss up to ``stopped_at - last_steps``),
    ``"best"`` (float, lowest loss of the run) and ``"fall"`` (float, ``1 - best /
    before``, the fraction by which the loss fell in the window).

    Raises
    ------
    ValueError if ``last_steps`` is not a positive integer, if the history's steps and
    losses differ in length, or if no evaluation lies ``last_steps`` before the stop.
    """
    last_steps = _positive_int(last_steps, "last_steps")
    steps = np.asarray(history["step"], dtype=float)  # (E,)
    losses = np.asarray(history["validation_loss"], dtype=float)  # (E,)
    if steps.shape != losses.shape or steps.ndim != 1:
        raise ValueError(
            f"history's step {steps.shape} and validation_loss {losses.shape} must be "
            "1-d sequences of one length"
        )
    stop = float(np.asarray(history["stopped_at"]).ravel()[0])
    early = steps <= stop - last_steps  # (E,)
    if not early.any():
        raise ValueError(
            f"no evaluation at or before step {stop - last_steps:g} "
            f"(stopped at {stop:g}, last_steps={last_steps})"
        )
    before = float(losses[early].min())
    best = float(losses.min())
    return {"before": before, "best": best, "fall": 1.0 - best / before}
