"""What the tests read and change in an index's records in Redis, and waiting for Redis's
clock (which judges expiry)."""

from __future__ import annotations

import asyncio

import redis.asyncio as aioredis

from worker.index.redis.format import RECORD
from worker.index.redis.keys import NamespaceKeys


async def age(client: aioredis.Redis, keys: NamespaceKeys, ids: list[str]) -> None:
    """The articles' retention started at the epoch: they have expired."""
    alive = RECORD["alive_s"]
    for article_id in ids:
        record = await client.hget(keys.docs, article_id)
        if isinstance(record, bytes):
            epoch = (1).to_bytes(alive.size)
            aged = record[: alive.start] + epoch + record[alive.start + alive.size :]
            await client.hset(keys.docs, article_id, aged)


async def numbers(client: aioredis.Redis, keys: NamespaceKeys, ids: list[str]) -> list[int]:
    """The articles' sequence numbers (0: not indexed; -1: no record)."""
    seq = RECORD["seq"]
    records = await client.hmget(keys.docs, ids) if ids else []
    return [
        int.from_bytes(r[seq.start : seq.start + seq.size]) if r is not None else -1
        for r in records
    ]


async def in_second(client: aioredis.Redis, s: int | None = None) -> int:
    """Wait until Redis's clock is in second `s` (None: the next one), just past its start;
    returns that second."""
    now_s, micros = await client.time()
    target = now_s + 1 if s is None else s
    await asyncio.sleep(max(0.0, target + 0.05 - now_s - micros / 1e6))
    return max(target, now_s)
