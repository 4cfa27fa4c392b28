"""The contract every index keeps (the Redis index and the in-memory one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from worker.layout.tables import Layout
from worker.model import Probe, Verdict

DEFAULT_MAX_BUCKET_READ = 1000  # newest entries read per bucket; a bucket over it is "hot"


def check_thresholds(layout: Layout, threshold: int | None) -> int:
    """The duplicate threshold: at most the layout's (which is then the related threshold)."""
    if threshold is None:
        return layout.threshold
    if not 0 <= threshold <= layout.threshold:
        raise ValueError(f"threshold {threshold} must be 0..{layout.threshold}: the layout is "
                         f"searched up to {layout.threshold} bits")
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
