"""An in-process index with the same contract as the Redis index: for unit tests and for the
embedded `scan` mode. Not shared between processes."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace

from worker import defaults
from worker.index.base import Entry, closest, duplicate_threshold
from worker.layout.planner import default_layout
from worker.layout.tables import Layout, neighbours
from worker.model import Kind, Probe, Verdict


class MemoryIndex:
    def __init__(
        self,
        layout: Layout | None = None,
        *,
        threshold: int | None = None,
        verify_threshold: int = defaults.VERIFY_THRESHOLD,
        max_bucket_read: int = defaults.MAX_BUCKET_READ,
        retention_s: int = 0,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        """Arguments as for RedisIndex; `clock_ms` (default: the system's) stamps decisions."""
        self.layout = layout or default_layout()
        self.threshold = duplicate_threshold(self.layout, threshold)
        self.verify_threshold = verify_threshold
        self.max_bucket_read = max_bucket_read
        self.retention_s = retention_s
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._buckets: defaultdict[tuple[int, int], list[Entry]] = defaultdict(list)
        self._exact: dict[bytes, str] = {}
        # id -> (content hash, verdict, its bucket entry if indexed)
        self._records: dict[str, tuple[bytes, Verdict, Entry | None]] = {}
        self._seq = 0

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        return [self.check_and_insert_one(p) for p in probes]

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        return [self._remove(i) for i in ids]

    async def expire(self, limit: int = 1000) -> int:
        cutoff = self._cutoff_s(self._clock_ms())
        if cutoff is None:
            return 0
        old = [i for i, (_, v, _) in self._records.items() if v.seen_at_ms < cutoff * 1000]
        for article_id in old[:limit]:
            self._remove(article_id)
        return min(len(old), limit)

    def _cutoff_s(self, now_ms: int) -> int | None:
        """Articles first seen before this second have expired (as in the Lua script)."""
        return now_ms // 1000 - self.retention_s if self.retention_s else None

    def check_and_insert_one(self, probe: Probe) -> Verdict:
        known = self._records.get(probe.id)
        if known is not None and known[0] == probe.content_hash:
            return replace(known[1], replayed=True, candidates=0, hot_buckets=0, replaced=False)
        replaced = self._remove(probe.id)
        now = self._clock_ms()
        verdict = replace(self._judge(probe, now), replaced=replaced)
        entry = None
        if verdict.kind in (Kind.UNIQUE, Kind.RELATED):
            self._exact[probe.content_hash] = probe.id
            if probe.fingerprint is not None:
                self._seq += 1
                entry = Entry(probe.id, probe.fingerprint, self._seq, now, probe.verification)
                for table, key in enumerate(self.layout.keys(probe.fingerprint)):
                    self._buckets[table, key].append(entry)
        self._records[probe.id] = (probe.content_hash, verdict, entry)
        return verdict

    def _remove(self, article_id: str) -> bool:
        known = self._records.pop(article_id, None)
        if known is None:
            return False
        content_hash, _, entry = known
        if entry is not None:
            for table, key in enumerate(self.layout.keys(entry.fingerprint)):
                bucket = self._buckets.get((table, key), [])
                if entry in bucket:  # (expired entries may have been cut already)
                    bucket.remove(entry)
        if self._exact.get(content_hash) == article_id:
            del self._exact[content_hash]
        return True

    def _judge(self, probe: Probe, now: int) -> Verdict:
        cutoff = self._cutoff_s(now)
        exact_id = self._exact.get(probe.content_hash)
        if (
            exact_id is not None
            and cutoff is not None
            and (self._records[exact_id][1].seen_at_ms < cutoff * 1000)
        ):
            self._remove(exact_id)
            exact_id = None
        if exact_id is not None:
            original = self._records[exact_id][1]
            return Verdict(
                probe.id, Kind.EXACT, probe.fingerprint, exact_id, 0, original.fingerprint, now
            )
        read: list[Entry] = []
        hot = 0
        if probe.fingerprint is not None and self.max_bucket_read > 0:
            keys = self.layout.keys(probe.fingerprint)
            for number, (table, key) in enumerate(zip(self.layout.tables, keys, strict=True)):
                for value in neighbours(key, table.width, table.radius):
                    bucket = self._buckets.get((number, value), [])
                    if cutoff is not None:
                        bucket[:] = [e for e in bucket if e.seen_ms // 1000 >= cutoff]
                    read += bucket[-self.max_bucket_read :]  # the newest, as Redis reads them
                    hot += len(bucket) > self.max_bucket_read
            verify_threshold = self.verify_threshold if probe.verification is not None else -1
            match = closest(
                probe.fingerprint,
                read,
                self.layout.threshold,
                probe.id,
                probe.verification,
                verify_threshold,
            )
            if match is not None:
                entry, distance = match
                kind = Kind.NEAR if distance <= self.threshold else Kind.RELATED
                return Verdict(
                    probe.id,
                    kind,
                    probe.fingerprint,
                    entry.id,
                    distance,
                    entry.fingerprint,
                    now,
                    candidates=len(read),
                    hot_buckets=hot,
                )
        return Verdict(
            probe.id,
            Kind.UNIQUE,
            probe.fingerprint,
            seen_at_ms=now,
            candidates=len(read),
            hot_buckets=hot,
        )

    async def close(self) -> None:
        return None
