"""The worker's guesses over a band index (band_reads.py, band_guesses.py, lua/guesses.lua):
the verdicts are those of the script's own search, in one batch, with another worker's batch
decided between the read and the call, and with an article removed or expired there."""

from __future__ import annotations

import asyncio
import random
import re
from importlib import resources
from typing import Any

import redis.asyncio as aioredis

from tests.support.bands import (
    WORDS,
    before_the_call,
    both_decide,
    index,
    log,
    stream,
    summary,
    unguessed,
)
from tests.support.factories import probe
from tests.support.records import age, in_second
from worker.index.base import IndexOptions
from worker.index.redis import RedisBandIndex
from worker.index.redis.band_guesses import OWN, SPILL
from worker.index.redis.band_layout import BandLayout
from worker.index.redis.band_reads import HEAD
from worker.index.redis.format import pack_number
from worker.layout.bands import Bands
from worker.model import Kind, Probe, Verdict
from worker.text.fingerprint import Fingerprinter


async def test_one_workers_guesses_are_the_scripts_verdicts(redis_client: aioredis.Redis) -> None:
    probes = stream(1500, 1)
    plain, guessing = unguessed(redis_client, "plain"), index(redis_client, "guessing")
    expected, got = await both_decide(plain, guessing, probes, 500)
    assert summary(got) == summary(expected)
    kinds = {v.kind for v in expected}
    assert {Kind.UNIQUE, Kind.EXACT, Kind.NEAR} <= kinds
    assert sum(v.replayed for v in expected) > 10
    # Every call kept to its guesses, and every article went the way guessed.
    assert await log(redis_client, guessing) == [(True, 0)] * 15


async def test_another_workers_batch_between_the_read_and_the_calls(
    redis_client: aioredis.Redis,
) -> None:
    """Its articles posted under buckets of this batch's: those are searched by the script,
    and the verdicts are those of the two batches decided one after the other."""
    probes = stream(2000, 2)
    plain = unguessed(redis_client, "plain")
    expected = [
        v for s in range(0, 2000, 500) for v in await plain.check_and_insert(probes[s : s + 500])
    ]
    one, other = index(redis_client, "two"), index(redis_client, "two")
    got: list[Verdict] = []
    for start in range(0, 2000, 1000):
        first, second = probes[start : start + 500], probes[start + 500 : start + 1000]
        decided: list[Verdict] = []

        async def other_decides(
            first: list[Probe] = first, decided: list[Verdict] = decided
        ) -> None:
            decided += await other.check_and_insert(first)

        before_the_call(one, other_decides)
        mine = await one.check_and_insert(second)
        got += decided + mine
    assert summary(got) == summary(expected)
    assert all(kept for kept, _ in await log(redis_client, one))


async def test_articles_removed_after_the_read_have_their_buckets_searched_by_the_script(
    redis_client: aioredis.Redis,
) -> None:
    """The deletion's entry in the log of calls names the buckets it took postings out of;
    the rest of the batch keeps to its guesses."""
    probes = stream(600, 3)
    first, second = probes[:300], probes[300:]
    plain = unguessed(redis_client, "plain")
    await plain.check_and_insert(first)
    removed = [p.id for p in first[:100]]
    await plain.forget(removed)
    expected = await plain.check_and_insert(second)

    guessing, other = index(redis_client, "guessing"), index(redis_client, "guessing")
    await guessing.check_and_insert(first)

    async def forget() -> None:
        assert any(await other.forget(removed))

    before_the_call(guessing, forget)
    got = await guessing.check_and_insert(second)
    assert summary(got) == summary(expected)
    entries = await redis_client.lrange(guessing.keys.posts, 0, 3)
    deletion = entries[3]  # (before the batch's three calls)
    assert deletion[8:HEAD] == b"-" * 16 + b"1"
    assert len(deletion) - HEAD - 2 >= 16 * 7 * 50  # (the buckets of the articles deleted)
    assert [kept for kept, _ in await log(redis_client, guessing)][-3:] == [True] * 3


async def test_a_match_that_expires_after_the_read_is_not_taken(
    redis_client: aioredis.Redis,
) -> None:
    probes = stream(40, 4)
    original = next(p for p in probes if p.fingerprint is not None and not p.line)
    copy = Probe("copy", b"c" * 16, original.fingerprint, original.sketch)
    guessing = index(redis_client, "expiring", retention_s=1)
    await guessing.check_and_insert([original])

    async def expire() -> None:
        await asyncio.sleep(2.1)

    before_the_call(guessing, expire)
    (verdict,) = await guessing.check_and_insert([copy])
    assert verdict.kind is Kind.UNIQUE
    # The script took the expired original out of its 16 buckets, which its call's entry in
    # the log gives to every later call to search, with the copy's (it went another way).
    assert (await log(redis_client, guessing))[-1] == (True, 32)


