"""Multi-head attention: several attention heads side by side, each with its own
   projections.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O`` with
``head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i)`` (Vaswani et al. 2017, section 3.2.2).

The per-head projections are stored as one matrix per role, ``W_Q`` of shape
``(d_query_in, d_model)`` and so on, whose columns are cut into ``num_heads``
consecutive blocks of ``d_head = d_model / num_heads`` columns: block ``h`` is head
``h``'s projection. Queries, keys and values may have different widths (cross-attention
between two models).

Layouts: inputs ``(..., L, d)``; per-head arrays ``(..., H, L, d_head)``; weights
``(..., H, L_q, L_k)``. Splitting and merging only move features between axes; they
never mix positions (tokens).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core._numerics import taking_part
from attnlib.core._rotary import positions_of, rotate
from attnlib.core._validation import (
    as_float_array,
    as_generator,
    as_width,
    compute_dtype,
    finite_real_array,
    keys_values_batch,
    mask_for_scores,
    require_ndim,
    to_dtype,
)
from attnlib.core.attention import attention


def _num_heads(num_heads, d_model: int) -> int:
    """Check that ``num_heads`` is a positive integer dividing ``d_model``."""
    num_heads = as_width(num_heads, "num_heads")
    if d_model % num_heads:
        raise ValueError(
            f"model width d_model={d_model} is not divisible by num_heads={num_heads}"
        )
    return num_heads


def split_heads(x, num_heads: int) -> np.ndarray:
    """Cut the feature axis into heads: ``(..., L, d_model) -> (..., H, L, d_model /
       H)``.

    Head ``h`` receives features ``h*d_head : (h+1)*d_head`` of every position. The
    reshape is followed by a transpose, so tokens never mix across positions.

    Parameters
    ----------
    x : array_like, shape (..., L, d_model), finite, a float or integer dtype (kept)
    num_heads : int, dividing ``d_model``

    Returns
    -------
    numpy.ndarray, shape (..., H, L, d_model / H), same dtype

    Raises
    ------
    ValueError
        If ``x`` has fewer than 2 axes or holds NaN or inf, ``num_heads`` is below 1,
        or ``d_model`` is not divisible by ``num_heads`` (both numbers named).
    TypeError
        If ``num_heads`` is not an integer (``True`` included), or ``x`` is not real.

    Example: ``split_heads(np.arange(8).reshape(1, 2, 4), 2)[0]`` is
    ``[[[0, 1], [4, 5]], [[2, 3], [6, 7]]]``.

    Source: Vaswani et al. (2017), section 3.2.2 (``d_k = d_v = d_model / h``).
    """
    x = finite_real_array(x, "x")
    require_ndim(x, 2, "x", "(..., L, d_model)")
    d_model = x.shape[-1]
    num_heads = _num_heads(num_heads, d_model)
    x = x.reshape(
        x.shape[:-1] + (num_heads, d_model // num_heads)
    )  # (..., L, H, d_head)
    return np.swapaxes(x, -3, -2)  # (..., H, L, d_head)


def merge_heads(x) -> np.ndarray:
    """Inverse of :func:`split_heads`: ``(..., H, L, d_head) -> (..., L, H * d_head)``.

    Transposes heads back behind the positions before reshaping (merging without the
    transpose is a classic bug that mixes tokens), so ``merge_heads(split_heads(x, H))``
    equals ``x`` exactly.

    Parameters: ``x``, array_like of shape (..., H, L, d_head), finite, a float or
    integer dtype (kept). Returns: numpy.ndarray of shape (..., L, H * d_head).
    Raises: ``ValueError`` if ``x`` has fewer than 3 axes or holds NaN or inf,
    ``TypeError`` if it is not real.

    Source: Vaswani et al. (2017), section 3.2.2 (``Concat(head_1, ..., head_h)``).
    """
    x = finite_real_array(x, "x")
    require_ndim(x, 3, "x", "(..., H, L, d_head)")
    x = np.swapaxes(x, -3, -2)  # (..., L, H, d_head)
    return x.reshape(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))


@dataclass(frozen=True)
class MultiHeadParams:
    """Learned parameters of one multi-head attention layer.

    Attributes
    ----------
    W_Q : (d_query_in, d_model)   W_K : (d_key_in, d_model)
    W_V : (d_value_in, d_model)
    W_O : (d_model, d_out)
    num_heads : int, dividing d_model
    b_Q, b_K, b_V : (d_model,) or None;  b_O : (d_out,) or None  (BERT-style biases)

    The arrays are converted to float arrays on construction and checked: NaN or inf
    raises ``ValueError`` naming the array, a wrong shape
    raises ``ValueError`` naming the shapes involved, ``d_model`` not divisible by
    ``num_heads`` raises ``ValueError`` saying so.

    Source: Vaswani et al. (2017), section 3.2.2 (``W_i^Q, W_i^K, W_i^V, W^O``).
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    num_heads: int
    b_Q: np.ndarray | None = None
    b_K: np.ndarray | None = None
    b_V: np.ndarray | None = None
    b_O: np.ndarray | None = None

    def __post_init__(self):
        for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"):
            value = getattr(self, name)
            if (
                value is not None
            ):  # frozen dataclass: set the converted array explicitly
                value = as_float_array(value, name)
                if not np.isfinite(value).all():
                    raise ValueError(f"{name} holds NaN or inf")
                object.__setattr__(self, name, value)
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            if getattr(self, name).ndim != 2:
                raise ValueError(
                    f"{name} must be a matrix; got shape {getattr(self, name).shape}"
                )
        d_model = self.W_Q.shape[1]
        for name in ("W_K", "W_V"):
            if getattr(self, name).shape[1] != d_model:
                raise ValueError(
                    f"W_Q {self.W_Q.shape} and {name} {getattr(self, name).shape} "
                    "must have the same number of columns d_model"
                )
        if self.W_O.shape[0] != d_model:
            raise ValueError(
                f"W_O {self.W_O.shape} must have d_model={d_model} rows "
                f"(W_Q is {self.W_Q.shape})"
            )
        for name, size in (
            ("b_Q", d_model),
            ("b_K", d_model),
            ("b_V", d_model),
            ("b_O", self.W_O.shape[1]),
        ):
            b = getattr(self, name)
            if b is not None and b.shape != (size,):
                raise ValueError(f"{name} must have shape ({size},); got {b.shape}")
        object.__setattr__(self, "num_heads", _num_heads(self.num_heads, d_model))

    @property
    def d_model(self) -> int:
        """Total width of all heads together (columns of ``W_Q``)."""
        return self.W_Q.shape[1]

    @property
    def d_head(self) -> int:
        """Width of one head, ``d_model / num_heads``."""
        return self.d_model // self.num_heads


