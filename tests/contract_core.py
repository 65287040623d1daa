"""The core helper's rows of the contract registry (issue 26): every public function
of ``attnlib.core`` and ``attnlib.layers`` -> the test that holds its contract,
merged into ``tests/test_public_contract.py``'s ``CONTRACT_TESTS`` by its
``registry()``.

Each row names ``tests/test_contract_core.py::test_contract``: a table with one row per
function that holds the whole contract in one place (documented dtype and a value
computed independently; bad input raising the documented class with a message naming
the argument; extreme finite input finite or OverflowError; every warning an error).
No earlier single test held all three parts for one of these functions: the deeper
tests split them and stay as they are, and are the place to look next:

- ``test_contract.py::test_every_entry_point_keeps_one_contract`` (attention,
  tiled_attention, multi_head_attention, attention_backward: dtypes, error classes,
  extremes and agreement, drawn by hypothesis; not the messages);
- ``test_mask_rule.py`` (the one mask rule, B and H drawn, equal ones included);
- ``test_layers_contract.py`` (the layers: dtypes, mixed dtypes, 49 bad inputs, edges
  against Python-float references, two entry points agreeing at the edges);
- each module's own file (test_softmax.py, test_tiled.py, test_heads.py, ...).
"""

from __future__ import annotations

CORE = "tests/test_contract_core.py::test_contract"

#: function -> the test that holds its contract (attnlib.core, attnlib.layers)
CONTRACT_TESTS = {
    "attnlib.core.attention.attention": CORE,
    "attnlib.core.attention.check_weighted_sum": CORE,
    "attnlib.core.attention.weighted_sum": CORE,
    "attnlib.core.backward.attention_backward": CORE,
    "attnlib.core.backward.numerical_gradient": CORE,
    "attnlib.core.backward.relative_error": CORE,
    "attnlib.core.backward.softmax_backward": CORE,
    "attnlib.core.dropout.as_dropout_rate": CORE,
    "attnlib.core.dropout.check_dropout": CORE,
    "attnlib.core.dropout.drop_weights": CORE,
    "attnlib.core.dropout.dropout_keep_mask": CORE,
    "attnlib.core.heads.init_multi_head": CORE,
    "attnlib.core.heads.merge_heads": CORE,
    "attnlib.core.heads.multi_head_attention": CORE,
    "attnlib.core.heads.split_heads": CORE,
    "attnlib.core.masks.bidirectional_mask": CORE,
    "attnlib.core.masks.causal_mask": CORE,
    "attnlib.core.masks.padding_mask": CORE,
    "attnlib.core.masks.query_padding_mask": CORE,
    "attnlib.core.scaling.mean_max_weight": CORE,
    "attnlib.core.scaling.random_dot_products": CORE,
    "attnlib.core.scaling.score_variance": CORE,
    "attnlib.core.scores.additive_scores": CORE,
    "attnlib.core.scores.dot_product_scores": CORE,
    "attnlib.core.scores.scaled_dot_product_scores": CORE,
    "attnlib.core.softmax.attention_softmax": CORE,
    "attnlib.core.softmax.check_allowed_scores": CORE,
    "attnlib.core.softmax.check_softmax": CORE,
    "attnlib.core.softmax.exp_normalise": CORE,
    "attnlib.core.softmax.mask_and_max": CORE,
    "attnlib.core.softmax.softmax": CORE,
    "attnlib.core.tiled.default_block_sizes": CORE,
    "attnlib.core.tiled.online_softmax": CORE,
    "attnlib.core.tiled.online_softmax_trace": CORE,
    "attnlib.core.tiled.tile_plan": CORE,
    "attnlib.core.tiled.tiled_attention": CORE,
    "attnlib.core.tiles.as_block_sizes": CORE,
    "attnlib.core.tiles.as_workers": CORE,
    "attnlib.core.tiles.check_causal": CORE,
    "attnlib.core.tiles.default_workers": CORE,
    "attnlib.core.tiles.key_tiles": CORE,
    "attnlib.core.tiles.run_blocks": CORE,
    "attnlib.core.tiles.tile_mask": CORE,
    "attnlib.layers.decoder_layer.decoder_layer": CORE,
    "attnlib.layers.decoder_layer.init_decoder_layer": CORE,
    "attnlib.layers.encoder_layer.encoder_layer": CORE,
    "attnlib.layers.encoder_layer.init_encoder_layer": CORE,
    "attnlib.layers.encoder_layer.self_attention_block": CORE,
    "attnlib.layers.feed_forward.erf": CORE,
    "attnlib.layers.feed_forward.feed_forward": CORE,
    "attnlib.layers.feed_forward.gelu": CORE,
    "attnlib.layers.feed_forward.init_feed_forward": CORE,
    "attnlib.layers.feed_forward.relu": CORE,
    "attnlib.layers.layer_norm.layer_norm": CORE,
    "attnlib.layers.positional_encoding.alibi_bias": CORE,
    "attnlib.layers.positional_encoding.alibi_slopes": CORE,
    "attnlib.layers.positional_encoding.frequencies": CORE,
    "attnlib.layers.positional_encoding.rotary_embedding": CORE,
    "attnlib.layers.positional_encoding.similarity_by_distance": CORE,
    "attnlib.layers.positional_encoding.sinusoidal_encoding": CORE,
    "attnlib.layers.positional_encoding.sinusoidal_shift_matrix": CORE,
}
