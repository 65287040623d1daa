"""A recurrent encoder-decoder for the toy translation task, trained in plain numpy.

Two kinds of model with identical sizes, differing in one thing only, as in Bahdanau,
Cho & Bengio (2015, section 5 and Figure 2):

* ``attend=False``, the *context-vector model* (RNN encoder-decoder of Cho et al. 2014):
  the decoder sees only one summary vector ``c`` of the source sentence;
* ``attend=True``, the *attention model* (Bahdanau et al. 2015, section 3): at every
  step the decoder scores every encoder state with additive attention and mixes them.

Either kind has a bidirectional encoder (``bidirectional=True``, as in Bahdanau et al.,
section 3.2) or a forward-only one of the same annotation width. The whole model (B
sentences of length T; ``m`` word-vector width, ``h`` state width of each encoder
direction, ``d`` decoder state, ``a`` attention width, ``V`` target vocabulary)::

    x_t = E_src[source_t]                                        (B, T, m)
    bidirectional:
      f_t = tanh(x_t W_xf + f_{t-1} W_hf + b_f),  f_0 = 0      (B, T, h) left to right
      r_t = tanh(x_t W_xr + r_{t+1} W_hr + b_r),  r_{T+1} = 0  (B, T, h) right to left
      h_t = [f_t, r_t],  c = [f_T, r_1]                          (B, T, 2h), (B, 2h)
    forward-only:
      h_t = f_t = tanh(x_t W_xf + f_{t-1} W_hf + b_f)            (B, T, 2h)
      c = f_T                                                    (B, 2h)
    s_0 = tanh(c W_init + b_init)                                (B, d)
    step i = 1..T: y = E_tgt[previous target word]               (B, m)
                   s_i, logits_i = decoder_step(...)             (rnn_decoder)
    loss = mean over words of -log softmax(logits_i)[target_i]

With ``cell="gru"`` every encoder direction is the gated recurrent unit of Cho et al.
(2014, section 2.3; :mod:`attnlib.models.gru`) instead of the tanh cell: its weights
``W_xf`` (m, 3h_f), ``W_hf`` (h_f, 3h_f), ``b_f`` (3h_f,) hold the blocks of its two
gates and its candidate side by side (the same for ``W_xr``, ``W_hr``, ``b_r``). The
decoder keeps its tanh cell.

The annotation ``h_j`` of a bidirectional encoder describes word ``j`` with its
neighbours on both sides; a forward-only one has read only the words up to ``j``. The
recurrences are :func:`attnlib.models.recurrent.rnn_encode`, run over the sentence and
(bidirectional) over its reverse. The context-vector model hands the decoder the summary
``c``, the final states (everything the encoder has read, in 2h numbers); the attention
model mixes the annotations afresh at every step. Both start the decoder from ``c``.

This module is the model: its parameters, the teacher-forced forward pass and its
gradients (backpropagation), and greedy translation. Training is in
:mod:`book_support.experiments.translation_training`, evaluation in
:mod:`book_support.experiments.translation_eval`, the task in
:mod:`attnlib.data.translation_task`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from attnlib.core._validation import as_generator, as_width
from attnlib.core.softmax import softmax
from attnlib.data.translation_task import (
    SOURCE_VOCAB,
    START,
    TARGET_VOCAB,
    TranslationBatch,
)
from attnlib.models.gru import gru_backward, gru_encode
from attnlib.models.recurrent import rnn_backward, rnn_encode
from attnlib.models.rnn_decoder import (
    ATTENTION_PARAMETERS,
    STEP_PARAMETERS,
    decoder_step,
    decoder_step_backward,
)

#: Parameters of the embedding tables and the left-to-right encoder.
EMBEDDING_AND_FORWARD = ("E_src", "E_tgt", "W_xf", "W_hf", "b_f")
#: Parameters of the right-to-left encoder (bidirectional models only).
REVERSE_PARAMETERS = ("W_xr", "W_hr", "b_r")
#: Parameters of the decoder's initial state.
INIT_PARAMETERS = ("W_init", "b_init")


@dataclass
class EncoderDecoder:
    """A recurrent encoder-decoder: its parameters (float64 arrays by name) and its
    kind.

    params : dict -- ``E_src`` (V_src, m), ``E_tgt`` (V, m); ``W_xf`` (m, h_f), ``W_hf``
        (h_f, h_f), ``b_f`` (h_f,) with ``h_f = h`` (bidirectional) or ``2h``
        (forward-only); bidirectional models also ``W_xr`` (m, h), ``W_hr`` (h, h),
        ``b_r`` (h,); ``W_init`` (2h, d), ``b_init`` (d,); the decoder step's parameters
        (:data:`attnlib.models.rnn_decoder.STEP_PARAMETERS`, context width 2h) and, if
        ``attend``, ``W_q`` (d, a), ``W_k`` (2h, a), ``w_v`` (a,). With a GRU
        encoder the encoder's weights are three times as wide: ``W_xf`` (m, 3h_f),
        ``W_hf`` (h_f, 3h_f), ``b_f`` (3h_f,), and the same for the reverse direction.
    attend : bool -- additive attention (True) or the fixed context vector (False).
    history : dict of lists filled by training (see
        :func:`book_support.experiments.translation_training.train`).

    The encoder's direction and cell are read from the parameters
    (:attr:`bidirectional`, :attr:`cell`).
    """

    params: dict
    attend: bool
    history: dict = field(default_factory=dict)

    @property
    def bidirectional(self) -> bool:
        """True if the encoder reads the sentence in both directions."""
        return "W_xr" in self.params

    @property
    def cell(self) -> str:
        """``"gru"`` if the encoder is a GRU (``W_hf`` is (h_f, 3h_f)), else
        ``"tanh"``."""
        W = self.params["W_hf"]
        return "gru" if W.shape[1] == 3 * W.shape[0] else "tanh"

    @property
    def names(self) -> tuple:
        """The parameter names of this kind of model, in a fixed order."""
        reverse = REVERSE_PARAMETERS if self.bidirectional else ()
        extra = ATTENTION_PARAMETERS if self.attend else ()
        return (
            EMBEDDING_AND_FORWARD + reverse + INIT_PARAMETERS + STEP_PARAMETERS + extra
        )

    @property
    def kind(self) -> str:
        """``"attention"`` or ``"context"``, then ``"bidirectional"`` or
        ``"forward"``."""
        return (
            f"{'attention' if self.attend else 'context'}, "
            f"{'bidirectional' if self.bidirectional else 'forward'}"
            f"{', GRU encoder' if self.cell == 'gru' else ''}"
        )

    def n_parameters(self) -> int:
        """Total number of learned numbers."""
        return int(sum(self.params[k].size for k in self.names))


def init_encoder_decoder(
    rng,
    *,
    attend: bool,
    bidirectional: bool = True,
    m: int = 16,
    h: int = 32,
    d: int = 64,
    a: int = 32,
    cell: str = "tanh",
) -> EncoderDecoder:
    """A freshly initialised model.

    Weights are normal with standard deviation ``1 / sqrt(fan_in)`` (cf. Glorot & Bengio
    2010), the recurrent ``W_hf``, ``W_hr`` and ``W_s`` random orthogonal matrices (Saxe
    et al. 2014; Bahdanau et al. 2015, appendix B.1), biases zero. Models of the same
    encoder direction draw the same numbers for the parameters they share, so the
    context-vector model starts where the attention model starts, minus attention.

    Parameters
    ----------
    rng : numpy.random.Generator or int seed
    attend : bool
    bidirectional : bool -- two encoder directions of width ``h``, or one of width
        ``2h`` (the annotations have ``2h`` numbers either way)
    m, h, d, a : positive ints -- word-vector, encoder (per direction), decoder and
        attention widths
    cell : ``"tanh"`` or ``"gru"`` -- the encoder's recurrent cell; a GRU's three
        recurrent blocks are each random orthogonal

    Raises
    ------
    ValueError
        If a width is not positive, ``cell`` is not one of the two, or ``rng`` is a
        negative seed.
    TypeError
        If a width is not an integer (2.5 and ``True`` included) or ``rng`` is neither
        a Generator nor an integer seed (each named).
    """
    m, h, d, a = (
        as_width(n, name) for name, n in (("m", m), ("h", h), ("d", d), ("a", a))
    )
    if not isinstance(cell, str) or cell not in ("tanh", "gru"):
        raise ValueError(f"cell must be 'tanh' or 'gru'; got {cell!r}")
    rng = as_generator(rng)
    V_src, V = len(SOURCE_VOCAB), len(TARGET_VOCAB)
    h_f = h if bidirectional else 2 * h

    def normal(*shape):
        return rng.normal(size=shape) / np.sqrt(shape[0])

    def orthogonal(n):
        q, r = np.linalg.qr(rng.normal(size=(n, n)))
        return q * np.sign(np.diag(r))

    def recurrent(n):  # the tanh cell's W_h, or a GRU's three blocks side by side
        if cell == "tanh":
            return orthogonal(n)
        return np.concatenate([orthogonal(n) for _ in range(3)], axis=1)

    k = 3 if cell == "gru" else 1  # blocks per encoder weight
    p = {
        "E_src": rng.normal(size=(V_src, m)),
        "E_tgt": rng.normal(size=(V, m)),
        "W_xf": normal(m, k * h_f),
        "W_hf": recurrent(h_f),
        "b_f": np.zeros(k * h_f),
    }
    if bidirectional:
        p.update(W_xr=normal(m, k * h), W_hr=recurrent(h), b_r=np.zeros(k * h))
    p.update(
        W_init=normal(2 * h, d),
        b_init=np.zeros(d),
        W_y=normal(m, d),
        W_c=normal(2 * h, d),
        W_s=orthogonal(d),
        b=np.zeros(d),
        W_os=normal(d, V),
        W_oc=normal(2 * h, V),
        b_o=np.zeros(V),
        W_q=normal(d, a),
        W_k=normal(2 * h, a),
        w_v=normal(a),
    )
    if not attend:
        for k in ATTENTION_PARAMETERS:
            del p[k]
    return EncoderDecoder(p, attend)


@dataclass
class Forward:
    """What :func:`forward` computed. logits : (B, T, V); weights : (B, T_target,
    T_source) attention weights (None without attention); the rest is kept for the
    backward pass:
    x (B, T, m), F (B, T, h_f) the left-to-right states, R (B, T, h) the right-to-left
    ones (None for a forward-only encoder), H (B, T, 2h) the annotations, c (B, 2h) the
    summary, s0 (B, d)."""

    logits: np.ndarray
    weights: np.ndarray | None
    x: np.ndarray
    F: np.ndarray
    R: np.ndarray | None
    H: np.ndarray
    c: np.ndarray
    s0: np.ndarray
    steps: list


def _check(model: EncoderDecoder, batch: TranslationBatch) -> None:
    if not isinstance(model, EncoderDecoder):
        raise TypeError(
            "model must be an attnlib.models.encoder_decoder.EncoderDecoder; got "
            f"{type(model).__name__}"
        )
    if not isinstance(batch, TranslationBatch):
        raise TypeError(
            "batch must be an attnlib.data.translation_task.TranslationBatch; "
            f"got {type(batch).__name__}"
        )


def _encode(p: dict, source: np.ndarray):
    """Word vectors, the directions' states, annotations, summary and ``s_0``."""
    x = p["E_src"][source]  # (B, T, m)
    gru = p["W_hf"].shape[1] == 3 * p["W_hf"].shape[0]
    encode = gru_encode if gru else rnn_encode
    F, _ = encode(x, p["W_xf"], p["W_hf"], p["b_f"])  # (B, T, h_f) to the right
    if "W_xr" in p:
        R, _ = encode(x[:, ::-1], p["W_xr"], p["W_hr"], p["b_r"])
        R = R[:, ::-1]  # (B, T, h) to the left
        H = np.concatenate([F, R], axis=-1)  # (B, T, 2h)
        c = np.concatenate([F[:, -1], R[:, 0]], axis=-1)  # (B, 2h)
    else:
        R, H, c = None, F, F[:, -1]  # (B, T, 2h), (B, 2h)
    s0 = np.tanh(c @ p["W_init"] + p["b_init"])  # (B, d)
    return x, F, R, H, c, s0


