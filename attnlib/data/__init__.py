"""The book's data: the worked examples of the source documents and two synthetic tasks.

Plain numpy; imports nothing else from attnlib.
"""

from pathlib import Path

#: The folder of the book's stored data (inside the repository, next to the chapters):
#: the corpus, the trained weights and the benchmarks' tables.
DATA_DIR = Path(__file__).resolve().parents[2] / "chapters" / "data"
