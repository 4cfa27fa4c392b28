"""What `dedup-worker status` reports about one namespace of the Redis index."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import redis.exceptions

from worker.errors import IndexStoreError
from worker.index.redis.client import Client
from worker.index.redis.format import ENTRY_BYTES, posting_bytes
from worker.index.redis.keys import NamespaceKeys

SCAN_COUNT = 1000


@dataclass(frozen=True)
class Status:
    layout: dict[str, str]  # the meta record: layout, thresholds, tables ({} if none yet)
    records: int  # ids with a verdict (originals and duplicates)
    originals: int  # articles in the buckets
    exact_texts: int  # distinct normalised texts indexed
    buckets: int
    entries: int
    largest_bucket: int  # entries
    bucket_sizes: dict[int, int]  # entries per bucket, as powers of two: upper bound -> buckets
    redis_memory_bytes: int  # the whole Redis (every namespace), from INFO memory

    @property
    def entries_per_bucket(self) -> float:
        return self.entries / self.buckets if self.buckets else 0.0


async def read_status(client: Client, namespace: str) -> Status:
    """Counts from the namespace's hashes, and one SCAN over its buckets (a few seconds per
    million buckets)."""
    keys = NamespaceKeys(namespace)
    try:
        meta = await client.hgetall(keys.meta)
        records = await client.hlen(keys.docs)
        originals = await client.hlen(keys.ids)
        exact = await client.hlen(keys.exact)
        sizes: Counter[int] = Counter()
        largest = entries = 0
        batch: list[bytes] = []
        # (band layouts: the group strings of band and line buckets, not dependents' lists
        # nor the lines hash)
        described = {_text(k): _text(v) for k, v in meta.items()}
        bands = described.get("layout") == "bands"
        pattern = f"{_escape(keys.buckets)}{'[bl]' if bands else ''}*"
        size = posting_bytes(int(described["groups"])) if bands else ENTRY_BYTES
        async for key in client.scan_iter(match=pattern, count=SCAN_COUNT):
            batch.append(key)
            if len(batch) == SCAN_COUNT:
                largest, entries = await _measure(client, batch, size, sizes, largest, entries)
                batch = []
        largest, entries = await _measure(client, batch, size, sizes, largest, entries)
        info = await client.info("memory")
    except redis.exceptions.RedisError as exc:
        raise IndexStoreError(f"Redis refused the status read: {exc}") from exc
    # One Redis answers its own figures; a cluster client, one set per node.
    memory = info.get("used_memory") or sum(
        node.get("used_memory", 0) for node in info.values() if isinstance(node, dict)
    )
    return Status(
        described,
        records,
        originals,
        exact,
        sum(sizes.values()),
        entries,
        largest,
        dict(sorted(sizes.items())),
        int(memory),
    )


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


async def _measure(
    client: Client,
    batch: list[bytes],
    size: int,
    sizes: Counter[int],
    largest: int,
    entries: int,
) -> tuple[int, int]:
    if not batch:
        return largest, entries
    async with client.pipeline(transaction=False) as pipe:
        for key in batch:
            pipe.strlen(key)
        lengths = await pipe.execute()
    for length in lengths:
        n = int(length) // size
        sizes[1 << max(n - 1, 0).bit_length()] += 1  # bucket sizes up to 1, 2, 4, 8, ...
        largest = max(largest, n)
        entries += n
    return largest, entries


def _escape(pattern: str) -> str:
    """A key prefix as a literal SCAN pattern (namespaces may not hold * ? [ ], but the hash
    tag's braces are fine; escape the glob characters all the same)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in pattern)
