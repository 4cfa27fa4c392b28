"""The verdict on one article, and the rule that picks its match. Pure: no Kafka, no Redis.

The Redis index applies the same rule inside its Lua script; the contract tests hold the two
to the same answers.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from worker.text.simhash import hamming


class Kind(StrEnum):
    UNIQUE = "unique"
    EXACT = "exact"  # same normalised text as an earlier article
    NEAR = "near"  # fingerprint within the threshold of an earlier article's
    RELATED = "related"  # not a duplicate, but within the related threshold: an original


@dataclass(frozen=True)
class Probe:
    """What the index is asked about one article."""

    id: str
    content_hash: bytes
    fingerprint: int | None
    verify: int | None = None  # the verification fingerprint, when the mode has one


@dataclass(frozen=True)
class Verdict:
    id: str
    kind: Kind
    fingerprint: int | None
    duplicate_of: str | None = None  # the earlier article it repeats (or, if related, is near)
    distance: int | None = None
    duplicate_of_fingerprint: int | None = None
    seen_at_ms: int = 0  # when the index first decided; the same on every replay
    replayed: bool = False  # True when the id had been decided before (a redelivery)
    candidates: int = 0  # bucket entries compared to decide (0 on a replay)
    hot_buckets: int = 0  # buckets that held more entries than the index reads
    replaced: bool = False  # the id was indexed with other text, which this one replaced

    @property
    def is_duplicate(self) -> bool:
        return self.kind in (Kind.EXACT, Kind.NEAR)


@dataclass(frozen=True)
class Entry:
    """An indexed original, as a candidate match."""

    id: str
    fingerprint: int
    seq: int  # order of first sight in its index: 1 for the first original, then 2, ...
    seen_ms: int = 0  # when it was first seen (for expiry)
    verify: int | None = None


def closest(
    fingerprint: int, candidates: Iterable[Entry], threshold: int, exclude_id: str,
    verify: int | None = None, verify_threshold: int = -1,
) -> tuple[Entry, int] | None:
    """The candidate nearest to `fingerprint` within `threshold` bits, and its distance.
    With `verify_threshold` >= 0, only candidates whose verification fingerprint is within it
    of `verify` count.

    Ties go to the first seen (the lowest sequence number), so every index picks the same one.
    An article is never its own match.
    """
    best: tuple[int, int, Entry] | None = None
    for entry in candidates:
        if entry.id == exclude_id:
            continue
        d = hamming(fingerprint, entry.fingerprint)
        if verify_threshold >= 0 and hamming(verify or 0, entry.verify or 0) > verify_threshold:
            continue
        if d <= threshold and (best is None or (d, entry.seq) < best[:2]):
            best = (d, entry.seq, entry)
    return None if best is None else (best[2], best[0])
