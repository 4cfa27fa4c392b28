"""Short lines (titles, commit messages, changelog entries): texts of LINE_MIN_UNITS to
LINE_MAX_UNITS units, judged by their words rather than by a sketch. Pure.

A line of a dozen words has too few shingles for a sketch to estimate anything: one changed
word changes a third of them. So a line keeps its units themselves, each as a 16-bit hash
(`line_of`), and two lines are near-duplicates when few units need changing to turn one
into the other (`line_rule`: word-level edit distance). Candidates come from bands of a
MinHash over the units (`line_keys`): 16 bands of 2 hash functions each, so that lines
sharing half their units meet with probability 1 - (1 - 0.5^2)^16 ~ 0.99.
"""

from __future__ import annotations

import math

import numpy as np
from rapidfuzz.distance import Levenshtein

LINE_MIN_UNITS = 4  # a line losing a word of five still has a line
LINE_MAX_UNITS = 20  # longer texts have shingles enough for the sketch
LINE_BANDS = 16
LINE_NEWEST = 32  # a line bucket's newest postings read, each a candidate (band layouts: theirs)
LINE_NEAR_LONG = 7  # lines of this many units may differ by two (line_rule)
_ROWS = 2
_rng = np.random.default_rng(20261205)  # (fixed: every process keys a line alike)
# Multiply-shift hashing (Dietzfelbinger): the top 32 bits of a * u + c mod 2^64.
_MULTIPLY = _rng.integers(0, 2**63, size=LINE_BANDS * _ROWS, dtype=np.uint64) * 2 + 1
_ADD = _rng.integers(0, 2**63, size=LINE_BANDS * _ROWS, dtype=np.uint64)
_SHIFT = np.uint64(32)


def line_of(unit_hashes: np.ndarray) -> bytes | None:
    """A text's line (its units' 64-bit hashes, in order, each kept to 16 bits), or None
    when it has fewer than LINE_MIN_UNITS or more than LINE_MAX_UNITS units."""
    if not LINE_MIN_UNITS <= len(unit_hashes) <= LINE_MAX_UNITS:
        return None
    return (unit_hashes.astype(np.uint64) & np.uint64(0xFFFF)).astype(">u2").tobytes()


def units_in(line: bytes) -> np.ndarray:
    return np.frombuffer(line, dtype=">u2").astype(np.uint64)


def line_keys(line: bytes) -> list[int]:
    """The line's band keys: band b's number, then the minima of its two hash functions
    over the line's distinct units (32 bits each)."""
    units = np.unique(units_in(line))
    hashed = ((units[:, None] * _MULTIPLY + _ADD) >> _SHIFT).min(axis=0).reshape(LINE_BANDS, _ROWS)
    return [(b << 64) | (int(lo) << 32) | int(hi) for b, (lo, hi) in enumerate(hashed)]


def line_distance(a: bytes, b: bytes) -> int:
    """Units to insert, delete or replace to turn one line into the other."""
    return int(Levenshtein.distance(units_in(a).tolist(), units_in(b).tolist()))


def line_rule(distance: int, a: bytes, b: bytes) -> bool:
    """Whether lines this far apart are near-duplicates: one unit changed, or two in lines
    of 7 units or more."""
    longer = max(len(a), len(b)) // 2
    return distance <= 1 or (distance <= 2 and longer >= LINE_NEAR_LONG)


def line_similarity(a: bytes, b: bytes) -> float:
    """The Jaccard similarity of the two lines' sets of units, in hundredths (as the Redis
    index stores it)."""
    x, y = set(units_in(a).tolist()), set(units_in(b).tolist())
    return math.floor(len(x & y) / len(x | y) * 100 + 0.5) / 100 if x | y else 1.0
