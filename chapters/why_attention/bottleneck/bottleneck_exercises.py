"""Checkers for the exercises of the chapter "The bottleneck"
(chapters/why_attention/bottleneck/bottleneck).

Each function computes the expected answer with attnlib, compares it with the reader's,
prints a verdict and returns ``True`` or ``False``; ``show_answer=True`` prints the
expected answer after the diagnosis (see :mod:`book_support.exercises`).
"""

from __future__ import annotations

import numpy as np

from attnlib.models.bottleneck import capacity_bound, decoder_context
from attnlib.models.recurrent import rnn_encode
from book_support.exercises import (
    as_floats,
    check_close,
    check_function,
    checker,
    function_name,
)
from book_support.exercises._answers import PERCENTAGES

#: The small decoder step of the additive-attention exercise (row-vector convention).
DECODER_EXERCISE = {
    "encoder_states": np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]),  # h_1, h_2, h_3
    "decoder_state": np.array([1.0, -1.0]),  # s
    "W_q": np.eye(2),
    "W_k": np.eye(2),
    "w_v": np.array([1.0, 1.0]),
}


def _reference_step(x_t, h_prev, W_x, W_h, b):
    states, _ = rnn_encode(
        np.asarray(x_t, dtype=float)[None, :],
        W_x,
        W_h,
        b,
        h0=np.asarray(h_prev, dtype=float),
    )
    return states[0]


def _step_cases():
    rng = np.random.default_rng(2)
    cases = [
        # m = 1, h = 1: h_1 = tanh(1 * 1 + 0 * 0.5 + 0) = tanh(1)
        (
            np.array([1.0]),
            np.array([0.0]),
            np.array([[1.0]]),
            np.array([[0.5]]),
            np.array([0.0]),
        ),
        # the previous state matters: tanh(0 + 0.8 * 0.5 + 0.1)
        (
            np.array([0.0]),
            np.array([0.8]),
            np.array([[1.0]]),
            np.array([[0.5]]),
            np.array([0.1]),
        ),
    ]
    for m, h in ((2, 3), (3, 4)):
        cases.append(
            (
                rng.standard_normal(m),
                rng.uniform(-1, 1, h),
                rng.standard_normal((m, h)),
                rng.standard_normal((h, h)) * 0.5,
                rng.standard_normal(h) * 0.1,
            )
        )
    return cases


def _transposed_step(x_t, h_prev, W_x, W_h, b):
    return np.tanh(x_t @ W_x + np.asarray(W_h) @ h_prev + b)


@checker("your rnn_step function")
def check_rnn_step(fn) -> bool:
    """Check the reader's ``fn(x_t, h_prev, W_x, W_h, b)`` for one step of a tanh RNN.

    Expected: ``tanh(x_t @ W_x + h_prev @ W_h + b)``, shape (h,), on four cases
    including non-square ``W_x`` (a transposed weight shows up there).
    """
    return check_function(
        fn,
        _reference_step,
        _step_cases(),
        name=function_name(fn, "rnn_step"),
        slips=(
            (
                _transposed_step,
                "W_h @ h_prev uses the transpose of W_h; with "
                "row vectors write h_prev @ W_h.",
            ),
            (lambda x, h, W_x, W_h, b: x @ W_x + h @ W_h + b, "apply tanh to the sum."),
        ),
    )


@checker("the ceiling, one number between 0 and 1")
def check_capacity_bound(
    answer, *, hidden_size: int = 16, input_size: int = 2, length: int = 40
) -> bool:
    """Check the ceiling on the average R^2 of a linear reader of one final state.

    Expected: ``min(1, hidden_size / (length * input_size))`` (see
    :func:`attnlib.models.bottleneck.capacity_bound`); 0.2 for the default sizes.
    """
    want = capacity_bound(hidden_size, input_size, length)
    got = float(as_floats(answer, "the ceiling", shape=()))
    if abs(got - want) > 1e-3 and abs(got - hidden_size / input_size) < 1e-9:
        print(
            f"Not yet: {got:g} is the number of inputs a state of size {hidden_size} "
            "could hold; "
            f"the question asks for the average R^2 over all {length} positions."
        )
        return False
    return check_close(got, want, name="the ceiling")


