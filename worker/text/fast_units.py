"""The units of a batch of texts, found and hashed in numpy, without a Python object per unit.

Equal to `features.units(normalize.normalized_tokens(text))` with characters as units for
scripts written without spaces (the default, not jieba words), each unit hashed with
xxh3_64, and the text's content hash; but done over one buffer holding the whole batch. Each
text is folded by `normalize.folded_utf8` (one C-level pass or a few); units are then found by
comparing neighbouring characters (such a character is a unit of its own; other units run
from a space or such a character to the next), and worker.text.xxh3 hashes them all at once
(only units over 16 bytes one by one): a Python step per word was most of the cost of
fingerprinting.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from worker.text.features import CHARACTER_RANGES, words_of
from worker.text.normalize import folded_utf8
from worker.text.xxh3 import MAX_LENGTH, xxh3_64

_SPACE = ord(" ")
_PADDING = b" " * 16  # worker.text.xxh3 reads 8 bytes wide, from up to 8 before a unit to 16 after


@dataclass(frozen=True)
class FastUnits:
    content_hashes: list[bytes]  # xxh3_128 of each text's normalised form
    hashes: np.ndarray  # xxh3_64 of each unit, the texts' units one text after another
    counts: np.ndarray  # each text's number of units
    words: list[float]  # each text's length in words (such a character counts as half)


def fast_units(texts: Sequence[str]) -> FastUnits:
    folded = [folded_utf8(text) for text in texts]
    joined = b" ".join(folded)  # a space between texts: no unit runs from one into the next
    buffer = np.frombuffer(_PADDING + joined + _PADDING, dtype=np.uint8)
    if joined.isascii():  # one byte per character, and no character units
        chars = buffer[len(_PADDING) : -len(_PADDING)]
        han = np.zeros(len(chars), dtype=bool)
        offsets = np.arange(len(chars) + 1) + len(_PADDING)
    else:
        chars = np.frombuffer(joined.decode("utf-8").encode("utf-32-le"), dtype="<u4")
        han = np.zeros(len(chars), dtype=bool)
        for low, high in CHARACTER_RANGES:
            han |= (chars >= low) & (chars <= high)
        widths = 1 + (chars >= 0x80) + (chars >= 0x800) + (chars >= 0x10000)  # UTF-8 bytes
        offsets = np.concatenate(([0], np.cumsum(widths))) + len(_PADDING)

    # A unit starts at a non-space after a space, at a character unit, or after one; it ends
    # likewise. Both are flagged per character, so the n-th start and the n-th end pair up.
    space = chars == _SPACE
    edge_before = np.concatenate(([True], space[:-1] | han[:-1])) | han
    edge_after = np.concatenate((space[1:] | han[1:], [True])) | han
    first = np.flatnonzero(~space & edge_before)
    last = np.flatnonzero(~space & edge_after)
    starts, ends = offsets[first], offsets[last + 1]  # in bytes, in `buffer`

    char_starts = np.cumsum([0] + [len(f) + 1 for f in folded[:-1]])  # where each text starts
    if not joined.isascii():
        char_starts = np.searchsorted(offsets - len(_PADDING), char_starts)
    text = np.searchsorted(char_starts, first, side="right") - 1
    counts = np.bincount(text, minlength=len(texts))
    han_counts = np.bincount(text, weights=han[first].astype(np.float64), minlength=len(texts))
    # An int for a text without character units, as features.units gives (the "words" of messages)
    words = [words_of(n, int(h)) for n, h in zip(counts.tolist(), han_counts.tolist(), strict=True)]

    lengths = ends - starts
    hashes = np.empty(len(starts), dtype=np.uint64)
    short = lengths <= MAX_LENGTH
    hashes[short] = xxh3_64(buffer, starts[short], lengths[short])
    for i in np.flatnonzero(~short).tolist():
        hashes[i] = xxhash.xxh3_64_intdigest(buffer[starts[i] : ends[i]].tobytes())
    return FastUnits(_content_hashes(buffer, starts, ends, counts), hashes, counts, words)


def _content_hashes(
    buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray, counts: np.ndarray
) -> list[bytes]:
    """xxh3_128 of each text's normalised form: its units' bytes, runs of spaces as one space
    (a unit boundary without a space, e.g. between character units, stays as it is)."""
    spaces = buffer == _SPACE
    keep = ~spaces
    keep[1:] |= ~spaces[:-1]  # every byte that is not a space, and the first space of a run
    collapsed = buffer[keep].tobytes()
    position = np.cumsum(keep) - 1  # where each kept byte lands in `collapsed`
    first = np.cumsum(counts) - counts  # each text's first unit
    last = np.maximum(first + counts - 1, 0)
    if not len(starts):
        return [xxhash.xxh3_128_digest(b"")] * len(counts)
    begins = position[starts[first.clip(max=len(starts) - 1)]]
    stops = position[ends[last] - 1] + 1
    return [
        xxhash.xxh3_128_digest(collapsed[b:e] if n else b"")
        for b, e, n in zip(begins.tolist(), stops.tolist(), counts.tolist(), strict=True)
    ]
