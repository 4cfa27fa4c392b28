"""The worker-side search of bucket entries (no Redis): each article's nearest candidates."""

from __future__ import annotations

from collections.abc import Sequence

from tests.support.factories import BASE, entry
from worker.index.redis.format import ENTRY
from worker.index.redis.nearest import Nearest, gather, nearest


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
    assert ENTRY.itemsize == 16


def test_a_batch_gives_each_query_its_own_nearest() -> None:
    shared = entry(BASE ^ 1, 1) + entry(BASE ^ (1 << 40), 2)
    other = BASE ^ (0xFF << 8)
    fingerprints = [BASE, BASE, other, BASE ^ (1 << 40)]
    gathered = gather([[shared], [], [shared, entry(other, 3)], [shared]], max_read=100)
    found = nearest(gathered, fingerprints, radius=2, limit=1)
    assert [f.entries for f in found] == [
        entry(BASE ^ 1, 1),
        b"",
        entry(other, 3),
        entry(BASE ^ (1 << 40), 2),
    ]
