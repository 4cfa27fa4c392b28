"""The index contract, run against the in-memory index and the Redis index alike."""

from __future__ import annotations

import asyncio
import random

import pytest

from tests.index.conftest import MakeIndex
from tests.support.factories import BASE, SAME, flip, one, planted, probe, sketch_agreeing
from worker import defaults
from worker.errors import IndexFenced
from worker.layout.tables import Layout, blocks, multi_index, pigeonhole, sampled
from worker.model import Forget, Kind, Owner, Probe, Verdict

# What only the SimHash tables promise (distances, the nearest, bucket reads, related articles);
# tests without it hold for band layouts too.
TABLES = pytest.mark.candidates("tables")


async def test_first_is_unique_then_near_duplicate_with_its_distance(make_index: MakeIndex) -> None:
    index = make_index()
    first = await one(index, probe("a", BASE))
    assert first.kind is Kind.UNIQUE
    assert first.duplicate_of is None
    assert first.distance is None
    assert first.fingerprint == BASE
    assert not first.replayed
    second = await one(index, probe("b", flip(BASE, [0, 40, 63])))
    assert second.kind is Kind.NEAR
    assert (second.duplicate_of, second.distance) == ("a", 3)
    assert second.duplicate_of_fingerprint == BASE


@TABLES
async def test_beyond_the_threshold_is_unique(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("a", BASE))
    assert (await one(index, probe("b", flip(BASE, [1, 2, 3, 4])))).kind is Kind.UNIQUE


async def test_exact_content_is_an_exact_duplicate(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("a", BASE, content="same"))
    v = await one(index, probe("b", BASE, content="same"))
    assert (v.kind, v.duplicate_of, v.distance, v.duplicate_of_fingerprint) == (
        Kind.EXACT,
        "a",
        0,
        BASE,
    )


async def test_exact_matching_works_without_fingerprints(make_index: MakeIndex) -> None:
    index = make_index()
    assert (await one(index, probe("a", None, content="short"))).kind is Kind.UNIQUE
    v = await one(index, probe("b", None, content="short"))
    assert (v.kind, v.duplicate_of, v.fingerprint, v.duplicate_of_fingerprint) == (
        Kind.EXACT,
        "a",
        None,
        None,
    )
    assert (await one(index, probe("c", None, content="other"))).kind is Kind.UNIQUE


async def test_the_closest_match_wins(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("far", flip(BASE, [1, 2, 3])))
    await one(index, probe("near", flip(BASE, [60, 61, 62, 63, 10, 11, 12])))  # unrelated to far
    await one(index, probe("nearest", flip(BASE, [9])))
    v = await one(index, probe("new", BASE))
    assert (v.duplicate_of, v.distance) == ("nearest", 1)


async def test_equal_distance_goes_to_the_earliest(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("z-first", flip(BASE, [5, 6])))
    await one(index, probe("a-second", flip(BASE, [50, 51])))
    v = await one(index, probe("new", BASE))
    assert (v.duplicate_of, v.distance) == ("z-first", 2)


async def test_redelivery_gets_the_same_verdict_and_never_itself(make_index: MakeIndex) -> None:
    index = make_index()
    a = await one(index, probe("a", BASE))
    b = await one(index, probe("b", flip(BASE, [7])))
    again_a = await one(index, probe("a", BASE))
    again_b = await one(index, probe("b", flip(BASE, [7])))
    assert again_a.replayed
    assert again_b.replayed
    assert again_a.kind is Kind.UNIQUE
    assert again_a.duplicate_of is None
    for first, again in ((a, again_a), (b, again_b)):
        assert (
            again.kind,
            again.duplicate_of,
            again.distance,
            again.duplicate_of_fingerprint,
            again.seen_at_ms,
        ) == (
            first.kind,
            first.duplicate_of,
            first.distance,
            first.duplicate_of_fingerprint,
            first.seen_at_ms,
        )


