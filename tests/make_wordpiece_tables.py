"""Write attnlib/models/_wordpiece_tables.py: the character classes of the
   ``tokenizers`` package's BERT normalizer and pre-tokenizer, read from the package.

attnlib.models.wordpiece re-implements the tokenizer of all-MiniLM-L6-v2 in plain
Python. Its steps are simple, but which characters count as punctuation, control,
whitespace or non-spacing mark is decided in the Rust package by tables of different
Unicode versions (the ``unicode_categories`` crate's are old: a Kavyka mark of Unicode
10 is not punctuation there; Rust's own lower-casing and NFD are newer than Python
3.11's ``unicodedata``). Asking ``unicodedata`` would therefore give other token ids for
some characters, and other ones again in the page's Python (3.12). So the classes are
read here from the package itself, one code point at a time, and stored as ranges:

* removed by ``clean_text`` (NUL, U+FFFD, control, format and private-use characters);
* whitespace (Rust's ``char::is_whitespace``);
* punctuation for the pre-tokenizer (ASCII punctuation or a P* category of the crate);
* non-spacing marks (dropped after NFD when accents are stripped);
* lower-casing and NFD where Python's ``unicodedata`` disagrees with the package.

Run after upgrading ``tokenizers`` (tests/test_wordpiece.py fails until then):

    .venv/bin/python tests/make_wordpiece_tables.py
"""

from __future__ import annotations

import sys
import unicodedata
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "attnlib/models/_wordpiece_tables.py"


def _ranges(flags) -> tuple:
    """Inclusive (first, last) runs of code points whose flag is True; a flag of None
    (a code point no text can hold) joins the run around it."""
    runs, start, last = [], None, None
    for cp, flag in enumerate(flags):
        if flag is None:
            continue
        if flag and start is None:
            start = cp
        elif not flag and start is not None:
            runs.append((start, last))
            start = None
        if flag:
            last = cp
    if start is not None:
        runs.append((start, last))
    return tuple(runs)


def read_tables() -> dict:
    """Every character class, read from ``tokenizers`` over all code points (~10 s)."""
    import tokenizers
    from tokenizers import normalizers, pre_tokenizers

    clean = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=False, strip_accents=False,
        lowercase=False,
    )  # fmt: skip
    strip = normalizers.BertNormalizer(
        clean_text=False, handle_chinese_chars=False, strip_accents=True,
        lowercase=False,
    )  # fmt: skip
    nfd, lower = normalizers.NFD(), normalizers.Lowercase()
    split = pre_tokenizers.BertPreTokenizer()
    removed, space, punct, mark = [], [], [], []
    lower_fix, nfd_fix = {}, {}
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:  # surrogates: not characters, no Rust char
            for flags in (removed, space, punct, mark):
                flags.append(None)
            continue
        c = chr(cp)
        removed.append(clean.normalize_str(c) == "")
        pieces = [p for p, _ in split.pre_tokenize_str(f"a{c}a")]
        space.append(pieces == ["a", "a"])
        punct.append(pieces == ["a", c, "a"])
        decomposed = nfd.normalize_str(c)
        # only a character NFD leaves alone reaches the mark filter
        mark.append(strip.normalize_str(c) == "" if decomposed == c else None)
        if decomposed != unicodedata.normalize("NFD", c):
            nfd_fix[cp] = decomposed
        low = lower.normalize_str(c)
        if low != c.lower():
            lower_fix[cp] = low
    return {
        "version": tokenizers.__version__,
        "REMOVED": _ranges(removed),
        "WHITESPACE": _ranges(space),
        "PUNCTUATION": _ranges(punct),
        "NONSPACING_MARK": _ranges(mark),
        "LOWER": lower_fix,
        "NFD": nfd_fix,
    }


def module_text(tables: dict) -> str:
    """The Python source of attnlib/models/_wordpiece_tables.py."""
    lines = [
        '"""Character classes of the ``tokenizers`` package '
        f"{tables['version']} (BERT normalizer and",
        "pre-tokenizer), for attnlib.models.wordpiece.",
        "",
        "Generated from the package by tests/make_wordpiece_tables.py; do not edit.",
        "Ranges are inclusive (first, last) code points. LOWER and NFD list the",
        "characters where the package's lower-casing or NFD differs from Python 3.11's",
        "unicodedata (the package's result, absolute: right under any Python version",
        'whose Unicode is not newer than the package\'s)."""',
        "",
        f'TOKENIZERS_VERSION = "{tables["version"]}"',
    ]
    for name in ("REMOVED", "WHITESPACE", "PUNCTUATION", "NONSPACING_MARK"):
        lines.append(f"{name} = (")
        lines += [f"    (0x{a:X}, 0x{b:X})," for a, b in tables[name]]
        lines.append(")")
    for name in ("LOWER", "NFD"):
        lines.append(f"{name} = {{")
        for cp, text in sorted(tables[name].items()):
            lines.append(f'    0x{cp:X}: "{ascii(text)[1:-1]}",')
        lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    TARGET.write_text(module_text(read_tables()), encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
