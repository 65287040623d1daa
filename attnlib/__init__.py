"""attnlib: the attention mechanism, written plainly in numpy for the book "Attention,
   executable".

The package is layered; each layer imports only from the layers above it in this list
(``tests/test_layers.py`` checks it):

core        the attention mechanism itself; imports nothing else from attnlib
  softmax       stable softmax along any axis, with an optional boolean mask
                  softmax(scores, axis=-1, mask=None)
  scores        dot-product, scaled dot-product and additive (Bahdanau) scores
                  dot_product_scores(q, k), scaled_dot_product_scores(q, k),
                  additive_scores(q, k, W_q, W_k, w_v)
  masks         causal, bidirectional, key-padding and query-padding masks
                  causal_mask(L_q, L_k=None, align=None),
                  bidirectional_mask(L_q, L_k=None),
                  padding_mask(valid_lens, L_k, side="right"),
                  query_padding_mask(valid_lens, L_q)
  attention     scaled dot-product attention (output and weights) and the weighted sum
                  attention(q, k, v, mask=None, scale=None, dropout=0.0, rng=None,
                            keep=None, return_keep=False) -> (output, weights[, keep]),
                  weighted_sum(weights, values)
  dropout       inverted dropout on the attention weights: the keep-mask and its use
                  dropout_keep_mask(dropout, rng, keep, shape),
                  drop_weights(weights, keep, dropout)
  tiled         attention tile by tile with an online softmax (FlashAttention-style)
                  tiled_attention(q, k, v, mask=None, causal=False, align=None,
                                  block_size=None)
  tiles         how tiled attention cuts the work: key tiles, causal tiles, threads
  heads         multi-head attention: split/merge heads, projections W_Q, W_K, W_V, W_O
                  split_heads(x, H), merge_heads(x), MultiHeadParams,
                  init_multi_head(rng, d, H),
                  multi_head_attention(q, k, v, params, mask=None,
                                       average_weights=False, dropout=0.0, rng=None,
                                       rotary=False)
  backward      gradients of softmax and of scaled dot-product attention (with masks)
                  softmax_backward(weights, grad_weights, axis=-1, mask=None),
                  attention_backward(q, k, v, grad_output, mask=None, scale=None),
                  numerical_gradient(f, x, eps=1e-5), relative_error(analytic, numeric)
  grouped_query  grouped-query and multi-query attention: heads share keys and values
                  grouped_query_attention(q, k, v, mask=None, rotary=False, ...),
                  GroupedQueryParams,
                  grouped_query_self_attention(x, params, mask),
                  from_multi_head(params, num_kv_heads)
  sliding_window  causal attention limited to the last w positions
                  sliding_window_mask(L_q, L_k=None, window=w, align=None)
  scaling       why scores are divided by sqrt(d_k): the variance argument, simulated
                  score_variance(rng, d_k, n=20000, scaled=False), mean_max_weight(...)
  _rotary       rotary embeddings as attention applies them (``rotary=True``)
  _validation   the one contract every entry point checks (shapes, dtypes, masks, scale)
  _numerics     what takes part in attention and what overflows (the contract's
                numerics)
layers      the Transformer's parts, built from core
  positional_encoding  sinusoidal encodings, rotary embeddings, ALiBi biases
  layer_norm           layer normalisation over the features of each position, and
                       RMSNorm: layer_norm(x, gain, bias), rms_norm(x, gain)
  feed_forward         the position-wise feed-forward network, GELU, ReLU, SiLU and
                       the gated SwiGLU: silu(x), swiglu(x, W_1, W_3, W_2)
  encoder_layer        one post-LN encoder layer: self-attention, residuals, norms,
                       feed-forward
  decoder_layer        one decoder layer: causal self-attention, cross-attention,
                       feed-forward
  causal_block         one pre-LN causal block (GPT-2, or LLaMA's RMSNorm, RoPE and
                       SwiGLU) and its backward pass
  dropout              residual dropout (training only), with the core's keep-mask
  layer_backward       backward passes of layer norm, RMSNorm, GELU, SiLU and SwiGLU
data        the book's data: worked examples and synthetic tasks (numpy only)
  examples          the source documents' worked examples as named read-only arrays
  translation_task  a toy language pair with a known word alignment (the bottleneck
                    chapter)
  context_task      sentences where context decides the sense of "bank" (the
                    learned-and-computed chapter)
  learning_task     labelled examples, 2 informative numbers of 20 (the learning primer)
  book_text         the book's prose as characters: corpus, tokenizer, split, windows
models      models and experiments built from core, layers and data
  recurrent         the Elman tanh RNN: rnn_encode, rnn_step, rnn_backward (BPTT)
  gru               the gated recurrent unit (Cho et al. 2014): gru_encode, gru_backward
  bottleneck        one context vector against attention over every encoder state
  rnn_decoder       one decoder step with additive attention, and its backward pass
  encoder_decoder   a trained recurrent encoder-decoder (Bahdanau et al. 2015)
  translation_training  the bottleneck chapter's translators trained to convergence
                        (make train)
  translation_eval  their held-out evaluation: by length, word kind and target position
  adam              the Adam optimiser (Kingma & Ba 2015) and AdamW with decoupled
                    weight decay (Loshchilov & Hutter 2019)
  linear_classifier  the learning primer's classifier: loss, gradient, early stopping
  context_classifier  a one-layer self-attention classifier, trained by hand
  adversarial_attention  a Jain & Wallace style search for other attention weights
  adversarial_exact  the search's exact answer for a two-class model
  minilm            a real pretrained encoder (all-MiniLM-L6-v2) in numpy
  minilm_probes     probes of its attention: controlled sentences, the attention sink
  minilm_sink       edits of one key in every layer: the sink tested on the whole model
  language_model    a decoder-only Transformer language model and its backward pass
                    (GPT-2 style, or LLaMA style: RoPE, RMSNorm, SwiGLU, no biases)
  lm_training       training it: Adam, warm-up, clipping, the validation stopping rule
  lm_runs           the stored language models of the chapters (make train-lm)
  generation        greedy decoding, temperature and top-k sampling
  kv_cache          the KV cache: stored keys and values, full or sliding-window
  induction         induction heads: the task, their scores, ablations (make train-lm)
figures     the book's figures and explorers (may use everything above)
  style, heatmaps, charts, diagrams, probes, translation   matplotlib figures
                    (re-exported by book_support.figures)
  language_model    the language-model chapters' figures (losses, token cost, heads)
  svg               small SVG drawings of explorer states
  precomputed       explorers for the static website: controls linked to stored states
  explorers/        one module per family of explorer (weights, query_key, masks, ...)
exercises   checkers for the chapters' exercises and the self-check questions (quiz)

The names a reader uses most are re-exported here: everything in ``core`` and ``layers``
listed in ``__all__`` (``attnlib.attention``, ``attnlib.softmax``, ...). Models, data
and figures are imported from their layer (``from attnlib.models import minilm``).

Semantics (decided once, tested in tests/)
------------------------------------------
* Shapes: arrays are ``(..., L, d)``: any leading batch and head axes, then positions,
  then features. Scores and weights are ``(..., L_q, L_k)``: one row per query, one
  column per key. Leading axes broadcast. Multi-head weights are ``(..., H, L_q, L_k)``
  (averaged over heads only with ``average_weights=True``). Any length may be 0 (empty
  results, no error).
* Masks are boolean and ``True`` means "may attend". A float or integer mask raises
  ``TypeError`` naming its dtype. **One mask rule** (``attnlib.core._validation.
  mask_for_scores``, used by every function that takes a mask: ``attention``,
  ``tiled_attention``, ``attention_backward``, ``multi_head_attention``,
  ``encoder_layer``, ``decoder_layer``): a mask's meaning is decided by its number of
  axes relative to the inputs, never by whether two sizes happen to be equal. Inputs
  with leading axes ``batch`` give scores ``batch + (L_q, L_k)``; a mask's axes align
  with them from the right (numpy broadcasting) and it may not enlarge them. Functions
  that make the heads themselves (``multi_head_attention`` and the layers) read a mask
  with at most ``len(batch) + 2`` axes as one mask per example, shared by every head (a
  ``padding_mask`` of shape ``(B, 1, L_k)`` for ``B`` sentences, whatever ``B`` and
  ``H`` are), and a mask with exactly one axis more as one mask per head, ``batch + (H,
  L_q, L_k)``, head axis third from the end (``mask[None]`` makes one ``(H, L_q, L_k)``
  mask serve every example). Anything else raises ``ValueError`` naming the mask's
  shape and both layouts. ``attention`` and ``tiled_attention`` know no heads: called
  on per-head arrays ``(B, H, L, d)`` they need the head axis written, ``mask[:,
  None]``.
* Causal masks: the diagonal is allowed. When ``L_q != L_k`` you must say where the
  queries sit among the keys, ``align="end"`` (the last ``L_q`` positions, as when
  decoding after a cached prefix) or ``align="start"``; there is no silent default.
* A query with no allowed key gets all-zero weights and a zero output: no NaN, no
  warning. Rows of weights therefore sum to 1, or to 0 when fully masked.
* Masked keys never influence the output, whatever their keys or values hold (even NaN
  or inf). Padding never changes the real tokens' results, on the left or the right. A
  batch element gives the same result alone as inside a batch. Heads never mix tokens.
* Masking selects entries (``numpy.copyto(..., where=)``: masked scores become exactly
  ``-inf`` before the maximum is subtracted); it never adds a "large negative constant",
  so it is exact in every dtype.
* Numerics: float16 inputs are upcast to float32 inside; float32 and float64 are
  computed in their own precision (float32 stays as fast as the hardware's float32
  matrix products). Softmax always subtracts the row maximum before exponentiating, so
  no exponential can overflow at any magnitude. Results come back in the input dtype
  (integers give float64). A result too large for its dtype (say float16 outputs above
  65504, or float32 scores beyond 3.4e38) raises ``OverflowError`` instead of becoming
  ``inf`` (for attention, an allowed score, ``q . k`` before scaling or ``scale * q``
  beyond the compute dtype; checked before any score is computed, so no warning is
  emitted). NaN or +inf in a score, query, key or value that takes part raises
  ``ValueError``; a score of -inf simply gets weight 0.
* Errors: shape mismatches raise ``ValueError`` naming both shapes; a model width not
  divisible by the number of heads raises ``ValueError`` saying so; a wrong dtype raises
  ``TypeError`` naming it (booleans are refused as scores, values or plotted weights: a
  mask in the wrong place); a length that is not an integer raises ``TypeError``.
* ``scale`` (the factor of ``Q K^T``, default ``1 / sqrt(d_k)``) is a single real
  number: ``int``, ``float`` or a numpy integer or floating scalar; zero and negative
  are allowed. A boolean is not a number here: ``scale=True`` raises ``TypeError``, as
  do complex numbers and strings; NaN, inf or an array raise ``ValueError``.
* One contract for every entry point that takes queries, keys, values and a mask
  (``attention``, ``tiled_attention``, ``multi_head_attention`` per head,
  ``attention_backward``): all four call one check,
  ``attnlib.core._validation.check_attention``, so they accept the same inputs, refuse
  the same inputs with the same error class, and agree on the results (tested as one
  property in tests/test_contract.py).
* Dropout (training only; off by default, and then every result is exactly the one
  without it): ``attention``, ``multi_head_attention`` and ``attention_backward`` take
  ``dropout=p`` (a number in [0, 1)) with ``rng=`` (a ``numpy.random.Generator``,
  required when ``p > 0``; a seed is refused) or ``keep=`` (a boolean keep-mask to
  replay). The keep-mask is ``rng.random(weights.shape) >= p``; kept weights are divided
  by ``1 - p`` before the weighted sum. The weights returned are always those before
  dropout (rows sum to 1 or 0); ``return_keep=True`` also returns the keep-mask, which
  ``attention_backward(..., dropout=p, keep=keep)`` uses for the exact gradient. The
  layers take ``attention_dropout=p`` and ``rng=``.
* Text: every label and title a figure or an explorer draws is drawn exactly as typed
  (``book_support.figures.literal``: a ``$`` never starts mathematics).

Sources: Bahdanau, Cho & Bengio (2015), "Neural Machine Translation by Jointly Learning
to Align and Translate", section 3.1 and appendix A; Vaswani et al. (2017), "Attention
Is All You Need", section 3.2. Each function's docstring names its section or equation.
"""