async def test_same_id_with_new_text_replaces_the_article(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("a", BASE, content="v1"))
    assert (await one(index, probe("b", flip(BASE, [1]), content="b"))).duplicate_of == "a"
    moved = ~BASE & (2**64 - 1)  # the new text is nothing like the old
    v = await one(index, probe("a", moved, content="v2"))
    assert (v.kind, v.replaced, v.replayed) == (Kind.UNIQUE, True, False)
    assert (await one(index, probe("a", moved, content="v2"))).replayed  # v2 is now the record
    # The old text no longer matches, by fingerprint or by content (b, its copy, still does);
    # the new one does.
    assert (await one(index, probe("c", flip(BASE, [1, 2]), content="c"))).duplicate_of == "b"
    assert (await one(index, probe("d", BASE, content="v1"))).duplicate_of != "a"
    assert (await one(index, probe("e", moved, content="e"))).duplicate_of == "a"


async def test_a_redelivery_after_a_delete_gets_its_first_verdict(make_index: MakeIndex) -> None:
    # X at offset 10 of partition 0, deleted at offset 11; a copy Y arrives on partition 1;
    # then offsets 10-11 are read again (a worker died before committing them).
    index = make_index()
    first = await one(index, probe("X", BASE, content="the story", position=(0, 10)))
    await index.forget(["X"])
    y = await one(index, probe("Y", BASE ^ 0b101, content="reposted", position=(1, 5)))
    assert y.kind is Kind.UNIQUE  # X was gone
    again = await one(index, probe("X", BASE, content="the story", position=(0, 10)))
    assert (again.kind, again.duplicate_of, again.replayed) == (Kind.UNIQUE, None, True)
    assert again.seen_at_ms == first.seen_at_ms
    assert await index.forget(["X"]) == [False]  # the delete, read again: X stays gone
    assert (await one(index, probe("Z", BASE ^ 1, content="z"))).duplicate_of == "Y"


async def test_a_redelivery_after_an_update_gets_its_first_verdict(make_index: MakeIndex) -> None:
    index = make_index()
    moved = ~BASE & (2**64 - 1)
    first = await one(index, probe("X", BASE, content="v1", position=(0, 10)))
    second = await one(index, probe("X", moved, content="v2", position=(0, 12)))
    assert second.replaced
    again = await one(index, probe("X", BASE, content="v1", position=(0, 10)))
    assert (again.kind, again.replayed, again.seen_at_ms) == (
        first.kind,
        True,
        first.seen_at_ms,
    )
    assert (await one(index, probe("X", moved, content="v2", position=(0, 12)))).replayed
    assert (await one(index, probe("c", moved ^ 1, content="c"))).duplicate_of == "X"  # still v2


async def test_old_text_sent_again_later_is_decided_again(make_index: MakeIndex) -> None:
    # Not a redelivery: the same text as an earlier version, from a later message.
    index = make_index()
    moved = ~BASE & (2**64 - 1)
    await one(index, probe("X", BASE, content="v1", position=(0, 10)))
    await one(index, probe("X", moved, content="v2", position=(0, 12)))
    back = await one(index, probe("X", BASE, content="v1", position=(0, 20)))
    assert (back.replayed, back.replaced) == (False, True)
    assert (await one(index, probe("c", BASE ^ 1, content="c"))).duplicate_of == "X"


async def test_an_article_sent_again_is_never_its_own_original(make_index: MakeIndex) -> None:
    """a's new text repeats b, which repeated a's old text: a is b's copy, its cluster
    starts at b."""
    index = make_index()
    await one(index, probe("a", BASE, content="v1"))
    assert (await one(index, probe("b", flip(BASE, [1]), content="b"))).original == "a"
    near = await one(index, probe("a", flip(BASE, [1, 2]), content="v2"))
    assert (near.kind, near.duplicate_of, near.original, near.replaced) == (
        Kind.NEAR,
        "b",
        "b",
        True,
    )
    exact = await one(index, probe("a", flip(BASE, [1]), content="b"))
    assert (exact.kind, exact.duplicate_of, exact.original) == (Kind.EXACT, "b", "b")


