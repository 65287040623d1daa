"""A test of the attention sink that could fail: edit one key in every layer of
all-MiniLM-L6-v2 and measure what changes at the top of the model.

The chapter "Reading attention" finds that ``[CLS]`` takes about 0.6 of the weight in
layers 1 to 4 while its transformed vectors ``f(x_0)`` are short. That a key with a
short vector delivers little *in that layer* follows from those two numbers; whether
the model's output depends on what ``[CLS]`` delivers, or on the weight it holds, does
not, because a change in one layer passes through layer normalisation, the
feed-forward networks and the weights of every layer above. So each edit below is made
in **every** layer, on the layer's actual input, and its effect is read off the final
token vectors and the sentence embedding (the mean of the final vectors over the
tokens, the pooling of Reimers & Gurevych 2019 that this model is used with).

The three edits of key position ``k`` (in every head of every layer):

``"silence"``
    ``f^h(x_k) := 0``; the edit leaves the weights alone, so the weight on ``k`` fetches
    nothing.
``"fill"``
    ``f^h(x_k) :=`` the mean of ``f^h(x_j)`` over the other positions ``j``; the edit
    leaves the weights alone, so the weight on ``k`` fetches an average of the sentence.
``"block"``
    ``k`` is masked as a key for every query, so each row's weight is shared among the
    other keys in proportion to their weights (each grows by ``1 / (1 - alpha_ik)``).

The weights are those each layer computes from its own input, which from layer 1 on is
already edited: silence and fill leave identical weights in layer 0 only. With
``frozen_weights=True`` every layer uses instead the weights of the unedited pass, so
that silence and fill differ, in every layer, only in what the same weights fetch
(``block`` changes the weights by definition and cannot be frozen).

Since ``f^h(x) = (x W_V^h + b_V^h) W_O^h`` is affine in the value row, editing
``f^h(x_k)`` is the same as editing that value row (Kobayashi et al. 2020, section 3).

Entry points
------------
``forward_with_key_edit(text_or_ids, keys, edit)`` -> final vectors, (len(keys), L, 384)
``sentence_embedding(text_or_ids)``                -> (384,) the mean-pooled embedding
``key_edit_effects(sentences, edits=KEY_EDITS)``   -> the effects on the embedding and
                                                      on the token vectors, ``[CLS]``
                                                      against the content tokens
``cls_edit_cosines(sentences, edits, frozen_weights=True)`` -> (len(sentences),) the
                                                      embedding cosine of the [CLS] edit

Sources: Xiao et al. (2023), section 3 (the attention sink); Clark et al. (2019),
section 3 (attention to special tokens as a no-op); Kobayashi et al. (2020), section 3
(``f(x)``); Reimers & Gurevych (2019), section 3 (mean pooling).
"""

from __future__ import annotations

import numpy as np

from attnlib.layers.encoder_layer import encoder_layer, self_attention_block
from attnlib.layers.feed_forward import feed_forward
from attnlib.layers.layer_norm import layer_norm
from attnlib.models import minilm

#: The edits of one key that :func:`forward_with_key_edit` makes in every layer.
KEY_EDITS = ("silence", "fill", "block")

#: What :func:`key_edit_effects` reports for each edit, in this order.
EFFECT_MEASURES = (
    "[CLS]: embedding cosine",
    "[CLS]: token change",
    "content: embedding cosine",
    "content: lowest embedding cosine",
    "content: highest embedding cosine",
    "content: token change",
)


#: The edits that leave the weights alone, so can run with every layer's weights frozen.
FREEZABLE_EDITS = ("silence", "fill")


