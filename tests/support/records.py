"""What the tests read and change in an index's records in Redis."""

from __future__ import annotations

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
