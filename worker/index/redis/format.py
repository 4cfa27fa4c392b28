"""How the index stores articles in Redis: the one description of its bytes on the Python
side. lua/lib.lua spells the same layout for the scripts, and a test runs it on Redis and
compares the two.

A bucket (one string per table key) is a run of fixed-size entries, appended in the order
articles are indexed. Each article decided has a record (in the docs hash, by id): its
verdict, and, for an indexed one, its sequence number and its set sketch (stored once, not in
every table). The ring of recent inserts holds the entry of sequence number s in slot
(s - 1) % RECENT_SLOTS.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from worker import defaults
from worker.model import Kind
from worker.text.lines import line_keys

# Bump when the record, the entry or the key layout changes: an index of another format is
# refused (it is stored with the layout). Tables and bands count apart, so that a change to
# one does not make users of the other rebuild.
LAYOUT_FORMAT = "11"
BANDS_FORMAT = "12"

# A sequence number is NUMBER_BYTES big-endian: 2^48 numbers, ~890 years of 10,000 new
# articles a second, so the counter never wraps. Zero means "none".
NUMBER_BYTES = 6
LAST_NUMBER = 2 ** (8 * NUMBER_BYTES) - 1
ENTRY = np.dtype(
    [
        ("fingerprint", ">u8"),  # the search fingerprint
        ("seq_high", ">u2"),  # the article's sequence number: its high 16 bits,
        ("seq_low", ">u4"),  # and its low 32 (numpy has no 6-byte integer: entry_numbers)
        ("seen_s", ">u4"),  # when it was indexed (or renewed), unix seconds: for expiry
    ]
)
ENTRY_BYTES = ENTRY.itemsize
RECENT_SLOTS = 65536
# A removed article's entry keeps its number in the ring, its fingerprint and seen time zeroed;
# an entry's first RING_CHECK bytes (the fingerprint and the number) tell whose slot it is.
RING_CHECK = 8 + NUMBER_BYTES
SKETCH_BYTES = defaults.SKETCH_BINS * defaults.SKETCH_BITS // 8
# Band layouts: the buckets of a band whose keys agree on their first `groups` bits share a
# group string (a key costs Redis more than a dozen postings). A posting there is its
# bucket's check (the key's other bits, in whole bytes), then the article's sequence number
# (lua/postings.lua); when it was indexed is in its record. A short line's keys are 4 bytes
# per band (band_calls.py).
POSTING_TAIL = NUMBER_BYTES
LINE_KEY_BYTES = 4
GROUP_POSTINGS = 64  # postings per group string at the expected index size
MIN_GROUP_BITS, MAX_GROUP_BITS = 8, 24
# The ids by number and the first article of each text live in small hashes, which Redis
# keeps compact (a listpack) up to hash-max-listpack-entries fields (128 by default) of at
# most hash-max-listpack-value bytes (64): IDS_PER_HASH numbers to a hash, and about
# EXACT_PER_HASH texts at the expected index size (room to grow fourfold). keys.py names them.
IDS_PER_HASH = 64
EXACT_PER_HASH = 32
# A match without a distance (a short line whose match has no fingerprint, or has none
# itself) stores this one.
NO_DISTANCE = 255
# A short line's match stores in `agreeing` this plus the lines' similarity in hundredths.
LINE_SIMILARITY = 100


@dataclass(frozen=True)
class Field:
    start: int  # 0-based byte offset
    size: int  # bytes


# A record: the content hash, the article's own fingerprint and sketch, its verdict, and
# where it is; then the ids of its match and of its cluster's first article (empty for a
# unique or related article, whose cluster starts at itself); then, with FLAG_MATCH, the
# matched article's fingerprint (MATCH_BYTES). A unique article's record is the fixed part
# alone, 124 bytes: with Redis's string header, it fills a 128-byte allocation.
RECORD = {
    "content_hash": Field(0, 16),
    "fingerprint": Field(16, 8),  # zeros without one (see FLAG_FINGERPRINT)
    "kind": Field(24, 1),  # KIND_CODES
    "flags": Field(25, 1),
    "distance": Field(26, 1),
    "agreeing": Field(27, 1),  # sketch bins it agrees on with its match
    "seen_ms": Field(28, 8),  # when first decided, unix ms, a big-endian double
    "seq": Field(36, NUMBER_BYTES),  # the sequence number; zeros: in no bucket (an exact copy)
    "alive_s": Field(42, 4),  # when its retention started (decided or renewed), unix s
    "position": Field(46, 12),  # the message's input partition (4) and offset (8); NO_POSITION
    "sketch": Field(58, SKETCH_BYTES),  # zeros without one
    "duplicate_of_length": Field(58 + SKETCH_BYTES, 2),
}
IDS_START = 60 + SKETCH_BYTES  # then duplicate_of, UTF-8, then the cluster's first article's id
MATCH_BYTES = 8
NO_POSITION = b"\xff" * 12  # decided outside a stream (scan, backfill)
FLAG_FINGERPRINT = 1  # the article has a fingerprint (and a sketch)
FLAG_MATCH = 2  # the record holds the matched article's fingerprint
KIND_CODES = {Kind.UNIQUE: 0, Kind.EXACT: 1, Kind.NEAR: 2, Kind.RELATED: 3}


def group_bits(expected_docs: int, per_group: int = GROUP_POSTINGS) -> int:
    """The bits of a band key that name its group, for an index expected to hold
    `expected_docs` articles: about `per_group` postings per group string there. (With
    EXACT_PER_HASH: the bits of a content hash that name its exact hash.)"""
    bits = max(expected_docs // per_group, 1).bit_length()
    return min(max(bits, MIN_GROUP_BITS), MAX_GROUP_BITS)


def sized_for(bits: int, per_group: int = GROUP_POSTINGS) -> int:
    """The most articles an index whose groups have `bits` bits was made for (the upper end
    of the sizes group_bits gives them)."""
    return per_group << bits


def key_bytes(key: bytes) -> bytes:
    """A band or line key as 4 bytes: itself, padded with zeros, or with its further bytes
    folded in."""
    if len(key) <= 4:
        return key.ljust(4, b"\0")
    v = int.from_bytes(key[:4], "big")
    for byte in key[4:]:
        v = (v * 33 + byte) % 2**32
    return v.to_bytes(4, "big")


MIX = 0x9E3779B1  # odd: v * MIX mod 2^32 gives each 32-bit key its own value


def bucket_of(key: bytes, groups: int) -> tuple[bytes, bytes]:
    """A band or line key's bucket: its group (3 bytes) and the check that leads its postings
    there (whole bytes). Both come from the key's mixed value (v * MIX mod 2^32): the group
    from its first `groups` bits, the check from the others; mixing sends keys that share
    their first bins, as a template's do, to different groups (lua/postings.lua, bucket_of)."""
    v = int.from_bytes(key_bytes(key), "big") * MIX % 2**32
    rest = 32 - groups
    return (v >> rest).to_bytes(3, "big"), (v % 2**rest).to_bytes(check_bytes(groups), "big")


