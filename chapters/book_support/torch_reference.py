"""attnlib beside PyTorch, in plain numpy: the converters between PyTorch state dicts
and attnlib's parameters, and the agreement line the chapter "The same in PyTorch"
prints. Shared by that chapter and ``tests/test_torch_reference.py``; the PyTorch
side of the comparisons (a small causal block written in PyTorch) is
``book_support.torch_blocks``, the one module of ``book_support`` that imports torch.

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

__all__ = [
    "BLOCK_NAMES",
    "agreement",
    "block_from_torch",
    "block_to_torch",
    "mha_from_torch",
    "mha_to_torch",
    "numpy_state",
]

#: attnlib's block names -> the names of ``book_support.torch_blocks.TorchBlock``
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


def numpy_state(module) -> dict:
    """A PyTorch module's ``state_dict()`` (or any dict of tensors) as numpy arrays,
    ``{name: array}``, copied off the autograd graph."""
    state = module.state_dict() if hasattr(module, "state_dict") else module
    return {name: tensor.detach().numpy().copy() for name, tensor in state.items()}


def agreement(ours, theirs, tol: float = 1e-12) -> str:
    """The line the chapter prints for one comparison: ``"max |attnlib - torch| <
    1e-12"``, the bound ``tol`` rather than the difference itself, so the printed text
    is the same on every machine (the last bits of a sum depend on the BLAS).

    ``ours``: a numpy array; ``theirs``: an array or a tensor of the same shape (read
    with ``.detach().numpy()``). Raises ``ValueError`` for different shapes and
    ``AssertionError`` naming the difference when it is not below ``tol``, so a
    disagreement fails the chapter's run (and nbval) instead of printing.
    """
    if hasattr(theirs, "detach"):
        theirs = theirs.detach().numpy()
    ours, theirs = np.asarray(ours, np.float64), np.asarray(theirs, np.float64)
    if ours.shape != theirs.shape:
        raise ValueError(f"shapes differ: attnlib {ours.shape}, torch {theirs.shape}")
    err = float(np.max(np.abs(ours - theirs), initial=0.0))
    if not err < tol:
        raise AssertionError(f"max |attnlib - torch| = {err:.3g}, not below {tol:.0e}")
    mantissa, exponent = f"{tol:.0e}".split("e")
    return f"max |attnlib - torch| < {mantissa}e{int(exponent)}"


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
    """An attnlib causal block's parameters (short names, ``W_Q``, ``ln1_gain``: as
    ``attnlib.models.language_model.block_params`` gives them) -> the TorchBlock's
    state dict."""
    return {BLOCK_NAMES[name]: _flip(value) for name, value in p.items()}


def block_from_torch(state: dict) -> dict:
    """The TorchBlock's state dict (or its gradients) -> attnlib's block names."""
    back = {torch_name: name for name, torch_name in BLOCK_NAMES.items()}
    return {back[key]: _flip(value) for key, value in state.items()}
