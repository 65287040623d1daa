"""The bottleneck: one fixed context vector versus attention over every encoder state.

An encoder-decoder without attention squeezes the whole input into the encoder's last
hidden state and hands only that vector to the decoder (Cho et al. 2014; Sutskever et
al. 2014). Bahdanau, Cho & Bengio (2015, section 3) let the decoder look back at *every*
encoder state instead, with a fresh weighting for each output step. This module holds
the pieces the book uses to measure the difference:

* ``init_rnn`` / ``rnn_encode``  a plain (Elman) tanh recurrent encoder
* ``final_state_jacobians``      how strongly each input still moves the final state
* ``attend_to_positions``        dot-product attention that fetches chosen encoder
                                 states
* ``decoder_context``            Bahdanau's additive attention for a decoder step
* ``linear_recovery_r2``         how well a least-squares linear reader recovers targets
* ``capacity_bound``             the ceiling any linear reader of one vector must obey
* ``recovery_experiment``        the measured comparison, as the sequence grows

Conventions: row vectors, as everywhere in attnlib. Inputs are ``(..., T, m)`` (any
leading batch axes, then ``T`` time steps of ``m`` features), hidden states ``(..., T,
h)``, and a weight maps a row on its right: ``x_t @ W_x``.

Sources: Cho et al. (2014), "Learning Phrase Representations using RNN Encoder-Decoder
for Statistical Machine Translation"; Sutskever, Vinyals & Le (2014), "Sequence to
Sequence Learning with Neural Networks"; Bahdanau, Cho & Bengio (2015), "Neural Machine
Translation by Jointly Learning to Align and Translate", section 3; Bengio, Simard &
Frasconi (1994), "Learning Long-Term Dependencies with Gradient Descent is Difficult"
(vanishing gradients).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core._validation import (
    as_float_array,
    as_positive,
    as_width,
    finite_array,
    finite_arrays,
    fits,
    to_dtype,
)
from attnlib.core.attention import attention, weighted_sum
from attnlib.core.scores import additive_scores
from attnlib.core.softmax import softmax
from attnlib.models.recurrent import _check_rnn, init_rnn, rnn_encode

__all__ = [
    "final_state_jacobians",
    "attend_to_positions",
    "decoder_context",
    "linear_recovery_r2",
    "capacity_bound",
    "RecoveryResult",
    "recovery_experiment",
]


def final_state_jacobians(inputs, W_x, W_h, b, h0=None) -> np.ndarray:
    """How much each input still moves the final state: ``J_t = d h_T / d x_t``.

    By the chain rule, with ``D_s = diag(1 - h_s**2)`` (the derivative of tanh) and the
    column-vector Jacobians ``d h_s / d h_{s-1} = D_s W_h^T``, ``d h_t / d x_t = D_t
    W_x^T``::

        J_t = D_T W_h^T D_{T-1} W_h^T ... D_{t+1} W_h^T D_t W_x^T

    a product of ``T - t`` recurrent factors. When those factors shrink vectors, ``J_t``
    decays roughly geometrically with the distance ``T - t``: the same product carries
    gradients backwards in training, which is why they vanish (Bengio et al. 1994).

    Parameters
    ----------
    inputs, W_x, W_h, b, h0 : as for :func:`rnn_encode`

    Returns
    -------
    numpy.ndarray, shape (..., T, h, m)
        ``J[..., t, i, j] = d h_T[i] / d x_t[j]``, computed in float64 and returned in
        the arguments' common float dtype.

    Raises
    ------
    As for :func:`rnn_encode`; ``OverflowError`` if a Jacobian entry does not fit the
    (float16) dtype it would be returned in.

    Source: Bengio, Simard & Frasconi (1994), section II (products of Jacobians);
    Pascanu et al. (2013) for the same product in this notation.
    """
    x, Wx, Wh, bb, _, out_dtype = _check_rnn(inputs, W_x, W_h, b, h0)
    states, _ = rnn_encode(x, Wx, Wh, bb, h0)
    T, h = x.shape[-2], Wx.shape[1]
    deriv = 1.0 - states.astype(x.dtype) ** 2  # (..., T, h): diagonal of D_t
    # G = d h_T / d h_t, built from t = T backwards; starts as the identity.
    G = np.broadcast_to(np.eye(h), states.shape[:-2] + (h, h)).copy()
    J = np.empty(states.shape[:-2] + (T, h, x.shape[-1]), dtype=x.dtype)
    for t in range(T - 1, -1, -1):
        GD = G * deriv[..., t, None, :]  # G @ D_t (scale the columns)
        J[..., t, :, :] = GD @ Wx.T  # d h_T / d x_t
        G = GD @ Wh.T  # d h_T / d h_{t-1}
    return to_dtype(J, out_dtype, "Jacobian entries")


def attend_to_positions(states, positions, *, sharpness: float = 20.0):
    """Dot-product attention over all encoder states that fetches the ones asked for.

    Keys carry only position: key ``j`` is the one-hot vector ``e_j`` of length ``T``,
    and the query for position ``t`` is ``sharpness * e_t``. The score of the asked
    position is ``sharpness`` and every other score is 0, so (with ``attnlib.attention``
    and ``scale=1``) the weight on position ``t`` is ``exp(sharpness) / (exp(sharpness)
    + T - 1)``; the values are the encoder states. This stands in for a decoder that
    already knows where to look (a trained model learns that, the "alignment" of
    Bahdanau et al.), so a measurement with it tests only what the encoder states
    contain.

    Parameters
    ----------
    states : array_like, shape (..., T, h)
    positions : sequence of int, length L_q, each in ``[-T, T)``
    sharpness : float > 0

    Returns
    -------
    contexts : numpy.ndarray, shape (..., L_q, h)
        One context vector per asked position (a weighted sum of all ``T`` states).
    weights : numpy.ndarray, shape (L_q, T), rows summing to 1.

    Raises
    ------
    ValueError
        If ``states`` has fewer than 2 axes or holds NaN or inf, a position is out of
        range, or ``sharpness`` is not a positive finite number.
    TypeError
        If ``states`` is not real or ``sharpness`` is not a number (``True`` included).

    Source: Bahdanau et al. (2015), section 3.1 (a context vector per output step as a
    weighted sum of all annotations); Vaswani et al. (2017), equation (1) for the
    scoring.
    """
    H = finite_array(states, "states", "(..., T, h)", 2)
    sharpness = as_positive(sharpness, "sharpness")
    T = H.shape[-2]
    pos = np.asarray(positions)
    if pos.ndim != 1 or pos.dtype.kind not in "iu":
        raise ValueError(
            f"positions must be a 1-D sequence of integers; got {positions!r}"
        )
    if pos.size and (pos.min() < -T or pos.max() >= T):
        raise ValueError(
            f"positions {pos.tolist()} out of range for T = {T} states {H.shape}"
        )
    keys = np.eye(T)  # (T, T): key j = e_j
    queries = sharpness * keys[pos]  # (L_q, T)
    contexts, weights = attention(queries, keys, H, scale=1.0)
    # Queries and keys carry no batch axes, so every sequence gets the same weights:
    # keep one.
    return contexts, weights[(0,) * (weights.ndim - 2)]


def decoder_context(decoder_states, encoder_states, W_q, W_k, w_v):
    """One Bahdanau decoder step: additive scores, softmax, and a fresh context vector.

    ``e_j = w_v^T tanh(s W_q + h_j W_k)``, ``alpha = softmax(e)``, ``c = sum_j alpha_j
    h_j``: the decoder state ``s`` scores every encoder state ``h_j``, so each output
    step gets its own context ``c`` instead of one vector computed once for the whole
    input.

    Parameters
    ----------
    decoder_states : array_like, shape (..., L_q, d_s)
        One row per decoder step (the state ``s_{i-1}`` before emitting word ``i``).
    encoder_states : array_like, shape (..., T, h)
        The annotations ``h_1 ... h_T``; they are both keys and values.
    W_q : array_like, shape (d_s, a)
    W_k : array_like, shape (h, a)
    w_v : array_like, shape (a,)

    Returns
    -------
    contexts : numpy.ndarray, shape (..., L_q, h)
    weights : numpy.ndarray, shape (..., L_q, T), rows summing to 1

    Raises
    ------
    ValueError
        If a weight's shape does not fit (see :func:`attnlib.additive_scores`), or an
        array holds NaN or inf (named).
    TypeError
        If an array is not real (named).

    Source: Bahdanau, Cho & Bengio (2015), section 3.1, equations (5)-(6), and
    appendix A.1.2.
    """
    # checked and named as here (additive_scores would call them queries and keys)
    s = finite_array(decoder_states, "decoder_states", "(..., L_q, d_s)", 2)
    H = finite_array(encoder_states, "encoder_states", "(..., T, h)", 2)
    W_q, W_k, w_v = finite_arrays(W_q=W_q, W_k=W_k, w_v=w_v)
    scores = additive_scores(s, H, W_q, W_k, w_v)  # (..., L_q, T)
    weights = softmax(scores, axis=-1)  # (..., L_q, T)
    return weighted_sum(weights, H), weights


def linear_recovery_r2(train_features, train_targets, test_features, test_targets):
    """Fit the best affine reader by least squares, and score it on held-out data (R^2).

    The reader predicts ``y_hat = f A + c``, with ``A`` and ``c`` minimising the squared
    error on the training rows (centre features and targets on their training means,
    then solve the normal equations ``(F^T F) A = F^T Y`` with a pseudo-inverse). On the
    test rows each target coordinate gets ``R^2 = 1 - sum (y - y_hat)^2 / sum (y -
    mean(y))^2`` (1: perfect; 0: no better than predicting the mean; slightly negative
    for a useless reader, which has fitted noise), and the coordinates' R^2 are
    averaged.

    Parameters
    ----------
    train_features : array_like, shape (..., N_train, h)
    train_targets : array_like, shape (..., N_train, m)
    test_features : array_like, shape (..., N_test, h)
    test_targets : array_like, shape (..., N_test, m)
        Leading axes (if any) index independent problems, each with its own reader; they
        must be the same for all four arrays.

    Returns
    -------
    float for 2-D inputs, else numpy.ndarray of the leading shape (float64).

    Raises
    ------
    ValueError
        If shapes disagree (all four named), there are fewer training rows than
        parameters ``h + 1``, an array holds NaN or inf, or a test target is constant
        (R^2 undefined).
    OverflowError
        If the squared errors do not fit float64 (inputs near 1e300).

    Source: ordinary least squares and the coefficient of determination.
    """
    arrays = [
        as_float_array(a, name).astype(np.float64)
        for a, name in (
            (train_features, "train_features"),
            (train_targets, "train_targets"),
            (test_features, "test_features"),
            (test_targets, "test_targets"),
        )
    ]
    Ftr, Ytr, Fte, Yte = arrays
    shapes = (
        f"train_features {Ftr.shape}, train_targets {Ytr.shape}, "
        f"test_features {Fte.shape}, test_targets {Yte.shape}"
    )
    if min(a.ndim for a in arrays) < 2 or len({a.ndim for a in arrays}) != 1:
        raise ValueError(
            "all four arrays must have shape (..., N, d) with the same rank; "
            f"got {shapes}"
        )
    lead = Ftr.shape[:-2]
    if (
        Ytr.shape[:-1] != Ftr.shape[:-1]
        or Yte.shape[:-1] != Fte.shape[:-1]
        or Fte.shape[-1] != Ftr.shape[-1]
        or Yte.shape[-1] != Ytr.shape[-1]
        or Fte.shape[:-2] != lead
        or Ytr.shape[:-2] != lead
    ):
        raise ValueError(f"shapes disagree: {shapes}")
    n, h = Ftr.shape[-2:]
    if n < h + 1:
        raise ValueError(
            f"need at least h + 1 = {h + 1} training rows; got {n} ({shapes})"
        )
    for name, a in zip(
        ("train_features", "train_targets", "test_features", "test_targets"), arrays
    ):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} holds NaN or inf")
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # fits
        r2 = np.mean(_r2_per_target(Ftr, Ytr, Fte, Yte), axis=-1)  # over the m targets
    r2 = fits(r2, "the squared errors behind R^2")  # finite inputs: an overflow
    return float(r2) if r2.ndim == 0 else r2


def _r2_per_target(Ftr, Ytr, Fte, Yte) -> np.ndarray:
    """Held-out R^2 of the least-squares affine reader, one per target column:
    (..., m)."""
    f_mean = Ftr.mean(axis=-2, keepdims=True)
    y_mean = Ytr.mean(axis=-2, keepdims=True)
    Fc, Yc = Ftr - f_mean, Ytr - y_mean
    # Gram matrices with einsum: small and exact, and free of BLAS threading overhead.
    gram = np.einsum("...ni,...nj->...ij", Fc, Fc)  # (..., h, h)
    cross = np.einsum("...ni,...nj->...ij", Fc, Yc)  # (..., h, m)
    A = np.linalg.pinv(gram, hermitian=True) @ cross  # (..., h, m)
    pred = (Fte - f_mean) @ A + y_mean
    if np.any(np.ptp(Yte, axis=-2) == 0):  # not from total: it can underflow to 0
        raise ValueError("a test target is constant, so R^2 is undefined")
    total = ((Yte - Yte.mean(axis=-2, keepdims=True)) ** 2).sum(axis=-2)
    resid = ((Yte - pred) ** 2).sum(axis=-2)
    return 1.0 - resid / total


def capacity_bound(hidden_size: int, input_size: int, length: int) -> float:
    """Ceiling on the average R^2 of any linear reader of one h-dimensional vector.

    Suppose the ``T * m`` input numbers are independent with equal variance. Whatever
    the encoder, the best linear reader of one vector ``z`` of size ``h`` explains,
    summed over all ``T * m`` numbers, at most ``h`` of their variance (it projects them
    onto a space spanned by ``h`` variables). The average R^2 per number is therefore at
    most ``min(1, h / (T * m))``.

    Raises
    ------
    ValueError
        If a size is below 1 (``TypeError`` if it is not an integer), each named.

    Source: linear algebra (the trace of a rank-``h`` orthogonal projection is ``h``).
    """
    h, m = as_width(hidden_size, "hidden_size"), as_width(input_size, "input_size")
    T = as_width(length, "length")
    return min(1.0, h / (T * m))


@dataclass(frozen=True)
class RecoveryResult:
    """Measured recovery of each input, by position, for each sequence length.

    ``final_by_position[i]`` and ``attention_by_position[i]`` are arrays of length
    ``lengths[i]``: the held-out R^2 of recovering ``x_t`` (t = 1 ... T) from the final
    state alone, and from the context that attention fetches for position ``t``.
    """

    lengths: tuple
    hidden_size: int
    input_size: int
    final_by_position: tuple
    attention_by_position: tuple

    @property
    def final_mean(self) -> np.ndarray:
        """Average over positions of the final-state reader's R^2, one per length."""
        return np.array([r.mean() for r in self.final_by_position])

    @property
    def attention_mean(self) -> np.ndarray:
        """Average over positions of the attention reader's R^2, one per length."""
        return np.array([r.mean() for r in self.attention_by_position])

    @property
    def bound(self) -> np.ndarray:
        """:func:`capacity_bound` for each length."""
        return np.array(
            [capacity_bound(self.hidden_size, self.input_size, T) for T in self.lengths]
        )


