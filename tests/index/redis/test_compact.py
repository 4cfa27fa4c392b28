"""The expiry sweep's walk over the band groups (lua/compact.lua): an expired article's band
postings stay when the front takes it out, read as no one's, and the walk cuts them later
from its group strings and its buckets' own strings, leaving every live posting in its
place."""

from __future__ import annotations

import math
import random

import pytest
import redis.asyncio as aioredis

from tests.support.bands import before_the_call, index, log, stream, summary
from tests.support.records import age, numbers
from worker.index.base import IndexOptions
from worker.index.redis import RedisBandIndex, scripts
from worker.index.redis.band_reads import HEAD
from worker.layout.bands import Bands
from worker.model import Kind, Probe

DAY = 86_400
COMPACT_PACE, VISIT_BYTES = 4, 256  # (lua/compact.lua)


def expiring(
    client: aioredis.Redis, namespace: str, guesses: bool = False, expected_docs: int = 100_000
) -> RedisBandIndex:
    options = IndexOptions(retention_s=DAY)
    return RedisBandIndex(
        client, namespace, Bands(), options, expected_docs=expected_docs, guesses=guesses
    )


async def walked_to_the_end(client: aioredis.Redis, target: RedisBandIndex) -> None:
    """Steps of the sweep until its walk owes nothing (a step visits a bounded number of
    groups)."""
    for _ in range(1000):
        await target.expire(10_000)
        if float(await client.hget(target.keys.walk, "owed") or 0) < 1:
            return
    raise AssertionError("the walk still owes groups after 1,000 steps")


async def postings(client: aioredis.Redis, target: RedisBandIndex) -> dict[bytes, list[int]]:
    """Every band group string and bucket's own string, as the numbers of its postings in
    order (0: a marker: the bucket has a string of its own)."""
    bits = int(await client.hget(target.keys.meta, "groups") or 0)
    width = math.ceil((32 - bits) / 8)
    size = width + 6
    found = {}
    async for key in client.scan_iter(match=target.keys.buckets.encode() + b"b*", count=1000):
        blob = await client.get(key)
        assert isinstance(blob, bytes)
        found[key] = [
            int.from_bytes(blob[at + width : at + size]) for at in range(0, len(blob), size)
        ]
    return found


async def numbered(
    client: aioredis.Redis, target: RedisBandIndex, probes: list[Probe]
) -> list[int]:
    """The numbers of the indexed articles among `probes`, lowest first."""
    ids = list(dict.fromkeys(p.id for p in probes))
    return sorted(n for n in await numbers(client, target.keys, ids) if n > 0)


