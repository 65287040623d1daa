"""Issue 41: the contract, generated. Every public function and class of attnlib's
core, layers, data and the models that stay in the library is found by introspection
(:func:`public_callables`); every one of its arguments must have a domain in
:data:`DOMAINS`, one table keyed by the argument's NAME. From that domain hypothesis
draws bad values (zero, negative, non-integer, bool, NaN, inf, wrong dtype, too few
axes, mismatched sizes) and the call must raise ``TypeError`` or ``ValueError`` whose
message names the argument, with no warning and without changing its inputs; float
arrays are also drawn at extreme finite magnitudes, where the result must be finite
(or the documented ``OverflowError``).

A valid call is built from :data:`VALID` (one valid value per argument name, for a
small shared geometry: 2 queries, 3 keys, width 4, 2 heads) and, where a function needs
arguments that fit together, from :data:`EXAMPLES` (per function). Faults found and
not yet fixed are listed in :data:`KNOWN` (strict xfail: fixing one makes it fail until
it is removed). A new public function fails :func:`test_every_argument_has_a_domain`
until its arguments are declared.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import math
import pkgutil
import warnings
from functools import cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import attnlib

#: modules being moved out of attnlib (issue 41's companion), not covered here
MOVED = {
    "translation_training",
    "translation_eval",
    "lm_runs",
    "minilm_probes",
    "minilm_sink",
    "adversarial_attention",
    "adversarial_exact",
    "context_classifier",
}
LAYERS = ("core", "layers", "data", "models")


@cache
def public_callables() -> dict:
    """qualified name -> public function or class defined in a covered module (in its
    ``__all__``, or a module-level name not starting with ``_``)."""
    found = {}
    for info in pkgutil.walk_packages(attnlib.__path__, "attnlib."):
        parts = info.name.split(".")
        if len(parts) < 3 or parts[1] not in LAYERS or parts[2] in MOVED:
            continue
        if any(part.startswith("_") for part in parts):
            continue
        module = importlib.import_module(info.name)
        names = set(getattr(module, "__all__", ())) | {
            n for n in vars(module) if not n.startswith("_")
        }
        for name in sorted(names):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and (
                obj.__module__ == info.name
            ):
                found[f"{info.name}.{name}"] = obj
    return found


def arguments(obj) -> dict:
    """name -> inspect.Parameter (``self``, ``*args`` and ``**kwargs`` left out)."""
    params = inspect.signature(obj).parameters
    return {
        n: p
        for n, p in params.items()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    }


# --- what may be drawn: one strategy of bad values per kind of argument ------------

NAN, INF = float("nan"), float("inf")
NOT_INTEGERS = [2.5, 2.0, np.float64(3.0), True, np.bool_(True), NAN, INF, "2"]
NOT_REALS = [True, "1", 1j, NAN, INF, -INF]


def _array_bad(valid, *, mismatch: bool, nan: bool = True, scalar: bool = True):
    a = np.asarray(valid)
    bad = [a.astype(bool), a.astype(str)]  # dtype
    if scalar:
        bad.append(np.float64(1.0))  # too few axes
    if nan and a.size:
        for v in (NAN, INF):
            b = a.astype(np.float64)
            b.flat[-1] = v
            bad.append(b)
    if mismatch and a.ndim:
        bad.append(np.concatenate([a, a[..., :1]], axis=-1))  # one feature too many
    return st.sampled_from(bad)


def _positions_bad(valid):
    # RoPE is defined for every integer position, negative ones included
    # (test_positional_encoding), so -1 is not drawn: only non-integers
    a = np.asarray(valid)
    return st.sampled_from([a.astype(np.float64) + 0.5, a.astype(bool)])


def _ids_bad(valid):
    a = np.asarray(valid)
    neg = a.copy()
    neg.flat[-1] = -1
    return st.sampled_from([a.astype(np.float64) + 0.5, a.astype(bool), neg])


def _mask_bad(valid):
    a = np.asarray(valid)
    wide = np.concatenate([a, a[..., :1]], axis=-1) if a.ndim else np.ones(3, bool)
    return st.sampled_from([a.astype(np.float64), a.astype(np.int64), wide])


KINDS = {
    # integer >= 1 (a width, a count of heads, a size)
    "size": lambda v: st.integers(-3, 0) | st.sampled_from(NOT_INTEGERS),
    # integer >= 0 (a length, a count, an index)
    "count": lambda v: st.integers(-3, -1) | st.sampled_from(NOT_INTEGERS),
    "rate": lambda v: (
        st.floats(1.0, 1e9) | st.floats(-1e9, -1e-9) | st.sampled_from(NOT_REALS)
    ),
    "positive": lambda v: st.floats(-1e9, 0.0) | st.sampled_from(NOT_REALS),
    "real": lambda v: st.sampled_from(NOT_REALS),
    "nonneg": lambda v: st.floats(-1e9, -1e-9) | st.sampled_from(NOT_REALS),
    "rng": lambda v: st.sampled_from(["seed", 1.5, [0.5]]),
    "axis": lambda v: st.sampled_from([2.5, True, "1", 7, -7]),
    "choice": lambda v: st.sampled_from(["no such choice", 3]),
    "dtype": lambda v: st.sampled_from([np.int64, np.bool_, np.complex128]),
    "floats": lambda v: _array_bad(v, mismatch=False),  # any last axis
    # elementwise: any shape, a single number included
    "any shape": lambda v: _array_bad(v, mismatch=False, scalar=False),
    # a probability that may be 1 (decoy_rate: every sequence has a decoy)
    "probability": lambda v: (
        st.floats(1.0, 1e9, exclude_min=True)
        | st.floats(-1e9, -1e-9)
        | st.sampled_from(NOT_REALS)
    ),
    "tied": lambda v: _array_bad(v, mismatch=True),  # its last axis must fit
    "ids": _ids_bad,
    "positions": _positions_bad,
    "mask": _mask_bad,
    # not drawn: a switch (any truthy value), a callable, a container of arrays whose
    # contract is its own function's (params, config, caches), a path, text, a record
    "not drawn": None,
}

_UNDRAWN = (
    "F H R a  attend attention attention_by_position average_weights"
    " batches best_step best_validation bidirectional blocks c cache caches causal"
    " cfg  chars config cpu_seconds cross_attn extra f final_by_position"
    " grads hidden hidden_states history keep_for_backward layer layers model models"
    " monitor name one_block p params path progress reason return_hidden"
    " return_intermediates return_keep return_lse s s0 saved scaled seconds"
    " self_attn sentences  source split stopped stopped_at  "
    " text text_or_ids tiles train_loss training transformed use_cache val_loss"
    " validation where words work  train  alignment target"
    " labels   attn keep  windows pieces shape"
    " emb_ln_bias emb_ln_gain position_embeddings token_type_embeddings"
    " word_embeddings query_index clue_index decoy_index X_train y_train X_val y_val"
    " query     steps "
    " allowed offset"
    " rotary value notebooks which"
)
DOMAINS = {name: "not drawn" for name in _UNDRAWN.split()}
DOMAINS["y"] = "not drawn"  # labels in {0, 1} (classifier), or a decoder's input
DOMAINS |= dict.fromkeys(
    "d_model num_heads num_kv_heads vocab_size context num_layers d_head itemsize"
    " capacity batch n_new top_k window d_k n_samples n_keys n_queries num_keys"
    " num_queries num_positions block_k block_size workers hidden_size input_size"
    " length n n_features n_informative n_train n_val n_test max_steps eval_every"
    " patience eval_windows batch_size     d_ff"
    " d_memory d_query_in d_key_in d_value_in d_out m h d max_len min_len piece"
    " every max_distance n_steps r ".split(),
    "size",
)
DOMAINS |= dict.fromkeys(
    "seed step warmup q0 q1 k0 k1 index axis  start".split(), "count"
)
DOMAINS |= dict.fromkeys(
    "dropout dropout_rate attention_dropout decoy_rate".split(), "rate"
)
DOMAINS |= dict.fromkeys(
    "eps lr max_norm learning_rate base sharpness spectral_radius input_scale ".split(),
    "positive",
)
DOMAINS |= dict.fromkeys("temperature scale noise   beta1 beta2".split(), "real")
DOMAINS |= {"rng": "rng", "dtype": "dtype"}
DOMAINS |= dict.fromkeys(
    "align side activation tied norm_kind kind position norm cell schedule".split(),
    "choice",
)
DOMAINS |= dict.fromkeys("scores_shape checked top".split(), "not drawn")
DOMAINS |= dict.fromkeys(
    "x z X xhat dy logits scores values v inputs states embeddings x_t"
    " grad_states decoder_states encoder_states train_features test_features"
    " train_targets test_targets memory grad_weights analytic numeric d_logits d_s"
    " grad_output weights s_prev".split(),
    "floats",
)
DOMAINS |= dict.fromkeys(
    "queries keys q k W_Q W_K W_V W_O W_q W_k w_v W_x W_h W_1 W_2 W_3 b b_1 b_2 b_Q b_K"
    " b_V b_O gain bias h0 h_prev w ln1_gain ln1_bias ln2_gain ln2_bias ln3_gain"
    " ln3_bias keys_projected d_keys_projected   dlogits"
    " ".split(),
    "tied",
)
DOMAINS |= dict.fromkeys(
    "idx ids prompt targets tokens  valid_lens lengths positions query_positions"
    " key_positions".split(),
    "ids",
)
DOMAINS |= dict.fromkeys("mask memory_mask head_mask keep_heads".split(), "mask")
# names whose meaning differs between functions are "not drawn" above only when
# no drawn kind fits all of them; these overrides say which kind wins
DOMAINS |= {"tokens": "not drawn", "lengths": "not drawn", "positions": "not drawn"}
DOMAINS |= {"d_memory": "size", "r": "count", "values": "floats", "head_mask": "mask"}
# lengths and counts that may be 0 (empty results), and axes
DOMAINS |= dict.fromkeys(
    "n_queries n_keys num_queries num_keys num_positions n n_new d_ff"
    " max_distance".split(),
    "count",
)
DOMAINS |= {"axis": "axis"}
DOMAINS |= {"n_train": "count", "n_val": "count"}
DOMAINS |= dict.fromkeys(
    "spectral_radius input_scale noise weight_decay".split(), "nonneg"
)

#: (function, argument) -> the kind drawn there when it differs from DOMAINS[argument]
DOMAIN_FOR = {
    # elementwise functions take any shape, a single number included
    **{
        (f, "x"): "any shape"
        for f in (
            "layers.feed_forward.erf layers.feed_forward.gelu layers.feed_forward.relu"
            " layers.feed_forward.sigmoid layers.feed_forward.silu"
            " layers.layer_backward.gelu_backward layers.layer_backward.silu_backward"
            " core.backward.numerical_gradient".split()
        )
    },
    ("layers.layer_backward.gelu_backward", "dy"): "any shape",
    ("layers.layer_backward.silu_backward", "dy"): "any shape",
    ("models.linear_classifier.sigmoid", "z"): "any shape",
    ("core.dropout.drop_weights", "weights"): "any shape",
    ("layers.dropout.residual_dropout", "x"): "any shape",
    # without b_2 the output width d_model_out is W_2's own: any last axis is valid
    ("layers.feed_forward.swiglu", "W_2"): "floats",
    # RoPE positions: negative integers are valid (see _positions_bad)
    **{
        (f, n): "positions"
        for f in (
            "core.heads.multi_head_attention",
            "core.grouped_query.grouped_query_attention",
        )
        for n in ("query_positions", "key_positions")
    },
    # in [0, 1], 1 included (the docstring's closed interval)
    ("data.context_task.make_context_task", "decoy_rate"): "probability",
}


def domain(qualname: str, name: str):
    """The kind of values drawn for argument ``name`` of ``qualname``."""
    return DOMAIN_FOR.get((qualname.removeprefix("attnlib."), name), DOMAINS.get(name))


# --- valid calls ---------------------------------------------------------------------

R = np.random.default_rng(0)
Q, K, V = R.normal(size=(2, 4)), R.normal(size=(3, 4)), R.normal(size=(3, 4))
W = np.full((2, 3), 1 / 3)  # weights (L_q, L_k)

VALID = {
    "queries": Q,
    "keys": K,
    "values": V,
    "mask": np.array([[True, True, False], [True, True, True]]),
    "weights": W,
    "grad_weights": W + 1.0,
    "grad_output": Q.copy(),
    "scores": Q @ K.T,
    "x": R.normal(size=(3, 4)),
    "num_heads": 2,
    "num_kv_heads": 1,
    "d_model": 4,
    "n_queries": 2,
    "n_keys": 3,
    "num_queries": 2,
    "num_keys": 3,
    "window": 2,
    "align": "end",
    "d_k": 4,
    "n_samples": 5,
    "rng": 0,
    "valid_lens": np.array([1, 3]),
    "num_positions": 3,
    "offset": 1,
    "max_distance": 2,
    "embeddings": R.normal(size=(5, 4)),
    "gain": np.ones(4),
    "bias": np.zeros(4),
    "logits": R.normal(size=(2, 6)),
    "temperature": 1.0,
    "top_k": 2,
    "lr": 0.01,
    "z": np.array([-1.0, 0.0, 2.0]),
    "block_size": 2,
    "n": 4,
}


def _gen():
    return np.random.default_rng(0)


@cache
def lm_model():
    from attnlib.models import language_model as lm

    config = lm.LMConfig(vocab_size=6, context=5, d_model=4, num_layers=1, num_heads=2)
    return config, lm.init_language_model(config, 0, dtype=np.float64)


def _lm(**kw):
    config, params = lm_model()
    return dict(params=params, config=config) | kw


IDS = np.array([[1, 2, 3]])
X_BLOCK = R.normal(size=(1, 3, 4))  # a causal block's residual stream (B, L, d)
NORM_P = {"ln1_gain": np.ones(4), "ln1_bias": np.zeros(4)}
F = 3  # feed-forward width in the layer examples
EXAMPLES = {
    "core.attention.weighted_sum": lambda: dict(weights=W, values=V),
    "core.backward.softmax_backward": lambda: dict(weights=W, grad_weights=W + 1),
    "core.backward.attention_backward": lambda: dict(
        queries=Q, keys=K, values=V, grad_output=Q.copy()
    ),
    "core.backward.relative_error": lambda: dict(analytic=Q, numeric=Q + 1e-3),
    "core.dropout.dropout_keep_mask": lambda: dict(
        dropout=0.5, rng=_gen(), keep=None, shape=(2, 3)
    ),
    "core.dropout.drop_weights": lambda: dict(weights=W, keep=None, dropout=0.0),
    "core.grouped_query.group_size": lambda: dict(num_heads=4, num_kv_heads=2),
    "core.grouped_query.grouped_query_attention": lambda: dict(
        queries=np.stack([Q, Q]),
        keys=K[None],
        values=V[None],
        rotary=True,
        query_positions=np.array([1, 2]),
        key_positions=np.array([0, 1, 2]),
    ),
    "core.heads.split_heads": lambda: dict(x=VALID["x"], num_heads=2),
    "core.heads.merge_heads": lambda: dict(x=R.normal(size=(2, 3, 2))),
    "core.masks.padding_mask": lambda: dict(valid_lens=np.array([1, 3]), n_keys=3),
    "core.masks.query_padding_mask": lambda: dict(
        valid_lens=np.array([1, 2]), n_queries=2
    ),
    "core.softmax.softmax": lambda: dict(scores=Q @ K.T),
    "core.tiled.online_softmax_trace": lambda: dict(scores=K[:, 0], values=V),
    "layers.feed_forward.feed_forward": lambda: dict(
        x=VALID["x"],
        W_1=np.ones((4, F)),
        b_1=np.zeros(F),
        W_2=np.ones((F, 4)),
        b_2=np.zeros(4),
    ),
    "layers.layer_backward.layer_norm_backward": lambda: dict(
        dy=VALID["x"], xhat=VALID["x"], r=np.ones((3, 1)), gain=np.ones(4)
    ),
    "layers.layer_backward.gelu_backward": lambda: dict(x=VALID["x"], dy=VALID["x"]),
    "layers.layer_backward.rms_norm_backward": lambda: dict(
        dy=VALID["x"], xhat=VALID["x"], r=np.ones((3, 1)), gain=np.ones(4)
    ),
    "layers.layer_backward.silu_backward": lambda: dict(x=VALID["x"], dy=VALID["x"]),
    "layers.layer_backward.swiglu_backward": lambda: dict(
        dy=VALID["x"],
        x=VALID["x"],
        W_1=np.ones((4, F)),
        W_3=np.ones((4, F)),
        W_2=np.ones((F, 4)),
    ),
    "layers.feed_forward.swiglu": lambda: dict(
        x=VALID["x"], W_1=np.ones((4, F)), W_3=np.ones((4, F)), W_2=np.ones((F, 4))
    ),
    "layers.causal_block.norm": lambda: dict(
        x=X_BLOCK, p=NORM_P, which="ln1", kind="layer"
    ),
    "layers.causal_block.norm_backward": lambda: dict(
        dy=X_BLOCK, x=X_BLOCK, p=NORM_P, which="ln1", kind="layer"
    ),
    "models.adam.AdamW": lambda: dict(lr=0.01, weight_decay=0.01),
    "models.adam.decays": lambda: dict(name="W_Q", value=np.ones((2, 2))),
    "layers.positional_encoding.rotary_embedding": lambda: dict(x=VALID["x"]),
    "layers.dropout.residual_dropout": lambda: dict(
        x=VALID["x"], p=0.5, rng=_gen(), training=True
    ),
    "layers.causal_block.self_attention_mask": lambda: dict(n=3, window=2),
    "models.language_model.LMConfig": lambda: dict(
        vocab_size=6, context=5, d_model=4, num_layers=1, num_heads=2
    ),
    "models.language_model.init_language_model": lambda: dict(
        config=lm_model()[0], rng=0, dtype=np.float64
    ),
    "models.language_model.parameter_shapes": lambda: dict(config=lm_model()[0]),
    "models.language_model.forward": lambda: _lm(idx=IDS),
    "models.language_model.loss": lambda: _lm(idx=IDS, targets=IDS),
    "models.language_model.loss_and_gradients": lambda: _lm(idx=IDS, targets=IDS),
    "models.language_model.cross_entropy": lambda: dict(
        logits=R.normal(size=(1, 3, 6)), targets=IDS
    ),
    "models.generation.next_token_distribution": lambda: dict(
        logits=VALID["logits"], temperature=1.0, top_k=2
    ),
    "models.generation.sample_next": lambda: dict(
        logits=VALID["logits"], rng=_gen(), temperature=1.0, top_k=2
    ),
    "models.generation.generate": lambda: _lm(
        prompt=np.array([1, 2]), n_new=2, rng=_gen(), temperature=1.0, top_k=2
    ),
    "models.kv_cache.kv_bytes_per_token": lambda: dict(
        num_layers=2, num_kv_heads=1, d_head=4, itemsize=4
    ),
    "models.kv_cache.LayerCache": lambda: dict(
        batch=1, num_kv_heads=1, d_head=2, capacity=4, dtype=np.float64, window=2
    ),
    "models.kv_cache.KVCache": lambda: dict(
        config=lm_model()[0], batch=1, capacity=5, dtype=np.float64
    ),
    "models.lm_training.clip_global_norm": lambda: dict(
        grads={"a": np.ones(3)}, max_norm=1.0
    ),
    "models.lm_training.TrainConfig": lambda: dict(),
    "models.lm_training.learning_rate": lambda: dict(
        step=3,
        cfg=__import__("attnlib.models.lm_training").models.lm_training.TrainConfig(),
    ),
    "models.adam.Adam": lambda: dict(lr=0.01),
    "core.scaling.random_dot_products": lambda: dict(rng=_gen(), d_k=4, n_samples=5),
    "core.scaling.score_variance": lambda: dict(rng=_gen(), d_k=4, n_samples=5),
    "core.scaling.mean_max_weight": lambda: dict(rng=_gen(), d_k=4, n_samples=5),
    "core.backward.numerical_gradient": lambda: dict(f=np.sum, x=Q),
    "core.dropout.as_dropout_rate": lambda: dict(dropout=0.5),
    "core.dropout.check_dropout": lambda: dict(
        dropout=0.5, rng=_gen(), keep=None, scores_shape=(2, 3)
    ),
    "core.scores.additive_scores": lambda: dict(
        queries=Q, keys=K, W_q=np.ones((4, 3)), W_k=np.ones((4, 3)), w_v=np.ones(3)
    ),
    "core.heads.multi_head_attention": lambda: dict(
        queries=Q,
        keys=K,
        values=V,
        params=__import__("attnlib").init_multi_head(0, 4, 2),
        rotary=True,
        query_positions=np.array([1, 2]),
        key_positions=np.array([0, 1, 2]),
    ),
    "core.grouped_query.init_grouped_query": lambda: dict(
        rng=0, d_model=4, num_heads=2, num_kv_heads=1
    ),
    "core.grouped_query.from_multi_head": lambda: dict(
        params=__import__("attnlib").init_multi_head(0, 4, 2), num_kv_heads=1
    ),
    "core.tiles.as_workers": lambda: dict(workers=2),
    "core.tiles.check_causal": lambda: dict(
        causal=True, align="end", n_queries=2, n_keys=3
    ),
    "layers.feed_forward.init_feed_forward": lambda: dict(rng=0, d_model=4, d_ff=3),
    "layers.encoder_layer.init_encoder_layer": lambda: dict(
        rng=0, d_model=4, num_heads=2
    ),
    "layers.decoder_layer.init_decoder_layer": lambda: dict(
        rng=0, d_model=4, num_heads=2
    ),
    "models.language_model.block_params": lambda: dict(params=lm_model()[1], r=0),
    "models.language_model.parameter_count": lambda: dict(params=lm_model()[1]),
    "models.lm_training.recent_drop": lambda: dict(
        history={"step": [1, 2, 3], "validation": [3.0, 2.0, 1.0]}, steps=2
    ),
    "models.recurrent.init_rnn": lambda: dict(rng=_gen(), input_size=2, hidden_size=3),
    "models.recurrent.rnn_encode": lambda: dict(
        inputs=np.ones((3, 2)), W_x=np.ones((2, 3)), W_h=np.eye(3) / 2, b=np.zeros(3)
    ),
    "models.recurrent.rnn_step": lambda: dict(
        x_t=np.ones(2),
        h_prev=np.zeros(3),
        W_x=np.ones((2, 3)),
        W_h=np.eye(3) / 2,
        b=np.zeros(3),
    ),
    "models.bottleneck.final_state_jacobians": lambda: dict(
        inputs=np.ones((3, 2)), W_x=np.ones((2, 3)), W_h=np.eye(3) / 2, b=np.zeros(3)
    ),
    "models.bottleneck.attend_to_positions": lambda: dict(
        states=np.eye(4), positions=[0, 2]
    ),
    "models.bottleneck.decoder_context": lambda: dict(
        decoder_states=np.ones((1, 2)),
        encoder_states=np.eye(3, 2),
        W_q=np.eye(2),
        W_k=np.eye(2),
        w_v=np.ones(2),
    ),
    "models.bottleneck.linear_recovery_r2": lambda: dict(
        train_features=np.arange(10.0)[:, None],
        train_targets=2 * np.arange(10.0)[:, None],
        test_features=np.arange(4.0)[:, None],
        test_targets=2 * np.arange(4.0)[:, None],
    ),
    "models.bottleneck.capacity_bound": lambda: dict(
        hidden_size=16, input_size=2, length=40
    ),
    "models.linear_classifier.init_params": lambda: dict(d=2),
    "models.linear_classifier.predict": lambda: dict(params=LC, X=X_LC),
    "models.linear_classifier.loss": lambda: dict(params=LC, X=X_LC, y=Y_LC),
    "models.linear_classifier.gradient": lambda: dict(params=LC, X=X_LC, y=Y_LC),
    "models.linear_classifier.accuracy": lambda: dict(params=LC, X=X_LC, y=Y_LC),
    "models.linear_classifier.step": lambda: dict(
        params=LC, grads=LC, learning_rate=0.5
    ),
    "models.linear_classifier.numerical_gradient_w": lambda: dict(
        params=LC, X=X_LC, y=Y_LC
    ),
    "models.linear_classifier.loss_along": lambda: dict(
        params=LC, X=X_LC, y=Y_LC, index=0, values=np.array([1.0, 2.0])
    ),
    "models.linear_classifier.descent_along": lambda: dict(
        params=LC, X=X_LC, y=Y_LC, index=0, learning_rate=0.5, n_steps=3
    ),
    "models.linear_classifier.train": lambda: dict(
        X_train=X_LC,
        y_train=Y_LC,
        X_val=X_LC,
        y_val=Y_LC,
        eval_every=1,
        patience=2,
        max_steps=5,
    ),
    "data.translation_task.make_batch": lambda: dict(rng=0, n=2, length=3),
    "data.translation_task.translate": lambda: dict(words=["big", "dog"]),
    "data.translation_task.source_words": lambda: dict(ids=np.array([0, 1])),
    "data.translation_task.target_words": lambda: dict(ids=np.array([0, 1])),
    "data.book_text.CharTokenizer": lambda: dict(chars="abc "),
    "data.book_text.split_pieces": lambda: dict(ids=np.arange(40), piece=5, every=2),
    "data.book_text.random_windows": lambda: dict(
        pieces=[np.arange(10)], rng=_gen(), batch=2, context=3
    ),
    "data.book_text.evaluation_windows": lambda: dict(
        pieces=[np.arange(10)], context=3
    ),
    "data.context_task.encode_sentences": lambda: dict(
        sentences=["The bank was crowded."]
    ),
    "data.learning_task.make_split": lambda: dict(n_train=6, n_val=4, n_features=3),
    "core.tiles.default_workers": lambda: dict(),
    "models.lm_training.evaluate": lambda: _lm(windows=(IDS, IDS), batch=1),
    "core.grouped_query.grouped_query_self_attention": lambda: dict(
        x=VALID["x"], params=_mod("core.grouped_query").init_grouped_query(0, 4, 2, 1)
    ),
    "layers.encoder_layer.encoder_layer": lambda: dict(
        x=VALID["x"], params=_mod("layers.encoder_layer").init_encoder_layer(0, 4, 2)
    ),
    "layers.encoder_layer.self_attention_block": lambda: dict(
        x=VALID["x"], attn=_mod("core.heads").init_multi_head(0, 4, 2)
    ),
    "layers.decoder_layer.decoder_layer": lambda: dict(
        y=Q.copy(),
        memory=K.copy(),
        params=_mod("layers.decoder_layer").init_decoder_layer(0, 4, 2),
    ),
    "layers.causal_block.causal_block_backward": lambda: dict(
        dy=X_BLOCK, p=_block_p(), saved=_block_saved(), num_heads=2, num_kv_heads=2
    ),
    "models.language_model.backward": lambda: _lm(
        saved=_lm_saved(), dlogits=np.ones((1, 3, 6))
    ),
    "models.recurrent.rnn_backward": lambda: _rnn_backward(),
    "models.gru.init_gru": lambda: dict(rng=_gen(), input_size=2, hidden_size=3),
    "models.gru.gru_encode": lambda: dict(
        inputs=np.ones((3, 2)),
        W_x=np.ones((2, 9)) / 4,
        W_h=np.ones((3, 9)) / 4,
        b=np.zeros(9),
    ),
    "models.gru.gru_backward": lambda: _gru_backward(),
    "models.encoder_decoder.init_encoder_decoder": lambda: dict(
        rng=0, attend=True, m=2, h=3, d=4, a=2
    ),
    "models.encoder_decoder.forward": lambda: dict(model=_ed(), batch=_ed_batch()),
    "models.encoder_decoder.loss": lambda: dict(model=_ed(), batch=_ed_batch()),
    "models.encoder_decoder.loss_and_gradients": lambda: dict(
        model=_ed(), batch=_ed_batch()
    ),
    "models.encoder_decoder.translate_greedy": lambda: dict(
        model=_ed(), source=_ed_batch().source
    ),
    "layers.causal_block.causal_block": lambda: dict(
        x=X_BLOCK,
        p=__import__(
            "attnlib.models.language_model"
        ).models.language_model.block_params(lm_model()[1], 0),
        num_heads=2,
        num_kv_heads=2,
    ),
}


def _mod(name: str):
    return importlib.import_module(f"attnlib.{name}")


def _block_p():
    return _mod("models.language_model").block_params(lm_model()[1], 0)


def _block_saved():
    """What causal_block keeps for its backward pass, from X_BLOCK."""
    block = _mod("layers.causal_block").causal_block
    return block(
        X_BLOCK, _block_p(), num_heads=2, num_kv_heads=2, keep_for_backward=True
    )[2]


def _lm_saved():
    config, params = lm_model()
    forward = _mod("models.language_model").forward
    return forward(params, config, IDS, keep_for_backward=True)[2]


def _recurrent_backward(encode, W_x, W_h, b):
    """The arguments of a recurrent encoder's backward pass, from one forward pass."""
    inputs = np.ones((1, 3, 2))  # (B, T, m)
    states, _ = encode(inputs, W_x, W_h, b)  # (B, T, h)
    return dict(
        inputs=inputs,
        states=states,
        h0=np.zeros((1, 3)),
        W_x=W_x,
        W_h=W_h,
        grad_states=np.ones_like(states),
    )