def forward(model: EncoderDecoder, batch: TranslationBatch) -> Forward:
    """Teacher-forced forward pass: the decoder reads ``<s>`` and the correct previous
    words.

    Returns
    -------
    Forward, with ``logits`` (B, T, V) and the attention ``weights`` (B, T, T) (row
    ``i``: target word ``i``'s weights over the source words) or None.

    Raises
    ------
    TypeError
        If ``model`` or ``batch`` has the wrong type.
    """
    _check(model, batch)
    p = model.params
    x, F, R, H, c, s0 = _encode(p, batch.source)
    memory = H if model.attend else c
    keys = H @ p["W_k"] if model.attend else None  # (B, T, a): once per sentence
    y_in = p["E_tgt"][batch.decoder_inputs()]  # (B, T, m)
    s, steps = s0, []
    for i in range(batch.length):
        step = decoder_step(p, s, y_in[:, i], memory, model.attend, keys)
        steps.append(step)
        s = step.s
    logits = np.stack([st.logits for st in steps], axis=1)  # (B, T, V)
    weights = np.stack([st.weights for st in steps], axis=1) if model.attend else None
    return Forward(logits, weights, x, F, R, H, c, s0, steps)


def _cross_entropy(logits, target):
    """Mean cross-entropy and its gradient with respect to the logits (B, T, V)."""
    probs = softmax(logits)  # (B, T, V)
    B, T = target.shape
    b, t = np.meshgrid(np.arange(B), np.arange(T), indexing="ij")
    value = float(-np.mean(np.log(np.maximum(probs[b, t, target], 1e-300))))
    d_logits = probs.copy()
    d_logits[b, t, target] -= 1.0
    return value, d_logits / (B * T)


