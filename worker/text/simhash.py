"""64-bit SimHash (Charikar 2002): each feature's xxh3_64 hash votes +weight on the bits it has set
and -weight on the others; a fingerprint bit is 1 where the sum is positive.

Fingerprints are unsigned 64-bit Python ints; bit j is the j-th least significant bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

from worker.model import SIMHASH_BITS

BITS = SIMHASH_BITS


def simhash(features: Sequence[str], weights: Sequence[float] | None = None) -> int:
    """SimHash of `features` (each feature's xxh3_64 hash votes, with its weight, default 1).
    Empty input gives 0."""
    return simhash_of(feature_hashes(features), weights)


def feature_hashes(features: Sequence[str]) -> np.ndarray:
    """xxh3_64 of each feature's UTF-8 bytes, as unsigned 64-bit integers."""
    return np.fromiter(
        map(xxhash.xxh3_64_intdigest, map(str.encode, features)), dtype="<u8", count=len(features)
    )


def shingle_hashes(unit_hashes: np.ndarray, size: int) -> np.ndarray:
    """A hash for each run of `size` consecutive units, from the units' own hashes (so a text's
    units are hashed once for both of its fingerprints): each unit's hash rotated by its place
    in the run, XORed, then mixed (MurmurHash3's 64-bit finaliser). A text shorter than one
    shingle gets one feature of all its units."""
    return shingle_hashes_many(unit_hashes, np.array([len(unit_hashes)]), size)[0]


def shingle_hashes_many(
    unit_hashes: np.ndarray, counts: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """`shingle_hashes` of several texts in one pass: `unit_hashes` holds the texts' unit
    hashes one text after another, `counts[i]` of text i. Returns the shingle hashes laid out
    the same way, and their counts. (At one text's size numpy's cost per call, not per element,
    dominates: one pass over a batch costs about what one text did.)"""
    if len(counts) == 0:
        return unit_hashes[:0], counts
    if counts.min() < size:  # some text shorter than a shingle: rare, done singly
        parts = [_shingles_of_one(h, size) for h in np.split(unit_hashes, np.cumsum(counts)[:-1])]
        return np.concatenate(parts), np.array([len(p) for p in parts])
    n = len(unit_hashes) - size + 1
    mixed = _mix(_combine(unit_hashes, size, n))
    # Keep the runs that start and end inside one text.
    place = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)[:n]
    keep = place < np.repeat(counts - size + 1, counts)[:n]
    return mixed[keep], counts - size + 1


def _shingles_of_one(unit_hashes: np.ndarray, size: int) -> np.ndarray:
    n = len(unit_hashes) - size + 1
    if n <= 0:
        return _mix(np.bitwise_xor.reduce(unit_hashes, keepdims=True))
    return _mix(_combine(unit_hashes, size, n))


ROTATION = 21  # bits by which each next unit of a shingle is rotated


def _combine(hashes: np.ndarray, size: int, n: int) -> np.ndarray:
    combined = hashes[:n].copy()
    for i in range(1, size):
        part = hashes[i : i + n]
        r = (ROTATION * i) % BITS
        if r:
            combined ^= (part << np.uint64(r)) | (part >> np.uint64(BITS - r))
        else:
            combined ^= part
    return combined


_C1, _C2, _S33 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53), np.uint64(33)


def _mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> _S33)
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def simhash_of(hashes: np.ndarray, weights: Sequence[float] | None = None) -> int:
    """SimHash of features given by their 64-bit hashes (see `simhash`)."""
    if weights is not None and len(weights) != len(hashes):
        raise ValueError(
            f"got {len(weights)} weights for {len(hashes)} features; pass one per feature"
        )
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    return simhashes(np.asarray(hashes, dtype="<u8"), np.array([len(hashes)]), w)[0]


# Row v: the bits of byte value v, least significant first.
_BYTE_BITS = np.unpackbits(
    np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little"
).astype(np.float64)
_BYTE_SLOTS = np.arange(8, dtype=np.intp) * 256


def simhashes(
    hashes: np.ndarray, counts: np.ndarray, weights: np.ndarray | None = None
) -> list[int]:
    """SimHash of several groups of features in one pass: `hashes` holds the groups' feature
    hashes one group after another, `counts[i]` of group i; `weights` (default 1 each) is laid
    out like `hashes`.

    Rather than unpack every hash into 64 bits, it tallies the weight of each byte value at each
    of the 8 byte places of a group, then turns each place's 256 tallies into its 8 bit votes
    with one product: 8 x 256 cells per group instead of 64 per feature."""
    k = len(counts)
    if k == 0:
        return []
    # cells[i, p]: the tally slot of feature i's byte p (group, place, byte value)
    cells = np.repeat(
        np.arange(k, dtype=np.intp)[:, None] * (8 * 256) + _BYTE_SLOTS, counts, axis=0
    )
    cells += np.ascontiguousarray(hashes, dtype="<u8").view(np.uint8).reshape(-1, 8)
    totals: np.ndarray = np.asarray(counts, dtype=np.float64)  # the weight of each group
    w = None
    if weights is not None:
        totals = np.bincount(np.repeat(np.arange(k), counts), weights=weights, minlength=k)
        w = np.repeat(weights, 8)
    tally = np.bincount(cells.ravel(), weights=w, minlength=k * 8 * 256)
    votes = (tally.reshape(k * 8, 256) @ _BYTE_BITS).reshape(k, BITS)  # sum of w where bit set
    positive = 2 * votes > totals[:, None]  # +w over set bits, -w over clear bits > 0
    out: list[int] = np.packbits(positive, axis=1, bitorder="little").view("<u8")[:, 0].tolist()
    return out


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two fingerprints."""
    return (a ^ b).bit_count()


def to_hex(fingerprint: int) -> str:
    """16 lower-case hex digits, as fingerprints are written in JSON."""
    return f"{fingerprint:016x}"


def to_bytes(fingerprint: int) -> bytes:
    """8 bytes, big-endian, as fingerprints are stored in the index."""
    return fingerprint.to_bytes(8, "big")


def from_bytes(raw: bytes) -> int:
    return int.from_bytes(raw, "big")
