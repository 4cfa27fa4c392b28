"""The worker-side search of bucket entries (no Redis): each article's nearest candidates."""

from __future__ import annotations

import random
from collections.abc import Sequence

from tests.support.factories import BASE, entry
from worker.index.redis.format import ENTRY
from worker.index.redis.nearest import (
    Nearest,
    earlier_within,
    gather,
    nearest,
    within_earlier_calls,
)


def one(
    buckets: Sequence[bytes | None],
    fp: int,
    *,
    max_read: int,
    radius: int,
    limit: int = 16,
    cutoff_s: int | None = None,
) -> Nearest:
    gathered = gather([buckets], max_read=max_read, cutoff_s=cutoff_s)
    [found] = nearest(gathered, [fp], radius=radius, limit=limit, cutoff_s=cutoff_s)
    return found


def test_the_nearest_within_the_radius_come_first_and_ties_go_to_the_first_seen() -> None:
    buckets = [
        entry(BASE ^ 0b111, 1) + entry(BASE ^ 0b1, 5),
        None,
        entry(BASE ^ 0b10, 3),
        entry(BASE ^ (1 << 63), 9),
    ]
    found = one(buckets, BASE, radius=3, max_read=100)
    assert found.entries == (
        entry(BASE ^ 0b10, 3)
        + entry(BASE ^ 0b1, 5)
        + entry(BASE ^ (1 << 63), 9)
        + entry(BASE ^ 0b111, 1)
    )
    assert (found.candidates, found.hot, found.expired) == (4, 0, ())
    assert one(buckets, BASE, radius=3, max_read=100, limit=2).entries == (
        entry(BASE ^ 0b10, 3) + entry(BASE ^ 0b1, 5)
    )
    assert one(buckets, BASE ^ 0xFF00, radius=3, max_read=100).entries == b""


def test_an_entry_in_several_tables_counts_once() -> None:
    found = one([entry(BASE, 1), entry(BASE, 1), entry(BASE ^ 1, 2)], BASE, radius=2, max_read=100)
    assert found.entries == entry(BASE, 1) + entry(BASE ^ 1, 2)
    assert found.candidates == 3  # (entries read)


def test_expired_entries_do_not_count_and_their_buckets_are_reported() -> None:
    buckets = [
        entry(BASE, 1, seen_s=50) + entry(BASE ^ 1, 2, seen_s=150),
        entry(BASE ^ 3, 3, seen_s=200),
    ]
    found = one(buckets, BASE, radius=3, max_read=100, cutoff_s=100)
    assert (found.entries, found.candidates, found.expired) == (
        entry(BASE ^ 1, 2, seen_s=150) + entry(BASE ^ 3, 3, seen_s=200),
        2,
        (0,),
    )


def test_only_the_newest_entries_of_a_crowded_bucket_count() -> None:
    crowded = b"".join(entry(BASE, seq) for seq in range(1, 11))
    found = one([crowded], BASE, radius=0, max_read=4, limit=1)
    assert (found.entries, found.candidates, found.hot) == (entry(BASE, 7), 4, 1)
    assert ENTRY.itemsize == 18


def test_a_batch_gives_each_query_its_own_nearest() -> None:
    shared = entry(BASE ^ 1, 1) + entry(BASE ^ (1 << 40), 2)
    other = BASE ^ (0xFF << 8)
    simhashes = [BASE, BASE, other, BASE ^ (1 << 40)]
    gathered = gather([[shared], [], [shared, entry(other, 3)], [shared]], max_read=100)
    found = nearest(gathered, simhashes, radius=2, limit=1)
    assert [f.entries for f in found] == [
        entry(BASE ^ 1, 1),
        b"",
        entry(other, 3),
        entry(BASE ^ (1 << 40), 2),
    ]


def test_earlier_within_lists_each_earlier_fingerprint_within_the_radius() -> None:
    rng = random.Random(7)
    fps: list[int | None] = []
    for _ in range(300):  # some near copies of earlier ones, and some without a fingerprint
        roll = rng.random()
        if roll < 0.1:
            fps.append(None)
        elif roll < 0.5 and fps:
            base = rng.choice([f for f in fps if f is not None] or [BASE])
            fps.append(base ^ sum(1 << rng.randrange(64) for _ in range(rng.randrange(8))))
        else:
            fps.append(rng.getrandbits(64))
    expected = [
        b"".join(
            (j + 1).to_bytes(2, "big")
            for j, other in enumerate(fps[:i])
            if fp is not None and other is not None and (fp ^ other).bit_count() <= 4
        )
        for i, fp in enumerate(fps)
    ]
    assert earlier_within(fps, 4) == expected
    assert sum(map(len, expected)) > 100  # (the sample has pairs to find)
    assert earlier_within([BASE], 4) == [b""]
    assert earlier_within([None, 2**64 - 1, 2**64 - 2], 1) == [b"", b"", b"\x00\x02"]


def test_within_earlier_calls_lists_every_earlier_article_within_the_radius() -> None:
    rng = random.Random(9)
    earlier: list[int | None] = [rng.getrandbits(64) for _ in range(150)] + [None]
    fps: list[int | None] = [None]
    for _ in range(100):
        base = rng.choice(earlier[:150])
        assert base is not None
        fps.append(base ^ sum(1 << rng.randrange(64) for _ in range(rng.randrange(8))))
    expected = [
        b"".join(
            (j + 1).to_bytes(4, "big")
            for j, other in enumerate(earlier)
            if fp is not None and other is not None and (fp ^ other).bit_count() <= 4
        )
        for fp in fps
    ]
    assert within_earlier_calls(fps, earlier, 4) == expected
    assert sum(map(len, expected)) > 100  # (the sample has pairs to find)
    assert within_earlier_calls([BASE], [], 4) == [b""]
