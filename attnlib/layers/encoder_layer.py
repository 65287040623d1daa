"""One Transformer encoder layer: self-attention and a feed-forward network, each
followed by a residual connection and layer normalisation ("post-LN", as in Vaswani et
al. and BERT).

For the inputs ``X`` of one sequence, shape ``(L, d_model)``::

    A = MultiHead(X, X, X)           (L, d_model)   every position attends to every one
    H = LayerNorm(X + A)             (L, d_model)   residual connection, then normalise
    F = act(H W_1 + b_1) W_2 + b_2   (L, d_model)   position-wise feed-forward (d_ff)
    Y = LayerNorm(H + F)             (L, d_model)   residual connection, then normalise

The output has the input's shape, so layers stack. Only the attention step mixes
positions; everything else acts on each position separately.

Source: Vaswani et al. (2017), section 3.1 (``LayerNorm(x + Sublayer(x))``), 3.2.2 and
3.3; Devlin et al. (2019), section 3 (the same layer with GELU, used by
all-MiniLM-L6-v2); He et al. (2016) for residual connections; Ba et al. (2016) for layer
normalisation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core._validation import (
    as_generator,
    as_width,
    compute_dtype,
    mask_for_scores,
    to_dtype,
)
from attnlib.core.attention import attention
from attnlib.core.dropout import as_dropout_rate
from attnlib.core.heads import (
    MultiHeadParams,
    init_multi_head,
    merge_heads,
    split_heads,
)
from attnlib.layers._validation import (
    add,
    check_activation,
    check_layer_input,
    check_param_shapes,
    check_params,
    finite_array,
)
from attnlib.layers.feed_forward import (
    ACTIVATIONS,
    _affine,
    feed_forward,
    init_feed_forward,
)
from attnlib.layers.layer_norm import DEFAULT_EPS, layer_norm


@dataclass(frozen=True)
class EncoderLayerParams:
    """Learned parameters of one encoder layer (matrices act on row vectors: ``y = x W +
       b``).

    Attributes
    ----------
    attn : MultiHeadParams
        ``W_Q, W_K, W_V`` (d_model, d_model), ``W_O`` (d_model, d_model)
    ln1_gain, ln1_bias : (d_model,)  layer norm after the attention sub-layer
    W_1 : (d_model, d_ff), b_1 : (d_ff,), W_2 : (d_ff, d_model), b_2 : (d_model,)
    ln2_gain, ln2_bias : (d_model,)  layer norm after the feed-forward sub-layer
    eps : float, the layer norms' eps;  activation : "gelu" or "relu"

    Raises ``ValueError`` on construction if the shapes do not fit together (named).

    Source: Vaswani et al. (2017), sections 3.1-3.3.
    """

    attn: MultiHeadParams
    ln1_gain: np.ndarray
    ln1_bias: np.ndarray
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    ln2_gain: np.ndarray
    ln2_bias: np.ndarray
    eps: float = DEFAULT_EPS
    activation: str = "gelu"

    def __post_init__(self):
        d = self.attn.W_Q.shape[0]
        if self.attn.W_O.shape[1] != d or self.attn.d_model != d:
            raise ValueError(
                f"an encoder layer needs square projections: W_Q {self.attn.W_Q.shape}"
                f", W_O {self.attn.W_O.shape}"
            )
        d_ff = np.shape(self.W_1)[-1]
        expected = {
            "ln1_gain": (d,),
            "ln1_bias": (d,),
            "W_1": (d, d_ff),
            "b_1": (d_ff,),
            "W_2": (d_ff, d),
            "b_2": (d,),
            "ln2_gain": (d,),
            "ln2_bias": (d,),
        }
        check_param_shapes(self, expected, d, d_ff)
        check_activation(self.activation, ACTIVATIONS)

    @property
    def d_model(self) -> int:
        """Width of the vectors the layer reads and writes."""
        return self.attn.W_Q.shape[0]

    @property
    def d_ff(self) -> int:
        """Inner width of the feed-forward network."""
        return self.W_1.shape[1]


def init_encoder_layer(
    rng,
    d_model: int,
    num_heads: int,
    d_ff: int | None = None,
    *,
    activation: str = "gelu",
) -> EncoderLayerParams:
    """Random float64 parameters for :func:`encoder_layer` (untrained, for
       demonstrations).

    Projections are Glorot-uniform (:func:`attnlib.init_multi_head`, with small random
    biases), layer-norm gains 1 and biases 0 (their usual initial values).

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
    d_model : int, divisible by ``num_heads``;  num_heads : int
    d_ff : int, default ``4 * d_model``

    Returns
    -------
    EncoderLayerParams with ``W_1`` of shape (d_model, d_ff) and ``W_2`` (d_ff,
    d_model).

    Raises
    ------
    ValueError
        If ``d_model`` is not divisible by ``num_heads`` (from attnlib.core.heads), or
        a width or ``num_heads`` is below 1 (``TypeError`` if not an integer).

    Source: Vaswani et al. (2017), section 3.3 (``d_ff = 4 d_model``); Glorot & Bengio
    (2010).
    """
    rng = as_generator(rng)
    d_model = as_width(d_model, "d_model")
    d_ff = 4 * d_model if d_ff is None else as_width(d_ff, "d_ff")  # 2.5 refused
    base = init_multi_head(rng, d_model, num_heads)
    attn = MultiHeadParams(
        base.W_Q,
        base.W_K,
        base.W_V,
        base.W_O,
        num_heads,
        *(0.1 * rng.normal(size=d_model) for _ in range(4)),
    )
    W_1, b_1, W_2, b_2 = init_feed_forward(rng, d_model, d_ff)
    return EncoderLayerParams(
        attn=attn,
        ln1_gain=np.ones(d_model),
        ln1_bias=np.zeros(d_model),
        W_1=W_1,
        b_1=b_1,
        W_2=W_2,
        b_2=b_2,
        ln2_gain=np.ones(d_model),
        ln2_bias=np.zeros(d_model),
        activation=activation,
    )


def self_attention_block(
    x,
    attn: MultiHeadParams,
    mask=None,
    keep_heads=None,
    *,
    attention_dropout: float = 0.0,
    rng: np.random.Generator | None = None,
) -> dict:
    """Multi-head self-attention with every intermediate kept (for teaching and
       diagnostics).

    Equal to ``multi_head_attention(x, x, x, attn, mask)`` (tested), but it also returns
    the per-head arrays and can silence heads.

    Parameters
    ----------
    x : numpy.ndarray, float, shape (..., L, d_model)
    attn : MultiHeadParams with ``H`` heads of width ``d_head``
    mask : bool array, optional; True = may attend. As in
        :func:`attnlib.multi_head_attention`: at most ``x.ndim`` axes, one mask per
        example shared by the heads (..., L, L); one axis more, one per head (..., H, L,
        L)
    keep_heads : bool array, shape (..., H), optional
        ``False`` removes that head's output before ``W_O`` (its weights are still
        returned): a head-removal intervention, as a Hugging Face ``head_mask`` of
        zeros.
    attention_dropout : float in [0, 1), default 0;  rng : numpy.random.Generator
        Dropout on the attention weights, as ``dropout`` and ``rng`` of
        :func:`attnlib.attention` (``rng`` required when ``attention_dropout > 0``).

    Returns
    -------
    dict of numpy.ndarray: ``q``, ``k``, ``v`` (..., H, L, d_head); ``weights``
    (..., H, L, L); ``heads`` (..., H, L, d_head); ``merged`` (..., L, d_model);
    ``attended`` (..., L, d_model) = ``merged W_O + b_O``.

    Raises
    ------
    ValueError, TypeError
        As :func:`attnlib.attention` for bad masks; ``ValueError`` if ``keep_heads``
        does not end in ``H``, ``x``'s last axis is not ``d_model``, ``x`` holds NaN or
        inf, or ``attention_dropout`` is outside [0, 1) (each named).

    Source: Vaswani et al. (2017), section 3.2.2.
    """
    x = finite_array(x, "x", "(..., L, d_model)", 2)
    if x.shape[-1] != attn.W_Q.shape[0]:
        raise ValueError(
            f"x {x.shape} does not fit the projections (W_Q {attn.W_Q.shape}): "
            f"its last axis must be d_model={attn.W_Q.shape[0]}"
        )
    as_dropout_rate(attention_dropout, "attention_dropout")  # named as here
    q = split_heads(
        _affine(x, attn.W_Q, attn.b_Q), attn.num_heads
    )  # (..., H, L, d_head)
    k = split_heads(
        _affine(x, attn.W_K, attn.b_K), attn.num_heads
    )  # (..., H, L, d_head)
    v = split_heads(
        _affine(x, attn.W_V, attn.b_V), attn.num_heads
    )  # (..., H, L, d_head)
    L = x.shape[-2]
    mask = mask_for_scores(mask, x.shape[:-2], L, L, attn.num_heads)  # the mask rule
    heads, weights = attention(
        q, k, v, mask, dropout=attention_dropout, rng=rng
    )  # (..., H, L, d_head)
    if keep_heads is not None:
        keep = np.asarray(keep_heads)
        if keep.dtype != np.bool_ or keep.shape[-1:] != (attn.num_heads,):
            raise ValueError(
                f"keep_heads must be boolean with a last axis of {attn.num_heads}"
                f" heads; got dtype {keep.dtype}, shape {keep.shape}"
            )
        heads = heads * keep[..., :, None, None]
    merged = merge_heads(heads)  # (..., L, d_model)
    attended = _affine(merged, attn.W_O, attn.b_O)  # (..., L, d_model)
    return {
        "q": q,
        "k": k,
        "v": v,
        "weights": weights,
        "heads": heads,
        "merged": merged,
        "attended": attended,
    }


def encoder_layer(
    x,
    params: EncoderLayerParams,
    mask=None,
    *,
    keep_heads=None,
    return_intermediates: bool = False,
    attention_dropout: float = 0.0,
    rng: np.random.Generator | None = None,
):
    """One post-LN encoder layer: ``LayerNorm(H + FFN(H))`` with ``H = LayerNorm(X +
       MHA(X))``.

    Parameters
    ----------
    x : array_like, shape (..., L, d_model), floats or integers
    params : EncoderLayerParams
    mask : bool array, optional, read by the one mask rule of
        :func:`attnlib.multi_head_attention`: at most ``x.ndim`` axes, one mask per
        example shared by the heads, broadcastable to (..., L, L) (e.g. a padding mask);
        exactly one axis more, one per head, (..., H, L, L). Default: every position may
        attend to every position.
    keep_heads : bool array, shape (..., H), optional; ``False`` removes a head's output
        (see :func:`self_attention_block`).
    return_intermediates : bool
        If True, also return a dict with every step: the entries of
        :func:`self_attention_block`, then ``residual_1`` = X + A, ``h`` (after the
        first layer norm), ``ff_hidden`` (..., L, d_ff) after the activation,
        ``ff_out``, ``residual_2`` = H + F, and ``output``.
    attention_dropout : float in [0, 1), default 0;  rng : numpy.random.Generator
        Dropout on the attention weights (inverted, as in :func:`attnlib.attention`;
        ``rng`` required when ``attention_dropout > 0``). Off by default. The residual
        dropout of Vaswani et al. (2017), section 5.4, is not applied here.

    Returns
    -------
    output : numpy.ndarray, shape (..., L, d_model)
    weights : numpy.ndarray, shape (..., H, L, L), every head's attention weights
        Both in the common dtype of ``x`` and the parameters (float64 parameters, as
        :func:`init_encoder_layer` makes them, give float64; float32 ``x`` with float32
        parameters gives float32).
    (intermediates : dict, only with ``return_intermediates=True``)

    Raises
    ------
    ValueError
        If ``x`` does not end in ``d_model`` (both shapes named), the mask does not fit,
        or an input holds NaN or inf.
    TypeError
        If ``x`` is not a real array, the mask is not boolean or ``params`` is not
        :class:`EncoderLayerParams`.
    OverflowError
        If a projection, a score, a residual sum or an output does not fit the dtype.

    Source: Vaswani et al. (2017), sections 3.1-3.3; Devlin et al. (2019), section 3.
    """
    check_params(params, EncoderLayerParams, "init_encoder_layer")
    x = check_layer_input(x, "x", params.d_model, params)  # (..., L, d), finite
    dtype, x = x.dtype, x.astype(compute_dtype(x.dtype), copy=False)  # float16: 32
    as_dropout_rate(attention_dropout, "attention_dropout")  # named as here
    steps = self_attention_block(
        x, params.attn, mask, keep_heads, attention_dropout=attention_dropout, rng=rng
    )
    steps["residual_1"] = add(x, steps["attended"], "residual sums")  # (..., L, d)
    steps["h"] = layer_norm(
        steps["residual_1"], params.ln1_gain, params.ln1_bias, params.eps
    )
    steps["ff_out"], steps["ff_hidden"] = feed_forward(
        steps["h"],
        params.W_1,
        params.b_1,
        params.W_2,
        params.b_2,
        params.activation,
        return_hidden=True,
    )  # (..., L, d), hidden (..., L, d_ff)
    steps["residual_2"] = add(steps["h"], steps["ff_out"], "residual sums")
    out = layer_norm(steps["residual_2"], params.ln2_gain, params.ln2_bias, params.eps)
    steps["output"] = out = to_dtype(out, dtype, "encoder-layer outputs")
    weights = to_dtype(steps["weights"], dtype, "attention weights")
    return (out, weights, steps) if return_intermediates else (out, weights)