def loss(model: EncoderDecoder, batch: TranslationBatch) -> float:
    """Mean cross-entropy per target word under teacher forcing (natural log)."""
    return _cross_entropy(forward(model, batch).logits, batch.target)[0]


def loss_and_gradients(model: EncoderDecoder, batch: TranslationBatch):
    """The loss and its gradient with respect to every parameter (backpropagation).

    Order of the backward pass: the read-out and decoder steps from the last word to the
    first (:func:`attnlib.models.rnn_decoder.decoder_step_backward`; the gradient of the
    projected keys ``H W_k`` is collected over the steps and taken back through ``W_k``
    once), the initial state ``s_0``, then the encoder through time
    (:func:`attnlib.models.recurrent.rnn_backward`, or
    :func:`attnlib.models.gru.gru_backward`; the right-to-left direction on the
    reversed sentence), and finally the word vectors (each row of ``E_src`` and
    ``E_tgt`` collects the gradients of its uses).

    Returns
    -------
    loss : float
    grads : dict with an array of each parameter's shape for every name in
        ``model.names``
    """
    f = forward(model, batch)
    p = model.params
    value, d_logits = _cross_entropy(f.logits, batch.target)
    grads = {k: np.zeros_like(p[k]) for k in model.names}
    d_H = np.zeros_like(f.H)  # (B, T, 2h)
    d_c = np.zeros_like(f.c)  # (B, 2h)
    d_y = np.zeros(batch.target.shape + (p["E_tgt"].shape[1],))  # (B, T, m)
    d_s = np.zeros_like(f.s0)  # (B, d)
    memory, d_memory = (f.H, d_H) if model.attend else (f.c, d_c)
    d_keys = None  # (B, T, a): gradient of the projected keys H W_k, over all steps
    if model.attend:
        d_keys = np.zeros(f.H.shape[:2] + p["W_k"].shape[1:])
    for i in range(batch.length - 1, -1, -1):
        d_s, d_y[:, i] = decoder_step_backward(
            p, f.steps[i], memory, d_logits[:, i], d_s, grads, d_memory, None, d_keys
        )
    if model.attend:  # keys = H W_k
        two_h, a = p["W_k"].shape
        grads["W_k"] += f.H.reshape(-1, two_h).T @ d_keys.reshape(-1, a)
        d_H += d_keys @ p["W_k"].T
    d_a0 = d_s * (1.0 - f.s0**2)  # s_0 = tanh(a_0)
    grads["W_init"] += f.c.T @ d_a0
    grads["b_init"] += d_a0.sum(axis=0)
    d_c += d_a0 @ p["W_init"].T
    h_f = f.F.shape[-1]
    d_F = d_H[..., :h_f].copy()  # (B, T, h_f)
    d_F[:, -1] += d_c[:, :h_f]  # c = [f_T, r_1], or f_T
    zeros = np.zeros_like(f.F[:, 0])

    def backward(x, states, W_x, W_h, b, grad_states):  # through the encoder's cell
        if model.cell == "gru":
            return gru_backward(x, states, zeros, W_x, W_h, b, grad_states)
        return rnn_backward(x, states, zeros, W_x, W_h, grad_states)

    fwd = backward(f.x, f.F, p["W_xf"], p["W_hf"], p["b_f"], d_F)
    parts = [("W_xf", fwd["W_x"]), ("W_hf", fwd["W_h"]), ("b_f", fwd["b"])]
    d_x = fwd["inputs"]  # (B, T, m)
    if model.bidirectional:
        d_R = d_H[..., h_f:].copy()  # (B, T, h)
        d_R[:, 0] += d_c[:, h_f:]
        rev = backward(
            f.x[:, ::-1], f.R[:, ::-1], p["W_xr"], p["W_hr"], p["b_r"], d_R[:, ::-1]
        )  # the reversed sentence
        parts += [("W_xr", rev["W_x"]), ("W_hr", rev["W_h"]), ("b_r", rev["b"])]
        d_x = d_x + rev["inputs"][:, ::-1]
    for name, grad in parts:
        grads[name] += grad
    np.add.at(grads["E_src"], batch.source, d_x)
    np.add.at(grads["E_tgt"], batch.decoder_inputs(), d_y)
    return value, grads


