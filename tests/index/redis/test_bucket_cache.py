"""The worker's bucket cache: on its own, and kept in step with Redis by RedisIndex when other
replicas insert, when it falls behind the ring of recent inserts, and when the index is emptied
under it."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
import redis.asyncio as aioredis

from tests.support.factories import BASE, entry, flip, probe
from tests.support.native import require_native
from worker.index.redis import RedisIndex
from worker.index.redis import bucket_cache as bucket_cache_module
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.bucket_cache import BucketCache
from worker.index.redis.format import ENTRY, ENTRY_BYTES, RECENT_SLOTS, entry_numbers
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import Nearest, Search, gather, nearest
from worker.layout.planner import default_layout
from worker.layout.tables import Layout, multi_index, sampled
from worker.model import Kind
from worker.native import native_module

LAYOUT = multi_index(8, 5)  # (its narrowest table, 12 bits wide, is the one a copy reloads from)
MakeCache = Callable[[], tuple[BucketCache, BucketAddresses]]
RADIUS, LIMIT = 8, 3  # (few, so that some candidates are left out)


@pytest.fixture(params=["native", "numpy"])
def new_cache(request: pytest.FixtureRequest) -> Callable[[], tuple[BucketCache, BucketAddresses]]:
    """Makes caches of one store; the tests of the cache on its own run against each."""
    native = request.param == "native"
    if native:
        require_native()

    def make() -> tuple[BucketCache, BucketAddresses]:
        probed = BucketAddresses(NamespaceKeys("m").buckets, LAYOUT)
        cache = BucketCache(probed, native=native)
        assert cache.native == native
        return cache, probed

    return make


def search(cache: BucketCache, simhashes: list[int], **kw: Any) -> list[Nearest]:
    return cache.nearest(simhashes, Search(RADIUS, LIMIT, **kw))


def own(probed: BucketAddresses, fp: int) -> list[int]:
    return [int(slots[0]) for slots in probed.own_slots(np.array([fp], dtype=np.uint64))]


def test_entries_go_to_their_bucket_in_every_table_in_first_seen_order(
    new_cache: MakeCache,
) -> None:
    copy, probed = new_cache()
    a, b = BASE, flip(BASE, [1])  # one bit apart: the same bucket in most tables
    copy.add(
        entry(b, 3) + bytes(ENTRY_BYTES) + entry(a, 1), last=3
    )  # a removed article's slot: zeros
    assert copy.last == 3
    for slot_a, slot_b in zip(own(probed, a), own(probed, b), strict=True):
        if slot_a == slot_b:
            assert copy.buckets([slot_a]) == [entry(a, 1) + entry(b, 3)]
        else:
            assert copy.buckets([slot_a, slot_b]) == [entry(a, 1), entry(b, 3)]
    copy.add(entry(a, 4), last=4)
    assert all(
        blob is not None and blob.endswith(entry(a, 4)) for blob in copy.buckets(own(probed, a))
    )  # appended after what was there
    assert copy.buckets([own(probed, flip(a, [63]))[0]]) == [None]


def test_expired_entries_are_reported_then_cut_from_the_front(new_cache: MakeCache) -> None:
    copy, probed = new_cache()
    copy.add(entry(BASE, 1, seen_s=50) + entry(BASE, 2, seen_s=80) + entry(BASE, 3, seen_s=150), 3)
    slot = own(probed, BASE)[0]
    [place] = [i for i, s in enumerate(probed.slots([BASE])[0].tolist()) if s == slot]
    assert place in search(copy, [BASE], max_read=10, cutoff_s=100)[0].expired
    assert copy.buckets([slot]) == [entry(BASE, 3, seen_s=150)]
    assert search(copy, [BASE], max_read=10, cutoff_s=100)[0].expired == ()
    search(copy, [BASE], max_read=10, cutoff_s=200)
    assert copy.buckets([slot]) == [None]


def test_reset_starts_again(new_cache: MakeCache) -> None:
    copy, probed = new_cache()
    copy.add(entry(BASE, 1), 1)
    new = flip(BASE, [40])
    copy.reset(entry(new, 7), 9, b"")
    assert copy.last == 9
    for old_slot, new_slot in zip(own(probed, BASE), own(probed, new), strict=True):
        # Only the new entry is left: where the two share a bucket, and in its own.
        expected = entry(new, 7) if old_slot == new_slot else None
        assert copy.buckets([old_slot, new_slot]) == [expected, entry(new, 7)]


def test_entries_taken_in_over_several_passes_give_the_same_copy(
    monkeypatch: pytest.MonkeyPatch, new_cache: MakeCache
) -> None:
    rng = random.Random(8)
    entries = b"".join(
        entry(
            flip(BASE, rng.sample(range(64), rng.randrange(3))), seq, seen_s=rng.randrange(100, 200)
        )
        for seq in range(1, 200)
    )
    whole, probed = new_cache()
    whole.reset(entries, 199, b"")
    monkeypatch.setattr(bucket_cache_module, "_PASS", 7)
    passes, _ = new_cache()
    passes.reset(entries, 199, b"")
    every = range(probed.slot_count or 0)
    assert passes.buckets(every) == whole.buckets(every)
    assert search(passes, [BASE], max_read=1000, cutoff_s=150) == search(
        whole, [BASE], max_read=1000, cutoff_s=150
    )


@pytest.mark.parametrize("cutoff", [None, 150])
def test_a_search_finds_what_nearest_finds_in_the_buckets(
    cutoff: int | None, new_cache: MakeCache
) -> None:
    """BucketCache.nearest against the definition: nearest over gather over the values of the
    probed buckets (as an MGET of their names reads them), with crowded buckets and expired
    entries."""
    copy, probed = new_cache()
    rng = random.Random(5)
    near = [flip(BASE, rng.sample(range(64), rng.randrange(4))) for _ in range(60)]
    other = [rng.getrandbits(64) for _ in range(300)]
    fps = near[:30] + other[:170] + near[30:] + other[170:]
    entries = [
        entry(fp, seq, seen_s=rng.choice([100, 150, 190])) for seq, fp in enumerate(fps, 1)
    ]  # (times equal to the cutoff too)
    copy.add(b"".join(entries[:200]), 200)
    copy.add(b"".join(entries[200:]), len(fps))  # onto buckets that hold entries already
    queries = [BASE, flip(BASE, [5, 50]), rng.getrandbits(64)]
    slots = probed.slots(queries)
    before = [copy.buckets(row) for row in slots.tolist()]
    gathered = gather(before, max_read=7, cutoff_s=cutoff)
    assert max(gathered.hot) > 0
    assert cutoff is None or any(gathered.expired)
    expected = nearest(gathered, queries, radius=RADIUS, limit=LIMIT, cutoff_s=cutoff)
    assert any(len(n.entries) == LIMIT * ENTRY_BYTES for n in expected)  # some left out
    assert search(copy, queries, max_read=7, cutoff_s=cutoff) == expected
    for blob in filter(None, copy.buckets(range(probed.slot_count or 0))):
        seqs = entry_numbers(np.frombuffer(blob, dtype=ENTRY)).tolist()
        assert seqs == sorted(seqs)  # first seen first, as in Redis


async def test_each_replica_sees_what_the_other_inserts(redis_client: aioredis.Redis) -> None:
    one, two = (
        RedisIndex(redis_client, "replicas", LAYOUT),
        RedisIndex(redis_client, "replicas", LAYOUT),
    )
    await one.check_and_insert([probe("first", BASE)])
    [v] = await two.check_and_insert([probe("copy", flip(BASE, [3, 40]))])
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "first", 2)
    other = flip(BASE, [1, 9, 17, 25, 33, 41, 49, 57, 60])
    await two.check_and_insert([probe("second", other)])
    [v] = await one.check_and_insert([probe("copy 2", flip(other, [0]))])
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "second", 1)


async def test_a_replica_behind_the_ring_reloads_from_the_buckets(
    redis_client: aioredis.Redis,
) -> None:
    await RedisIndex(redis_client, "behind", LAYOUT).check_and_insert([probe("first", BASE)])
    # As if more articles than the ring holds had been inserted since: only a reload from
    # the buckets finds "first" (the script compares only what came after the snapshot).
    await redis_client.incrby(NamespaceKeys("behind").seq, RECENT_SLOTS)
    late = RedisIndex(redis_client, "behind", LAYOUT)
    copy = probe("copy", flip(BASE, [3, 40]))
    [read] = await late.read_buckets(
        [copy]
    )  # the worker's own search (the script would find it too)
    assert read is not None
    assert read.found.entries[:8] == BASE.to_bytes(8)
    [v] = await late.run_checks([copy], [read])
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "first", 2)


async def test_an_emptied_index_is_reloaded(redis_client: aioredis.Redis) -> None:
    index = RedisIndex(redis_client, "emptied", LAYOUT)
    rng = random.Random(2)
    olds = [BASE] + [rng.getrandbits(64) for _ in range(4)]  # all unique: all indexed
    await index.check_and_insert([probe(f"old {i}", fp) for i, fp in enumerate(olds)])
    await index.read_buckets([probe("any", BASE)])  # the copy takes them in: its counter is 5
    assert await redis_client.get(NamespaceKeys("emptied").seq) == b"5"
    await redis_client.flushdb()  # the counter goes back to 0, below the copy's
    await index.ensure_layout()
    await RedisIndex(redis_client, "emptied", LAYOUT).check_and_insert(
        [probe("new", flip(BASE, [20, 30, 40, 50, 60]))]
    )
    copy = probe("copy", flip(BASE, [20, 30, 40, 50]))
    [read] = await index.read_buckets([copy])
    assert read is not None
    assert read.found.entries[:8] == flip(BASE, [20, 30, 40, 50, 60]).to_bytes(8)
    [v] = await index.run_checks([copy], [read])
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "new", 1)


async def test_a_stale_entry_whose_sequence_number_was_given_out_again_is_not_trusted(
    redis_client: aioredis.Redis,
) -> None:
    # The index is emptied and refilled past the copy's counter before the copy syncs again:
    # the copy cannot tell, and hands the script an old entry whose sequence number now
    # belongs to another article. The script must not take it for that article.
    index = RedisIndex(redis_client, "refilled", LAYOUT)
    await index.check_and_insert([probe("old", BASE)])  # sequence number 1
    stale = await index.read_buckets([probe("copy", flip(BASE, [3]))])
    await redis_client.flushdb()
    await index.ensure_layout()
    other = RedisIndex(redis_client, "refilled", LAYOUT)
    await other.check_and_insert([probe("unrelated", ~BASE & (2**64 - 1))])  # number 1 again
    [v] = await index.run_checks([probe("copy", flip(BASE, [3]))], stale)
    assert v.kind is Kind.UNIQUE


def test_nothing_new_moves_only_the_counter(new_cache: MakeCache) -> None:
    copy, probed = new_cache()
    copy.add(b"", last=4)
    copy.add(bytes(2 * ENTRY_BYTES), last=6)  # two removed articles' slots
    assert probed.slot_count is not None
    assert copy.last == 6
    assert set(copy.buckets(range(probed.slot_count))) == {None}


@pytest.mark.parametrize(
    "layout",
    [LAYOUT, default_layout(), sampled(6, 8, 14)],
    ids=["multi-index", "default", "sampled"],  # (sampled: keys of bits spread out)
)
def test_the_native_store_keeps_step_with_the_numpy_store(layout: Layout) -> None:
    """Batch after batch of inserts and searches (near copies, crowded buckets, expiry moving
    on), both stores give the same results and hold the same entries: the native store
    numbers the buckets as BucketAddresses does."""
    require_native()
    probed = BucketAddresses(NamespaceKeys("m").buckets, layout)
    stores = BucketCache(probed, native=True), BucketCache(probed, native=False)
    rng = random.Random(11)
    seen: list[int] = [BASE]
    seq = 0
    found: list[tuple[bool, bool, bool]] = []
    for step in range(40):
        batch = b""
        for _ in range(rng.randrange(0, 60)):
            seq += 1
            fp = flip(rng.choice(seen), rng.sample(range(64), rng.randrange(6)))
            seen.append(fp if rng.random() < 0.5 else rng.getrandbits(64))
            batch += entry(fp, seq, seen_s=100 + step * 10 + rng.randrange(10))
        for store in stores:
            store.add(batch, seq)
        queries = [
            flip(rng.choice(seen), rng.sample(range(64), rng.randrange(9))) for _ in range(30)
        ]
        cutoff = 100 + step * 5 if step % 3 else None
        native, numpy_ = (store.nearest(queries, Search(9, 4, 3, cutoff)) for store in stores)
        assert native == numpy_
        assert stores[0].entries == stores[1].entries
        found += [(bool(n.entries), n.hot > 0, bool(n.expired)) for n in native]
    assert all(map(any, zip(*found, strict=True)))  # found some, crowded and expired buckets
    every = range(probed.slot_count or 0)
    assert stores[0].buckets(every) == stores[1].buckets(every)


def test_the_native_store_refuses_a_numbering_past_its_buckets() -> None:
    require_native()
    native = native_module()
    assert native is not None
    probed = BucketAddresses(NamespaceKeys("m").buckets, LAYOUT)
    assert probed.slot_count is not None
    native.Buckets(probed.slot_count, probed.numbering())
    with pytest.raises(ValueError, match="reach past"):
        native.Buckets(probed.slot_count - 1, probed.numbering())
