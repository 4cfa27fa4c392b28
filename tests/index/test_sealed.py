"""Sealed band postings (worker.index.sealed): each key's postings in the order posted, the
postings of articles taken out dropped by a merge."""

from __future__ import annotations

from worker.index.sealed import Sealed


def test_a_merge_keeps_each_keys_postings_in_order_and_drops_the_dead() -> None:
    old = Sealed.of([5, 3], [2, 1], [1, 2, 4])
    new = Sealed.of([5, 9], [2, 1], [7, 8, 6])
    merged = old.merged(new, dead={2})
    assert merged.keys.tolist() == [3, 5, 5, 5, 9]
    assert merged.seqs.tolist() == [4, 1, 7, 8, 6]
    assert merged.runs([4, 5, 9]) == [(1, 1, 4), (2, 4, 5)]
