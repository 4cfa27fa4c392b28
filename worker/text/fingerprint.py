"""From a text to what the index needs, all of what a reader sees of it (markup.py: HTML and
e-mail reduced to their text): an exact-content hash and, for long enough texts, a 64-bit
search fingerprint and a set sketch.

The search fingerprint is a SimHash of the text's units (words; characters of scripts written
without spaces), each weighted by its IDF times the square root of its count, so that one
changed word moves it little and no repeated word takes it over; the index finds candidates
by it. The set sketch (sketch.py) of the text's shingles of `shingle_size` units then tells
how much of the text a candidate shares: the verdict is decided on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from worker import defaults
from worker.model import Fingerprint, Format
from worker.text.fast_units import fast_units
from worker.text.features import ChineseUnits, units, words_of
from worker.text.idf import IdfTable, default_table, jieba_table
from worker.text.lines import line_of
from worker.text.markup import detect, reader_text
from worker.text.native import NativeFingerprinter, native_fingerprinter
from worker.text.normalize import folded_utf8, normalized_tokens
from worker.text.simhash import feature_hashes, shingle_hashes_many, simhashes
from worker.text.sketch import SketchShape, sketches

# Texts per numpy pass: numpy's cost per call is spread over the chunk, while its temporary
# arrays stay small enough to reuse memory (docs/performance.md).
_CHUNK = 50
# Fewer texts than this go unit by unit: numpy's cost per call outweighs its speed.
_MIN_NUMPY_TEXTS = 4
# The content hash of a text with nothing left once normalised ("!!!", emoji only) is that of
# the text as sent, marked so: such texts are exact copies only of the very same characters.
_AS_SENT = b"as sent:"


@dataclass(frozen=True)
class _Units:
    content_hash: bytes
    words: float
    hashes: np.ndarray  # the text's units, hashed (xxh3_64)


class Fingerprinter:
    """Turns texts into Fingerprints with one fixed feature configuration."""

    tf = "sqrt"  # how `damped` weighs a unit's count (recorded in `fingerprint_spec`)

    def __init__(
        self,
        shingle_size: int = defaults.SHINGLE_SIZE,
        chinese: ChineseUnits | str = defaults.CHINESE_UNITS,
        min_words: float = defaults.MIN_WORDS,
        idf: IdfTable | None = None,
        *,
        detect_format: bool = defaults.DETECT_FORMAT,
        main_content: bool = defaults.MAIN_CONTENT,
        sketch_shape: SketchShape | None = None,
        native: bool = True,
    ) -> None:
        """`idf` weighs the units of the search fingerprint (default: the table shipped with
        the package; with jieba words, jieba's own table for the Chinese ones), and by the
        square root of its count in the text (`damped`). With
        `detect_format`, a text whose format is not given is read as what it looks like
        (HTML, an e-mail, or text); without, as text. `main_content`: HTML without what
        looks like navigation, headers and footers. A short text keeps its units too
        (Fingerprint.line), which the index judges it by."""
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
        self.sketch_shape = sketch_shape or SketchShape(defaults.SKETCH_BINS, defaults.SKETCH_BITS)
        if idf is None:
            idf = jieba_table() if self.chinese is ChineseUnits.JIEBA else default_table()
        self.idf = idf
        self._native: NativeFingerprinter | None = None
        if native and self.chinese is ChineseUnits.CHARACTERS and self.tf == Fingerprinter.tf:
            self._native = native_fingerprinter(idf, shingle_size, self.sketch_shape)
        # Loads the tables (normalisation, jieba's dictionary, the IDF hashes) now rather than
        # on the first article, whose latency would pay for them.
        self("warm-up 预热 " * 20)

    @property
    def native(self) -> bool:
        """Whether the native extension computes the fingerprints (else numpy)."""
        return self._native is not None

    @property
    def fingerprint_spec(self) -> str:
        """Every setting that changes a fingerprint or a sketch (but the sketch's shape, which
        the index records itself), in one line: recorded with a shared index, which refuses a
        worker whose fingerprints would differ."""
        formats = "detected" if self.detect_format else "given"
        html = "without template or beside its article" if self.main_content else "all text"
        return (
            f"shingles {self.shingle_size}, chinese {self.chinese.value}, "
            f"min words {self.min_words:g}, tf {self.tf}, idf {self.idf.digest}, "
            f"formats {formats}, html {html}"
        )

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
        return self.many_read(
            [self.read(text, f) for text, f in zip(texts, given, strict=True)], texts
        )

    def many_read(
        self, read: Sequence[tuple[str, Format]], texts: Sequence[str]
    ) -> list[Fingerprint]:
        """Fingerprints of `texts` already read: `read` holds what `self.read` gave for each
        (the worker reads HTML and e-mail in a process of its own, with a deadline)."""
        if len(read) != len(texts):
            raise ValueError(f"got {len(read)} texts read for {len(texts)} texts")
        out = []
        for i in range(0, len(read), _CHUNK):
            chunk = read[i : i + _CHUNK]
            out += self._many([t for t, _ in chunk], [f for _, f in chunk], texts[i : i + _CHUNK])
        return out

    def read(self, text: str, format: Format | None = None) -> tuple[str, Format]:
        """What this fingerprinter counts of `text` (what a reader sees of it), and its format."""
        return reader_text(text, self.format_of(text, format), main_content=self.main_content)

    def format_of(self, text: str, format: Format | None = None) -> Format:
        """What `self.read` reads `text` as: `format`, else as it looks (with `detect_format`),
        else as text."""
        if format is not None:
            return Format(format)
        return detect(text) if self.detect_format else Format.TEXT

    def _many(
        self, texts: Sequence[str], formats: Sequence[Format], as_sent: Sequence[str]
    ) -> list[Fingerprint]:
        computed: Sequence[tuple[int | None, bytes | None]]
        # Per text: its content hash, words and units; then (search, sketch) of those long
        # enough: below the minimum length a SimHash is noise, and such texts get none.
        if self._native is not None:
            rows = self._native.many([folded_utf8(text) for text in texts])
            hash_and_lengths = [(h, words_of(n, chars), n) for h, n, chars, _, _, _ in rows]
            lines = [row[5] for row in rows]
            is_long_enough = [self._fits(words, n) for _, words, n in hash_and_lengths]
            computed = [
                (row[3], row[4]) for row, ok in zip(rows, is_long_enough, strict=True) if ok
            ]
        else:
            found = self._units(texts)
            hash_and_lengths = [(f.content_hash, f.words, len(f.hashes)) for f in found]
            is_long_enough = [self._fits(words, n) for _, words, n in hash_and_lengths]
            long_enough = [f for f, ok in zip(found, is_long_enough, strict=True) if ok]
            computed = self._fingerprints(long_enough) if long_enough else []
            lines = [line_of(f.hashes) for f in found]
        pairs = iter(computed)  # (search, sketch) of each text long enough
        out = []
        for text_as_sent, (content_hash, words, n), ok, format, line in zip(
            as_sent, hash_and_lengths, is_long_enough, formats, lines, strict=True
        ):
            search, sketch = next(pairs) if ok else (None, None)
            if not n:
                content_hash = xxhash.xxh3_128_digest(
                    _AS_SENT + text_as_sent.encode("utf-8", "replace")
                )
            out.append(Fingerprint(content_hash, search, words, sketch, format, line))
        return out

    def _fits(self, words: float, units: int) -> bool:
        return words >= self.min_words and units > 0

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

    def units_of(self, text: str) -> list[str]:
        """The units of a text as read (not markup), in order, as the search fingerprint takes
        them (what an IDF table counts)."""
        return units(normalized_tokens(text), self.chinese).items

    def _units_of(self, text: str) -> _Units:
        tokens = normalized_tokens(text)
        content_hash = xxhash.xxh3_128_digest(" ".join(tokens).encode("utf-8"))
        found = units(tokens, self.chinese)
        return _Units(content_hash, found.words, feature_hashes(found.items))

    def _fingerprints(self, texts: list[_Units]) -> list[tuple[int, bytes]]:
        """(search fingerprint, sketch) of each text."""
        hashes = np.concatenate([f.hashes for f in texts])
        counts = np.array([len(f.hashes) for f in texts], dtype=np.intp)
        search = simhashes(*self._weighted(hashes, counts))
        shingled = shingle_hashes_many(hashes, counts, self.shingle_size)
        return list(zip(search, sketches(*shingled, self.sketch_shape), strict=True))

    def _weighted(
        self, hashes: np.ndarray, counts: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The search fingerprint's features and weights: each unit once per text, weighted by
        its IDF times its count, damped."""
        weights = self.idf.weights_of(hashes)
        owner = np.repeat(np.arange(len(counts), dtype=np.intp), counts)
        # Each text's distinct units, in order, with their counts: sorted by (text, unit), a
        # new run starts wherever either changes (np.unique over rows sorts far slower).
        order = np.lexsort((hashes, owner))
        units, owners = hashes[order], owner[order]
        starts = np.flatnonzero(
            np.concatenate(([True], (units[1:] != units[:-1]) | (owners[1:] != owners[:-1])))
        )
        tf = np.diff(np.append(starts, len(units)))
        per_text = np.bincount(owners[starts], minlength=len(counts))
        return units[starts], per_text, weights[order[starts]] * self.damped(tf)

    def damped(self, counts: np.ndarray) -> np.ndarray:
        """A unit's count in a text as it weighs in the search fingerprint: its square root,
        so that a template's words repeated many times do not take the fingerprint over (a
        subclass that weighs it otherwise sets `tf` to say so, and computes without the native
        extension, which knows this one)."""
        return np.sqrt(counts.astype(np.float64))
