"""Converters between PyTorch state dicts and attnlib parameters, in plain numpy.

Both directions work on dicts of numpy arrays (``{k: t.detach().numpy() for k, t in
module.state_dict().items()}`` on the PyTorch side, and ``module.load_state_dict({k:
torch.from_numpy(a) ...})`` back); nothing here imports torch, so attnlib stays
numpy-only. The one rule: ``torch.nn.Linear`` stores its weight as (out, in) and
computes ``x W^T``, attnlib stores (in, out) and computes ``x W``: matrices are
transposed, vectors are copied.

``torch.nn.MultiheadAttention`` keeps the three input projections stacked::

    in_proj_weight = [W_Q^T; W_K^T; W_V^T]   (3 d, d)   rows 0..d-1 are the queries'
    in_proj_bias   = [b_Q; b_K; b_V]         (3 d,)
    out_proj.weight = W_O^T (d, d),  out_proj.bias = b_O (d,)

and both libraries cut the ``d`` projected features into ``H`` consecutive blocks of
``d / H``, one per head, so no permutation is needed.
"""

from __future__ import annotations

import numpy as np

from attnlib.core.heads import MultiHeadParams

#: attnlib's block names -> the names of tests/test_torch_reference.py's TorchBlock
BLOCK_NAMES = {
    "ln1_gain": "ln1.weight",
    "ln1_bias": "ln1.bias",
    "W_Q": "q.weight",
    "W_K": "k.weight",
    "W_V": "v.weight",
    "W_O": "o.weight",
    "ln2_gain": "ln2.weight",
    "ln2_bias": "ln2.bias",
    "W_1": "fc1.weight",
    "b_1": "fc1.bias",
    "W_3": "fc3.weight",
    "b_3": "fc3.bias",
    "W_2": "fc2.weight",
    "b_2": "fc2.bias",
}


def _flip(a: np.ndarray) -> np.ndarray:
    """A Linear weight (out, in) <-> an attnlib matrix (in, out); vectors unchanged."""
    return np.ascontiguousarray(a.T) if a.ndim == 2 else a.copy()


def mha_to_torch(params: MultiHeadParams) -> dict:
    """attnlib multi-head parameters (with biases) -> nn.MultiheadAttention's state."""
    p = params
    return {
        "in_proj_weight": np.concatenate([p.W_Q.T, p.W_K.T, p.W_V.T]),  # (3d, d)
        "in_proj_bias": np.concatenate([p.b_Q, p.b_K, p.b_V]),  # (3d,)
        "out_proj.weight": _flip(p.W_O),  # (d, d)
        "out_proj.bias": p.b_O.copy(),  # (d,)
    }


def mha_from_torch(state: dict, num_heads: int) -> MultiHeadParams:
    """nn.MultiheadAttention's state (numpy arrays) -> attnlib multi-head parameters."""
    W_q, W_k, W_v = np.split(state["in_proj_weight"], 3)  # (d, d) each, (out, in)
    b_q, b_k, b_v = np.split(state["in_proj_bias"], 3)
    return MultiHeadParams(
        W_q.T, W_k.T, W_v.T, state["out_proj.weight"].T, num_heads,
        b_q, b_k, b_v, state["out_proj.bias"],
    )  # fmt: skip


def block_to_torch(p: dict) -> dict:
    """An attnlib causal block's parameters -> the TorchBlock's state dict."""
    return {BLOCK_NAMES[name]: _flip(value) for name, value in p.items()}


def block_from_torch(state: dict) -> dict:
    """The TorchBlock's state dict (or its gradients) -> attnlib's block names."""
    back = {torch_name: name for name, torch_name in BLOCK_NAMES.items()}
    return {back[key]: _flip(value) for key, value in state.items()}
