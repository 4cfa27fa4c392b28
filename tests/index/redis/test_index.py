"""What only the Redis index has to show: its layout record, namespaces, and atomicity
between independent clients."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pytest
import redis.asyncio as aioredis

from tests.support.factories import BASE, flip, probe
from worker.defaults import EXPECTED_DOCS
from worker.errors import IndexUnavailable, LayoutMismatch
from worker.index.base import IndexOptions
from worker.index.redis import RedisIndex, scripts
from worker.index.redis.check_and_insert import Call, CallRecord, InOrder
from worker.index.redis.client import connect
from worker.index.redis.format import (
    ENTRY,
    ENTRY_BYTES,
    EXACT_PER_HASH,
    LAYOUT_FORMAT,
    RECENT_SLOTS,
    RING_CHECK,
    group_bits,
    pack_entry,
)
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import BucketRead, Nearest
from worker.index.redis.scripts import Script
from worker.layout.tables import Layout, multi_index, pigeonhole, sampled
from worker.model import Kind, Probe, Verdict


async def test_layout_is_recorded_and_a_different_one_is_refused(
    redis_client: aioredis.Redis,
) -> None:
    await RedisIndex(redis_client, "news", pigeonhole(3)).ensure_layout()
    await RedisIndex(redis_client, "news", pigeonhole(3)).ensure_layout()  # same: fine
    with pytest.raises(LayoutMismatch, match="threshold"):
        await RedisIndex(redis_client, "news", pigeonhole(5)).ensure_layout()
    with pytest.raises(LayoutMismatch, match="multi-index"):
        await RedisIndex(redis_client, "news", multi_index(3, 2)).ensure_layout()
    await RedisIndex(redis_client, "other", pigeonhole(5)).ensure_layout()  # other namespace
    meta = await redis_client.hgetall(NamespaceKeys("news").meta)
    assert meta.pop(b"epoch")  # a new index's random id (lib.lua, changed_index)
    assert meta == {
        b"format": LAYOUT_FORMAT.encode(),
        b"layout": b"pigeonhole",
        b"threshold": b"3",
        b"related_threshold": b"3",
        b"duplicate_bins": b"39",
        b"sketch": b"oph64x8",
        b"tables": b"63-48/0 47-32/0 31-16/0 15-0/0",
        b"groups": str(group_bits(EXPECTED_DOCS)).encode(),
        b"exact_groups": str(group_bits(EXPECTED_DOCS, EXACT_PER_HASH)).encode(),
    }
    with pytest.raises(LayoutMismatch, match="duplicate_bins"):  # another similarity
        await RedisIndex(
            redis_client, "news", pigeonhole(3), options=IndexOptions(similarity=0.9)
        ).ensure_layout()
    with pytest.raises(LayoutMismatch, match="threshold '3' there, '2' here"):  # other k
        await RedisIndex(
            redis_client, "news", pigeonhole(3), options=IndexOptions(threshold=2)
        ).ensure_layout()


async def test_an_index_of_another_format_is_refused_with_the_command_that_rebuilds_it(
    redis_client: aioredis.Redis,
) -> None:
    await RedisIndex(redis_client, "old", pigeonhole(3)).ensure_layout()
    await redis_client.hset(NamespaceKeys("old").meta, "format", "6")
    with pytest.raises(LayoutMismatch, match=r"format '6'.*dedup-worker backfill"):
        await RedisIndex(redis_client, "old", pigeonhole(3)).ensure_layout()


async def test_namespaces_are_independent(redis_client: aioredis.Redis) -> None:
    a, b = RedisIndex(redis_client, "ns-a"), RedisIndex(redis_client, "ns-b")
    await a.check_and_insert([probe("x", 123, "same")])
    [v] = await b.check_and_insert([probe("y", 123, "same")])
    assert v.kind is Kind.UNIQUE


async def test_every_key_carries_the_namespace_hash_tag(redis_client: aioredis.Redis) -> None:
    index = RedisIndex(redis_client, "tagged")
    await index.ensure_layout()
    await index.check_and_insert([probe("x", 0xABCDEF0123456789)])
    keys = await redis_client.keys("*")  # (some end in binary: a number, a hash's bits)
    assert keys
    assert all(k.startswith(NamespaceKeys("tagged").prefix.encode()) for k in keys)
    assert NamespaceKeys("tagged").prefix == "dedup:{tagged}:"


async def test_bucket_entries_are_fingerprint_sequence_and_time(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "layout", multi_index(5, 3))
    fp, other = 0x0123456789ABCDEF, 0xFEDCBA9876543210
    outcomes = await index.check_and_insert([probe("doc-1", fp), probe("doc-2", other)])
    for seq, (f, v) in enumerate(zip((fp, other), outcomes, strict=True), start=1):
        expected = (
            f.to_bytes(8, "big")
            + seq.to_bytes(6, "big")
            + (v.seen_at_ms // 1000).to_bytes(4, "big")
        )
        keys = [
            index.keys.bucket(i, key, table.width)
            for i, (table, key) in enumerate(
                zip(index.layout.tables, index.layout.keys(f), strict=True)
            )
        ]
        assert len(keys) == 3
        assert keys[0].endswith(f":t:0:{f >> 42:06x}")
        assert [await redis_client.get(k) for k in keys] == [expected] * 3
        ids = NamespaceKeys("layout").ids_hash(seq)
        assert await redis_client.hget(ids, seq.to_bytes(6, "big")) == (f"doc-{seq}".encode())


async def assert_only_bookkeeping_left(client: aioredis.Redis, namespace: str) -> None:
    """The layout, the sequence counter and the recent-inserts ring, every slot zeroed but for
    its sequence number, the expiry sweep's front and walk, the records of the last calls (sequence
    numbers only, kept for seconds) and the chains' last numbers (kept a day): no trace of
    any article."""
    keys = NamespaceKeys(namespace)
    records = await client.keys(f"{keys.prefix}call:*")
    assert [0 < await client.ttl(k) <= 10 for k in records] == [True] * len(records)
    chains = await client.keys(f"{keys.prefix}chain:*")
    assert [0 < await client.ttl(k) <= 86400 for k in chains] == [True] * len(chains)
    assert all([(await client.get(k) or b"").isdigit() for k in chains])
    records += chains
    left = sorted(k.decode() for k in await client.keys("*") if k not in records)
    front = await client.hget(keys.meta, "front")  # (the expiry sweep's: a number)
    assert int(front or 0) <= int(await client.get(keys.seq) or 0) + 1
    if keys.walk in left:  # (the sweep's walk over band groups: where it is, what it owes)
        assert set(await client.hkeys(keys.walk)) == {b"at", b"owed"}
        left.remove(keys.walk)
    assert left == [keys.meta, keys.recent, keys.seq]
    ring = np.frombuffer(await client.get(NamespaceKeys(namespace).recent), dtype=ENTRY)
    assert len(ring)
    assert not ring["fingerprint"].any()
    assert not ring["seen_s"].any()


@pytest.mark.parametrize(
    "layout",
    [pigeonhole(3), multi_index(7, 3), sampled(5, 6, 12)],
    ids=lambda layout: layout.name(),
)
@pytest.mark.parametrize("renew", [False, True], ids=["", "renewing"])
async def test_forgetting_every_article_leaves_no_entry_behind(
    redis_client: aioredis.Redis, layout: Layout, renew: bool
) -> None:
    # (renewing: the near copies renew their originals, inserted earlier in the same call)
    index = RedisIndex(redis_client, "tidy", layout, options=IndexOptions(renew_on_match=renew))
    rng = random.Random(5)
    fps = [rng.getrandbits(64) for _ in range(200)]
    probes = [probe(f"a{i}", fp) for i, fp in enumerate(fps)]
    probes += [probe(f"n{i}", flip(fp, [i % 64])) for i, fp in enumerate(fps[:50])]
    probes += [probe(f"x{i}", None, content=f"text of a{i}") for i in range(20)]  # exact copies
    await index.check_and_insert(probes)
    await index.check_and_insert([probe("a0", 1, content="new text")])  # a replacement
    assert all(await index.forget([p.id for p in probes]))
    await assert_only_bookkeeping_left(redis_client, "tidy")


async def test_the_sweep_leaves_nothing_of_expired_articles(redis_client: aioredis.Redis) -> None:
    index = RedisIndex(
        redis_client, "sweep", multi_index(7, 3), options=IndexOptions(retention_s=1)
    )
    rng = random.Random(6)
    fps = [rng.getrandbits(64) for _ in range(300)]
    probes = [probe(f"a{i}", fp) for i, fp in enumerate(fps)]
    probes += [probe(f"n{i}", flip(fp, [i % 64])) for i, fp in enumerate(fps[:60])]
    probes += [probe(f"x{i}", None, content=f"text of a{i}") for i in range(30)]
    await index.check_and_insert(probes)
    await asyncio.sleep(2.1)
    removed, passed = 0, False
    for _ in range(50):  # the front's steps of 100, then the pass's (its cursor back at 0)
        now = await index.expire(100)
        removed += now
        passed = now < 100 and not await redis_client.exists(NamespaceKeys("sweep").sweep)
        if passed:
            break
    assert passed
    assert removed == len(probes)
    await assert_only_bookkeeping_left(redis_client, "sweep")


async def test_concurrent_clients_never_both_call_a_pair_unique(
    redis_url: str, redis_client: aioredis.Redis
) -> None:
    """Two clients race with 300 near-duplicate pairs, each pair split between them."""
    rng = random.Random(9)
    pairs = []
    for i in range(300):
        base = rng.getrandbits(64)
        pairs.append(
            (probe(f"p{i}-x", base), probe(f"p{i}-y", flip(base, rng.sample(range(64), 2))))
        )
    clients = [aioredis.Redis.from_url(redis_url) for _ in range(2)]
    indexes = [RedisIndex(c, "race") for c in clients]

    async def run(side: int) -> list[Verdict]:
        out = []
        for pair in pairs:
            [v] = await indexes[side].check_and_insert([pair[side]])
            out.append(v)
        return out

    xs, ys = await asyncio.gather(run(0), run(1))
    for x, y in zip(xs, ys, strict=True):
        assert [x.kind is Kind.UNIQUE, y.kind is Kind.UNIQUE].count(True) == 1, (x, y)
        dup = y if x.kind is Kind.UNIQUE else x
        assert dup.duplicate_of == (x if dup is y else y).id
        assert dup.distance == 2
    for c in clients:
        await c.aclose()


async def test_unreachable_redis_is_translated() -> None:
    index = RedisIndex(connect("redis://127.0.0.1:1/0"))
    with pytest.raises(IndexUnavailable, match="cannot be reached"):
        await index.check_and_insert([probe("a", 1)])
    await index.close()


async def test_a_flushed_script_cache_is_reloaded(redis_client: aioredis.Redis) -> None:
    index = RedisIndex(redis_client, "reload")
    await redis_client.script_flush()  # as after a Redis restart
    outcomes = await index.check_and_insert([probe("a", 1), probe("b", 1)])
    assert [o.kind for o in outcomes] == [Kind.UNIQUE, Kind.NEAR]


# The worker reads an article's buckets, then the script decides (RedisIndex.read_buckets, then
# run_checks). What happens between the two steps, staged:


async def test_an_article_inserted_after_the_read_is_found_by_the_script(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "between", multi_index(7, 3))
    late = probe("late", flip(BASE, [3, 40]))
    reads = await index.read_buckets([late])
    assert reads[0] is not None
    assert reads[0].found.entries == b""
    await index.check_and_insert([probe("first", BASE)])  # another replica, meanwhile
    [v] = await index.run_checks([late], reads)
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "first", 2)


@pytest.mark.parametrize(
    ("layout", "count"),
    [
        (multi_index(11, 4), 40),  # (the default layout) entries compared one by one
        (multi_index(11, 4), 200),  # ... and by blocks
        (pigeonhole(3), 200),
        (multi_index(15, 4), 200),
        (sampled(9, 6, 20), 200),
    ],
    ids=lambda x: getattr(x, "spec", lambda: str(x))(),
)
@pytest.mark.parametrize("seed", [1, 2])
async def test_the_scripts_compare_of_what_came_since_the_read_agrees_with_the_workers(
    redis_client: aioredis.Redis, seed: int, layout: Layout, count: int
) -> None:
    """Copies read before their originals were inserted (by another replica, meanwhile) get
    the verdicts they get when read after: the script compares the ring's entries since the
    read as the worker compares its buckets (copies up to 3 bits beyond the threshold: any
    bits, or all in the half the script compares first), whether it compares each entry or
    looks them up by blocks (many entries)."""
    rng = random.Random(seed)
    originals = [probe(f"o{i}", rng.getrandbits(64)) for i in range(count)]
    copies = [
        probe(
            f"c{i}",
            flip(
                rng.choice(originals).fingerprint or 0,
                rng.sample(
                    rng.choice([range(64), range(32, 64)]), rng.randint(0, layout.search_radius + 3)
                ),
            ),
        )
        for i in range(300)
    ]
    late = RedisIndex(redis_client, f"late{seed}-{count}", layout)
    reads = await late.read_buckets(copies)  # an empty index
    await late.check_and_insert(originals)
    staged = await late.run_checks(copies, reads)
    timely = RedisIndex(redis_client, f"timely{seed}-{count}", layout)
    await timely.check_and_insert(originals)
    expected = await timely.check_and_insert(copies)
    assert [(v.kind, v.duplicate_of, v.distance) for v in staged] == [
        (v.kind, v.duplicate_of, v.distance) for v in expected
    ]
    assert {v.kind for v in staged} >= {Kind.NEAR, Kind.UNIQUE}


async def test_a_nearest_entry_removed_after_the_read_sends_the_script_searching(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "removed", multi_index(7, 3))
    # Two originals 8 bits apart, 2 and 6 bits from the article.
    await index.check_and_insert(
        [probe("closest", flip(BASE, [1, 2])), probe("other", flip(BASE, [10, 20, 30, 40, 50, 60]))]
    )
    article = probe("article", BASE)
    reads = await index.read_buckets([article])
    assert reads[0] is not None
    assert reads[0].found.entries[:8] == flip(BASE, [1, 2]).to_bytes(8)
    await index.forget(["closest"])
    [v] = await index.run_checks([article], reads)
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "other", 6)


async def test_a_read_older_than_the_recent_ring_sends_the_script_searching(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "wrapped", multi_index(7, 3))
    article = probe("article", BASE)
    reads = await index.read_buckets([article])  # an empty index, counter at 0
    await index.check_and_insert([probe("first", flip(BASE, [5, 6]))])
    # As if more articles than the ring holds had been inserted since the read: the counter
    # has moved on, and first's slot holds a later entry (here: zeros).
    await redis_client.incrby(NamespaceKeys("wrapped").seq, RECENT_SLOTS)
    await redis_client.setrange(NamespaceKeys("wrapped").recent, 0, bytes(ENTRY_BYTES))
    [v] = await index.run_checks([article], reads)
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "first", 2)


async def call_in_order(
    index: RedisIndex,
    article: Probe,
    earlier: list[CallRecord],
    snapshot: tuple[int, bytes] = (0, b""),
) -> tuple[Verdict, CallRecord]:
    """One check-and-insert call as the index sends it while earlier calls are in flight, on
    a read that found nothing, made at `snapshot` (the cache's last number and its entry)."""
    assert index.epoch is not None
    read = BucketRead(snapshot[0], Nearest(b"", 0, 0), [])
    in_order = InOrder(snapshot[0], snapshot[1], earlier, index.keys.call_record)
    [call] = index.script_calls.calls([article], [read], index.epoch, in_order=in_order)
    [[reply]] = await scripts.run(index.client, Script.CHECK_AND_INSERT, [call.argv])
    assert call.record is not None
    return index.script_calls.verdict(article, reply), call.record


async def test_a_call_takes_an_earlier_calls_articles_from_its_record(
    redis_client: aioredis.Redis,
) -> None:
    index = RedisIndex(redis_client, "records", multi_index(7, 3))
    await index.ensure_layout()
    first, record = await call_in_order(index, probe("first", BASE), [])
    # Reads made before the first call ran: it is found through its record ...
    listed, later = await call_in_order(index, probe("listed", flip(BASE, [3])), [record])
    assert (first.kind, listed.kind, listed.duplicate_of) == (Kind.UNIQUE, Kind.NEAR, "first")
    # ... and only as the worker lists it: the records' numbers are left out of the ring.
    unlisted = [CallRecord(record.key, [None]), CallRecord(later.key, [None])]
    missed, _ = await call_in_order(index, probe("missed", flip(BASE, [4])), unlisted)
    assert missed.kind is Kind.UNIQUE
    # A record gone (expired, or its call failed): the ring has the call's entries.
    await redis_client.delete(record.key)
    found, _ = await call_in_order(index, probe("found", flip(BASE, [5])), unlisted)
    assert (found.kind, found.duplicate_of, found.distance) == (Kind.NEAR, "first", 1)


@pytest.mark.parametrize("held", [True, False], ids=["snapshot held", "index rolled back"])
async def test_a_snapshot_the_ring_no_longer_holds_sends_the_script_searching(
    redis_client: aioredis.Redis, held: bool
) -> None:
    index = RedisIndex(redis_client, f"snapshot-{held}", multi_index(7, 3))
    await index.check_and_insert([probe("first", BASE)])  # number 1
    seen = pack_entry(BASE if held else flip(BASE, [60]), 1, 0)[:RING_CHECK]
    copy, _ = await call_in_order(index, probe("copy", flip(BASE, [3])), [], (1, seen))
    # Held: the read at number 1 (which found nothing) is trusted; else the buckets are read.
    assert copy.kind is (Kind.UNIQUE if held else Kind.NEAR)


async def test_a_batch_read_in_several_mgets_finds_each_original(
    redis_client: aioredis.Redis,
) -> None:
    # 57 probed buckets per article: a batch of 70 is read in three MGETs (26, 26, 18), each
    # with its own snapshot; every article must be matched with its own original (a read
    # handed to the wrong article would make its copy unique: the script trusts the read).
    index = RedisIndex(redis_client, "groups", multi_index(8, 5), bucket_cache=False)
    assert index.layout.probes == 57
    rng = random.Random(5)
    originals = [rng.getrandbits(64) for _ in range(70)]
    await index.check_and_insert([probe(f"o{i}", fp) for i, fp in enumerate(originals)])
    copies = [
        probe(f"c{i}", flip(fp, [i % 64, (i + 7) % 64]), f"copy {i}")
        for i, fp in enumerate(originals)
    ]
    verdicts = await index.check_and_insert(copies)
    assert [(v.kind, v.duplicate_of, v.distance) for v in verdicts] == [
        (Kind.NEAR, f"o{i}", 2) for i in range(70)
    ]


async def test_batches_wait_for_the_one_before_once_other_workers_crowd_the_ring(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Alone, a batch goes out while the one before is in flight (its calls name that batch's
    records); once a batch's script had to compare many entries of another worker's, the
    next batches wait for the one before and read a cache brought up to date."""
    layout = pigeonhole(3)  # (tables the bucket cache holds)
    worker, other = (
        RedisIndex(redis_client, "crowd", layout),
        RedisIndex(redis_client, "crowd", layout),
    )
    named: list[int] = []  # per call: how many earlier calls it names
    calls = worker.script_calls.calls

    def spied(
        probes: list[Probe],
        reads: list[BucketRead | None],
        epoch: str,
        guard: Callable[[], bytes] = bytes,
        in_order: InOrder | None = None,
    ) -> list[Call]:
        named.append(-1 if in_order is None else len(in_order.earlier))
        return calls(probes, reads, epoch, guard, in_order)

    monkeypatch.setattr(worker.script_calls, "calls", spied)
    rng = random.Random(8)

    def articles(prefix: str, count: int) -> list[Probe]:
        return [probe(f"{prefix}{i}", rng.getrandbits(64)) for i in range(count)]

    await asyncio.gather(*(worker.check_and_insert(articles(f"alone{b}-", 20)) for b in range(3)))
    assert named[0] == 0  # (the second and third sent while those before ran)
    assert min(named[1:]) >= 1
    # A batch sent while the one before is in flight reads the cache as it was; the other
    # worker's inserts land before its calls go out (held until they are in), so its script
    # compares them.
    ahead = worker._ahead
    assert ahead is not None
    send = ahead.ordered.send
    sends = 0

    async def held(commands: Sequence[Sequence[Any]]) -> asyncio.Task[list[Any]]:
        nonlocal sends
        sends += 1
        if sends == 2:
            await other.check_and_insert(articles("theirs-", 300))
        return await send(commands)

    monkeypatch.setattr(ahead.ordered, "send", held)
    await asyncio.gather(
        worker.check_and_insert(articles("first-", 200)),
        worker.check_and_insert(articles("stale-", 20)),
    )
    assert sends == 2
    named.clear()
    await asyncio.gather(*(worker.check_and_insert(articles(f"after{b}-", 20)) for b in range(3)))
    assert named == [0, 0, 0]
