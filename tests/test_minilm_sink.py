"""minilm_sink: key edits in every layer, checked against a
forward pass of all-MiniLM-L6-v2 written out here in plain numpy (no attnlib layer
code)."""

from __future__ import annotations

import math

import minilm_sink as ms
import numpy as np
import pytest

from attnlib.models import minilm

DOG = "The dog bit the man."  # [CLS] the dog bit the man . [SEP]: 8 tokens

_erf = np.vectorize(math.erf)
#: attnlib's erf is a rational approximation good to 1.5e-7 (math.erf is exact to
#: rounding); through six layers the final vectors agree to about 1e-6
TOL = 1e-5


def _ln(x, gain, bias, eps=1e-12):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gain + bias


def _forward_by_hand(ids, key=None, edit=None, frozen=None, record=None):
    """The final vectors (L, 384), head by head, with key ``key`` edited everywhere.

    ``frozen[n][h]`` (L, L), if given, replaces the weights head h of layer n computes;
    ``record``, a list, receives them (one list of 12 arrays per layer)."""
    w = minilm.load_weights()
    L = len(ids)
    x = w.word_embeddings[ids] + w.position_embeddings[:L] + w.token_type_embeddings[0]
    x = _ln(x.astype(np.float64), w.emb_ln_gain, w.emb_ln_bias)
    for n, layer in enumerate(w.layers):
        p = layer.attn
        layer_weights = []
        pairs = ((p.W_Q, p.b_Q), (p.W_K, p.b_K), (p.W_V, p.b_V))
        Q, K, V = (x @ W + b for W, b in pairs)  # each (L, 384)
        heads = []
        for h in range(12):
            cols = slice(32 * h, 32 * (h + 1))
            v = V[:, cols].copy()  # value rows, bias included: f = v W_O^h
            if edit == "silence":
                v[key] = 0.0
            elif edit == "fill":
                v[key] = np.delete(v, key, axis=0).mean(axis=0)
            s = Q[:, cols] @ K[:, cols].T / np.sqrt(32)  # (L, L)
            if edit == "block":
                s[:, key] = -np.inf
            a = np.exp(s - s.max(axis=1, keepdims=True))
            a = a / a.sum(axis=1, keepdims=True) if frozen is None else frozen[n][h]
            layer_weights.append(a)
            heads.append(a @ v)
        if record is not None:
            record.append(layer_weights)
        A = np.concatenate(heads, axis=1) @ p.W_O + p.b_O
        hid = _ln(x + A, layer.ln1_gain, layer.ln1_bias)
        u = hid @ layer.W_1 + layer.b_1
        ff = (0.5 * u * (1 + _erf(u / np.sqrt(2)))) @ layer.W_2 + layer.b_2
        x = _ln(hid + ff, layer.ln2_gain, layer.ln2_bias)
    return x


@pytest.fixture(scope="module")
def dog_ids():
    return minilm.encode(DOG)[1]


def test_the_hand_pass_is_the_model(dog_ids):
    np.testing.assert_allclose(
        _forward_by_hand(dog_ids), minilm.forward(DOG).hidden_states[-1], atol=TOL
    )


@pytest.mark.parametrize("edit", ms.KEY_EDITS)
def test_every_edit_matches_the_hand_pass(dog_ids, edit):
    keys = [0, 2, 7]  # [CLS], "dog", [SEP]
    got = ms.forward_with_key_edit(DOG, keys, edit)
    assert got.shape == (3, len(dog_ids), 384) and got.dtype == np.float64
    for b, k in enumerate(keys):
        np.testing.assert_allclose(
            got[b], _forward_by_hand(dog_ids, k, edit), atol=TOL, err_msg=f"key {k}"
        )
    one = ms.forward_with_key_edit(dog_ids, 2, edit)  # ids and an int key
    np.testing.assert_allclose(one, got[1], atol=1e-10)