from attnlib.core.attention import attention, weighted_sum
from attnlib.core.backward import attention_backward, softmax_backward
from attnlib.core.heads import (
    MultiHeadParams,
    init_multi_head,
    merge_heads,
    multi_head_attention,
    split_heads,
)
from attnlib.core.masks import (
    bidirectional_mask,
    causal_mask,
    padding_mask,
    query_padding_mask,
)
from attnlib.core.scores import (
    additive_scores,
    dot_product_scores,
    scaled_dot_product_scores,
)
from attnlib.core.softmax import softmax
from attnlib.core.tiled import tiled_attention
from attnlib.layers.decoder_layer import (
    DecoderLayerParams,
    decoder_layer,
    init_decoder_layer,
)
from attnlib.layers.encoder_layer import (
    EncoderLayerParams,
    encoder_layer,
    init_encoder_layer,
)
from attnlib.layers.feed_forward import feed_forward, gelu, silu, swiglu
from attnlib.layers.layer_norm import layer_norm, rms_norm
from attnlib.layers.positional_encoding import (
    rotary_embedding,
    sinusoidal_encoding,
    sinusoidal_shift_matrix,
)

__all__ = [
    "softmax",
    "dot_product_scores",
    "scaled_dot_product_scores",
    "additive_scores",
    "causal_mask",
    "bidirectional_mask",
    "padding_mask",
    "query_padding_mask",
    "attention",
    "weighted_sum",
    "tiled_attention",
    "split_heads",
    "merge_heads",
    "MultiHeadParams",
    "init_multi_head",
    "multi_head_attention",
    "softmax_backward",
    "attention_backward",
    "sinusoidal_encoding",
    "sinusoidal_shift_matrix",
    "rotary_embedding",
    "layer_norm",
    "rms_norm",
    "feed_forward",
    "gelu",
    "silu",
    "swiglu",
    "EncoderLayerParams",
    "encoder_layer",
    "init_encoder_layer",
    "DecoderLayerParams",
    "decoder_layer",
    "init_decoder_layer",
]
__version__ = "0.1.0"
