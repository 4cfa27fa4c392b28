"""A small sketch of a text's set of shingles, from which the Jaccard similarity of two texts'
sets is estimated: one-permutation MinHash (Li, Owen, Zhang 2012) with densification by
rotation (Shrivastava, Li 2014), keeping `bits` low bits of each bin's minimum (b-bit
MinHash, Li, König 2010). Pure: numpy only.

Each shingle's 64-bit hash picks a bin by its top bits and competes there with its other
bits; a bin no shingle fell in takes the value of the next non-empty bin to its right (one
step further each), so that short texts still fill every bin. Two texts agree on a bin with
probability about their Jaccard similarity, plus 2^-bits by chance; `similarity` corrects for
that.

SimHash counts repeated features (a template's markup, a newsletter's boilerplate) as often
as they occur; a set sketch counts each shingle once, which is what "how much do these two
texts share" means.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_EMPTY = np.uint64(2**64 - 1)
_ROTATE = np.uint64(0x9E3779B97F4A7C15)  # added once per bin a rotated value moves


@dataclass(frozen=True)
class SketchShape:
    bins: int = 64
    bits: int = 8

    def __post_init__(self) -> None:
        # (One bin would leave no bits of a hash to pick it by.)
        if self.bins < 2 or self.bins & (self.bins - 1) or self.bins > 1024:
            raise ValueError(f"bins must be a power of two from 2 to 1024, got {self.bins}")
        if self.bits not in (8, 16, 32):
            raise ValueError(f"bits must be 8, 16 or 32, got {self.bits}")

    @property
    def nbytes(self) -> int:
        return self.bins * self.bits // 8

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(f">u{self.bits // 8}")

    def spec(self) -> str:
        """E.g. "oph64x8": stored with the index, so that another shape is refused."""
        return f"oph{self.bins}x{self.bits}"


def sketches(hashes: np.ndarray, counts: np.ndarray, shape: SketchShape) -> list[bytes]:
    """The sketch of each of several texts whose shingle hashes are laid out one text after
    another in `hashes` (`counts[i]` of text i)."""
    k = len(counts)
    if k == 0:
        return []
    shift = np.uint64(64 - shape.bins.bit_length() + 1)
    bins = (hashes >> shift).astype(np.intp)
    values = hashes & ((np.uint64(1) << shift) - np.uint64(1))
    owner = np.repeat(np.arange(k, dtype=np.intp), counts)
    table = np.full(k * shape.bins, _EMPTY, dtype=np.uint64)
    np.minimum.at(table, owner * shape.bins + bins, values)
    table = _densified(table.reshape(k, shape.bins))
    kept = (table & np.uint64((1 << shape.bits) - 1)).astype(shape.dtype)
    return [row.tobytes() for row in kept]


def _densified(table: np.ndarray) -> np.ndarray:
    """Every empty bin takes the value of the next non-empty bin to its right (wrapping
    round), changed once per bin it moved; a text with no shingle keeps its empty bins."""
    k, n = table.shape
    empty = table == _EMPTY
    if not empty.any():
        return table
    place = np.where(empty, 2 * n, np.arange(n))
    doubled = np.concatenate([place, place + n], axis=1)  # (positions wrap round)
    doubled = np.where(doubled >= 2 * n, 4 * n, doubled)
    nearest = np.minimum.accumulate(doubled[:, ::-1], axis=1)[:, ::-1][:, :n]
    whole = nearest >= 4 * n  # no shingle at all
    nearest = np.where(whole, np.arange(n), nearest)
    source = table[np.arange(k)[:, None], nearest % n]
    moved = (nearest - np.arange(n)).astype(np.uint64)
    filled = np.where(empty & ~whole, source + moved * _ROTATE, table)
    result: np.ndarray = filled
    return result


def estimate(agreeing: int, shape: SketchShape) -> float:
    """The estimated Jaccard similarity of two sets whose sketches agree on `agreeing` bins."""
    chance = 2.0**-shape.bits
    return max(0.0, (agreeing / shape.bins - chance) / (1.0 - chance))


def bins_needed(similarity: float, shape: SketchShape) -> int:
    """The fewest agreeing bins whose estimate is at least `similarity` (what the index
    compares, in integers on both sides of the Lua boundary)."""
    chance = 2.0**-shape.bits
    need = similarity * (1.0 - chance) + chance
    n = 0
    while n <= shape.bins and n < need * shape.bins - 1e-9:
        n += 1
    return n


def agreeing_bins(a: bytes, b: bytes, shape: SketchShape) -> int:
    """How many bins two sketches agree on."""
    x = np.frombuffer(a, dtype=shape.dtype)
    y = np.frombuffer(b, dtype=shape.dtype)
    return int(np.count_nonzero(x == y))


def similarity(a: bytes, b: bytes, shape: SketchShape) -> float:
    """The estimated Jaccard similarity of the two sketches' sets."""
    return estimate(agreeing_bins(a, b, shape), shape)
