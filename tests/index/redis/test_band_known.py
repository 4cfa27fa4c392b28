"""The articles a band worker read before (band_known.py): kept by number, the least recently
used going first; read again once numbers may have been given out again; and the guesses made
from them are the script's verdicts."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from tests.support.bands import TEMPLATE, WORDS, index, stream, summary, unguessed
from worker.errors import IndexReset
from worker.index.redis import RedisBandIndex
from worker.index.redis.band_guesses import Known
from worker.index.redis.band_known import KnownCache
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
    return Known(f"d{seq}", b"c" * 16, seq, 0, bytes(64), seq)


def test_the_least_recently_used_go_first() -> None:
    cache = KnownCache(most=3)
    for seq in (1, 2, 3):
        cache.keep(known(seq))
    assert cache.found([1, 9]) == {1: known(1)}  # (1 now the most recently used)
    cache.keep(known(4))
    assert set(cache.found([1, 2, 3, 4])) == {1, 3, 4}
    assert len(cache) == 3


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


def test_a_cache_that_holds_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="give it 1 or more"):
        KnownCache(most=0)


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