def _edited_layer(x, layer, keys: np.ndarray, edit: str, frozen=None) -> np.ndarray:
    """One encoder layer on ``x`` (B, L, 384) with key ``keys[b]`` edited in run b;
    ``frozen`` (12, L, L), if given, replaces the weights the layer computes."""
    B, L, _ = x.shape
    runs = np.arange(B)
    if edit == "block":
        allowed = np.ones((B, L, L), dtype=bool)  # (B, L_q, L_k), shared by the heads
        allowed[runs, :, keys] = False
        return encoder_layer(x, layer, allowed)[0]
    steps = self_attention_block(x, layer.attn)
    W_O_heads = layer.attn.W_O.reshape(minilm.NUM_HEADS, minilm.D_HEAD, minilm.D_MODEL)
    f = steps["v"] @ W_O_heads  # (B, 12, L, 384): f^h(x_j)
    f_key = f[runs, :, keys]  # (B, 12, 384)
    if edit == "silence":
        new = np.zeros_like(f_key)  # (B, 12, 384)
    else:  # "fill": the mean over the other L - 1 positions
        new = (f.sum(axis=2) - f_key) / (L - 1)  # (B, 12, 384)
    weights = steps["weights"]  # (B, 12, L_q, L_k)
    attended = steps["attended"]  # (B, L, 384)
    if frozen is not None:
        weights = np.broadcast_to(frozen, weights.shape)  # (B, 12, L_q, L_k)
        # sum_h sum_j alpha^h_ij f^h(x_j) + b_O, with the unedited pass's alpha
        attended = np.einsum("bhij,bhjd->bid", weights, f) + layer.attn.b_O
    on_key = weights[runs, :, :, keys]  # (B, 12, L_q): alpha^h_ik
    # the attention output changes by sum_h alpha^h_ik (new^h - f^h(x_k))
    attended = attended + np.einsum("bhi,bhd->bid", on_key, new - f_key)
    h = layer_norm(x + attended, layer.ln1_gain, layer.ln1_bias, layer.eps)
    ff = feed_forward(
        h, layer.W_1, layer.b_1, layer.W_2, layer.b_2, layer.activation
    )  # (B, L, 384)
    return layer_norm(h + ff, layer.ln2_gain, layer.ln2_bias, layer.eps)


def forward_with_key_edit(
    text_or_ids, keys, edit: str, *, frozen_weights: bool = False
) -> np.ndarray:
    """Run all-MiniLM-L6-v2 once per key in ``keys``, editing that key in every layer.

    Parameters
    ----------
    text_or_ids : str or 1-D sequence of int token ids, as :func:`minilm.forward`
    keys : int or sequence of int
        Token positions (0 is ``[CLS]``); run ``b`` edits position ``keys[b]``.
    edit : one of :data:`KEY_EDITS`: ``"silence"``, ``"fill"`` or ``"block"`` (see the
        module's docstring)
    frozen_weights : bool, default False
        If True, every layer uses the attention weights of the unedited pass instead of
        those it computes from its edited input (only for :data:`FREEZABLE_EDITS`).

    Returns
    -------
    numpy.ndarray, float64, shape (len(keys), L, 384): the final token vectors of each
    run (an int ``keys`` gives shape (L, 384)).

    Raises
    ------
    ValueError
        If ``edit`` is unknown, a key lies outside ``0..L-1``, ``keys`` is empty, the
        sentence has fewer than 2 tokens (nothing left to attend to), or
        ``frozen_weights`` is asked for with ``"block"``.
    TypeError
        If ``keys`` holds something other than integers.
    """
    if edit not in KEY_EDITS:
        raise ValueError(f"edit must be one of {KEY_EDITS}; got {edit!r}")
    if frozen_weights and edit not in FREEZABLE_EDITS:
        raise ValueError(
            f"frozen_weights needs an edit that leaves the weights alone, one of "
            f"{FREEZABLE_EDITS}; got {edit!r}"
        )
    _, ids = minilm._as_ids(text_or_ids)
    L = ids.size
    k = np.asarray(keys)
    if k.size and k.dtype.kind not in "iu":
        raise TypeError(f"keys must be integer positions; got dtype {k.dtype}")
    single = k.ndim == 0
    k = k.reshape(-1)
    if k.size == 0 or L < 2 or ((k < 0) | (k >= L)).any():
        raise ValueError(
            f"keys must be one or more positions in 0..{L - 1} of a sentence of at "
            f"least 2 tokens; got {k.tolist()} for {L} tokens"
        )
    x = np.repeat(minilm.embed(ids)[None], k.size, axis=0)  # (B, L, 384)
    frozen = minilm.forward(ids).attention if frozen_weights else [None] * 6
    for layer, a in zip(minilm.load_weights().layers, frozen):  # a: (12, L, L)
        x = _edited_layer(x, layer, k, edit, a)
    return x[0] if single else x


def sentence_embedding(text_or_ids) -> np.ndarray:
    """The sentence embedding: the final token vectors averaged over all ``L`` tokens
    (``[CLS]`` and ``[SEP]`` included), shape (384,), float64.

    This is the mean pooling the model is used with (Reimers & Gurevych 2019); the
    model card also divides by the length, which no cosine below depends on.
    """
    return minilm.forward(text_or_ids).hidden_states[-1].mean(axis=0)


def _cosines(E: np.ndarray, e: np.ndarray) -> np.ndarray:
    """Cosine of every row of ``E`` (B, d) with ``e`` (d,)."""
    return E @ e / (np.linalg.norm(E, axis=-1) * np.linalg.norm(e))


