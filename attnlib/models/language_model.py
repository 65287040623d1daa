"""A decoder-only Transformer language model in numpy, with its backward pass.

Given token ids ``idx`` of shape (B, L), the model predicts, at every position, the
next token::

    x = E[idx] + P[0 .. L-1]                 (B, L, d)   token + position embeddings
    x = block_r(x), r = 0 .. N - 1           (B, L, d)   pre-LN causal blocks
    h = LayerNorm_f(x)                       (B, L, d)
    logits = h E^T                           (B, L, V)   the LM head, tied to E
    loss = mean over positions of -log softmax(logits)[next token]

``E`` (V, d) is the token-embedding table and ``P`` (context, d) a learned table of
position vectors (GPT-2's choice). The LM head reuses ``E``: the score of token ``c``
is the dot product of the final vector with ``c``'s own embedding ("weight tying"), so
one matrix serves to read tokens in and to write them out, and the model saves
``V * d`` parameters. Dropout (attention weights and residual branches) acts only with
``training=True``; evaluation is exact and deterministic.

The modern decoder (LLaMA's choices) is a matter of :class:`LMConfig` options:
``position="rope"`` (no table ``P``: queries and keys are rotated inside attention),
``norm="rms"``, ``activation="swiglu"`` and ``bias=False``.

Parameters are a flat dict of arrays: ``tok_emb``, ``pos_emb``, ``lnf_gain``,
``lnf_bias`` and ``blocks.<r>.<name>`` for every name of
:data:`attnlib.layers.causal_block.BLOCK_PARAMETERS`. :func:`loss_and_gradients`
returns gradients under the same names (checked against finite differences in
``tests/test_language_model.py``).

Source: Radford et al. (2019), section 2.3 (GPT-2: pre-LN blocks, final layer norm,
initialisation); Press & Wolf (2017) (tying the input and output embeddings); Vaswani
et al. (2017), sections 3.1-3.4; the layout follows Karpathy's nanoGPT ``model.py``;
Touvron et al. (2023), section 2.2 (LLaMA: RMSNorm, SwiGLU, rotary embeddings).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from attnlib.core._validation import (
    as_generator,
    as_length,
    as_width,
    finite_array,
)
from attnlib.core.dropout import as_dropout_rate
from attnlib.layers.causal_block import (
    causal_block,
    causal_block_backward,
    norm,
    norm_backward,
)

__all__ = [
    "LMConfig",
    "init_language_model",
    "block_params",
    "parameter_shapes",
    "parameter_count",
    "forward",
    "cross_entropy",
    "loss",
    "backward",
    "loss_and_gradients",
]


@dataclass(frozen=True)
class LMConfig:
    """The sizes of a language model.

    Attributes
    ----------
    vocab_size : int, ``V``;  context : int, the longest input (rows of ``P``)
    d_model : int, ``d``;  num_layers : int, ``N``
    num_heads : int, ``H``;  num_kv_heads : int, ``H_kv`` (default ``H``: multi-head;
        1: multi-query; in between: grouped-query attention)
    d_ff : int, the feed-forward width (default ``4 d``; 0: attention-only blocks)
    window : int or None, a sliding attention window instead of the full causal mask
    dropout : float in [0, 1), used in training only
    activation : "relu" (default; Vaswani et al.), "gelu" (GPT-2) or "swiglu"
        (LLaMA's gated network, with a third matrix ``W_3``)
    tied : bool, default True: the LM head is the token-embedding table ``E``; False
        gives the head its own matrix ``U`` (V, d), ``lm_head`` in the parameters
    position : "learned" (default; a table ``P``, GPT-2) or "rope" (rotary embeddings
        inside every attention, no table; with a ``window``, generation may then run
        past ``context`` with a cache of ``window`` positions)
    norm : "layer" (default) or "rms" (RMSNorm, no bias)
    bias : bool, default True; False leaves out every bias (feed-forward, layer norm)

    The arrays these sizes give are listed in :func:`init_language_model`.

    Raises ``ValueError`` for sizes that do not fit together (named).

    Source: Radford et al. (2019), section 2.3 and Table 2 (the sizes of GPT-2).
    """

    vocab_size: int
    context: int
    d_model: int
    num_layers: int
    num_heads: int
    num_kv_heads: int | None = None
    d_ff: int | None = None
    window: int | None = None
    dropout: float = 0.0
    activation: str = "relu"
    tied: bool = True
    position: str = "learned"
    norm: str = "layer"
    bias: bool = True

    def __post_init__(self):
        if self.num_kv_heads is None:
            object.__setattr__(self, "num_kv_heads", self.num_heads)
        if self.d_ff is None:
            object.__setattr__(self, "d_ff", 4 * self.d_model)
        sizes = ("vocab_size", "context", "d_model", "num_layers", "num_heads")
        for name in sizes + ("num_kv_heads",):  # ints >= 1, before any division
            object.__setattr__(self, name, as_width(getattr(self, name), name))
        object.__setattr__(self, "d_ff", as_length(self.d_ff, "d_ff"))  # 0: no FFN
        if self.window is not None:
            object.__setattr__(self, "window", as_width(self.window, "window"))
        object.__setattr__(self, "dropout", as_dropout_rate(self.dropout))
        if self.activation not in ("relu", "gelu", "swiglu"):
            raise ValueError(
                "activation must be 'relu', 'gelu' or 'swiglu'; "
                f"got {self.activation!r}"
            )
        if not isinstance(self.tied, (bool, np.bool_)):
            raise TypeError(f"tied must be True or False; got {self.tied!r}")
        if self.d_model % self.num_heads:
            raise ValueError(
                f"d_model={self.d_model} is not divisible by num_heads={self.num_heads}"
            )
        if self.num_heads % self.num_kv_heads:
            raise ValueError(
                f"num_kv_heads={self.num_kv_heads} must divide "
                f"num_heads={self.num_heads}"
            )
        for name, allowed in (
            ("position", ("learned", "rope")),
            ("norm", ("layer", "rms")),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"{name} must be one of {allowed}; got {getattr(self, name)!r}"
                )
        if not isinstance(self.bias, (bool, np.bool_)):
            raise TypeError(f"bias must be True or False; got {self.bias!r}")
        if self.position == "rope" and self.d_head % 2:
            raise ValueError(f"position='rope' needs an even d_head; got {self.d_head}")

    @property
    def d_head(self) -> int:
        """``d_k = d / H``."""
        return self.d_model // self.num_heads

    def as_dict(self) -> dict:
        return asdict(self)


def block_params(params: dict, r: int) -> dict:
    """The arrays of block ``r`` under their short names (``W_Q``, ``ln1_gain``).

    Returns a dict of the arrays themselves (not copies), of the shapes listed in
    :data:`attnlib.layers.causal_block.BLOCK_PARAMETERS`; empty if there is no block
    ``r``. Raises ``TypeError`` or ``ValueError`` for an ``r`` that is not an integer
    >= 0.
    """
    prefix = f"blocks.{as_length(r, 'r')}."
    return {k[len(prefix) :]: v for k, v in params.items() if k.startswith(prefix)}


def init_language_model(config: LMConfig, rng, dtype=np.float32) -> dict:
    """Random parameters, initialised as GPT-2: normal with standard deviation 0.02,
    the projections that write into the residual stream (``W_O``, ``W_2``) scaled by
    ``1 / sqrt(2 N)``, biases 0, layer-norm gains 1.

    Parameters: ``config``; ``rng``, a numpy Generator or int seed; ``dtype``, float32
    (training) or float64 (gradient checks). Returns the flat dict of arrays:
    ``tok_emb`` (V, d), ``pos_emb`` (context, d) (learned positions only), per block
    the arrays of :data:`attnlib.layers.causal_block.BLOCK_PARAMETERS` that the config
    uses, ``lnf_gain`` and ``lnf_bias`` (d,) (no bias for RMSNorm or ``bias=False``),
    and ``lm_head`` (V, d) when the head is not tied (:func:`parameter_shapes`). Raises
    ``TypeError`` for an ``rng`` that is neither a Generator nor a seed, or a ``dtype``
    that is not a float dtype (the config was checked when it was made).

    Source: Radford et al. (2019), section 2.3.
    """
    rng = as_generator(rng)
    if np.dtype(dtype).kind != "f":
        raise TypeError(f"dtype must be a float dtype; got {np.dtype(dtype)}")
    std, residual_std = 0.02, 0.02 / np.sqrt(2 * config.num_layers)
    params = {}
    for name, shape in parameter_shapes(config).items():  # drawn in this order
        short = name.rsplit(".", 1)[-1]
        if short.endswith("gain"):
            params[name] = np.ones(shape, dtype)
        elif short.endswith("bias") or short.startswith("b_"):
            params[name] = np.zeros(shape, dtype)
        else:
            s = residual_std if short in ("W_O", "W_2") else std
            params[name] = rng.normal(0.0, s, size=shape).astype(dtype)
    return params


def parameter_shapes(config: LMConfig) -> dict:
    """The name and shape of every array of the model ``config`` describes, in the
    order :func:`init_language_model` makes them. Raises nothing."""
    c = config
    d, d_kv, V = c.d_model, c.num_kv_heads * c.d_head, c.vocab_size

    def norm_arrays(which):  # a normalisation's gain, and bias for layer norm
        biased = c.bias and c.norm == "layer"
        return {f"{which}_gain": (d,)} | ({f"{which}_bias": (d,)} if biased else {})

    block = norm_arrays("ln1") | {"W_Q": (d, d), "W_K": (d, d_kv)}
    block |= {"W_V": (d, d_kv), "W_O": (d, d)}
    if c.d_ff:
        block |= norm_arrays("ln2") | {"W_1": (d, c.d_ff), "W_2": (c.d_ff, d)}
        if c.activation == "swiglu":
            block["W_3"] = (d, c.d_ff)
        if c.bias:
            block |= {"b_1": (c.d_ff,), "b_2": (d,)}
            if c.activation == "swiglu":
                block["b_3"] = (c.d_ff,)
    shapes = {"tok_emb": (V, d)}
    if c.position == "learned":
        shapes["pos_emb"] = (c.context, d)
    for r in range(c.num_layers):
        shapes |= {f"blocks.{r}.{name}": shape for name, shape in block.items()}
    shapes |= norm_arrays("lnf")
    return shapes if c.tied else shapes | {"lm_head": (V, d)}


def _check_params(params: dict, config: LMConfig) -> None:
    """``ValueError`` naming the mismatch when ``params`` are not the arrays of the
    model ``config`` describes (names and shapes)."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays; got {type(params).__name__}")
    shapes = parameter_shapes(config)
    missing = sorted(set(shapes) - set(params))
    extra = sorted(set(params) - set(shapes))
    if missing or extra:
        raise ValueError(
            f"params do not match config (tied={config.tied}, "
            f"num_layers={config.num_layers}, d_ff={config.d_ff}): "
            f"missing {missing}, unexpected {extra}"
        )
    for name, shape in shapes.items():
        if np.shape(params[name]) != shape:
            raise ValueError(
                f"params[{name!r}] has shape {np.shape(params[name])}; config "
                f"{config} needs {shape}"
            )


