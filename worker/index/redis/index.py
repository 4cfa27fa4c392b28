"""The shared index in Redis: exact-content hashes, bucket tables (worker/layout/tables.py), one
record per id.

Articles are decided by a Lua script (check_and_insert.lua; 25 articles per call, each in
turn), so replicas that process near-duplicates at the same moment are serialised by Redis:
one of them is first. Before that, the worker reads the articles' probed buckets and compares
their entries itself (worker/index/redis/nearest.py): from its copy of the buckets
(worker/index/redis/bucket_cache.py, kept in step by since.lua), or with MGETs when a table
of the layout is too wide for a copy. The script then compares only what was inserted since.
forget.lua removes articles, expire.lua sweeps out expired ones. Each script starts with
lib.lua, which they share.
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

import hiredis
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)

from worker.errors import IndexStoreError, IndexUnavailable, LayoutMismatch
from worker.index.base import DEFAULT_MAX_BUCKET_READ, check_thresholds
from worker.index.redis import keys
from worker.index.redis.addresses import ProbedBuckets
from worker.index.redis.bucket_cache import Mirror
from worker.index.redis.nearest import Nearest, gather, nearest
from worker.layout.tables import Layout, Table, pigeonhole
from worker.model import Kind, Probe, Verdict
from worker.text.simhash import from_bytes, to_bytes

if TYPE_CHECKING:  # (worker.settings imports this package)
    from worker.settings import Settings

LAYOUT_FORMAT = "4"  # bump when the stored record or key layout changes
# What a Redis ACL user needs (docs/operations.md; tested in tests/security).
REDIS_ACL_COMMANDS = "+@scripting +@hash +@string +@transaction +@connection +time +del"


MGET_KEYS = 1500  # bucket names per MGET, about: 1-4 ms of Redis's time each (measured)
SCRIPT_ARTICLES = 25  # articles per check-and-insert call: ~1.4 ms of Redis's time (measured)
CHECK_AND_INSERT = "check_and_insert.lua"
FORGET = "forget.lua"
EXPIRE = "expire.lua"
SINCE = "since.lua"


@cache
def script_source(name: str) -> str:
    """A script with the shared removal code in front of it."""
    folder = resources.files("worker.index.redis.lua")
    return (folder.joinpath("lib.lua").read_text("utf-8") + "\n"
            + folder.joinpath(name).read_text("utf-8"))


@cache
def script_sha(name: str) -> str:
    return hashlib.sha1(script_source(name).encode("utf-8")).hexdigest()


Client = aioredis.Redis | aioredis.RedisCluster


def connect(url: str, cluster: bool = False) -> Client:
    """A client for one Redis, or for a Redis Cluster reached through one of its nodes (every
    key of a namespace shares its hash tag, so each script call runs on one node)."""
    if cluster:
        return aioredis.RedisCluster.from_url(url, decode_responses=False)
    client = aioredis.Redis.from_url(url, decode_responses=False)
    pool = client.connection_pool
    pool.connection_class = _PACKING_IN_C.get(pool.connection_class, pool.connection_class)
    return client


def bulk_string(name: str) -> bytes:
    """One argument in Redis's wire format (RESP)."""
    data = name.encode("utf-8")
    return b"$%d\r\n%s\r\n" % (len(data), data)


class Encoded(bytes):
    """`arguments` of them already in Redis's wire format, one after another (bulk_string):
    to send thousands of bucket names with a join rather than by encoding each again."""

    arguments: int

    def __new__(cls, data: bytes, arguments: int) -> Encoded:
        self = super().__new__(cls, data)
        self.arguments = arguments
        return self