def init_multi_head(
    rng: np.random.Generator,
    d_model: int,
    num_heads: int,
    *,
    d_query_in: int | None = None,
    d_key_in: int | None = None,
    d_value_in: int | None = None,
    d_out: int | None = None,
) -> MultiHeadParams:
    """Random (Glorot-uniform) float64 parameters for :func:`multi_head_attention`.

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
        E.g. ``np.random.default_rng(0)``: reproducible.
    d_model : int, total width of the heads
    num_heads : int, dividing ``d_model``
    d_query_in, d_key_in, d_value_in, d_out : int, optional
        Widths of the queries, keys and values fed in and of the output; default
        ``d_model``.

    Returns
    -------
    MultiHeadParams without biases, float64: ``W_Q`` of shape (d_query_in, d_model),
    ``W_K`` (d_key_in, d_model), ``W_V`` (d_value_in, d_model), ``W_O`` (d_model,
    d_out), each drawn from ``U(-a, a)`` with ``a = sqrt(6 / (n_in + n_out))``.

    Raises
    ------
    ValueError
        If ``d_model`` is not divisible by ``num_heads`` (saying so), or a width is
        below 1 (named).
    TypeError
        If a width or ``num_heads`` is not an integer (named).

    Source: Vaswani et al. (2017), section 3.2.2; Glorot & Bengio (2010), equation (16).
    """
    widths = {
        name: as_width(d, name)
        for name, d in (
            ("d_model", d_model),
            ("d_query_in", d_query_in),
            ("d_key_in", d_key_in),
            ("d_value_in", d_value_in),
            ("d_out", d_out),
        )
        if d is not None
    }
    _num_heads(num_heads, widths["d_model"])
    rng = as_generator(rng)  # a Generator is returned unchanged; a seed makes one

    def glorot(n_in, n_out):
        limit = np.sqrt(6.0 / (n_in + n_out))
        return rng.uniform(-limit, limit, size=(n_in, n_out))

    dq, dk, dv = (
        d if d is not None else d_model for d in (d_query_in, d_key_in, d_value_in)
    )
    do = d_out if d_out is not None else d_model
    return MultiHeadParams(
        glorot(dq, d_model),
        glorot(dk, d_model),
        glorot(dv, d_model),
        glorot(d_model, do),
        num_heads,
    )


