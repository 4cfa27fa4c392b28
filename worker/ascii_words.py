"""The words of ASCII texts, a batch at a time, without a Python object per word.

Equal to normalising each text (worker.normalize), splitting it into words and hashing each
word with xxh3_64, but done in numpy over one buffer that holds the whole batch: the bytes are
folded (lower case, punctuation to spaces) by one bytes.translate, words are the runs of
non-space bytes, and worker.xxh3 hashes them all at once. Only words over 16 bytes are hashed
one by one. English news is nearly all ASCII, and this is most of its fingerprinting cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import xxhash

from worker.normalize import ascii_table
from worker.xxh3 import MAX_LENGTH, xxh3_64

_SPACE = ord(" ")
_PADDING = b" " * 16  # worker.xxh3 reads 8 bytes wide, from up to 8 before a word to 16 after


@dataclass(frozen=True)
class AsciiWords:
    content_hashes: list[bytes]  # xxh3_128 of each text's normalised form
    hashes: np.ndarray  # xxh3_64 of each word, the texts' words one text after another
    counts: np.ndarray  # each text's number of words


def ascii_words(texts: Sequence[str]) -> AsciiWords:
    """`texts` must be ASCII (`str.isascii`)."""
    folded = [text.encode("ascii").translate(ascii_table()) for text in texts]
    joined = b" ".join(folded)  # a space between texts: no word runs from one into the next
    buffer = np.frombuffer(_PADDING + joined + _PADDING, dtype=np.uint8)
    in_word = (buffer != _SPACE).view(np.int8)
    edges = np.diff(in_word, prepend=np.int8(0))  # 1 where a word starts, -1 just after it
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = ends - starts

    text_starts = np.cumsum([len(_PADDING)] + [len(f) + 1 for f in folded[:-1]])
    counts = np.bincount(np.searchsorted(text_starts, starts, side="right") - 1,
                         minlength=len(texts))

    hashes = np.empty(len(starts), dtype=np.uint64)
    short = lengths <= MAX_LENGTH
    hashes[short] = xxh3_64(buffer, starts[short], lengths[short])
    for i in np.flatnonzero(~short).tolist():
        hashes[i] = xxhash.xxh3_64_intdigest(buffer[starts[i]:ends[i]].tobytes())
    return AsciiWords(_content_hashes(buffer, starts, ends, counts), hashes, counts)


def _content_hashes(buffer: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                    counts: np.ndarray) -> list[bytes]:
    """xxh3_128 of each text's words joined by single spaces, i.e. of `normalize(text)`."""
    in_word = buffer != _SPACE
    keep = in_word.copy()
    keep[1:] |= in_word[:-1]  # a word's bytes and the first space after it
    collapsed = buffer[keep].tobytes()
    position = np.cumsum(keep) - 1  # where each kept byte lands in `collapsed`
    first = np.cumsum(counts) - counts  # each text's first word
    last = np.maximum(first + counts - 1, 0)
    begins = position[starts[first.clip(max=len(starts) - 1)]] if len(starts) else first
    stops = position[ends[last] - 1] + 1 if len(starts) else first
    return [xxhash.xxh3_128_digest(collapsed[b:e] if n else b"")
            for b, e, n in zip(begins.tolist(), stops.tolist(), counts.tolist(), strict=True)]
