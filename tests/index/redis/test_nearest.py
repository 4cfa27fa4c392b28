"""The worker-side comparison of bucket entries (no Redis)."""

from __future__ import annotations

from collections.abc import Sequence

from tests.support.factories import BASE, entry
from worker.index.redis.format import ENTRY
from worker.index.redis.nearest import Nearest, gather, nearest


def one(
    buckets: Sequence[bytes | None],
    fp: int,
    verify: int | None = None,
    *,
    max_read: int,
    cutoff_s: int | None = None,
    **options: int,
) -> Nearest:
    gathered = gather([buckets], max_read=max_read, cutoff_s=cutoff_s)
    [found] = nearest(gathered, [fp], [verify], cutoff_s=cutoff_s, **options)
    return found


def test_the_closest_within_the_radius_wins_and_ties_go_to_the_first_seen() -> None:
    buckets = [
        entry(BASE ^ 0b111, 1) + entry(BASE ^ 0b1, 5),
        None,
        entry(BASE ^ 0b10, 3),
        entry(BASE ^ (1 << 63), 9),
    ]
    found = one(buckets, BASE, radius=3, max_read=100)
    assert found.entry == entry(BASE ^ 0b10, 3)  # 1 bit, like seq 5 and seq 9, but seen first
    assert (found.candidates, found.hot, found.expired) == (4, 0, ())
    assert one(buckets, BASE ^ 0xFF00, radius=3, max_read=100).entry == b""


def test_verification_fingerprints_must_be_within_their_threshold() -> None:
    buckets = [entry(BASE ^ 1, 1, verification=0xFFFF) + entry(BASE ^ 0b11, 2, verification=0b111)]
    found = one(buckets, BASE, 0, radius=4, max_read=100, verify_threshold=3)
    assert found.entry == entry(BASE ^ 0b11, 2, verification=0b111)
    assert one(buckets, BASE, 0, radius=4, max_read=100, verify_threshold=2).entry == b""
    # A query without a verification fingerprint is not verified.
    assert one(buckets, BASE, None, radius=4, max_read=100, verify_threshold=2).entry == (
        entry(BASE ^ 1, 1, verification=0xFFFF)
    )


def test_expired_entries_do_not_match_and_their_buckets_are_reported() -> None:
    buckets = [
        entry(BASE, 1, seen_s=50) + entry(BASE ^ 1, 2, seen_s=150),
        entry(BASE ^ 3, 3, seen_s=200),
    ]
    found = one(buckets, BASE, radius=3, max_read=100, cutoff_s=100)
    assert (found.entry, found.candidates, found.expired) == (
        entry(BASE ^ 1, 2, seen_s=150),
        2,
        (0,),
    )


def test_only_the_newest_entries_of_a_crowded_bucket_count() -> None:
    crowded = b"".join(entry(BASE, seq) for seq in range(1, 11))
    found = one([crowded], BASE, radius=0, max_read=4)
    assert (found.entry, found.candidates, found.hot) == (entry(BASE, 7), 4, 1)
    assert ENTRY.itemsize == 24


def test_a_batch_gives_each_query_its_own_nearest() -> None:
    shared = entry(BASE ^ 1, 1) + entry(BASE ^ (1 << 40), 2)
    other = BASE ^ (0xFF << 8)
    fingerprints = [BASE, BASE, other, BASE ^ (1 << 40)]
    gathered = gather([[shared], [], [shared, entry(other, 3)], [shared]], max_read=100)
    found = nearest(gathered, fingerprints, [None] * 4, radius=2)
    assert [f.entry for f in found] == [
        entry(BASE ^ 1, 1),
        b"",
        entry(other, 3),
        entry(BASE ^ (1 << 40), 2),
    ]
    assert [f.candidates for f in found] == [2, 0, 3, 2]