@pytest.mark.parametrize(
    "layout", [pigeonhole(3), multi_index(7, 3), blocks(4, 7), sampled(5, 6, 12)], ids=Layout.name
)
async def test_forget_removes_an_article_from_every_table(
    make_index: MakeIndex, layout: Layout
) -> None:
    index = make_index(layout)
    await one(index, probe("a", BASE))
    await one(index, probe("far", ~BASE & (2**64 - 1)))
    assert (await one(index, probe("dup", flip(BASE, [4])))).duplicate_of == "a"
    assert await index.forget(["a", "never-seen", "dup"]) == [True, False, True]
    assert await index.forget(["a"]) == [False]
    v = await one(index, probe("copy", flip(BASE, [5])))
    assert v.kind is Kind.UNIQUE  # a's entries are gone from every table
    assert (await one(index, probe("text", 7, content="text of a"))).kind is Kind.UNIQUE
    again = await one(index, probe("a", BASE, content="a again"))  # the id may be used again
    assert (again.kind, again.duplicate_of, again.replayed) == (Kind.NEAR, "copy", False)
    assert await index.forget([]) == []


@TABLES
async def test_an_alert_points_at_the_closest_earlier_article_and_names_the_first(
    make_index: MakeIndex,
) -> None:
    """Near-duplicates are indexed too: a copy of a copy points at the copy it repeats, and
    `original` names its cluster's first article; an exact copy is not indexed again."""
    index = make_index()
    await one(index, probe("a", BASE))
    b = await one(index, probe("b", flip(BASE, [1, 2])))
    assert (b.duplicate_of, b.original, b.similarity) == ("a", "a", 0.9686)  # 62 of 64 bins
    c = await one(index, probe("c", flip(BASE, [1, 2, 3, 4])))  # 2 from b, 4 from a
    assert (c.kind, c.duplicate_of, c.original, c.distance) == (Kind.NEAR, "b", "a", 2)
    d = await one(index, probe("d", BASE, content="text of b"))  # exact copy of b's text
    assert (d.kind, d.duplicate_of, d.original, d.distance, d.similarity) == (
        Kind.EXACT,
        "b",
        "a",
        2,
        1.0,
    )
    e = await one(index, probe("e", BASE, content="text of b"))  # and again: d is no entry
    assert (e.duplicate_of, e.candidates) == ("b", 0)


async def test_a_batch_is_decided_in_order(make_index: MakeIndex) -> None:
    index = make_index()
    outcomes = await index.check_and_insert(
        [
            probe("a", BASE),
            probe("b", flip(BASE, [3])),
            probe("a", BASE),
            probe("c", BASE, content="text of a"),
        ]
    )
    kinds = [(o.kind, o.duplicate_of, o.replayed) for o in outcomes]
    assert kinds == [
        (Kind.UNIQUE, None, False),
        (Kind.NEAR, "a", False),
        (Kind.UNIQUE, None, True),
        (Kind.EXACT, "a", False),
    ]
    assert await index.check_and_insert([]) == []


async def test_distances_are_exact_at_every_bit_count(make_index: MakeIndex) -> None:
    index = make_index(15)  # 16 bands of 4 bits
    rng = random.Random(42)
    for d in range(16):
        base = rng.getrandbits(64)
        await one(index, probe(f"orig{d}", base))
        moved = flip(base, rng.sample(range(64), d))
        v = await one(index, probe(f"copy{d}", moved))
        assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, f"orig{d}", d), d


@TABLES
async def test_threshold_zero_matches_identical_fingerprints_only(make_index: MakeIndex) -> None:
    index = make_index(0)
    await one(index, probe("a", BASE))
    assert (await one(index, probe("b", flip(BASE, [0])))).kind is Kind.UNIQUE
    v = await one(index, probe("c", BASE))
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "a", 0)


async def test_unicode_ids(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("新闻-ü-1", BASE))
    v = await one(index, probe("新闻-ü-2", flip(BASE, [3])))
    assert v.duplicate_of == "新闻-ü-1"