def _project(x, W, b):
    """``x W + b``: one projection applied to every position; ``OverflowError`` if a
    projected number does not fit the dtype (never a silent inf)."""
    with np.errstate(over="ignore", invalid="ignore"):
        y = x @ W if b is None else x @ W + b
    if not np.isfinite(y).all():
        raise OverflowError(
            f"a projection of inputs {x.shape} by {W.shape} overflows {y.dtype}; "
            "pass float64 inputs or smaller ones"
        )
    return y


def _params_in(params: MultiHeadParams, work) -> MultiHeadParams:
    """The parameters cast to the compute dtype of the inputs (float32 stays
    float32)."""
    if params.W_Q.dtype == work and params.W_O.dtype == work:
        return params
    fields = ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O")
    cast = {
        f: None if getattr(params, f) is None else getattr(params, f).astype(work)
        for f in fields
    }
    return MultiHeadParams(num_heads=params.num_heads, **cast)


def multi_head_attention(
    queries,
    keys,
    values,
    params: MultiHeadParams,
    mask=None,
    *,
    average_weights: bool = False,
    dropout: float = 0.0,
    rng: np.random.Generator | None = None,
    keep=None,
    return_keep: bool = False,
    rotary: bool = False,
    query_positions=None,
    key_positions=None,
):
    """Multi-head scaled dot-product attention.

    Each head ``h`` attends with its own projections, ``softmax(Q_h K_h^T /
    sqrt(d_head)) V_h``; the heads' outputs are concatenated (:func:`merge_heads`) and
    projected by ``W_O``.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_query_in)
    keys : array_like, shape (..., L_k, d_key_in)
    values : array_like, shape (..., L_k, d_value_in)
        Leading (batch) axes broadcast; call their shape ``batch``.
    params : MultiHeadParams
    mask : array_like of bool, optional; ``True`` = may attend. Its number of axes
        says what it is (the one mask rule of the package docstring), never its sizes:
        * at most ``len(batch) + 2`` axes: one mask per example, shared by all heads,
          broadcastable to ``batch + (L_q, L_k)`` (the layout of
          :func:`attnlib.attention`, e.g. ``padding_mask(...)`` of shape ``(B, 1,
          L_k)``, whatever ``B`` and ``H`` are);
        * exactly one axis more: one mask per head, broadcastable to ``batch + (H, L_q,
          L_k)``, the head axis third from the end (size ``H`` or 1); e.g.
          ``mask[None]`` for one ``(H, L_q, L_k)`` mask used by every example.
        A head in which a query may attend nothing gives that query zero weights and a
        zero contribution (no NaN). Queries, keys and values that no head may use may
        hold anything (even NaN or inf).
    average_weights : bool
        If True, return the weights averaged over heads, shape ``(..., L_q, L_k)``.
        By default every head's weights are returned.
    dropout, rng, keep, return_keep
        Dropout on every head's attention weights, exactly as in
        :func:`attnlib.attention` (off by default; ``rng``, a
        ``numpy.random.Generator``, is required when ``dropout > 0`` unless a keep-mask
        ``keep`` of shape ``batch + (H, L_q, L_k)`` is replayed). The weights returned
        are those before dropout.
    rotary : bool, rotate every head's queries and keys by their positions (RoPE, Su
        et al. 2021) before the scores; ``d_head`` must then be even
    query_positions, key_positions : int arrays of shape (L_q,) and (L_k,), optional,
        the positions rotary uses (default ``0 .. L - 1``; for queries after ``n``
        cached keys pass ``n + arange(L_q)``)

    Returns
    -------
    output : numpy.ndarray, shape (..., L_q, d_out)
    weights : numpy.ndarray, shape (..., H, L_q, L_k), or (..., L_q, L_k) if averaged
        Both in the common float dtype of ``queries``, ``keys`` and ``values`` (float16
        in, float16 out); computed in float32 (float16/float32 in) or float64, the
        parameters cast to that dtype. Each head runs :func:`attnlib.attention`, so the
        shared contract (errors, masks, non-finite numbers, overflow) holds per head.
    keep : numpy.ndarray of bool, shape batch + (H, L_q, L_k), or None; only with
        ``return_keep=True``

    Raises
    ------
    ValueError
        If an input's width does not match its projection, the leading axes do not
        broadcast, the mask does not fit its layout (the shapes are named), or a query,
        key or value that takes part holds NaN or inf.
    TypeError
        If ``mask`` is not boolean or an input is not a float or integer array.
    OverflowError
        If an allowed score or the output does not fit the compute or the input dtype.

    Source: Vaswani et al. (2017), section 3.2.2; Su et al. (2021), section 3.4
    (rotary).
    """
    q, k, v, mask, batch, out_dtype = _check_multi_head(
        queries, keys, values, mask, params
    )  # the contract: q, k, v in the compute dtype; NaN only where no head looks
    H, params = params.num_heads, _params_in(params, q.dtype)
    qh = split_heads(_project(q, params.W_Q, params.b_Q), H)  # (..., H, L_q, d_head)
    kh = split_heads(_project(k, params.W_K, params.b_K), H)  # (..., H, L_k, d_head)
    vh = split_heads(_project(v, params.W_V, params.b_V), H)  # (..., H, L_k, d_head)
    if rotary:  # RoPE: q_m -> R_m q_m, k_n -> R_n k_n
        qh = rotate(qh, positions_of(query_positions, qh.shape[-2], "query_positions"))
        kh = rotate(kh, positions_of(key_positions, kh.shape[-2], "key_positions"))
    heads, weights, keep = attention(
        qh, kh, vh, mask, dropout=dropout, rng=rng, keep=keep, return_keep=True
    )  # (..., H, L_q, d_head), (..., H, L_q, L_k)
    output = _project(merge_heads(heads), params.W_O, params.b_O)  # (..., L_q, d_out)
    if average_weights:
        weights = weights.mean(axis=-3)
    results = (
        to_dtype(output, out_dtype, "multi-head outputs"),
        to_dtype(weights, out_dtype, "attention weights"),
    )
    return results + (keep,) if return_keep else results


