"""Sealed band postings: the in-memory index's postings once there are many, in two numpy
arrays rather than a dict of lists (a posting there costs 16 bytes, against about 170 as a
Python list item under a dict key). Pure: no Redis.

The arrays hold the postings of every bucket, sorted by key; a key's postings keep the order
they were posted in, so a bucket is its sealed postings, then those not yet sealed. Sealed
postings do not change: the posting of an article taken out since stays until the next
`merged` drops it, and readers pass it over (its article is no longer live).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

# Sealed once the postings not yet sealed reach this many (about a million articles of 16
# bands): a read finds a bucket's lists in a dict faster than its run in the arrays, so an
# index of up to a million articles decides as fast as before; past that, each article costs
# far less memory. Each seal copies the sealed arrays once.
SEAL_POSTINGS = 1 << 24


@dataclass(frozen=True)
class Sealed:
    keys: np.ndarray  # uint64, sorted; a key's postings in the order they were posted
    seqs: np.ndarray  # int64: each posting's article, by its sequence number

    @classmethod
    def empty(cls) -> Sealed:
        return cls(np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64))

    @classmethod
    def of(cls, keys: Sequence[int], counts: Sequence[int], seqs: Sequence[int]) -> Sealed:
        """The postings of buckets `keys`, `counts[i]` under keys[i]: their numbers `seqs`,
        bucket after bucket, each oldest first."""
        repeated = np.repeat(np.array(keys, dtype=np.uint64), counts)
        # (a stable sort keeps each key's postings in the order they were posted)
        order = np.argsort(repeated, kind="stable")
        return cls(repeated[order], np.array(seqs, dtype=np.int64)[order])

    def __len__(self) -> int:
        return len(self.seqs)

    def merged(self, newer: Sealed, dead: set[int]) -> Sealed:
        """These postings, then `newer`'s after them under each key; without the postings of
        the articles numbered in `dead`."""
        keys, seqs = self.keys, self.seqs
        if dead:
            kept = ~np.isin(seqs, np.fromiter(dead, dtype=np.int64, count=len(dead)))
            keys, seqs = keys[kept], seqs[kept]
        at = np.searchsorted(keys, newer.keys, side="right")
        return Sealed(np.insert(keys, at, newer.keys), np.insert(seqs, at, newer.seqs))

    def runs(self, keys: list[int]) -> list[tuple[int, int, int]]:
        """Where those of `keys` that have postings here have them: (the key's place in
        `keys`, start, end), its postings seqs[start:end]."""
        # (one search for every bound, in plain lists: a read asks for a few keys at a time)
        bounds = self.keys.searchsorted(np.array([*keys, *(k + 1 for k in keys)], np.uint64))
        n, found = len(keys), bounds.tolist()
        return [(i, found[i], found[n + i]) for i in range(n) if found[i] < found[n + i]]
