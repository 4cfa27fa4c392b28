import pytest

from tests.support.texts import SCRIPTS
from worker.text.fast_units import fast_units
from worker.text.features import bigrams, shingles, tokenize, units
from worker.text.normalize import normalized_tokens
from worker.text.simhash import feature_hashes


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


def test_rjieba_and_jieba_segment_alike() -> None:
    import jieba
    import rjieba

    text = "我来到北京清华大学他说手机很好今天的天气非常不错我们一起去公园散步吧"
    assert rjieba.cut(text) == jieba.lcut(text)


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


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_every_script_gets_its_units(script: str) -> None:
    """Scripts written without spaces are cut into characters (each counts as half a word);
    the others into words; a mixed text run by run."""
    text, expected, words = SCRIPTS[script]
    found = units(normalized_tokens(text))
    assert found.items == expected
    assert found.words == words


@pytest.mark.parametrize("script", list(SCRIPTS))
def test_the_fast_units_agree_on_every_script(script: str) -> None:
    text = SCRIPTS[script][0]
    texts = [f"{text} {n}" for n in range(5)]  # (the numpy path needs a few texts)
    fast = fast_units(texts)
    for i, t in enumerate(texts):
        one = units(normalized_tokens(t))
        start = int(fast.counts[:i].sum())
        assert (
            fast.hashes[start : start + fast.counts[i]].tolist()
            == feature_hashes(one.items).tolist()
        )
        assert fast.words[i] == one.words
