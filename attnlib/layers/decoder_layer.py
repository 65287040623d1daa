"""One Transformer decoder layer: causal self-attention, cross-attention to the
encoder, and a feed-forward network, each followed by a residual connection and layer
normalisation.

For the decoder inputs ``Y`` (``L_t`` target positions) and the encoder output ``M``
(``L_s`` source positions, the "memory")::

    A = MultiHead(Y, Y, Y, causal mask)   (L_t, d)   position t sees targets 0..t only
    H1 = LayerNorm(Y + A)                 (L_t, d)
    C = MultiHead(H1, M, M)               (L_t, d)   queries from the decoder, keys and
    H2 = LayerNorm(H1 + C)                (L_t, d)   values from the encoder: (L_t, L_s)
    F = act(H2 W_1 + b_1) W_2 + b_2       (L_t, d)
    out = LayerNorm(H2 + F)               (L_t, d)

Source: Vaswani et al. (2017), section 3.1 (decoder: "a third sub-layer, which performs
multi-head attention over the output of the encoder stack"), 3.2.3 and 3.3.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnlib.core._validation import as_generator, as_width, compute_dtype, to_dtype
from attnlib.core.dropout import as_dropout_rate
from attnlib.core.heads import MultiHeadParams, init_multi_head, multi_head_attention
from attnlib.core.masks import causal_mask
from attnlib.layers._validation import (
    add,
    check_activation,
    check_layer_input,
    check_param_shapes,
    check_params,
)
from attnlib.layers.feed_forward import ACTIVATIONS, feed_forward, init_feed_forward
from attnlib.layers.layer_norm import DEFAULT_EPS, layer_norm


@dataclass(frozen=True)
class DecoderLayerParams:
    """Learned parameters of one decoder layer (``y = x W + b``).

    Attributes
    ----------
    self_attn, cross_attn : MultiHeadParams of width d_model
        (cross_attn's ``W_K``, ``W_V`` read the encoder's width, which may differ)
    ln1_gain, ln1_bias, ln2_gain, ln2_bias, ln3_gain, ln3_bias : (d_model,)
    W_1 : (d_model, d_ff), b_1 : (d_ff,), W_2 : (d_ff, d_model), b_2 : (d_model,)
    eps : float;  activation : "gelu" or "relu"

    Raises ``ValueError`` on construction if the shapes do not fit together (named),
    ``TypeError`` if an array is not real.

    Source: Vaswani et al. (2017), section 3.1.
    """

    self_attn: MultiHeadParams
    cross_attn: MultiHeadParams
    ln1_gain: np.ndarray
    ln1_bias: np.ndarray
    ln2_gain: np.ndarray
    ln2_bias: np.ndarray
    W_1: np.ndarray
    b_1: np.ndarray
    W_2: np.ndarray
    b_2: np.ndarray
    ln3_gain: np.ndarray
    ln3_bias: np.ndarray
    eps: float = DEFAULT_EPS
    activation: str = "relu"

    def __post_init__(self):
        d, d_ff = self.self_attn.W_Q.shape[0], np.shape(self.W_1)[-1]
        for name, attn in (
            ("self_attn", self.self_attn),
            ("cross_attn", self.cross_attn),
        ):
            if attn.W_Q.shape[0] != d or attn.W_O.shape[1] != d or attn.d_model != d:
                raise ValueError(
                    f"{name} must read and write width d_model={d}: W_Q "
                    f"{attn.W_Q.shape}, W_O {attn.W_O.shape}"
                )
        expected = {"W_1": (d, d_ff), "b_1": (d_ff,), "W_2": (d_ff, d), "b_2": (d,)}
        expected.update(
            {f"ln{i}_{p}": (d,) for i in (1, 2, 3) for p in ("gain", "bias")}
        )
        check_param_shapes(self, expected, d, d_ff)
        check_activation(self.activation, ACTIVATIONS)

    @property
    def d_model(self) -> int:
        """Width of the decoder's vectors."""
        return self.self_attn.W_Q.shape[0]


def init_decoder_layer(
    rng,
    d_model: int,
    num_heads: int,
    d_ff: int | None = None,
    *,
    d_memory: int | None = None,
    activation: str = "relu",
) -> DecoderLayerParams:
    """Random float64 parameters for :func:`decoder_layer` (untrained, for
       demonstrations).

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
    d_model : int, divisible by ``num_heads``;  num_heads : int
    d_ff : int, default ``4 * d_model``
    d_memory : int, the encoder's width (default d_model)

    Returns
    -------
    DecoderLayerParams (layer-norm gains 1, biases 0; Glorot-uniform matrices).

    Raises
    ------
    ValueError
        If ``d_model`` is not divisible by ``num_heads``.

    Source: Vaswani et al. (2017), sections 3.1 and 3.3; Glorot & Bengio (2010).
    """
    rng = as_generator(rng)
    d_model = as_width(d_model, "d_model")
    d_ff = 4 * d_model if d_ff is None else as_width(d_ff, "d_ff")  # 2.5 refused
    d_mem = d_model if d_memory is None else as_width(d_memory, "d_memory")
    self_attn = init_multi_head(rng, d_model, num_heads)
    cross_attn = init_multi_head(
        rng, d_model, num_heads, d_key_in=d_mem, d_value_in=d_mem
    )
    ones, zeros = np.ones(d_model), np.zeros(d_model)
    return DecoderLayerParams(
        self_attn,
        cross_attn,
        ones,
        zeros,
        ones,
        zeros,
        *init_feed_forward(rng, d_model, d_ff),
        ones,
        zeros,
        activation=activation,
    )