# --- the contract's checks ------------------------------------------------------


def _check_multi_head(queries, keys, values, mask, params):
    """The contract of :func:`attnlib.multi_head_attention`, checked in one place.

    Returns ``(q, k, v, mask, batch, out_dtype)``: the inputs in the compute dtype, the
    mask by the one mask rule (:func:`attnlib.core._validation.mask_for_scores`, with a
    head axis), the broadcast leading axes and the dtype of the results. Rows that no
    head may use are set to 0 (so NaN or inf stored there cannot reach a head through
    the projections); the others must be finite. Raises ``ValueError`` naming the shapes
    when an input's width does not match its projection, ``L_k`` differs between keys
    and values, the leading axes do not broadcast or the mask does not fit;
    ``TypeError`` for non-real inputs or a non-boolean mask; ``ValueError`` for NaN or
    inf that takes part.
    """
    if not isinstance(params, MultiHeadParams):
        raise TypeError(
            "params must be MultiHeadParams (from attnlib.init_multi_head); got "
            f"{type(params).__name__}"
        )
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    for name, arr, W in (
        ("queries", q, params.W_Q),
        ("keys", k, params.W_K),
        ("values", v, params.W_V),
    ):
        require_ndim(arr, 2, name, "(..., L, d)")
        if arr.shape[-1] != W.shape[0]:
            raise ValueError(
                f"{name} of shape {arr.shape} do not fit a projection of shape "
                f"{W.shape}: their last axis must equal its rows"
            )
    batch = keys_values_batch(q, k, v)
    out_dtype = np.result_type(q.dtype, k.dtype, v.dtype)
    work = compute_dtype(out_dtype)
    q, k, v = q.astype(work), k.astype(work), v.astype(work)
    H, scores = params.num_heads, batch + (q.shape[-2], k.shape[-2])
    mask = mask_for_scores(mask, batch, q.shape[-2], k.shape[-2], H)
    in_any_head = None  # (..., L_q, L_k): may some head attend?
    if mask is not None:
        in_any_head = np.broadcast_to(mask, batch + (H,) + scores[-2:]).any(axis=-3)
    q, k, v = taking_part(q, k, v, in_any_head, scores)
    return q, k, v, mask, batch, out_dtype
