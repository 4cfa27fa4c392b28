"""The contract every index keeps (the Redis index and the in-memory one)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from worker.verdict import IdConflict, Probe, Verdict

Outcome = Verdict | IdConflict
DEFAULT_MAX_BUCKET_READ = 1000  # newest entries read per bucket; a bucket over it is "hot"


class Index(Protocol):
    threshold: int

    async def check_and_insert(self, probes: Sequence[Probe]) -> list[Outcome]:
        """Decide each probe in order, as if one at a time, and index the originals.

        Each decision is atomic: no other caller can slip between its check and its insert.
        A probe whose id was decided before gets the same verdict again (replayed=True).
        """
        ...

    async def close(self) -> None: ...