def decoder_layer(
    y,
    memory,
    params: DecoderLayerParams,
    *,
    memory_mask=None,
    return_intermediates: bool = False,
    attention_dropout: float = 0.0,
    rng: np.random.Generator | None = None,
):
    """One post-LN decoder layer with a causal mask on its self-attention.

    Parameters
    ----------
    y : array_like, shape (..., L_t, d_model), the decoder's inputs (targets so far)
    memory : array_like, shape (..., L_s, d_memory), the encoder's output
    params : DecoderLayerParams
    memory_mask : bool array, optional
        E.g. source padding, ``padding_mask(lens, L_s)``.
        Read by the one mask rule of :func:`attnlib.multi_head_attention`: at most
        ``y.ndim`` axes, one mask per example shared by the heads, broadcastable to
        (..., L_t, L_s); exactly one axis more, one per head, (..., H, L_t, L_s).
    return_intermediates : bool, also return a dict of every step (``self_attended``,
        ``h1``, ``cross_attended``, ``h2``, ``ff_out``, ``output``)
    attention_dropout : float in [0, 1), default 0;  rng : numpy.random.Generator
        Dropout on the attention weights of both attention sub-layers (inverted, as in
        :func:`attnlib.attention`; the self-attention's keep-mask is drawn from ``rng``
        first, then the cross-attention's). Off by default; ``rng`` is required when
        ``attention_dropout > 0``.

    Returns
    -------
    output : numpy.ndarray, shape (..., L_t, d_model), in the common dtype of ``y`` and
        the parameters (as are both weights)
    self_weights : numpy.ndarray, shape (..., H, L_t, L_t), zero above the diagonal
    cross_weights : numpy.ndarray, shape (..., H, L_t, L_s)
    (intermediates : dict, only with ``return_intermediates=True``)

    Raises
    ------
    ValueError
        If the widths do not fit the parameters or the leading axes do not broadcast
        (shapes named), or an input holds NaN or inf.
    TypeError
        If an input is not real, a mask not boolean or ``params`` not
        :class:`DecoderLayerParams`.
    OverflowError
        If a projection, a score, a residual sum or an output does not fit the dtype.

    Source: Vaswani et al. (2017), sections 3.1, 3.2.3 ("masking out ... all values in
    the input of the softmax which correspond to illegal connections") and 3.3.
    """
    check_params(params, DecoderLayerParams, "init_decoder_layer")
    y = check_layer_input(y, "y", params.d_model, params)  # (..., L_t, d), finite
    d_memory = params.cross_attn.W_K.shape[0]
    memory = check_layer_input(memory, "memory", d_memory, params, "d_memory")
    dtype = np.result_type(y.dtype, memory.dtype)  # of the results
    y, m = (a.astype(compute_dtype(dtype), copy=False) for a in (y, memory))
    as_dropout_rate(attention_dropout, "attention_dropout")  # named as here
    p, drop = params, {"dropout": attention_dropout, "rng": rng}
    causal = causal_mask(y.shape[-2])  # (L_t, L_t)
    a, self_w = multi_head_attention(y, y, y, p.self_attn, causal, **drop)
    h1 = layer_norm(add(y, a, "Y + A"), p.ln1_gain, p.ln1_bias, p.eps)  # (..., L_t, d)
    c, cross_w = multi_head_attention(h1, m, m, p.cross_attn, memory_mask, **drop)
    h2 = layer_norm(
        add(h1, c, "H1 + C"), p.ln2_gain, p.ln2_bias, p.eps
    )  # (..., L_t, d)
    f = feed_forward(h2, p.W_1, p.b_1, p.W_2, p.b_2, p.activation)  # (..., L_t, d)
    out = layer_norm(add(h2, f, "H2 + F"), p.ln3_gain, p.ln3_bias, p.eps)

    out = to_dtype(out, dtype, "decoder-layer outputs")  # (..., L_t, d)
    self_w = to_dtype(self_w, dtype, "attention weights")  # (..., H, L_t, L_t)
    cross_w = to_dtype(cross_w, dtype, "attention weights")  # (..., H, L_t, L_s)
    if return_intermediates:
        steps = {"self_attended": a, "h1": h1, "cross_attended": c, "h2": h2}
        steps.update(ff_out=f, output=out)
        return out, self_w, cross_w, steps
    return out, self_w, cross_w
