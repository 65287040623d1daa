"""Checkers for the exercises of the learning primer ("How a model learns").

* :func:`check_one_step`     one step of gradient descent worked out by hand
* :func:`check_gradient_w`   the reader's own gradient of the cross-entropy loss
* :func:`check_retraining`   predict, then measure, a smaller learning rate's effect
* :func:`check_retrained_losses`  compare the smaller rate's best validation losses
                                  with the spread of the chapter's five seeds

Expected answers come from :mod:`attnlib.models.linear_classifier` on the data of
:mod:`attnlib.data.learning_task`. Every checker takes ``show_answer=True`` (see
:mod:`book_support.exercises`).
"""

from __future__ import annotations

import functools

import numpy as np

from attnlib.data.learning_task import make_split
from attnlib.models import linear_classifier as lc
from book_support.exercises import (
    WrongKind,
    as_floats,
    check_close,
    check_function,
    checker,
    shown,
)

#: The primer's learning rate and the smaller one of the retraining exercise.
PRIMER_LEARNING_RATE = 0.1
SMALLER_LEARNING_RATE = 0.01
#: Seeds of the retraining exercise, and of the chapter's table of runs at the primer's
#: learning rate (the first three are the same runs).
RETRAIN_SEEDS = (0, 1, 2)
TABLE_SEEDS = (0, 1, 2, 3, 4)


def one_step(x, y, w, b, learning_rate):
    """One gradient descent step of the one-feature model ``p = sigmoid(w x + b)`` on
    one example: returns the new ``[w, b]``.

    Raises TypeError naming the argument that is not a number."""
    values = dict(x=x, y=y, w=w, b=b, learning_rate=learning_rate)
    for name, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.number)):
            raise TypeError(f"{name} must be a number; got {value!r}")
    p = float(lc.sigmoid(w * x + b))
    return [w - learning_rate * (p - y) * x, b - learning_rate * (p - y)]


@checker("the new [w, b] after one step")
def check_one_step(answer, *, x, y, w, b, learning_rate, atol: float = 1e-3) -> bool:
    """Check one step of gradient descent on one example, by hand.

    Parameters
    ----------
    answer : two numbers, the reader's ``[w, b]`` after the step
    x, y : the example (a number, and its label 0 or 1)
    w, b, learning_rate : the parameters before the step, and the step size

    Returns
    -------
    bool. Diagnosed slips: a step *with* the gradient (sign), a step without the
    learning rate, and ``dL/dw`` without the factor ``x``.
    """
    got = as_floats(answer, "your [w, b]", shape=(2,))
    want = one_step(x, y, w, b, learning_rate)
    p = float(lc.sigmoid(w * x + b))
    g = p - y
    slips = [
        (
            [w + learning_rate * g * x, b + learning_rate * g],
            "you moved the parameters *with* the gradient; gradient descent subtracts "
            "it (the loss grows in the gradient's direction).",
        ),
        (
            [w - g * x, b - g],
            "you subtracted the whole gradient; multiply it by the learning rate "
            "first.",
        ),
        (
            [w - learning_rate * g, b - learning_rate * g],
            "dL/dw is (p - y) times x, by the chain rule through the logit w x + b; "
            "you left out the factor x.",
        ),
    ]
    return check_close(got, want, name="your [w, b]", atol=atol, slips=slips)


def _cases():
    rng = np.random.default_rng(7)
    out = []
    for n, d in ((5, 3), (12, 4), (1, 2)):
        X = rng.normal(size=(n, d))  # (n, d)
        y = (rng.random(n) < 0.5).astype(float)  # (n,)
        w = rng.normal(size=d)  # (d,)
        out.append((w, float(rng.normal()), X, y))
    return out


def _reference(w, b, X, y):
    return lc.gradient(lc.Params(np.asarray(w, float), float(b)), X, y).w


