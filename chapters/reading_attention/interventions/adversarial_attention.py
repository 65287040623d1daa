"""Counterfactual attention: a very different distribution with (almost) the same
   prediction.

Jain & Wallace (2019, section 4.2, "Adversarial attention") asked whether a model's
attention distribution is the only one that yields its prediction: they searched for
distributions as far as possible from the original (Jensen-Shannon divergence) whose
output stays within a small total-variation distance ``epsilon`` of the original
prediction. If such distributions exist, the original map is not *the* explanation of
the prediction.

This module runs that search on the classifier of
:mod:`book_support.experiments.context_classifier`, where the ambiguous word's attention
row ``p`` (over the L positions) enters the prediction only through ``z = p V`` (``V``
the value vectors): the prediction is ``softmax((p V) W_out + b_out)``.

Public API
----------
``predict_with_attention(model, batch, weights)``
    class probabilities, shape (B, n_classes), when the ambiguous word's attention row
    is replaced by ``weights`` (shape (B, L)); everything else (values, readout) is the
    model's.
``search_alternative_attention(model, batch, index=0, *, epsilon=0.01, ...)``
    gradient ascent on ``JSD(new, original)`` with a penalty when the prediction moves
    by more than ``epsilon`` (total variation); returns an
    :class:`AlternativeAttention`.
``exact_alternative_attention(model, batch, index=0, *, epsilon=0.01)``
    (in :mod:`adversarial_exact`) the global maximum for two
    classes, to check the search against.
``jensen_shannon(p, q)`` and ``total_variation(p, q)``
    the two distances (natural logarithm: JSD lies in [0, ln 2 = 0.6931]; TVD in
    [0, 1]).
``logit_margin(model, batch, index, weights)``
    how far the winning logit stays ahead with a given attention row.
``share_of_random_rows_within(model, batch, index, epsilon)``
    the share of random attention rows that would also pass the ``epsilon`` test.

Example
-------
>>> from book_support.experiments.context_classifier import (
...     train_context_classifier,
...     forward,
... )
>>> from attnlib.data.context_task import encode_sentences
>>> model = train_context_classifier(seed=0)  # a few seconds, deterministic
>>> batch = encode_sentences(["The fisherman repaired his net beside the bank."])
>>> own = forward(model, batch).query_weights  # (1, 9): the model's own row
>>> gap = predict_with_attention(model, batch, own) - forward(model, batch).probs
>>> bool(abs(gap).max() < 1e-12)
True
>>> found = search_alternative_attention(model, batch, epsilon=0.01)
>>> found.feasible, found.prediction_tvd <= 0.01, found.jsd > 0.2
(True, True, True)

Source: Jain & Wallace (2019), "Attention is not Explanation", NAACL, section 4.2 and
Algorithm 2 (there: BiLSTM encoders with one attention layer; here: one self-attention
layer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core.backward import softmax_backward
from attnlib.core.softmax import softmax
from attnlib.data.context_task import ContextBatch
from attnlib.models.adam import Adam
from book_support.experiments.context_classifier import ContextClassifier, forward


def jensen_shannon(p, q, axis: int = -1) -> np.ndarray:
    """Jensen-Shannon divergence ``0.5 KL(p||m) + 0.5 KL(q||m)``, ``m = (p + q) / 2``,
       natural log.

    Zero entries contribute 0 (``0 log 0 = 0``). Symmetric, between 0 and ln 2.

    Parameters
    ----------
    p, q : array_like, same shape, distributions along ``axis``

    Returns
    -------
    numpy.ndarray (a float for 1-D input): one divergence per slice along ``axis``.

    Raises
    ------
    ValueError if the shapes differ (both named), or ``p`` or ``q`` is not a
    distribution along ``axis`` (negative, NaN or inf entries, or a slice whose sum is
    not 1 within 1e-6; the argument is named).
    """
    p, q = _distributions(p, q, axis)
    m = 0.5 * (p + q)

    def kl(a):
        ratio = np.divide(a, m, out=np.ones_like(a), where=a > 0)
        return np.sum(np.where(a > 0, a * np.log(ratio), 0.0), axis=axis)

    return 0.5 * kl(p) + 0.5 * kl(q)


def total_variation(p, q, axis: int = -1) -> np.ndarray:
    """Total variation distance ``0.5 * sum |p - q|`` along ``axis`` (between 0 and 1).

    Raises ``ValueError`` as :func:`jensen_shannon` does (shapes, or an argument that is
    not a distribution, named).
    """
    p, q = _distributions(p, q, axis)
    return 0.5 * np.sum(np.abs(p - q), axis=axis)


def _distributions(p, q, axis: int):
    """``p`` and ``q`` as float64 distributions along ``axis``, or ``ValueError``."""
    p = np.asarray(p, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if p.shape != q.shape:
        raise ValueError(f"p {p.shape} and q {q.shape} must have the same shape")
    for name, a in (("p", p), ("q", q)):
        if not np.isfinite(a).all() or (a < 0).any():
            raise ValueError(f"{name} must hold finite, non-negative probabilities")
        if not np.allclose(a.sum(axis=axis), 1.0, rtol=0.0, atol=1e-6):
            raise ValueError(f"{name} must sum to 1 along axis {axis}")
    return p, q


def _check_weights(batch: ContextBatch, weights) -> np.ndarray:
    w = np.asarray(weights, dtype=np.float64)
    shape = batch.tokens.shape
    if w.shape != shape:
        raise ValueError(
            f"weights of shape {w.shape} do not match the batch's (B, L) = {shape}"
        )
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("attention weights must be finite and non-negative")
    if np.any(w[~batch.key_mask()[:, 0, :]] != 0):
        raise ValueError("attention weights must be 0 on padded positions")
    sums = w.sum(axis=-1)
    if not np.allclose(sums, 1.0, atol=1e-6):
        raise ValueError(
            f"each row of attention weights must sum to 1; got sums {np.round(sums, 6)}"
        )
    return w


def predict_with_attention(
    model: ContextClassifier, batch: ContextBatch, weights
) -> np.ndarray:
    """Class probabilities when the ambiguous word's attention row is replaced by
       ``weights``.

    The values ``V = X W_V`` and the readout are the model's own; only the distribution
    over positions is supplied from outside (an *attention override*). With ``weights =
    forward(model, batch).query_weights`` this reproduces the model's own prediction.

    Parameters
    ----------
    model : ContextClassifier (trained, e.g. by ``train_context_classifier``)
    batch : ContextBatch
    weights : array_like, shape (B, L) -- non-negative, 0 on padding, each row summing
        to 1

    Returns
    -------
    numpy.ndarray, shape (B, n_classes), float64: ``softmax((weights V) W_out +
    b_out)``.

    Raises
    ------
    ValueError
        If ``weights`` has the wrong shape (both shapes named), is negative or
        non-finite, puts weight on padding, or a row does not sum to 1.
    """
    w = _check_weights(batch, weights)
    V = forward(model, batch).V  # (B, L, d_v)
    z = np.einsum("bl,bld->bd", w, V)
    return softmax(z @ model.W_out + model.b_out)


@dataclass(frozen=True)
class AlternativeAttention:
    """Result of :func:`search_alternative_attention` for one sequence.

    Attributes
    ----------
    words : list of str -- the sequence's words (no padding).
    original_weights, weights : (L,) arrays -- the model's attention row and the
        alternative found (over the real tokens only).
    original_probs, probs : (n_classes,) arrays -- predictions with each of them.
    jsd : float -- ``jensen_shannon(weights, original_weights)`` (natural log, max ln
        2).
    weights_tvd : float -- ``total_variation(weights, original_weights)``.
    prediction_tvd : float -- ``total_variation(probs, original_probs)``, at most
        ``epsilon`` when ``feasible``.
    feasible : bool -- whether the alternative keeps the prediction within ``epsilon``
        (if no iterate did, ``weights`` is the original and ``jsd`` is 0).
    epsilon : float
    """

    words: list
    original_weights: np.ndarray
    weights: np.ndarray
    original_probs: np.ndarray
    probs: np.ndarray
    jsd: float
    weights_tvd: float
    prediction_tvd: float
    feasible: bool
    epsilon: float


def search_alternative_attention(
    model: ContextClassifier,
    batch: ContextBatch,
    index: int = 0,
    *,
    epsilon: float = 0.01,
    steps: int = 150,
    lr: float = 0.2,
    penalty: float = 100.0,
    restarts: int = 4,
    seed: int = 0,
) -> AlternativeAttention:
    """Search for an attention row far from the model's (JSD) with nearly the same
       prediction.

    The alternative is written ``a = softmax(u)`` over the sequence's real tokens, so it
    is always a distribution. Adam ascends ::

        J(u) = JSD(a, a0) - penalty * max(0, ln(1 - epsilon) - ln(1 - TVD(p(a), p0)))^2

    where ``a0`` is the model's own row, ``p0`` its prediction and ``p(a)`` the
    prediction with ``a`` (:func:`predict_with_attention`); the penalty is 0 exactly
    when ``TVD <= epsilon``. Gradients are exact: ``dJSD/da_j = 0.5 ln(a_j/m_j)``, the
    penalty's through ``1 - TVD = sum_c min(p_c, p0_c)``, the readout's softmax and
    :func:`attnlib.core.backward.softmax_backward` to ``u``. The logarithm keeps the
    penalty's gradient from vanishing when ``a`` flips a confident prediction (a
    penalty on ``TVD`` itself is flat there: its gradient carries the factor
    ``p (1 - p)`` of the saturated softmax).

    Starts: the "inverted" row ``u = -ln a0``, one row concentrated on each token
    (``u = 8 e_j``) and ``restarts - 1`` random rows (seeded); each start is first
    moved along the segment towards ``a0`` (bisection) until it keeps the prediction
    within ``epsilon``, so every run begins feasible. The most divergent iterate that
    keeps ``TVD(p(a), p0) <= epsilon`` is returned. Deterministic for a given ``seed``.
    A local search: for two classes ``exact_alternative_attention`` gives the
    global maximum to compare with
    (:mod:`adversarial_exact`).

    Parameters
    ----------
    model : ContextClassifier
    batch : ContextBatch; ``index`` selects the sequence
    epsilon : float > 0 -- allowed change of the prediction (total variation)
    steps, lr, penalty, restarts, seed : search settings

    Returns
    -------
    AlternativeAttention

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, ``steps < 1``, ``restarts < 1`` or ``index`` is out of
        range.

    Source: Jain & Wallace (2019), section 4.2 and Algorithm 2.
    """
    if epsilon <= 0 or steps < 1 or restarts < 1:
        raise ValueError(
            f"need epsilon > 0, steps >= 1, restarts >= 1; got {epsilon}, {steps}, "
            f"{restarts}"
        )
    readout, a0 = _readout(model, batch, index)  # (n, C): logits = a @ readout + b
    n = a0.size
    p0 = softmax(a0 @ readout + model.b_out)  # (C,)

    def moved(a):  # TVD(p(a), p0), as total_variation computes it
        return 0.5 * float(np.abs(softmax(a @ readout + model.b_out) - p0).sum())

    best_a, best_jsd = a0, 0.0
    rng = np.random.default_rng(seed)
    starts = (
        [-np.log(np.maximum(a0, 1e-12))]
        + [8.0 * np.eye(n)[j] for j in range(n)]
        + [rng.normal(scale=2.0, size=n) for _ in range(restarts - 1)]
    )
    for u0 in starts:
        a = _feasible_towards(a0, softmax(u0), moved, epsilon)  # (n,)
        u = {"u": np.log(np.maximum(a, 1e-300))}
        opt = Adam(lr=lr)
        for _ in range(steps + 1):
            a = softmax(u["u"])
            p = softmax(a @ readout + model.b_out)
            m = 0.5 * (a + a0)
            log_a = 0.5 * np.log(np.maximum(a, 1e-300) / m)  # dJSD/da
            jsd = float(a @ log_a + 0.5 * a0 @ np.log(np.maximum(a0, 1e-300) / m))
            tvd = 0.5 * float(np.abs(p - p0).sum())
            if tvd <= epsilon and jsd > best_jsd:
                best_a, best_jsd = a, jsd
            d_a = log_a
            if tvd > epsilon:
                overlap = float(np.minimum(p, p0).sum())  # 1 - TVD, > 0
                excess = np.log(1.0 - epsilon) - np.log(overlap)
                d_p = -(p < p0).astype(np.float64) / overlap  # d(-ln overlap)/dp
                d_logits = softmax_backward(p, d_p)
                d_a = d_a - penalty * 2.0 * excess * (readout @ d_logits)
            d_u = softmax_backward(a, d_a)
            opt.step(u, {"u": -d_u})  # Adam minimises: ascend J
    return _result(model, batch, index, a0, best_a, epsilon)


def _feasible_towards(a0, a, moved, epsilon, iterations: int = 40):
    """The point of the segment from ``a0`` to ``a`` furthest from ``a0`` (bisection)
    whose prediction moves by at most ``epsilon``; ``a`` itself if it does."""
    if moved(a) <= epsilon:
        return a
    lo, hi = 0.0, 1.0
    for _ in range(iterations):
        t = 0.5 * (lo + hi)
        lo, hi = (t, hi) if moved((1 - t) * a0 + t * a) <= epsilon else (lo, t)
    return (1 - lo) * a0 + lo * a


def _result(model, batch, index, a0, a, epsilon) -> AlternativeAttention:
    readout, _ = _readout(model, batch, index)
    p0, p = (softmax(w @ readout + model.b_out) for w in (a0, a))
    jsd = float(jensen_shannon(a, a0))
    return AlternativeAttention(
        words=batch.subset(index).words(0),
        original_weights=a0,
        weights=a,
        original_probs=p0,
        probs=p,
        jsd=jsd,
        weights_tvd=float(total_variation(a, a0)),
        prediction_tvd=float(total_variation(p, p0)),
        feasible=bool(jsd > 0.0),
        epsilon=float(epsilon),
    )


def logit_margin(model: ContextClassifier, batch: ContextBatch, index: int, weights):
    """How far the model's winning logit stays ahead when the ambiguous word's attention
    row of sequence ``index`` is ``weights``.

    The winner is the class the model predicts with its own weights; the margin is its
    logit minus the largest other logit (for two classes, ``log(p_win / p_lose)``). A
    prediction whose winning probability must stay above ``1 - epsilon`` keeps a margin
    of at least about ``log((1 - epsilon) / epsilon)``: 4.6 for ``epsilon = 0.01``.

    Parameters
    ----------
    weights : array_like, shape (L,) over the sequence's real tokens (as
        :attr:`AlternativeAttention.weights`), non-negative, summing to 1

    Returns
    -------
    float; negative when ``weights`` flip the prediction.

    Raises
    ------
    ValueError
        If ``index`` is out of range or ``weights`` does not fit the sequence.
    """
    readout, own = _readout(model, batch, index)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != own.shape or (w < 0).any() or not np.isclose(w.sum(), 1.0):
        raise ValueError(
            f"weights must be a distribution over the {own.size} real tokens of "
            f"sequence {index}; got shape {w.shape}"
        )
    winner = int(np.argmax(own @ readout + model.b_out))
    logits = w @ readout + model.b_out
    return float(logits[winner] - np.delete(logits, winner).max())


def share_of_random_rows_within(
    model: ContextClassifier,
    batch: ContextBatch,
    index: int,
    epsilon: float,
    *,
    samples: int = 2000,
    seed: int = 0,
) -> float:
    """Share of random attention rows that keep the prediction within ``epsilon``.

    Rows are drawn uniformly from all distributions over the sequence's real tokens
    (a flat Dirichlet distribution), and each is tested as
    :func:`search_alternative_attention` tests its candidates: the total variation
    between the prediction with the row and the model's own prediction must be at most
    ``epsilon``. A share near 1 means that the test accepts almost any row, so that
    finding one far from the model's says little about the model.

    Raises
    ------
    ValueError
        If ``epsilon <= 0``, ``samples < 1`` or ``index`` is out of range.
    """
    if epsilon <= 0 or samples < 1:
        raise ValueError(f"need epsilon > 0 and samples >= 1; got {epsilon}, {samples}")
    readout, own = _readout(model, batch, index)
    rows = np.random.default_rng(seed).dirichlet(np.ones(own.size), size=samples)
    p0 = softmax(own @ readout + model.b_out)  # (C,)
    p = softmax(rows @ readout + model.b_out)  # (samples, C)
    return float(np.mean(total_variation(p, np.broadcast_to(p0, p.shape)) <= epsilon))


def _readout(model, batch, index):
    """``V W_out`` of sequence ``index`` (real tokens only) and the model's own row."""
    if not -len(batch) <= index < len(batch):
        raise ValueError(
            f"index {index} is out of range for a batch of {len(batch)} sequences"
        )
    one = batch.subset(index)
    n = int(one.lengths[0])
    f = forward(model, one)
    return f.V[0, :n] @ model.W_out, f.query_weights[0, :n]  # (n, C), (n,)