async def test_a_dependent_posted_again_within_a_call_makes_the_later_articles_searched(
    redis_client: aioredis.Redis,
) -> None:
    """An article whose guess compared one that expired after the read is searched by the
    script, which takes the expired one out and posts its dependent again under the bands
    they share. A later article of the same call under those buckets, whose guess compared
    neither (the expired one was past the newest postings read there, the dependent not
    posted there yet), is searched too, and matches the dependent."""
    rng = random.Random(11)
    bands = [rng.randbytes(4) for _ in range(16)]  # (the expiring article's)

    def like(shared: range, name: str) -> Probe:
        sketch = b"".join(bands[b] if b in shared else rng.randbytes(4) for b in range(16))
        return probe(name, rng.getrandbits(64), sketch=sketch)

    expiring = like(range(16), "expiring")
    dependent = like(range(12), "dependent")  # (a near-duplicate: posted under 12-15 alone)
    # Under each of bands 0-11 more articles after it than a read takes: it is past them.
    crowd = [like(range(b, b + 1), f"crowd{b}-{i}") for b in range(12) for i in range(33)]
    first = like(range(12, 16), "first")  # (compares the expiring one: too little alike)
    later = like(range(12), "later")
    # Retention of 2 s: indexed in second s, `expiring` has expired from second s + 3 on, the
    # others (indexed in second s + 1) not before s + 4.
    options = IndexOptions(retention_s=2)

    async def history(target: RedisBandIndex) -> int:
        s = await in_second(redis_client)
        await target.check_and_insert([expiring])
        await in_second(redis_client, s + 1)
        decided = await target.check_and_insert([dependent, *crowd])
        assert (decided[0].kind, decided[0].duplicate_of) == (Kind.NEAR, "expiring")
        return s

    plain = RedisBandIndex(
        redis_client, "plain", Bands(), options, expected_docs=100_000, guesses=False
    )
    await in_second(redis_client, await history(plain) + 3)
    expected = await plain.check_and_insert([first, later])
    assert [(v.kind, v.duplicate_of) for v in expected] == [
        (Kind.UNIQUE, None),
        (Kind.NEAR, "dependent"),
    ]

    guessing = index(redis_client, "guessing", retention_s=2)
    s = await history(guessing)

    async def expire() -> None:
        await in_second(redis_client, s + 3)

    before_the_call(guessing, expire)
    got = await guessing.check_and_insert([first, later])
    assert summary(got) == summary(expected)
    # (one call, whose guesses held as it started; its entry in the log names the 16 buckets
    # it took the expired article out of and the later article's 16: it went another way)
    assert (await log(redis_client, guessing))[-1] == (True, 32)


async def test_the_expiry_sweep_after_the_read_leaves_the_other_guesses_standing(
    redis_client: aioredis.Redis,
) -> None:
    """Articles whose retention ended after the worker read the index, swept before its
    calls: the sweep's entry in the log of calls names their buckets, and the calls keep to
    the guesses elsewhere."""
    probes = stream(1200, 8)
    day = IndexOptions(retention_s=86_400)
    plain = RedisBandIndex(
        redis_client, "plain", Bands(), day, expected_docs=100_000, guesses=False
    )
    guessing = index(redis_client, "swept", retention_s=86_400)
    sweeper = index(redis_client, "swept", retention_s=86_400)
    expected = await plain.check_and_insert(probes[:600])
    got = await guessing.check_and_insert(probes[:600])
    await age(redis_client, plain.keys, [p.id for p in probes[:100]])
    assert await plain.expire(10_000) > 0
    expected += await plain.check_and_insert(probes[600:])

    async def sweep() -> None:
        await age(redis_client, sweeper.keys, [p.id for p in probes[:100]])
        assert await sweeper.expire(10_000) > 0

    before_the_call(guessing, sweep)
    got += await guessing.check_and_insert(probes[600:])
    assert summary(got) == summary(expected)
    assert [kept for kept, _ in await log(redis_client, guessing)][-6:] == [True] * 6


def test_a_batchs_buckets_are_each_sketchs() -> None:
    rng = random.Random(5)
    sketches = [rng.randbytes(64) for _ in range(40)] + [bytes(64), b"\xff" * 64]
    for groups in (8, 14, 16, 17, 24):
        layout = BandLayout(b"p:", Bands(), groups)
        assert layout.buckets_of(sketches) == [layout.buckets(s) for s in sketches]


def test_a_group_strings_postings_are_read_at_their_places() -> None:
    layout = BandLayout(b"p:", Bands(), 16)  # (checks of 2 bytes: postings of 8)
    check, other = b"\x01\x02", b"\x02\x01"
    # (the check's bytes also stand across two postings: not a posting of its)
    blob = (
        check
        + pack_number(5)
        + other
        + b"\x00\x00\x00\x00\x01\x02"
        + check
        + bytes(6)  # its marker: a string of its own
        + check
        + pack_number(9)
    )
    assert layout.read(blob, check) == ([5, 9], True)
    assert layout.read(blob, other) == ([0x0102], False)
    assert layout.numbers(b"\x00" + check + pack_number(7)) == [7]


