"""Grouped-query and multi-query attention: several query heads share one key/value
head.

Multi-head attention gives each of its ``H`` heads its own keys and values. During
generation every past token's keys and values are kept (the KV cache), so their number
of heads sets the memory a model needs per token. Multi-query attention (Shazeer 2019)
keeps ``H`` query heads but only **one** key head and one value head, shared by all.
Grouped-query attention (Ainslie et al. 2023) sits between the two: ``H_kv`` key/value
heads, each shared by a group of ``G = H / H_kv`` consecutive query heads::

    query head h  uses  key/value head  h // G        (h = 0 .. H - 1)

``H_kv = H`` is ordinary multi-head attention, ``H_kv = 1`` is multi-query attention.

Layouts: per-head queries ``(..., H, L_q, d_k)``, keys ``(..., H_kv, L_k, d_k)``,
values ``(..., H_kv, L_k, d_v)``; weights ``(..., H, L_q, L_k)``. The sharing is done by
broadcasting (a group axis of size 1 on the keys and values), never by copying them.

Source: Shazeer (2019), "Fast Transformer Decoding: One Write-Head is All You Need",
section 3; Ainslie et al. (2023), "GQA: Training Generalized Multi-Query Transformer
Models from Multi-Head Checkpoints", sections 2.1-2.2.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core._rotary import positions_of, rotate
from attnlib.core._validation import (
    as_float_array,
    as_generator,
    as_width,
    finite_array,
    mask_for_scores,
    require_ndim,
)
from attnlib.core.attention import attention
from attnlib.core.heads import MultiHeadParams, merge_heads, split_heads

__all__ = [
    "group_size",
    "grouped_query_attention",
    "GroupedQueryParams",
    "init_grouped_query",
    "grouped_query_self_attention",
    "from_multi_head",
]


def group_size(num_heads, num_kv_heads) -> int:
    """``G = H / H_kv``, the number of query heads that share one key/value head.

    Parameters: ``num_heads`` (``H``) and ``num_kv_heads`` (``H_kv``), integers (they
    set the shapes (..., H, L, d_k) and (..., H_kv, L, d_k) of queries and keys).
    Returns: int.

    Raises
    ------
    TypeError if either number is not an integer; ValueError if either is below 1 or
    ``num_kv_heads`` does not divide ``num_heads`` (both named).

    Source: Ainslie et al. (2023), section 2.2 (groups of equal size).
    """
    H, H_kv = as_width(num_heads, "num_heads"), as_width(num_kv_heads, "num_kv_heads")
    if H % H_kv:
        raise ValueError(
            f"num_kv_heads={H_kv} must divide num_heads={H}: each key/value head "
            "serves a group of the same number of query heads"
        )
    return H // H_kv


def _grouped(a, num_kv_heads: int):
    """An array whose axis third from the end is the ``H`` query heads (or 1), reshaped
    to ``(..., H_kv, G, L_q, L_k)``; fewer axes are returned as they are (they
    broadcast to every head)."""
    if a is None or a.ndim < 3:
        return a
    if a.shape[-3] == 1:
        return a[..., None, :, :]  # (..., 1, 1, L_q, L_k)
    G = a.shape[-3] // num_kv_heads
    return a.reshape(a.shape[:-3] + (num_kv_heads, G) + a.shape[-2:])


def grouped_query_attention(
    queries,
    keys,
    values,
    mask=None,
    *,
    scale=None,
    dropout: float = 0.0,
    rng=None,
    keep=None,
    return_keep: bool = False,
    rotary: bool = False,
    query_positions=None,
    key_positions=None,
):
    """Scaled dot-product attention in which groups of query heads share keys and
    values.

    Query head ``h`` attends with key/value head ``h // G``, ``G = H / H_kv``:
    ``output_h = softmax(scale * Q_h K_{h//G}^T, mask) V_{h//G}``.

    Parameters
    ----------
    queries : array_like, shape (..., H, L_q, d_k)
    keys : array_like, shape (..., H_kv, L_k, d_k), ``H_kv`` dividing ``H``
    values : array_like, shape (..., H_kv, L_k, d_v)
    mask : array_like of bool, optional; ``True`` = may attend. It broadcasts to the
        scores' shape (..., H, L_q, L_k) from the right, as a mask of
        :func:`attnlib.attention` does: (L_q, L_k) is shared by every head, (H, L_q,
        L_k) gives each query head its own.
    scale : float, optional, default ``1 / sqrt(d_k)`` (as :func:`attnlib.attention`)
    dropout, rng, keep, return_keep
        Dropout on the attention weights, exactly as in :func:`attnlib.attention` (off
        by default); a replayed ``keep`` has the weights' shape (..., H, L_q, L_k).
    rotary, query_positions, key_positions
        Rotate queries and keys by their positions first (RoPE), exactly as in
        :func:`attnlib.multi_head_attention` (``d_k`` even; default ``0 .. L - 1``).

    Returns
    -------
    output : numpy.ndarray, shape (..., H, L_q, d_v)
    weights : numpy.ndarray, shape (..., H, L_q, L_k), before dropout
        In the inputs' common float dtype; every head runs :func:`attnlib.attention`, so
        its contract (masks, non-finite inputs, overflow, dtypes) holds here too.
    keep : numpy.ndarray of bool, shape (..., H, L_q, L_k), or None; only with
        ``return_keep=True``

    Raises
    ------
    ValueError
        If an input has fewer than three axes, the head counts do not divide, the keys
        and values disagree on ``H_kv``, or a shape or mask does not fit (shapes
        named).
    TypeError
        If an input is not real or the mask is not boolean.

    With ``H_kv = H`` this is exactly the attention of every head of
    :func:`attnlib.multi_head_attention`; with ``H_kv = 1`` it is multi-query attention.

    Source: Ainslie et al. (2023), section 2.2 and Figure 2; Shazeer (2019), section 3.
    """
    q = as_float_array(queries, "queries")
    k = as_float_array(keys, "keys")
    v = as_float_array(values, "values")
    for name, arr, layout in (
        ("queries", q, "(..., H, L_q, d_k)"),
        ("keys", k, "(..., H_kv, L_k, d_k)"),
        ("values", v, "(..., H_kv, L_k, d_v)"),
    ):
        require_ndim(arr, 3, name, layout)
    if k.shape[-3] != v.shape[-3]:
        raise ValueError(
            f"keys {k.shape} and values {v.shape} must have the same number of "
            "key/value heads H_kv (third axis from the end)"
        )
    H, H_kv = q.shape[-3], k.shape[-3]
    G = group_size(H, H_kv)
    if rotary:  # RoPE: q_m -> R_m q_m, k_n -> R_n k_n (Su et al. 2021)
        q = rotate(q, positions_of(query_positions, q.shape[-2], "query_positions"))
        k = rotate(k, positions_of(key_positions, k.shape[-2], "key_positions"))
    qg = q.reshape(q.shape[:-3] + (H_kv, G) + q.shape[-2:])  # (..., H_kv, G, L_q, d_k)
    kg = k[..., None, :, :]  # (..., H_kv, 1, L_k, d_k): shared by the group
    vg = v[..., None, :, :]  # (..., H_kv, 1, L_k, d_v)
    batch = np.broadcast_shapes(q.shape[:-3], k.shape[:-3]) + (H,)
    mask = mask_for_scores(mask, batch, q.shape[-2], k.shape[-2])  # (.., H, Lq, Lk)
    if keep is not None:
        keep = mask_for_scores(keep, batch, q.shape[-2], k.shape[-2])
    out, weights, keep = attention(
        qg,
        kg,
        vg,
        _grouped(mask, H_kv),
        scale=scale,
        dropout=dropout,
        rng=rng,
        keep=_grouped(keep, H_kv),
        return_keep=True,
    )  # (..., H_kv, G, L_q, d_v), (..., H_kv, G, L_q, L_k)

    def per_head(a):  # (..., H_kv, G, L_q, m) -> (..., H, L_q, m)
        return a.reshape(a.shape[:-4] + (H,) + a.shape[-2:])

    out, weights = per_head(out), per_head(weights)  # (..., H, L_q, d_v), (.., L_k)
    if not return_keep:
        return out, weights
    return out, weights, None if keep is None else per_head(keep)


@dataclass(frozen=True)
class GroupedQueryParams:
    """Learned parameters of one grouped-query self-attention layer (``y = x W``).

    Attributes
    ----------
    W_Q : (d_model, H * d_k)      W_K, W_V : (d_model, H_kv * d_k)
    W_O : (H * d_k, d_model)
    num_heads : int, ``H``;  num_kv_heads : int, ``H_kv``, dividing ``H``

    Shapes are checked on construction: ``ValueError`` naming them (or the head counts
    that do not divide), ``TypeError`` for arrays that are not real.

    Source: Ainslie et al. (2023), section 2.2.
    """

    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    W_O: np.ndarray
    num_heads: int
    num_kv_heads: int

    def __post_init__(self):
        for name in ("W_Q", "W_K", "W_V", "W_O"):
            value = as_float_array(getattr(self, name), name)
            if value.ndim != 2:
                raise ValueError(f"{name} must be a matrix; got shape {value.shape}")
            object.__setattr__(self, name, value)
        group_size(self.num_heads, self.num_kv_heads)
        d_model, width = self.W_Q.shape
        if width % self.num_heads:
            raise ValueError(
                f"W_Q {self.W_Q.shape}: its {width} columns do not split into "
                f"num_heads={self.num_heads} heads"
            )
        kv_shape = (d_model, self.num_kv_heads * (width // self.num_heads))
        for name in ("W_K", "W_V"):
            if getattr(self, name).shape != kv_shape:
                raise ValueError(
                    f"{name} must have shape {kv_shape} (num_kv_heads="
                    f"{self.num_kv_heads} heads of width {width // self.num_heads}); "
                    f"got {getattr(self, name).shape}"
                )
        if self.W_O.shape[0] != width:
            raise ValueError(
                f"W_O {self.W_O.shape} must have {width} rows (W_Q's columns)"
            )

    @property
    def d_head(self) -> int:
        """Width of one head, ``d_k``."""
        return self.W_Q.shape[1] // self.num_heads


def init_grouped_query(
    rng, d_model: int, num_heads: int, num_kv_heads: int
) -> GroupedQueryParams:
    """Random (Glorot-uniform) float64 parameters with ``d_k = d_model / num_heads``.

    Returns :class:`GroupedQueryParams` with ``W_Q`` and ``W_O`` of shape (d_model,
    d_model) and ``W_K``, ``W_V`` of shape (d_model, num_kv_heads * d_k).

    Raises ``ValueError`` if ``num_heads`` does not divide ``d_model`` or
    ``num_kv_heads`` does not divide ``num_heads``.

    Source: Glorot & Bengio (2010), equation (16); Ainslie et al. (2023), section 2.2.
    """
    rng, d_model = as_generator(rng), as_width(d_model, "d_model")
    group_size(num_heads, num_kv_heads)
    if d_model % num_heads:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    d_kv = num_kv_heads * (d_model // num_heads)

    def glorot(n_in, n_out):
        limit = np.sqrt(6.0 / (n_in + n_out))
        return rng.uniform(-limit, limit, size=(n_in, n_out))

    return GroupedQueryParams(
        glorot(d_model, d_model),
        glorot(d_model, d_kv),
        glorot(d_model, d_kv),
        glorot(d_model, d_model),
        num_heads,
        num_kv_heads,
    )


def grouped_query_self_attention(x, params: GroupedQueryParams, mask=None):
    """Grouped-query self-attention of a sequence: project, attend, join, ``W_O``.

    Parameters
    ----------
    x : array_like, shape (..., L, d_model)
    params : GroupedQueryParams
    mask : bool array, optional, as for :func:`grouped_query_attention`

    Returns
    -------
    output : numpy.ndarray, shape (..., L, d_model)
    weights : numpy.ndarray, shape (..., H, L, L)

    Raises
    ------
    ValueError if ``x`` holds NaN or inf, if its width does not match ``W_Q`` (both
    shapes named), and everything :func:`grouped_query_attention` raises.

    Source: Ainslie et al. (2023), section 2.2.
    """
    x = finite_array(x, "x", "(..., L, d_model)", 2)  # every row is a query
    if x.shape[-1] != params.W_Q.shape[0]:
        raise ValueError(f"x {x.shape} does not fit W_Q {params.W_Q.shape}")
    q = split_heads(x @ params.W_Q, params.num_heads)  # (..., H, L, d_k)
    k = split_heads(x @ params.W_K, params.num_kv_heads)  # (..., H_kv, L, d_k)
    v = split_heads(x @ params.W_V, params.num_kv_heads)  # (..., H_kv, L, d_k)
    heads, weights = grouped_query_attention(q, k, v, mask)  # (..., H, L, d_k)
    return merge_heads(heads) @ params.W_O, weights  # (..., L, d_model)


def from_multi_head(params: MultiHeadParams, num_kv_heads: int) -> GroupedQueryParams:
    """Turn multi-head parameters into grouped-query ones by mean-pooling key/value
    heads.

    The key (and value) projection of each group is the mean of the projections of the
    ``G`` heads in it; the query and output projections are kept. This is how Ainslie
    et al. convert a multi-head checkpoint before a short further training
    ("uptraining"); the converted layer is not equal to the original unless
    ``num_kv_heads`` equals ``num_heads`` (then it is the same layer).

    Returns :class:`GroupedQueryParams`: ``W_K`` and ``W_V`` of shape (d_in,
    num_kv_heads * d_k), ``W_Q`` and ``W_O`` as given.

    Raises
    ------
    ValueError if ``params`` has biases (the book's grouped-query layer has none) or
    ``num_kv_heads`` does not divide the number of heads.

    Source: Ainslie et al. (2023), section 2.1 and Figure 1.
    """
    if any(getattr(params, b) is not None for b in ("b_Q", "b_K", "b_V", "b_O")):
        raise ValueError("from_multi_head takes parameters without biases")
    H, d_k = params.num_heads, params.d_head
    G = group_size(H, num_kv_heads)

    def pool(W):  # (d_in, H * d_k) -> (d_in, H_kv * d_k)
        blocks = W.reshape(W.shape[0], num_kv_heads, G, d_k)  # heads h = g * G + r
        return blocks.mean(axis=2).reshape(W.shape[0], num_kv_heads * d_k)

    return GroupedQueryParams(
        params.W_Q, pool(params.W_K), pool(params.W_V), params.W_O, H, num_kv_heads
    )
