"""Shared by the tests of live code (test_live_node.py, test_live_pages.py).

A cell's outputs as text, to compare what the page's Python prints with the outputs
stored in the notebook. Compared: printed text (stdout) and the plain-text form of
every displayed value (a pandas table's text shows each number to the digits the table
shows), in order, after the same sanitising as nbval (``tests/nbval_sanitize.cfg``). A
figure counts as the word ``<figure>`` (its pixels depend on the renderer's version,
not on the numbers); self-check questions (JavaScript) and widget views are left out,
as in nbval.

And the exercises tried in the page: one wrong answer per chapter (:data:`WRONG`), the
folded solutions, and what the checkers reply to them in CPython.
"""

from __future__ import annotations

import configparser
import contextlib
import io
import os
import re
import sys
from pathlib import Path

import nbformat
from sitepages import REPO

sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "_ext"))
from live_cells import chapter_cells  # noqa: E402
from test_exercises_notebooks import _exercise_cells, _solutions  # noqa: E402

WIDGET = "application/vnd.jupyter.widget-view+json"
SANITIZE = Path(__file__).resolve().parents[1] / "nbval_sanitize.cfg"
CHAPTERS = REPO / "chapters"


def _sanitizers() -> list[tuple[re.Pattern, str]]:
    parser = configparser.ConfigParser()
    parser.read(SANITIZE)
    return [
        (re.compile(parser[s]["regex"]), parser[s]["replace"])
        for s in parser.sections()
    ]


_RULES = _sanitizers()


def _bundle_text(data: dict) -> str | None:
    if "application/javascript" in data or WIDGET in data:
        return None
    if "image/png" in data or "image/svg+xml" in data:
        return "<figure>\n"
    text = data.get("text/plain", "")
    return ("".join(text) if isinstance(text, list) else text) + "\n"


def _clean(text: str) -> str:
    for pattern, replace in _RULES:
        text = pattern.sub(replace, text)
    return text


def stored_text(outputs: list[dict]) -> str:
    """The outputs of a notebook cell (nbformat 4 dicts) as text."""
    parts = []
    for out in outputs:
        if out["output_type"] == "stream" and out["name"] == "stdout":
            parts.append("".join(out["text"]))
        elif out["output_type"] in ("execute_result", "display_data"):
            parts.append(_bundle_text(out["data"]) or "")
        elif out["output_type"] == "error":
            parts.append(f"error: {out['ename']}\n")
    return _clean("".join(parts))


def live_text(messages: list[dict]) -> str:
    """The messages of the page's kernel for one cell (``live_kernel.py``) as text."""
    parts = []
    for message in messages:
        if message["type"] == "stream" and message["name"] == "stdout":
            parts.append(message["text"])
        elif message["type"] in ("display", "result"):
            parts.append(_bundle_text(message["data"]) or "")
        elif message["type"] == "error":
            parts.append(f"error: {message['ename']}\n")
    return _clean("".join(parts))


