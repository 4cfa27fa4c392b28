"""The contract every index keeps (the Redis index and the in-memory one), and the rule that
picks an article's match, which both apply (the Redis index in its Lua script; the contract
tests hold the two to the same answers)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from worker.layout.tables import Layout
from worker.model import Probe, Verdict
from worker.text.simhash import hamming


def duplicate_threshold(layout: Layout, threshold: int | None) -> int:
    """The duplicate threshold: at most the layout's (which is then the related threshold);
    None: the layout's."""
    if threshold is None:
        return layout.threshold
    if not 0 <= threshold <= layout.threshold:
        raise ValueError(
            f"threshold {threshold} must be 0..{layout.threshold}: the layout is "
            f"searched up to {layout.threshold} bits"
        )
    return threshold


class Index(Protocol):
    threshold: int

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Verdict]:
        """Decide each probe in order, as if one at a time, and index the originals.

        Each decision is atomic: no other caller can slip between its check and its insert.
        A probe whose id was decided before gets the same verdict again (replayed=True); if
        its text changed, the old article is removed first and the new one decided
        (replaced=True).
        """
        ...

    async def forget(self, ids: Sequence[str]) -> list[bool]:
        """Remove articles from the index (True for each id it held): they no longer match,
        and their ids may be used again."""
        ...

    async def expire(self, limit: int = 1000) -> int:
        """One step of reclaiming articles older than the retention window (none without
        one): looks at up to ~`limit` records and returns how many it removed. Expired
        articles stop matching at once; this frees their memory."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class Entry:
    """An indexed original, as a candidate match."""

    id: str
    fingerprint: int
    seq: int  # order of first sight in its index: 1 for the first original, then 2, ...
    seen_ms: int = 0  # when it was first seen (for expiry)
    verification: int | None = None


def closest(
    fingerprint: int,
    candidates: Iterable[Entry],
    threshold: int,
    exclude_id: str,
    verification: int | None = None,
    verify_threshold: int = -1,
) -> tuple[Entry, int] | None:
    """The candidate nearest to `fingerprint` within `threshold` bits, and its distance.
    With `verify_threshold` >= 0, only candidates whose verification fingerprint is within it
    of `verification` count.

    Ties go to the first seen (the lowest sequence number), so every index picks the same one.
    An article is never its own match.
    """
    best: tuple[int, int, Entry] | None = None
    for entry in candidates:
        if entry.id == exclude_id:
            continue
        d = hamming(fingerprint, entry.fingerprint)
        if verify_threshold >= 0 and (
            hamming(verification or 0, entry.verification or 0) > verify_threshold
        ):
            continue
        if d <= threshold and (best is None or (d, entry.seq) < best[:2]):
            best = (d, entry.seq, entry)
    return None if best is None else (best[2], best[0])
