"""The shared index in Redis: exact-content hashes, bucket tables (worker/layouts.py), one
record per id.

Each article is decided by one Lua script call (check_and_insert.lua), so replicas that
process near-duplicates at the same moment are serialised by Redis: one of them is first.
forget.lua removes articles, expire.lua sweeps out expired ones. Each script starts with
remove.lua, which they share.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions

from worker.errors import IndexStoreError, IndexUnavailable, LayoutMismatch
from worker.index import keys
from worker.index.base import DEFAULT_MAX_BUCKET_READ, Outcome, check_thresholds
from worker.layouts import Layout, Table, pigeonhole
from worker.simhash import from_bytes, to_bytes
from worker.verdict import Kind, Probe, Verdict

LAYOUT_FORMAT = "3"  # bump when the stored record or key layout changes
# What a Redis ACL user needs (docs/operations.md; tested in tests/security).
REDIS_ACL_COMMANDS = "+@scripting +@hash +@string +@transaction +@connection +time +del"


CHECK_AND_INSERT = "check_and_insert.lua"
FORGET = "forget.lua"
EXPIRE = "expire.lua"


@cache
def script_source(name: str) -> str:
    """A script with the shared removal code in front of it."""
    folder = resources.files("worker.index")
    return (folder.joinpath("remove.lua").read_text("utf-8") + "\n"
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
    return aioredis.Redis.from_url(url, decode_responses=False)


class RedisIndex:
    def __init__(self, client: Client, namespace: str = "default",
                 layout: Layout | None = None, *, threshold: int | None = None,
                 verify_threshold: int = -1, max_bucket_read: int = DEFAULT_MAX_BUCKET_READ,
                 retention_s: int = 0) -> None:
        """`layout` is searched up to its own threshold; closer than `threshold` (default:
        the same) is a duplicate, and between the two is related (see Kind.RELATED). With
        `verify_threshold` >= 0, a candidate also needs its verification fingerprint within
        that many bits of the article's."""
        self.client = client
        self.namespace = namespace
        self.layout = layout or pigeonhole(3)
        self.threshold = check_thresholds(self.layout, threshold)
        self.verify_threshold = verify_threshold
        self.max_bucket_read = max_bucket_read
        self.retention_s = retention_s
        self._keys = (keys.docs_key(namespace), keys.exact_key(namespace),
                      keys.ids_key(namespace), keys.meta_key(namespace))
        self._seq = keys.seq_key(namespace)
        # The arguments after the table keys: the same for every article.
        self._shape = [(t.width, t.radius, _first_half(t)) for t in self.layout.tables]
        self._layout_checked = False

    @classmethod
    def from_url(cls, url: str, namespace: str = "default", layout: Layout | None = None, *,
                 cluster: bool = False, **options: Any) -> RedisIndex:
        """An index on a new client; `options` as for the constructor."""
        return cls(connect(url, cluster), namespace, layout, **options)

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

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Outcome]:
        if not probes:
            return []
        replies = await self._run(CHECK_AND_INSERT, self._check_calls(probes))
        return [_outcome(p, r) for p, r in zip(probes, replies, strict=True)]

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

    def _check_calls(self, probes: Sequence[Probe]) -> list[list[Any]]:
        prefix = keys.bucket_prefix(self.namespace)
        calls = []
        for probe in probes:
            fp = probe.fingerprint
            tables: list[int] = []
            if fp is not None:
                for key, shape in zip(self.layout.keys(fp), self._shape, strict=True):
                    tables += (key, *shape)
            verify = probe.verify if self.verify_threshold >= 0 else None
            calls.append([len(self._keys) + 1, *self._keys, self._seq,
                          probe.id.encode("utf-8"), probe.content_hash,
                          to_bytes(fp) if fp is not None else b"", self.threshold,
                          self.max_bucket_read, prefix, self.retention_s,
                          self.layout.threshold,
                          to_bytes(verify) if verify is not None else b"",
                          self.verify_threshold if verify is not None else -1, *tables])
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


def _first_half(table: Table) -> int:
    """Which half of a candidate the script compares first: the one this table's key covers
    less (0: the high 32 bits, bytes 1-4; 4: the low 32 bits), as candidates found through
    the table nearly agree on its key bits and differ most elsewhere."""
    high = sum(p >= 32 for p in table.positions)
    return 4 if high > table.width - high else 0


def _outcome(probe: Probe, reply: list[bytes | int]) -> Outcome:
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
