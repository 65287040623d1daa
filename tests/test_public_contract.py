"""Issue 26: every public function of every attnlib module names the test that holds
its contract.

:func:`public_functions` lists them by introspection: every function defined in a
public module (no part of its path starts with ``_``), or defined in a private module
and offered by its package (``attnlib.exercises.check_close``). :data:`CONTRACT_TESTS`
maps each one to its test, a pytest node id; a new public function without an entry
fails :func:`test_every_public_function_names_its_contract_test`. An entry must be
real: the test file and the test function exist, and a table-driven test (one whose
module defines ``CONTRACT_COVERS``) has a row for the function, while any other test
names the function in its source.

What a contract test checks (issue 26): results in the documented dtype; bad input
raising the documented error class with a message naming the argument; extreme finite
input giving the right value or a clear OverflowError, never NaN, inf or a warning.

The rows for ``attnlib.core`` and ``attnlib.layers`` are the core helper's: they live
in ``tests/contract_core.py`` (a dict ``CONTRACT_TESTS`` in the same format), merged
here; until that file exists, those two packages are reported as skipped.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import attnlib

TESTS = Path(__file__).resolve().parent
DATA_MODELS = "tests/test_contract_models_data.py::test_contract"
FIGURES = "tests/test_contract_figures.py::test_contract"
EXERCISES = "tests/test_contract_exercises.py::test_contract"
CHECKERS = "tests/test_exercises_never_raise.py::test_no_checker_raises_on_any_answer"
SAVE_LOAD = "tests/test_encoder_decoder_save_load.py::test_any_str_names_round_trip"
QUIZ_MARKDOWN = (
    "tests/test_exercises_quiz.py::"
    "test_texts_are_markdown_with_mathematics_left_for_mathjax"
)
QUIZ_SHOW = (
    "tests/test_exercises_quiz.py::test_show_gives_a_stable_output_named_after_the_key"
)
#: a script (``make train``: minutes of training in two processes); its product, the
#: stored weights, is what this test holds to the numbers the script recorded
SCRIPT_MAIN = (
    "tests/test_encoder_decoder.py::test_stored_runs_reproduce_the_recorded_evaluation",
    "script",
)
#: the stored runs of chapter 2, read and checked against the experiment
STORED_RUNS = (
    "tests/test_encoder_decoder.py::test_stored_runs_are_the_experiment_and_stay_small"
)

#: the science helper's functions (tests/test_contract_science.py)
SCIENCE = "tests/test_contract_science.py::"
PROBES = SCIENCE + "test_minilm_probes_contract"
SCIENCE_ROWS = {
    **{
        f"attnlib.models.minilm_probes.{name}": PROBES
        for name in (
            "attention_sink",
            "bootstrap_rank_correlations",
            "controlled_weights",
            "cosine",
            "count_parameters",
            "head_rows",
            "rank_correlation",
            "variance_shares",
        )
    },
    **{
        f"attnlib.models.minilm_sink.{name}": (
            "tests/test_minilm_sink.py::test_minilm_sink_contract"
        )
        for name in (
            "cls_edit_cosines",
            "forward_with_key_edit",
            "key_edit_effects",
            "sentence_embedding",
        )
    },
    "attnlib.models.minilm.embed": SCIENCE + "test_minilm_embed_contract",
    "attnlib.models.adversarial_attention.logit_margin": (
        SCIENCE + "test_adversarial_margin_contract"
    ),
    "attnlib.models.adversarial_attention.share_of_random_rows_within": (
        SCIENCE + "test_adversarial_margin_contract"
    ),
    "attnlib.models.adversarial_exact.exact_alternative_attention": (
        "tests/test_adversarial_attention.py::"
        "test_exact_alternative_rejects_what_it_cannot_answer"
    ),
    "attnlib.figures.diagrams.pipeline_diagram": SCIENCE
    + "test_figures_probes_contract",
    "attnlib.figures.probes.sink_chart": SCIENCE + "test_figures_probes_contract",
    "attnlib.figures.probes.weight_norm_scatter": SCIENCE
    + "test_figures_probes_contract",
}

#: the language-model chapters' functions (their rows: tests/test_contract_lm.py)
LM = "tests/test_contract_lm.py::test_contract"
#: the scripts of ``make train-lm``, held by the tests of what they stored
LM_STORED = "tests/test_lm_stored.py::"
SCRIPT_LM = (
    "tests/test_lm_stored.py::test_stored_validation_loss_is_reproduced_exactly",
    "script",
)
SCRIPT_INDUCTION = (
    "tests/test_induction.py::test_stored_models_are_small_and_learned_the_repeat",
    "script",
)

#: function -> the test that holds its contract (data/, models/, figures/, exercises/)
CONTRACT_TESTS = {
    **SCIENCE_ROWS,
    "attnlib.data.context_task.encode_sentences": DATA_MODELS,
    "attnlib.data.context_task.make_context_task": DATA_MODELS,
    "attnlib.data.learning_task.make_examples": DATA_MODELS,
    "attnlib.data.learning_task.make_split": DATA_MODELS,
    "attnlib.data.translation_task.make_batch": DATA_MODELS,
    "attnlib.data.translation_task.source_words": DATA_MODELS,
    "attnlib.data.translation_task.target_words": DATA_MODELS,
    "attnlib.data.translation_task.translate": DATA_MODELS,
    "attnlib.exercises.as_floats": EXERCISES,
    "attnlib.exercises.as_shape": EXERCISES,
    "attnlib.exercises.as_texts": EXERCISES,
    "attnlib.exercises.as_word": EXERCISES,
    "attnlib.exercises.attention_gradients.check_attention_backward": CHECKERS,
    "attnlib.exercises.bottleneck.check_capacity_bound": CHECKERS,
    "attnlib.exercises.bottleneck.check_decoder_step": CHECKERS,
    "attnlib.exercises.bottleneck.check_rnn_step": CHECKERS,
    "attnlib.exercises.check_close": EXERCISES,
    "attnlib.exercises.check_function": EXERCISES,
    "attnlib.exercises.check_labelled_cases": EXERCISES,
    "attnlib.exercises.check_shape_dict": EXERCISES,
    "attnlib.exercises.checker": EXERCISES,
    "attnlib.exercises.cost.check_merge": CHECKERS,
    "attnlib.exercises.cost.check_score_entries": CHECKERS,
    "attnlib.exercises.cost.check_score_memory": CHECKERS,
    "attnlib.exercises.cost.check_skipped_tiles": CHECKERS,
    "attnlib.exercises.describe": EXERCISES,
    "attnlib.exercises.diagnose_close": EXERCISES,
    "attnlib.exercises.fmt": EXERCISES,
    "attnlib.exercises.function_name": EXERCISES,
    "attnlib.exercises.heads.check_head_shapes": CHECKERS,
    "attnlib.exercises.heads.check_head_weights": CHECKERS,
    "attnlib.exercises.heads.check_merge_heads": CHECKERS,
    "attnlib.exercises.interpretability.norm_share": EXERCISES,
    "attnlib.exercises.interpretability.norm_share_function": CHECKERS,
    "attnlib.exercises.interpretability.strongest_head_answer": CHECKERS,
    "attnlib.exercises.interpretability.weighted_norms_answer": CHECKERS,
    "attnlib.exercises.is_placeholder": EXERCISES,
    "attnlib.exercises.layer.check_crossover": CHECKERS,
    "attnlib.exercises.layer.check_layer_norm": CHECKERS,
    "attnlib.exercises.layer.check_layer_shapes": CHECKERS,
    "attnlib.exercises.layer.check_parameter_count": CHECKERS,
    "attnlib.exercises.learning.check_learned_or_computed": CHECKERS,
    "attnlib.exercises.learning.check_score_gradient": CHECKERS,
    "attnlib.exercises.learning.check_softmax_jacobian": CHECKERS,
    "attnlib.exercises.masks.check_causal_mask": CHECKERS,
    "attnlib.exercises.masks.check_padding_mask": CHECKERS,
    "attnlib.exercises.masks.check_visible": CHECKERS,
    "attnlib.exercises.multi_head.check_masked_multi_head": CHECKERS,
    "attnlib.exercises.online_softmax.check_tiled_attention": CHECKERS,
    "attnlib.exercises.position.check_encoding_entries": CHECKERS,
    "attnlib.exercises.position.check_reordered_output": CHECKERS,
    "attnlib.exercises.position.check_shift_matrix": CHECKERS,
    "attnlib.exercises.primer.check_gradient_w": CHECKERS,
    "attnlib.exercises.primer.check_one_step": CHECKERS,
    "attnlib.exercises.primer.check_retraining": CHECKERS,
    "attnlib.exercises.primer.one_step": EXERCISES,
    "attnlib.exercises.qkv.check_head_output": CHECKERS,
    "attnlib.exercises.qkv.check_one_head": CHECKERS,
    "attnlib.exercises.qkv.check_projection_shapes": CHECKERS,
    "attnlib.exercises.quiz.choice": EXERCISES,
    "attnlib.exercises.quiz.markdown": QUIZ_MARKDOWN,
    "attnlib.exercises.quiz.numeric": EXERCISES,
    "attnlib.exercises.quiz.quiz_id": EXERCISES,
    "attnlib.exercises.quiz.rounded": EXERCISES,
    "attnlib.exercises.quiz.show": QUIZ_SHOW,
    "attnlib.exercises.require_function": EXERCISES,
    "attnlib.exercises.returned_array": EXERCISES,
    "attnlib.exercises.returned_floats": EXERCISES,
    "attnlib.exercises.reveal": EXERCISES,
    "attnlib.exercises.rotary.check_rotary": CHECKERS,
    "attnlib.exercises.scoring.check_additive_score": CHECKERS,
    "attnlib.exercises.scoring.check_dot_product": CHECKERS,
    "attnlib.exercises.scoring.check_scaled_score": CHECKERS,
    "attnlib.exercises.scoring.check_score_function": CHECKERS,
    "attnlib.exercises.show_answer": EXERCISES,
    "attnlib.exercises.shown": EXERCISES,
    "attnlib.exercises.softmax.check_softmax": CHECKERS,
    "attnlib.exercises.softmax.check_weights": CHECKERS,
    "attnlib.exercises.summary.check_attention_function": CHECKERS,
    "attnlib.exercises.summary.check_pipeline_order": CHECKERS,
    "attnlib.exercises.try_reader": EXERCISES,
    "attnlib.exercises.values.check_attention": CHECKERS,
    "attnlib.exercises.values.check_output": CHECKERS,
    "attnlib.exercises.values.check_shapes": CHECKERS,
    "attnlib.exercises.why_attention.check_attention_kind": CHECKERS,
    "attnlib.exercises.why_attention.check_uniform_mixture": CHECKERS,
    "attnlib.figures.translation.length_curves": FIGURES,
    "attnlib.figures.translation.position_curves": FIGURES,
    "attnlib.figures.translation.training_curves": FIGURES,
    "attnlib.figures.charts.mixture_bars": FIGURES,
    "attnlib.figures.diagrams.data_flow_diagram": FIGURES,
    "attnlib.figures.diagrams.layer_flow_diagram": FIGURES,
    "attnlib.figures.explorers.cost.cost_figure": FIGURES,
    "attnlib.figures.explorers.cost.cost_state": FIGURES,
    "attnlib.figures.explorers.cost.cost_svg": FIGURES,
    "attnlib.figures.explorers.heads.heads_figure": FIGURES,
    "attnlib.figures.explorers.heads.heads_state": FIGURES,
    "attnlib.figures.explorers.heads.heads_svg": FIGURES,
    "attnlib.figures.explorers.learned.learned_figure": FIGURES,
    "attnlib.figures.explorers.learned.learned_state": FIGURES,
    "attnlib.figures.explorers.learned.learned_svg": FIGURES,
    "attnlib.figures.explorers.masks.mask_figure": FIGURES,
    "attnlib.figures.explorers.masks.mask_state": FIGURES,
    "attnlib.figures.explorers.masks.mask_svg": FIGURES,
    "attnlib.figures.explorers.minilm.layer_figure": FIGURES,
    "attnlib.figures.explorers.minilm.layer_state": FIGURES,
    "attnlib.figures.explorers.minilm.layer_svg": FIGURES,
    "attnlib.figures.explorers.minilm.model_figure": FIGURES,
    "attnlib.figures.explorers.minilm.model_state": FIGURES,
    "attnlib.figures.explorers.minilm.model_svg": FIGURES,
    "attnlib.figures.explorers.position.position_figure": FIGURES,
    "attnlib.figures.explorers.position.position_state": FIGURES,
    "attnlib.figures.explorers.position.position_svg": FIGURES,
    "attnlib.figures.explorers.query_key.query_key_figure": FIGURES,
    "attnlib.figures.explorers.query_key.query_key_state": FIGURES,
    "attnlib.figures.explorers.query_key.query_key_svg": FIGURES,
    "attnlib.figures.explorers.weights.scale_figure": FIGURES,
    "attnlib.figures.explorers.weights.scale_state": FIGURES,
    "attnlib.figures.explorers.weights.scale_svg": FIGURES,
    "attnlib.figures.explorers.weights.scores_figure": FIGURES,
    "attnlib.figures.explorers.weights.scores_state": FIGURES,
    "attnlib.figures.explorers.weights.scores_svg": FIGURES,
    "attnlib.figures.heatmaps.access_map": FIGURES,
    "attnlib.figures.heatmaps.alignment_heatmaps": FIGURES,
    "attnlib.figures.heatmaps.attention_heatmap": FIGURES,
    "attnlib.figures.heatmaps.layer_head_grids": FIGURES,
    "attnlib.figures.learning.descent_figure": FIGURES,
    "attnlib.figures.precomputed.figure_png": FIGURES,
    "attnlib.figures.precomputed.grid": FIGURES,
    "attnlib.figures.precomputed.readout_table": FIGURES,
    "attnlib.figures.style.literal": FIGURES,
    "attnlib.figures.style.palette_png": FIGURES,
    "attnlib.figures.style.literal_labels": FIGURES,
    "attnlib.figures.style.use_book_style": FIGURES,
    "attnlib.figures.svg.arrows": FIGURES,
    "attnlib.figures.svg.arrows_alt": FIGURES,
    "attnlib.figures.svg.bar_chart": FIGURES,
    "attnlib.figures.svg.bar_chart_alt": FIGURES,
    "attnlib.figures.svg.heatmap": FIGURES,
    "attnlib.figures.svg.heatmap_alt": FIGURES,
    "attnlib.figures.svg.line_chart": FIGURES,
    "attnlib.figures.svg.line_chart_alt": FIGURES,
    "attnlib.figures.svg.side_by_side": FIGURES,
    "attnlib.models.adversarial_attention.jensen_shannon": DATA_MODELS,
    "attnlib.models.adversarial_attention.predict_with_attention": DATA_MODELS,
    "attnlib.models.adversarial_attention.search_alternative_attention": DATA_MODELS,
    "attnlib.models.adversarial_attention.total_variation": DATA_MODELS,
    "attnlib.models.bottleneck.attend_to_positions": DATA_MODELS,
    "attnlib.models.bottleneck.capacity_bound": DATA_MODELS,
    "attnlib.models.bottleneck.decoder_context": DATA_MODELS,
    "attnlib.models.bottleneck.final_state_jacobians": DATA_MODELS,
    "attnlib.models.bottleneck.linear_recovery_r2": DATA_MODELS,
    "attnlib.models.bottleneck.recovery_experiment": DATA_MODELS,
    "attnlib.models.context_classifier.accuracy": DATA_MODELS,
    "attnlib.models.context_classifier.attention_map": DATA_MODELS,
    "attnlib.models.context_classifier.context_datasets": DATA_MODELS,
    "attnlib.models.context_classifier.cross_entropy": DATA_MODELS,
    "attnlib.models.context_classifier.forward": DATA_MODELS,
    "attnlib.models.context_classifier.init_context_classifier": DATA_MODELS,
    "attnlib.models.context_classifier.loss": DATA_MODELS,
    "attnlib.models.context_classifier.loss_and_gradients": DATA_MODELS,
    "attnlib.models.context_classifier.train": DATA_MODELS,
    "attnlib.models.context_classifier.train_context_classifier": DATA_MODELS,
    "attnlib.models.encoder_decoder.forward": DATA_MODELS,
    "attnlib.models.encoder_decoder.init_encoder_decoder": DATA_MODELS,
    "attnlib.models.encoder_decoder.load": SAVE_LOAD,
    "attnlib.models.encoder_decoder.loss": DATA_MODELS,
    "attnlib.models.encoder_decoder.loss_and_gradients": DATA_MODELS,
    "attnlib.models.encoder_decoder.save": SAVE_LOAD,
    "attnlib.models.encoder_decoder.translate_greedy": DATA_MODELS,
    "attnlib.models.linear_classifier.accuracy": DATA_MODELS,
    "attnlib.models.linear_classifier.descent_along": DATA_MODELS,
    "attnlib.models.linear_classifier.gradient": DATA_MODELS,
    "attnlib.models.linear_classifier.init_params": DATA_MODELS,
    "attnlib.models.linear_classifier.loss": DATA_MODELS,
    "attnlib.models.linear_classifier.loss_along": DATA_MODELS,
    "attnlib.models.linear_classifier.numerical_gradient_w": DATA_MODELS,
    "attnlib.models.linear_classifier.predict": DATA_MODELS,
    "attnlib.models.linear_classifier.sigmoid": DATA_MODELS,
    "attnlib.models.linear_classifier.step": DATA_MODELS,
    "attnlib.models.linear_classifier.train": DATA_MODELS,
    "attnlib.models.minilm.encode": DATA_MODELS,
    "attnlib.models.minilm.encoder_layer": DATA_MODELS,
    "attnlib.models.minilm.forward": DATA_MODELS,
    "attnlib.models.minilm.layer_norm": DATA_MODELS,
    "attnlib.models.minilm.model_dir": DATA_MODELS,
    "attnlib.models.minilm.weighted_norms": DATA_MODELS,
    "attnlib.models.recurrent.init_rnn": DATA_MODELS,
    "attnlib.models.recurrent.rnn_backward": DATA_MODELS,
    "attnlib.models.recurrent.rnn_encode": DATA_MODELS,
    "attnlib.models.recurrent.rnn_step": DATA_MODELS,
    "attnlib.models.rnn_decoder.decoder_step": DATA_MODELS,
    "attnlib.models.rnn_decoder.decoder_step_backward": DATA_MODELS,
    "attnlib.models.translation_training.main": SCRIPT_MAIN,
    # --- the language-model chapters (LM helper) ---
    "attnlib.core.grouped_query.from_multi_head": LM,
    "attnlib.core.grouped_query.group_size": LM,
    "attnlib.core.grouped_query.grouped_query_attention": LM,
    "attnlib.core.grouped_query.grouped_query_self_attention": LM,
    "attnlib.core.grouped_query.init_grouped_query": LM,
    "attnlib.core.sliding_window.sliding_window_mask": LM,
    "attnlib.data.book_text.evaluation_windows": LM,
    "attnlib.data.book_text.extract_prose": LM,
    "attnlib.data.book_text.load_corpus": LM,
    "attnlib.data.book_text.random_windows": LM,
    "attnlib.data.book_text.split_pieces": LM,
    "attnlib.figures.explorers.induction.induction_figure": LM,
    "attnlib.figures.explorers.induction.induction_state": LM,
    "attnlib.figures.explorers.induction.induction_svg": LM,
    "attnlib.figures.explorers.language_model.next_token_figure": LM,
    "attnlib.figures.explorers.language_model.next_token_state": LM,
    "attnlib.figures.explorers.language_model.next_token_svg": LM,
    "attnlib.figures.explorers.language_model.show_char": LM,
    "attnlib.figures.language_model.head_scores_figure": LM,
    "attnlib.figures.language_model.loss_curves": LM,
    "attnlib.figures.language_model.phase_change_figure": LM,
    "attnlib.figures.language_model.token_cost_figure": LM,
    "attnlib.layers.causal_block.causal_block": LM,
    "attnlib.layers.causal_block.causal_block_backward": LM,
    "attnlib.layers.causal_block.self_attention_mask": LM,
    "attnlib.layers.dropout.residual_dropout": LM,
    "attnlib.layers.layer_backward.gelu_backward": LM,
    "attnlib.layers.layer_backward.layer_norm_backward": LM,
    "attnlib.layers.layer_backward.layer_norm_stats": LM,
    "attnlib.models.generation.generate": LM,
    "attnlib.models.generation.next_token_distribution": LM,
    "attnlib.models.generation.sample_next": LM,
    "attnlib.models.induction.ablate_each_head": LM,
    "attnlib.models.induction.circuit_heads": LM,
    "attnlib.models.induction.drop_step": LM,
    "attnlib.models.induction.half_losses": LM,
    "attnlib.models.induction.induction_scores": LM,
    "attnlib.models.induction.make_sequences": LM,
    "attnlib.models.induction.make_training_sequences": LM,
    "attnlib.models.induction.model_config": LM,
    "attnlib.models.induction.previous_token_scores": LM,
    "attnlib.models.induction.previous_token_by_position": LM,
    "attnlib.models.induction.previous_token_scores_by_period": LM,
    "attnlib.models.induction.without_heads": LM,
    "attnlib.models.kv_cache.kv_bytes_per_token": LM,
    "attnlib.models.language_model.backward": LM,
    "attnlib.models.language_model.block_params": LM,
    "attnlib.models.language_model.cross_entropy": LM,
    "attnlib.models.language_model.forward": LM,
    "attnlib.models.language_model.init_language_model": LM,
    "attnlib.models.language_model.loss": LM,
    "attnlib.models.language_model.loss_and_gradients": LM,
    "attnlib.models.language_model.parameter_count": LM,
    "attnlib.models.language_model.parameter_shapes": LM,
    "attnlib.models.lm_training.clip_global_norm": LM,
    "attnlib.models.lm_training.evaluate": LM,
    "attnlib.models.lm_training.learning_rate": LM,
    "attnlib.models.lm_training.train": LM,
    "attnlib.models.lm_training.recent_drop": LM,
    "attnlib.models.lm_runs.main": SCRIPT_LM,
    "attnlib.models.lm_runs.train_main": SCRIPT_LM,
    "attnlib.models.lm_runs.train_variant": SCRIPT_LM,
    "attnlib.models.lm_runs.write_variants": SCRIPT_LM,
    "attnlib.models.induction.main": SCRIPT_INDUCTION,
    "attnlib.models.induction.train_one": SCRIPT_INDUCTION,
    "attnlib.models.lm_runs.corpus": LM_STORED + "test_the_corpus_and_its_split",
    "attnlib.models.lm_runs.load_main": LM_STORED
    + "test_main_model_matches_its_corpus_and_config",
    "attnlib.models.lm_runs.load_variants": LM_STORED
    + "test_variants_differ_only_in_their_attention",
    "attnlib.models.lm_runs.variant_summary": LM_STORED
    + "test_variant_summary_reads_the_runs",
    "attnlib.models.induction.load": SCRIPT_INDUCTION[0],
    "attnlib.exercises.generation.check_sampler": CHECKERS,
    "attnlib.exercises.kv_cache.check_cache_step": CHECKERS,
    "attnlib.exercises.kv_cache.check_grouped_attention": CHECKERS,
    "attnlib.exercises.induction.check_induction_score": CHECKERS,
    "attnlib.models.translation_training.clip_by_global_norm": DATA_MODELS,
    "attnlib.models.translation_training.run_name": DATA_MODELS,
    "attnlib.models.translation_training.validation_set": DATA_MODELS,
    "attnlib.models.translation_training.validation_loss": DATA_MODELS,
    "attnlib.models.translation_training.train": DATA_MODELS,
    "attnlib.models.translation_training.train_run": DATA_MODELS,
    "attnlib.models.translation_training.load_runs": STORED_RUNS,
    "attnlib.models.translation_training.load_model": STORED_RUNS,
    "attnlib.models.translation_training.write_summary": (
        "tests/test_encoder_decoder.py::"
        "test_write_summary_records_the_runs_and_their_scores"
    ),
    "attnlib.models.translation_eval.test_batches": DATA_MODELS,
    "attnlib.models.translation_eval.evaluate": DATA_MODELS,
    "attnlib.models.translation_eval.evaluate_runs": DATA_MODELS,
    "attnlib.models.translation_eval.alignment_offsets": DATA_MODELS,
    "attnlib.models.translation_eval.farthest_verb": DATA_MODELS,
    "attnlib.models.translation_eval.verb_moves": DATA_MODELS,
    "attnlib.models.translation_eval.alignment_by_correctness": DATA_MODELS,
    "attnlib.models.translation_eval.separated": DATA_MODELS,
    "attnlib.models.translation_eval.chance_of_separation": DATA_MODELS,
    "attnlib.models.translation_eval.kind_of": DATA_MODELS,
    "attnlib.models.translation_eval.late_fall": (
        "tests/test_bottleneck_chapter.py::"
        "test_late_fall_compares_the_best_before_the_window_with_the_best"
    ),
    "attnlib.models.translation_eval.across_seeds": DATA_MODELS,
    "attnlib.models.translation_eval.by_position": DATA_MODELS,
    "attnlib.models.translation_eval.mean_and_range": DATA_MODELS,
    "attnlib.models.translation_eval.summary_lines": DATA_MODELS,
}


def public_functions() -> dict:
    """Every public function of every attnlib module, by qualified name."""
    found = {}
    for info in pkgutil.walk_packages(attnlib.__path__, "attnlib."):
        if any(part.startswith("_") for part in info.name.split(".")):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not inspect.isfunction(obj):
                continue
            home = obj.__module__
            private_inside = home.startswith(info.name + ".") and home[
                len(info.name) + 1 :
            ].startswith("_")
            if home == info.name or private_inside:
                found[f"{info.name}.{name}"] = obj
    return found


def registry() -> tuple[dict, bool]:
    """CONTRACT_TESTS with the core helper's rows, and whether those exist yet."""
    rows = dict(CONTRACT_TESTS)
    if not (TESTS / "contract_core.py").is_file():
        return rows, False
    core = importlib.import_module("contract_core")
    overlap = set(rows) & set(core.CONTRACT_TESTS)
    assert not overlap, f"listed twice: {sorted(overlap)}"
    rows.update(core.CONTRACT_TESTS)
    return rows, True


