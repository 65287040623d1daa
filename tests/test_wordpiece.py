"""attnlib's plain-Python WordPiece tokenizer gives the token ids of the ``tokenizers``
package (the Rust extension the checkpoint was published with) for all-MiniLM-L6-v2.

The reference is the package itself, loaded from the model's own ``tokenizer.json``
with padding and truncation off (what attnlib.models.minilm.encode promises). Three
independent comparisons: 3,000 sentences built by a seeded generator from pieces that
exercise each step (accents, punctuation, digits, CJK, emoji, special tokens, unknown
and very long words, whitespace runs, control characters, empty input); every code
point of Unicode between two letters (every 61st in ``make test``, all of them in
``make test-all``); and hypothesis's arbitrary text. The character tables are checked
to be the package's as it is installed now (entry by entry in ``make test-all``).
"""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnlib.models import _wordpiece_tables, minilm
from attnlib.models._wordpiece import WordPieceTokenizer

tokenizers = pytest.importorskip("tokenizers")


@pytest.fixture(scope="module")
def reference():
    tok = tokenizers.Tokenizer.from_file(str(minilm.model_dir() / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


@pytest.fixture(scope="module")
def ours():
    return minilm.load_tokenizer()


WORDS = [
    "the", "The", "bank", "river", "cashier", "counted", "money", "attention",
    "Transformer", "unbelievably", "antidisestablishmentarianism", "GPU", "iPhone",
    "McDonald's", "don't", "l'été", "résumé", "naïve", "café", "Ångström", "Œuvre",
    "straße", "İstanbul", "ΣΟΦΙΑ", "Москва", "данные", "Ελληνικά", "עברית", "العربية",
    "हिन्दी", "ภาษาไทย", "한국어", "日本語", "ひらがな", "カタカナ", "中文", "北京大学",
    "𠀀𠀁", "xqzvbnm", "zzzzzz", "blorptastic", "e\u0301", "a\u0308o\u0308",
    "\u00c5", "A\u030a", "ﬁ", "ｆｕｌｌｗｉｄｔｈ", "①②", "x²", "½", "Ⅻ",
    "3.14159", "1,000,000", "2026-12-05", "42", "007", "٣٤٥", "१२३", "$5", "€10",
    "50%", "#hashtag", "@user", "user@example.com", "https://example.org/a?b=c",
    "C++", "snake_case", "kebab-case", "CamelCase", "e.g.", "U.S.A.",
]  # fmt: skip
PUNCT = list(".,;:!?'\"()[]{}<>-_/\\|@#$%^&*+=~`") + [
    "…", "—", "–", "«", "»", "“", "”", "‘", "’", "¿", "¡", "·", "§", "¶", "†",
    "。", "、", "「", "」", "！", "？", "،", "؟", "।", "⸏", "⹏", "‽", "⁂",
]  # fmt: skip
EMOJI = [
    "😀", "🥰", "👍🏽", "👩‍👩‍👧", "🇫🇷", "❤️", "☕", "🤖", "🧠", "✨", "🫠",
]  # fmt: skip
SPECIAL = ["[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "[mask]", "[ MASK ]", "[MASK"]
SPACES = [
    " ", "  ", "   ", "\t", "\n", "\r\n", " \t \n ", "\u00a0", "\u3000", "\u2009",
    "\u2028", "\u0085", "\x1c",
]  # fmt: skip
CONTROL = [
    "\x00", "\x07", "\x1b", "\x7f", "\u200b", "\u200d", "\ufeff", "\ufffd",
    "\u202e", "\ue000", "\U000f0000", "\u00ad", "\u0301",
]  # fmt: skip


def _long_word(rng: random.Random) -> str:
    n = rng.choice([99, 100, 101, 150, 400])
    base = rng.choice(["a", "ab", "é", "x1", "ä"])
    return (base * n)[:n]


def sentences(n: int = 3000, seed: int = 38) -> list[str]:
    """``n`` varied sentences, the same on every run (a seeded generator)."""
    rng = random.Random(seed)
    kinds = [
        (WORDS, 10), (PUNCT, 4), (EMOJI, 1), (SPECIAL, 1), (CONTROL, 1),
    ]  # fmt: skip
    pools = [pool for pool, weight in kinds for _ in range(weight)]
    out = ["", " ", "\t\n", "\x00", "[MASK]", "a" * 100, "a" * 101]
    while len(out) < n:
        parts = []
        for _ in range(rng.randint(1, 16)):
            if rng.random() < 0.03:
                parts.append(_long_word(rng))
            else:
                parts.append(rng.choice(rng.choice(pools)))
            # mostly a space between pieces; sometimes none, sometimes a run
            r = rng.random()
            parts.append("" if r < 0.2 else " " if r < 0.85 else rng.choice(SPACES))
        text = "".join(parts)
        if rng.random() < 0.1:
            text = text.upper()
        out.append(text)
    return out


def test_three_thousand_varied_sentences_get_the_packages_ids(reference, ours):
    texts = sentences()
    assert len(set(texts)) > 2900
    expected = reference.encode_batch(texts)
    wrong = [
        (text, e.tokens, ours.encode(text).tokens)
        for text, e in zip(texts, expected)
        if ours.encode(text).ids != e.ids
    ]
    assert not wrong, f"{len(wrong)} sentences differ; first: {wrong[0]}"


def test_the_sentences_cover_what_they_promise(ours):
    """The generated sentences do reach [UNK], long words, CJK splits, emoji, special
    tokens typed in the text, and stripped accents."""
    tokens = {t for text in sentences() for t in ours.encode(text).tokens}
    assert {"[UNK]", "[MASK]", "[PAD]", "北", "京", "cafe", "naive"} <= tokens
    assert "é" not in tokens and "a" * 100 not in tokens


@pytest.mark.parametrize(
    "stride",
    [
        pytest.param(1, marks=pytest.mark.nightly, id="every"),
        pytest.param(61, id="every 61st"),
    ],
)
def test_code_points_between_two_letters_get_the_packages_ids(reference, ours, stride):
    """Unicode scalar values, each as ``a<c>a``, 64 to a text: all 1,112,064 of them
    nightly (``make test-all``, 12 s), every 61st (18,231, spread over every plane and
    block) in ``make test``."""
    points = [cp for cp in range(0, 0x110000, stride) if not 0xD800 <= cp <= 0xDFFF]
    texts = [
        " ".join(f"a{chr(cp)}a" for cp in points[k : k + 64])
        for k in range(0, len(points), 64)
    ]
    expected = reference.encode_batch(texts)
    wrong = [t for t, e in zip(texts, expected) if ours.encode(t).ids != e.ids]
    assert not wrong, f"{len(wrong)} texts differ; first code point {ord(wrong[0][1])}"


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=60))
def test_arbitrary_text_gets_the_packages_ids(reference, ours, text):
    assert ours.encode(text).ids == reference.encode(text).ids


def test_encode_without_special_tokens_matches_too(reference, ours):
    for text in sentences(300, seed=7):
        got = ours.encode(text, add_special_tokens=False)
        want = reference.encode(text, add_special_tokens=False)
        assert (got.tokens, got.ids) == (want.tokens, want.ids)


def test_token_and_id_lookups_match_the_package(reference, ours):
    for i in range(minilm.VOCAB_SIZE):
        assert ours.id_to_token(i) == reference.id_to_token(i)
    assert ours.token_to_id("[MASK]") == 103 == reference.token_to_id("[MASK]")
    assert ours.token_to_id("notaword") is None
    assert ours.id_to_token(minilm.VOCAB_SIZE) is None


def test_word_of_100_characters_is_split_and_of_101_is_unknown(ours):
    assert ours.encode("a" * 101).tokens == ["[CLS]", "[UNK]", "[SEP]"]
    assert "[UNK]" not in ours.encode("a" * 100).tokens
    assert ours.encode("").tokens == ["[CLS]", "[SEP]"]


def test_character_tables_are_made_for_the_installed_package():
    """The tables in attnlib were generated from the version of ``tokenizers`` that
    requirements.txt pins and is installed (every entry is compared nightly, below)."""
    assert _wordpiece_tables.TOKENIZERS_VERSION == tokenizers.__version__


@pytest.mark.nightly
def test_character_tables_are_those_of_the_installed_package():
    """The tables in attnlib (generated once) still describe the package (~7 s)."""
    from make_wordpiece_tables import read_tables

    tables = read_tables()
    assert _wordpiece_tables.TOKENIZERS_VERSION == tables["version"]
    for name in ("REMOVED", "WHITESPACE", "PUNCTUATION", "NONSPACING_MARK"):
        assert getattr(_wordpiece_tables, name) == tables[name], name
    assert _wordpiece_tables.LOWER == tables["LOWER"]
    assert _wordpiece_tables.NFD == tables["NFD"]


def test_bad_text_raises_naming_the_cause(ours):
    with pytest.raises(TypeError, match="text must be a str; got bytes"):
        ours.encode(b"bank")
    with pytest.raises(ValueError, match="lone surrogate"):
        ours.encode("bank \ud800")


def test_a_tokenizer_file_of_another_kind_is_refused(tmp_path):
    doc = json.loads((minilm.model_dir() / "tokenizer.json").read_text())
    doc["normalizer"]["lowercase"] = False
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="its normalizer is not the uncased BERT"):
        WordPieceTokenizer.from_file(path)