async def test_the_walk_cuts_what_expired_articles_left_and_keeps_the_rest_in_place(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = expiring(redis_client, "walk")
    probes = stream(2000, 11)
    for first in range(0, len(probes), 500):
        await target.check_and_insert(probes[first : first + 500])
    held = await numbered(redis_client, target, probes)
    ids = {
        n: i
        for i, n in zip(
            list(dict.fromkeys(p.id for p in probes)),
            await numbers(redis_client, target.keys, list(dict.fromkeys(p.id for p in probes))),
            strict=True,
        )
    }
    dead = set(held[:600])  # (over a quarter of them: the walk owes more than a round)
    await age(redis_client, target.keys, [ids[n] for n in sorted(dead)])
    before = await postings(redis_client, target)
    assert any(len(p) > 8 and 0 not in p for p in before.values())  # (own strings among them)
    assert sum(n in dead for p in before.values() for n in p) > 1000

    monkeypatch.setattr(scripts, "WALK_BYTES", 1)  # (a group a step)
    while await target.expire(100):
        pass
    assert await numbers(redis_client, target.keys, [ids[n] for n in dead]) == [-1] * len(dead)
    left = await postings(redis_client, target)
    assert sum(n in dead for p in left.values() for n in p) > 1000  # (left for the walk)

    # Read while they are left, they are no one's: a copy of an expired article is not its
    # duplicate.
    gone = next(p for p in probes if p.id == ids[min(dead)])
    [verdict] = await target.check_and_insert(
        [Probe("copy", b"c" * 16, gone.fingerprint, gone.sketch)]
    )
    assert verdict.duplicate_of not in {ids[n] for n in dead}

    monkeypatch.setattr(scripts, "WALK_BYTES", 1 << 19)
    await walked_to_the_end(redis_client, target)
    after = await postings(redis_client, target)
    assert sum(n in dead for p in after.values() for n in p) == 0
    for key, was in before.items():
        kept = [n for n in was if n not in dead]
        # (dependents of the expired posted again, and the copy's, come after them)
        assert after.get(key, [])[: len(kept)] == kept
    assert {k for k, v in after.items() if v} >= {k for k, v in before.items() if set(v) - dead}


async def test_the_walk_goes_as_far_as_the_removals_owe(redis_client: aioredis.Redis) -> None:
    """Each removal owes COMPACT_PACE / (the records held) of a round of the groups."""
    target = expiring(redis_client, "paced", expected_docs=1000)  # (a step walks what's owed)
    probes = stream(1000, 13)
    await target.check_and_insert(probes)
    held = await numbered(redis_client, target, probes)
    ids = list(dict.fromkeys(p.id for p in probes))
    by_number = dict(zip(await numbers(redis_client, target.keys, ids), ids, strict=True))
    bits = int(await redis_client.hget(target.keys.meta, "groups") or 0)
    rounds = Bands().bands * 2**bits
    for share in (30, 10):
        await age(redis_client, target.keys, [by_number[n] for n in held[:share]])
        held = held[share:]
        walk = await redis_client.hgetall(target.keys.walk)
        at, owed = int(walk.get(b"at", 0)), float(walk.get(b"owed", 0))
        assert await target.expire(100) == share
        records = await redis_client.hlen(target.keys.docs)
        walk = await redis_client.hgetall(target.keys.walk)
        walked = (int(walk[b"at"]) - at) % rounds
        due = owed + share * COMPACT_PACE * rounds / records
        assert walked == math.floor(due)
        assert float(walk[b"owed"]) == pytest.approx(due - walked)


async def test_a_walk_after_the_read_has_its_buckets_searched_by_the_script(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk's step between a worker's read and its calls names the buckets it cut in the
    log of calls: the verdicts are those of an index whose walk ran before."""
    probes = stream(1200, 12)
    plain = expiring(redis_client, "plain")
    guessing = index(redis_client, "walked", retention_s=DAY)
    walker = expiring(redis_client, "walked", guesses=True)
    expected = await plain.check_and_insert(probes[:600])
    got = await guessing.check_and_insert(probes[:600])
    aged = [p.id for p in probes[:150]]
    await age(redis_client, plain.keys, aged)
    assert await plain.expire(10_000) > 0
    expected += await plain.check_and_insert(probes[600:])

    await age(redis_client, walker.keys, aged)
    monkeypatch.setattr(scripts, "WALK_BYTES", 1)
    assert await walker.expire(10_000) > 0  # (its postings left)
    monkeypatch.setattr(scripts, "WALK_BYTES", 1 << 19)
    calls_before = len(await log(redis_client, guessing))

    async def walk() -> None:
        await walked_to_the_end(redis_client, walker)

    before_the_call(guessing, walk)
    got += await guessing.check_and_insert(probes[600:])
    assert summary(got) == summary(expected)
    entries = await log(redis_client, guessing)
    assert len(entries) > calls_before
    assert {v.kind for v in expected[600:]} >= {Kind.UNIQUE, Kind.NEAR}


def sharing(rng: random.Random, sketch: bytes, bands: set[int]) -> bytes:
    """A sketch with `sketch`'s bins in `bands` (of 4 bins each), random ones elsewhere."""
    return b"".join(
        sketch[4 * b : 4 * b + 4] if b in bands else rng.randbytes(4) for b in range(16)
    )


@pytest.mark.parametrize("guesses", [False, True])
async def test_postings_left_below_the_front_take_no_place_among_those_compared(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch, guesses: bool
) -> None:
    """Sixteen expired articles share more bands with an article than a live near-duplicate
    of it does: while their postings are left, the live one is still compared and found."""
    rng = random.Random(14)
    target = expiring(redis_client, f"left-{guesses}", guesses=guesses)
    near = math.ceil(target.rule.duplicate_bins / 4)  # (bands the live copy shares)
    mine = rng.randbytes(64)
    lives = set(range(near))
    expired: list[set[int]] = []
    while len(expired) < 16:  # (each shares a band more; no two alike enough to match)
        left_out = set(rng.sample(range(16), 16 - near - 1))
        if left_out & lives and all(16 - len(left_out | e) < near for e in expired):
            expired.append(left_out)
    old = [
        Probe(
            f"old{i}",
            rng.randbytes(16),
            rng.getrandbits(64),
            sharing(rng, mine, set(range(16)) - e),
        )
        for i, e in enumerate(expired)
    ]
    live = Probe("live", rng.randbytes(16), rng.getrandbits(64), sharing(rng, mine, lives))
    verdicts = await target.check_and_insert([*old, live])
    assert {v.kind for v in verdicts} == {Kind.UNIQUE}
    await age(redis_client, target.keys, [p.id for p in old])
    monkeypatch.setattr(scripts, "WALK_BYTES", 1)
    assert await target.expire(100) == 16
    assert sum(len(p) for p in (await postings(redis_client, target)).values()) > 16 * 8

    [verdict] = await target.check_and_insert(
        [Probe("new", rng.randbytes(16), rng.getrandbits(64), mine)]
    )
    assert (verdict.kind, verdict.duplicate_of) == (Kind.NEAR, "live")


async def test_the_walk_logs_the_crowded_buckets_it_cut(
    redis_client: aioredis.Redis, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bucket with a string of its own is read in part (its newest postings), so a cut there
    can change what a search reads: the walk names those buckets in the log of calls (and no
    other: searches pass over the rest)."""
    target = expiring(redis_client, "logged")
    probes = stream(1500, 15)
    for first in range(0, len(probes), 500):
        await target.check_and_insert(probes[first : first + 500])
    ids = list(dict.fromkeys(p.id for p in probes))
    by_number = dict(zip(await numbers(redis_client, target.keys, ids), ids, strict=True))
    dead = sorted(n for n in by_number if n > 0)[:500]
    await age(redis_client, target.keys, [by_number[n] for n in dead])
    monkeypatch.setattr(scripts, "WALK_BYTES", 1)
    while await target.expire(100):
        pass
    bits = int(await redis_client.hget(target.keys.meta, "groups") or 0)
    width = math.ceil((32 - bits) / 8)
    group_key = len(target.keys.buckets) + 1 + 4  # (prefix, 'b', band, group)
    held = await postings(redis_client, target)
    own = {k[group_key - 4 :] for k in held if len(k) == group_key + width}
    cut = {
        k[group_key - 4 :]
        for k, p in held.items()
        if len(k) == group_key + width and set(p) & set(dead)
    }
    assert cut
    logged_before = await redis_client.llen(target.keys.posts)

    monkeypatch.setattr(scripts, "WALK_BYTES", 1 << 19)
    await walked_to_the_end(redis_client, target)
    entries = await redis_client.lrange(
        target.keys.posts, 0, await redis_client.llen(target.keys.posts) - logged_before - 1
    )
    size = 4 + width
    logged = {e[at : at + size] for e in entries for at in range(HEAD + 2, len(e), size)}
    # (a marked bucket's postings left in its group are read with its own: logged too)
    assert cut <= logged <= own


async def test_a_step_visits_a_bounded_number_of_groups_even_when_they_are_empty(
    redis_client: aioredis.Redis,
) -> None:
    """An index far below the size its groups were made for owes its walk many empty groups:
    each visit counts against the step's bytes, so no step holds Redis long."""
    options = IndexOptions(retention_s=DAY)
    target = RedisBandIndex(redis_client, "sparse", Bands(), options, expected_docs=1_000_000)
    probes = stream(200, 17)
    await target.check_and_insert(probes)
    ids = list(dict.fromkeys(p.id for p in probes))
    await age(redis_client, target.keys, ids)
    assert await target.expire(1000) > 100
    walk = await redis_client.hgetall(target.keys.walk)
    assert float(walk[b"owed"]) > 1000  # (more than one step walks)
    assert 0 < int(walk[b"at"]) <= scripts.WALK_BYTES // VISIT_BYTES
