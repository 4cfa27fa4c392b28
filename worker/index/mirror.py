"""A worker's copy of the index's bucket entries, so that checking a batch reads its buckets
from memory instead of from Redis: the reads were ~45% of Redis's time per article and the
largest part of the worker's index work (docs/performance.md). Pure: no Redis; RedisIndex
keeps it in step through the ring of recent inserts (since.lua) and reloads it from the
buckets of one table when it falls behind the ring.

The copy holds every entry with a sequence number up to `last`. Entries removed since
(deletions, updates, expiry) may linger in it: the script checks that the nearest entry the
worker found still exists, and searches Redis's buckets itself when not, so a stale entry costs
time, never a wrong verdict. Memory: each entry once per table (24 bytes each; ~120 MB at 1M
articles with the default five tables).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from worker.index.nearest import ENTRY
from worker.index.probes import ProbedBuckets


class Mirror:
    def __init__(self, probed: ProbedBuckets) -> None:
        self._probed = probed
        self._buckets: dict[str, bytes] = {}
        self.last = 0  # every entry up to this sequence number is here

    def add(self, entries: bytes, last: int) -> None:
        """Entries (24 bytes each) inserted up to sequence number `last`; zeroed ones (the
        ring's slots of removed articles) are skipped. Each bucket keeps its entries in
        first-seen order, as Redis does."""
        table = np.frombuffer(entries, dtype=ENTRY)
        live = np.flatnonzero(table["seq"] != 0)
        live = live[np.argsort(table["seq"][live], kind="stable")]
        size = ENTRY.itemsize
        raw = [entries[i * size:(i + 1) * size] for i in live.tolist()]
        for names in self._probed.own(table["fp"][live]):  # one table at a time
            grouped: dict[str, list[bytes]] = {}
            for name, entry in zip(names, raw, strict=True):
                grouped.setdefault(name, []).append(entry)
            for name, parts in grouped.items():
                self._buckets[name] = self._buckets.get(name, b"") + b"".join(parts)
        self.last = last

    def reset(self, entries: bytes, last: int) -> None:
        """Start again from `entries`: every entry up to `last`, in any order."""
        self._buckets.clear()
        self.add(entries, last)

    def buckets(self, names: Sequence[str]) -> list[bytes | None]:
        """The buckets' entries, as an MGET of the names would give them."""
        return list(map(self._buckets.get, names))

    def cut_expired(self, name: str, cutoff_s: int) -> None:
        """Drop the bucket's entries first seen before `cutoff_s` (they lead it)."""
        blob = self._buckets.get(name)
        if blob is None:
            return
        old = np.frombuffer(blob, dtype=ENTRY)["seen"] < cutoff_s
        kept = blob[(len(old) if old.all() else int(old.argmin())) * ENTRY.itemsize:]
        if kept:
            self._buckets[name] = kept
        else:
            del self._buckets[name]