@checker("your function", answers=("fn",))
def check_gradient_w(fn) -> bool:
    """Check the reader's ``fn(w, b, X, y)`` -> ``dL/dw`` (shape (d,)) for the mean
    cross-entropy of :func:`attnlib.models.linear_classifier.loss`, on three inputs.

    Diagnosed slips: the sum over examples instead of the mean, and ``y - p`` instead
    of ``p - y``; a result of the wrong shape is reported with its shape.
    """

    def summed(w, b, X, y):
        return len(y) * _reference(w, b, X, y)

    def flipped(w, b, X, y):
        return -_reference(w, b, X, y)

    return check_function(
        fn,
        _reference,
        _cases(),
        atol=1e-8,
        slips=[
            (
                summed,
                "you summed over the examples; the loss is a mean, so divide by n.",
            ),
            (
                flipped,
                "your gradient has the wrong sign: dL/dz is p - y (the prediction "
                "minus the label), not y - p.",
            ),
        ],
    )


@functools.lru_cache(maxsize=4)
def _runs(learning_rate: float, seeds: tuple = RETRAIN_SEEDS) -> tuple:
    """(best step, best validation loss, last validation loss) of each seed's run at
    ``learning_rate``."""
    split = make_split()
    runs = (lc.train(*split, learning_rate=learning_rate, seed=s) for s in seeds)
    return tuple(
        (r.best_step, float(r.val_loss.min()), float(r.val_loss[-1])) for r in runs
    )


def _retrain_runs(learning_rate: float) -> tuple:
    """:func:`_runs` for :data:`RETRAIN_SEEDS`; at the primer's rate, the first of the
    table's runs, so that each run is trained once."""
    if learning_rate == PRIMER_LEARNING_RATE:
        return _runs(learning_rate, TABLE_SEEDS)[: len(RETRAIN_SEEDS)]
    return _runs(learning_rate)


def _best_steps(learning_rate: float) -> tuple:
    return tuple(step for step, _, _ in _retrain_runs(learning_rate))


_DIRECTIONS = ("earlier", "about the same", "later")


@checker("your prediction and your measurement", answers=("prediction", "mean_best"))
def check_retraining(prediction, mean_best) -> bool:
    """The retraining exercise: learning rate 0.01 instead of 0.1.

    Parameters
    ----------
    prediction : str, made before training: does the best validation step come
        "earlier", "about the same" or "later"?
    mean_best : number, the measured mean of ``best_step`` over seeds 0, 1, 2 at
        learning rate 0.01 (``attnlib.models.linear_classifier.train`` on
        ``attnlib.data.learning_task.make_split()``)

    The checker trains the same runs itself (a few seconds). Diagnosed slips: the mean
    best step at the primer's own learning rate 0.1 (the hyper-parameter not changed),
    and the mean of ``stopped_at`` (where training stopped, ``patience * eval_every``
    steps after the best one).
    """
    if not isinstance(prediction, str) or prediction.strip().lower() not in _DIRECTIONS:
        raise WrongKind(
            "the prediction should be one of the texts "
            + ", ".join(repr(d) for d in _DIRECTIONS)
            + f"; got {shown(prediction)}."
        )
    small = np.mean(_best_steps(SMALLER_LEARNING_RATE))
    usual = np.mean(_best_steps(PRIMER_LEARNING_RATE))
    stop_offset = 10 * 20  # the default patience times eval_every of train()
    measured = check_close(
        mean_best,
        small,
        name="your mean best step",
        atol=0.5,
        slips=[
            (
                usual,
                "that is the mean best step at the chapter's learning rate 0.1; pass "
                "learning_rate=0.01 to train().",
            ),
            (
                small + stop_offset,
                "that is where training stopped (stopped_at); the best step, where the "
                "validation loss was lowest, came patience x eval_every = 200 steps "
                "earlier.",
            ),
        ],
    )
    guessed = prediction.strip().lower()
    truth = (
        "later"
        if small > 1.5 * usual
        else "earlier"
        if small < usual / 1.5
        else ("about the same")
    )
    if guessed == truth:
        print("Your prediction was right.")
    else:
        print(
            f"Your prediction ({guessed!r}) was not what happened. Each step moves the "
            "parameters by the learning rate times the gradient: ten times smaller "
            "steps need about ten times as many of them to reach the same place."
        )
    return measured


_VERDICTS = ("better", "about the same", "worse")


