import random

import numpy as np
import pytest

from evaluation.tokens import tokenize
from tests.support.reference import simhash_reference
from worker.text.normalize import normalize
from worker.text.simhash import (
    feature_hashes,
    from_bytes,
    hamming,
    shingle_hashes,
    simhash,
    to_bytes,
    to_hex,
)


def _random_texts(count: int, seed: int = 7) -> list[list[str]]:
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(400)] + ["中文", "über", "naïve", "😀"]
    out = []
    for _ in range(count):
        n = rng.choice([1, 2, 3, 5, 17, 64, 300])
        words = " ".join(rng.choice(vocab) for _ in range(n + 2))
        out.append(tokenize(normalize(words)).items)
    return out


def test_vectorised_equals_bit_by_bit_definition_on_many_texts() -> None:
    texts = _random_texts(300)
    for features in texts:
        assert simhash(features) == simhash_reference(features)


def test_weighted_equals_definition() -> None:
    rng = random.Random(3)
    for features in _random_texts(200, seed=11):
        # small integer weights keep float sums exact, so ties break the same way in both
        weights = [float(rng.randint(1, 9)) for _ in features]
        assert simhash(features, weights) == simhash_reference(features, weights)


def test_equal_weights_change_nothing() -> None:
    for features in _random_texts(50, seed=5):
        assert simhash(features, [2.5] * len(features)) == simhash(features)


def test_weights_must_match_features() -> None:
    with pytest.raises(ValueError, match="one per feature"):
        simhash(["a", "b"], [1.0])


def test_fingerprint_is_unsigned_64_bit() -> None:
    values = [simhash(f) for f in _random_texts(200, seed=9)]
    assert all(0 <= v < 2**64 for v in values)
    assert any(v >= 2**63 for v in values)  # the top bit is used, never a negative number


def test_single_feature_fingerprint_is_its_hash() -> None:
    import xxhash

    assert simhash(["hello"]) == xxhash.xxh3_64_intdigest(b"hello")


def test_hex_and_bytes_round_trip() -> None:
    fp = 0xFEDCBA9876543210
    assert to_hex(fp) == "fedcba9876543210"
    assert to_hex(5) == "0000000000000005"
    assert from_bytes(to_bytes(fp)) == fp
    assert len(to_bytes(fp)) == 8


def test_hamming() -> None:
    assert hamming(0, 0) == 0
    assert hamming(0, 2**64 - 1) == 64
    assert hamming(0b1011, 0b0001) == 2


def test_unrelated_texts_differ_in_about_half_the_bits() -> None:
    texts = _random_texts(60, seed=21)
    long = [simhash(f) for f in texts if len(f) >= 60]
    distances = [hamming(a, b) for i, a in enumerate(long) for b in long[i + 1 :]]
    mean = sum(distances) / len(distances)
    assert 28 <= mean <= 36, mean


def test_shingle_hashes_depend_on_every_unit_and_its_place() -> None:
    units = feature_hashes(["a", "b", "c", "d"])
    three = shingle_hashes(units, 3)
    assert len(three) == 2
    assert three.dtype == np.uint64
    swapped = shingle_hashes(feature_hashes(["b", "a", "c", "d"]), 3)
    assert swapped[0] != three[0]
    assert swapped[1] != three[1]
    assert shingle_hashes(feature_hashes(["x", "b", "c", "d"]), 3)[1] == three[1]  # local
    assert len(shingle_hashes(feature_hashes(["a", "b"]), 3)) == 1  # shorter than a shingle


def test_shingle_hashes_spread_over_all_bits() -> None:
    rng = random.Random(3)
    units = feature_hashes([str(rng.random()) for _ in range(2000)])
    bits = np.unpackbits(shingle_hashes(units, 3).view(np.uint8)).reshape(-1, 64).mean(axis=0)
    assert bits.min() > 0.45
    assert bits.max() < 0.55
