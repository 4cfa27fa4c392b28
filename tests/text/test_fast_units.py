import numpy as np
import pytest
import xxhash

from tests.support.texts import LATIN, MIXED, random_texts
from worker.text.fast_units import fast_units
from worker.text.features import units
from worker.text.normalize import normalize, normalized_tokens
from worker.text.simhash import feature_hashes

Result = tuple[list[bytes], list[list[int]], list[float]]


def _expected(texts: list[str]) -> Result:
    found = [units(normalized_tokens(t)) for t in texts]
    return (
        [xxhash.xxh3_128_digest(normalize(t).encode()) for t in texts],
        [feature_hashes(f.items).tolist() for f in found],
        [f.words for f in found],
    )


def _got(texts: list[str]) -> Result:
    batch = fast_units(texts)
    split = np.split(batch.hashes, np.cumsum(batch.counts)[:-1])
    return batch.content_hashes, [s.tolist() for s in split], batch.words


@pytest.mark.parametrize("alphabet", [LATIN, MIXED], ids=["ascii", "mixed"])
def test_equals_cutting_units_and_hashing_each(alphabet: str) -> None:
    texts = random_texts(alphabet, 300, seed=len(alphabet))
    assert _got(texts) == _expected(texts)


def test_edge_cases() -> None:
    texts = [
        "",
        "   ",
        "!!!",
        "One",
        "Hello, WORLD!",
        "a-very-long-hyphenated-word-indeed x",
        "supercalifragilisticexpialidocious " * 3,
        "中",
        "1998年中国",
        "ａｂｃ漢字ｄｅｆ",
        "naïve café " + "x" * 40,
        "\U00020000\U00020001 b",
    ]
    assert _got(texts) == _expected(texts)
    assert _got(texts[::-1]) == _expected(texts[::-1])


def test_words_count_han_characters_as_half() -> None:
    batch = fast_units(["one two three", "中文 words", "...", "café crème"])
    assert batch.counts.tolist() == [3, 3, 0, 2]
    assert batch.words == [3, 2.0, 0, 2]
    assert [type(w) for w in batch.words] == [int, float, int, int]  # as tokens.units
