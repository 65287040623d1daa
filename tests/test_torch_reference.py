"""attnlib against PyTorch (issue 39): the same random inputs through both, in float32
and float64, forward and backward (attnlib's hand-written gradients against
torch.autograd).

Compared: ``attention`` with boolean masks and causal masks against
``torch.nn.functional.scaled_dot_product_attention`` (``attn_mask``, ``is_causal``, and
grouped-query heads via ``enable_gqa`` and ``repeat_interleave``); multi-head attention
against ``torch.nn.MultiheadAttention`` (weights loaded through
``book_support.torch_reference``, the converters the chapter "The same in PyTorch"
uses); layer norm and RMSNorm; GELU and SiLU; SwiGLU; AdamW steps
against ``torch.optim.AdamW``; one causal block against the small hand-written
``book_support.torch_blocks.TorchBlock`` loaded with the same weights.

Tolerances: float64 agrees to 1e-12 (1e-11 where sums are longer) except GELU,
whose erf is Abramowitz & Stegun 7.1.26 (absolute error below 1.5e-7): GELU, its
derivative and a GELU block agree to 5e-6; float32 to 2e-5 (2e-4).
Skipped when torch is not installed (``requirements-torch.txt``).
"""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import torch.nn.functional as F  # noqa: E402

import attnlib  # noqa: E402
from attnlib.core.backward import attention_backward  # noqa: E402
from attnlib.core.grouped_query import grouped_query_attention  # noqa: E402
from attnlib.core.heads import MultiHeadParams  # noqa: E402
from attnlib.layers import causal_block as cb  # noqa: E402
from attnlib.layers import layer_backward as lb  # noqa: E402
from attnlib.models import language_model as lm  # noqa: E402
from attnlib.models.adam import AdamW, decays  # noqa: E402
from book_support.torch_blocks import TorchBlock  # noqa: E402
from book_support.torch_reference import (  # noqa: E402
    block_from_torch,
    block_to_torch,
    mha_from_torch,
    mha_to_torch,
)

DTYPES = [np.float64, np.float32]
TOL = {np.float64: 1e-12, np.float32: 2e-5}
ERRORS = {}  # test -> largest absolute difference seen (printed with pytest -s)


def close(ours, theirs, dtype, what, tol=None):
    """Assert the largest absolute difference is below the dtype's tolerance."""
    theirs = theirs.detach().numpy() if torch.is_tensor(theirs) else theirs
    err = float(np.max(np.abs(np.asarray(ours, np.float64) - theirs), initial=0.0))
    ERRORS[what] = max(err, ERRORS.get(what, 0.0))
    print(f"{what} [{np.dtype(dtype).name}]: max |attnlib - torch| = {err:.2e}")
    assert err < (TOL[dtype] if tol is None else tol), (what, err)


def t(a, grad=False):
    """A numpy array as a tensor of the same dtype (a leaf with a gradient if asked)."""
    return torch.tensor(a, requires_grad=grad)


def rand(rng, shape, dtype):
    return rng.normal(size=shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("causal", [False, True], ids=["bool mask", "causal"])
def test_attention_and_its_gradients_match_sdpa(dtype, causal):
    rng = np.random.default_rng(0)
    q, k, v = (rand(rng, (2, 3, 5, 8), dtype) for _ in range(3))
    dO = rand(rng, (2, 3, 5, 8), dtype)
    if causal:
        mask = attnlib.causal_mask(5)
    else:  # random, each query keeping its own position (no row fully masked)
        mask = (rng.random((2, 1, 5, 5)) < 0.5) | np.eye(5, dtype=bool)
    out, _ = attnlib.attention(q, k, v, mask)
    dq, dk, dv = attention_backward(q, k, v, dO, mask)
    tq, tk, tv = t(q, True), t(k, True), t(v, True)
    if causal:
        ref = F.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    else:
        ref = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=t(mask))
    ref.backward(t(dO))
    close(out, ref, dtype, "attention output")
    for ours, theirs in ((dq, tq), (dk, tk), (dv, tv)):
        close(ours, theirs.grad, dtype, "attention gradients")


