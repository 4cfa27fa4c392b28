"""64-bit SimHash (Charikar 2002): each feature's xxh3_64 hash votes +weight on the bits it has set
and -weight on the others; a fingerprint bit is 1 where the sum is positive.

Fingerprints are unsigned 64-bit Python ints; bit j is the j-th least significant bit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xxhash

BITS = 64
MASK = (1 << BITS) - 1


def simhash(features: Sequence[str], weights: Sequence[float] | None = None) -> int:
    """SimHash of `features` (vectorised; equal to `simhash_reference`). Empty input gives 0."""
    return simhash_of(feature_hashes(features), weights)


def feature_hashes(features: Sequence[str]) -> np.ndarray:
    """xxh3_64 of each feature's UTF-8 bytes, as unsigned 64-bit integers."""
    return np.array([xxhash.xxh3_64_intdigest(f.encode("utf-8")) for f in features], dtype="<u8")


def shingle_hashes(unit_hashes: np.ndarray, size: int) -> np.ndarray:
    """A hash for each run of `size` consecutive units, from the units' own hashes (so a text's
    units are hashed once for both of its fingerprints): each unit's hash rotated by its place
    in the run, XORed, then mixed (MurmurHash3's 64-bit finaliser)."""
    n = len(unit_hashes) - size + 1
    if n <= 0:
        return _mix(np.bitwise_xor.reduce(unit_hashes, keepdims=True))
    combined = unit_hashes[:n].copy()
    for i in range(1, size):
        combined ^= _rotl(unit_hashes[i:i + n], (ROTATION * i) % BITS)
    return _mix(combined)


ROTATION = 21  # bits by which each next unit of a shingle is rotated


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return x if r == 0 else (x << np.uint64(r)) | (x >> np.uint64(BITS - r))


def _mix(x: np.ndarray) -> np.ndarray:
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xFF51AFD7ED558CCD)
    x = x ^ (x >> np.uint64(33))
    x = x * np.uint64(0xC4CEB9FE1A85EC53)
    mixed: np.ndarray = x ^ (x >> np.uint64(33))
    return mixed


def simhash_of(hashes: np.ndarray, weights: Sequence[float] | None = None) -> int:
    """SimHash of features given by their 64-bit hashes (see `simhash`)."""
    n = len(hashes)
    if n == 0:
        return 0
    if weights is not None and len(weights) != n:
        raise ValueError(f"got {len(weights)} weights for {n} features; pass one per feature")
    hashes = np.ascontiguousarray(hashes, dtype="<u8")
    # Little-endian bytes, bits unpacked least significant first: column j is bit j.
    bits = np.unpackbits(hashes.view(np.uint8), bitorder="little").reshape(n, BITS)
    if weights is None:
        positive = 2 * bits.sum(axis=0, dtype=np.int32) > n
    else:
        w = np.asarray(weights, dtype=np.float64)
        positive = w @ bits > 0.5 * w.sum()  # sum of +w over set bits, -w over clear bits > 0
    return int(np.packbits(positive, bitorder="little").view("<u8")[0])


def simhash_reference(features: Sequence[str], weights: Sequence[float] | None = None) -> int:
    """The plain bit-by-bit definition, kept as the oracle that `simhash` is tested against."""
    votes = [0.0] * BITS
    for i, feature in enumerate(features):
        h = xxhash.xxh3_64_intdigest(feature.encode("utf-8"))
        w = 1.0 if weights is None else weights[i]
        for j in range(BITS):
            votes[j] += w if (h >> j) & 1 else -w
    return sum(1 << j for j in range(BITS) if votes[j] > 0)


def hamming(a: int, b: int) -> int:
    """Number of differing bits between two fingerprints."""
    return (a ^ b).bit_count()


def to_hex(fingerprint: int) -> str:
    """16 lower-case hex digits, as fingerprints are written in JSON."""
    return f"{fingerprint:016x}"


def from_hex(text: str) -> int:
    if len(text) != 16:
        raise ValueError(f"a fingerprint is 16 hex digits, got {text!r}")
    return int(text, 16)


def to_bytes(fingerprint: int) -> bytes:
    """8 bytes, big-endian, as fingerprints are stored in the index."""
    return fingerprint.to_bytes(8, "big")


def from_bytes(raw: bytes) -> int:
    return int.from_bytes(raw, "big")
