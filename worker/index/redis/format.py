"""How the index stores articles in Redis: the one description of its bytes on the Python
side. lua/lib.lua spells the same layout for the scripts, and a test runs it on Redis and
compares the two.

A bucket (one string per table key) is a run of fixed-size entries, appended in the order
articles are first seen. Each article decided has a record (in the docs hash, by id), and
each original a sequence number; the ring of recent inserts holds the entry of sequence
number s in slot (s - 1) % RECENT_SLOTS.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import numpy as np

from worker.model import Kind

# Bump when the record, the entry or the key layout changes: an index of another format is
# refused (it is stored with the layout).
LAYOUT_FORMAT = "4"

ENTRY = np.dtype(
    [
        ("fingerprint", ">u8"),  # the search fingerprint
        ("seq", ">u4"),  # the article's sequence number
        ("seen_s", ">u4"),  # when it was first seen, unix seconds (for expiry)
        ("verification", ">u8"),  # the verification fingerprint; zeros without one
    ]
)
ENTRY_BYTES = ENTRY.itemsize
RECENT_SLOTS = 65536


@dataclass(frozen=True)
class Field:
    start: int  # 0-based byte offset
    size: int  # bytes; 0: to the end of the record


# A record: the content hash, the article's own fingerprint, its verdict, and where it is.
RECORD = {
    "content_hash": Field(0, 16),
    "fingerprint": Field(16, 8),  # zeros without one (see FLAG_FINGERPRINT)
    "kind": Field(24, 1),  # KIND_CODES
    "flags": Field(25, 1),
    "distance": Field(26, 1),
    "match_fingerprint": Field(27, 8),  # the matched article's (see FLAG_MATCH)
    "seen_ms": Field(35, 8),  # when first decided, unix ms, a big-endian double
    "seq": Field(43, 4),  # the sequence number; zeros: in no bucket (a duplicate)
    "duplicate_of": Field(47, 0),  # the matched article's id, UTF-8
}
FLAG_FINGERPRINT = 1  # the article has a fingerprint
FLAG_MATCH = 2  # the record holds the matched article's fingerprint
KIND_CODES = {Kind.UNIQUE: 0, Kind.EXACT: 1, Kind.NEAR: 2, Kind.RELATED: 3}


def pack_entry(fingerprint: int, seq: int, seen_s: int, verification: int | None = None) -> bytes:
    return np.array([(fingerprint, seq, seen_s, verification or 0)], dtype=ENTRY).tobytes()


@dataclass(frozen=True)
class Record:
    content_hash: bytes
    fingerprint: int | None
    kind: Kind
    distance: int | None
    match_fingerprint: int | None
    seen_ms: int
    seq: int
    duplicate_of: str


def parse_record(raw: bytes) -> Record:
    def part(name: str) -> bytes:
        f = RECORD[name]
        return raw[f.start : f.start + f.size] if f.size else raw[f.start :]

    flags = part("flags")[0]
    kind = next(k for k, code in KIND_CODES.items() if code == part("kind")[0])
    return Record(
        content_hash=part("content_hash"),
        fingerprint=int.from_bytes(part("fingerprint")) if flags & FLAG_FINGERPRINT else None,
        kind=kind,
        distance=None if kind is Kind.UNIQUE else part("distance")[0],
        match_fingerprint=(
            int.from_bytes(part("match_fingerprint")) if flags & FLAG_MATCH else None
        ),
        seen_ms=int(struct.unpack(">d", part("seen_ms"))[0]),
        seq=int.from_bytes(part("seq")),
        duplicate_of=part("duplicate_of").decode("utf-8"),
    )