def _head(params: dict) -> np.ndarray:
    """The LM head's matrix (V, d): ``lm_head`` if the model has one, else ``E``."""
    return params.get("lm_head", params["tok_emb"])


def parameter_count(params: dict) -> int:
    """The number of learned numbers: the sum of the sizes of every array (the tied
    head counts once: it is ``tok_emb``). Returns an int; raises nothing."""
    return int(sum(a.size for a in params.values()))


def _check_ids(idx, config: LMConfig, start: int, name: str = "idx") -> np.ndarray:
    idx = np.asarray(idx)
    if idx.dtype.kind not in "iu":
        raise TypeError(f"{name} (token ids) must be integers; got dtype {idx.dtype}")
    if idx.ndim != 2:
        raise ValueError(f"{name} (token ids) must have shape (B, L); got {idx.shape}")
    if idx.size and (idx.min() < 0 or idx.max() >= config.vocab_size):
        raise ValueError(f"{name} (token ids) must lie in 0 .. {config.vocab_size - 1}")
    unbounded = config.position == "rope" and config.window is not None
    if idx.shape[1] > config.context or (
        start + idx.shape[1] > config.context and not unbounded
    ):
        raise ValueError(
            f"positions {start} .. {start + idx.shape[1] - 1} exceed the model's "
            f"context of {config.context} positions"
        )
    return idx