def _rnn_backward():
    encode = _mod("models.recurrent").rnn_encode
    return _recurrent_backward(encode, np.ones((2, 3)) / 4, np.eye(3) / 2, np.zeros(3))


def _gru_backward():
    encode = _mod("models.gru").gru_encode
    b = np.zeros(9)
    W_x, W_h = np.ones((2, 9)) / 4, np.ones((3, 9)) / 4
    return {**_recurrent_backward(encode, W_x, W_h, b), "b": b}


@cache
def _ed():
    """A small attending encoder-decoder for the translation task."""
    return _mod("models.encoder_decoder").init_encoder_decoder(
        0, attend=True, m=2, h=3, d=4, a=2
    )


def _ed_batch():
    return _mod("data.translation_task").make_batch(0, 2, 3)


LC_MODULE = importlib.import_module("attnlib.models.linear_classifier")
LC = LC_MODULE.Params(np.array([1.0, -1.0]), 0.0)
X_LC = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [0.0, 0.0]])
Y_LC = np.array([1.0, 0.0, 1.0, 0.0])

_RECORD = "a record of results or parameters; its maker checks what goes in"
_SCRIPT = "a script: trains for minutes and writes the stored weights"
_FILES = "reads or writes files (tests/test_encoder_decoder_save_load.py, ...)"
_MINILM = "needs the pretrained MiniLM weights (tests/test_minilm.py)"
_INNER = "an inner step of tiled attention, handed inputs its caller checked"
_STEP = (
    "one step of the encoder-decoder's loop, accumulating gradients in place; no valid"
    " example yet (covered through encoder_decoder.forward and loss_and_gradients)"
)
#: what is not called at all, and why (its arguments still need their domains)
NOT_CALLED = {
    **dict.fromkeys(
        "core.grouped_query.GroupedQueryParams core.heads.MultiHeadParams"
        " data.translation_task.TranslationBatch data.book_text.Split"
        " data.context_task.ContextBatch data.examples.WorkedExample"
        " data.learning_task.Split layers.decoder_layer.DecoderLayerParams"
        " layers.encoder_layer.EncoderLayerParams models.bottleneck.RecoveryResult"
        " models.encoder_decoder.EncoderDecoder models.encoder_decoder.Forward"
        " models.linear_classifier.Params models.linear_classifier.Run"
        " models.minilm.MiniLMOutput models.minilm.MiniLMWeights"
        " models.recurrent.RNNParams models.rnn_decoder.StepCache"
        " models.lm_training.History".split(),
        _RECORD,
    ),
    **dict.fromkeys(
        "models.lm_training.train models.bottleneck.recovery_experiment".split(),
        _SCRIPT,
    ),
    **dict.fromkeys(
        "models.encoder_decoder.save models.encoder_decoder.load"
        " data.book_text.extract_prose data.book_text.load_corpus".split(),
        _FILES,
    ),
    **dict.fromkeys(
        "models.minilm.model_dir models.minilm.load_weights models.minilm.encode"
        " models.minilm.load_tokenizer models.minilm.embed models.minilm.forward"
        " models.minilm.encoder_layer models.minilm.layer_norm"
        " models.minilm.weighted_norms".split(),
        _MINILM,
    ),
    **dict.fromkeys(
        "core.tiled.online_softmax core.tiles.tile_mask core.tiles.key_tiles"
        " core.tiles.run_blocks core.softmax.attention_softmax"
        " core.softmax.check_allowed_scores core.softmax.exp_normalise"
        " core.softmax.mask_and_max".split(),
        _INNER,
    ),
    **dict.fromkeys(
        (
            "models.rnn_decoder.decoder_step models.rnn_decoder.decoder_step_backward"
        ).split(),
        _STEP,
    ),
}