@pytest.mark.parametrize("edit", ms.FREEZABLE_EDITS)
def test_frozen_weights_match_the_hand_pass(dog_ids, edit):
    unedited = []
    _forward_by_hand(dog_ids, record=unedited)  # the weights of the unedited pass
    keys = [0, 3]  # [CLS], "bit"
    got = ms.forward_with_key_edit(DOG, keys, edit, frozen_weights=True)
    for b, k in enumerate(keys):
        want = _forward_by_hand(dog_ids, k, edit, frozen=unedited)
        np.testing.assert_allclose(got[b], want, atol=TOL, err_msg=f"key {k}")
        # a test of the test: the layers above do recompute their weights otherwise
        free = _forward_by_hand(dog_ids, k, edit)
        assert np.abs(free - want).max() > 1e-3
    edited = []
    _forward_by_hand(dog_ids, 0, "fill", record=edited)
    # unfrozen, fill leaves layer 0's weights alone but not layer 1's
    assert np.allclose(edited[0], unedited[0])
    assert not np.allclose(edited[1], unedited[1])


def test_cls_edit_cosines_by_hand(dog_ids):
    got = ms.cls_edit_cosines([DOG, "A cat sat."])
    assert set(got) == set(ms.FREEZABLE_EDITS)
    assert all(v.shape == (2,) and v.dtype == np.float64 for v in got.values())
    unedited = []
    e = _forward_by_hand(dog_ids, record=unedited).mean(axis=0)
    for edit in ms.FREEZABLE_EDITS:
        e2 = _forward_by_hand(dog_ids, 0, edit, frozen=unedited).mean(axis=0)
        want = e @ e2 / (np.linalg.norm(e) * np.linalg.norm(e2))
        assert got[edit][0] == pytest.approx(want, abs=1e-6)
    free = ms.cls_edit_cosines([DOG], ("fill",), frozen_weights=False)["fill"]
    effects = ms.key_edit_effects([DOG], edits=("fill",))["fill"]
    assert free[0] == pytest.approx(effects["[CLS]: embedding cosine"][0], abs=1e-12)


def test_an_edit_changes_the_output(dog_ids):
    # a test of the tests: each edit of "dog" moves its neighbours' final vectors
    base = minilm.forward(DOG).hidden_states[-1]
    for edit in ms.KEY_EDITS:
        moved = ms.forward_with_key_edit(DOG, 2, edit)
        assert np.linalg.norm(moved[3] - base[3]) > 1e-2, edit


def test_sentence_embedding_is_the_mean_of_the_final_vectors(dog_ids):
    e = ms.sentence_embedding(DOG)
    np.testing.assert_allclose(e, _forward_by_hand(dog_ids).mean(axis=0), atol=TOL)


def test_key_edit_effects_by_hand(dog_ids):
    effects = ms.key_edit_effects([DOG], edits=("block",))
    assert set(effects) == {"block"}
    r = effects["block"]
    assert set(r) == set(ms.EFFECT_MEASURES)
    assert all(v.shape == (1,) and v.dtype == np.float64 for v in r.values())
    y = _forward_by_hand(dog_ids)
    e = y.mean(axis=0)
    L = len(dog_ids)
    cosines, changes = [], []
    for k in range(L - 1):  # [CLS] and the six content tokens
        y2 = _forward_by_hand(dog_ids, k, "block")
        e2 = y2.mean(axis=0)
        cosines.append(e @ e2 / (np.linalg.norm(e) * np.linalg.norm(e2)))
        rest = [i for i in range(1, L) if i != k]
        changes.append(
            np.mean([np.linalg.norm(y2[i] - y[i]) / np.linalg.norm(y[i]) for i in rest])
        )
    assert r["[CLS]: embedding cosine"][0] == pytest.approx(cosines[0], abs=1e-6)
    assert r["[CLS]: token change"][0] == pytest.approx(changes[0], abs=1e-6)
    assert r["content: embedding cosine"][0] == pytest.approx(np.mean(cosines[1:]))
    assert r["content: lowest embedding cosine"][0] == pytest.approx(min(cosines[1:]))
    assert r["content: highest embedding cosine"][0] == pytest.approx(max(cosines[1:]))
    assert r["content: token change"][0] == pytest.approx(np.mean(changes[1:]))


