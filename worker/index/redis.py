"""The shared index in Redis: exact-content hashes, bucket tables (worker/layouts.py), one
record per id.

Each article is decided by one Lua script call (check_and_insert.lua), so replicas that
process near-duplicates at the same moment are serialised by Redis: one of them is first.
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
from worker.index.base import DEFAULT_MAX_BUCKET_READ, Outcome
from worker.layouts import Layout, pigeonhole
from worker.simhash import from_bytes, to_bytes
from worker.verdict import IdConflict, Kind, Probe, Verdict

LAYOUT_FORMAT = "2"  # bump when the stored record or key layout changes
# What a Redis ACL user needs (docs/operations.md; tested in tests/security).
REDIS_ACL_COMMANDS = "+@scripting +@hash +@string +@transaction +@connection +time"


@cache
def _script_source() -> str:
    return resources.files("worker.index").joinpath("check_and_insert.lua").read_text("utf-8")


class RedisIndex:
    def __init__(self, client: aioredis.Redis, namespace: str = "default",
                 layout: Layout | None = None,
                 max_bucket_read: int = DEFAULT_MAX_BUCKET_READ) -> None:
        self.client = client
        self.namespace = namespace
        self.layout = layout or pigeonhole(3)
        self.threshold = self.layout.threshold
        self.max_bucket_read = max_bucket_read
        self._keys = (keys.docs_key(namespace), keys.exact_key(namespace),
                      keys.ids_key(namespace), keys.seq_key(namespace))
        # The arguments after the table keys: the same for every article.
        self._shape = [(t.width, t.radius) for t in self.layout.tables]
        self._sha = hashlib.sha1(_script_source().encode("utf-8")).hexdigest()

    @classmethod
    def from_url(cls, url: str, namespace: str = "default", layout: Layout | None = None,
                 max_bucket_read: int = DEFAULT_MAX_BUCKET_READ) -> RedisIndex:
        client = aioredis.Redis.from_url(url, decode_responses=False)
        return cls(client, namespace, layout, max_bucket_read)

    @property
    def description(self) -> dict[str, str]:
        """What the index stores about its layout; every worker on it must agree."""
        return {
            "format": LAYOUT_FORMAT,
            "layout": self.layout.family.value,
            "threshold": str(self.threshold),
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

    def bucket_keys(self, fingerprint: int) -> list[str]:
        """The buckets that hold `fingerprint` once it is indexed, one per table."""
        return [keys.bucket_key(self.namespace, i, key, table.width) for i, (table, key)
                in enumerate(zip(self.layout.tables, self.layout.keys(fingerprint), strict=True))]

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Outcome]:
        if not probes:
            return []
        try:
            try:
                replies = await self._evaluate(probes)
            except redis.exceptions.NoScriptError:
                # First use, or Redis lost its script cache (restart, SCRIPT FLUSH). Nothing in
                # the batch ran: every call failed the same way, so running it again is safe.
                await self.client.script_load(_script_source())
                replies = await self._evaluate(probes)
        except redis.exceptions.RedisError as exc:
            raise _translate(exc) from exc
        return [_outcome(p, r) for p, r in zip(probes, replies, strict=True)]

    async def _evaluate(self, probes: Sequence[Probe]) -> list[Any]:
        """One EVALSHA per probe, all in one pipeline (one round trip). redis-py's Script
        objects would add a SCRIPT EXISTS round trip to every pipeline."""
        prefix = keys.bucket_prefix(self.namespace)
        async with self.client.pipeline(transaction=False) as pipe:
            for probe in probes:
                fp = probe.fingerprint
                tables: list[int] = []
                if fp is not None:
                    for key, (width, radius) in zip(self.layout.keys(fp), self._shape,
                                                    strict=True):
                        tables += (key, width, radius)
                pipe.evalsha(self._sha, len(self._keys), *self._keys,
                             probe.id.encode("utf-8"), probe.content_hash,
                             to_bytes(fp) if fp is not None else b"", self.threshold,
                             self.max_bucket_read, prefix, *tables)
            return await pipe.execute()

    async def close(self) -> None:
        await self.client.aclose()


def _outcome(probe: Probe, reply: list[bytes | int]) -> Outcome:
    kind = bytes(reply[0]).decode()
    if kind == "conflict":
        return IdConflict(probe.id)
    _, distance, dup_id, dup_fp, seen_at, replayed, candidates, hot = reply
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
