import random
import string

import numpy as np
import pytest
import xxhash

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


def _random_texts(alphabet: str, count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 300))) for _ in range(count)
    ]


LATIN = string.printable + "\x00\x07\x1f"  # letters, digits, punctuation, whitespace
MIXED = (
    LATIN + "中文字词国家新闻报道，。、《》“”ＡＢＣ１２３éüßǰﬁ²😀\u200b\u00ad\u3000\u2028"
    "\U00020000\U0002a6d6ひらがなカタカナ한국어"
)


@pytest.mark.parametrize("alphabet", [LATIN, MIXED], ids=["ascii", "mixed"])
def test_equals_cutting_units_and_hashing_each(alphabet: str) -> None:
    texts = _random_texts(alphabet, 300, seed=len(alphabet))
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