@TABLES
@pytest.mark.parametrize(
    ("room", "expected"),
    [
        (2, (Kind.UNIQUE, None, 2, 1)),  # the oldest is not compared; the bucket is hot
        (3, (Kind.NEAR, "o0", 3, 0)),
    ],
)
async def test_a_hot_bucket_is_read_in_part_newest_first(
    make_index: MakeIndex, room: int, expected: tuple[Kind, str | None, int, int]
) -> None:
    """Three originals share only their top band, and the bucket has room for `room`."""
    top = 0xABCD << 48
    olds = [top | 0x000000000000, top | 0xFFFFFFFFFFFF, top | 0x0F0F0F0F0F0F]
    index = make_index(3, max_bucket_read=room)
    for i, fp in enumerate(olds):
        assert (await one(index, probe(f"o{i}", fp))).kind is Kind.UNIQUE
    # 3 bits from o0, one in each lower band: o0 can only be found through the top band
    v = await one(index, probe("new", flip(olds[0], [32, 16, 0])))
    assert (v.kind, v.duplicate_of, v.candidates, v.hot_buckets) == expected


@TABLES
async def test_candidates_are_counted_and_zero_on_replay(make_index: MakeIndex) -> None:
    index = make_index()
    await one(index, probe("a", BASE))
    first = await one(index, probe("b", flip(BASE, [1])))
    assert first.candidates == 3  # bit 1 lies in the last band: "a" is in three of b's buckets
    assert (await one(index, probe("b", flip(BASE, [1])))).candidates == 0


@pytest.mark.parametrize(
    "layout", [multi_index(7, 3), multi_index(7, 4), blocks(4, 7)], ids=Layout.name
)
async def test_exact_layouts_find_copies_at_every_distance(
    make_index: MakeIndex, layout: Layout
) -> None:
    index = make_index(layout)
    rng = random.Random(layout.spec())
    originals, copies = [], []
    for d in range(layout.search_radius + 1):
        for n in range(8):
            base = rng.getrandbits(64)
            originals.append(probe(f"orig{d}-{n}", base))
            copies.append((probe(f"copy{d}-{n}", flip(base, rng.sample(range(64), d))), d))
    await index.check_and_insert(originals)
    outcomes = await index.check_and_insert([c for c, _ in copies])
    for (copy, d), v in zip(copies, outcomes, strict=True):
        assert (v.kind, v.duplicate_of, v.distance) == (
            Kind.NEAR,
            copy.id.replace("copy", "orig"),
            d,
        )


async def test_expired_articles_stop_matching_and_are_swept(make_index: MakeIndex) -> None:
    index = make_index(retention_s=1)
    await one(index, probe("old", BASE))
    assert (await one(index, probe("old-dup", flip(BASE, [1])))).duplicate_of == "old"
    await one(index, probe("old-text", 5, content="shared"))
    assert await index.expire() == 0  # nothing is old yet
    await asyncio.sleep(2.1)  # expiry counts whole seconds
    v = await one(index, probe("new", flip(BASE, [2])))
    assert (v.kind, v.candidates) == (Kind.UNIQUE, 0)  # old's entries were cut on access
    assert (await one(index, probe("new-text", 6, content="shared"))).kind is Kind.UNIQUE
    # The sweep reclaims what no probe touched: old's record, old-dup's record.
    assert await index.expire() == 2
    assert await index.expire() == 0
    again = await one(index, probe("old-dup", flip(BASE, [1])))  # decided afresh
    assert (again.replayed, again.duplicate_of, again.distance) == (False, "new", 2)


async def test_renew_on_match_keeps_a_syndicated_story_found(make_index: MakeIndex) -> None:
    """A copy arriving restarts its match's retention (renew_on_match); without, the story
    expires on schedule. Retention counts whole seconds, hence the waits. (The two indexes
    may share one namespace: their stories are far apart.)"""
    renewing = make_index(retention_s=3, renew_on_match=True)
    plain = make_index(retention_s=3)
    stories = {renewing: BASE, plain: ~BASE & (2**64 - 1)}
    for index, story in stories.items():
        await one(index, probe(f"story-{story:x}", story))
    await asyncio.sleep(2.0)
    for index, story in stories.items():
        copy = await one(index, probe(f"copy-{story:x}", flip(story, [1, 2])))
        assert copy.duplicate_of == f"story-{story:x}"
    await asyncio.sleep(2.5)  # the stories are 4.5 s old, one renewed 2.5 s ago
    late = {  # 1 bit from its story, 3 from the copy
        index: await one(index, probe(f"late-{story:x}", flip(story, [5])))
        for index, story in stories.items()
    }
    assert late[renewing].duplicate_of == f"story-{BASE:x}"
    assert late[plain].duplicate_of == f"copy-{stories[plain]:x}"
    assert late[plain].original == f"story-{stories[plain]:x}"


