"""The expiry sweep (lua/expire.lua): its front takes the indexed articles out in the order
they expire, in a few steps whatever the index holds; its pass reclaims the rest."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from tests.support.bands import stream
from tests.support.factories import flip, probe
from tests.support.records import age, numbers
from worker.index.base import IndexOptions
from worker.index.redis import RedisBandIndex, RedisIndex
from worker.index.redis.namespace_index import NamespaceIndex
from worker.layout.bands import Bands
from worker.layout.tables import multi_index
from worker.model import Probe

DAY = 86_400


def made(client: aioredis.Redis, kind: str, namespace: str, renew: bool = False) -> NamespaceIndex:
    options = IndexOptions(retention_s=DAY, renew_on_match=renew)
    if kind == "bands":
        return RedisBandIndex(client, namespace, Bands(), options, expected_docs=100_000)
    return RedisIndex(client, namespace, multi_index(7, 3), options)


def articles(kind: str, n: int, seed: int) -> list[Probe]:
    if kind == "bands":
        return stream(n, seed)
    rng = random.Random(seed)
    return [probe(f"a{i}", rng.getrandbits(64)) for i in range(n)]


async def by_number(
    client: aioredis.Redis, index: NamespaceIndex, probes: list[Probe]
) -> list[str]:
    """The ids of the indexed articles, in the order of their numbers."""
    ids = list(dict.fromkeys(p.id for p in probes))
    held = await numbers(client, index.keys, ids)
    return [i for n, i in sorted(zip(held, ids, strict=True)) if n > 0]


async def front(client: aioredis.Redis, index: NamespaceIndex) -> int:
    return int(await client.hget(index.keys.meta, "front") or 0)


@pytest.mark.parametrize("kind", ["tables", "bands"])
async def test_the_front_takes_the_expired_out_in_a_few_steps_whatever_the_index_holds(
    redis_client: aioredis.Redis, kind: str
) -> None:
    """300 expired articles among 3,000: four steps of 100 take them out (a pass over the
    records alone would look at 400 of the 3,000), and the front stops at the first live."""
    index = made(redis_client, kind, "front")
    probes = articles(kind, 3000, 1)
    for first in range(0, len(probes), 500):
        await index.check_and_insert(probes[first : first + 500])
    indexed = await by_number(redis_client, index, probes)
    await age(redis_client, index.keys, indexed[:300])
    removed = sum([await index.expire(100) for _ in range(4)])
    assert removed >= 300
    assert await numbers(redis_client, index.keys, indexed[:300]) == [-1] * 300
    assert -1 not in await numbers(redis_client, index.keys, indexed[300:])
    [first_live] = await numbers(redis_client, index.keys, indexed[300:301])
    assert await front(redis_client, index) == first_live
    assert await index.expire(100) == 0


async def test_the_front_passes_numbers_deleted_or_renewed_and_stops_at_the_first_live(
    redis_client: aioredis.Redis,
) -> None:
    index = made(redis_client, "tables", "renewed", renew=True)
    rng = random.Random(2)
    fps = [rng.getrandbits(64) for _ in range(10)]
    await index.check_and_insert([probe(f"a{i}", fp) for i, fp in enumerate(fps)])  # 1..10
    await index.forget(["a7"])
    await index.check_and_insert([probe("n3", flip(fps[3], [0]))])  # 11; a3 renewed: 12
    assert await numbers(redis_client, index.keys, ["n3", "a3"]) == [11, 12]
    await age(redis_client, index.keys, [f"a{i}" for i in range(10) if i != 3])
    assert await index.expire(100) == 8
    assert await front(redis_client, index) == 11
    await age(redis_client, index.keys, ["n3"])
    assert await index.expire(100) == 1
    assert await front(redis_client, index) == 12
    assert await numbers(redis_client, index.keys, ["a3"]) == [12]


async def test_the_front_waits_for_numbers_not_yet_given_out(
    redis_client: aioredis.Redis,
) -> None:
    """The front reaches the counter inside an ids hash (numbers 64..127 share one); the
    numbers given out after that in the same hash are swept when they expire."""
    index = made(redis_client, "tables", "waits")
    rng = random.Random(3)
    first = [probe(f"a{i}", rng.getrandbits(64)) for i in range(100)]
    await index.check_and_insert(first)
    await age(redis_client, index.keys, [p.id for p in first])
    assert await index.expire(1000) == 100
    assert await front(redis_client, index) == 101
    later = [probe(f"b{i}", rng.getrandbits(64)) for i in range(10)]
    await index.check_and_insert(later)
    await age(redis_client, index.keys, [p.id for p in later])
    assert await index.expire(1000) == 10
    assert await numbers(redis_client, index.keys, [p.id for p in later]) == [-1] * 10
