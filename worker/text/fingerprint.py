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

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from worker.settings import CHINESE_MODES, FEATURE_MODES
from worker.text.fast_units import batch_units
from worker.text.features import tokenize, units
from worker.text.idf import IdfTable, default_table, jieba_table
from worker.text.normalize import normalized_tokens
from worker.text.simhash import feature_hashes, shingle_hashes_many, simhashes


@dataclass(frozen=True)
class Fingerprint:
    content_hash: bytes  # xxh3_128 of the normalised text, 16 bytes
    simhash: int | None  # None when the text is too short for a stable fingerprint
    words: float  # length in words (a Han character counts as half a word)
    verify: int | None = None  # the second fingerprint ("words" mode), None with simhash


# Texts per numpy pass. Numpy's cost per call is spread over the chunk, while its arrays stay
# small enough to reuse memory: passes over 100 texts were measured slower (their temporaries,
# megabytes, were fresh pages from the kernel each time), and passes over 16 slower too.
_CHUNK = 50
# Fewer texts than this go unit by unit: numpy's cost per call outweighs its speed (an English
# text alone costs ~7x as much in numpy as in a batch, ~2.5x as much unit by unit).
_MIN_NUMPY_TEXTS = 4


@dataclass(frozen=True)
class _Features:
    content_hash: bytes
    words: float
    hashes: np.ndarray  # the search fingerprint's features (units, or shingles), hashed


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
        # Validates the options, and loads the tables (normalisation, jieba's dictionary, the
        # IDF hashes) now rather than on the first article, whose latency would pay for them.
        self("warm-up 预热 " * 20)

    def __call__(self, text: str) -> Fingerprint:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[Fingerprint]:
        """Fingerprints of several texts, each equal to `self(text)`; the work is done in
        numpy for all of them at once where it can be, which is how the worker fingerprints
        a batch."""
        return [fp for i in range(0, len(texts), _CHUNK) for fp in self._many(texts[i:i + _CHUNK])]

    def _many(self, texts: Sequence[str]) -> list[Fingerprint]:
        found = self._features(texts)
        # Below the minimum length a SimHash is noise: such texts get none.
        fit = [f.words >= self.min_words and len(f.hashes) > 0 for f in found]
        long_enough = [f for f, ok in zip(found, fit, strict=True) if ok]
        fingerprints = iter(self._simhashes(long_enough) if long_enough else [])
        out = []
        for f, ok in zip(found, fit, strict=True):
            search, verify = next(fingerprints) if ok else (None, None)
            out.append(Fingerprint(f.content_hash, search, f.words, verify))
        return out

    def _features(self, texts: Sequence[str]) -> list[_Features]:
        if self.features != "words" or self.chinese != "bigrams" or len(texts) < _MIN_NUMPY_TEXTS:
            return [self._features_of(text) for text in texts]
        batch = batch_units(texts)  # the same units and hashes, found in numpy
        ends = np.cumsum(batch.counts).tolist()
        starts = [0, *ends[:-1]]  # (slices: np.split cost ~10 us per text, measured)
        return [_Features(content_hash, words, batch.hashes[start:end])
                for content_hash, words, start, end
                in zip(batch.content_hashes, batch.words, starts, ends, strict=True)]

    def _features_of(self, text: str) -> _Features:
        tokens = normalized_tokens(text)
        normalized = " ".join(tokens)
        content_hash = xxhash.xxh3_128_digest(normalized.encode("utf-8"))
        if self.features == "shingles":
            features = tokenize(normalized, self.shingle_size, self.chinese)
        else:
            features = units(tokens, self.chinese)
        return _Features(content_hash, features.words, feature_hashes(features.items))

    def _simhashes(self, texts: list[_Features]) -> list[tuple[int, int | None]]:
        """(search fingerprint, verification fingerprint or None) of each text."""
        hashes = np.concatenate([f.hashes for f in texts])
        counts = np.array([len(f.hashes) for f in texts], dtype=np.intp)
        if self.features == "shingles":
            return [(fp, None) for fp in simhashes(hashes, counts)]
        assert self.idf is not None
        search = simhashes(hashes, counts, self.idf.weights_of(hashes))
        verify = simhashes(*shingle_hashes_many(hashes, counts, self.shingle_size))
        return list(zip(search, verify, strict=True))