#: ("bad" or "extreme", function, argument) -> the fault this file found and issue 41
#: did not fix (strict xfail: a fix makes the case pass, and then it must go)
KNOWN: dict = {}


def base_call(qualname: str, obj) -> dict | None:
    """Valid keyword arguments for ``obj``, or None when it is not called."""
    short = qualname.removeprefix("attnlib.")
    if short in NOT_CALLED:
        return None
    if short in EXAMPLES:
        return EXAMPLES[short]()
    if not any(p.default is p.empty for p in arguments(obj).values()):
        return None  # nothing required: say what to call it with in EXAMPLES
    kwargs = {}
    for name, p in arguments(obj).items():
        if p.default is not p.empty:
            continue
        if name not in VALID:
            return None
        kwargs[name] = VALID[name]
    return kwargs


def snapshot(kwargs: dict):
    return {k: copy.deepcopy(v) for k, v in kwargs.items() if _copyable(v)}


def _copyable(v) -> bool:
    return isinstance(v, (np.ndarray, dict, list, tuple, int, float, str))


def same(a, b) -> bool:
    if isinstance(a, np.ndarray):
        return (
            isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
        )
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    try:
        return bool(a == b) or (a != a and b != b)
    except (TypeError, ValueError):
        return True


def finite(value) -> bool:
    if isinstance(value, dict):
        return all(finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(finite(v) for v in value)
    if isinstance(value, (np.ndarray, float, np.floating)):
        a = np.asarray(value)
        return a.dtype.kind not in "fc" or bool(np.isfinite(a).all())
    return True


def call(obj, kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return obj(**kwargs)


# --- the cases -----------------------------------------------------------------------


ARRAY_KINDS = ("floats", "tied", "ids", "mask", "any shape", "positions")


def _cases():
    """(qualname, argument) for every drawn argument of every called function."""
    out = []
    for qualname, obj in public_callables().items():
        kwargs = base_call(qualname, obj)
        if kwargs is None:
            continue
        for name in arguments(obj):
            kind = domain(qualname, name)
            if KINDS.get(kind) is None:
                continue
            if name in kwargs or kind not in ARRAY_KINDS:
                out.append((qualname, name))
    return out


def _marked(cases, which: str):
    marked = []
    for case in cases:
        reason = KNOWN.get((which,) + case)
        mark = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        marked.append(pytest.param(*case, marks=mark))
    return marked


def test_every_argument_has_a_domain():
    missing = sorted(
        f"{q}({n})"
        for q, obj in public_callables().items()
        for n in arguments(obj)
        if n not in DOMAINS
    )
    assert not missing, f"declare a domain in DOMAINS for: {missing}"
    used = {n for obj in public_callables().values() for n in arguments(obj)}
    assert not set(DOMAINS) - used, f"unused names: {sorted(set(DOMAINS) - used)}"
    assert set(DOMAINS.values()) | set(DOMAIN_FOR.values()) <= set(KINDS)
    functions = {q.removeprefix("attnlib.") for q in public_callables()}
    assert {f for f, _ in DOMAIN_FOR} <= functions, "DOMAIN_FOR names a lost function"


@pytest.mark.parametrize(
    "qualname",
    [q for q in public_callables() if q.removeprefix("attnlib.") not in NOT_CALLED],
)
def test_valid_example_runs(qualname):
    obj = public_callables()[qualname]
    kwargs = base_call(qualname, obj)
    assert kwargs is not None, f"add a valid example to EXAMPLES or VALID: {qualname}"
    call(obj, kwargs)


@pytest.mark.parametrize("qualname, name", _marked(_cases(), "bad"))
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bad_argument_is_refused_by_name(qualname, name, data):
    obj = public_callables()[qualname]
    kwargs = base_call(qualname, obj)
    valid = kwargs.get(name, arguments(obj)[name].default)
    bad = data.draw(KINDS[domain(qualname, name)](valid), label=name)
    kwargs = kwargs | {name: bad}
    before = snapshot(kwargs)
    with pytest.raises((TypeError, ValueError)) as raised:
        call(obj, kwargs)
    assert name in str(raised.value), (qualname, name, repr(bad), str(raised.value))
    for key, value in before.items():
        assert same(value, kwargs[key]), f"{qualname} changed its argument {key}"


def _extreme_cases():
    return [
        (q, n)
        for q, n in _cases()
        if domain(q, n) in ("floats", "tied", "any shape")
        and isinstance(base_call(q, public_callables()[q]).get(n), np.ndarray)
    ]


@pytest.mark.parametrize("qualname, name", _marked(_extreme_cases(), "extreme"))
@settings(max_examples=4, deadline=None, suppress_health_check=list(HealthCheck))
@given(factor=st.sampled_from([1e300, -1e300, 1e-300, 1e150]))
def test_extreme_finite_input_gives_a_finite_result(qualname, name, factor):
    obj = public_callables()[qualname]
    kwargs = base_call(qualname, obj)
    kwargs[name] = np.asarray(kwargs[name], dtype=np.float64) * factor
    try:
        result = call(obj, kwargs)
    except OverflowError:
        return  # the documented refusal of a result beyond float64
    assert finite(result), (qualname, name, factor)


def test_coverage_numbers():
    """What this file covers (printed with ``-s``; issue 41 reports them)."""
    functions = public_callables()
    called = [q for q in functions if q.removeprefix("attnlib.") not in NOT_CALLED]
    cases = _cases()
    print(
        f"\n{len(functions)} public callables, {len(called)} called, "
        f"{sum(len(arguments(o)) for o in functions.values())} arguments declared, "
        f"{len(cases)} drawn (bad), {len(_extreme_cases())} drawn (extreme)"
    )
    assert math.isfinite(len(cases))
