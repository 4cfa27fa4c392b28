"""The articles a band worker read before (band_known.py): kept by number, those used of late
held; read again once numbers may have been given out again; and the guesses made
from them are the script's verdicts."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from tests.support.bands import TEMPLATE, WORDS, index, stream, summary, unguessed
from worker.errors import IndexReset
from worker.index.redis import RedisBandIndex
from worker.index.redis.band_guesses import NO_ALIVE, Known
from worker.index.redis.band_known import FREED_PER_KEEP, KnownCache, KnownStats
from worker.index.redis.band_reads import BandReads
from worker.model import Kind, Probe
from worker.text.fingerprint import Fingerprinter


def owners_asked(target: RedisBandIndex) -> list[int]:
    """The numbers whose owners `target`'s worker reads from now on (as they are read)."""
    asked: list[int] = []
    owners = BandReads._owners.__get__(target._reads)

    async def counted(batch: object, numbers: list[int]) -> None:
        asked.extend(numbers)
        await owners(batch, numbers)

    target._reads._owners = counted  # type: ignore[method-assign]
    return asked


def known(seq: int) -> Known:
    return Known(f"d{seq}", seq, 0, bytes(64), seq)


def test_an_article_used_within_half_the_cache_is_held() -> None:
    cache = KnownCache(most=8)  # (two halves of 4)
    for seq in range(1, 5):
        cache.keep(known(seq))
    for seq in range(5, 8):
        cache.keep(known(seq))
        assert cache.found([1]) == {1: known(1)}  # (used again, so moved up)
    cache.keep(known(8))  # (the 4 kept before 5 go)
    assert set(cache.found(range(1, 9))) == {1, 5, 6, 7, 8}
    assert len(cache) == 5


def test_an_article_kept_again_is_held_once() -> None:
    cache = KnownCache(most=8)
    for seq in range(1, 5):
        cache.keep(known(seq))  # (now the older half)
    cache.keep(known(2))
    cache.found([3, 3])
    assert len(cache) == 4


def test_a_dropped_half_is_freed_a_few_entries_per_article_kept() -> None:
    half = 2 * FREED_PER_KEEP
    cache = KnownCache(most=2 * half)
    for seq in range(1, 2 * half + 1):
        cache.keep(known(seq))  # (the first half is dropped as the second fills)
    assert len(cache._dropped) == half
    assert cache.found(range(1, half + 1)) == {}
    cache.keep(known(2 * half + 1))
    assert len(cache._dropped) == half - FREED_PER_KEEP
    cache.keep(known(2 * half + 2))
    assert len(cache._dropped) == 0
    assert len(cache) == half + 2
    for seq in range(2 * half + 3, 3 * half + 1):
        cache.keep(known(seq))  # (the next half dropped)
    assert cache._dropped
    cache.clear()
    assert (len(cache), len(cache._dropped)) == (0, 0)


def test_an_article_unused_for_the_whole_cache_goes() -> None:
    cache = KnownCache(most=8)
    cache.keep(known(1))
    for seq in range(2, 9):
        cache.keep(known(seq))
        assert len(cache) < 8
    assert cache.found([1]) == {}
    assert set(cache.found(range(2, 9))) == set(range(5, 9))


def test_an_article_comes_back_as_it_was_kept() -> None:
    highest = 2**64 - 1
    kept = [
        Known("d1", 1, 0, bytes(64), 0),
        Known("Ünïcode-ид-标识", 2**48 - 1, NO_ALIVE, bytes(range(64)), highest),
        Known("x" * 300, 7, 1_700_000_000, b"\x01" * 300, 12345),
        Known("\ud800-a lone surrogate", 8, 0, b"", 0),
    ]
    cache = KnownCache()
    for one in kept:
        cache.keep(one)
    assert cache.found([one.seq for one in kept]) == {one.seq: one for one in kept}