@TABLES
async def test_related_articles_are_originals_with_their_nearest(make_index: MakeIndex) -> None:
    """Threshold 2 for duplicates, tables searched to 6: 3..6 bits away is related."""
    index = make_index(multi_index(6, 3), threshold=2)
    await one(index, probe("a", BASE))
    near = await one(index, probe("near", flip(BASE, [1, 2])))
    related = await one(index, probe("rel", flip(BASE, [10, 20, 30, 40, 50])))
    assert (near.kind, near.duplicate_of, near.distance) == (Kind.NEAR, "a", 2)
    assert (related.kind, related.duplicate_of, related.distance) == (Kind.RELATED, "a", 5)
    assert not related.is_duplicate
    # A related article is indexed like any original: its own copies point at it.
    copy = await one(index, probe("rel-copy", flip(BASE, [10, 20, 30, 40, 50, 60])))
    assert (copy.kind, copy.duplicate_of, copy.distance) == (Kind.NEAR, "rel", 1)
    again = await one(index, probe("rel", flip(BASE, [10, 20, 30, 40, 50])))
    assert (again.replayed, again.kind, again.duplicate_of) == (True, Kind.RELATED, "a")
    far = await one(index, probe("far", flip(BASE, list(range(0, 64, 2)))))
    assert (far.kind, far.duplicate_of, far.distance) == (Kind.UNIQUE, None, None)


async def test_a_candidate_must_also_be_similar_by_its_sketch(make_index: MakeIndex) -> None:
    """Within the threshold, the sketch decides: too few agreeing bins is no duplicate, and
    of several candidates the most similar wins, even if another is nearer."""
    index = make_index(multi_index(8, 3), similarity=0.6)  # 39 of 64 bins (8-bit values)
    await one(index, probe("a", BASE, sketch=SAME))
    other_bins = bytes([7] * 26 + [0] * 38)  # 38 bins like a's, 38 like "enough"'s
    little = await one(index, probe("little", flip(BASE, [1]), sketch=other_bins))
    assert little.kind is Kind.UNIQUE  # 1 bit away, but its sketch agrees on 38 bins only
    enough = await one(index, probe("enough", flip(BASE, [1, 2]), sketch=sketch_agreeing(39)))
    assert (enough.kind, enough.duplicate_of, enough.distance) == (Kind.NEAR, "a", 2)
    assert enough.similarity == pytest.approx(0.6078, abs=1e-4)
    best = await one(index, probe("best", flip(BASE, [1, 3]), sketch=other_bins))
    assert (best.duplicate_of, best.similarity) == ("little", 1.0)  # not the nearer "enough"


@TABLES
async def test_a_crowded_bucket_still_gives_the_nearest(make_index: MakeIndex) -> None:
    """700 originals share one band: every one is a candidate, and the nearest wins."""
    index = make_index(3)
    rng = random.Random(21)
    top = 0x5A5A << 48
    fps = [top | rng.getrandbits(48) for _ in range(700)]
    await index.check_and_insert([probe(f"o{i}", fp) for i, fp in enumerate(fps)])
    target = fps[345]
    [v] = await index.check_and_insert([probe("copy", flip(target, [3, 40]))])
    assert v.candidates >= 700
    assert (v.kind, v.duplicate_of, v.distance) == (Kind.NEAR, "o345", 2)


async def test_an_article_renewed_earlier_in_a_batch_is_found_by_later_ones(
    make_index: MakeIndex,
) -> None:
    """A copy renews its story (a new place in the index) before a later article of the same
    batch, nearer the story than the copy, is decided."""
    index = make_index(renew_on_match=True)
    await one(index, probe("story", BASE))
    copy, later = await index.check_and_insert(
        [probe("copy", flip(BASE, [1, 2])), probe("later", flip(BASE, [40]))]
    )
    assert (copy.duplicate_of, copy.distance) == ("story", 2)
    assert (later.duplicate_of, later.distance) == ("story", 1)


