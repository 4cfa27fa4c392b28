"""The worker's cache of the index's buckets, so that checking a batch reads its buckets
from memory instead of from Redis (the reads were the largest part of Redis's time per
article). Pure: no Redis; RedisIndex keeps it in step through the ring of recent inserts
(since.lua) and reloads it from the buckets of one table when it falls behind the ring.

The cache holds every entry with a sequence number up to `last`. Entries removed since
(deletions, updates, expiry) may linger in it: the script checks that the nearest entry the
worker found still exists, and searches Redis's buckets itself when not, so a stale entry costs
time, never a wrong verdict. Memory: each entry once per table (docs/operations.md).

Buckets are numbered (BucketAddresses.slots). Two stores hold them and search them, with the
same results: the native one (native_cache.py) where it is installed, else numpy arrays
indexed by those numbers (_NumpyStore), so that a batch's thousands of probed buckets are found
with a few numpy operations rather than one Python step each.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.format import ENTRY, ENTRY_BYTES, RING_CHECK, entry_numbers
from worker.index.redis.native_cache import NativeStore, native_store
from worker.index.redis.nearest import Gathered, Nearest, Search, nearest

# Entries taken in per pass: a reload of a large index goes in passes, so that its temporary
# arrays (some bytes per entry and table) stay small.
_PASS = 100_000


class BucketCache:
    def __init__(self, addresses: BucketAddresses, *, native: bool = True) -> None:
        """With `native`, the native store where it is installed."""
        if addresses.slot_count is None:
            raise ValueError(
                "a bucket cache needs every table at most 16 bits wide; "
                "read the buckets from Redis instead (bucket_cache=False)"
            )
        self._store: NativeStore | _NumpyStore = (
            native and native_store(addresses)
        ) or _NumpyStore(addresses)
        self.last = 0  # every entry up to this sequence number is here
        # The ring's entry of number `last` as the cache saw it (format.RING_CHECK bytes; b"":
        # unknown): Redis still holding it there says that the index has not lost writes
        # the cache has seen (since.lua).
        self.last_entry = b""

    @property
    def native(self) -> bool:
        return not isinstance(self._store, _NumpyStore)

    @property
    def entries(self) -> int:
        """Entries held, in every bucket (removed ones too, until their bucket is read)."""
        return self._store.entries

    def add(self, entries: bytes, last: int) -> None:
        """The ring's entries (format.ENTRY) of the numbers up to `last`, from any number up
        to `self.last` on (those the cache holds already are skipped: a sync sent before an
        earlier one was answered); those of removed articles (zeroed but for their number) are
        skipped. Each bucket keeps its entries in first-seen order, as Redis does."""
        if last < self.last:
            return
        table = np.frombuffer(entries, dtype=ENTRY)
        table = table[entry_numbers(table) > self.last]
        if last != self.last:
            self.last_entry = entries[-ENTRY_BYTES:][:RING_CHECK] if entries else b""
        live = table[table["seen_s"] != 0]
        live = live[np.argsort(entry_numbers(live), kind="stable")]
        for start in range(0, len(live), _PASS):
            self._store.add(live[start : start + _PASS])
        self.last = last

    def reset(self, entries: bytes, last: int, last_entry: bytes) -> None:
        """Start again from `entries`: every entry up to `last`, in any order; `last_entry`:
        the ring's entry of number `last` (as for `last_entry`)."""
        self._store.clear()
        self.last = 0
        self.add(entries, last)
        self.last_entry = last_entry[:RING_CHECK]

    def buckets(self, slots: Sequence[int]) -> list[bytes | None]:
        """The buckets' entries, as an MGET of their names would give them."""
        return [self._store.bucket(slot) for slot in slots]

    def nearest(self, simhashes: Sequence[int], search: Search) -> list[Nearest]:
        """For each fingerprint, what nearest.nearest finds in its probed buckets (as
        nearest.gather gathers them). The expired entries it reports are then dropped from
        the copy (the script drops Redis's)."""
        return self._store.nearest(simhashes, search)