class _PackInC:
    """redis-py's asyncio connections pack commands in Python, copying the command so far
    again for every argument (~0.3 ms for a 190-key MGET); its sync ones use hiredis, in C.
    A command may end with Encoded arguments (~10x less time than hiredis for 1,500 names)."""

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str):  # "SCRIPT LOAD": two words, sent as two arguments
            args = (*args[0].encode().split(), *args[1:])
        tail = args[-1] if isinstance(args[-1], Encoded) else None
        try:
            head = hiredis.pack_command(args[:-1] if tail is not None else args)
        except TypeError as exc:
            raise redis.exceptions.DataError(str(exc)) from exc
        if tail is None:
            return [head]
        # The head counts its own arguments ("*<n>\r\n"): count the encoded ones too.
        count = b"*%d\r\n" % (len(args) - 1 + tail.arguments)
        return [count + head[head.index(b"\r\n") + 2:], bytes(tail)]


_PACKING_IN_C: dict[type[AbstractConnection], type[AbstractConnection]] = {
    base: type(base.__name__, (_PackInC, base), {})
    for base in (Connection, SSLConnection, UnixDomainSocketConnection)
}


class RedisIndex:
    def __init__(self, client: Client, namespace: str = "default",
                 layout: Layout | None = None, *, threshold: int | None = None,
                 verify_threshold: int = -1, max_bucket_read: int = DEFAULT_MAX_BUCKET_READ,
                 retention_s: int = 0, mirror: bool = True) -> None:
        """`layout` is searched up to its own threshold; closer than `threshold` (default:
        the same) is a duplicate, and between the two is related (see Kind.RELATED). With
        `verify_threshold` >= 0, a candidate also needs its verification fingerprint within
        that many bits of the article's. With `mirror`, the worker keeps a copy of the
        buckets (BucketCache) when the layout's tables are at most 16 bits wide; else it reads
        Redis's."""
        self.client = client
        self.namespace = namespace
        self.layout = layout or pigeonhole(3)
        self.threshold = check_thresholds(self.layout, threshold)
        self.verify_threshold = verify_threshold
        self.max_bucket_read = max_bucket_read
        self.retention_s = retention_s
        self._keys = (keys.docs_key(namespace), keys.exact_key(namespace),
                      keys.ids_key(namespace), keys.meta_key(namespace),
                      keys.recent_key(namespace))
        self._seq = keys.seq_key(namespace)
        # Each table's width, radius and half to compare first: sent once per script call.
        self._shape = [(t.width, t.radius, _first_half(t)) for t in self.layout.tables]
        self._probed = ProbedBuckets(keys.bucket_prefix(namespace), self.layout, bulk_string)
        # A Redis Cluster client routes a command by its keys: it needs them as names.
        self._encodes = isinstance(client, aioredis.Redis) and issubclass(
            client.connection_pool.connection_class, _PackInC)
        self._mirror = (Mirror(self._probed) if mirror and self._probed.slot_count is not None
                        else None)
        # What a copy reloads from (every bucket of one table); only a copy needs it.
        self._whole_table = self._probed.whole_table() if self._mirror is not None else None
        self._layout_checked = False

    @property
    def mirrored(self) -> bool:
        """Whether this index reads its buckets from a copy in the worker (Mirror)."""
        return self._mirror is not None

    @classmethod
    def from_url(cls, url: str, namespace: str = "default", layout: Layout | None = None, *,
                 cluster: bool = False, **options: Any) -> RedisIndex:
        """An index on a new client; `options` as for the constructor."""
        return cls(connect(url, cluster), namespace, layout, **options)

    @classmethod
    def from_settings(cls, settings: Settings) -> RedisIndex:
        """The index the worker's settings describe, on a new client."""
        return cls.from_url(settings.redis_url, settings.namespace, settings.index_layout(),
                            cluster=settings.redis_cluster, mirror=settings.bucket_copy,
                            **settings.index_options())

    @property
    def description(self) -> dict[str, str]:
        """What the index stores about its layout; every worker on it must agree."""
        return {
            "format": LAYOUT_FORMAT,
            "layout": self.layout.family.value,
            "threshold": str(self.threshold),
            "related_threshold": str(self.layout.threshold),
            "verify_threshold": str(self.verify_threshold),
            "tables": self.layout.spec(),
        }

    async def ensure_layout(self) -> None:
        """Record this index's layout, or refuse if the namespace was built with another."""
        key = keys.meta_key(self.namespace)
        try:
            async with self.client.pipeline(transaction=True) as pipe:
                for field, value in self.description.items():
                    pipe.hsetnx(key, field, value)
                pipe.hgetall(key)
                stored_raw = (await pipe.execute())[-1]
        except redis.exceptions.RedisError as exc:
            raise _translate(exc) from exc
        stored = {k.decode(): v.decode() for k, v in stored_raw.items()}
        if stored != self.description:
            raise LayoutMismatch(
                f"namespace {self.namespace!r} was built with layout {stored}, this worker "
                f"wants {self.description}; use the same threshold and layout settings, or "
                "another DEDUP_NAMESPACE"
            )
        self._layout_checked = True

    def bucket_keys(self, fingerprint: int) -> list[str]:
        """The buckets that hold `fingerprint` once it is indexed, one per table."""
        return [keys.bucket_key(self.namespace, i, key, table.width) for i, (table, key)
                in enumerate(zip(self.layout.tables, self.layout.keys(fingerprint), strict=True))]

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        if not probes:
            return []
        reads = await self._read(probes) if self.max_bucket_read > 0 else [None] * len(probes)
        return await self._decide(probes, reads)

    async def _decide(self, probes: Sequence[Probe], reads: Sequence[Read | None],
                      ) -> list[Verdict]:
        """The script calls that decide and insert, given what `_read` found."""
        calls = await self._run(CHECK_AND_INSERT, self._check_calls(probes, reads))
        replies = itertools.chain.from_iterable(calls)
        return [_verdict_from_reply(p, r) for p, r in zip(probes, replies, strict=True)]

    async def _read(self, probes: Sequence[Probe]) -> list[Read | None]:
        """For each probe with a fingerprint: the nearest entry of its probed buckets, and the
        sequence counter they were read at (the snapshot): from the worker's copy of the
        buckets (Mirror), or else with MGETs."""
        searched = [(p.fingerprint, p.verify) for p in probes if p.fingerprint is not None]
        if not searched:
            return [None] * len(probes)
        fingerprints = [fp for fp, _ in searched]
        verified = self.verify_threshold >= 0
        verifies = [verify if verified else None for _, verify in searched]
        cutoff = int(time.time()) - self.retention_s if self.retention_s else None
        if self._mirror is not None:
            snapshots = [await self._sync()] * len(fingerprints)
            gathered = self._mirror.read(fingerprints, max_read=self.max_bucket_read,
                                         cutoff_s=cutoff)
        else:
            snapshots, buckets = await self._mget(fingerprints)
            per = self._probed.per_fingerprint
            gathered = gather([buckets[i * per:(i + 1) * per] for i in range(len(fingerprints))],
                              max_read=self.max_bucket_read, cutoff_s=cutoff)
        found = nearest(gathered, fingerprints, verifies, radius=self.layout.threshold,
                        verify_threshold=self.verify_threshold, cutoff_s=cutoff)
        reads = [Read(snapshot, nearest_one, self._expired(fp, nearest_one))
                 for snapshot, fp, nearest_one in zip(snapshots, fingerprints, found,
                                                      strict=True)]
        found_reads = iter(reads)
        return [next(found_reads) if p.fingerprint is not None else None for p in probes]

    async def refresh(self) -> None:
        """Bring the worker's copy of the buckets up to the index now, rather than at the next
        check (a fresh copy loads every bucket of one table: ~24 MB at 1M articles)."""
        if self._mirror is not None:
            await self._sync()

    async def _sync(self) -> int:
        """Bring the mirror up to the index's counter (what the ring holds since the mirror's
        last entry, or a reload); returns that counter."""
        assert self._mirror is not None
        [reply] = await self._run(SINCE, [[2, self._seq, keys.recent_key(self.namespace),
                                           self._mirror.last]])
        if len(reply) == 2:
            self._mirror.add(reply[1], int(reply[0]))
        else:
            await self._reload()
        return self._mirror.last

    async def _reload(self) -> None:
        """Fill the mirror from every bucket of one table (one MGET with the counter: one
        snapshot). At 1M articles: ~24 MB, once."""
        assert self._mirror is not None and self._whole_table is not None
        try:
            values = await self.client.execute_command("MGET", self._seq, *self._whole_table)
        except redis.exceptions.RedisError as exc:
            raise _translate(exc) from exc
        self._mirror.reset(b"".join(filter(None, values[1:])), int(values[0] or 0))

    async def _mget(self, fingerprints: list[int]) -> tuple[list[int], list[bytes | None]]:
        """Without a mirror: each fingerprint's snapshot, and the values of its probed buckets
        (`per_fingerprint` each, one fingerprint after another), read with one MGET per ~25
        fingerprints (one reply per fingerprint cost the worker ~15 us per article more,
        measured; one for a whole large batch would hold Redis up for milliseconds). Each
        MGET also reads the counter: the snapshot of its group."""
        per = self._probed.per_fingerprint
        group = max(1, MGET_KEYS // per)
        starts = range(0, len(fingerprints), group)
        # Each MGET's bucket names: in one encoded piece, or one by one for a cluster client.
        groups: list[list[Any]]
        if self._encodes:
            groups = [[Encoded(joined, per * min(group, len(fingerprints) - start))]
                      for joined, start in zip(self._probed.joined(fingerprints, group), starts,
                                               strict=True)]
        else:
            every = self._probed.names(fingerprints)
            groups = [every[start * per:(start + group) * per] for start in starts]
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for names in groups:
                    pipe.execute_command("MGET", self._seq, *names)
                replies = await pipe.execute()
        except redis.exceptions.RedisError as exc:
            raise _translate(exc) from exc
        snapshots = [int(replies[i // group][0] or 0) for i in range(len(fingerprints))]
        return snapshots, [value for reply in replies for value in reply[1:]]

    def _expired(self, fingerprint: int, found: Nearest) -> list[str]:
        """The names of the buckets that `found` says start with expired entries."""
        if not found.expired:
            return []
        names = self._probed.names([fingerprint])
        return [names[i] for i in found.expired]

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        """Remove articles from every table; True for each id that was in the index."""
        if not ids:
            return []
        call = [len(self._keys), *self._keys, keys.bucket_prefix(self.namespace),
                *(i.encode("utf-8") for i in ids)]
        [reply] = await self._run(FORGET, [call])
        return [bool(r) for r in reply]

    async def expire(self, limit: int = 1000) -> int:
        """One step of the expiry sweep: look at up to ~`limit` records, remove the expired
        ones; returns how many. Workers share the sweep's cursor, so steps taken by any of
        them advance one pass over the index."""
        if not self.retention_s:
            return 0
        call = [len(self._keys) + 1, *self._keys, keys.sweep_key(self.namespace),
                keys.bucket_prefix(self.namespace), self.retention_s, limit]
        [(removed, _)] = await self._run(EXPIRE, [call])
        return int(removed)

    def _check_calls(self, probes: Sequence[Probe],
                     reads: Sequence[Read | None]) -> list[list[Any]]:
        """One script call per SCRIPT_ARTICLES probes: the shared arguments, then each
        probe's (check_and_insert.lua's header)."""
        shared = [len(self._keys) + 1, *self._keys, self._seq, self.threshold,
                  self.layout.threshold, self.max_bucket_read,
                  keys.bucket_prefix(self.namespace), self.retention_s, self.verify_threshold,
                  len(self._shape), *itertools.chain.from_iterable(self._shape)]
        verified = self.verify_threshold >= 0
        calls = []
        for start in range(0, len(probes), SCRIPT_ARTICLES):
            call = list(shared)
            for probe, read in zip(probes[start:start + SCRIPT_ARTICLES],
                                   reads[start:start + SCRIPT_ARTICLES], strict=True):
                fp, verify = probe.fingerprint, probe.verify if verified else None
                call += [probe.id.encode("utf-8"), probe.content_hash,
                         to_bytes(fp) if fp is not None else b"",
                         to_bytes(verify) if verify is not None else b"",
                         *(read.arguments() if read else NOT_READ)]
                if fp is not None:
                    call += self.layout.keys(fp)
            calls.append(call)
        return calls

    async def _run(self, script: str, calls: list[list[Any]]) -> list[Any]:
        """Every call of `script` in one pipeline (one round trip). redis-py's Script objects
        would add a SCRIPT EXISTS round trip to every pipeline."""
        try:
            if not self._layout_checked:
                await self.ensure_layout()  # the scripts read the table spec from it
            try:
                return await self._evalsha(script, calls)
            except redis.exceptions.NoScriptError:
                # First use, or Redis lost its script cache (restart, SCRIPT FLUSH). Nothing in
                # the batch ran: every call failed the same way, so running it again is safe.
                await self.client.script_load(script_source(script))
                return await self._evalsha(script, calls)
        except redis.exceptions.RedisError as exc:
            raise _translate(exc) from exc

    async def _evalsha(self, script: str, calls: list[list[Any]]) -> list[Any]:
        sha = script_sha(script)
        async with self.client.pipeline(transaction=False) as pipe:
            for call in calls:
                # (execute_command: redis-py refuses pipe.evalsha on a cluster pipeline)
                pipe.execute_command("EVALSHA", sha, *call)
            return await pipe.execute()

    async def close(self) -> None:
        await self.client.aclose()


@dataclass(frozen=True)
class Read:
    """What the worker read for one article before its script call."""

    snapshot: int  # the sequence counter when the buckets were read
    found: Nearest
    expired: list[str]  # the buckets read that start with expired entries

    def arguments(self) -> list[Any]:
        """ARGV[11..] of check_and_insert.lua, up to the tables."""
        return [self.snapshot, self.found.entry, self.found.candidates, self.found.hot,
                len(self.expired), *self.expired]


NOT_READ = [b"", b"", 0, 0, 0]  # Read.arguments when the worker read nothing


def _first_half(table: Table) -> int:
    """Which half of a candidate the script compares first: the one this table's key covers
    less (0: the high 32 bits, bytes 1-4; 4: the low 32 bits), as candidates found through
    the table nearly agree on its key bits and differ most elsewhere."""
    high = sum(p >= 32 for p in table.positions)
    return 4 if high > table.width - high else 0


def _verdict_from_reply(probe: Probe, reply: list[bytes | int]) -> Verdict:
    kind = bytes(reply[0]).decode()
    _, distance, dup_id, dup_fp, seen_at, replayed, candidates, hot, replaced = reply
    assert isinstance(distance, int) and isinstance(seen_at, int)
    assert isinstance(candidates, int) and isinstance(hot, int)
    assert isinstance(dup_id, bytes) and isinstance(dup_fp, bytes)
    return Verdict(
        id=probe.id,
        kind=Kind(kind),
        fingerprint=probe.fingerprint,
        duplicate_of=dup_id.decode("utf-8") if kind != "unique" else None,
        distance=distance if distance >= 0 else None,
        duplicate_of_fingerprint=from_bytes(dup_fp) if dup_fp else None,
        seen_at_ms=seen_at,
        replayed=bool(replayed),
        candidates=candidates,
        hot_buckets=hot,
        replaced=bool(replaced),
    )


def _translate(exc: redis.exceptions.RedisError) -> IndexStoreError:
    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return IndexUnavailable(f"Redis cannot be reached: {exc}")
    if isinstance(exc, redis.exceptions.BusyLoadingError):
        return IndexUnavailable(f"Redis is loading its data: {exc}")
    if isinstance(exc, redis.exceptions.NoPermissionError):
        return IndexStoreError(
            f"the Redis user lacks a permission ({exc}); grant it the keys ~{keys.PREFIX}:* and "
            f"the commands it runs: {REDIS_ACL_COMMANDS}")
    if isinstance(exc, redis.exceptions.AuthenticationError):
        return IndexStoreError(f"Redis refused the credentials in DEDUP_REDIS_URL: {exc}")
    return IndexStoreError(f"Redis refused the request: {exc}")