def translate_greedy(model: EncoderDecoder, source) -> tuple:
    """Translate without the answer: each step reads the model's own previous word.

    Parameters
    ----------
    source : (B, T) int token ids (or a TranslationBatch)

    Returns
    -------
    words : (B, T) int64 predicted target ids (the most probable word at every step)
    weights : (B, T, T) float64 attention weights of the decoding, or None without
        attention

    Raises
    ------
    ValueError
        If ``source`` is not a non-empty (B, T) array of source ids.
    """
    if isinstance(source, TranslationBatch):
        source = source.source
    source = np.asarray(source)
    if source.ndim != 2 or source.size == 0:
        raise ValueError(
            f"source must be (B, T) token ids with T >= 1; got shape {source.shape}"
        )
    if source.min() < 0 or source.max() >= len(SOURCE_VOCAB):
        raise ValueError(
            f"source ids must lie in [0, {len(SOURCE_VOCAB)}); got "
            f"{source.min()}..{source.max()}"
        )
    p = model.params
    _, _, _, H, c, s = _encode(p, source)
    memory = H if model.attend else c
    keys = H @ p["W_k"] if model.attend else None  # (B, T, a): once per sentence
    prev = np.full(source.shape[0], START)
    words, weights = [], []
    for _ in range(source.shape[1]):
        step = decoder_step(p, s, p["E_tgt"][prev], memory, model.attend, keys)
        prev = np.argmax(step.logits[:, :START], axis=1)  # never emits <s>
        words.append(prev)
        weights.append(step.weights)
        s = step.s
    words = np.stack(words, axis=1)
    return words, (np.stack(weights, axis=1) if model.attend else None)


