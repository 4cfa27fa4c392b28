import random

import numpy as np
import pytest
import xxhash

from worker.text.xxh3 import MAX_LENGTH, xxh3_64


def _hash_all(strings: list[bytes]) -> list[int]:
    buffer = np.frombuffer(b"\0" * 8 + b"".join(strings) + b"\0" * 16, dtype=np.uint8)
    lengths = np.array([len(s) for s in strings])
    starts = np.cumsum(lengths) - lengths + 8
    return [int(h) for h in xxh3_64(buffer, starts, lengths)]


def test_every_length_equals_the_xxhash_package() -> None:
    rng = random.Random(5)
    strings = [
        bytes(rng.randrange(256) for _ in range(n))
        for n in range(1, MAX_LENGTH + 1)
        for _ in range(200)
    ]
    assert _hash_all(strings) == [xxhash.xxh3_64_intdigest(s) for s in strings]


def test_words_equal_the_xxhash_package() -> None:
    words = [
        w.encode()
        for w in ["a", "an", "the", "of", "1998", "newspaper's", "international", "x", "y"]
    ]
    assert _hash_all(words) == [xxhash.xxh3_64_intdigest(w) for w in words]


def test_lengths_outside_the_supported_range_are_refused() -> None:
    buffer = np.zeros(64, dtype=np.uint8)
    with pytest.raises(ValueError, match="xxhash"):
        xxh3_64(buffer, np.array([0]), np.array([17]))
    with pytest.raises(ValueError, match="xxhash"):
        xxh3_64(buffer, np.array([0]), np.array([0]))
