"""An index emptied or rolled back under a running worker (a flush, a restart without its data,
a failover to a replica that lags): the worker notices, says so, takes in the index as it is
now and goes on, and never calls a copy of an article the index still holds unique. Also the
boundaries where a worker's view and Redis's could part: expiry judged by two clocks, a hot
bucket in the cache, other fingerprint settings."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.support.factories import BASE, SAME, flip, probe, sketch_agreeing
from tests.support.records import in_second
from worker.errors import LayoutMismatch
from worker.index.base import IndexOptions
from worker.index.memory import MemoryIndex
from worker.index.redis import RedisIndex
from worker.index.redis.keys import NamespaceKeys
from worker.layout.tables import multi_index, pigeonhole
from worker.model import Kind, Probe

LAYOUT = multi_index(8, 5)  # tables of at most 16 bits: the worker keeps a bucket cache


def unrelated(rng: random.Random, n: int, name: str) -> list[Probe]:
    return [probe(f"{name} {i}", rng.getrandbits(64)) for i in range(n)]


def recording(
    namespace: str, client: aioredis.Redis, **options: Any
) -> tuple[RedisIndex, list[str]]:
    """An index on `namespace`, and the list of the resets it reports."""
    said: list[str] = []
    return RedisIndex(client, namespace, LAYOUT, on_reset=said.append, **options), said


async def test_an_index_emptied_and_refilled_past_the_cache_is_noticed(
    redis_client: aioredis.Redis,
) -> None:
    rng = random.Random(1)
    worker, said = recording("flushed", redis_client)
    await worker.check_and_insert(unrelated(rng, 10, "old"))
    await worker.refresh()  # its cache holds numbers 1..10
    await redis_client.flushdb()
    # Another replica builds the index again and inserts more than the cache had seen.
    other = RedisIndex(redis_client, "flushed", LAYOUT)
    await other.check_and_insert([probe("original", BASE), *unrelated(rng, 11, "new")])
    [v] = await worker.check_and_insert([probe("copy", flip(BASE, [3, 40]))])
    assert (v.kind, v.duplicate_of) == (Kind.NEAR, "original")
    assert said, "the reset was not reported"


async def test_an_index_rolled_back_under_the_cache_is_noticed(
    redis_client: aioredis.Redis,
) -> None:
    # A replica promoted while it lagged: the index goes back to an earlier state, and what
    # other workers write next reuses the numbers that the cache has seen.
    rng = random.Random(2)
    worker, said = recording("rolled", redis_client)
    await worker.check_and_insert(unrelated(rng, 7, "kept"))
    dumped = {key: await redis_client.dump(key) for key in await redis_client.keys("*")}
    await worker.check_and_insert(unrelated(rng, 3, "lost"))
    await worker.refresh()  # its cache holds numbers 1..10
    await redis_client.flushdb()
    for key, value in dumped.items():
        await redis_client.restore(key, 0, value)  # the counter is back at 7
    other = RedisIndex(redis_client, "rolled", LAYOUT)
    await other.check_and_insert([probe("original", BASE), *unrelated(rng, 4, "new")])  # 8..12
    [v] = await worker.check_and_insert([probe("copy", flip(BASE, [3, 40]))])
    assert (v.kind, v.duplicate_of) == (Kind.NEAR, "original")
    assert any("lost writes" in why for why in said)


@pytest.mark.parametrize("bucket_cache", [True, False])
async def test_a_worker_goes_on_after_the_index_was_emptied(
    redis_client: aioredis.Redis, bucket_cache: bool
) -> None:
    worker, said = recording(f"goes-on-{bucket_cache}", redis_client, bucket_cache=bucket_cache)
    await worker.check_and_insert([probe("seed", 12345)])
    await redis_client.flushdb()  # the layout record goes with it
    [v] = await worker.check_and_insert([probe("y", BASE)])
    assert v.kind is Kind.UNIQUE
    assert await worker.forget(["y"]) == [True]
    [v] = await worker.check_and_insert([probe("z", BASE, content="other text")])
    [v] = await worker.check_and_insert([probe("z", flip(BASE, [1]), content="new text of z")])
    assert v.replaced
    assert said


@pytest.mark.parametrize("same_call", [False, True])
async def test_a_text_whose_first_record_was_lost_is_matched_exactly_again(
    redis_client: aioredis.Redis, same_call: bool
) -> None:
    """A record lost on its own (a hand-made deletion, an evicted hash) leaves its text's
    content hash naming it: the next article with that text takes the hash over, and a
    later copy is an exact copy of it."""
    index = RedisIndex(redis_client, f"lost-record-{same_call}", LAYOUT)
    await index.check_and_insert([probe("a", BASE)])
    await redis_client.hdel(NamespaceKeys(f"lost-record-{same_call}").docs, "a")
    b, c = probe("b", BASE, content="text of a"), probe("c", BASE, content="text of a")
    if same_call:
        first, copy = await index.check_and_insert([b, c])
    else:
        [first], [copy] = await index.check_and_insert([b]), await index.check_and_insert([c])
    assert first.kind is Kind.UNIQUE
    assert (copy.kind, copy.duplicate_of) == (Kind.EXACT, "b")


async def test_after_a_flush_a_worker_with_another_layout_cannot_mix_layouts(
    redis_client: aioredis.Redis,
) -> None:
    old = RedisIndex(redis_client, "mixed", LAYOUT)
    await old.check_and_insert([probe("x", BASE)])
    await redis_client.flushdb()
    newcomer = RedisIndex(redis_client, "mixed", pigeonhole(8))
    await newcomer.check_and_insert([probe("n", 777)])  # it finds the namespace empty
    with pytest.raises(LayoutMismatch):
        await old.check_and_insert([probe("c", flip(BASE, [3]))])


async def test_other_fingerprint_settings_are_refused(redis_client: aioredis.Redis) -> None:
    await RedisIndex(redis_client, "prints", LAYOUT, fingerprint_spec="shingles 3").ensure_layout()
    with pytest.raises(LayoutMismatch, match="fingerprints"):
        await RedisIndex(
            redis_client, "prints", LAYOUT, fingerprint_spec="shingles 4"
        ).ensure_layout()
    # A command that makes no fingerprints (forget, status) works on it.
    assert await RedisIndex(redis_client, "prints", LAYOUT).forget(["nothing"]) == [False]


async def test_expiry_is_judged_by_redis_clock_whatever_the_worker_clock_says(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More expired candidates than are compared, nearer than a live one: a worker whose clock
    # is behind Redis's would take them for live, hand them over, and miss the live one.
    index = RedisIndex(redis_client, "clocks", LAYOUT, options=IndexOptions(retention_s=3))
    await in_second(redis_client)
    olds = [
        probe(f"old {i}", flip(BASE, [i % 64, (i * 7 + 3) % 64]), sketch=SAME) for i in range(20)
    ]
    await index.check_and_insert(olds)
    await asyncio.sleep(2)
    live = flip(BASE, [10, 20, 30, 40, 50, 60, 62, 5])
    await index.check_and_insert([probe("live", live, sketch=sketch_agreeing(64))])
    await asyncio.sleep(2.2)
    real = time.time
    monkeypatch.setattr(time, "time", lambda: real() - 1.5)
    [v] = await index.check_and_insert([probe("article", BASE, sketch=SAME)])
    assert (v.kind, v.duplicate_of) == (Kind.NEAR, "live")


async def test_removed_entries_in_a_hot_cached_bucket_hide_no_live_one(
    redis_client: aioredis.Redis,
) -> None:
    rng = random.Random(3)
    layout = pigeonhole(3)  # four tables of 16 bits: cached

    def filler(table: int) -> int:  # shares BASE's key in one table, far from it elsewhere
        mask = 0xFFFF << (48 - 16 * table)
        return (BASE & mask) | (rng.getrandbits(64) & ~mask & (2**64 - 1))

    fillers = [filler(t) for t in range(4) for _ in range(2)]
    for index in (
        MemoryIndex(layout, options=IndexOptions(max_bucket_read=2)),
        RedisIndex(redis_client, "hot-cached", layout, options=IndexOptions(max_bucket_read=2)),
        RedisIndex(
            redis_client,
            "hot-read",
            layout,
            bucket_cache=False,
            options=IndexOptions(max_bucket_read=2),
        ),
    ):
        await index.check_and_insert([probe("first", BASE ^ 1)])
        for j, fp in enumerate(fillers):
            await index.check_and_insert([probe(f"filler {j}", fp)])
        await index.check_and_insert([probe("warm", 12345)])  # the cache takes them all in
        await index.forget([f"filler {j}" for j in range(len(fillers))])
        [v] = await index.check_and_insert([probe("article", BASE)])
        assert (v.kind, v.duplicate_of) == (Kind.NEAR, "first"), index