def key_edit_effects(sentences, edits=KEY_EDITS) -> dict:
    """Edit ``[CLS]``, and in turn every content token, in every layer; measure the top.

    For each sentence (tokens ``[CLS] t_1 ... t_n [SEP]``) and each edit, the key is
    ``[CLS]`` (position 0) in one run and each content token ``t_k`` in the others.
    Each run is compared with the unedited pass:

    * **embedding cosine**: the cosine between the edited and the unedited sentence
      embedding (:func:`sentence_embedding`); 1 means unchanged in direction;
    * **token change**: ``||y'_i - y_i|| / ||y_i||`` for the final vectors, averaged
      over the tokens ``i`` other than ``[CLS]`` and the edited key.

    Parameters
    ----------
    sentences : sequence of str, each with at least one content token
    edits : sequence of names from :data:`KEY_EDITS`

    Returns
    -------
    dict: edit -> dict mapping each name of :data:`EFFECT_MEASURES` to an array of
    shape (len(sentences),), float64. ``"[CLS]: ..."`` is the run that edits
    ``[CLS]``; ``"content: embedding cosine"`` and ``"content: token change"`` are the
    means over the sentence's content tokens, ``"content: lowest embedding cosine"``
    and ``"content: highest embedding cosine"`` the content tokens whose edit moves the
    embedding most and least.

    Raises
    ------
    TypeError
        If ``sentences`` is one str rather than a sequence of them.
    ValueError
        If an edit is unknown, or a sentence has no content token (named).
    """
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of str, not one str")
    for edit in edits:
        if edit not in KEY_EDITS:
            raise ValueError(f"edits must be names from {KEY_EDITS}; got {edit!r}")
    result = {edit: {m: [] for m in EFFECT_MEASURES} for edit in edits}
    for sentence in sentences:
        out = minilm.forward(sentence)
        L = len(out.tokens)
        if L < 3:
            raise ValueError(f"{sentence!r} has no token besides [CLS] and [SEP]")
        y = out.hidden_states[-1]  # (L, 384)
        keys = np.arange(L - 1)  # [CLS], then the content tokens 1..L-2
        for edit in edits:
            y_edit = forward_with_key_edit(out.ids, keys, edit)  # (L - 1, L, 384)
            cos = _cosines(y_edit.mean(axis=1), y.mean(axis=0))  # (L - 1,)
            change = np.linalg.norm(y_edit - y, axis=-1) / np.linalg.norm(y, axis=-1)
            # (L - 1 runs, L tokens); leave out [CLS] and the edited key itself
            others = np.ones_like(change, dtype=bool)
            others[:, 0] = False
            others[keys, keys] = False
            token_change = (change * others).sum(axis=1) / others.sum(axis=1)
            r = result[edit]
            r["[CLS]: embedding cosine"].append(cos[0])
            r["[CLS]: token change"].append(token_change[0])
            r["content: embedding cosine"].append(cos[1:].mean())
            r["content: lowest embedding cosine"].append(cos[1:].min())
            r["content: highest embedding cosine"].append(cos[1:].max())
            r["content: token change"].append(token_change[1:].mean())
    return {
        edit: {m: np.array(v, dtype=np.float64) for m, v in r.items()}
        for edit, r in result.items()
    }


def cls_edit_cosines(sentences, edits=FREEZABLE_EDITS, *, frozen_weights=True) -> dict:
    """The embedding cosine (as in :func:`key_edit_effects`) of editing ``[CLS]`` in
    every layer, one run per sentence.

    With ``frozen_weights=True`` (the default) every layer keeps the unedited pass's
    weights, so ``"silence"`` and ``"fill"`` meet the same weights everywhere; with
    False this is ``key_edit_effects(...)[edit]["[CLS]: embedding cosine"]``.

    Returns
    -------
    dict: edit -> numpy.ndarray, float64, shape (len(sentences),)

    Raises
    ------
    TypeError
        If ``sentences`` is one str rather than a sequence of them.
    ValueError
        As :func:`forward_with_key_edit` (an unknown edit; ``"block"`` with frozen
        weights), or if a sentence has no content token (named).
    """
    if isinstance(sentences, str):
        raise TypeError("sentences must be a sequence of str, not one str")
    result = {edit: [] for edit in edits}
    for sentence in sentences:
        out = minilm.forward(sentence)
        if len(out.tokens) < 3:
            raise ValueError(f"{sentence!r} has no token besides [CLS] and [SEP]")
        e = out.hidden_states[-1].mean(axis=0)  # (384,)
        for edit in edits:
            y = forward_with_key_edit(
                out.ids, [0], edit, frozen_weights=frozen_weights
            )  # (1, L, 384)
            result[edit].append(_cosines(y.mean(axis=1), e)[0])
    return {edit: np.array(v, dtype=np.float64) for edit, v in result.items()}