def test_minilm_sink_contract(dog_ids):
    """Named errors for forward_with_key_edit, cls_edit_cosines, key_edit_effects,
    sentence_embedding."""
    with pytest.raises(ValueError, match="edit"):
        ms.forward_with_key_edit(DOG, 0, "erase")
    with pytest.raises(ValueError, match="keys"):
        ms.forward_with_key_edit(DOG, [0, 8], "block")
    with pytest.raises(ValueError, match="keys"):
        ms.forward_with_key_edit(DOG, [], "block")
    with pytest.raises(TypeError, match="keys"):
        ms.forward_with_key_edit(DOG, [0.5], "block")
    with pytest.raises(ValueError, match="frozen_weights"):
        ms.forward_with_key_edit(DOG, 0, "block", frozen_weights=True)
    with pytest.raises(ValueError, match="frozen_weights"):
        ms.cls_edit_cosines([DOG], ("block",))
    with pytest.raises(TypeError, match="sentences"):
        ms.cls_edit_cosines(DOG)
    with pytest.raises(ValueError, match="no token besides"):
        ms.cls_edit_cosines([""])
    with pytest.raises(TypeError, match="sentences"):
        ms.key_edit_effects(DOG)
    with pytest.raises(ValueError, match="edits"):
        ms.key_edit_effects([DOG], edits=("erase",))
    with pytest.raises(ValueError, match="no token besides"):
        ms.key_edit_effects([""])
    e = ms.sentence_embedding(dog_ids)
    assert e.shape == (384,) and e.dtype == np.float64 and np.isfinite(e).all()


# ---- the [CLS] sink the interpretability chapter reads (expert reads 3a, 5d) -------

SINK_SENTENCES = [
    "The fisherman repaired his net beside the bank.",
    "The cashier counted the money inside the bank.",
    "The teller counted the money inside the bank.",
    "His net was repaired by the fisherman beside the bank.",
    "The bank flooded after the storm.",
    "The bank was crowded because people were waiting to withdraw money.",
    "The animal didn't cross the street because it was too tired.",
    "The dog bit the man.",
    "The cat sat on the mat.",
    "Machine learning rocks!",
]


def _delivered(out) -> np.ndarray:
    """||alpha_ij f(x_j)|| written out: (6, 12, L, L)."""
    return out.attention * np.linalg.norm(out.transformed, axis=-1)[:, :, None, :]


def test_cls_delivers_little_in_layers_1_to_5_and_most_in_layer_2_head_9():
    river = minilm.forward(SINK_SENTENCES[0])
    delivered = _delivered(river)
    np.testing.assert_allclose(delivered, river.weighted_norms(), rtol=1e-10)
    cls_top = delivered[..., 0].max(axis=(1, 2))  # (6,) per layer, key [CLS]
    others_top = delivered[..., 1:].max(axis=(1, 2, 3))  # (6,)
    assert (cls_top[1:] < 0.25 * others_top[1:]).all()
    assert cls_top[0] > cls_top[1:].max()
    assert int(delivered[2, :, :, 0].max(axis=1).argmax()) == 9


def test_the_cls_averages_over_heads_hide_heads_on_both_sides():
    ratio_sum = np.zeros((4, 12))
    lo, hi, share_max = np.inf, 0.0, 0.0
    for s in SINK_SENTENCES:
        out = minilm.forward(s)
        f = np.linalg.norm(out.transformed[1:5], axis=-1)  # (4, 12, L): layers 1-4
        r = f[..., 1:-1].mean(axis=-1) / f[..., 0]  # content tokens over [CLS]
        lo, hi = min(lo, r.min()), max(hi, r.max())
        ratio_sum += r / len(SINK_SENTENCES)
        n = _delivered(out)[1:5]
        share = (n[..., 0] / n.sum(axis=-1)).mean(axis=-1)  # (4, 12)
        share_max = max(share_max, share.max())
    mean_over_heads = ratio_sum.mean(axis=1)  # (4,) the averages the chapter states
    assert (mean_over_heads > 10).all()  # [CLS]'s vector is much shorter on average
    assert (ratio_sum < 16.5).sum() > 0 and lo < 16.5 < 35.4 < hi
    assert share_max > 0.5  # in some head [CLS] supplies over half the delivered norm


def test_content_tokens_are_every_token_but_cls_and_sep():
    effects = ms.key_edit_effects(["Hi"], edits=("silence",))  # [CLS] hi [SEP]
    assert effects["silence"]["content: embedding cosine"].shape == (1,)
