import pytest

from tests.support.texts import SCRIPTS
from worker.text.fast_units import fast_units
from worker.text.features import units
from worker.text.normalize import normalized_tokens
from worker.text.simhash import feature_hashes


def test_rjieba_and_jieba_segment_alike() -> None:
    import jieba
    import rjieba

    text = "我来到北京清华大学他说手机很好今天的天气非常不错我们一起去公园散步吧"
    assert rjieba.cut(text) == jieba.lcut(text)


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
