"""XXH3-64 (seed 0) of many short byte strings at once, in numpy: the same values as
`xxhash.xxh3_64_intdigest`, for strings of 1 to 16 bytes (words, nearly always).

A port of xxHash 0.8's `XXH3_len_1to3_64b`, `XXH3_len_4to8_64b` and `XXH3_len_9to16_64b`; each
string is read where those functions read it, from one byte buffer. tests/test_xxh3.py checks
every length against the xxhash package.
"""

from __future__ import annotations

import numpy as np

MAX_LENGTH = 16

# The first 56 bytes of XXH3's default secret (kSecret), as the little-endian words read here.
_SECRET = bytes.fromhex(
    "b8fe6c3923a44bbe7c01812cf721ad1cded46de9839097db7240a4a4b7b3671f"
    "cb79e64eccc0e578825ad07dccff7221b8084674f743248e"
)
_U32 = np.frombuffer(_SECRET[:8], dtype="<u4").astype(np.uint64)
_U64 = np.frombuffer(_SECRET[8:56], dtype="<u8")  # secret + 8, + 16, ... + 48

_BITFLIP_1TO3 = _U32[0] ^ _U32[1]
_BITFLIP_4TO8 = _U64[0] ^ _U64[1]
_BITFLIP_9TO16_LO = _U64[2] ^ _U64[3]
_BITFLIP_9TO16_HI = _U64[4] ^ _U64[5]

_PRIME64_2 = np.uint64(0xC2B2AE3D27D4EB4F)
_PRIME64_3 = np.uint64(0x165667B19E3779F9)
_PRIME_MX1 = np.uint64(0x165667919E3779F9)
_PRIME_MX2 = np.uint64(0x9FB21C651E98DF25)
_LOW32 = np.uint64(0xFFFFFFFF)


def _u(n: int) -> np.uint64:
    return np.uint64(n)


def xxh3_64(buffer: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """XXH3-64 of `buffer[starts[i]:starts[i] + lengths[i]]` for each i, as uint64.

    `buffer` is uint8 with at least 8 bytes before the end of every string and 16 after its
    start (reads are 8 bytes wide); every length must be 1..16."""
    if len(lengths) and (lengths.min() < 1 or lengths.max() > MAX_LENGTH):
        raise ValueError(f"lengths must be 1..{MAX_LENGTH}; hash others with xxhash")
    # The strings grouped by length class (1-3, 4-8, 9-16 bytes), so that each class's
    # formula runs on a contiguous slice: half the time of picking each class by a mask.
    classes = (lengths >= 4).astype(np.int8) + (lengths >= 9)
    order = np.argsort(classes, kind="stable")  # (a radix sort, for int8)
    starts, lengths = starts[order], lengths[order]
    ends = np.searchsorted(classes[order], [1, 2, 3]).tolist()  # each class's end
    first = _read64(buffer, starts)  # a string's first 8 bytes (and what follows it)
    last = _read64(buffer, starts + lengths - 8)  # its last 8 bytes (and what precedes it)
    n = lengths.astype(np.uint64)
    out = np.empty(len(lengths), dtype=np.uint64)
    begin = 0
    for end, part in zip(ends, (_len_1to3, _len_4to8, _len_9to16), strict=True):
        if end > begin:
            out[order[begin:end]] = part(first[begin:end], last[begin:end], n[begin:end])
        begin = end
    return out


def _read64(buffer: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The little-endian 64-bit word at each byte offset, from two aligned words."""
    aligned = buffer[: len(buffer) // 8 * 8].view("<u8")
    index = offsets >> 3
    shift = ((offsets & 7) << 3).astype(np.uint64)
    # numpy shifts by 64 give 0, so an aligned offset takes nothing from the next word
    words: np.ndarray = (aligned[index] >> shift) | (aligned[index + 1] << (_u(64) - shift))
    return words


def _len_1to3(first: np.ndarray, last: np.ndarray, n: np.ndarray) -> np.ndarray:
    c1 = first & _u(0xFF)
    c2 = (first >> ((n >> _u(1)) << _u(3))) & _u(0xFF)  # the byte at n // 2
    c3 = last >> _u(56)  # the last byte
    combined = (c1 << _u(16)) | (c2 << _u(24)) | c3 | (n << _u(8))
    return _xxh64_avalanche(combined ^ _BITFLIP_1TO3)


def _len_4to8(first: np.ndarray, last: np.ndarray, n: np.ndarray) -> np.ndarray:
    input1 = first & _LOW32  # the first 4 bytes
    input2 = last >> _u(32)  # the last 4
    x = (input2 + (input1 << _u(32))) ^ _BITFLIP_4TO8
    x ^= _rotl(x, 49) ^ _rotl(x, 24)  # rrmxmx
    x *= _PRIME_MX2
    x ^= (x >> _u(35)) + n
    x *= _PRIME_MX2
    hashes: np.ndarray = x ^ (x >> _u(28))
    return hashes


def _len_9to16(first: np.ndarray, last: np.ndarray, n: np.ndarray) -> np.ndarray:
    lo = first ^ _BITFLIP_9TO16_LO
    hi = last ^ _BITFLIP_9TO16_HI
    acc = n + lo.byteswap() + hi + _mul128_fold64(lo, hi)
    acc ^= acc >> _u(37)  # XXH3_avalanche
    acc *= _PRIME_MX1
    hashes: np.ndarray = acc ^ (acc >> _u(32))
    return hashes


def _xxh64_avalanche(h: np.ndarray) -> np.ndarray:
    h = h ^ (h >> _u(33))
    h *= _PRIME64_2
    h ^= h >> _u(29)
    h *= _PRIME64_3
    hashes: np.ndarray = h ^ (h >> _u(32))
    return hashes


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    rotated: np.ndarray = (x << _u(r)) | (x >> _u(64 - r))
    return rotated


def _mul128_fold64(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The 128-bit product's low 64 bits XOR its high 64 bits, from 32-bit halves."""
    a0, a1, b0, b1 = a & _LOW32, a >> _u(32), b & _LOW32, b >> _u(32)
    p00, p01, p10, p11 = a0 * b0, a0 * b1, a1 * b0, a1 * b1
    middle = (p00 >> _u(32)) + (p01 & _LOW32) + (p10 & _LOW32)
    high = p11 + (p01 >> _u(32)) + (p10 >> _u(32)) + (middle >> _u(32))
    folded: np.ndarray = (a * b) ^ high
    return folded
