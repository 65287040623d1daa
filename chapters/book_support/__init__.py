"""book_support: the book's apparatus that several chapters share.

This is not the attention library (that is ``attnlib``, which imports nothing from
here); it is what the *book* needs around it:

figures       matplotlib figures, SVG drawings, the style, and the explorers
              (``figures.explorers``: sliders whose every state is stored in the page)
exercises     the framework of the exercise checkers (``checker``, answers read and
              compared, the reader's function run) and the self-check questions
              (``quiz``)
experiments   the drivers of the experiments whose stored results several chapters
              read: training runs (``make train``, ``make train-lm``), their evaluation
              and the probes of the pretrained encoder
torch_reference  attnlib beside PyTorch in plain numpy: converters of PyTorch state
              dicts to attnlib's parameters and back, the agreement line of the page
              "The same in PyTorch" (shared with tests/test_torch_reference.py)
torch_blocks  the PyTorch side of those comparisons (RoPE, a causal block); the one
              module here that imports torch, imported by that page and the tests only

What belongs to one chapter only sits in that chapter's folder, beside its notebook.
"""

from pathlib import Path

#: The ``chapters/`` folder: a chapter's stored data is
#: ``CHAPTERS / part / topic / data``.
CHAPTERS = Path(__file__).resolve().parent.parent