async def test_articles_replaced_earlier_in_a_batch_do_not_count(make_index: MakeIndex) -> None:
    """More articles than are compared, nearer than an earlier one, each inserted and then
    replaced (new text, far away) earlier in the batch: the earlier one is still found."""
    index = make_index()
    far = ~BASE & (2**64 - 1)
    await one(index, probe("earlier", flip(BASE, [40, 41, 42])))
    gone = [f"gone-{i}" for i in range(defaults.MAX_CANDIDATES)]
    *_, last = await index.check_and_insert(
        [probe(g, flip(BASE, [i])) for i, g in enumerate(gone)]
        + [probe(g, flip(far, [i]), content="new text") for i, g in enumerate(gone)]
        + [probe("last", BASE)]
    )
    assert (last.kind, last.duplicate_of, last.distance) == (Kind.NEAR, "earlier", 3)


# The worker sends a batch before the one before it is decided (RedisIndex sends their calls
# one after another on one connection): batches sent together are decided one after another.


async def test_batches_sent_together_are_decided_one_after_another(make_index: MakeIndex) -> None:
    probes = planted(7, 5)
    # The same articles again, under other ids, with every bit flipped and other sketch bins:
    # as far from the first ones (in one namespace) as they are near each other.
    mirrored = [
        probe(
            f"m-{p.id}",
            ~p.fingerprint & (2**64 - 1) if p.fingerprint is not None else None,
            sketch=bytes(b ^ 0x80 for b in p.sketch) if p.sketch else None,
        )
        for p in probes
    ]
    apart, together = make_index(5), make_index(5)
    one_by_one = [
        v
        for start in range(0, len(probes), 25)
        for v in await apart.check_and_insert(probes[start : start + 25])
    ]
    sent = await asyncio.gather(
        *(
            together.check_and_insert(mirrored[start : start + 25])
            for start in range(0, len(probes), 25)
        )
    )
    summary = [(v.kind, v.duplicate_of, v.distance) for v in one_by_one]
    assert summary == [
        (v.kind, v.duplicate_of and v.duplicate_of.removeprefix("m-"), v.distance)
        for batch in sent
        for v in batch
    ]
    assert sum(v.duplicate_of is not None for v in one_by_one) > 100


async def test_an_article_renewed_by_a_batch_sent_before_is_found(make_index: MakeIndex) -> None:
    index = make_index(renew_on_match=True)
    await one(index, probe("story", BASE))
    [copy], [later] = await asyncio.gather(
        index.check_and_insert([probe("copy", flip(BASE, [1, 2]))]),
        index.check_and_insert([probe("later", flip(BASE, [40]))]),
    )
    assert (copy.duplicate_of, copy.distance) == ("story", 2)
    assert (later.duplicate_of, later.distance) == ("story", 1)


async def test_a_deletion_sent_between_batches_comes_between_them(make_index: MakeIndex) -> None:
    """(The first batch is long: Redis reads it in several parts, between which it could
    serve another connection.)"""
    index = make_index()
    rng = random.Random(4)
    first = [
        probe(f"other-{i}", rng.getrandbits(64), sketch=rng.randbytes(64)) for i in range(1000)
    ]
    first += [probe("a", BASE)]
    decided, held, [copy] = await asyncio.gather(
        index.check_and_insert(first),
        index.forget(["a"]),
        index.check_and_insert([probe("copy", flip(BASE, [1]))]),
    )
    assert (decided[-1].kind, held, copy.kind) == (Kind.UNIQUE, [True], Kind.UNIQUE)


# A batch (Index.decide): its articles and deletions in order, as one unit, on behalf of the
# owner of their input partitions; redeliveries of any of an id's messages.


async def test_a_batch_with_a_deletion_is_one_unit_that_no_later_batch_overtakes(
    make_index: MakeIndex,
) -> None:
    index = make_index()
    rng = random.Random(3)
    first: list[Probe | Forget] = [
        probe(f"g{i}", rng.getrandbits(64), sketch=rng.randbytes(64)) for i in range(300)
    ]
    first += [Forget("z", (0, 300)), probe("a", BASE, position=(0, 301))]
    [*_, gone, a], [b] = await asyncio.gather(
        index.decide(first), index.decide([probe("b", flip(BASE, [2]), position=(0, 302))])
    )
    assert gone is False
    assert isinstance(a, Verdict)
    assert isinstance(b, Verdict)
    assert (a.kind, b.kind, b.duplicate_of) == (Kind.UNIQUE, Kind.NEAR, "a")


