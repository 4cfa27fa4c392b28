"""The evaluation's peer tokenizer: shingles of words, Han bigrams or jieba words."""

import pytest

from evaluation.tokens import bigrams, shingles, tokenize


def test_word_shingles_overlap() -> None:
    f = tokenize("a b c d e", shingle_size=3)
    assert f.items == ["a b c", "b c d", "c d e"]
    assert f.words == 5


def test_a_run_shorter_than_the_shingle_is_one_feature() -> None:
    assert tokenize("a b", shingle_size=3).items == ["a b"]
    assert shingles(["x"], 3) == ["x"]


def test_shingle_size_is_configurable() -> None:
    assert tokenize("a b c", shingle_size=1).items == ["a", "b", "c"]
    assert tokenize("a b c", shingle_size=2).items == ["a b", "b c"]


def test_han_runs_give_character_bigrams() -> None:
    f = tokenize("我来到北京")
    assert f.items == ["我来", "来到", "到北", "北京"]
    assert f.words == 2.5  # a Han character counts as half a word


def test_han_runs_separated_only_by_removed_punctuation_join() -> None:
    # normalize() turns "你好，世界" into "你好 世界"; punctuation edits must not change features
    assert tokenize("你好 世界").items == bigrams("你好世界")


def test_mixed_text_is_handled_run_by_run() -> None:
    f = tokenize("the new iphone 手机很好 sold out today", shingle_size=3)
    assert f.items == ["the new iphone", "手机", "机很", "很好", "sold out today"]
    assert f.words == 3 + 4 / 2 + 3


def test_han_attached_to_latin_is_split_into_runs() -> None:
    assert tokenize("iphone手机", shingle_size=3).items == ["iphone", "手机"]


def test_jieba_mode_gives_words() -> None:
    f = tokenize("我来到北京清华大学", chinese="jieba")
    assert f.items == ["我", "来到", "北京", "清华大学"]


def test_single_han_character_is_a_feature() -> None:
    assert tokenize("a b c 中").items == ["a b c", "中"]


def test_empty_text_has_no_features() -> None:
    f = tokenize("")
    assert f.items == []
    assert f.words == 0


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="shingle_size"):
        tokenize("a", shingle_size=0)
    with pytest.raises(ValueError, match="bigrams"):
        tokenize("a", chinese="words")