@checker(
    "your three best validation losses and your verdict",
    answers=("best_losses", "verdict"),
)
def check_retrained_losses(best_losses, verdict) -> bool:
    """The comparison of the retraining exercise: did learning rate 0.01 find a better
    model than the chapter's 0.1?

    Parameters
    ----------
    best_losses : three numbers, the lowest validation loss (``run.val_loss.min()``)
        of the runs at learning rate 0.01 for seeds 0, 1, 2
    verdict : str, "better", "about the same" or "worse"

    The checker trains the runs itself (cached with :func:`check_retraining`'s). The
    verdict is judged by the chapter's rule: the mean at 0.01 differs from the mean of
    the chapter's five seeds at 0.1 by no more than their spread (max - min) when the
    two are "about the same". Diagnosed slips: the losses of the runs at 0.1 (the rate
    not changed, or the table's three-decimal losses copied), the last validation loss
    instead of the lowest, and a difference smaller than the spread read as "better" or
    "worse". The verdict is judged only once the losses are right.
    """
    if not isinstance(verdict, str) or verdict.strip().lower() not in _VERDICTS:
        raise WrongKind(
            "the verdict should be one of the texts "
            + ", ".join(repr(v) for v in _VERDICTS)
            + f"; got {shown(verdict)}."
        )
    small = np.array([best for _, best, _ in _runs(SMALLER_LEARNING_RATE)])  # (3,)
    last = np.array([last for _, _, last in _runs(SMALLER_LEARNING_RATE)])  # (3,)
    table = np.array(
        [best for _, best, _ in _runs(PRIMER_LEARNING_RATE, TABLE_SEEDS)]
    )  # (5,)
    usual = table[: len(RETRAIN_SEEDS)]  # (3,), seeds 0, 1, 2 at 0.1
    got = as_floats(best_losses, "your best validation losses", shape=(3,))
    # the slips lie within 6e-4 of the answers: the losses are asked for unrounded
    tol = 1e-4
    slips = [
        (
            usual,
            "these are the best losses at the chapter's learning rate 0.1; retrain "
            "with learning_rate=0.01.",
        ),
        (
            last,
            "these are the last validation losses, where training stopped; the best "
            "is the lowest, run.val_loss.min().",
        ),
    ]
    if not np.allclose(np.round(usual, 3), np.round(small, 3), atol=tol, rtol=0):
        # copied from the table, which prints three decimals; told apart from the
        # right losses rounded as far (those get check_close's rounding hint)
        slips.append(
            (
                np.round(usual, 3),
                "these are the losses of seeds 0, 1 and 2 in the table above, at the "
                "chapter's learning rate 0.1 and rounded as it prints them; retrain "
                "with learning_rate=0.01 and give run.val_loss.min() of each run, "
                "unrounded.",
            )
        )
    # the losses of all these runs lie within 1% of one another: the slips are matched
    # to the tolerance of the answer itself, before check_close's looser matching
    for wrong, why in slips:
        if not np.allclose(got, small, atol=tol, rtol=0) and np.allclose(
            got, wrong, atol=tol, rtol=0
        ):
            print("Not yet: your best validation losses are not those at 0.01.")
            print(f"Hint: {why}")
            measured = False
            break
    else:
        measured = check_close(
            got,
            small,
            name="your best validation losses",
            atol=tol,
            hint="give run.val_loss.min() of each of your three runs at "
            "learning_rate=0.01, seeds 0, 1 and 2, in that order.",
        )
    if not measured:
        print("Get the three losses at 0.01 first; then judge the verdict.")
        return False
    mean, base = float(small.mean()), float(table.mean())
    spread = float(table.max() - table.min())
    if abs(mean - base) <= spread:
        truth = "about the same"
    else:
        truth = "better" if mean < base else "worse"
    compared = (
        f"the mean best loss at 0.01, {mean:.3f}, differs from the mean of the five "
        f"seeds at 0.1, {base:.3f}, by {abs(mean - base):.3f}, "
        + ("less" if truth == "about the same" else "more")
        + f" than their spread of {spread:.3f}"
    )
    guessed = verdict.strip().lower()
    if guessed == truth:
        print(f"Your verdict is right: {compared}.")
    elif truth == "about the same":
        print(
            f"Your verdict ({guessed!r}) reads more into the numbers than they hold: "
            f"{compared}. A difference smaller than the spread between seeds is not "
            "one this experiment can show."
        )
    else:
        print(
            f"Your verdict ({guessed!r}) is not what the runs show: {compared}, so it "
            f"is {truth}."
        )
    return guessed == truth