def _start(caches, start, config: LMConfig) -> int:
    """The position of the first new token: the number of tokens the caches hold (all
    layers alike), which ``start``, if given, must equal."""
    if start is not None:
        start = as_length(start, "start")
    if caches is None:
        return 0 if start is None else start
    if len(caches) != config.num_layers:
        raise ValueError(
            f"caches has {len(caches)} layer caches; the model has "
            f"num_layers={config.num_layers}"
        )
    held = {cache.length for cache in caches}
    if len(held) != 1:
        raise ValueError(f"caches disagree on how many tokens they hold: {held}")
    (held,) = held
    if start is not None and start != held:
        raise ValueError(
            f"start={start} disagrees with the caches, which hold {held} tokens "
            "(omit start: it is the caches' length)"
        )
    return held


def forward(
    params: dict,
    config: LMConfig,
    idx,
    *,
    training: bool = False,
    rng=None,
    head_mask=None,
    caches=None,
    start: int | None = None,
    keep_for_backward: bool = False,
):
    """The logits for the next token at every position.

    Parameters
    ----------
    params : dict from :func:`init_language_model` (or loaded weights)
    config : LMConfig
    idx : int array, shape (B, L), token ids
    training : bool, apply dropout (needs ``rng``); default False: exact evaluation
    rng : numpy.random.Generator, the dropout masks' only source
    head_mask : array of shape (N, H), optional: multiplies each head's output (0
        removes that head, for ablations)
    caches : sequence of N layer caches, optional (generation; see
        :mod:`attnlib.models.kv_cache`); ``idx`` then holds the new tokens only
    start : int, optional, the position of ``idx[:, 0]``: with ``caches``, the number
        of tokens they hold (the default; a different ``start`` raises), else 0
    keep_for_backward : bool, also return what :func:`backward` needs

    Returns
    -------
    logits : array, shape (B, L, V), in the parameters' dtype
    weights : list of N arrays, each (B, H, L, L_k): every layer's attention weights
    saved : dict, only with ``keep_for_backward``

    Raises
    ------
    TypeError for token ids that are not integers; ValueError for ids outside ``0 .. V
    - 1``, positions beyond the context, params that do not match ``config`` (names and
    shapes), a ``head_mask`` not of shape (N, H), a ``start`` that disagrees with the
    caches, and from the blocks (dropout arguments).

    Source: Radford et al. (2019), section 2.3; Press & Wolf (2017) for the tied head.
    """
    c = config
    _check_params(params, c)
    start = _start(caches, start, c)
    idx = _check_ids(idx, c, start)
    if head_mask is not None:
        head_mask = np.asarray(head_mask)
        if head_mask.shape != (c.num_layers, c.num_heads):
            raise ValueError(
                f"head_mask must have shape (num_layers, num_heads) = "
                f"{(c.num_layers, c.num_heads)}; got {head_mask.shape}"
            )
    x = params["tok_emb"][idx]  # (B, L, d)
    if c.position == "learned":
        x = x + params["pos_emb"][start : start + idx.shape[1]]  # (B, L, d)
    weights, saved_blocks = [], []
    for r in range(c.num_layers):
        out = causal_block(
            x,
            block_params(params, r),
            num_heads=c.num_heads,
            num_kv_heads=c.num_kv_heads,
            window=c.window,
            dropout_rate=c.dropout,
            rng=rng,
            training=training,
            head_mask=None if head_mask is None else head_mask[r],
            cache=None if caches is None else caches[r],
            activation=c.activation,
            norm_kind=c.norm,
            rotary=c.position == "rope",
            start=start,
            keep_for_backward=keep_for_backward,
        )
        x = out[0]  # (B, L, d)
        weights.append(out[1])  # (B, H, L, L_k)
        if keep_for_backward:
            saved_blocks.append(out[2])
    h = norm(x, params, "lnf", c.norm)  # (B, L, d)
    logits = h @ _head(params).T  # (B, L, V): E^T when tied
    if not keep_for_backward:
        return logits, weights
    return logits, weights, dict(idx=idx, x=x, h=h, blocks=saved_blocks, start=start)


