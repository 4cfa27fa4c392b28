"""The index contract of band layouts (16 bands of 4 bins): what bands promise beyond what
every index does (test_contract.py), run against each index that offers them."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterable

import pytest

from tests.index.conftest import MakeIndex
from tests.support.factories import BASE, one, probe
from worker.layout.bands import NEWEST
from worker.model import Kind

pytestmark = pytest.mark.candidates("bands")


def edited(sketch: bytes, bins: Iterable[int], rng: random.Random) -> bytes:
    """`sketch` with the given bins changed."""
    out = bytearray(sketch)
    for b in bins:
        out[b] = (out[b] + 1 + rng.randrange(255)) % 256
    return bytes(out)


def outside(band: int) -> list[int]:
    """One bin of every band but `band` (4 bins each)."""
    return [4 * b + 1 for b in range(16) if b != band]


async def test_one_shared_band_makes_a_candidate_and_the_sketch_decides(
    make_index: MakeIndex,
) -> None:
    rng = random.Random(1)
    story = rng.randbytes(64)
    index = make_index()
    await one(index, probe("story", BASE, sketch=story))
    # Shares band 3 alone, and agrees on 64 - 15 = 49 bins: a near-duplicate.
    copy = await one(
        index, probe("copy", ~BASE & (2**64 - 1), sketch=edited(story, outside(3), rng))
    )
    assert (copy.kind, copy.duplicate_of, copy.distance) == (Kind.NEAR, "story", 64)
    assert copy.similarity == pytest.approx(0.7647, abs=1e-4)
    # Shares band 5 alone and agrees on 4 + 14 bins only: a candidate, not a duplicate.
    other = bytearray(edited(story, range(64), rng))
    other[20:24] = story[20:24]
    for b in outside(5)[:14]:
        other[b] = story[b]
    unrelated = await one(index, probe("unrelated", BASE, sketch=bytes(other)))
    assert (unrelated.kind, unrelated.candidates) == (Kind.UNIQUE, 1)


async def test_the_most_similar_candidate_wins_then_the_first_seen(make_index: MakeIndex) -> None:
    rng = random.Random(2)
    story = rng.randbytes(64)
    index = make_index()
    await one(index, probe("a", BASE, sketch=edited(story, [0, 1, 2], rng)))
    await one(index, probe("b", BASE ^ 1, sketch=edited(story, [9], rng)))
    await one(index, probe("c", BASE ^ 2, sketch=edited(story, [17], rng)))
    v = await one(index, probe("new", BASE ^ 3, sketch=story))
    assert (v.duplicate_of, v.original) == ("b", "a")  # b and c agree on 63 bins, b came first


async def test_a_cluster_of_copies_costs_a_bounded_read_and_keeps_its_buckets_small(
    make_index: MakeIndex,
) -> None:
    """2,000 copies of one story, each with 1-3 bins changed: every one is found, no decision
    reads more than NEWEST entries of each of its 16 buckets, and the cluster posts about one
    entry per copy rather than sixteen, so an unrelated article sharing a band with it still
    finds its own copy."""
    rng = random.Random(3)
    story = rng.randbytes(64)
    index = make_index()
    page = story[:4] + edited(story, range(64), rng)[4:]  # shares band 0 with the story
    await one(index, probe("page", 7, sketch=page))
    await one(index, probe("story", BASE, sketch=story))
    copies = [
        probe(
            f"c{i}", BASE ^ i, sketch=edited(story, rng.sample(range(64), rng.randint(1, 3)), rng)
        )
        for i in range(2000)
    ]
    verdicts = await index.check_and_insert(copies)
    assert all(v.kind is Kind.NEAR for v in verdicts)
    assert max(v.candidates for v in verdicts) <= 16 * NEWEST
    assert sum(v.hot_buckets for v in verdicts) < len(verdicts)  # (mostly none)
    # The page's copy meets it in band 0 alone, the cluster's fullest band had it every copy.
    late = await one(index, probe("page copy", 8, sketch=edited(page, outside(0), rng)))
    assert (late.kind, late.duplicate_of) == (Kind.NEAR, "page")


async def test_copies_posted_beside_their_match_are_found_after_it_is_deleted(
    make_index: MakeIndex,
) -> None:
    """A copy is posted only under the bands it does not share with its match; once the
    match is deleted, the copy is found under all of them."""
    rng = random.Random(4)
    story = rng.randbytes(64)
    index = make_index()
    await one(index, probe("story", BASE, sketch=story))
    copy = edited(story, [0], rng)  # differs in band 0 only
    assert (await one(index, probe("copy", BASE ^ 1, sketch=copy))).duplicate_of == "story"
    assert await index.forget(["story"]) == [True]
    # Shares every band with the copy but band 0, which it changes too.
    later = await one(index, probe("later", BASE ^ 2, sketch=edited(copy, [1], rng)))
    assert (later.kind, later.duplicate_of) == (Kind.NEAR, "copy")


async def test_copies_posted_beside_their_match_are_found_after_it_expires(
    make_index: MakeIndex,
) -> None:
    rng = random.Random(5)
    story = rng.randbytes(64)
    index = make_index(retention_s=1)
    await asyncio.sleep(1.05 - time.time() % 1)  # just past the start of a second: s
    await one(index, probe("story", BASE, sketch=story))
    await asyncio.sleep(1.0)  # s + 1: the story is alive
    copy = edited(story, [0], rng)
    assert (await one(index, probe("copy", BASE ^ 1, sketch=copy))).duplicate_of == "story"
    await asyncio.sleep(1.0)  # s + 2: the story has expired, the copy not yet
    later = await one(index, probe("later", BASE ^ 2, sketch=edited(copy, [1], rng)))
    assert (later.kind, later.duplicate_of) == (Kind.NEAR, "copy")


async def test_a_crowded_bucket_is_read_newest_first_and_the_most_shared_wins(
    make_index: MakeIndex,
) -> None:
    """40 later articles share band 0 with a story and little else: the bucket is read
    NEWEST deep, and the story's copy, which shares ten bands with it, still finds it."""
    rng = random.Random(6)
    story = rng.randbytes(64)
    index = make_index()
    await one(index, probe("story", BASE, sketch=story))
    for i in range(40):
        crowd = story[:4] + edited(story, range(64), rng)[4:]
        assert (await one(index, probe(f"crowd{i}", i, sketch=crowd))).kind is Kind.UNIQUE
    # Bins 8-29 changed: bands 2-7 differ, bands 0, 1 and 8-15 are the story's.
    v = await one(index, probe("copy", BASE ^ 1, sketch=edited(story, range(8, 30), rng)))
    assert (v.kind, v.duplicate_of) == (Kind.NEAR, "story")
    assert (v.candidates, v.hot_buckets) == (NEWEST + 9, 1)


async def test_a_deleted_copy_stays_gone_when_its_match_is_deleted_too(
    make_index: MakeIndex,
) -> None:
    rng = random.Random(7)
    story = rng.randbytes(64)
    index = make_index()
    await one(index, probe("story", BASE, sketch=story))
    copy = edited(story, [0], rng)
    assert (await one(index, probe("copy", BASE ^ 1, sketch=copy))).duplicate_of == "story"
    assert await index.forget(["copy", "story"]) == [True, True]
    v = await one(index, probe("later", BASE ^ 2, sketch=edited(copy, [1], rng)))
    assert (v.kind, v.duplicate_of) == (Kind.UNIQUE, None)
