"""Checkers of the chapter "Why attention"."""

from word_in_context_exercises import (
    check_attention_kind,
    check_uniform_mixture,
)


def test_uniform_mixture_of_the_bank_values_is_one_one(capsys):
    # ([2,0] + [0,2] + [1,1]) / 3 = [1, 1], by hand.
    assert check_uniform_mixture([1.0, 1.0])
    assert "Correct" in capsys.readouterr().out
    assert not check_uniform_mixture([1.4205, 0.5795])
    assert "Not yet" in capsys.readouterr().out


def test_uniform_mixture_with_other_values():
    assert check_uniform_mixture([2.0, 3.0], values=[[1.0, 2.0], [3.0, 4.0]])
    assert not check_uniform_mixture([2.0], values=[[1.0, 2.0], [3.0, 4.0]])


def test_attention_kind(capsys):
    right = {"a": "self", "b": "cross", "c": "cross", "d": "self"}
    assert check_attention_kind(right)
    assert check_attention_kind({**right, "a": "Self-attention"})
    assert not check_attention_kind({**right, "b": "self"})
    assert not check_attention_kind({"a": "self"})
    assert not check_attention_kind({**right, "c": "maybe"})
    capsys.readouterr()
    assert not check_attention_kind(["self"])
    assert "give a dict" in capsys.readouterr().out