@pytest.mark.parametrize("dtype", DTYPES)
def test_grouped_query_attention_matches_sdpa_with_shared_heads(dtype):
    rng = np.random.default_rng(1)
    q = rand(rng, (2, 6, 5, 4), dtype)  # H = 6 query heads
    k, v = rand(rng, (2, 2, 5, 4), dtype), rand(rng, (2, 2, 5, 4), dtype)  # H_kv = 2
    out, _ = grouped_query_attention(q, k, v, attnlib.causal_mask(5))
    gqa = F.scaled_dot_product_attention(
        t(q), t(k), t(v), is_causal=True, enable_gqa=True
    )
    repeated = F.scaled_dot_product_attention(
        t(q), t(k).repeat_interleave(3, dim=1), t(v).repeat_interleave(3, dim=1),
        is_causal=True,
    )  # fmt: skip
    close(out, gqa, dtype, "grouped-query (enable_gqa)")
    close(out, repeated, dtype, "grouped-query (repeat_interleave)")


def _mha_pair(rng, dtype, d=8, H=2):
    """A torch MultiheadAttention with random weights and biases, and attnlib's copy."""
    module = torch.nn.MultiheadAttention(d, H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.tensor(rng.normal(size=tuple(p.shape))))
    module = module.to(torch.float32 if dtype == np.float32 else torch.float64)
    state = {k: a.detach().numpy() for k, a in module.state_dict().items()}
    return module, mha_from_torch(state, H)


@pytest.mark.parametrize("dtype", DTYPES)
def test_multi_head_attention_matches_torch_multihead_attention(dtype):
    rng = np.random.default_rng(2)
    module, params = _mha_pair(rng, dtype)
    q, kv = rand(rng, (3, 4, 8), dtype), rand(rng, (3, 6, 8), dtype)
    pad = attnlib.padding_mask(np.array([6, 4, 2]), 6)  # (B, 1, L_k), True = attend
    out, w = attnlib.multi_head_attention(q, kv, kv, params, pad, average_weights=True)
    ref, ref_w = module(t(q), t(kv), t(kv), key_padding_mask=t(~pad[:, 0]))
    close(out, ref, dtype, "multi-head output", tol=TOL[dtype] * 10)
    close(w, ref_w, dtype, "multi-head weights (averaged)")
    causal = attnlib.causal_mask(4)
    out, w = attnlib.multi_head_attention(q, q, q, params, causal)
    ref, ref_w = module(
        t(q), t(q), t(q), attn_mask=t(~causal), average_attn_weights=False
    )  # torch's boolean attn_mask: True = may NOT attend
    close(out, ref, dtype, "multi-head output", tol=TOL[dtype] * 10)
    close(w, ref_w, dtype, "multi-head weights (per head)")


def test_the_converters_round_trip_both_ways():
    rng = np.random.default_rng(3)
    module, params = _mha_pair(rng, np.float64)
    state = mha_to_torch(params)
    for key, value in module.state_dict().items():  # attnlib -> torch is torch's own
        np.testing.assert_array_equal(state[key], value.numpy())
    again = mha_from_torch(state, 2)
    for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V", "b_O"):
        np.testing.assert_array_equal(getattr(again, name), getattr(params, name))
    assert isinstance(again, MultiHeadParams)
    block = TorchBlock(8, 4, 2, 12, norm="rms", act="swiglu", bias=False)
    torch_state = {k: a.detach().numpy() for k, a in block.state_dict().items()}
    p = block_from_torch(torch_state)
    assert set(p) == {"ln1_gain", "W_Q", "W_K", "W_V", "W_O", "ln2_gain"} | {
        "W_1", "W_3", "W_2"
    }  # fmt: skip
    assert p["W_K"].shape == (8, 4)  # attnlib: (d, H_kv d_k)
    block.load_state_dict(
        {k: torch.from_numpy(a) for k, a in block_to_torch(p).items()}
    )
    for key, value in block.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), torch_state[key])