#: The key of the table of contents that :func:`save` writes (format 2).
_MANIFEST = "manifest.json"


def save(models: dict, path) -> None:
    """Write models (name -> EncoderDecoder) to one compressed ``.npz``, parameters as
    float32.

    Every name that is a ``str`` round-trips through :func:`load`, whatever it holds
    ("run/attention", spaces, dots, any Unicode): the names are written once, in a
    table of contents (JSON, stored as a 0-d string array under ``"manifest.json"``),
    and each model's arrays are stored under its position in that table
    (``"0/E_src"``, ``"0/history/loss"``, ...), so that no name is ever split at a
    ``/``. History keys are stored the same way.

    Parameters
    ----------
    models : dict, str -> EncoderDecoder (parameters of any real dtype; histories of
        numbers)
    path : str or path-like, the file to write (``numpy.savez_compressed`` adds
        ``.npz`` if missing)

    Raises
    ------
    TypeError
        If ``models`` is not a dict, a name or a history key is not a ``str`` (an int
        name would come back as a str), or a value is not an :class:`EncoderDecoder`.
    KeyError
        If a model lacks one of the parameters of its kind (``model.names``).
    """
    if not isinstance(models, dict):
        raise TypeError(
            "models must be a dict of name -> EncoderDecoder; got "
            f"{type(models).__name__}"
        )
    manifest = {"format": 2, "models": []}
    arrays = {}
    for i, (name, model) in enumerate(models.items()):
        if not isinstance(name, str):
            raise TypeError(
                f"models: every name must be a str (it is stored as text); got "
                f"{name!r} of type {type(name).__name__}"
            )
        if not isinstance(model, EncoderDecoder):
            raise TypeError(
                f"models[{name!r}] must be an EncoderDecoder; got "
                f"{type(model).__name__}"
            )
        missing = [k for k in model.names if k not in model.params]
        if missing:
            raise KeyError(f"models[{name!r}] lacks the parameters {missing}")
        for key in model.history:
            if not isinstance(key, str):
                raise TypeError(
                    f"models[{name!r}].history: every key must be a str; got {key!r}"
                )
        manifest["models"].append(
            {"name": name, "attend": bool(model.attend), "history": list(model.history)}
        )
        for k in model.names:
            arrays[f"{i}/{k}"] = np.asarray(model.params[k]).astype(np.float32)
        for j, values in enumerate(model.history.values()):
            arrays[f"{i}/history/{j}"] = np.asarray(values, dtype=np.float64)
    arrays[_MANIFEST] = np.array(json.dumps(manifest))
    np.savez_compressed(path, **arrays)


