"""The bucket cache's native store (worker.native): the entries of every bucket held in Rust,
and each fingerprint's nearest entries searched there in one pass per batch, with the results
of the numpy store (bucket_cache.py) and of nearest.nearest, entry for entry, without a Python
object per bucket (docs/performance.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.nearest import Nearest, Search
from worker.native import native_module


def native_store(addresses: BucketAddresses) -> NativeStore | None:
    """The native store for these addresses, or None when it is not installed."""
    native = native_module()
    if native is None or addresses.slot_count is None:
        return None
    return NativeStore(native.Buckets(addresses.slot_count, addresses.numbering()))


class NativeStore:
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

    def nearest(self, simhashes: Sequence[int], search: Search) -> list[Nearest]:
        rows = self._buckets.nearest(
            list(simhashes),
            search.search_radius,
            search.limit,
            search.max_read,
            search.cutoff_s,
        )
        return [Nearest(*row) for row in rows]
