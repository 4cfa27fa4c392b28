"""The shared index in Redis over SimHash tables (worker/layout/tables.py): exact-content
hashes, bucket tables, one record per id (the storage format: format.py); what does not
depend on the tables is NamespaceIndex's (namespace_index.py).

Checking a batch takes two steps. First the worker reads the articles' probed buckets and
compares their entries itself (bucket_reads.py): from its cache of the buckets (bucket_cache.py,
kept in step by since.lua: cache_sync.py), or with MGETs when a table is too wide to cache.
Then check_and_insert.lua decides the articles one after another, comparing only what was
inserted since the read (what the call itself inserts, from the worker's list of the earlier
articles within the search radius: nearest.earlier_within), and inserts the originals: Redis
runs one script at a time, so replicas that process near-duplicates at the same moment are
serialised, and one of them is first. With the cache, a batch's calls go out on a connection
of their own (ordered.py, ahead.py) as soon as they are made, while the batch before may still be
running: its read then predates the batch before, whose articles the worker compares with
its own (nearest.within_earlier_calls) and the script takes from that batch's call records;
the sync (since.lua) that keeps the cache in step goes out behind the calls. forget.lua
removes articles, expire.lua sweeps out expired ones.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable, Sequence

import redis.asyncio as aioredis
import redis.exceptions

from worker import defaults
from worker.errors import IndexReset
from worker.index.base import IndexOptions, Rule, duplicate_threshold
from worker.index.redis import guard, scripts
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.ahead import Ahead
from worker.index.redis.bucket_reads import BucketReads
from worker.index.redis.cache_sync import CacheSync
from worker.index.redis.check_and_insert import CheckAndInsertCalls, InOrder
from worker.index.redis.client import Client, bulk_string, packs_encoded, translate
from worker.index.redis.format import LAYOUT_FORMAT
from worker.index.redis.guard import Chain
from worker.index.redis.namespace_index import NamespaceIndex, ScriptsLoaded
from worker.index.redis.nearest import BucketRead
from worker.index.redis.ordered import OrderedConnection
from worker.index.redis.replies import verdicts_of
from worker.index.redis.scripts import Script
from worker.layout.planner import default_layout
from worker.layout.tables import Layout
from worker.model import Probe, Verdict

log = logging.getLogger(__name__)


class RedisIndex(NamespaceIndex):
    _read_before = frozenset({Script.CHECK_AND_INSERT})

    def __init__(
        self,
        client: Client,
        namespace: str = "default",
        layout: Layout | None = None,
        options: IndexOptions | None = None,
        *,
        bucket_cache: bool = True,
        native: bool = True,
        in_order: bool = True,
        fingerprint_spec: str | None = None,
        on_reset: Callable[[str], None] | None = None,
        expected_docs: int = defaults.EXPECTED_DOCS,
        replicas_acked: int = 0,
    ) -> None:
        """The index of one namespace on one Redis (or one Redis Cluster).

        Args:
            client: the Redis client (`client.connect`); the index closes it with `close`.
            namespace: the index's name; its keys share the hash tag `{namespace}`.
            layout: the tables, searched up to the layout's own search radius (default: the
                default settings' layout).
            options: how it decides and what it keeps (IndexOptions).
            bucket_cache: the worker keeps the buckets in memory (BucketCache) when every
                table of the layout is at most 16 bits wide; else it reads Redis's.
            native: the cache is held and searched by the native extension where it is
                installed (bucket_cache.py).
            in_order: with the cache, on one Redis, a batch's calls are sent while the batch
                before runs (ordered.py).
            fingerprint_spec: recorded with the layout (Fingerprinter.fingerprint_spec); a
                worker with other fingerprint settings is refused (None: not checked).
            on_reset: told why when the index turns out emptied or rolled back under the
                worker, which logs it, takes in the index as it is now and goes on.
            expected_docs: the articles it is expected to hold, which sizes its exact
                hashes (format.EXACT_PER_HASH) and its short lines' group strings
                (format.group_bits).
            replicas_acked: a batch's verdicts are given out once this many replicas hold
                its writes (acked.py; 0: at once).
        """
        options = options or IndexOptions()
        super().__init__(
            client, namespace, options, fingerprint_spec, on_reset, expected_docs, replicas_acked
        )
        self.layout = layout or default_layout()
        self.threshold = duplicate_threshold(self.layout, options.threshold)
        self.rule = Rule.of(self.layout, self.threshold, options.similarity)
        self.script_calls = CheckAndInsertCalls(
            self.keys,
            self.layout,
            self.rule,
            max_bucket_read=self.max_bucket_read,
            retention_s=self.retention_s,
            renew_on_match=self.renew_on_match,
            redelivery_window_s=self.redelivery_window_s,
        )
        self._addresses = BucketAddresses(self.keys.buckets, self.layout, bulk_string)
        self._bucket_reads = BucketReads(
            client,
            self.keys,
            self._addresses,
            self.rule,
            max_bucket_read=self.max_bucket_read,
            retention_s=self.retention_s,
            encodes=packs_encoded(client),
        )
        self._cache_sync = (
            CacheSync(
                client,
                self.keys,
                self._addresses,
                native=native,
                on_rolled_back=lambda: self._report_reset(
                    "the index lost writes that this worker had seen (a replica promoted, or "
                    "a restart that lost its last writes)"
                ),
            )
            if bucket_cache and self._addresses.slot_count is not None
            else None
        )
        self._ahead = (
            Ahead(OrderedConnection(client))
            if in_order
            and self._cache_sync is not None
            and self.max_bucket_read > 0
            and isinstance(client, aioredis.Redis)
            else None
        )

    async def ensure_layout(self) -> None:
        await super().ensure_layout()
        if self._ahead is not None:  # (the calls there are sent without waiting to load them)
            await scripts.load(self.client, Script.CHECK_AND_INSERT, Script.SINCE)

    @property
    def uses_bucket_cache(self) -> bool:
        return self._cache_sync is not None

    @property
    def native_cache(self) -> bool:
        """Whether the bucket cache is the native one (bucket_cache.py)."""
        return self._cache_sync is not None and self._cache_sync.cache.native

    @property
    def cached_entries(self) -> int:
        """Bucket entries in this worker's copy (0 without one)."""
        return self._cache_sync.cache.entries if self._cache_sync is not None else 0

    @property
    def description(self) -> dict[str, str]:
        """What the index stores about its layout and fingerprints; every worker on it must
        agree."""
        described = {
            "format": LAYOUT_FORMAT,
            "layout": self.layout.family.value,
            "threshold": str(self.threshold),
            "related_threshold": str(self.layout.search_radius),  # (stored name)
            "duplicate_bins": str(self.rule.duplicate_bins),
            "sketch": self.rule.shape.spec(),
            "tables": self.layout.spec(),
            "groups": str(self.groups),  # (its short lines' buckets)
            "exact_groups": str(self.exact_groups),
        }
        if self.fingerprint_spec is not None:
            described["fingerprints"] = self.fingerprint_spec  # (the meta field's stored name)
        return described

    async def _decide_ahead(
        self, probes: Sequence[Probe], chain: Chain, claims: list[tuple[str, int]]
    ) -> list[Verdict] | None:
        """Read from the cache and send the calls, then the sync that brings the cache up to
        them, without waiting for the batches sent before (unless none is in flight, or other
        workers insert much: then the cache is brought up first); then wait for the
        replies, in order. The calls are numbered in `chain`: Redis runs none after one of
        the chain that did not run."""
        ahead, cache_sync = self._ahead, self._cache_sync
        if ahead is None or cache_sync is None:
            return None
        cache = cache_sync.cache
        async with self._sending:
            self._in_turn(chain)
            if self._epoch is None:
                await self.ensure_layout()
            fresh = ahead.must_wait()
            if fresh:
                await ahead.ordered.settled()
                await self._sync()
                self._in_turn(chain)  # (the batches before may have failed meanwhile)
            epoch, reloads = self._epoch, cache_sync.reloads
            assert epoch is not None
            in_order = InOrder(
                cache.last,
                cache.last_entry,
                [] if fresh else ahead.in_flight(),
                self.keys.call_record,
            )
            reads = self._bucket_reads.from_cache(cache, probes, cache.last, cache_sync.now_s)
            calls = self.script_calls.calls(
                probes, reads, epoch, lambda: guard.pack(chain, claims), in_order
            )
            commands = [("EVALSHA", scripts.sha(Script.CHECK_AND_INSERT), *c.argv) for c in calls]
            commands.append(("EVALSHA", scripts.sha(Script.SINCE), *cache_sync.since_call(epoch)))
            replies = await ahead.send(commands, [c.record for c in calls if c.record])
        *answers, sync_reply = await replies
        failed = [
            a for a in (*answers, sync_reply) if isinstance(a, redis.exceptions.ResponseError)
        ]
        if failed:
            if any(isinstance(a, redis.exceptions.NoScriptError) for a in failed):
                await scripts.load(self.client, Script.CHECK_AND_INSERT, Script.SINCE)
                raise ScriptsLoaded("Redis had lost the scripts; they are loaded again")
            error = translate(failed[0])
            if isinstance(error, IndexReset) and epoch == self._epoch:
                self._report_reset("the index was emptied or built again (its epoch changed)")
                await self._recover()
            raise error from failed[0]
        await cache_sync.take_in(sync_reply, reloads)
        verdicts = [
            self.script_calls.verdict(p, reply)
            for p, reply in zip(probes, itertools.chain.from_iterable(answers), strict=True)
        ]
        ahead.watch(verdicts, reads)
        return verdicts

    async def read_buckets(self, probes: Sequence[Probe]) -> list[BucketRead | None]:
        """The first step of check_and_insert (bucket_reads.py): from the bucket cache, or
        else with MGETs."""
        if self.max_bucket_read <= 0 or all(p.fingerprint is None for p in probes):
            return [None] * len(probes)
        if self._cache_sync is not None:
            snapshot, now_s = await self._sync()
            return self._bucket_reads.from_cache(self._cache_sync.cache, probes, snapshot, now_s)
        return await self._bucket_reads.from_redis(probes)

    async def run_checks(
        self,
        probes: Sequence[Probe],
        reads: Sequence[BucketRead | None],
        claims: Sequence[tuple[str, int]] = (),
    ) -> list[Verdict]:
        """The second step of check_and_insert: the script calls that decide and insert,
        given what `read_buckets` found (whatever was inserted in between, they see)."""
        replies = await self._run(
            Script.CHECK_AND_INSERT,
            lambda epoch: [
                c.argv
                for c in self.script_calls.calls(
                    probes, reads, epoch, lambda: guard.pack(None, claims)
                )
            ],
        )
        return verdicts_of(self.rule, probes, replies)

    async def refresh(self) -> None:
        """Bring the bucket cache up to the index now rather than at the next check (a worker
        does at start, so that its first batch does not pay for loading it)."""
        if self._cache_sync is not None:
            await self._sync()

    async def _sync(self) -> tuple[int, int]:
        """Bring the cache up to the index's counter (what the ring holds since the cache's
        last entry, or a reload); returns that counter and Redis's time (unix s)."""
        cache_sync = self._cache_sync
        assert cache_sync is not None
        reloads = cache_sync.reloads
        [reply] = await self._run(Script.SINCE, lambda epoch: [cache_sync.since_call(epoch)])
        await cache_sync.take_in(reply, reloads)
        return cache_sync.cache.last, cache_sync.now_s

    async def _settled(self, chain: Chain) -> None:
        if self._ahead is not None:
            await self._ahead.ordered.settled()
            self._in_turn(chain)  # (those may have failed meanwhile)

    async def _reload(self) -> None:
        if self._cache_sync is not None:
            await self._cache_sync.reload()

    async def close(self) -> None:
        if self._ahead is not None:
            await self._ahead.ordered.close()
        await super().close()
