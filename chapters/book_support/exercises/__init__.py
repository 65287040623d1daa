"""Checking helpers for the book's exercises.

Each chapter's exercises have a module here (named for the chapter's topic) whose
functions compute the expected answer with attnlib and compare it with the reader's.
They print a verdict and return ``True``/``False``, so a reader can call them in a
notebook cell. Every public checker follows the same rules (see :func:`checker`):

* **Unanswered.** An answer that is still the placeholder ``...`` (Python's
  ``Ellipsis``), or a function whose body still raises ``NotImplementedError``, gets
  one stable line, ``"Not answered yet: ..."``, and ``False``.
* **Diagnosis first.** A wrong answer gets ``"Not yet: ..."`` and, where the checker
  recognises it, a ``"Hint: ..."`` naming the likely slip (an unscaled dot product, a
  percentage instead of a fraction, a transposed mask, ...). The expected value is
  never printed unless the reader asks for it: every checker takes
  ``show_answer=True``, which adds an ``"Expected: ..."`` line after the diagnosis.
* **Wrong kind, never a traceback.** An answer of the wrong kind (a string where
  numbers are expected, a list of the wrong length, NaN, a function with the wrong
  number of arguments, one that raises or returns the wrong number of values, any
  other object) gets a sentence saying what is wrong, and ``False``. Only the book's
  own arguments (the scores an exercise is about, say) raise, with the documented
  error.

The framework is split by concept: ``_rules`` (the :func:`checker` decorator, the
placeholder and ``show_answer``), ``_display`` (how numbers, arrays and the reader's
answer are written), ``_answers`` (reading numbers, shapes and words; comparing
numbers and shapes) and ``_readers`` (running the reader's function on test inputs).
Everything is imported from here.
"""

from book_support.exercises._answers import (
    as_floats,
    as_shape,
    as_texts,
    as_word,
    check_close,
    check_shape_dict,
    diagnose_close,
    heads_after_positions_hint,
    shape_relation,
)
from book_support.exercises._display import describe, fmt, shown
from book_support.exercises._readers import (
    check_function,
    check_labelled_cases,
    function_name,
    require_function,
    returned_array,
    returned_floats,
    try_reader,
)
from book_support.exercises._rules import (
    Unanswered,
    WrongKind,
    checker,
    is_placeholder,
    reveal,
    show_answer,
)

__all__ = [
    "WrongKind",
    "Unanswered",
    "checker",
    "show_answer",
    "is_placeholder",
    "reveal",
    "fmt",
    "describe",
    "shown",
    "as_floats",
    "as_shape",
    "as_texts",
    "as_word",
    "diagnose_close",
    "heads_after_positions_hint",
    "check_close",
    "check_shape_dict",
    "shape_relation",
    "try_reader",
    "require_function",
    "function_name",
    "returned_floats",
    "returned_array",
    "check_function",
    "check_labelled_cases",
]