def _left_to_core(name: str) -> bool:
    return name.startswith(("attnlib.core.", "attnlib.layers."))


def test_every_public_function_names_its_contract_test():
    rows, has_core = registry()
    functions = public_functions()
    wanted = {q for q in functions if has_core or not _left_to_core(q)}
    missing = sorted(wanted - set(rows))
    assert not missing, (
        f"public functions without a contract test: {missing}; add each to "
        "CONTRACT_TESTS (tests/test_public_contract.py) with a test that holds its "
        "documented dtypes, errors and extreme inputs"
    )
    stale = sorted(set(rows) - set(functions))
    assert not stale, f"CONTRACT_TESTS names functions that do not exist: {stale}"
    if not has_core:
        pytest.skip(
            "attnlib.core and attnlib.layers: their rows are the core helper's "
            "(tests/contract_core.py), not there yet"
        )


def _test_function(node_id: str):
    path, _, name = node_id.partition("::")
    file = TESTS.parent / path
    assert file.is_file(), node_id
    tree = ast.parse(file.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return file, ast.get_source_segment(file.read_text(encoding="utf-8"), node)
    raise AssertionError(f"{node_id}: no such test function")


@pytest.mark.parametrize("qualname", sorted(registry()[0]))
def test_every_entry_names_a_real_test_of_that_function(qualname):
    entry = registry()[0][qualname]
    node_id, kind = (entry, "") if isinstance(entry, str) else entry
    file, source = _test_function(node_id)
    if kind == "script":
        return
    module = importlib.import_module(file.stem)
    covers = getattr(module, "CONTRACT_COVERS", None)
    if covers is not None:
        assert qualname in covers, f"{node_id} has no row for {qualname}"
    else:
        assert qualname.rsplit(".", 1)[1] in source, f"{node_id} does not call it"


def contract_listing() -> str:
    """Each module's public functions and the test that holds each one's contract (the
    closing note of issue 26 prints this)."""
    rows, _ = registry()
    lines, module = [], None
    for qualname in sorted(public_functions()):
        home, name = qualname.rsplit(".", 1)
        if home != module:
            lines.append(f"\n{home}")
            module = home
        entry = rows.get(qualname, "(left to the core helper)")
        test = entry if isinstance(entry, str) else entry[0]
        lines.append(f"  {name}: {test}")
    return "\n".join(lines).lstrip()


if __name__ == "__main__":  # python tests/test_public_contract.py: the listing
    print(contract_listing())