# One wrong answer per chapter to one of its exercises (the one whose checker it calls).
WRONG = {
    "why_attention/word_in_context/word_in_context": (
        'my_kinds = {"a": "self", "b": "self", "c": "cross", '
        '"d": "self"}\npassed = why_attention.check_attention_kind(my_kinds)'
    ),
    "why_attention/learning/learning": (
        "my_params = [-0.5, -0.25]\npassed = primer.check_one_step("
        "my_params, x=2.0, y=1, w=0.0, b=0.0, learning_rate=0.5)"
    ),
    "why_attention/bottleneck/bottleneck": (
        "my_weights, my_context = [0.2024, 1.5232, 0.0], [0.0, 0.0]\n"
        "ok = check_decoder_step(my_weights, my_context)"
    ),
    "how_attention_works/query_key_value/query_key_value": (
        'my_shapes = {"Q": (5, 4), "K": (5, 4), "V": (5, 6), '
        '"scores": (5, 4), "output": (5, 6)}\n'
        "passed = qkv.check_projection_shapes(my_shapes, n=5, d=8, d_k=4, d_v=6)"
    ),
    "how_attention_works/scoring/scoring": (
        "my_scaled = 24 / 16\n"
        "passed = scoring.check_scaled_score(my_scaled, raw_score=24, d_k=16)"
    ),
    "how_attention_works/softmax/softmax": (
        "my_answer = [0.5, 0.5]\nok = check_weights(my_answer, scores=[1.0, 0.0])"
    ),
    "how_attention_works/values/values": (
        'my_shapes = {"X": (10, 16), "W_Q": (16, 8), "W_K": (16, 8), '
        '"W_V": (16, 4), "Q": (10, 8), "K": (10, 8), "V": (10, 4), "scores": (10, 8), '
        '"weights": (10, 10), "Z": (10, 4)}\n'
        "ok = check_shapes(my_shapes, n=10, d=16, d_k=8, d_v=4)"
    ),
    "how_attention_works/heads/heads": (
        "my_weights = [[1 / 3] * 3] * 3\nok = check_head_weights(my_weights, "
        "three_heads)"
    ),
    "how_attention_works/masks/masks": (
        "def my_causal_mask(n):\n"
        "    return np.arange(n)[None, :] >= np.arange(n)[:, None]\n\n"
        "ok = check_causal_mask(my_causal_mask)"
    ),
    "how_attention_works/order_and_position/order_and_position": (
        "my_entries = [0.8415, 0.4161, 0.0300]\n"
        "ok = check_encoding_entries(my_entries, [(1, 0), (2, 1), (3, 2)], d_model=4)"
    ),
    "attention_in_practice/cost/cost": (
        "my_entries = 2048\nok = check_score_entries(my_entries, n=2048)"
    ),
    "attention_in_practice/learned_and_computed/learned_and_computed": (
        'my_answers = {"W_Q": "learned", "W_K": "learned", "W_V": "learned", '
        '"W_out": "learned", "b_out": "learned", "scores": "learned", '
        '"attention weights": "computed", "attention output": "computed", '
        '"0.6652": "computed"}\nok = check_learned_or_computed(my_answers)'
    ),
    "attention_in_practice/transformer_layer/transformer_layer": (
        'my_shapes = {"X": (2, 10, 12), "Q_heads": (2, 3, 10, 4), '
        '"weights": (2, 10, 10), "attended": (2, 10, 12), "h": (2, 10, 12), '
        '"ff_hidden": (2, 10, 48), "output": (2, 10, 12)}\nok = check_layer_shapes('
        "my_shapes, batch=2, length=10, d_model=12, num_heads=3, d_ff=48)"
    ),
    "attention_in_practice/why_self_attention/why_self_attention": (
        "my_n = 511\nok = check_crossover(my_n, d=512)"
    ),
    "attention_that_writes/language_model/language_model": (
        "def my_sample(logits, temperature, top_k, rng):\n"
        "    if temperature == 0:\n"
        "        return int(np.argmax(logits))\n"
        "    scores = np.asarray(logits, dtype=float) * temperature\n"
        "    if top_k is not None:\n"
        "        cut = np.sort(scores)[-top_k]\n"
        "        scores = np.where(scores >= cut, scores, -np.inf)\n"
        "    p = np.exp(scores - scores.max())\n"
        "    return int(rng.choice(len(p), p=p / p.sum()))\n\n"
        "ok = check_sampler(my_sample)"
    ),
    "attention_that_writes/kv_cache/kv_cache": (
        "def my_cache_step(cache_k, cache_v, q, k, v):\n"
        "    if len(cache_k) == 0:\n"
        "        out = np.zeros_like(v)\n"
        "    else:\n"
        "        out = attnlib.attention(q[None], cache_k, cache_v)[0][0]\n"
        "    return out, np.vstack([cache_k, k]), np.vstack([cache_v, v])\n\n"
        "ok = check_cache_step(my_cache_step)"
    ),
    "attention_that_writes/modern_decoder/modern_decoder": (
        "def my_rms_norm(x, gain):\n"
        "    c = x - x.mean(axis=-1, keepdims=True)\n"
        "    return c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + 1e-5) * gain\n\n"
        "ok = check_rms_norm(my_rms_norm)"
    ),
    "attention_that_writes/induction_heads/induction_heads": (
        "def my_induction_score(weights, half):\n"
        "    t = np.arange(half, weights.shape[-1])\n"
        "    return weights[:, t, t - half].mean(axis=-1)\n\n"
        "ok = check_induction_score(my_induction_score)"
    ),
    "reading_attention/interpretability/interpretability": (
        "my_norms = [0.6, 0.1]\nok = check.weighted_norms_answer(my_norms)"
    ),
    "reading_attention/summary/summary": (
        'my_order = ["project", "score", "scale", "softmax", "mask", '
        '"weighted sum"]\npassed = summary.check_pipeline_order(my_order)'
    ),
}


