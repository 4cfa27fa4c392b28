"""Sequence numbers go on past what four bytes hold (format.NUMBER_BYTES), on both layouts:
the articles numbered across 2^32 are indexed, found, replayed and deleted like any other,
and a worker whose bucket copy is loaded there finds them."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from tests.support.factories import flip, probe
from worker.errors import IndexStoreError
from worker.index.redis import RedisBandIndex, RedisIndex, format
from worker.index.redis.keys import NamespaceKeys
from worker.layout.bands import Bands
from worker.layout.tables import multi_index
from worker.model import Kind

FOUR_BYTES = 2**32  # the first number four bytes cannot hold


def new_index(client: aioredis.Redis, namespace: str, kind: str) -> RedisIndex | RedisBandIndex:
    if kind == "tables":
        return RedisIndex(client, namespace, multi_index(8, 5))  # (a worker copy: 12-bit tables)
    return RedisBandIndex(client, namespace, Bands(), expected_docs=1_000)


@pytest.mark.parametrize("kind", ["tables", "bands"])
async def test_numbers_go_on_past_four_bytes(redis_client: aioredis.Redis, kind: str) -> None:
    namespace = f"numbers-{kind}"
    keys = NamespaceKeys(namespace)
    index = new_index(redis_client, namespace, kind)
    await index.ensure_layout()
    await redis_client.set(keys.seq, FOUR_BYTES - 2)
    rng = random.Random(5)
    fps = [rng.getrandbits(64) for _ in range(4)]
    originals = [probe(f"o{i}", fp) for i, fp in enumerate(fps)]
    assert {v.kind for v in await index.check_and_insert(originals)} == {Kind.UNIQUE}
    for number, original in enumerate(originals, start=FOUR_BYTES - 1):
        record = format.parse_record(await redis_client.hget(keys.docs, original.id))
        assert record.seq == number
        owner = await redis_client.hget(keys.ids_hash(number), format.pack_number(number))
        assert owner == original.id.encode()

    # A second worker, its bucket copy (tables) loaded past the boundary, finds each one.
    other = new_index(redis_client, namespace, kind)
    assert other.uses_bucket_cache == (kind == "tables")
    copies = [probe(f"c{i}", flip(fp, [3, 40])) for i, fp in enumerate(fps)]
    verdicts = await other.check_and_insert(copies)
    assert [(v.kind, v.duplicate_of) for v in verdicts] == [
        (Kind.NEAR, f"o{i}") for i in range(len(fps))
    ]
    assert [v.replayed for v in await other.check_and_insert(originals[1:2])] == [True]

    # The article numbered 2^32 and its copy deleted, a third copy of it is new; the others
    # still match.
    assert await index.forget(["o1", "c1"]) == [True, True]
    third = [probe(f"t{i}", flip(fp, [7])) for i, fp in enumerate(fps)]
    verdicts = await index.check_and_insert(third)
    assert [v.kind for v in verdicts] == [Kind.NEAR, Kind.UNIQUE, Kind.NEAR, Kind.NEAR]
    ids = keys.ids_hash(FOUR_BYTES)
    assert await redis_client.hget(ids, format.pack_number(FOUR_BYTES)) is None
    await index.close()
    await other.close()


@pytest.mark.parametrize("kind", ["tables", "bands"])
async def test_an_index_out_of_numbers_refuses_rather_than_wraps(
    redis_client: aioredis.Redis, kind: str
) -> None:
    namespace = f"last-{kind}"
    index = new_index(redis_client, namespace, kind)
    await index.ensure_layout()
    await redis_client.set(NamespaceKeys(namespace).seq, format.LAST_NUMBER - 1)
    with pytest.raises(IndexStoreError, match="sequence numbers: rebuild it"):
        await index.check_and_insert([probe("late", 0x1234)])
    assert await redis_client.hget(NamespaceKeys(namespace).docs, "late") is None
    await index.close()
