"""An in-process index with the same contract as the Redis index: for unit tests and for the
embedded `scan` mode. Not shared between processes."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

from worker.bands import band_values, band_widths
from worker.index.base import DEFAULT_MAX_BUCKET_READ, Outcome
from worker.verdict import Entry, IdConflict, Kind, Probe, Verdict, closest


class MemoryIndex:
    def __init__(self, threshold: int = 3, clock_ms: Callable[[], int] | None = None,
                 max_bucket_read: int = DEFAULT_MAX_BUCKET_READ) -> None:
        self.threshold = threshold
        self.max_bucket_read = max_bucket_read
        self.widths = band_widths(threshold)
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._buckets: defaultdict[tuple[int, int], list[Entry]] = defaultdict(list)
        self._exact: dict[bytes, str] = {}
        self._records: dict[str, tuple[bytes, Verdict]] = {}

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
                entry = Entry(probe.id, probe.fingerprint, now)
                for band, value in enumerate(band_values(probe.fingerprint, self.widths)):
                    self._buckets[band, value].append(entry)
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
        if probe.fingerprint is not None:
            for band, value in enumerate(band_values(probe.fingerprint, self.widths)):
                bucket = self._buckets.get((band, value), [])
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