def cross_entropy(logits, targets):
    """Mean next-token cross-entropy and its gradient with respect to the logits.

    ``loss = -mean_t log softmax(logits_t)[targets_t]``, computed as a log-softmax (the
    largest logit subtracted first, so nothing overflows or underflows to log 0).

    Parameters: ``logits`` (..., V); ``targets``, int array of the leading shape.
    Returns: ``(loss, dlogits)``: a float and an array of the logits' shape,
    ``(softmax(logits) - onehot(targets)) / number of positions``. Raises numpy's
    ``ValueError`` naming ``logits`` (not finite floats) or ``targets`` (not integers
    of the logits' leading shape, or outside ``0 .. V - 1``).

    Source: the chain rule through the log-softmax; the gradient ``p - y`` is the one
    of the learning primer's logistic loss, with one class per token.
    """
    logits = np.asarray(logits)
    targets = np.asarray(targets)
    if logits.dtype.kind != "f" or not np.isfinite(logits).all():
        raise ValueError(
            f"logits must be finite floats; got {logits.dtype} {logits.shape}"
        )
    if targets.dtype.kind not in "iu" or targets.shape != logits.shape[:-1]:
        raise ValueError(
            f"targets must be integers of shape {logits.shape[:-1]} (the logits' "
            f"leading axes); got {targets.dtype} {targets.shape}"
        )
    if targets.size and (targets.min() < 0 or targets.max() >= logits.shape[-1]):
        raise ValueError(f"targets must lie in 0 .. {logits.shape[-1] - 1}")
    with np.errstate(over="ignore"):  # a gap beyond the float range: -inf, weight 0
        shifted = logits - logits.max(axis=-1, keepdims=True)  # (..., V), <= 0
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
    picked = np.take_along_axis(log_probs, targets[..., None], axis=-1)  # (..., 1)
    n = targets.size
    dlogits = np.exp(log_probs)  # (..., V), the softmax
    np.put_along_axis(dlogits, targets[..., None], np.exp(picked) - 1, axis=-1)
    return float(-picked.mean()), dlogits / dlogits.dtype.type(n)