async def test_each_message_of_an_id_changed_twice_gets_its_first_verdict_again(
    make_index: MakeIndex,
) -> None:
    # X three times on partition 0, then Z (a copy of X's first text) on partition 1; then
    # partition 0's messages are read again (its worker died before committing them).
    index = make_index()
    moved = ~BASE & (2**64 - 1)
    texts = [(BASE, "v1"), (moved, "v2"), (flip(moved, list(range(20, 40))), "v3")]
    xs = [probe("X", fp, content=c, position=(0, 10 + i)) for i, (fp, c) in enumerate(texts)]
    first = [await one(index, x) for x in xs]
    z = await one(index, probe("Z", flip(BASE, [3]), content="z", position=(1, 5)))
    assert z.kind is Kind.UNIQUE  # (X's first text was replaced)
    again = [await one(index, x) for x in xs]
    assert [(v.kind, v.duplicate_of, v.seen_at_ms) for v in again] == [
        (v.kind, v.duplicate_of, v.seen_at_ms) for v in first
    ]
    assert all(v.replayed for v in again)
    assert (await one(index, probe("c", flip(texts[2][0], [1]), content="c"))).duplicate_of == "X"


async def test_a_deletion_read_again_gets_its_answer_and_spares_the_article_sent_since(
    make_index: MakeIndex,
) -> None:
    index = make_index()
    await one(index, probe("X", BASE, content="v1", position=(0, 10)))
    assert await index.decide([Forget("X", (0, 11))]) == [True]
    await one(index, probe("X", BASE, content="v2", position=(0, 12)))
    assert await index.decide([Forget("X", (0, 11))]) == [True]  # read again: its answer
    assert (await one(index, probe("c", flip(BASE, [1]), content="c"))).duplicate_of == "X"


async def test_without_a_window_a_message_older_than_the_article_changes_nothing(
    make_index: MakeIndex,
) -> None:
    # No record is kept of what deletions and updates did: a message read again that is older
    # than the one that decided the article (same partition) neither removes nor replaces it.
    index = make_index(redelivery_window_s=0)
    moved = ~BASE & (2**64 - 1)
    await one(index, probe("X", BASE, content="v1", position=(0, 10)))
    await one(index, probe("X", moved, content="v2", position=(0, 12)))
    assert await index.decide([Forget("X", (0, 11))]) == [False]
    old = await one(index, probe("X", BASE, content="v1", position=(0, 10)))
    assert (old.replayed, old.replaced) == (True, False)
    assert (await one(index, probe("c", flip(moved, [1]), content="c"))).duplicate_of == "X"
    assert (await one(index, probe("d", flip(BASE, [1]), content="d"))).kind is Kind.UNIQUE


async def test_a_batch_of_an_older_generation_is_refused_and_applies_nothing(
    make_index: MakeIndex,
) -> None:
    index = make_index()
    owner, later = Owner("group/topic", 4), Owner("group/topic", 5)
    await index.decide([probe("a", BASE, position=(0, 1))], later)
    with pytest.raises(IndexFenced):
        await index.decide([probe("b", moved := ~BASE & (2**64 - 1), position=(0, 2))], owner)
    with pytest.raises(IndexFenced):  # (a batch spanning a claimed partition: all of it)
        await index.decide(
            [probe("c", flip(moved, [20]), position=(1, 1)), Forget("a", (0, 3))], owner
        )
    assert (await one(index, probe("b2", flip(moved, [1])))).kind is Kind.UNIQUE  # b is not in
    assert (await one(index, probe("a2", flip(BASE, [1])))).duplicate_of == "a"  # a still is
    [v] = await index.decide([probe("d", flip(BASE, [30, 31, 32, 33]), position=(1, 2))], owner)
    assert isinstance(v, Verdict)  # (partition 1 was not claimed by a later generation)
    other = Owner("another-group/topic", 1)  # another consumer group's claims are its own
    assert await index.decide([Forget("zz", (0, 9))], other) == [False]
