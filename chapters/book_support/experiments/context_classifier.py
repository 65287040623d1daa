"""A one-layer self-attention classifier, its backward pass and a plain-numpy training
   loop.

The model reads a sequence of the context task (:mod:`attnlib.data.context_task`) and
predicts the sense of its ambiguous word::

    X = E[tokens]                          fixed word vectors,   (B, L, d_model)
    K, V = X W_K, X W_V                    learned projections of every position
    q = X[b, query_index[b]] W_Q           the ambiguous word's query, (B, 1, d_k)
    z, p = attention(q, K, V, key_mask)    its self-attention row (attnlib.attention)
    logits = z W_out + b_out               learned readout, (B, n_classes)

The learned parameters are ``W_Q, W_K, W_V, W_out, b_out``; the word vectors ``E`` are
fixed (scaled one-hot vectors by default: no word's sense is built into its vector). The
attention weights ``p`` are *not* parameters: they are computed afresh for every input.

The baseline ``pooling="mean"`` is the same model with uniform weights over the real
tokens in place of ``p`` (``W_Q`` and ``W_K`` are then unused): it can only average.

Training minimises the mean cross-entropy with Adam (Kingma & Ba 2015, Algorithm 1); the
gradients come from :func:`attnlib.core.backward.attention_backward`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from attnlib.core.attention import attention
from attnlib.core.backward import attention_backward
from attnlib.core.softmax import softmax
from attnlib.data.context_task import VOCAB, ContextBatch, make_context_task
from attnlib.models.adam import Adam

__all__ = [
    "PARAMETER_NAMES",
    "ContextClassifier",
    "init_context_classifier",
    "ForwardResult",
    "forward",
    "attention_map",
    "cross_entropy",
    "loss",
    "loss_and_gradients",
    "accuracy",
    "train",
    "context_datasets",
    "train_context_classifier",
]

#: Names of the learned parameters, in a fixed order.
PARAMETER_NAMES = ("W_Q", "W_K", "W_V", "W_out", "b_out")


@dataclass
class ContextClassifier:
    """Parameters of the one-layer self-attention classifier (all float64).

    Attributes
    ----------
    embeddings : (V, d_model) -- fixed word vectors, not trained (one-hot by default).
    W_Q, W_K : (d_model, d_k) -- learned query and key projections.
    W_V : (d_model, d_v) -- learned value projection.
    W_out : (d_v, n_classes), b_out : (n_classes,) -- learned readout.
    pooling : "attention" (softmax(Q K^T / sqrt(d_k))) or "mean" (uniform weights).
    history : dict of lists filled by :func:`train`: "step", "loss", "train_accuracy",
        "test_accuracy".
    """

    embeddings: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_out: np.ndarray
    b_out: np.ndarray
    pooling: str = "attention"
    history: dict = field(default_factory=dict)

    def params(self) -> dict:
        """The learned parameters by name (the arrays themselves, not copies)."""
        return {name: getattr(self, name) for name in PARAMETER_NAMES}

    def with_params(self, **new) -> ContextClassifier:
        """A copy with some parameters replaced (used by gradient checks)."""
        unknown = set(new) - set(PARAMETER_NAMES)
        if unknown:
            raise ValueError(
                f"unknown parameter names {sorted(unknown)}; expected {PARAMETER_NAMES}"
            )
        return dataclasses.replace(
            self,
            **{k: np.asarray(v, dtype=np.float64) for k, v in new.items()},
            history={},
        )


def init_context_classifier(
    rng,
    *,
    d_k: int = 8,
    d_v: int = 8,
    n_classes: int = 2,
    pooling: str = "attention",
    vocab_size: int = len(VOCAB),
    d_model: int | None = None,
    input_scale: float = 1.0,
) -> ContextClassifier:
    """A freshly initialised classifier.

    Word vectors: by default one-hot vectors scaled by ``input_scale`` (``d_model =
    vocab_size``), so row ``w`` of ``W_Q`` is word ``w``'s query divided by the scale,
    and nothing about a word's sense is built into its vector. With ``d_model`` given,
    fixed standard-normal random vectors of that width instead. Projections and readout
    are normal with standard deviation ``1 / sqrt(fan_in)`` (fan-in scaling, cf. Glorot
    & Bengio 2010); ``b_out = 0``. Small random ``W_Q`` and ``W_K`` give attention close
    to uniform.

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
    d_k, d_v, n_classes, vocab_size : positive ints
    pooling : "attention" or "mean"
    d_model : int, optional -- width of random word vectors (default: one-hot, width
        vocab_size)
    input_scale : float -- length of the one-hot word vectors

    Raises
    ------
    ValueError
        If ``pooling`` is not one of the two names, or a size is not positive.
    """
    if pooling not in ("attention", "mean"):
        raise ValueError(f"pooling must be 'attention' or 'mean'; got {pooling!r}")
    for name, size in (
        ("d_model", d_model or 1),
        ("d_k", d_k),
        ("d_v", d_v),
        ("n_classes", n_classes),
        ("vocab_size", vocab_size),
    ):
        if size < 1:
            raise ValueError(f"{name} must be a positive integer; got {size}")
    rng = np.random.default_rng(rng)
    if d_model is None:
        d_model = vocab_size
        embeddings = input_scale * np.eye(vocab_size)
    else:
        embeddings = rng.normal(size=(vocab_size, d_model))
    return ContextClassifier(
        embeddings=embeddings,
        W_Q=rng.normal(size=(d_model, d_k)) / np.sqrt(d_model),
        W_K=rng.normal(size=(d_model, d_k)) / np.sqrt(d_model),
        W_V=rng.normal(size=(d_model, d_v)) / np.sqrt(d_model),
        W_out=rng.normal(size=(d_v, n_classes)) / np.sqrt(d_v),
        b_out=np.zeros(n_classes),
        pooling=pooling,
    )


@dataclass(frozen=True)
class ForwardResult:
    """Everything the forward pass computed (kept for the backward pass and for plots).

    logits, probs : (B, n_classes); query_weights : (B, L) the ambiguous word's
    attention weights over all positions (the only row the readout uses; padded
    positions get 0); X : (B, L, d_model) word vectors; q : (B, 1, d_k) the ambiguous
    word's query; K : (B, L, d_k), V : (B, L, d_v) keys and values of every position; z
    : (B, d_v) the readout's input (the ambiguous word's attention output).
    """

    logits: np.ndarray
    probs: np.ndarray
    query_weights: np.ndarray
    X: np.ndarray
    q: np.ndarray
    K: np.ndarray
    V: np.ndarray
    z: np.ndarray


def _check_batch(model: ContextClassifier, batch: ContextBatch) -> None:
    if not isinstance(batch, ContextBatch):
        raise TypeError(
            "batch must be an attnlib.data.context_task.ContextBatch; got "
            f"{type(batch).__name__}"
        )
    if batch.tokens.max(initial=0) >= model.embeddings.shape[0]:
        raise ValueError(
            f"token id {batch.tokens.max()} is outside the vocabulary of "
            f"{model.embeddings.shape[0]} words"
        )


def forward(model: ContextClassifier, batch: ContextBatch) -> ForwardResult:
    """Run the classifier on a batch.

    Only the ambiguous word's query row is computed (the readout uses nothing else);
    :func:`attention_map` gives the full ``(B, L, L)`` self-attention map.

    Returns
    -------
    ForwardResult (see its docstring for shapes). Class probabilities are
    ``softmax(logits)``; padded keys get weight 0.

    Raises
    ------
    TypeError, ValueError
        If ``batch`` is not a ContextBatch or holds token ids outside the vocabulary.
    """
    _check_batch(model, batch)
    rows = np.arange(len(batch))
    X = model.embeddings[batch.tokens]  # (B, L, d_model)
    K, V = X @ model.W_K, X @ model.W_V  # (B, L, d_k), (B, L, d_v)
    q = (X[rows, batch.query_index] @ model.W_Q)[:, None, :]  # (B, 1, d_k)
    mask = batch.key_mask()  # (B, 1, L)
    if model.pooling == "attention":
        Z, P = attention(q, K, V, mask=mask)  # (B, 1, d_v), (B, 1, L)
    else:  # mean pooling: uniform weights over the real tokens
        P = softmax(np.zeros(mask.shape), mask=mask)
        Z = P @ V
    z = Z[:, 0, :]
    logits = z @ model.W_out + model.b_out
    return ForwardResult(logits, softmax(logits), P[:, 0, :], X, q, K, V, z)


def attention_map(model: ContextClassifier, batch: ContextBatch) -> np.ndarray:
    """The full self-attention map ``(B, L, L)``: row ``i`` is position ``i``'s weights.

    Uses the same learned ``W_Q`` and ``W_K`` for every position (uniform rows under
    mean pooling); padded keys get weight 0.
    """
    _check_batch(model, batch)
    X = model.embeddings[batch.tokens]
    mask = batch.key_mask()
    if model.pooling == "mean":
        return softmax(np.zeros(X.shape[:2] + X.shape[1:2]), mask=mask)
    return attention(X @ model.W_Q, X @ model.W_K, X @ model.W_V, mask=mask)[1]


def cross_entropy(probs, labels) -> float:
    """Mean of ``-log probs[b, labels[b]]`` (natural log), clipped at 1e-300 to stay
    finite."""
    probs = np.asarray(probs, dtype=np.float64)
    labels = np.asarray(labels)
    if probs.ndim != 2 or labels.shape != probs.shape[:1]:
        raise ValueError(
            f"probs must be (B, n_classes) and labels (B,); got {probs.shape} "
            f"and {labels.shape}"
        )
    if (
        labels.dtype.kind not in "iu"
        or not ((0 <= labels) & (labels < probs.shape[1])).all()
    ):
        raise ValueError(
            f"labels must be class indices in 0..{probs.shape[1] - 1}; got {labels}"
        )
    return float(
        -np.mean(np.log(np.maximum(probs[np.arange(len(labels)), labels], 1e-300)))
    )


def loss(model: ContextClassifier, batch: ContextBatch) -> float:
    """Mean cross-entropy of the model's predictions on ``batch`` (labels must be
    0/1...)."""
    return cross_entropy(forward(model, batch).probs, batch.labels)


def loss_and_gradients(model: ContextClassifier, batch: ContextBatch):
    """The loss and its gradient with respect to every learned parameter.

    Backward pass, written out (B sequences, ``q_b`` the ambiguous word's position)::

        d logits = (probs - onehot(labels)) / B
        d W_out = z^T d logits,   d b_out = sum_b d logits,   d z = d logits W_out^T
        d q, d K, d V = attention_backward(q, K, V, d z, mask)
                                            (q: the ambiguous word's query)
        d W_Q = sum_b x_{b, q_b}^T d q_b,   d W_K = sum_b X_b^T d K_b,
        d W_V = sum_b X_b^T d V_b

    Returns
    -------
    loss : float
    grads : dict mapping each name in :data:`PARAMETER_NAMES` to an array of its shape
        (``W_Q`` and ``W_K`` get zero gradient under mean pooling).
    """
    f = forward(model, batch)
    B = len(batch)
    rows = np.arange(B)
    d_logits = f.probs.copy()
    d_logits[rows, batch.labels] -= 1.0
    d_logits /= B
    grads = {"W_out": f.z.T @ d_logits, "b_out": d_logits.sum(axis=0)}
    d_z = d_logits @ model.W_out.T  # (B, d_v)
    d_Z = d_z[:, None, :]  # (B, 1, d_v)
    if model.pooling == "attention":
        d_q, d_K, d_V = attention_backward(f.q, f.K, f.V, d_Z, mask=batch.key_mask())
    else:
        d_q, d_K = np.zeros_like(f.q), np.zeros_like(f.K)
        d_V = f.query_weights[:, :, None] * d_Z  # P^T dZ with P of shape (B, 1, L)
    x_query = f.X[rows, batch.query_index]  # (B, d_model)
    grads["W_Q"] = x_query.T @ d_q[:, 0, :]
    X_flat = f.X.reshape(-1, f.X.shape[-1])  # (B * L, d_model)
    grads["W_K"] = X_flat.T @ d_K.reshape(-1, d_K.shape[-1])
    grads["W_V"] = X_flat.T @ d_V.reshape(-1, d_V.shape[-1])
    return cross_entropy(f.probs, batch.labels), {
        name: grads[name] for name in PARAMETER_NAMES
    }


def accuracy(model: ContextClassifier, batch: ContextBatch) -> float:
    """Fraction of sequences whose most probable class equals the label."""
    return float(
        np.mean(np.argmax(forward(model, batch).logits, axis=1) == batch.labels)
    )


def train(
    model: ContextClassifier,
    train_batch: ContextBatch,
    test_batch: ContextBatch | None = None,
    *,
    steps: int = 150,
    lr: float = 0.03,
    record_every: int = 5,
) -> ContextClassifier:
    """Train ``model`` in place with full-batch Adam; record the curves in
       ``model.history``.

    Returns the same model (for chaining). Deterministic: no randomness is used here.
    ``model.history`` gains "step", "loss", "train_accuracy" and, only when a
    ``test_batch`` is given, "test_accuracy" (never a NaN placeholder).

    Raises ValueError if ``steps`` is negative.
    """
    if steps < 0:
        raise ValueError(f"steps must be >= 0; got {steps}")
    opt = Adam(lr=lr)
    params = model.params()
    hist = model.history
    keys = ("step", "loss", "train_accuracy")
    for key in keys + (("test_accuracy",) if test_batch is not None else ()):
        hist.setdefault(key, [])
    for step in range(steps + 1):
        value, grads = loss_and_gradients(model, train_batch)
        if step % record_every == 0 or step == steps:
            hist["step"].append(step)
            hist["loss"].append(value)
            hist["train_accuracy"].append(accuracy(model, train_batch))
            if test_batch is not None:
                hist["test_accuracy"].append(accuracy(model, test_batch))
        if step < steps:
            opt.step(params, grads)
    return model


def context_datasets(seed: int = 0, *, n_train: int = 1000, n_test: int = 1000):
    """The training and test batches used by :func:`train_context_classifier`
    (deterministic)."""
    rng = np.random.default_rng(seed)
    return make_context_task(n_train, rng), make_context_task(n_test, rng)


def train_context_classifier(
    seed: int = 0,
    *,
    pooling: str = "attention",
    steps: int = 40,
    lr: float = 0.05,
    n_train: int = 1000,
    n_test: int = 1000,
    d_k: int = 8,
    d_v: int = 8,
) -> ContextClassifier:
    """Build the context task, initialise a classifier and train it: the book's trained
       model.

    Everything follows from ``seed``: the data (:func:`context_datasets`) and the
    initialisation (``default_rng(seed + 1)``); no other randomness is used, so two
    calls with the same arguments return identical parameters. Takes a few seconds.

    Parameters
    ----------
    seed : int
    pooling : "attention" (learned W_Q, W_K) or "mean" (uniform weights baseline)
    steps, lr : Adam steps (full batch) and learning rate
    n_train, n_test : dataset sizes
    d_k, d_v : widths of queries/keys and values

    Returns
    -------
    ContextClassifier, trained; ``model.history`` holds the curves (loss on the training
    set, training and test accuracy, every 2 steps). Evaluate with
    ``accuracy(model, context_datasets(seed)[1])``.

    Example
    -------
    >>> model = train_context_classifier(seed=0)
    >>> train_batch, test_batch = context_datasets(seed=0)
    >>> accuracy(model, test_batch) > 0.95
    True
    """
    train_batch, test_batch = context_datasets(seed, n_train=n_train, n_test=n_test)
    model = init_context_classifier(seed + 1, d_k=d_k, d_v=d_v, pooling=pooling)
    return train(model, train_batch, test_batch, steps=steps, lr=lr, record_every=2)
