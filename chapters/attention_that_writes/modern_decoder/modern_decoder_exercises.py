"""Checkers for the exercises of the chapter "The modern decoder block".

* :func:`check_rms_norm`       the reader's RMSNorm, ``fn(x, gain)``
* :func:`check_swiglu`         the reader's gated feed-forward, ``fn(x, W_1, W_3, W_2)``
* :func:`check_rotary_cached`  the reader's rotary attention for new queries after a
  cache, ``fn(q, k_cache, v_cache, start)``

Every expected answer is computed with attnlib (:func:`attnlib.rms_norm`,
:func:`attnlib.swiglu`, :func:`attnlib.rotary_embedding` and :func:`attnlib.attention`);
each checker names the common slips it recognises. Every checker takes
``show_answer=True`` to print the expected value after the diagnosis (see
:mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.core.attention import attention as _attention
from attnlib.core.masks import causal_mask as _causal_mask
from attnlib.layers.feed_forward import gelu as _gelu
from attnlib.layers.feed_forward import relu as _relu
from attnlib.layers.feed_forward import sigmoid as _sigmoid
from attnlib.layers.feed_forward import silu as _silu
from attnlib.layers.feed_forward import swiglu as _swiglu
from attnlib.layers.layer_norm import rms_norm as _rms_norm
from attnlib.layers.positional_encoding import rotary_embedding as _rotary
from book_support.exercises import check_function, checker

#: the epsilon of the exercise (and attnlib's default)
EPS = 1e-5


# ---- RMSNorm --------------------------------------------------------------------


def _rms_reference(x, gain):
    return _rms_norm(x, gain, eps=EPS)


def _rms_slips():
    def mean_removed(x, gain):  # layer norm without its bias
        c = x - x.mean(-1, keepdims=True)
        return c / np.sqrt((c * c).mean(-1, keepdims=True) + EPS) * gain

    def mean_removed_rms(x, gain):  # the mean subtracted, the rms of x kept
        c = x - x.mean(-1, keepdims=True)
        return c / np.sqrt((x * x).mean(-1, keepdims=True) + EPS) * gain

    def no_root(x, gain):
        return x / ((x * x).mean(-1, keepdims=True) + EPS) * gain

    def eps_outside(x, gain):
        return x / (np.sqrt((x * x).mean(-1, keepdims=True)) + EPS) * gain

    def no_eps(x, gain):
        return x / np.sqrt((x * x).mean(-1, keepdims=True)) * gain

    def no_gain(x, gain):
        return _rms_norm(x, eps=EPS)

    def whole_array(x, gain):
        return x / np.sqrt((x * x).mean() + EPS) * gain

    def std_denominator(x, gain):  # np.std / np.var centre the row inside
        return x / np.sqrt(x.var(-1, keepdims=True) + EPS) * gain

    return [
        (
            mean_removed,
            "you subtract the mean: that is layer normalisation (without its bias). "
            "RMSNorm divides x itself by its root mean square and never centres it.",
        ),
        (
            mean_removed_rms,
            "you subtract the mean before dividing; RMSNorm keeps x as it is: "
            "x / sqrt(mean(x^2) + eps) * gain.",
        ),
        (
            no_root,
            "you divide by the mean square; divide by its square root, "
            "sqrt(mean(x^2) + eps).",
        ),
        (
            eps_outside,
            "eps goes inside the square root: sqrt(mean(x^2) + eps), not "
            "sqrt(mean(x^2)) + eps (the two differ on rows of small numbers).",
        ),
        (
            no_eps,
            "you left out eps = 1e-5 (or used a much smaller one); it matters for "
            "rows of small numbers: sqrt(mean(x^2) + eps).",
        ),
        (no_gain, "multiply by the gain after normalising (one number per feature)."),
        (
            whole_array,
            "you take one mean square over the whole array; each row (the last "
            "axis) has its own: mean(x * x, axis=-1, keepdims=True).",
        ),
        (
            std_denominator,
            "you divide by the standard deviation (np.std or np.var subtract the mean "
            "inside); RMSNorm divides by the root mean square of x itself, "
            "sqrt(mean(x^2) + eps).",
        ),
    ]


def _rms_cases():
    rng = np.random.default_rng(11)
    d = 6
    gain = rng.normal(1.0, 0.3, size=d)
    return [
        (
            "one row [1, 2, 3, 4] with gain 1",
            (np.array([[1.0, 2, 3, 4]]), np.ones(4)),
            None,
        ),
        ("4 rows of width 6, random gain", (rng.normal(size=(4, d)), gain), None),
        (
            "rows that are not centred, mean about 3",
            (rng.normal(3.0, 1.0, size=(3, d)), gain),
            None,
        ),
        (
            "rows of small numbers, about 0.001",
            (1e-3 * rng.normal(size=(2, d)), gain),
            "on rows this small eps decides the result: sqrt(mean(x^2) + eps).",
        ),
        (
            "a batch of 2 x 3 rows",
            (rng.normal(size=(2, 3, d)), gain),
            "normalise along the last axis only, whatever the leading axes.",
        ),
    ]


@checker("your function", answers=("fn",))
def check_rms_norm(fn) -> bool:
    """Check the reader's RMSNorm ``fn(x, gain)``: ``x / sqrt(mean(x^2) + eps) * gain``
    over the last axis, ``eps = 1e-5``, against :func:`attnlib.rms_norm`.

    The inputs: a hand-sized row, random rows, rows with a mean far from 0 (where
    subtracting the mean shows), rows of small numbers (where eps shows) and a batch.
    Diagnosed slips: the mean subtracted (layer norm), no square root, eps outside the
    root or left out, no gain, one mean square for the whole array, the standard
    deviation as denominator.

    Source: Zhang & Sennrich (2019), eq. (4).
    """
    return check_function(
        fn, _rms_reference, _rms_cases(), atol=1e-8, slips=_rms_slips()
    )


# ---- SwiGLU ---------------------------------------------------------------------


def _swiglu_slips():
    def swapped(x, W_1, W_3, W_2):
        return (x @ W_1 * _silu(x @ W_3)) @ W_2

    def sigmoid_gate(x, W_1, W_3, W_2):
        return (_sigmoid(x @ W_1) * (x @ W_3)) @ W_2

    def ungated(x, W_1, W_3, W_2):
        return _silu(x @ W_1) @ W_2

    def relu_gate(x, W_1, W_3, W_2):
        return (_relu(x @ W_1) * (x @ W_3)) @ W_2

    def silu_of_product(x, W_1, W_3, W_2):
        return _silu(x @ W_1 * (x @ W_3)) @ W_2

    def gelu_gate(x, W_1, W_3, W_2):  # GEGLU, GPT-2's activation kept
        return (_gelu(x @ W_1) * (x @ W_3)) @ W_2

    def silu_both(x, W_1, W_3, W_2):
        return (_silu(x @ W_1) * _silu(x @ W_3)) @ W_2

    return [
        (
            swapped,
            "the gate is on the wrong branch: SiLU goes on x W_1 (the gate), and "
            "x W_3 (the value) enters unchanged: (SiLU(x W_1) * x W_3) W_2.",
        ),
        (
            sigmoid_gate,
            "you gate with sigmoid(x W_1): that is the original GLU. SwiGLU's gate "
            "is SiLU(x W_1) = x W_1 * sigmoid(x W_1).",
        ),
        (
            ungated,
            "there is no gate: multiply SiLU(x W_1) by the second branch x W_3, "
            "element by element, before W_2.",
        ),
        (relu_gate, "the gate's activation is SiLU, z * sigmoid(z), not ReLU."),
        (
            silu_of_product,
            "SiLU goes on the gate x W_1 alone, before the product with x W_3.",
        ),
        (
            gelu_gate,
            "you gate with GELU (that variant is GEGLU); SwiGLU's gate is "
            "SiLU(z) = z * sigmoid(z).",
        ),
        (
            silu_both,
            "SiLU goes on the gate x W_1 only; the value x W_3 enters unchanged.",
        ),
    ]


def _swiglu_cases():
    rng = np.random.default_rng(12)
    d, d_ff = 4, 6

    def weights():
        return (
            rng.normal(size=(d, d_ff)),
            rng.normal(size=(d, d_ff)),
            rng.normal(size=(d_ff, d)),
        )

    return [
        ("one position, d = 4, d_ff = 6", (rng.normal(size=(1, d)), *weights()), None),
        ("5 positions", (rng.normal(size=(5, d)), *weights()), None),
        (
            "a batch of 2 x 3 positions",
            (rng.normal(size=(2, 3, d)), *weights()),
            "the network acts on the last axis only: x @ W works for any leading axes.",
        ),
    ]


@checker("your function", answers=("fn",))
def check_swiglu(fn) -> bool:
    """Check the reader's SwiGLU ``fn(x, W_1, W_3, W_2)``, ``(SiLU(x W_1) * x W_3)
    W_2`` without biases, against :func:`attnlib.swiglu` on three inputs.

    Diagnosed slips: the SiLU on the value branch ``x W_3`` instead of the gate, a
    sigmoid gate (GLU), no gate at all, a ReLU gate, SiLU applied after the product,
    a GELU gate (GEGLU), SiLU on both branches.

    Source: Shazeer (2020), equation (6).
    """
    return check_function(
        fn, _swiglu, _swiglu_cases(), atol=1e-8, slips=_swiglu_slips()
    )


# ---- rotary attention after a cache ---------------------------------------------


def _cached_reference(q, k_cache, v_cache, start):
    """Rotate the new queries at positions start .. start + L - 1 and attend the cached
    (already rotated) keys under the causal mask aligned at the end."""
    positions = np.arange(start, start + q.shape[-2])
    q_rot = _rotary(q, positions)
    mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="end")
    return _attention(q_rot, k_cache, v_cache, mask)[0]


def _cached_slips():
    def from_zero(q, k_cache, v_cache, start):
        mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="end")
        return _attention(_rotary(q), k_cache, v_cache, mask)[0]

    def unrotated(q, k_cache, v_cache, start):
        mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="end")
        return _attention(q, k_cache, v_cache, mask)[0]

    def backwards(q, k_cache, v_cache, start):
        positions = -np.arange(start, start + q.shape[-2])
        mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="end")
        return _attention(_rotary(q, positions), k_cache, v_cache, mask)[0]

    def mask_at_start(q, k_cache, v_cache, start):
        positions = np.arange(start, start + q.shape[-2])
        mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="start")
        return _attention(_rotary(q, positions), k_cache, v_cache, mask)[0]

    def no_mask(q, k_cache, v_cache, start):
        positions = np.arange(start, start + q.shape[-2])
        return _attention(_rotary(q, positions), k_cache, v_cache)[0]

    def one_late(q, k_cache, v_cache, start):
        positions = np.arange(start + 1, start + 1 + q.shape[-2])
        mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="end")
        return _attention(_rotary(q, positions), k_cache, v_cache, mask)[0]

    def rotated_keys_again(q, k_cache, v_cache, start):
        positions = np.arange(start, start + q.shape[-2])
        mask = _causal_mask(q.shape[-2], k_cache.shape[-2], align="end")
        k = _rotary(k_cache)  # a second rotation of keys already rotated
        return _attention(_rotary(q, positions), k, v_cache, mask)[0]

    return [
        (
            from_zero,
            "you rotate the new queries as if they sat at positions 0, 1, ...; they "
            "sit after the cache, at start, start + 1, ... (rotary_embedding(q, "
            "positions)).",
        ),
        (
            unrotated,
            # the first case has start = 0: rotating every query at `start`
            # leaves all of them unrotated, so this catches that slip too
            "your new queries come out unrotated (here start = 0, so rotating all of "
            "them at `start` turns none): rotate each at its own position start, "
            "start + 1, ...",
        ),
        (
            backwards,
            "you rotate by minus the position; the keys were rotated by +position, "
            "so the query must be too.",
        ),
        (
            mask_at_start,
            "the mask is aligned at the start; the new queries are the last rows of "
            "the sequence: causal_mask(L_new, L_k, align='end').",
        ),
        (
            no_mask,
            "without a mask, the new queries read keys after their own position "
            "(when several new queries come at once): causal_mask(L_new, L_k, "
            "align='end').",
        ),
        (
            one_late,
            "your positions are one too far: the cache holds positions 0 .. start - 1, "
            "so the first new query sits at position start (np.arange(start, start + "
            "L_new)).",
        ),
        (
            rotated_keys_again,
            "the cached keys are already rotated (a cache keeps them that way); "
            "rotate only the new queries.",
        ),
    ]


def _cached_cases():
    rng = np.random.default_rng(13)
    d_k, cases = 8, []
    for start, new, hint in (
        (0, 3, "with an empty cache (start = 0) this is plain rotary self-attention."),
        (5, 1, "one new query at position start, after a cache of start keys."),
        (
            9,
            3,
            "several new queries at once: each must see only keys up to its own "
            "position.",
        ),
    ):
        L = start + new
        keys = _rotary(rng.normal(size=(L, d_k)))  # (L, d_k), rotated at 0 .. L - 1
        cases.append(
            (
                f"{new} new quer{'y' if new == 1 else 'ies'} after a cache of "
                f"{start} positions",
                (rng.normal(size=(new, d_k)), keys, rng.normal(size=(L, d_k)), start),
                hint,
            )
        )
    return cases


@checker("your function", answers=("fn",))
def check_rotary_cached(fn) -> bool:
    """Check the reader's ``fn(q, k_cache, v_cache, start)``: the outputs of new
    queries ``q`` (L_new, d_k), not yet rotated, at positions ``start .. start + L_new
    - 1``, attending keys ``k_cache`` (L_k, d_k) that were rotated at positions ``0 ..
    L_k - 1`` and their values ``v_cache``, with ``L_k = start + L_new``, under the
    causal mask. The reference rotates the queries with :func:`attnlib.rotary_embedding`
    at their positions and calls :func:`attnlib.attention` with
    ``causal_mask(L_new, L_k, align="end")``.

    Diagnosed slips: queries rotated from position 0 (the cache offset forgotten),
    queries not rotated, rotated by minus the position, positions one too far, the mask
    aligned at the start, no mask, the cached keys rotated a second time.

    Source: Su et al. (2021), section 3.4; the KV cache of the chapter "The KV cache".
    """
    return check_function(
        fn, _cached_reference, _cached_cases(), atol=1e-8, slips=_cached_slips()
    )
