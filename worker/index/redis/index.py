"""The shared index in Redis: exact-content hashes, bucket tables (worker/layout/tables.py),
one record per id (the storage format: format.py).

Checking a batch takes two steps. First the worker reads the articles' probed buckets and
compares their entries itself (nearest.py): from its cache of the buckets (bucket_cache.py,
kept in step by since.lua), or with MGETs when a table of the layout is too wide to cache.
Then check_and_insert.lua decides the articles one after another, comparing only what was
inserted since the read, and inserts the originals: Redis runs one script at a time, so
replicas that process near-duplicates at the same moment are serialised, and one of them is
first. forget.lua removes articles, expire.lua sweeps out expired ones.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import redis.exceptions

from worker import defaults
from worker.errors import LayoutMismatch
from worker.index.base import Rule, duplicate_threshold
from worker.index.redis import scripts
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.bucket_cache import BucketCache
from worker.index.redis.client import Client, Encoded, bulk_string, packs_encoded, translate
from worker.index.redis.format import LAYOUT_FORMAT
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import BucketRead, Nearest, gather, nearest
from worker.index.redis.scripts import CheckAndInsertCalls, Script
from worker.layout.planner import default_layout
from worker.layout.tables import Layout
from worker.model import Probe, Verdict

# Bucket names per MGET, about: enough to share the round trip, few enough that one MGET does
# not hold Redis's one thread up for long.
MGET_KEYS = 1500


class RedisIndex:
    def __init__(
        self,
        client: Client,
        namespace: str = "default",
        layout: Layout | None = None,
        *,
        threshold: int | None = None,
        similarity: float = defaults.SIMILARITY,
        max_bucket_read: int = defaults.MAX_BUCKET_READ,
        retention_s: int = 0,
        renew_on_match: bool = defaults.RENEW_ON_MATCH,
        bucket_cache: bool = True,
    ) -> None:
        """`layout` (default: the default settings' layout) is searched up to its own
        threshold; candidates within `threshold` (default: the same) whose estimated Jaccard
        similarity is at least `similarity` are duplicates, and with a wider layout, more
        distant or less similar ones may be related (index.base.Rule, Kind.RELATED). Only
        the newest `max_bucket_read` entries of a bucket are read. Articles older than
        `retention_s` (0: none) stop matching; with `renew_on_match`, an article matched by
        a copy starts its retention again. With `bucket_cache`, the worker keeps the buckets
        in memory (BucketCache) when every table of the layout is at most 16 bits wide; else
        it reads Redis's."""
        self.client = client
        self.namespace = namespace
        self.layout = layout or default_layout()
        self.threshold = duplicate_threshold(self.layout, threshold)
        self.rule = Rule.of(self.layout, self.threshold, similarity)
        self.max_bucket_read = max_bucket_read
        self.retention_s = retention_s
        self.renew_on_match = renew_on_match
        self.keys = NamespaceKeys(namespace)
        self.script_calls = CheckAndInsertCalls(
            self.keys,
            self.layout,
            self.rule,
            max_bucket_read=max_bucket_read,
            retention_s=retention_s,
            renew_on_match=renew_on_match,
        )
        self._addresses = BucketAddresses(self.keys.buckets, self.layout, bulk_string)
        self._encodes = packs_encoded(client)
        self._cache = (
            BucketCache(self._addresses)
            if bucket_cache and self._addresses.slot_count is not None
            else None
        )
        # What the cache reloads from (every bucket of one table); only a cache needs it.
        self._whole_table = self._addresses.whole_table() if self._cache is not None else None
        self._layout_checked = False

    @property
    def uses_bucket_cache(self) -> bool:
        return self._cache is not None

    @property
    def description(self) -> dict[str, str]:
        """What the index stores about its layout; every worker on it must agree."""
        return {
            "format": LAYOUT_FORMAT,
            "layout": self.layout.family.value,
            "threshold": str(self.threshold),
            "related_threshold": str(self.layout.threshold),
            "duplicate_bins": str(self.rule.duplicate_bins),
            "sketch": self.rule.shape.spec(),
            "tables": self.layout.spec(),
        }

    async def ensure_layout(self) -> None:
        """Record this index's layout, or refuse if the namespace was built with another."""
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                for field, value in self.description.items():
                    pipe.hsetnx(self.keys.meta, field, value)
                pipe.hgetall(self.keys.meta)
                stored_raw = (await pipe.execute())[-1]
        except redis.exceptions.RedisError as exc:
            raise translate(exc) from exc
        stored = {k.decode(): v.decode() for k, v in stored_raw.items()}
        if stored != self.description:
            raise LayoutMismatch(
                f"namespace {self.namespace!r} was built with layout {stored}, this worker "
                f"wants {self.description}; use the same threshold and layout settings, or "
                "another DEDUP_NAMESPACE"
            )
        self._layout_checked = True

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        if not probes:
            return []
        return await self.run_checks(probes, await self.read_buckets(probes))

    async def read_buckets(self, probes: Sequence[Probe]) -> list[BucketRead | None]:
        """The first step of check_and_insert: for each probe with a fingerprint, the nearest
        entries of its probed buckets (the rule's candidates), and the sequence counter they
        were read at (the snapshot); from the bucket cache, or else with MGETs."""
        if self.max_bucket_read <= 0:
            return [None] * len(probes)
        searched = [p for p in probes if p.fingerprint is not None]
        if not searched:
            return [None] * len(probes)
        fingerprints = [p.fingerprint for p in searched if p.fingerprint is not None]
        cutoff = int(time.time()) - self.retention_s if self.retention_s else None
        if self._cache is not None:
            snapshots = [await self._sync()] * len(fingerprints)
            gathered = self._cache.read(
                fingerprints, max_read=self.max_bucket_read, cutoff_s=cutoff
            )
        else:
            snapshots, buckets = await self._mget(fingerprints)
            per = self._addresses.per_fingerprint
            gathered = gather(
                [buckets[i * per : (i + 1) * per] for i in range(len(fingerprints))],
                max_read=self.max_bucket_read,
                cutoff_s=cutoff,
            )
        found = nearest(
            gathered,
            fingerprints,
            radius=self.rule.radius,
            limit=self.rule.max_candidates,
            cutoff_s=cutoff,
        )
        reads = iter(
            [
                BucketRead(snapshot, one, self._expired(fp, one))
                for snapshot, fp, one in zip(snapshots, fingerprints, found, strict=True)
            ]
        )
        return [next(reads) if p.fingerprint is not None else None for p in probes]

    async def run_checks(
        self, probes: Sequence[Probe], reads: Sequence[BucketRead | None]
    ) -> list[Verdict]:
        """The second step of check_and_insert: the script calls that decide and insert,
        given what `read_buckets` found (whatever was inserted in between, they see)."""
        replies = await self._run(Script.CHECK_AND_INSERT, self.script_calls.calls(probes, reads))
        return [
            self.script_calls.verdict(p, reply)
            for p, reply in zip(probes, (r for call in replies for r in call), strict=True)
        ]

    async def refresh(self) -> None:
        """Bring the bucket cache up to the index now rather than at the next check (a worker
        does at start, so that its first batch does not pay for loading it)."""
        if self._cache is not None:
            await self._sync()

    async def _sync(self) -> int:
        """Bring the cache up to the index's counter (what the ring holds since the cache's
        last entry, or a reload); returns that counter."""
        assert self._cache is not None
        [reply] = await self._run(Script.SINCE, [scripts.since_call(self.keys, self._cache.last)])
        if len(reply) == 2:
            self._cache.add(reply[1], int(reply[0]))
        else:
            await self._reload()
        return self._cache.last

    async def _reload(self) -> None:
        """Fill the cache from every bucket of one table (one MGET with the counter: one
        snapshot)."""
        assert self._cache is not None
        assert self._whole_table is not None
        try:
            values = await self.client.execute_command("MGET", self.keys.seq, *self._whole_table)
        except redis.exceptions.RedisError as exc:
            raise translate(exc) from exc
        self._cache.reset(b"".join(filter(None, values[1:])), int(values[0] or 0))

    async def _mget(self, fingerprints: list[int]) -> tuple[list[int], list[bytes | None]]:
        """Without a cache: each fingerprint's snapshot, and the values of its probed buckets
        (`per_fingerprint` each, one fingerprint after another), read with one MGET per group
        of fingerprints; each MGET also reads the counter: the snapshot of its group."""
        per = self._addresses.per_fingerprint
        group = max(1, MGET_KEYS // per)
        starts = range(0, len(fingerprints), group)
        groups: list[list[Any]]
        if self._encodes:  # each MGET's bucket names in one encoded piece
            groups = [
                [Encoded(joined, per * min(group, len(fingerprints) - start))]
                for joined, start in zip(
                    self._addresses.joined(fingerprints, group), starts, strict=True
                )
            ]
        else:
            every = self._addresses.names(fingerprints)
            groups = [every[start * per : (start + group) * per] for start in starts]
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for names in groups:
                    pipe.execute_command("MGET", self.keys.seq, *names)
                replies = await pipe.execute()
        except redis.exceptions.RedisError as exc:
            raise translate(exc) from exc
        snapshots = [int(replies[i // group][0] or 0) for i in range(len(fingerprints))]
        return snapshots, [value for reply in replies for value in reply[1:]]

    def _expired(self, fingerprint: int, found: Nearest) -> list[str]:
        """The names of the buckets that `found` says start with expired entries."""
        if not found.expired:
            return []
        names = self._addresses.names([fingerprint])
        return [names[i] for i in found.expired]

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        """Remove articles from every table; True for each id that was in the index."""
        if not ids:
            return []
        [reply] = await self._run(Script.FORGET, [scripts.forget_call(self.keys, ids)])
        return [bool(r) for r in reply]

    async def expire(self, limit: int = 1000) -> int:
        """One step of the expiry sweep: look at up to ~`limit` records, remove the expired
        ones; returns how many. Workers share the sweep's cursor, so steps taken by any of
        them advance one pass over the index."""
        if not self.retention_s:
            return 0
        call = scripts.expire_call(self.keys, self.retention_s, limit)
        [(removed, _)] = await self._run(Script.EXPIRE, [call])
        return int(removed)

    async def _run(self, script: Script, calls: list[list[Any]]) -> list[Any]:
        try:
            if not self._layout_checked:
                await self.ensure_layout()  # the scripts read the table spec from it
            return await scripts.run(self.client, script, calls)
        except redis.exceptions.RedisError as exc:
            raise translate(exc) from exc

    async def close(self) -> None:
        await self.client.aclose()
