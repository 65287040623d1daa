"""The PyTorch side of the comparisons with attnlib: rotary embeddings and one pre-norm
causal block, written plainly in PyTorch.

The one module of ``book_support`` that imports torch. Only the chapter "The same in
PyTorch" and ``tests/test_torch_reference.py`` import it; the page's Python (Pyodide)
has no torch, so ``_ext/live_cells.py`` marks every cell that imports this module or
torch as one that cannot run in the page, and ``tests/test_site_extensions.py`` checks
that no other page imports it.

``TorchBlock``'s parameter names are those of
``book_support.torch_reference.BLOCK_NAMES``; its weights load into attnlib's causal
block with ``block_from_torch`` and back with ``block_to_torch``.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["TorchBlock", "rope"]


def rope(x: torch.Tensor, base: float = 10_000.0) -> torch.Tensor:
    """Rotary embeddings on ``(B, H, L, d)``, pairs ``(2i, 2i + 1)`` turned by the angle
    ``m base^(-2i/d)`` at position ``m`` (RoFormer's layout, as attnlib's; LLaMA's
    Hugging Face code pairs ``i`` with ``i + d/2`` instead)."""
    d, L = x.shape[-1], x.shape[-2]
    theta = base ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)  # (d/2,)
    angles = torch.arange(L, dtype=torch.float64)[:, None] * theta  # (L, d/2)
    c, s = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * c - odd * s, even * s + odd * c], -1).flatten(-2)


class TorchBlock(torch.nn.Module):
    """A pre-norm causal block written plainly in PyTorch (nanoGPT / LLaMA layout).

    ``d`` model width, ``H`` query heads, ``H_kv`` key/value heads, ``d_ff``
    feed-forward width; ``norm`` "layer" or "rms", ``act`` "gelu", "relu" or
    "swiglu", ``rope`` rotary embeddings on queries and keys, ``bias`` biases in the
    feed-forward and layer norms (the attention projections have none, as attnlib's).
    Made in float64; ``.to(torch.float32)`` for float32.
    """

    def __init__(
        self, d, H, H_kv, d_ff, norm="layer", act="gelu", rope=False, bias=True
    ):
        super().__init__()
        self.H, self.H_kv, self.act, self.rope = H, H_kv, act, rope
        d_kv = H_kv * (d // H)

        def make_norm():
            if norm == "rms":
                return torch.nn.RMSNorm(d, eps=1e-5, dtype=torch.float64)
            return torch.nn.LayerNorm(d, bias=bias, dtype=torch.float64)

        def linear(n_in, n_out, with_bias=False):
            return torch.nn.Linear(n_in, n_out, bias=with_bias, dtype=torch.float64)

        self.ln1, self.ln2 = make_norm(), make_norm()
        self.q, self.k, self.v = linear(d, d), linear(d, d_kv), linear(d, d_kv)
        self.o = linear(d, d)
        self.fc1, self.fc2 = linear(d, d_ff, bias), linear(d_ff, d, bias)
        if act == "swiglu":
            self.fc3 = linear(d, d_ff, bias)

    def forward(self, x):
        B, L, d = x.shape
        a = self.ln1(x)
        q = self.q(a).view(B, L, self.H, -1).transpose(1, 2)  # (B, H, L, d_k)
        k = self.k(a).view(B, L, self.H_kv, -1).transpose(1, 2)  # (B, H_kv, L, d_k)
        v = self.v(a).view(B, L, self.H_kv, -1).transpose(1, 2)
        if self.rope:
            q, k = rope(q), rope(k)
        heads = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
        x1 = x + self.o(heads.transpose(1, 2).reshape(B, L, d))
        f = self.ln2(x1)
        if self.act == "swiglu":
            hidden = F.silu(self.fc1(f)) * self.fc3(f)
        else:
            hidden = F.gelu(self.fc1(f)) if self.act == "gelu" else F.relu(self.fc1(f))
        return x1 + self.fc2(hidden)