@pytest.mark.parametrize("dtype", DTYPES)
def test_layer_norm_and_rms_norm_match_torch_with_gradients(dtype):
    rng = np.random.default_rng(4)
    x, dy = rand(rng, (3, 4, 16), dtype), rand(rng, (3, 4, 16), dtype)
    gain, bias = rand(rng, 16, dtype), rand(rng, 16, dtype)
    tx, tg, tb = t(x, True), t(gain, True), t(bias, True)
    ref = F.layer_norm(tx, (16,), tg, tb, eps=1e-5)
    ref.backward(t(dy))
    close(attnlib.layer_norm(x, gain, bias), ref, dtype, "layer norm")
    dx, dgain, dbias = lb.layer_norm_backward(dy, *lb.layer_norm_stats(x), gain)
    for ours, theirs in ((dx, tx), (dgain, tg), (dbias, tb)):
        close(ours, theirs.grad, dtype, "layer norm gradients", tol=TOL[dtype] * 10)
    norm = torch.nn.RMSNorm(16, eps=1e-5, dtype=tx.dtype)
    with torch.no_grad():
        norm.weight.copy_(tg)
    tx = t(x, True)
    ref = norm(tx)
    ref.backward(t(dy))
    close(attnlib.rms_norm(x, gain), ref, dtype, "RMSNorm")
    dx, dgain = lb.rms_norm_backward(dy, *lb.rms_norm_stats(x), gain)
    close(dx, tx.grad, dtype, "RMSNorm gradients", tol=TOL[dtype] * 10)
    close(dgain, norm.weight.grad, dtype, "RMSNorm gradients", tol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gelu_silu_and_swiglu_match_torch_with_gradients(dtype):
    rng = np.random.default_rng(5)
    x, dy = 3 * rand(rng, (200,), dtype), rand(rng, (200,), dtype)
    gelu_tol = 5e-6  # attnlib's erf is A&S 7.1.26; its derivative is that of the fit
    for name, ours, back, fn, tol in (
        ("GELU", attnlib.gelu, lb.gelu_backward, F.gelu, gelu_tol),
        ("SiLU", attnlib.silu, lb.silu_backward, F.silu, None),
    ):
        tx = t(x, True)
        ref = fn(tx)
        ref.backward(t(dy))
        close(ours(x), ref, dtype, name, tol)
        close(back(x, dy), tx.grad, dtype, f"{name} gradient", tol)
    x = rand(rng, (2, 3, 8), dtype)
    W_1, W_3, W_2 = (t(rand(rng, s, dtype), True) for s in [(8, 12), (8, 12), (12, 8)])
    dy, tx = rand(rng, (2, 3, 8), dtype), t(x, True)
    ref = (F.silu(tx @ W_1) * (tx @ W_3)) @ W_2
    ref.backward(t(dy))
    Ws = [W.detach().numpy() for W in (W_1, W_3, W_2)]
    close(attnlib.swiglu(x, *Ws), ref, dtype, "SwiGLU", tol=TOL[dtype] * 10)
    grads = lb.swiglu_backward(dy, x, *Ws)
    for ours, theirs in zip(grads, (tx, W_1, W_3, W_2)):
        close(ours, theirs.grad, dtype, "SwiGLU gradients", tol=TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_adamw_steps_match_torch_adamw(dtype):
    config = lm.LMConfig(vocab_size=7, context=6, d_model=8, num_layers=1, num_heads=2)
    params = lm.init_language_model(config, 0, dtype=dtype)
    tensors = {k: t(v, True) for k, v in params.items()}
    decaying = [tensors[k] for k in params if decays(k, params[k])]
    others = [tensors[k] for k in params if not decays(k, params[k])]
    groups = [
        {"params": decaying, "weight_decay": 0.1},
        {"params": others, "weight_decay": 0.0},
    ]
    kw = dict(lr=1e-2, betas=(0.9, 0.95), eps=1e-8)
    reference = torch.optim.AdamW(groups, **kw)
    ours = AdamW(lr=1e-2, beta1=0.9, beta2=0.95, eps=1e-8, weight_decay=0.1)
    rng = np.random.default_rng(6)
    for _ in range(5):
        grads = {k: rand(rng, v.shape, dtype) for k, v in params.items()}
        for k, g in grads.items():
            tensors[k].grad = t(g)
        reference.step()
        ours.step(params, grads)
    for k in params:
        close(params[k], tensors[k], dtype, "AdamW (5 steps)", tol=TOL[dtype] * 10)


BLOCKS = {
    "GPT-2 (layer norm, GELU, biases)": dict(norm="layer", act="gelu"),
    "LLaMA (RMSNorm, RoPE, SwiGLU, GQA, no biases)": dict(
        norm="rms", act="swiglu", rope=True, bias=False
    ),
    "ReLU, layer norm without bias": dict(norm="layer", act="relu", bias=False),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(BLOCKS))
def test_one_causal_block_and_its_gradients_match_a_torch_block(name, dtype):
    options = BLOCKS[name]
    H, H_kv = 4, (2 if options.get("rope") else 4)
    block = TorchBlock(16, H, H_kv, 24, **options)
    rng = np.random.default_rng(7)
    with torch.no_grad():
        for p in block.parameters():
            p.copy_(torch.tensor(rng.normal(0.0, 0.3, size=tuple(p.shape))))
    block = block.to(torch.float32 if dtype == np.float32 else torch.float64)
    p = block_from_torch({k: a.detach().numpy() for k, a in block.state_dict().items()})
    x, dy = rand(rng, (2, 7, 16), dtype), rand(rng, (2, 7, 16), dtype)
    kw = dict(num_heads=H, num_kv_heads=H_kv, activation=options["act"])
    kw |= dict(norm_kind=options["norm"], rotary=options.get("rope", False))
    y, _, saved = cb.causal_block(x, p, keep_for_backward=True, **kw)
    dx, grads = cb.causal_block_backward(dy, p, saved, num_heads=H, num_kv_heads=H_kv)
    tx = t(x, True)
    ref = block(tx)
    ref.backward(t(dy))
    gelu = options["act"] == "gelu" and dtype == np.float64  # attnlib's erf: 1.5e-7
    tol = 5e-6 if gelu else TOL[dtype] * 10
    close(y, ref, dtype, f"causal block: {name}", tol)
    close(dx, tx.grad, dtype, f"causal block dx: {name}", tol)
    torch_grads = block_from_torch(
        {k: q.grad.numpy() for k, q in block.named_parameters()}
    )
    assert set(torch_grads) == set(grads)
    for key, g in grads.items():
        close(
            g, torch_grads[key], dtype, f"causal block parameter gradients: {name}", tol
        )


def test_the_chapters_agreement_line_prints_the_bound_and_refuses_a_larger_gap():
    from book_support.torch_reference import agreement, numpy_state

    ours = np.array([1.0, 2.0])
    assert agreement(ours, t(ours + 1e-13)) == "max |attnlib - torch| < 1e-12"
    assert agreement(ours, ours + 4e-7, tol=1e-6) == "max |attnlib - torch| < 1e-6"
    with pytest.raises(AssertionError, match="2e-12"):
        agreement(ours, ours + 2e-12)
    with pytest.raises(ValueError, match="shapes differ"):
        agreement(ours, ours[:1])
    linear = torch.nn.Linear(3, 2, dtype=torch.float64)
    state = numpy_state(linear)
    assert state["weight"].shape == (2, 3) and state["bias"].shape == (2,)
