"""attnlib: the attention mechanism, written plainly in numpy for the book "Attention, executable".

Modules (one concept each)
--------------------------
softmax     stable softmax along any axis, with an optional boolean mask
              softmax(scores, axis=-1, mask=None)
scores      dot-product, scaled dot-product and additive (Bahdanau) scores
              dot_product_scores(q, k), scaled_dot_product_scores(q, k),
              additive_scores(q, k, W_q, W_k, w_v)
masks       causal, bidirectional, key-padding and query-padding masks
              causal_mask(L_q, L_k=None, align=None), bidirectional_mask(L_q, L_k=None),
              padding_mask(valid_lens, L_k, side="right"), query_padding_mask(valid_lens, L_q)
attention   scaled dot-product attention (output and weights) and the weighted sum
              attention(q, k, v, mask=None, scale=None) -> (output, weights),
              weighted_sum(weights, values)
heads       multi-head attention: split/merge heads, projections W_Q, W_K, W_V, W_O
              split_heads(x, H), merge_heads(x), MultiHeadParams, init_multi_head(rng, d, H),
              multi_head_attention(q, k, v, params, mask=None, per_head=None,
                                   average_weights=False)
plots       attention heatmaps, mixture bar charts, mask (access) maps (import attnlib.plots)
              use_book_style(), attention_heatmap(weights, queries, keys),
              mixture_bars(weights, labels), access_map(mask, tokens),
              data_flow_diagram(tokens), layer_head_grids(panels, titles, ...)
              length_curve(lengths, curves), alignment_heatmaps(panels)
              layer_flow_diagram(kind="encoder"): the data flow through one Transformer layer
              literal(text), literal_labels(labels) (text drawn exactly as typed)
examples    the source documents' worked examples as named data (read-only arrays)
              BANK, MACHINE_LEARNING_ROCKS, DOT_PRODUCT_Q/K, RAW_SCORE, TWO_HEAD_SCORES, ...
scaling     why scores are divided by sqrt(d_k): the variance argument, simulated
              random_dot_products(rng, d_k, n), score_variance(rng, d_k, n=20000, scaled=False),
              mean_max_weight(rng, d_k, n_keys=10, n_samples=2000, scaled=True)
minilm      a real pretrained encoder (all-MiniLM-L6-v2) in numpy: weights, norms, interventions
explorers   interactive explorers (score, scale, query, mask, head): pure state, figure, widget
precomputed  explorers for the static website: controls jslinked to precomputed states
              PrecomputedExplorer(controls, render, name=...), Control(description, options)
svg         small SVG drawings of explorer states: bar_chart, arrows, heatmap, line_chart
exercises   checkers for the chapters' exercises: check_close, check_function, one module per topic
bottleneck  an RNN encoder's single context vector versus attention over all its states
              rnn_encode(x, W_x, W_h, b) -> (states, final), init_rnn(rng, m, h),
              final_state_jacobians, decoder_context, recovery_experiment(lengths)
recurrent   the recurrent (Elman) tanh cell and its backward pass (backpropagation through time)
              rnn_forward(x, W_x, W_h, b), rnn_step(x_t, h_prev, W_x, W_h, b),
              rnn_backward(x, states, h0, W_x, W_h, grad_states)
decoder     one decoder step of an encoder-decoder, with or without additive attention, and
            its backward pass: decoder_step(p, s_prev, y, memory, attend), decoder_step_backward
translation_task  a toy language pair (adjectives follow their nouns) with a known alignment
              make_batch(rng, n, length) -> TranslationBatch, translate(words), SOURCE_VOCAB
encoder_decoder  a trained recurrent encoder-decoder: one context vector or attention
              (Bahdanau et al. 2015): init_encoder_decoder(rng, attend), train, evaluate,
              translate_greedy, save, load
translation_training  chapter 2's two trained models (make train): CONFIG, WEIGHTS,
              train_one(attend), length_curve(models)
tiled       attention tile by tile with an online softmax (FlashAttention-style): memory n * block
              tiled_attention(q, k, v, mask=None, causal=False, align=None, block_size=None)
              (the same numerics policy as attention, below)
backward    gradients: softmax and scaled dot-product attention backward passes (with masks)
              softmax_backward(weights, grad_weights, axis=-1, mask=None),
              attention_backward(q, k, v, grad_output, mask=None, scale=None) -> (dq, dk, dv)
              (float64 gradients, after the same checks as attention),
              numerical_gradient(f, x, eps=1e-5), relative_error(analytic, numeric)
context_task  a synthetic task where context decides the sense of "bank" (and "bat", "spring")
              make_context_task(n, rng), encode_sentences(sentences), ContextBatch, VOCAB
training    one-layer self-attention classifier, its backward pass, Adam, training loop
              train_context_classifier(seed=0, pooling="attention"), context_datasets(seed),
              forward(model, batch), accuracy(model, batch), loss_and_gradients(model, batch)
adversarial_attention  attention override and a Jain & Wallace style counterfactual search
              predict_with_attention(model, batch, weights),
              search_alternative_attention(model, batch, index=0, epsilon=0.01)
positional_encoding  order: sinusoidal encodings, rotary embeddings, ALiBi biases, measurements
              sinusoidal_encoding(L, d), sinusoidal_shift_matrix(k, d), rotary_embedding(x),
              alibi_bias(L_q, L_k, H), similarity_by_distance(E, max_distance)
layer_norm  layer normalisation over the features of each position
              layer_norm(x, gain=None, bias=None, eps=1e-5)
feed_forward  the position-wise feed-forward network and its activations
              feed_forward(x, W_1, b_1, W_2, b_2, activation="gelu"), gelu(x), relu(x), erf(x)
encoder_layer  one post-LN encoder layer: self-attention, residuals, layer norms, feed-forward
              encoder_layer(x, params, mask=None) -> (output, weights), init_encoder_layer
decoder_layer  one decoder layer: causal self-attention, cross-attention, feed-forward
              decoder_layer(y, memory, params) -> (output, self_w, cross_w), init_decoder_layer

Semantics (decided once, tested in tests/)
------------------------------------------
* Shapes: arrays are ``(..., L, d)``: any leading batch and head axes, then positions, then
  features. Scores and weights are ``(..., L_q, L_k)``: one row per query, one column per key.
  Leading axes broadcast. Multi-head weights are ``(..., H, L_q, L_k)`` (averaged over heads
  only with ``average_weights=True``). Any length may be 0 (empty results, no error).
* Masks are boolean and ``True`` means "may attend". A float or integer mask raises
  ``TypeError`` naming its dtype. Masks broadcast to the scores' shape and may not enlarge it.
  Broadcasting aligns axes from the right: a key mask ``(B, 1, L_k)`` fits ``(B, L_q, L_k)``;
  for a head axis insert ``mask[:, None]`` (``multi_head_attention`` does this itself).
  ``multi_head_attention`` takes a mask shared by all heads or one per head (head axis third
  from the end); ``per_head=True/False`` says which, and a mask that could be read either way
  (its axis of size ``H`` could be the heads or the inputs' batch axis) is refused, never
  applied to the wrong axis.
* Causal masks: the diagonal is allowed. When ``L_q != L_k`` you must say where the queries
  sit among the keys, ``align="end"`` (the last ``L_q`` positions, as when decoding after a
  cached prefix) or ``align="start"``; there is no silent default.
* A query with no allowed key gets all-zero weights and a zero output: no NaN, no warning.
  Rows of weights therefore sum to 1, or to 0 when fully masked.
* Masked keys never influence the output, whatever their keys or values hold (even NaN or
  inf). Padding never changes the real tokens' results, on the left or the right. A batch
  element gives the same result alone as inside a batch. Heads never mix tokens.
* Masking selects entries (``numpy.copyto(..., where=)``: masked scores become exactly ``-inf`` before the
  maximum is subtracted); it never adds a "large negative constant", so it is exact in every
  dtype.
* Numerics: float16 inputs are upcast to float32 inside; float32 and float64 are computed
  in their own precision (float32 stays as fast as the hardware's float32 matrix products).
  Softmax always subtracts the row maximum before exponentiating, so no exponential can
  overflow at any magnitude. Results come back in the input dtype (integers give float64).
  A result too large for its dtype (say float16 outputs above 65504, or float32 scores
  beyond 3.4e38) raises ``OverflowError`` instead of becoming ``inf`` (for attention, an
  allowed score, ``q . k`` before scaling or ``scale * q`` beyond the compute dtype;
  checked before any score is computed, so no warning is emitted). NaN or
  +inf in a score, query, key or value that takes part raises ``ValueError``; a score of
  -inf simply gets weight 0.
* Errors: shape mismatches raise ``ValueError`` naming both shapes; a model width not
  divisible by the number of heads raises ``ValueError`` saying so; a wrong dtype raises
  ``TypeError`` naming it (booleans are refused as scores, values or plotted weights: a
  mask in the wrong place); a length that is not an integer raises ``TypeError``.
* ``scale`` (the factor of ``Q K^T``, default ``1 / sqrt(d_k)``) is a single real number:
  ``int``, ``float`` or a numpy integer or floating scalar; zero and negative are allowed.
  A boolean is not a number here: ``scale=True`` raises ``TypeError``, as do complex
  numbers and strings; NaN, inf or an array raise ``ValueError``.
* One contract for every entry point that takes queries, keys, values and a mask
  (``attention``, ``tiled_attention``, ``multi_head_attention`` per head,
  ``attention_backward``): all four call one check, ``attnlib._validation.check_attention``,
  so they accept the same inputs, refuse the same inputs with the same error class, and
  agree on the results (tested as one property in tests/test_contract.py).
* Text: every label and title a figure or an explorer draws is drawn exactly as typed
  (``plots.literal``: a ``$`` never starts mathematics).

Sources: Bahdanau, Cho & Bengio (2015), "Neural Machine Translation by Jointly Learning to
Align and Translate", section 3.1 and appendix A; Vaswani et al. (2017), "Attention Is All
You Need", section 3.2. Each function's docstring names its section or equation.
"""
from .attention import attention, weighted_sum
from .bottleneck import (RNNParams, decoder_context, final_state_jacobians, init_rnn,
                         recovery_experiment, rnn_encode)
