"""Checkers for the exercises of the chapter "From attention to a Transformer layer".

* :func:`check_layer_shapes`       the shapes along one encoder layer
* :func:`check_layer_norm`         the reader's own layer normalisation
* :func:`check_parameter_count`    how many learned numbers one encoder layer holds
* :func:`check_crossover`          the length at which self-attention and a recurrent
                                   layer cost the same (Vaswani et al. 2017, table 1)

Expected answers come from attnlib (:func:`attnlib.layers.encoder_layer.encoder_layer`,
:func:`attnlib.layers.layer_norm.layer_norm`,
:func:`attnlib.layers.encoder_layer.init_encoder_layer`); source: Vaswani et al. (2017),
sections 3.1-3.3 and 4.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from attnlib.layers.encoder_layer import encoder_layer, init_encoder_layer
from attnlib.layers.layer_norm import layer_norm
from book_support.exercises import (
    Unanswered,
    as_floats,
    as_shape,
    check_labelled_cases,
    check_shape_dict,
    checker,
    heads_after_positions_hint,
    reveal,
)

#: The names :func:`check_layer_shapes` expects, in the order of the computation.
LAYER_SHAPE_NAMES = ("X", "Q_heads", "weights", "attended", "h", "ff_hidden", "output")


@checker("a dict of shapes")
def check_layer_shapes(
    answer, *, batch: int, length: int, d_model: int, num_heads: int, d_ff: int
) -> bool:
    """Check the shapes along one encoder layer, computed with :func:`encoder_layer`.

    Parameters
    ----------
    answer : dict mapping each of :data:`LAYER_SHAPE_NAMES` to a tuple of ints (``None``
        = not answered yet): ``X`` the input, ``Q_heads`` the queries cut into heads,
        ``weights``, ``attended`` (after ``W_O``), ``h`` (after the first add & norm),
        ``ff_hidden`` (inside the feed-forward network) and ``output``.
    batch, length, d_model, num_heads, d_ff : int

    Returns
    -------
    bool

    Raises
    ------
    WrongKind (reported as a sentence by :func:`checker`) if ``answer`` is not a dict
    of shapes (nor the placeholder).
    """
    if answer is None:  # None as well as ... means "not answered yet"
        raise Unanswered()
    params = init_encoder_layer(0, d_model, num_heads, d_ff)
    X = np.random.default_rng(1).normal(size=(batch, length, d_model))
    _, _, steps = encoder_layer(X, params, return_intermediates=True)
    arrays = {
        "X": X,
        "Q_heads": steps["q"],
        **{k: steps[k] for k in LAYER_SHAPE_NAMES[2:]},
    }
    expected = {name: tuple(arrays[name].shape) for name in LAYER_SHAPE_NAMES}
    ok = check_shape_dict(
        answer,
        expected,
        what="check_layer_shapes",
        context=f"batch={batch}, length={length}, d_model={d_model}, "
        f"num_heads={num_heads}, d_ff={d_ff}",
    )
    given = {}
    for name in LAYER_SHAPE_NAMES:
        if name in answer:  # check_shape_dict has read every shape already
            given[name] = as_shape(answer[name], name)
    if (
        not ok
        and len(given) == len(expected)
        and all(given[name] == want[1:] for name, want in expected.items())
    ):
        print(
            f"Hint: every array keeps the batch axis first: the {batch} sentences "
            f"stay apart through the whole layer, so X is {expected['X']}, not "
            f"{expected['X'][1:]}."
        )
        return ok
    if not ok:
        heads_after_positions_hint(answer, expected)
        for name, hint in _layer_shape_slips(
            batch, length, d_model, num_heads, d_ff
        ).items():
            if name in given and given[name] != expected[name]:
                for wrong, words in hint:
                    if given[name] == wrong:
                        print(f"Hint: {name}: {words}")
                        break
    return ok


def _layer_shape_slips(batch, length, d_model, num_heads, d_ff) -> dict:
    """For each name of :data:`LAYER_SHAPE_NAMES`, the wrong shapes a learner most
    likely writes and what each one misses: {name: [(wrong shape, hint), ...]}."""
    d_k = d_model // num_heads
    before_split = (
        "that is Q before split_heads; cutting d_model into heads gives each head "
        "its own d_model / num_heads columns, with a heads axis after the batch."
    )
    return {
        "Q_heads": [
            ((batch, length, d_model), before_split),
            (
                (batch, num_heads, length, d_model),
                "each head gets d_model / num_heads columns, not all d_model of them: "
                "split_heads cuts the columns of Q into heads, it does not copy them.",
            ),
            (
                (batch, length, d_k),
                "one head's block has d_k columns, but Q_heads holds every head: "
                "keep a heads axis after the batch axis.",
            ),
        ],
        "weights": [
            (
                (batch, length, length),
                "every head computes its own weights, so the heads axis stays: "
                "(batch, heads, queries, keys).",
            ),
            (
                (batch, num_heads, length, d_k),
                "the weights compare every query with every key, so their last two "
                "axes are positions (queries, keys), not d_k.",
            ),
        ],
        "attended": [
            (
                (batch, num_heads, length, d_k),
                "attended is taken after W_O: the heads are merged back into rows of "
                "d_model numbers and projected, so the heads axis is gone.",
            ),
            (
                (batch, length, d_k),
                "attended is taken after W_O: the heads are merged back into rows of "
                "d_model numbers, not d_k.",
            ),
        ],
        "h": [
            (
                (batch, length, d_ff),
                "h is the output of the first add & norm, before the feed-forward "
                "network: each row has the width d, as in X (d_model in the call).",
            ),
        ],
        "ff_hidden": [
            (
                (batch, length, d_model),
                "inside the feed-forward network the first linear map widens each "
                "row to d_ff numbers; only the second brings it back to d_model.",
            ),
        ],
        "output": [
            (
                (batch, length, d_ff),
                "the second linear map of the feed-forward network brings each row "
                "back to d_model, so that it can be added to h (the second residual "
                "connection) and the layer's output has X's shape.",
            ),
        ],
    }


def _norm_cases():
    rng = np.random.default_rng(3)
    return [
        (
            "one row [1, 2, 3, 6], gain 1, bias 0",
            (np.array([[1.0, 2.0, 3.0, 6.0]]), np.ones(4), np.zeros(4), 1e-5),
            "subtract the row's mean, divide by sqrt(variance + eps).",
        ),
        (
            "a row with a tiny variance [0, 0.001], eps = 1e-5",
            (np.array([[0.0, 1e-3]]), np.ones(2), np.zeros(2), 1e-5),
            "eps goes inside the square root: divide by sqrt(variance + eps).",
        ),
        (
            "3 rows of 5, random gain and bias",
            (
                rng.normal(2, 3, size=(3, 5)),
                rng.normal(size=5),
                rng.normal(size=5),
                1e-5,
            ),
            "normalise each row (each position) on its own, over its last axis, "
            "then multiply by the gain and add the bias; keepdims=True keeps the "
            "row statistics as (..., 1), so that x - mean broadcasts over each row.",
        ),
        (
            "a batch (2, 4, 6)",
            (rng.normal(size=(2, 4, 6)), np.ones(6), np.zeros(6), 1e-5),
            "the statistics are taken over the last axis only.",
        ),
        (
            "a constant row",
            (np.full((1, 4), 7.0), np.ones(4), np.full(4, 0.5), 1e-5),
            "with eps > 0 a constant row gives the bias, not NaN.",
        ),
    ]


def _normalised(x, eps, *, axis=-1, ddof=0, eps_outside=False):
    """``(x - mean) / sqrt(var + eps)`` with the statistics of ``axis``; a slip's
    knobs."""
    x = np.asarray(x, dtype=float)
    mean = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, ddof=ddof, keepdims=True)
    return (x - mean) / (np.sqrt(var) + eps if eps_outside else np.sqrt(var + eps))


#: Typical slips of a home-made layer normalisation and their diagnosis. Each one
#: shows on at least one case of ``_norm_cases`` (the tests prove it).
LAYER_NORM_SLIPS = (
    (
        lambda x, g, b, eps: _normalised(x, eps, eps_outside=True) * g + b,
        "you divide by sqrt(variance) + eps; eps goes inside the square root, "
        "sqrt(variance + eps). The two differ where the variance is small: on "
        "[0, 0.001] they give 0.9804 and 0.1562.",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps, ddof=1) * g + b,
        "you use the sample variance (divided by d - 1, np.var's ddof=1); layer "
        "normalisation divides by d, the number of features.",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps, axis=None) * g + b,
        "you take one mean and variance over the whole array; each row (each "
        "position) needs its own, over the last axis (keepdims=True).",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps, axis=0) * g + b,
        "you take the statistics over the first axis (across positions); take them "
        "over the last axis, the features of one position.",
    ),
    (
        lambda x, g, b, eps: _normalised(x, 0.0) * g + b,
        "you leave out eps; add it to the variance inside the square root (without "
        "it a row of tiny variance is blown up to -1 and 1, and a constant row "
        "divides 0 by 0).",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps) * b + g,
        "gain and bias are swapped: multiply by the gain, then add the bias.",
    ),
    (
        lambda x, g, b, eps: (_normalised(x, eps) + b) * g,
        "you add the bias before multiplying by the gain; the bias comes last: "
        "gain * x_hat + bias.",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps),
        "you return the normalised rows x_hat without the learned gain and bias; "
        "apply them after normalising: gain * x_hat + bias.",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps) * g,
        "you multiply by the gain but leave out the bias: gain * x_hat + bias.",
    ),
    (
        lambda x, g, b, eps: _normalised(x, eps) + b,
        "you add the bias but leave out the gain: gain * x_hat + bias.",
    ),
)


@checker("your layer normalisation")
def check_layer_norm(fn) -> bool:
    """Compare the reader's ``fn(x, gain, bias, eps)`` with
    :func:`attnlib.layers.layer_norm.layer_norm`.

    The cases include a row of tiny variance (``[0, 0.001]``), where dividing by
    ``sqrt(var) + eps`` instead of ``sqrt(var + eps)`` shows (0.9804 instead of
    0.1562), a batch, random gains and biases, and a constant row (where forgetting
    eps gives NaN). The typical slips (:data:`LAYER_NORM_SLIPS`) are named when the
    reader's function matches one.

    Returns
    -------
    bool, True when every case matches (within 1e-6); otherwise the first failing input
    is named, with a hint.
    """
    ok = check_labelled_cases(
        fn, layer_norm, _norm_cases(), name="your layer_norm", slips=LAYER_NORM_SLIPS
    )
    if ok:
        print(
            f"Correct: your layer_norm matches attnlib on all {len(_norm_cases())} "
            "inputs."
        )
    return ok


def _whole(value: float) -> str:
    """A count written in full (3,152,384); a non-whole number with its decimals."""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,.4f}"


def _check_count(answer, expected: int, *, name: str, slips=(), hint=None) -> bool:
    """Compare a whole-number answer with ``expected`` (within 0.5) and say what is
    wrong.

    ``slips`` is a sequence of ``(wrong_value, hints)``: when the answer is within 0.5
    of ``wrong_value``, each of ``hints`` is printed; otherwise ``hint`` is, if given.
    The numbers are written in full, never rounded to a few significant digits.

    Raises
    ------
    WrongKind if ``answer`` is not one real number (reported by :func:`checker`).
    """
    got = float(as_floats(answer, name, shape=()))
    if not math.isfinite(got):
        print(f"Not yet: {name} is {got}; give a whole number.")
        return False
    if abs(got - expected) <= 0.5:
        print(f"Correct: {name} = {_whole(round(got))}.")
        return True
    print(f"Not yet: {name} is {_whole(got)}, which is not the answer.")
    found = [h for value, hints in slips if abs(got - value) <= 0.5 for h in hints]
    for line in found or ([hint] if hint else []):
        print(f"Hint: {line}")
    reveal(np.asarray(float(expected)), name="the answer")
    return False


@checker("a whole number")
def check_parameter_count(answer, *, d_model: int, d_ff: int) -> bool:
    """Count the learned numbers of one encoder layer with biases (BERT/MiniLM style).

    Parameters
    ----------
    answer : a whole number, int or float (``None`` = not answered yet)
    d_model, d_ff : int

    Returns
    -------
    bool; the expected count is the total size of the arrays of
    :func:`attnlib.layers.encoder_layer.init_encoder_layer`. The count without the
    layer norms, without the biases, without both, and the feed-forward network's
    count alone are diagnosed.

    Raises
    ------
    WrongKind (reported as a sentence) if ``answer`` is not one real number.
    """
    if answer is None:  # None as well as ... means "not answered yet"
        raise Unanswered()
    p = init_encoder_layer(0, d_model, 1 if d_model % 2 else 2, d_ff)
    count = sum(
        np.size(getattr(p.attn, f.name))
        for f in dataclasses.fields(p.attn)
        if isinstance(getattr(p.attn, f.name), np.ndarray)
    )
    count += sum(
        np.size(getattr(p, f.name))
        for f in dataclasses.fields(p)
        if isinstance(getattr(p, f.name), np.ndarray)
    )
    norms = 4 * d_model  # two layer norms, a gain and a bias of d_model each
    biases = 5 * d_model + d_ff  # b_Q, b_K, b_V, b_O, b_2 (d_model each) and b_1
    ln_hint = (
        "you are 4 x d_model short: that many numbers are the two layer norms' gains "
        "and biases (d_model each), and as many again the biases of the four "
        "attention projections; this layer has both."
    )
    bias_hint = "every projection here has a bias vector as well as its matrix."
    ffn = 2 * d_model * d_ff + d_ff + d_model
    return _check_count(
        answer,
        int(count),
        name="your count",
        slips=[
            (count - norms, [ln_hint]),
            (count - biases, [bias_hint]),
            (
                count - norms - biases,
                [
                    "the two layer norms have a gain and a bias each, d_model "
                    "numbers apiece.",
                    bias_hint,
                ],
            ),
            (
                ffn,
                [
                    "that is the feed-forward network alone; add the attention "
                    "sub-layer's four projections and the two layer norms."
                ],
            ),
        ],
        hint="list the layer's arrays (the four attention projections, the two of "
        "the feed-forward network, every bias, two layer norms) and add up their "
        "sizes.",
    )


@checker("a number of positions")
def check_crossover(answer, *, d: int) -> bool:
    """The sequence length at which a self-attention layer's ``n^2 d`` operations equal
    a recurrent layer's ``n d^2`` (Vaswani et al. 2017, table 1): ``n = d``.

    ``d - 1`` (within 0.5), the largest length with strictly less work for
    self-attention, is diagnosed as such (the exercise asks where the two costs are
    equal); any other wrong length is told to set the two costs equal.

    Parameters
    ----------
    answer : number (``None`` = not answered yet);  d : int, the representation width

    Returns
    -------
    bool

    Raises
    ------
    WrongKind (reported as a sentence) if ``answer`` is not one real number.
    """
    if answer is None:  # None as well as ... means "not answered yet"
        raise Unanswered()
    ok = _check_count(
        answer,
        d,
        name="your crossover length",
        slips=[
            (
                d - 1,
                [
                    "the two costs are equal where n^2 d = n d^2; the largest n with "
                    f"strictly less work, {d - 1}, is one below that length."
                ],
            )
        ],
        hint="set the two costs equal, n^2 d = n d^2, and solve for n > 0.",
    )
    if ok:
        print(
            f"At {d} positions the two layers do the same work; below it "
            "self-attention does less, above it more."
        )
    return ok