def test_lua_and_python_agree_on_the_guesses_form() -> None:
    lua = resources.files("worker.index.redis.lua")
    text = lua.joinpath("guesses.lua").read_text("utf-8")
    postings = lua.joinpath("postings.lua").read_text("utf-8")
    constants = dict(re.findall(r"^local (OWN|TOKEN|SPILL) = (\d+)", text + postings, re.MULTILINE))
    assert constants == {"OWN": str(OWN), "TOKEN": str(HEAD - 9), "SPILL": str(SPILL)}
    assert "local HEAD = 8 + TOKEN + 1" in text


async def test_a_batch_read_before_writes_were_lost_is_left_to_the_script(
    redis_client: aioredis.Redis,
) -> None:
    """Redis lost the call the worker read the index at (a lagging replica promoted) and
    numbered another one as it: the head of the log is not the one read."""
    probes = stream(400, 6)
    guessing = index(redis_client, "lost")
    await guessing.check_and_insert(probes[:200])

    async def lose_the_last_call() -> None:
        entry = await redis_client.lindex(guessing.keys.posts, 0)
        assert isinstance(entry, bytes)
        await redis_client.lset(guessing.keys.posts, 0, entry[:8] + b"x" * 16 + entry[24:])

    before_the_call(guessing, lose_the_last_call)
    plain = unguessed(redis_client, "plain")
    expected = await plain.check_and_insert(probes[:200]) + await plain.check_and_insert(
        probes[200:]
    )
    got = await guessing.check_and_insert(probes[200:])
    assert summary(got) == summary(expected[200:])
    assert [kept for kept, _ in await log(redis_client, guessing)][-2:] == [False, False]


async def test_by_default_the_worker_guesses_once_the_searches_read_many_postings(
    redis_client: aioredis.Redis,
) -> None:
    """News-like articles that share no band: the script searches them as cheaply as the
    worker would read them, so no call carries guesses; then articles of one template, whose
    searches read many postings each: the calls carry guesses."""
    rng = random.Random(7)
    auto = RedisBandIndex(redis_client, "auto", Bands(), expected_docs=100_000)
    apart = [probe(f"a{i}", rng.getrandbits(64), sketch=rng.randbytes(64)) for i in range(300)]
    await auto.check_and_insert(apart)
    assert await log(redis_client, auto) == [(False, 0)] * 3
    shared = rng.randbytes(32)  # (8 of the 16 bands the same: too few for a near-duplicate)
    alike = [
        probe(f"t{i}", rng.getrandbits(64), sketch=shared + rng.randbytes(32)) for i in range(600)
    ]
    await auto.check_and_insert(alike[:300])
    await auto.check_and_insert(alike[300:])
    assert [kept for kept, _ in await log(redis_client, auto)][-3:] == [True] * 3


async def test_copies_of_one_story_are_guessed_to_the_end_of_their_batch(
    redis_client: aioredis.Redis,
) -> None:
    """Each copy a batch posts moves other articles into the newest postings its later copies
    read: the worker reads those owners too and guesses on, rather than leave the rest of the
    batch to the script."""
    rng = random.Random(16)
    words = [rng.choice(WORDS[:300]) for _ in range(500)]  # (a story's words recur)
    texts = []
    for _ in range(1000):
        copy = list(words)
        for at in rng.sample(range(len(copy)), rng.randint(0, 50)):
            copy[at] = rng.choice(words)
        texts.append(" ".join(copy))
    found = Fingerprinter().many(texts)
    copies = [Probe(f"c{n}", f.content_hash, f.search, f.sketch) for n, f in enumerate(found)]
    plain, guessing = unguessed(redis_client, "plain"), index(redis_client, "copies")
    sent: list[bytes] = []
    calls = guessing._band_calls.calls

    def spied(*args: Any, **kwargs: Any) -> list[list[Any]]:
        sent.extend(args[3] if len(args) > 3 else kwargs.get("guesses") or [])
        return calls(*args, **kwargs)

    guessing._band_calls.calls = spied  # type: ignore[method-assign]
    expected, got = await both_decide(plain, guessing, copies, 100)
    assert summary(got) == summary(expected)
    assert sum(v.kind is Kind.NEAR for v in got) > 800
    # (every article guessed, and each went the way guessed)
    assert len(sent) == len(copies)
    assert b"" not in sent
    assert all(went == 0 for _, went in await log(redis_client, guessing))
    assert all(kept for kept, _ in await log(redis_client, guessing))
