import random
import string

import numpy as np
import xxhash

from worker.ascii_words import ascii_words
from worker.normalize import normalize
from worker.simhash import feature_hashes


def _expected(texts: list[str]) -> tuple[list[bytes], list[list[int]]]:
    normalized = [normalize(t) for t in texts]
    return ([xxhash.xxh3_128_digest(n.encode()) for n in normalized],
            [feature_hashes(n.split()).tolist() for n in normalized])


def _got(texts: list[str]) -> tuple[list[bytes], list[list[int]]]:
    batch = ascii_words(texts)
    split = np.split(batch.hashes, np.cumsum(batch.counts)[:-1])
    return batch.content_hashes, [s.tolist() for s in split]


def test_equals_normalising_and_hashing_each_word() -> None:
    rng = random.Random(3)
    alphabet = string.printable + "\x00\x07\x1f"  # letters, digits, punctuation, whitespace
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 400)))
             for _ in range(300)]
    texts += ["", "   ", "!!!", "One", "Hello, WORLD!", "a-very-long-hyphenated-word-indeed x"]
    assert _got(texts) == _expected(texts)


def test_words_longer_than_sixteen_bytes() -> None:
    texts = ["supercalifragilisticexpialidocious " * 3, "x" * 200, "short then " + "y" * 17]
    assert _got(texts) == _expected(texts)


def test_texts_without_words_in_the_middle_of_a_batch() -> None:
    texts = ["first text", "", "...", "third TEXT here"]
    assert _got(texts) == _expected(texts)
    assert ascii_words(texts).counts.tolist() == [2, 0, 0, 3]
