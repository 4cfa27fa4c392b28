"""From a text to what the index needs: an exact-content hash and, for long enough texts,
two SimHash fingerprints, all of what a reader sees of the text (markup.py: HTML and e-mail
reduced to their text).

The search fingerprint is a SimHash of the text's units (words; Han characters) weighted by
IDF, so one changed word moves it little; the index finds candidates by it. The verification
fingerprint, a SimHash of shingles of `shingle_size` units, checks each candidate and keeps
apart unrelated texts that share their vocabulary. docs/quality.md has the measurements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from worker import defaults
from worker.text.fast_units import fast_units
from worker.text.features import ChineseUnits, units
from worker.text.idf import IdfTable, default_table, jieba_table
from worker.text.markup import Format, reader_text
from worker.text.normalize import normalized_tokens
from worker.text.simhash import feature_hashes, shingle_hashes_many, simhashes


@dataclass(frozen=True)
class Fingerprint:
    content_hash: bytes  # xxh3_128 of the normalised text, 16 bytes
    search: int | None  # None when the text is too short for a stable fingerprint
    words: float  # length in words (a Han character counts as half a word)
    verification: int | None = None  # None with `search`
    format: Format = Format.TEXT  # what the text was read as


# Texts per numpy pass: numpy's cost per call is spread over the chunk, while its temporary
# arrays stay small enough to reuse memory (docs/performance.md).
_CHUNK = 50
# Fewer texts than this go unit by unit: numpy's cost per call outweighs its speed.
_MIN_NUMPY_TEXTS = 4


@dataclass(frozen=True)
class _Units:
    content_hash: bytes
    words: float
    hashes: np.ndarray  # the text's units, hashed (xxh3_64)


class Fingerprinter:
    """Turns texts into Fingerprints with one fixed feature configuration."""

    def __init__(
        self,
        shingle_size: int = defaults.SHINGLE_SIZE,
        chinese: ChineseUnits | str = defaults.CHINESE_UNITS,
        min_words: float = defaults.MIN_WORDS,
        idf: IdfTable | None = None,
        *,
        detect_format: bool = defaults.DETECT_FORMAT,
        main_content: bool = defaults.MAIN_CONTENT,
    ) -> None:
        """`idf` weighs the units of the search fingerprint (default: the table shipped with
        the package; with jieba words, jieba's own table for the Chinese ones). With
        `detect_format`, a text whose format is not given is read as what it looks like
        (HTML, an e-mail, or text); without, as text. `main_content`: HTML without what
        looks like navigation, headers and footers."""
        if min_words < 0:
            raise ValueError(f"min_words must be >= 0, got {min_words}")
        if not 1 <= shingle_size <= defaults.MAX_SHINGLE_SIZE:
            raise ValueError(
                f"shingle_size must be 1..{defaults.MAX_SHINGLE_SIZE} units, got {shingle_size}"
            )
        self.shingle_size = shingle_size
        self.chinese = ChineseUnits(chinese)
        self.min_words = min_words
        self.detect_format = detect_format
        self.main_content = main_content
        if idf is None:
            idf = jieba_table() if self.chinese is ChineseUnits.JIEBA else default_table()
        self.idf = idf
        # Loads the tables (normalisation, jieba's dictionary, the IDF hashes) now rather than
        # on the first article, whose latency would pay for them.
        self("warm-up 预热 " * 20)

    def __call__(self, text: str) -> Fingerprint:
        return self.many([text])[0]

    def many(
        self, texts: Sequence[str], formats: Sequence[Format | None] | None = None
    ) -> list[Fingerprint]:
        """Fingerprints of several texts, each equal to `self(text)`; the work is done in
        numpy for all of them at once where it can be, which is how the worker fingerprints
        a batch. `formats` gives a text's format (None: as the constructor says)."""
        given = list(formats) if formats is not None else [None] * len(texts)
        if len(given) != len(texts):
            raise ValueError(f"got {len(given)} formats for {len(texts)} texts")
        read = [self.read(text, f) for text, f in zip(texts, given, strict=True)]
        out = []
        for i in range(0, len(read), _CHUNK):
            chunk = read[i : i + _CHUNK]
            out += self._many([text for text, _ in chunk], [f for _, f in chunk])
        return out

    def read(self, text: str, format: Format | None = None) -> tuple[str, Format]:
        """What this fingerprinter counts of `text` (what a reader sees of it), and its format."""
        if format is None and not self.detect_format:
            format = Format.TEXT
        return reader_text(text, format, main_content=self.main_content)

    def _many(self, texts: Sequence[str], formats: Sequence[Format]) -> list[Fingerprint]:
        found = self._units(texts)
        # Below the minimum length a SimHash is noise: such texts get none.
        fit = [f.words >= self.min_words and len(f.hashes) > 0 for f in found]
        long_enough = [f for f, ok in zip(found, fit, strict=True) if ok]
        fingerprints = iter(self._simhashes(long_enough) if long_enough else [])
        out = []
        for f, ok, format in zip(found, fit, formats, strict=True):
            search, verification = next(fingerprints) if ok else (None, None)
            out.append(Fingerprint(f.content_hash, search, f.words, verification, format))
        return out

    def _units(self, texts: Sequence[str]) -> list[_Units]:
        if self.chinese is not ChineseUnits.CHARACTERS or len(texts) < _MIN_NUMPY_TEXTS:
            return [self._units_of(text) for text in texts]
        batch = fast_units(texts)  # the same units and hashes, found in numpy
        ends = np.cumsum(batch.counts).tolist()
        starts = [0, *ends[:-1]]  # (slices: np.split costs more per text)
        return [
            _Units(content_hash, words, batch.hashes[start:end])
            for content_hash, words, start, end in zip(
                batch.content_hashes, batch.words, starts, ends, strict=True
            )
        ]

    def _units_of(self, text: str) -> _Units:
        tokens = normalized_tokens(text)
        content_hash = xxhash.xxh3_128_digest(" ".join(tokens).encode("utf-8"))
        found = units(tokens, self.chinese)
        return _Units(content_hash, found.words, feature_hashes(found.items))

    def _simhashes(self, texts: list[_Units]) -> list[tuple[int, int]]:
        """(search fingerprint, verification fingerprint) of each text."""
        hashes = np.concatenate([f.hashes for f in texts])
        counts = np.array([len(f.hashes) for f in texts], dtype=np.intp)
        search = simhashes(hashes, counts, self.idf.weights_of(hashes))
        verification = simhashes(*shingle_hashes_many(hashes, counts, self.shingle_size))
        return list(zip(search, verification, strict=True))
