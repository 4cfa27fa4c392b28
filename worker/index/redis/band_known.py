"""The indexed articles a band worker read or indexed itself of late, by number
(band_reads.py, RedisBandIndex), so that its guesses need not read them again. Pure: no
Redis.

What a number's article is (its id, sketch, fingerprint, when its retention started) does not
change while it is indexed: a renewed article, or an id sent again with new text, takes a new
number, and the old one leaves every bucket. So an entry needs no invalidation while the
index goes on; a number read in a bucket is live, and one taken out after the read is in the
log of calls, which check_bands.lua checks the guesses against. Numbers are given out again
only by an index emptied or rolled back: the cache is emptied when the index's counter is
below a number it holds, and after a reset (RedisBandIndex._reload).

An entry is one bytes object (the article packed), under its number in one of two dicts: the
articles kept or used since the younger one began, and the ones before. When the younger
holds half the cache (`most // 2`), the older is dropped and the younger takes its place; an
article found in the older moves to the younger. So an article is held at least until
`most // 2` others were kept or moved since it was last used, as a least-recently-used cache
of that size would hold it, without an ordered dict's links or a tuple of objects per entry.
The half dropped is freed a few entries per article kept, not at once: freeing half a
million entries at once holds the event loop for milliseconds.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass

from worker.index.redis.band_guesses import Known

# Articles kept at most by default (Settings.known_articles): the candidates of many batches of
# a template's pages (the same crowded buckets' newest postings), ~200 bytes each packed.
KNOWN_MOST = 1 << 20
# Entries of a dropped half freed per article kept: the half is gone long before the next.
FREED_PER_KEEP = 64

# alive_s, fingerprint, then the sketch's size; the sketch and the id follow them.
_HEAD = struct.Struct(">IQH")
# (an id is what the input gave, lone surrogates included)
_ID = ("utf-8", "surrogatepass")


def pack(known: Known) -> bytes:
    """`known` without its number, in one bytes object (unpack gives it back)."""
    head = _HEAD.pack(known.alive_s, known.fingerprint, len(known.sketch))
    return b"".join((head, known.sketch, known.id.encode(*_ID)))


def unpack(seq: int, packed: bytes) -> Known:
    """The article number `seq` as `pack` packed it."""
    alive_s, fingerprint, sketch_size = _HEAD.unpack_from(packed)
    id_at = _HEAD.size + sketch_size
    return Known(packed[id_at:].decode(*_ID), seq, alive_s, packed[_HEAD.size : id_at], fingerprint)


@dataclass(frozen=True, slots=True)
class KnownStats:
    """How the cache serves a worker's reads: what it holds; of the candidates the guesses
    looked up since the cache was made, how many it held (the others were read); and the
    articles it dropped to make room (none: misses that a larger cache would not save)."""

    articles: int
    asked: int
    held: int
    dropped: int


class KnownCache:
    def __init__(self, most: int = KNOWN_MOST) -> None:
        if most < 2:
            raise ValueError(f"a cache of {most} articles holds too few: give it 2 or more")
        self.most = most
        self._young: dict[int, bytes] = {}
        self._old: dict[int, bytes] = {}
        self._dropped: dict[int, bytes] = {}  # (being freed: never looked in)
        self._highest = 0
        # (since made: a clear keeps them, as counters do)
        self._asked = self._held = self._dropped_count = 0

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def seen_counter(self, counter: int) -> None:
        """The index's sequence counter as just read: below a number held, numbers may be
        given out again, so nothing held is kept."""
        if counter < self._highest:
            self.clear()

    def clear(self) -> None:
        self._young = {}
        self._old = {}
        self._dropped = {}
        self._highest = 0

    def found(self, numbers: Iterable[int]) -> dict[int, Known]:
        """Those of `numbers` held, now among the recently used."""
        out, used, asked = {}, [], 0
        for number in numbers:
            asked += 1
            packed = self._young.get(number)
            if packed is None:
                packed = self._old.get(number)
                if packed is None:
                    continue
                used.append((number, packed))
            out[number] = unpack(number, packed)
        self._asked += asked
        self._held += len(out)
        # (moved once all are found: a move can fill the younger half and so drop the older,
        # which may hold others of `numbers`)
        for number, packed in used:
            self._old.pop(number, None)
            self._put(number, packed)
        return out

    def stats(self) -> KnownStats:
        return KnownStats(len(self), self._asked, self._held, self._dropped_count)

    def keep(self, known: Known) -> None:
        """An article read, indexed under its number."""
        self._old.pop(known.seq, None)
        self._put(known.seq, pack(known))
        self._highest = max(self._highest, known.seq)

    def _put(self, number: int, packed: bytes) -> None:
        self._young[number] = packed
        self._free_some()
        if len(self._young) >= self.most // 2:
            self._dropped_count += len(self._old)
            self._dropped, self._old, self._young = self._old, self._young, {}

    def _free_some(self) -> None:
        dropped = self._dropped
        if dropped:
            for _ in range(min(FREED_PER_KEEP, len(dropped))):
                dropped.popitem()
            if not dropped:
                self._dropped = {}  # (its table too)
