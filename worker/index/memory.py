"""An in-process index with the same contract as the Redis index: for unit tests and for the
embedded `scan` mode. Not shared between processes."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

from worker.index.base import DEFAULT_MAX_BUCKET_READ, Outcome
from worker.layouts import Layout, neighbours, pigeonhole
from worker.verdict import Entry, IdConflict, Kind, Probe, Verdict, closest


class MemoryIndex:
    def __init__(self, layout: Layout | None = None, clock_ms: Callable[[], int] | None = None,
                 max_bucket_read: int = DEFAULT_MAX_BUCKET_READ) -> None:
        self.layout = layout or pigeonhole(3)
        self.threshold = self.layout.threshold
        self.max_bucket_read = max_bucket_read
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._buckets: defaultdict[tuple[int, int], list[Entry]] = defaultdict(list)
        self._exact: dict[bytes, str] = {}
        self._records: dict[str, tuple[bytes, Verdict]] = {}
        self._seq = 0

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Outcome]:
        return [self.check_and_insert_one(p) for p in probes]

    def check_and_insert_one(self, probe: Probe) -> Outcome:
        known = self._records.get(probe.id)
        if known is not None:
            content_hash, verdict = known
            if content_hash != probe.content_hash:
                return IdConflict(probe.id)
            return replace(verdict, replayed=True, candidates=0, hot_buckets=0)

        now = self._clock_ms()
        verdict = self._decide(probe, now)
        if verdict.kind is Kind.UNIQUE:
            self._exact[probe.content_hash] = probe.id
            if probe.fingerprint is not None:
                self._seq += 1
                entry = Entry(probe.id, probe.fingerprint, self._seq)
                for table, key in enumerate(self.layout.keys(probe.fingerprint)):
                    self._buckets[table, key].append(entry)
        self._records[probe.id] = (probe.content_hash, verdict)
        return verdict

    def _decide(self, probe: Probe, now: int) -> Verdict:
        exact_id = self._exact.get(probe.content_hash)
        if exact_id is not None:
            original = self._records[exact_id][1]
            return Verdict(probe.id, Kind.EXACT, probe.fingerprint, exact_id, 0,
                           original.fingerprint, now)
        read: list[Entry] = []
        hot = 0
        if probe.fingerprint is not None and self.max_bucket_read > 0:
            keys = self.layout.keys(probe.fingerprint)
            for number, (table, key) in enumerate(zip(self.layout.tables, keys, strict=True)):
                for value in neighbours(key, table.width, table.radius):
                    bucket = self._buckets.get((number, value), [])
                    read += bucket[-self.max_bucket_read:]  # the newest, as Redis reads them
                    hot += len(bucket) > self.max_bucket_read
            match = closest(probe.fingerprint, read, self.threshold, probe.id)
            if match is not None:
                entry, distance = match
                return Verdict(probe.id, Kind.NEAR, probe.fingerprint, entry.id, distance,
                               entry.fingerprint, now, candidates=len(read), hot_buckets=hot)
        return Verdict(probe.id, Kind.UNIQUE, probe.fingerprint, seen_at_ms=now,
                       candidates=len(read), hot_buckets=hot)

    async def close(self) -> None:
        return None
