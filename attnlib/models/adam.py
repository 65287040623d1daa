"""Adam (Kingma & Ba, 2015, Algorithm 1) and AdamW (Loshchilov & Hutter, 2019,
Algorithm 2), for the book's small models trained by hand."""

from __future__ import annotations

import math

import numpy as np

from attnlib.core._validation import as_real_number

__all__ = ["Adam", "AdamW", "decays"]


class Adam:
    """Adam optimiser (Kingma & Ba 2015, Algorithm 1), updating arrays in place.

    ``m = b1 m + (1 - b1) g``; ``v = b2 v + (1 - b2) g^2``;
    ``theta -= lr * m_hat / (sqrt(v_hat) + eps)`` with the bias corrections
    ``m_hat = m / (1 - b1^t)``, ``v_hat = v / (1 - b2^t)``.
    """

    def __init__(
        self,
        lr: float = 0.01,
        beta1: float = 0.9,
        beta2: float = 0.999,
        eps: float = 1e-8,
    ):
        lr, eps = as_real_number(lr, "lr"), as_real_number(eps, "eps")
        for name, value in (("lr", lr), ("eps", eps)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number; got {value}")
        beta1, beta2 = as_real_number(beta1, "beta1"), as_real_number(beta2, "beta2")
        for name, value in (("beta1", beta1), ("beta2", beta2)):
            if not 0 <= value < 1:
                raise ValueError(f"{name} must lie in [0, 1); got {value}")
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.t = 0
        self.m: dict = {}
        self.v: dict = {}

    def step(self, params: dict, grads: dict) -> None:
        """Update every array of ``params`` in place with its entry of ``grads``."""
        self.t += 1
        for name, g in grads.items():
            m = self.m.setdefault(name, np.zeros_like(g))
            v = self.v.setdefault(name, np.zeros_like(g))
            m *= self.beta1
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            m_hat = m / (1 - self.beta1**self.t)
            v_hat = v / (1 - self.beta2**self.t)
            params[name] -= self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def decays(name: str, value) -> bool:
    """The rule of :class:`AdamW` for which parameters decay: matrices do; vectors
    (biases, normalisation gains) and the embedding tables (``tok_emb``, ``pos_emb``)
    do not.

    Parameters: ``name``, a key of the parameter dict; ``value``, its array (any
    shape). Returns bool: ``value.ndim >= 2`` and ``name`` is not an embedding table.
    Raises nothing.

    Leaving out the embedding tables is a choice (nanoGPT's ``configure_optimizers``
    decays them with the other matrices); biases and gains decay in neither.

    Source: Loshchilov & Hutter (2019), section 2 (the decay of the weights).
    """
    return np.ndim(value) >= 2 and name.rsplit(".", 1)[-1] not in ("tok_emb", "pos_emb")


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter 2019, Algorithm 2).

    Before the Adam step, each parameter that :func:`decays` is shrunk,
    ``theta -= lr * weight_decay * theta`` (as ``torch.optim.AdamW``: the decay is
    scaled by the current ``lr``, the schedule multiplier of the paper); the gradient
    itself never sees the decay, unlike L2 regularisation added to the loss.
    ``weight_decay=0`` is exactly :class:`Adam`. Raises ``TypeError`` for a
    ``weight_decay`` that is not a real number, ``ValueError`` for a negative or
    infinite one, and what :class:`Adam` raises.

    Source: Loshchilov & Hutter (2019), "Decoupled Weight Decay Regularization",
    Algorithm 2, line 12.
    """

    def __init__(self, lr=0.01, beta1=0.9, beta2=0.999, eps=1e-8, weight_decay=0.01):
        super().__init__(lr, beta1, beta2, eps)
        weight_decay = as_real_number(weight_decay, "weight_decay")
        if not (math.isfinite(weight_decay) and weight_decay >= 0):
            raise ValueError(
                f"weight_decay must be finite and >= 0; got {weight_decay}"
            )
        self.weight_decay = weight_decay

    def step(self, params: dict, grads: dict) -> None:
        """Decay the matrices of ``params`` in place, then take the Adam step."""
        for name in grads:
            if self.weight_decay and decays(name, params[name]):
                params[name] *= 1 - self.lr * self.weight_decay
        super().step(params, grads)