def recovery_experiment(
    lengths,
    *,
    input_size: int = 2,
    hidden_size: int = 16,
    n_train: int = 2000,
    n_test: int = 1000,
    spectral_radius: float = 0.9,
    input_scale: float = 0.5,
    seed: int = 0,
) -> RecoveryResult:
    """Measure how well each earlier input can be read back, as the sequence grows.

    One random tanh RNN (:func:`init_rnn`, seeded) encodes ``n_train + n_test``
    sequences of independent standard-normal inputs ``x_1 ... x_T`` (``m = input_size``
    numbers each), for each ``T`` in ``lengths``. For every position ``t`` two readers,
    each an affine map fitted by least squares on the training sequences and scored by
    R^2 on the held-out ones (:func:`linear_recovery_r2`), try to recover ``x_t``:

    * the *final-state reader* sees only ``h_T``, the fixed context vector;
    * the *attention reader* sees the context that :func:`attend_to_positions` fetches
      for position ``t`` from all ``T`` encoder states.

    Both get one vector of size ``h`` per question and the same kind of reader; the
    difference is that the attention reader's vector is chosen, per question, among
    ``T``.

    Parameters
    ----------
    lengths : sequence of int >= 1
    input_size, hidden_size : int >= 1
    n_train : int > hidden_size; n_test : int >= 2
    spectral_radius, input_scale : passed to :func:`init_rnn`
    seed : int, seeds the RNN and the data

    Returns
    -------
    RecoveryResult

    Raises
    ------
    ValueError
        If a length is below 1 or a count is too small.

    Sources: Cho et al. (2014) and Sutskever et al. (2014) for the fixed vector;
    Bahdanau et al. (2015), section 3, for reading every encoder state.
    """
    lengths = tuple(int(T) for T in lengths)
    if not lengths or min(lengths) < 1:
        raise ValueError(
            f"lengths must be a non-empty sequence of integers >= 1; got {lengths}"
        )
    if n_train < hidden_size + 1 or n_test < 2:
        raise ValueError(
            f"need n_train >= hidden_size + 1 = {hidden_size + 1} and n_test >= 2; "
            f"got n_train={n_train}, n_test={n_test}"
        )
    rng = np.random.default_rng(seed)
    params = init_rnn(
        rng,
        input_size,
        hidden_size,
        spectral_radius=spectral_radius,
        input_scale=input_scale,
    )
    finals, attended = [], []
    for T in lengths:
        x = rng.standard_normal((n_train + n_test, T, input_size))
        states, final = rnn_encode(x, *params)
        contexts, _ = attend_to_positions(states, np.arange(T))  # (N, T, h)
        tr, te = slice(0, n_train), slice(n_train, None)
        # Final-state reader: one feature vector for every position, so one
        # least-squares fit serves all T * m target numbers at once; then average each
        # position's m.
        flat = x.reshape(x.shape[0], T * input_size)
        per_number = _r2_per_target(final[tr], flat[tr], final[te], flat[te])
        finals.append(per_number.reshape(T, input_size).mean(axis=-1))
        # Attention reader: position t as the leading axis, (T, N, .), one reader each.
        xs = np.moveaxis(x, 1, 0)
        cs = np.moveaxis(contexts, 1, 0)
        attended.append(linear_recovery_r2(cs[:, tr], xs[:, tr], cs[:, te], xs[:, te]))
    return RecoveryResult(
        lengths=lengths,
        hidden_size=int(hidden_size),
        input_size=int(input_size),
        final_by_position=tuple(finals),
        attention_by_position=tuple(attended),
    )
