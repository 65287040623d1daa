"""Issue 26, item 4: model names round-trip through ``save`` and ``load``.

Before, ``save({"run/attention": model}, path)`` then ``load(path)`` gave back
``{"run": ...}`` with parameters named ``"attention/E_src"``, and using the model
raised ``KeyError: 'E_src'``. Now every ``str`` name comes back as it was given and
the model is usable; a name that cannot be stored as text (an int, a tuple, None) is
refused by ``save`` with a TypeError naming ``models``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attnlib.data.translation_task import make_batch
from attnlib.models import encoder_decoder as ed

BATCH = make_batch(0, 3, 4)


def tiny(attend: bool, seed: int = 0) -> ed.EncoderDecoder:
    model = ed.init_encoder_decoder(seed, attend=attend, m=3, h=2, d=4, a=2)
    model.history = {"step": [0, 10], "loss": [2.5, 1.25]}
    return model


def as_stored(model: ed.EncoderDecoder) -> ed.EncoderDecoder:
    """The model with its parameters rounded to float32, as the file holds them."""
    params = {
        k: v.astype(np.float32).astype(np.float64) for k, v in model.params.items()
    }
    return ed.EncoderDecoder(params, model.attend)


def test_the_issue_name_with_a_slash_comes_back_and_the_model_works(tmp_path):
    model = tiny(attend=True)
    ed.save({"run/attention": model}, tmp_path / "m.npz")
    back = ed.load(tmp_path / "m.npz")
    assert list(back) == ["run/attention"]
    loaded = back["run/attention"]
    assert loaded.attend and sorted(loaded.params) == sorted(model.names)
    assert loaded.history == {"step": [0, 10], "loss": [2.5, 1.25]}
    # usable: the loss and a greedy translation equal those of the float32-rounded model
    assert ed.loss(loaded, BATCH) == ed.loss(as_stored(model), BATCH)
    words, weights = ed.translate_greedy(loaded, BATCH)
    want_words, want_weights = ed.translate_greedy(as_stored(model), BATCH)
    np.testing.assert_array_equal(words, want_words)
    np.testing.assert_array_equal(weights, want_weights)
    assert all(v.dtype == np.float64 for v in loaded.params.values())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    names=st.lists(st.text(max_size=12), min_size=1, max_size=3, unique=True),
    history_key=st.text(max_size=6),
)
def test_any_str_names_round_trip(tmp_path_factory, names, history_key):
    path = tmp_path_factory.mktemp("models") / "m.npz"
    models = {name: tiny(attend=i % 2 == 0, seed=i) for i, name in enumerate(names)}
    for model in models.values():
        model.history = {history_key: [1.0, 0.5]}
    ed.save(models, path)
    back = ed.load(path)
    assert list(back) == names  # the same names, in the same order
    for name, model in models.items():
        loaded = back[name]
        assert loaded.attend == model.attend
        assert loaded.history == {history_key: [1.0, 0.5]}
        assert sorted(loaded.params) == sorted(model.names)
        for k in model.names:
            np.testing.assert_array_equal(
                loaded.params[k], model.params[k].astype(np.float32)
            )


@pytest.mark.parametrize("name", [1, ("run", "attention"), None, b"run", 2.5])
def test_a_name_that_is_not_text_is_refused_naming_models(tmp_path, name):
    with pytest.raises(TypeError, match="models: every name must be a str"):
        ed.save({name: tiny(attend=False)}, tmp_path / "m.npz")
    assert not (tmp_path / "m.npz").exists()


def test_other_bad_arguments_are_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="models must be a dict"):
        ed.save([tiny(attend=False)], tmp_path / "m.npz")
    with pytest.raises(TypeError, match=r"models\['a'\] must be an EncoderDecoder"):
        ed.save({"a": {"E_src": np.zeros(2)}}, tmp_path / "m.npz")
    broken = tiny(attend=True)
    del broken.params["W_q"]
    with pytest.raises(KeyError, match="W_q"):
        ed.save({"a": broken}, tmp_path / "m.npz")
    odd_history = tiny(attend=True)
    odd_history.history = {3: [1.0]}
    with pytest.raises(TypeError, match=r"models\['a'\]\.history"):
        ed.save({"a": odd_history}, tmp_path / "m.npz")


def test_a_file_of_the_first_format_still_loads(tmp_path):
    """Files written before the table of contents (the stored chapter-2 weights were):
    arrays under "<name>/<parameter>"."""
    model = tiny(attend=True)
    arrays = {"attention/attend": np.array(True)}
    arrays |= {f"attention/{k}": v.astype(np.float32) for k, v in model.params.items()}
    arrays["attention/history/loss"] = np.array([2.5, 1.25])
    np.savez_compressed(tmp_path / "old.npz", **arrays)
    back = ed.load(tmp_path / "old.npz")["attention"]
    assert back.attend and back.history == {"loss": [2.5, 1.25]}
    assert ed.loss(back, BATCH) == ed.loss(as_stored(model), BATCH)


def test_an_unknown_format_is_refused(tmp_path):
    np.savez(tmp_path / "m.npz", **{"manifest.json": np.array('{"format": 9}')})
    with pytest.raises(ValueError, match="unknown model file format 9"):
        ed.load(tmp_path / "m.npz")
