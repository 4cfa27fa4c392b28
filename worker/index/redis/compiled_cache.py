"""The bucket cache's compiled store (worker.native): the entries of every bucket held in Rust,
and each fingerprint's nearest entries searched there in one pass per batch, with the results
of the numpy store (bucket_cache.py) and of nearest.nearest, entry for entry, without a Python
object per bucket (docs/performance.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.nearest import Nearest, Search
from worker.native import kernels


def compiled_store(addresses: BucketAddresses) -> CompiledStore | None:
    """The compiled store for these addresses, or None when it is not installed."""
    native = kernels()
    if native is None or addresses.slot_count is None:
        return None
    return CompiledStore(native.Buckets(addresses.slot_count, addresses.numbering()))


class CompiledStore:
    def __init__(self, buckets: Any) -> None:
        self._buckets = buckets  # dedup_native.Buckets, which numbers the buckets as addresses

    @property
    def entries(self) -> int:
        count: int = self._buckets.entries
        return count

    def clear(self) -> None:
        self._buckets.clear()

    def add(self, live: np.ndarray) -> None:
        self._buckets.add(live.tobytes())

    def bucket(self, slot: int) -> bytes | None:
        blob: bytes | None = self._buckets.bucket(slot)
        return blob

    def nearest(self, fingerprints: Sequence[int], search: Search) -> list[Nearest]:
        rows = self._buckets.nearest(
            list(fingerprints),
            search.radius,
            search.limit,
            search.max_read,
            search.cutoff_s,
        )
        return [Nearest(*row) for row in rows]