def _decoder_scores(tanh: bool = True) -> np.ndarray:
    """The exercise's scores ``tanh(h' W_a + h_j U_a) v_a^T``, shape (3,); with
    ``tanh=False`` the slip that leaves the tanh out."""
    ex = DECODER_EXERCISE
    pre = ex["decoder_state"] @ ex["W_q"] + ex["encoder_states"] @ ex["W_k"]  # (3, 2)
    return (np.tanh(pre) if tanh else pre) @ ex["w_v"]  # (3,)


@checker("the three weights (and the context vector)", answers=("weights", "context"))
def check_decoder_step(weights, context=None) -> bool:
    """Check the attention weights (and optionally the context) of the exercise's
    decoder step.

    The expected values come from :func:`attnlib.models.bottleneck.decoder_context` on
    :data:`DECODER_EXERCISE` (Bahdanau et al. 2015, appendix A.1.2). Weights that do
    not sum to 1 are diagnosed before they are compared: percentages (a sum of 100),
    the scores themselves, or the exponentials not yet divided by their sum; weights
    of scores without the tanh get their own hint. A wrong context is diagnosed when it
    follows from wrong weights, weights the states by the raw scores or their
    exponentials, does not weight them at all, or mixes the vectors inside the score
    instead of the states.
    """
    ex = DECODER_EXERCISE
    ctx, w = decoder_context(
        ex["decoder_state"][None, :],
        ex["encoder_states"],
        ex["W_q"],
        ex["W_k"],
        ex["w_v"],
    )
    scores = _decoder_scores()  # (3,)
    got = as_floats(weights, "the weights", shape=(3,))
    total = got.sum()
    if got.shape == (3,) and np.all(np.isfinite(got)) and abs(total - 1.0) > 1e-2:
        if abs(total - 100.0) < 1.0:
            why = PERCENTAGES[0].upper() + PERCENTAGES[1:]
        elif np.allclose(got, scores, atol=2e-3):
            why = "Did you stop at the scores? Softmax comes next."
        elif np.allclose(got, np.exp(scores), atol=2e-3):
            why = "You exponentiated the scores; now divide each by their sum."
        else:
            why = "After softmax the weights sum to 1."
        print(f"Not yet: your weights sum to {total:.4f}. {why}")
        return False
    no_tanh = _decoder_scores(tanh=False)
    no_tanh = np.exp(no_tanh) / np.exp(no_tanh).sum()  # (3,)
    ok = check_close(
        got,
        w[0],
        name="the weights",
        slips=(
            (
                no_tanh,
                "these are the weights of scores without the tanh; the score is "
                "tanh(h' W_a + h_j U_a) v_a^T.",
            ),
        ),
    )
    if context is not None:
        slips = _context_slips(scores, w[0])
        if not ok and got.shape == (3,) and np.all(np.isfinite(got)):
            # a context right for the reader's own (wrong) weights
            follows = (
                got @ ex["encoder_states"],
                "your context follows from your weights; fix the weights first.",
            )
            slips = (follows, *slips)
        ok = (
            check_close(
                context,
                ctx[0],
                name="the context vector",
                slips=slips,
                hint="the context is c = sum_j alpha_j h_j: multiply each encoder "
                "state by its weight and add the three products.",
            )
            and ok
        )
    return ok


def _context_slips(scores: np.ndarray, weights: np.ndarray) -> tuple:
    """The contexts of typical slips, each (wrong context (2,), hint): the states
    weighted by the raw scores, by the exponentials not yet divided by their sum, not
    weighted at all, or the vectors inside the tanh mixed instead of the states."""
    ex = DECODER_EXERCISE
    H = ex["encoder_states"]  # (3, 2)
    inside = np.tanh(ex["decoder_state"] @ ex["W_q"] + H @ ex["W_k"])  # (3, 2)
    return (
        (
            scores @ H,
            "this context weights the encoder states by the raw scores s_j; the sum "
            "uses the softmax weights alpha_j instead: c = sum_j alpha_j h_j.",
        ),
        (
            np.exp(scores) @ H,
            "this context weights the encoder states by exp(s_j), not yet divided by "
            "their sum; use the weights alpha_j, which sum to 1.",
        ),
        (
            H.sum(axis=0),
            "this is the plain sum of the encoder states; weight each state h_j by "
            "its alpha_j first.",
        ),
        (
            H.mean(axis=0),
            "this is the plain average of the encoder states; weight each state h_j "
            "by its alpha_j instead of by 1/3.",
        ),
        (
            weights @ inside,
            "this mixes the vectors tanh(h' W_a + h_j U_a) from inside the score; "
            "the context mixes the encoder states h_j themselves.",
        ),
    )