def cpython_replies(
    setup: str, codes: list[str], folder: str = "chapters"
) -> list[str]:
    """What the checkers print in this (CPython) process for the same cells, run in
    the chapter's folder (``folder``, relative to the repository) as Jupyter runs
    them."""
    namespace: dict = {}
    replies = []
    cwd = os.getcwd()
    where = str(REPO / folder)
    os.chdir(where)
    if where not in sys.path:
        sys.path.insert(0, where)
    try:
        for code in [setup, *codes]:
            out = io.StringIO()
            with contextlib.redirect_stdout(out):
                exec(compile(code, "<cell>", "exec"), namespace)
            replies.append(out.getvalue())
    finally:
        os.chdir(cwd)
    return replies[1:]


def exercise_plan() -> list[dict]:
    """Per chapter: its setup cell (``setup``; ``page_setup``: what of it runs in the
    page, see live_cells.py), and ``codes``: [the exercise cell as stored, the wrong
    answer, the cell's solution]; ``cell_id``: that exercise cell's id."""
    plan = []
    for name, wrong in WRONG.items():
        nb = nbformat.read(CHAPTERS / f"{name}.ipynb", as_version=4)
        setup = next(c for c in nb.cells if c.cell_type == "code").source
        first = chapter_cells(CHAPTERS / f"{name}.ipynb")[0]
        # the exercise cell that calls the same checker as the wrong answer
        checker = re.search(r"^(?:ok|passed) = (?:\w+\.)?(\w+)\(", wrong, re.M).group(1)
        exercise = next(
            c for c in _exercise_cells(nb) if re.search(rf"\b{checker}\(", c.source)
        )
        solutions = _solutions(nb)
        right = "\n".join(solutions[s] for s in exercise.metadata["exercise_solutions"])
        plan.append(
            {
                "chapter": name,
                "folder": (Path("chapters") / name).parent.as_posix(),
                "setup": setup,
                "page_setup": setup if first["runnable"] else first["prelude"],
                "cell_id": exercise.id,
                "codes": [exercise.source, wrong, right],
            }
        )
    return plan


def live_manifest(*, model: bool = False) -> dict:
    """The built site's live-code manifest; the test fails (never skips) when live code,
    or with ``model`` the pretrained model, is not in the build."""
    import json

    import pytest
    from sitepages import SITE

    manifest = json.loads((SITE / "live" / "manifest.json").read_text())
    if not manifest["available"]:
        pytest.fail(f"live code is not in this build: {manifest['reason']}")
    if model and not manifest.get("model"):
        pytest.fail("the pretrained model is not served by this build")
    return manifest


def watched_page(context):
    """A new page of the browser ``context``, with the URLs the context requests and the
    script errors the page raises recorded: ``(page, requests, errors, stop)``; call
    ``stop()`` to stop recording the requests."""
    requests: list[str] = []
    errors: list[str] = []

    def record(request):
        requests.append(request.url)

    context.on("request", record)
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, requests, errors, lambda: context.remove_listener("request", record)