def loss(params, config, idx, targets, *, training=False, rng=None, head_mask=None):
    """The mean next-token cross-entropy of the model on ``(idx, targets)`` (nats).

    ``idx`` and ``targets`` are int arrays of shape (B, L); returns a float. Raises
    what :func:`forward` raises.
    """
    logits, _ = forward(
        params, config, idx, training=training, rng=rng, head_mask=head_mask
    )
    return cross_entropy(logits, targets)[0]


def backward(params: dict, config: LMConfig, saved: dict, dlogits) -> dict:
    """Gradients of every parameter, given ``dLoss/dlogits`` and the forward pass's
    ``saved`` (from ``forward(..., keep_for_backward=True)``, without caches).

    ``dlogits`` has the logits' shape (B, L, V). Returns a dict with one array per
    parameter name, each of its parameter's shape. The tied embedding gets two
    contributions: from the head (``dlogits^T h``) and from the lookup at the input
    (added row by row where each token occurred); an untied model's head ``lm_head``
    gets the first alone. Raises ``TypeError`` or ``ValueError`` naming ``dlogits``
    when it is not a finite real array of shape (B, L, V) for the saved tokens, and
    ``params`` or ``config`` as :func:`forward` (a ``saved`` from another model gives
    numpy's shape errors).

    Source: :func:`forward` differentiated by the chain rule, step by step in reverse
    (checked against finite differences in tests/test_language_model.py).
    """
    c = config
    _check_params(params, c)
    dlogits = _check_dlogits(dlogits, saved, c)
    d_head = np.einsum("blv,bld->vd", dlogits, saved["h"])  # (V, d)
    grads = {"tok_emb": d_head if c.tied else np.zeros_like(d_head)}
    if not c.tied:
        grads["lm_head"] = d_head
    dx, g = norm_backward(dlogits @ _head(params), saved["x"], params, "lnf", c.norm)
    grads |= g  # dx: (B, L, d)
    for r_ in reversed(range(c.num_layers)):
        dx, g = causal_block_backward(
            dx,
            block_params(params, r_),
            saved["blocks"][r_],
            num_heads=c.num_heads,
            num_kv_heads=c.num_kv_heads,
        )
        grads |= {f"blocks.{r_}.{name}": value for name, value in g.items()}
    idx, start = saved["idx"], saved["start"]
    np.add.at(grads["tok_emb"], idx.ravel(), dx.reshape(-1, dx.shape[-1]))
    if c.position == "learned":
        grads["pos_emb"] = np.zeros_like(params["pos_emb"])
        grads["pos_emb"][start : start + idx.shape[1]] = dx.sum(axis=0)
    return {name: grads[name] for name in params}


def _check_dlogits(dlogits, saved: dict, c: LMConfig) -> np.ndarray:
    """``dlogits`` finite and real, of shape (B, L, V) for the saved tokens (B, L)."""
    dlogits = finite_array(dlogits, "dlogits", "(B, L, V)", 3)
    want = tuple(np.shape(saved["idx"])) + (c.vocab_size,)
    if dlogits.shape != want:
        raise ValueError(
            f"dlogits {dlogits.shape} must have the logits' shape {want} (the saved "
            "tokens' (B, L) and the vocabulary size V)"
        )
    return dlogits


def loss_and_gradients(params, config, idx, targets, *, training=False, rng=None):
    """``(loss, grads)``: the mean next-token cross-entropy and the gradient of every
    parameter (a dict keyed like ``params``). With ``training=True`` the dropout masks
    come from ``rng``; the same generator state gives the same masks, which is what
    lets a finite-difference check run with dropout on. ``idx`` and ``targets`` have
    shape (B, L); raises what :func:`forward` raises.
    """
    logits, _, saved = forward(
        params, config, idx, training=training, rng=rng, keep_for_backward=True
    )
    value, dlogits = cross_entropy(logits, targets)
    return value, backward(params, config, saved, dlogits)
