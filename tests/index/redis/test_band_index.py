"""How the band index keeps its postings in Redis: buckets share group strings, and a crowded
bucket moves to a string of its own (lua/postings.lua, SPILL)."""

from __future__ import annotations

import random

import redis.asyncio as aioredis

from tests.support.factories import BASE, flip, probe
from worker.index.redis import RedisBandIndex, format, scripts
from worker.index.redis.keys import NamespaceKeys
from worker.layout.bands import Bands
from worker.model import Kind

SHARED = b"\x11\x22\x33\x44"  # every article's first band


def sharing_one_band(rng: random.Random) -> bytes:
    """A sketch whose first band is SHARED and whose other bins are drawn at random, far from
    any other such sketch."""
    return SHARED + rng.randbytes(format.SKETCH_BYTES - len(SHARED))


async def test_a_crowded_bucket_moves_to_a_string_of_its_own(
    redis_client: aioredis.Redis,
) -> None:
    rng = random.Random(3)
    spill = await redis_client.eval(scripts.library() + "\nreturn SPILL", 0)
    index = RedisBandIndex(redis_client, "spill", Bands(), expected_docs=1_000)
    sketches = [sharing_one_band(rng) for _ in range(spill + 4)]
    verdicts = await index.check_and_insert(
        [probe(f"a{i}", flip(BASE, [i]), sketch=s) for i, s in enumerate(sketches)]
    )
    assert {v.kind for v in verdicts} == {Kind.UNIQUE}

    groups = format.group_bits(1_000)
    group, check = format.bucket_of(SHARED, groups)
    group_key = NamespaceKeys("spill").buckets.encode() + b"b\x00" + group
    size = format.posting_bytes(groups)
    in_group = await redis_client.get(group_key)
    own = await redis_client.get(group_key + check)
    assert isinstance(in_group, bytes)
    assert isinstance(own, bytes)
    marker = check + bytes(format.POSTING_TAIL)
    assert marker in [in_group[i : i + size] for i in range(0, len(in_group), size)]
    assert len(own) == len(sketches) * size  # every posting of the bucket, oldest first
    assert [
        int.from_bytes(own[i + len(check) : i + len(check) + format.NUMBER_BYTES])
        for i in range(0, len(own), size)
    ] == list(range(1, len(sketches) + 1))

    # An article near the third is found through the bucket's own string alone: its other
    # bands are new.
    near = SHARED + bytes(b ^ 0xFF for b in sketches[2][4:12]) + sketches[2][12:]
    (verdict,) = await index.check_and_insert([probe("near", flip(BASE, [40]), sketch=near)])
    assert (verdict.kind, verdict.duplicate_of) == (Kind.NEAR, "a2")

    # A deletion takes the posting out of the bucket's own string (a2's number is 3).
    assert await index.forget(["a2"]) == [True]
    own = await redis_client.get(group_key + check)
    assert isinstance(own, bytes)
    assert (3).to_bytes(6) not in [
        own[i + len(check) : i + len(check) + 6] for i in range(0, len(own), size)
    ]
