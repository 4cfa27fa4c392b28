"""Keeping the bucket cache in step: since.lua's looks taken in, a reload when the index lost
writes the cache had seen, and a look sent before a reload left alone."""

from __future__ import annotations

import redis.asyncio as aioredis

from tests.support.factories import BASE, flip, probe
from worker.index.redis import RedisIndex, scripts
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.cache_keeper import CacheKeeper
from worker.index.redis.format import RING_CHECK
from worker.index.redis.scripts import Script
from worker.layout.tables import multi_index

LAYOUT = multi_index(8, 5)


async def test_a_look_is_taken_in_and_one_sent_before_a_reload_is_left_alone(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "kept", LAYOUT)
    await index.check_and_insert([probe(f"a{i}", flip(BASE, [i])) for i in range(3)])
    rolled_back: list[bool] = []
    keeper = CacheKeeper(
        redis_client,
        index.keys,
        BucketAddresses(index.keys.buckets, LAYOUT),
        native=False,
        on_rolled_back=lambda: rolled_back.append(True),
    )
    assert index.epoch is not None

    async def look() -> list[object]:
        [reply] = await scripts.run(redis_client, Script.SINCE, [keeper.since_call(index.epoch)])
        return list(reply)

    await keeper.take_in(await look(), keeper.reloads)
    tables = len(LAYOUT.tables)
    assert (keeper.cache.last, keeper.cache.entries, keeper.reloads) == (3, 3 * tables, 0)

    # A cache whose last entry the ring no longer holds (as after a failover that lost
    # writes): the look says so, and the cache is filled again from the buckets.
    keeper.cache.last_entry = b"\xff" * RING_CHECK
    stale = await look()
    before = keeper.reloads
    await keeper.reload()  # (another look's reload, meanwhile)
    await keeper.take_in(stale, before)  # sent before that reload: left alone
    assert (rolled_back, keeper.reloads) == ([], 1)
    keeper.cache.last_entry = b"\xff" * RING_CHECK
    await keeper.take_in(await look(), keeper.reloads)
    assert (rolled_back, keeper.reloads) == ([True], 2)
    assert (keeper.cache.last, keeper.cache.entries) == (3, 3 * tables)
