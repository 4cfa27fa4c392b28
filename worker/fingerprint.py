"""From a text to what the index needs: an exact-content hash and, for long enough texts,
SimHash fingerprints.

Two feature modes:
- "words" (the default): the search fingerprint is a SimHash of the text's units (words;
  Han characters) weighted by IDF, so one changed word moves it little; a second SimHash, of
  shingles of `shingle_size` units, verifies each candidate the search finds, and keeps
  unrelated texts that share their vocabulary apart. docs/quality.md has the measurements.
- "shingles": one SimHash of word shingles (Han bigrams or jieba words), no verification.
"""

from __future__ import annotations

from dataclasses import dataclass

import xxhash

from worker.idf import IdfTable, default_table, jieba_table
from worker.normalize import normalize
from worker.settings import CHINESE_MODES, FEATURE_MODES
from worker.simhash import feature_hashes, shingle_hashes, simhash, simhash_of
from worker.tokens import tokenize, units


@dataclass(frozen=True)
class Fingerprint:
    content_hash: bytes  # xxh3_128 of the normalised text, 16 bytes
    simhash: int | None  # None when the text is too short for a stable fingerprint
    words: float  # length in words (a Han character counts as half a word)
    verify: int | None = None  # the second fingerprint ("words" mode), None with simhash


class Fingerprinter:
    """Turns texts into Fingerprints with one fixed feature configuration."""

    def __init__(self, shingle_size: int = 3, chinese: str = "bigrams", min_words: float = 20,
                 features: str = "words", idf: IdfTable | None = None) -> None:
        """`idf` weighs units in "words" mode (default: the table shipped with the package;
        with jieba words, jieba's own table for the Chinese ones)."""
        if min_words < 0:
            raise ValueError(f"min_words must be >= 0, got {min_words}")
        if chinese not in CHINESE_MODES:
            raise ValueError(f"chinese must be one of {CHINESE_MODES}, got {chinese!r}")
        if features not in FEATURE_MODES:
            raise ValueError(f"features must be one of {FEATURE_MODES}, got {features!r}")
        self.shingle_size = shingle_size
        self.chinese = chinese
        self.min_words = min_words
        self.features = features
        if idf is None and features == "words":
            idf = jieba_table() if chinese == "jieba" else default_table()
        self.idf = idf
        # Validates the options, and loads the tables (normalisation, jieba's dictionary) now
        # rather than on the first article, whose latency would pay for them.
        self("warm-up 预热")

    def __call__(self, text: str) -> Fingerprint:
        normalized = normalize(text)
        content_hash = xxhash.xxh3_128_digest(normalized.encode("utf-8"))
        if self.features == "shingles":
            features = tokenize(normalized, self.shingle_size, self.chinese)
            if features.words < self.min_words or not features.items:
                return Fingerprint(content_hash, None, features.words)
            return Fingerprint(content_hash, simhash(features.items), features.words)
        found = units(normalized, self.chinese)
        if found.words < self.min_words or not found.items:
            return Fingerprint(content_hash, None, found.words)
        assert self.idf is not None
        weight, cap = self.idf.weights.get, self.idf.cap
        hashes = feature_hashes(found.items)  # once, for both fingerprints
        return Fingerprint(content_hash,
                           simhash_of(hashes, [weight(u, cap) for u in found.items]),
                           found.words, simhash_of(shingle_hashes(hashes, self.shingle_size)))
