"""Adam (Kingma & Ba, 2015, Algorithm 1), for the book's small models trained by
hand."""

from __future__ import annotations

import math

import numpy as np

from attnlib.core._validation import as_real_number

__all__ = ["Adam"]


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