from .heads import MultiHeadParams, init_multi_head, merge_heads, multi_head_attention, split_heads
from .masks import bidirectional_mask, causal_mask, padding_mask, query_padding_mask
from .scores import additive_scores, dot_product_scores, scaled_dot_product_scores
from .softmax import softmax
from .tiled import tiled_attention
from .backward import attention_backward, softmax_backward
from .training import train_context_classifier
from .positional_encoding import rotary_embedding, sinusoidal_encoding, sinusoidal_shift_matrix
from .layer_norm import layer_norm
from .feed_forward import feed_forward, gelu
from .encoder_layer import EncoderLayerParams, encoder_layer, init_encoder_layer
from .decoder_layer import DecoderLayerParams, decoder_layer, init_decoder_layer
from . import minilm  # cheap: the model's files are read on first use, then cached

__all__ = [
    "softmax",
    "dot_product_scores", "scaled_dot_product_scores", "additive_scores",
    "causal_mask", "bidirectional_mask", "padding_mask", "query_padding_mask",
    "attention", "weighted_sum",
    "split_heads", "merge_heads", "MultiHeadParams", "init_multi_head", "multi_head_attention",
    "minilm",
    "rnn_encode", "init_rnn", "RNNParams", "final_state_jacobians", "decoder_context",
    "recovery_experiment",
    "tiled_attention",
    "softmax_backward", "attention_backward", "train_context_classifier",
]
__all__ += [
    "sinusoidal_encoding", "sinusoidal_shift_matrix", "rotary_embedding", "layer_norm",
    "feed_forward", "gelu", "EncoderLayerParams", "encoder_layer", "init_encoder_layer",
    "DecoderLayerParams", "decoder_layer", "init_decoder_layer",
]
__version__ = "0.1.0"