def load(path) -> dict:
    """Read models written by :func:`save`: name -> EncoderDecoder (parameters as
    float64, histories as lists).

    Files written before the table of contents (format 1: arrays under
    ``"<name>/<parameter>"``, names without ``/``) are read too.

    Raises
    ------
    OSError (from numpy) if ``path`` cannot be read; ValueError if the file's table of
    contents names a format this version does not know.
    """
    with np.load(path) as data:
        if _MANIFEST not in data.files:
            return _load_format_1(data)
        manifest = json.loads(str(data[_MANIFEST]))
        if manifest.get("format") != 2:
            raise ValueError(
                f"{path}: unknown model file format {manifest.get('format')!r}"
            )
        stored = [EncoderDecoder({}, bool(e["attend"])) for e in manifest["models"]]
        for key in data.files:
            if key == _MANIFEST:
                continue
            i, _, rest = key.partition("/")  # "0/E_src", "0/history/1"
            model, entry = stored[int(i)], manifest["models"][int(i)]
            if rest.startswith("history/"):
                name = entry["history"][int(rest.removeprefix("history/"))]
                model.history[name] = data[key].tolist()
            else:
                model.params[rest] = data[key].astype(np.float64)
        for model, entry in zip(stored, manifest["models"]):  # in the order of save
            model.history = {k: model.history[k] for k in entry["history"]}
        return {e["name"]: model for e, model in zip(manifest["models"], stored)}


def _load_format_1(data) -> dict:
    """The first format: ``"<name>/attend"``, ``"<name>/<parameter>"``,
    ``"<name>/history/<key>"``."""
    models = {}
    for key in data.files:
        name, _, rest = key.partition("/")
        model = models.setdefault(name, EncoderDecoder({}, False))
        if rest == "attend":
            model.attend = bool(data[key])
        elif rest.startswith("history/"):
            model.history[rest.split("/", 1)[1]] = data[key].tolist()
        else:
            model.params[rest] = data[key].astype(np.float64)
    return models