class _NumpyStore:
    def __init__(self, addresses: BucketAddresses) -> None:
        assert addresses.slot_count is not None
        self._addresses = addresses
        self._blobs = np.full(addresses.slot_count, b"", dtype=object)  # each bucket's entries
        self._sizes = np.zeros(addresses.slot_count, dtype=np.int64)  # entries in each bucket
        # The first-seen second of each bucket's first entry (where it has one): for expiry.
        self._first_seen = np.zeros(addresses.slot_count, dtype=np.int64)

    @property
    def entries(self) -> int:
        return int(self._sizes.sum())

    def clear(self) -> None:
        self._blobs.fill(b"")
        self._sizes.fill(0)
        self._first_seen.fill(0)

    def add(self, live: np.ndarray) -> None:
        """All tables in one pass (numpy's cost per call, not per entry, is most of a
        batch's)."""
        slots = np.concatenate(self._addresses.own_slots(live["fingerprint"]))  # table after table
        order = np.argsort(slots, kind="stable")  # by bucket, first seen first in each
        slots, grouped = slots[order], live[order % len(live)]
        starts = np.flatnonzero(np.diff(slots, prepend=-1))  # each bucket's first entry
        buckets = slots[starts]
        empty = self._sizes[buckets] == 0
        self._first_seen[buckets[empty]] = grouped["seen_s"][starts[empty]]
        ends = np.append(starts[1:], len(slots))
        self._sizes[buckets] += ends - starts
        block, size, blobs = grouped.tobytes(), ENTRY_BYTES, self._blobs
        for slot, start, end in zip(
            buckets.tolist(), (starts * size).tolist(), (ends * size).tolist(), strict=True
        ):
            blobs[slot] += block[start:end]

    def bucket(self, slot: int) -> bytes | None:
        blob: bytes = self._blobs[slot]
        return blob or None

    def nearest(self, simhashes: Sequence[int], search: Search) -> list[Nearest]:
        gathered = self._read(simhashes, max_read=search.max_read, cutoff_s=search.cutoff_s)
        return nearest(
            gathered,
            simhashes,
            radius=search.search_radius,
            limit=search.limit,
            cutoff_s=search.cutoff_s,
        )

    def _read(self, simhashes: Sequence[int], *, max_read: int, cutoff_s: int | None) -> Gathered:
        """What nearest.gather gives for the buckets that `simhashes` probe; the expired
        entries it reports are then dropped."""
        slots = self._addresses.slots(simhashes)
        sizes = self._sizes[slots]
        present = sizes > 0
        blobs = self._blobs[slots[present]].tolist()
        hot = sizes > max_read
        if hot.any():  # only the newest `max_read` entries count, as in the script
            limit = max_read * ENTRY_BYTES
            for i in np.flatnonzero(hot[present]).tolist():
                blobs[i] = blobs[i][-limit:]
            sizes = np.minimum(sizes, max_read)
        expired: list[tuple[int, ...]] = [()] * len(simhashes)
        if cutoff_s is not None:
            old = present & (self._first_seen[slots] < cutoff_s)
            for row in np.flatnonzero(old.any(axis=1)).tolist():
                expired[row] = tuple(np.flatnonzero(old[row]).tolist())
            for slot in np.unique(slots[old]).tolist():
                self._cut_expired(slot, cutoff_s)
        return Gathered(
            b"".join(blobs), sizes.sum(axis=1).tolist(), hot.sum(axis=1).tolist(), expired
        )

    def _cut_expired(self, slot: int, cutoff_s: int) -> None:
        """Drop the bucket's entries first seen before `cutoff_s` (they lead it)."""
        seen = np.frombuffer(self._blobs[slot], dtype=ENTRY)["seen_s"]
        old = seen < cutoff_s
        cut = len(old) if old.all() else int(old.argmin())
        self._blobs[slot] = self._blobs[slot][cut * ENTRY_BYTES :]
        self._sizes[slot] -= cut
        if cut < len(seen):
            self._first_seen[slot] = seen[cut]
