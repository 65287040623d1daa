"""attnlib: the attention mechanism, written plainly in numpy for the book "Attention, executable".

Modules (one concept each)
--------------------------
softmax     stable softmax along any axis, with an optional boolean mask
scores      dot-product, scaled dot-product and additive (Bahdanau) scores
masks       causal, bidirectional, key-padding and query-padding masks
attention   scaled dot-product attention (output and weights) and the weighted sum
heads       multi-head attention: split/merge heads, projections W_Q, W_K, W_V, W_O
plots       attention heatmaps, mixture bar charts, mask (access) maps
examples    the source documents' worked examples as named data
scaling     why scores are divided by sqrt(d_k): the variance argument, simulated
minilm      a real pretrained encoder (all-MiniLM-L6-v2) in numpy: weights, norms, interventions

Semantics (decided once, tested in tests/)
------------------------------------------
* Shapes: arrays are ``(..., L, d)``: any leading batch and head axes, then positions, then
  features. Scores and weights are ``(..., L_q, L_k)``: one row per query, one column per key.
* Masks are boolean and ``True`` means "may attend". A float or integer mask raises
  ``TypeError`` naming its dtype. Masks broadcast to the scores' shape and may not enlarge it.
* A query with no allowed key gets all-zero weights and a zero output: no NaN, no warning.
* Masked keys never influence the output, whatever their keys or values hold. Padding never
  changes the real tokens' results, on the left or the right. A batch element gives the same
  result alone as inside a batch. Heads never mix tokens.
* Masking selects entries (``numpy.where``); it never adds a "large negative constant", so it
  is exact in every dtype.
* float16 is computed in float32 and float32/float64 in their own precision, with the
  maximum subtracted before exponentiating; results come back in the input dtype.
* Shape mismatches raise ``ValueError`` naming both shapes; a model width not divisible by
  the number of heads raises ``ValueError`` saying so.

Sources: Bahdanau, Cho & Bengio (2015); Vaswani et al. (2017), section 3.2.
"""
from .attention import attention, weighted_sum
from .heads import MultiHeadParams, init_multi_head, merge_heads, multi_head_attention, split_heads
from .masks import bidirectional_mask, causal_mask, padding_mask, query_padding_mask
from .scores import additive_scores, dot_product_scores, scaled_dot_product_scores
from .softmax import softmax
from . import minilm  # cheap: the model's files are read on first use, then cached

__all__ = [
    "softmax",
    "dot_product_scores", "scaled_dot_product_scores", "additive_scores",
    "causal_mask", "bidirectional_mask", "padding_mask", "query_padding_mask",
    "attention", "weighted_sum",
    "split_heads", "merge_heads", "MultiHeadParams", "init_multi_head", "multi_head_attention",
    "minilm",
]
__version__ = "0.1.0"
