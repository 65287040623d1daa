"""Multi-head attention: several attention heads side by side, each with its own projections.

``MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W_O`` with
``head_i = Attention(Q W_Q^i, K W_K^i, V W_V^i)`` (Vaswani et al. 2017, section 3.2.2).

The per-head projections are stored as one matrix per role, ``W_Q`` of shape
``(d_query_in, d_model)`` and so on, whose columns are cut into ``num_heads`` consecutive
blocks of ``d_head = d_model / num_heads`` columns: block ``h`` is head ``h``'s projection.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import as_bool_mask, as_float_array, require_ndim
from .attention import attention


def split_heads(x, num_heads: int) -> np.ndarray:
    """Cut the feature axis into heads: ``(..., L, d_model) -> (..., H, L, d_model / H)``.

    Head ``h`` receives features ``h*d_head : (h+1)*d_head``. The reshape is followed by a
    transpose, so tokens never mix across positions.

    Raises
    ------
    ValueError
        If ``d_model`` is not divisible by ``num_heads`` (both numbers named).
    """
    x = np.asarray(x)
    require_ndim(x, 2, "x", "(..., L, d_model)")
    num_heads = int(num_heads)
    d_model = x.shape[-1]
    if num_heads < 1 or d_model % num_heads:
        raise ValueError(f"model width d_model={d_model} is not divisible by num_heads={num_heads}")
    x = x.reshape(x.shape[:-1] + (num_heads, d_model // num_heads))  # (..., L, H, d_head)
    return np.swapaxes(x, -3, -2)                                     # (..., H, L, d_head)


def merge_heads(x) -> np.ndarray:
    """Inverse of :func:`split_heads`: ``(..., H, L, d_head) -> (..., L, H * d_head)``.

    Transposes heads back behind the positions before reshaping (merging without the
    transpose is a classic bug that mixes tokens), so ``merge_heads(split_heads(x, H))``
    equals ``x`` exactly.
    """
    x = np.asarray(x)
    require_ndim(x, 3, "x", "(..., H, L, d_head)")
    x = np.swapaxes(x, -3, -2)                                        # (..., L, H, d_head)
    return x.reshape(x.shape[:-2] + (x.shape[-2] * x.shape[-1],))


@dataclass(frozen=True)
class MultiHeadParams:
    """Learned parameters of one multi-head attention layer.

    Attributes
    ----------
    W_Q : (d_query_in, d_model)   W_K : (d_key_in, d_model)   W_V : (d_value_in, d_model)
    W_O : (d_model, d_out)
    b_Q, b_K, b_V : (d_model,) or None;  b_O : (d_out,) or None  (BERT-style biases)
    num_heads : int, dividing d_model
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
        d_model = self.W_Q.shape[1]
        for name in ("W_K", "W_V"):
            if getattr(self, name).shape[1] != d_model:
                raise ValueError(f"W_Q {self.W_Q.shape} and {name} {getattr(self, name).shape} "
                                 "must have the same number of columns d_model")
        if self.W_O.shape[0] != d_model:
            raise ValueError(f"W_O {self.W_O.shape} must have d_model={d_model} rows")
        if self.num_heads < 1 or d_model % self.num_heads:
            raise ValueError(f"model width d_model={d_model} is not divisible by "
                             f"num_heads={self.num_heads}")

    @property
    def d_model(self) -> int:
        return self.W_Q.shape[1]

    @property
    def d_head(self) -> int:
        return self.d_model // self.num_heads


def init_multi_head(rng: np.random.Generator, d_model: int, num_heads: int, *,
                    d_query_in: int | None = None, d_key_in: int | None = None,
                    d_value_in: int | None = None, d_out: int | None = None) -> MultiHeadParams:
    """Random (Glorot-uniform) parameters for :func:`multi_head_attention`.

    Inputs default to width ``d_model``; queries, keys and values may have different widths.
    Raises ``ValueError`` if ``d_model`` is not divisible by ``num_heads``.
    """
    if num_heads < 1 or d_model % num_heads:
        raise ValueError(f"model width d_model={d_model} is not divisible by num_heads={num_heads}")

    def glorot(n_in, n_out):
        limit = np.sqrt(6.0 / (n_in + n_out))
        return rng.uniform(-limit, limit, size=(n_in, n_out))

    dq, dk, dv = (d if d is not None else d_model for d in (d_query_in, d_key_in, d_value_in))
    do = d_out if d_out is not None else d_model
    return MultiHeadParams(glorot(dq, d_model), glorot(dk, d_model), glorot(dv, d_model),
                           glorot(d_model, do), num_heads)


def _project(x, W, b):
    y = x @ W
    return y if b is None else y + b


def multi_head_attention(queries, keys, values, params: MultiHeadParams, mask=None, *,
                         average_weights: bool = False):
    """Multi-head scaled dot-product attention.

    Parameters
    ----------
    queries : array_like, shape (..., L_q, d_query_in)
    keys : array_like, shape (..., L_k, d_key_in)
    values : array_like, shape (..., L_k, d_value_in)
    params : MultiHeadParams
    mask : array_like of bool, optional
        Broadcastable to ``(..., L_q, L_k)`` (the same mask for every head) or to
        ``(..., H, L_q, L_k)``. ``True`` = may attend.
    average_weights : bool
        If True, return the weights averaged over heads, shape ``(..., L_q, L_k)``.
        By default every head's weights are returned.

    Returns
    -------
    output : numpy.ndarray, shape (..., L_q, d_out)
    weights : numpy.ndarray, shape (..., H, L_q, L_k), or (..., L_q, L_k) if averaged

    Raises
    ------
    ValueError
        If an input's width does not match its projection (both shapes named) or
        ``d_model`` is not divisible by the number of heads.
    TypeError
        If ``mask`` is not boolean.

    Source: Vaswani et al. (2017), section 3.2.2.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    for name, arr, W in (("queries", q, params.W_Q), ("keys", k, params.W_K),
                         ("values", v, params.W_V)):
        require_ndim(arr, 2, name, "(..., L, d)")
        if arr.shape[-1] != W.shape[0]:
            raise ValueError(f"{name} of shape {arr.shape} do not fit a projection of shape "
                             f"{W.shape}: their last axis must equal its rows")
    H = params.num_heads
    qh = split_heads(_project(q, params.W_Q, params.b_Q), H)   # (..., H, L_q, d_head)
    kh = split_heads(_project(k, params.W_K, params.b_K), H)   # (..., H, L_k, d_head)
    vh = split_heads(_project(v, params.W_V, params.b_V), H)   # (..., H, L_k, d_head)
    if mask is not None:
        mask = as_bool_mask(mask)
        if mask.ndim >= 2 and mask.ndim < qh.ndim:
            mask = np.expand_dims(mask, -3)   # the same mask for every head
    heads, weights = attention(qh, kh, vh, mask)                # (..., H, L_q, d_head)
    output = _project(merge_heads(heads), params.W_O, params.b_O)
    if average_weights:
        weights = weights.mean(axis=-3)
    return output, weights