def check_bytes(groups: int) -> int:
    return -(-(32 - groups) // 8)


def posting_bytes(groups: int) -> int:
    return check_bytes(groups) + POSTING_TAIL


def pack_position(position: tuple[int, int] | None) -> bytes:
    """A message's place in the input topic, (partition, offset), as records hold it."""
    return NO_POSITION if position is None else struct.pack(">IQ", *position)


def pack_line(units: bytes) -> bytes:
    """A short line's units, then its band keys without their band's number (the band's
    number is their place), 4 bytes each: the low 16 bits of each of the band's two minima,
    (a minimum's high bits are mostly zeros, its low bits spread evenly over the groups)."""
    return units + b"".join(
        struct.pack(">HH", (key >> 32) & 0xFFFF, key & 0xFFFF) for key in line_keys(units)
    )


def unpack_position(raw: bytes) -> tuple[int, int] | None:
    if raw == NO_POSITION:
        return None
    partition, offset = struct.unpack(">IQ", raw)
    return partition, offset


def ring_offset(seq: int) -> int:
    """Where the ring holds the entry of sequence number `seq` (>= 1)."""
    return ((seq - 1) % RECENT_SLOTS) * ENTRY_BYTES


def pack_entry(fingerprint: int, seq: int, seen_s: int) -> bytes:
    return np.array([(fingerprint, seq >> 32, seq % 2**32, seen_s)], dtype=ENTRY).tobytes()


def entry_numbers(entries: np.ndarray) -> np.ndarray:
    """The sequence numbers of entries (ENTRY), as unsigned 64-bit integers."""
    high = entries["seq_high"].astype(np.uint64) << np.uint64(32)
    return high | entries["seq_low"].astype(np.uint64)


def pack_number(seq: int) -> bytes:
    return seq.to_bytes(NUMBER_BYTES, "big")


@dataclass(frozen=True)
class Record:
    content_hash: bytes
    fingerprint: int | None
    kind: Kind
    distance: int | None
    agreeing: int
    match_fingerprint: int | None
    seen_ms: int
    seq: int
    alive_s: int
    position: tuple[int, int] | None
    sketch: bytes | None
    duplicate_of: str
    original: str


def parse_record(raw: bytes) -> Record:
    def part(name: str) -> bytes:
        f = RECORD[name]
        return raw[f.start : f.start + f.size]

    flags = part("flags")[0]
    kind = next(k for k, code in KIND_CODES.items() if code == part("kind")[0])
    length = int.from_bytes(part("duplicate_of_length"))
    end = len(raw) - MATCH_BYTES if flags & FLAG_MATCH else len(raw)
    return Record(
        content_hash=part("content_hash"),
        fingerprint=int.from_bytes(part("fingerprint")) if flags & FLAG_FINGERPRINT else None,
        kind=kind,
        distance=None if kind is Kind.UNIQUE else part("distance")[0],
        agreeing=part("agreeing")[0],
        match_fingerprint=int.from_bytes(raw[end:]) if flags & FLAG_MATCH else None,
        seen_ms=int(struct.unpack(">d", part("seen_ms"))[0]),
        seq=int.from_bytes(part("seq")),
        alive_s=int.from_bytes(part("alive_s")),
        position=unpack_position(part("position")),
        sketch=part("sketch") if flags & FLAG_FINGERPRINT else None,
        duplicate_of=raw[IDS_START : IDS_START + length].decode("utf-8"),
        original=raw[IDS_START + length : end].decode("utf-8"),
    )
