"""Keeping the bucket cache in step: since.lua's replies taken in, a reload when the index lost
writes the cache had seen, and a sync sent before a reload left alone."""

from __future__ import annotations

import redis.asyncio as aioredis

from tests.support.factories import BASE, flip, probe
from worker.index.redis import RedisIndex, scripts
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.cache_sync import CacheSync
from worker.index.redis.format import RING_CHECK
from worker.index.redis.scripts import Script
from worker.layout.tables import multi_index

LAYOUT = multi_index(8, 5)


async def test_a_sync_is_taken_in_and_one_sent_before_a_reload_is_left_alone(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "synced", LAYOUT)
    await index.check_and_insert([probe(f"a{i}", flip(BASE, [i])) for i in range(3)])
    rolled_back: list[bool] = []
    sync = CacheSync(
        redis_client,
        index.keys,
        BucketAddresses(index.keys.buckets, LAYOUT),
        native=False,
        on_rolled_back=lambda: rolled_back.append(True),
    )
    assert index.epoch is not None

    async def sync_reply() -> list[object]:
        [reply] = await scripts.run(redis_client, Script.SINCE, [sync.since_call(index.epoch)])
        return list(reply)

    await sync.take_in(await sync_reply(), sync.reloads)
    tables = len(LAYOUT.tables)
    assert (sync.cache.last, sync.cache.entries, sync.reloads) == (3, 3 * tables, 0)

    # A cache whose last entry the ring no longer holds (as after a failover that lost
    # writes): the sync says so, and the cache is filled again from the buckets.
    sync.cache.last_entry = b"\xff" * RING_CHECK
    stale = await sync_reply()
    before = sync.reloads
    await sync.reload()  # (another sync's reload, meanwhile)
    await sync.take_in(stale, before)  # sent before that reload: left alone
    assert (rolled_back, sync.reloads) == ([], 1)
    sync.cache.last_entry = b"\xff" * RING_CHECK
    await sync.take_in(await sync_reply(), sync.reloads)
    assert (rolled_back, sync.reloads) == ([True], 2)
    assert (sync.cache.last, sync.cache.entries) == (3, 3 * tables)