def test_a_counter_below_a_number_held_empties_it() -> None:
    cache = KnownCache()
    cache.keep(known(5))
    cache.seen_counter(5)
    assert len(cache) == 1
    cache.seen_counter(4)  # (an index emptied or rolled back gives numbers out again)
    assert len(cache) == 0
    cache.seen_counter(0)
    cache.keep(known(2))
    assert cache.found([2]) == {2: known(2)}


def test_a_counter_below_empties_both_halves() -> None:
    cache = KnownCache(most=4)
    for seq in (1, 2):
        cache.keep(known(seq))  # (both now in the older half)
    cache.seen_counter(1)
    assert len(cache) == 0
    assert cache.found([1, 2]) == {}


def test_the_stats_count_the_candidates_looked_up_and_those_held() -> None:
    cache = KnownCache(most=8)
    cache.keep(known(1))
    cache.keep(known(2))
    cache.found([1, 3])
    cache.found([2])
    assert cache.stats() == KnownStats(articles=2, asked=3, held=2, dropped=0)
    for seq in range(3, 9):
        cache.keep(known(seq))  # (1-4 become the older half at 4, and go at 8)
    assert cache.stats() == KnownStats(articles=4, asked=3, held=2, dropped=4)
    cache.clear()  # (counted since the cache was made, as counters are)
    assert cache.stats() == KnownStats(articles=0, asked=3, held=2, dropped=4)


def test_a_cache_that_holds_too_few_is_refused() -> None:
    with pytest.raises(ValueError, match="give it 2 or more"):
        KnownCache(most=1)


async def test_articles_read_before_are_not_read_again(redis_client: aioredis.Redis) -> None:
    probes = stream(1500, 3)
    reference = unguessed(redis_client, "reference")
    # (every other batch is another worker's: those articles are read, once)
    other, guessing = unguessed(redis_client, "shared"), index(redis_client, "shared")
    asked = owners_asked(guessing)
    expected, got = [], []
    for start in range(0, len(probes), 150):
        expected += await reference.check_and_insert(probes[start : start + 150])
        worker = guessing if start % 300 else other
        got += await worker.check_and_insert(probes[start : start + 150])
    assert summary(got) == summary(expected)
    assert len(asked) == len(set(asked)) > 0  # (each article read once)
    assert len(guessing._known) > len(asked)  # (and those it indexed itself: not read)
    stats = guessing.known_stats
    assert stats.articles == len(guessing._known)
    assert stats.asked - stats.held == len(asked) < stats.asked  # (the rest it held)


async def test_the_articles_a_worker_indexed_are_not_read(redis_client: aioredis.Redis) -> None:
    rng = random.Random(7)
    texts = [TEMPLATE + " " + " ".join(rng.choices(WORDS, k=80)) for _ in range(200)]
    copies = [text.replace(text.split()[-1], "changed") for text in texts]
    found = Fingerprinter().many(texts + copies)
    probes = [Probe(f"d{i}", f.content_hash, f.search, f.sketch) for i, f in enumerate(found)]
    guessing = index(redis_client, "own")
    asked = owners_asked(guessing)
    await guessing.check_and_insert(probes[:200])
    asked.clear()
    verdicts = await guessing.check_and_insert(probes[200:])
    assert all(v.kind is Kind.NEAR and v.duplicate_of == f"d{i}" for i, v in enumerate(verdicts))
    assert asked == []


async def test_numbers_given_out_again_are_read_again(redis_client: aioredis.Redis) -> None:
    before, after = stream(600, 4), stream(600, 5)
    guessing = index(redis_client, "again")
    for start in range(0, 600, 200):
        await guessing.check_and_insert(before[start : start + 200])
    assert len(guessing._known) > 0
    await redis_client.flushdb()  # (the same numbers go to other articles now)
    await index(redis_client, "again").check_and_insert(after[:300])
    reference = unguessed(redis_client, "reference")
    await reference.check_and_insert(after[:300])

    expected = await reference.check_and_insert(after[300:])
    try:
        got = await guessing.check_and_insert(after[300:])
    except IndexReset:  # (a batch read before the reset is read again)
        got = await guessing.check_and_insert(after[300:])
    assert summary(got) == summary(expected)
