"""The Redis index on a real Redis Cluster of 3 primaries with a replica each (the contract
suite also runs there, via make_index): a namespace's keys share one slot, and namespaces
spread over the nodes."""

from __future__ import annotations

import asyncio
import random

import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode

from tests.support.bands import stream, summary, unguessed
from tests.support.factories import flip, probe
from worker.index.redis import RedisBandIndex, RedisIndex
from worker.index.redis.client import connect, connect_replicas
from worker.index.redis.format import RECENT_SLOTS
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.status import read_status
from worker.layout.bands import Bands
from worker.layout.tables import multi_index
from worker.model import Kind, Verdict


async def test_namespaces_spread_over_the_nodes_each_on_one_slot(redis_cluster_url: str) -> None:
    client = connect(redis_cluster_url, cluster=True)
    assert isinstance(client, aioredis.RedisCluster)
    rng = random.Random(11)
    owners = set()
    for n in range(12):
        namespace = f"spread-{n}-{rng.getrandbits(32):x}"
        index = RedisIndex(client, namespace, multi_index(5, 3))
        base = rng.getrandbits(64)
        outcomes = await index.check_and_insert([probe("a", base), probe("b", flip(base, [3]))])
        assert [v.kind for v in outcomes if isinstance(v, Verdict)] == [Kind.UNIQUE, Kind.NEAR]
        assert await index.forget(["b"]) == [True]
        slots = set()
        for node in client.get_primaries():
            keys = await client.keys(f"dedup:{{{namespace}}}:*", target_nodes=node)
            if keys:
                owners.add(node.name)
                slots.update([await client.cluster_keyslot(k) for k in keys])
        assert len(slots) == 1, f"{namespace}: keys on slots {slots}"
    assert len(owners) >= 2, "twelve namespaces all landed on one node"
    await client.aclose()


async def test_status_shows_each_primarys_share_of_a_namespace(redis_cluster_url: str) -> None:
    client = connect(redis_cluster_url, cluster=True)
    assert isinstance(client, aioredis.RedisCluster)
    namespace = f"status-{random.Random(13).getrandbits(32):x}"
    index = RedisIndex(client, namespace, multi_index(5, 3))
    await index.check_and_insert([probe(f"a{n}", n << 40) for n in range(20)])
    status = await read_status(client, namespace)
    primaries = {node.name for node in client.get_primaries()}
    assert {node.address for node in status.nodes} == primaries
    owner = client.get_node_from_key(NamespaceKeys(namespace).meta).name
    # (the namespace's keys share its hash tag: its slot's primary holds them all)
    assert [(node.address, node.keys) for node in status.nodes if node.keys] == [
        (owner, status.keys)
    ]
    assert status.keys >= 20  # (their ids hashes, exact texts, buckets and more)
    assert all(node.used_memory_bytes > 0 for node in status.nodes)
    assert status.redis_memory_bytes == sum(node.used_memory_bytes for node in status.nodes)
    await client.aclose()


async def test_concurrent_clients_on_a_cluster_never_both_call_a_pair_unique(
    redis_cluster_url: str,
) -> None:
    rng = random.Random(12)
    pairs = []
    for i in range(150):
        base = rng.getrandbits(64)
        pairs.append((probe(f"p{i}-x", base), probe(f"p{i}-y", flip(base, [i % 64]))))
    clients = [connect(redis_cluster_url, cluster=True) for _ in range(2)]
    namespace = f"race-{rng.getrandbits(32):x}"
    indexes = [RedisIndex(c, namespace) for c in clients]

    async def run(side: int) -> list[Verdict]:
        return [v for pair in pairs for v in await indexes[side].check_and_insert([pair[side]])]

    xs, ys = await asyncio.gather(run(0), run(1))
    for x, y in zip(xs, ys, strict=True):
        assert [x.kind, y.kind].count(Kind.UNIQUE) == 1, (x, y)
    for c in clients:
        await c.aclose()


async def test_a_fresh_worker_loads_its_copy_of_the_buckets_from_a_cluster(
    redis_cluster_url: str,
) -> None:
    client = connect(redis_cluster_url, cluster=True)
    namespace = f"copy-{random.Random(13).getrandbits(32):x}"
    layout = multi_index(8, 5)  # the default: it keeps a copy, reloaded from its 12-bit table
    base = 0xF0E1D2C3B4A59687
    await RedisIndex(client, namespace, layout).check_and_insert([probe("first", base)])
    # More inserts than the ring holds, as far as a fresh worker can tell: it must reload.
    await client.incrby(NamespaceKeys(namespace).seq, RECENT_SLOTS)
    fresh = RedisIndex(client, namespace, layout)
    assert fresh.uses_bucket_cache
    copy = probe("copy", flip(base, [3, 40]))
    [read] = await fresh.read_buckets([copy])
    assert read is not None
    assert read.found.entries[:8] == base.to_bytes(8)
    [v] = await fresh.run_checks([copy], [read])
    assert (v.kind, v.duplicate_of) == (Kind.NEAR, "first")
    await client.aclose()


async def test_a_band_index_reads_on_the_namespaces_replica(redis_cluster_url: str) -> None:
    client = connect(redis_cluster_url, cluster=True)
    assert isinstance(client, aioredis.RedisCluster)
    namespace = f"replica-{random.Random(14).getrandbits(32):x}"
    slot = await client.cluster_keyslot(NamespaceKeys(namespace).meta)
    # (a fresh cluster's nodes learn of the replicas by gossip; a client, when it connects)
    for _ in range(100):
        replicas = connect_replicas(redis_cluster_url, cluster=True)
        assert isinstance(replicas, aioredis.RedisCluster)
        await replicas.initialize()
        if len(replicas.nodes_manager.slots_cache[slot]) > 1:
            break
        await replicas.aclose()
        await asyncio.sleep(0.1)
    primary, replica, *_ = replicas.nodes_manager.slots_cache[slot]

    async def reads_on(node: ClusterNode) -> int:
        stats = await client.info("commandstats", target_nodes=node)
        return int(stats.get("cmdstat_evalsha_ro", {}).get("calls", 0))

    before = [await reads_on(primary), await reads_on(replica)]
    probes = stream(600, 5)
    reading = RedisBandIndex(
        client,
        namespace,
        Bands(),
        expected_docs=100_000,
        guesses=True,
        replicas=replicas,
    )
    plain = unguessed(connect(redis_cluster_url, cluster=True), f"{namespace}-plain")
    try:
        got: list[Verdict] = []
        expected: list[Verdict] = []
        for start in range(0, len(probes), 100):
            got += await reading.check_and_insert(probes[start : start + 100])
            expected += await plain.check_and_insert(probes[start : start + 100])
        assert summary(got) == summary(expected)
        after = [await reads_on(primary), await reads_on(replica)]
        assert after[0] == before[0]  # (none of the reads on the primary)
        assert after[1] - before[1] >= 6  # (at least the first read of each batch)
    finally:  # (a connection left open fails a later test: an unraisable warning)
        await reading.close()
        await plain.close()
