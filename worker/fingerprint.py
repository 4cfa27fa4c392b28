"""From a text to what the index needs: an exact-content hash and, for long enough texts,
a SimHash fingerprint."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import xxhash

from worker.normalize import normalize
from worker.simhash import simhash
from worker.tokens import tokenize


@dataclass(frozen=True)
class Fingerprint:
    content_hash: bytes  # xxh3_128 of the normalised text, 16 bytes
    simhash: int | None  # None when the text is too short for a stable fingerprint
    words: float  # length in words (a Han character counts as half a word)


class Fingerprinter:
    """Turns texts into Fingerprints with one fixed feature configuration."""

    def __init__(
        self,
        shingle_size: int = 3,
        chinese: str = "bigrams",
        min_words: float = 20,
        weights: Mapping[str, float] | None = None,
    ) -> None:
        """`weights` maps a feature to its weight (e.g. IDF); features not in it weigh 1."""
        if min_words < 0:
            raise ValueError(f"min_words must be >= 0, got {min_words}")
        self.shingle_size = shingle_size
        self.chinese = chinese
        self.min_words = min_words
        self.weights = weights
        # Validates the options, and loads the tables (normalisation, jieba's dictionary) now
        # rather than on the first article, whose latency would pay for them.
        self("warm-up 预热")

    def __call__(self, text: str) -> Fingerprint:
        normalized = normalize(text)
        content_hash = xxhash.xxh3_128_digest(normalized.encode("utf-8"))
        features = tokenize(normalized, self.shingle_size, self.chinese)
        if features.words < self.min_words or not features.items:
            return Fingerprint(content_hash, None, features.words)
        weights = None
        if self.weights is not None:
            weights = [self.weights.get(f, 1.0) for f in features.items]
        return Fingerprint(content_hash, simhash(features.items, weights), features.words)
