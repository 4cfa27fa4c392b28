"""What `dedup-worker status` reports about one namespace of the Redis index."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import redis.asyncio as aioredis

from worker.errors import IndexStoreError
from worker.index.redis.client import ERRORS, Client
from worker.index.redis.format import ENTRY_BYTES, EXACT_PER_HASH, posting_bytes, sized_for
from worker.index.redis.keys import NamespaceKeys

SCAN_COUNT = 1000
OUTGROWN = 2


@dataclass(frozen=True)
class Node:
    """One Redis (or a Redis Cluster's primary) and its share of the namespace."""

    address: str  # host:port
    keys: int  # the namespace's keys it holds
    used_memory_bytes: int  # from INFO memory: every namespace


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
    nodes: tuple[Node, ...] = ()  # each primary, with the namespace's keys there

    @property
    def keys(self) -> int:
        return sum(node.keys for node in self.nodes)

    @property
    def entries_per_bucket(self) -> float:
        return self.entries / self.buckets if self.buckets else 0.0

    @property
    def sized_for(self) -> int | None:
        """The most articles the namespace was made for (DEDUP_EXPECTED_DOCS then), from the
        bits that name its exact hashes; None before the first worker started."""
        bits = self.layout.get("exact_groups")
        return sized_for(int(bits), EXACT_PER_HASH) if bits else None

    @property
    def outgrown(self) -> bool:
        """Whether it holds over OUTGROWN times that: its small hashes (and a band index's
        group strings) are then past the sizes Redis keeps compact, or near them."""
        return self.sized_for is not None and self.exact_texts > OUTGROWN * self.sized_for


async def read_status(client: Client, namespace: str) -> Status:
    """Counts from one SCAN over the namespace's keys (a few seconds per million keys): its
    records, the small hashes of ids and exact texts, and its buckets."""
    keys = NamespaceKeys(namespace)
    try:
        meta = await client.hgetall(keys.meta)
        records = await client.hlen(keys.docs)
        described = {_text(k): _text(v) for k, v in meta.items()}
        postings = _postings(keys, described)
        fields = {keys.ids.encode(): 0, keys.exact.encode(): 0}
        sizes: Counter[int] = Counter()
        largest = entries = 0
        batches: dict[int, list[bytes]] = {size: [] for size in postings.values()}
        hashes: dict[bytes, list[bytes]] = {prefix: [] for prefix in fields}
        by_node: Counter[str] = Counter()  # the namespace's keys by node
        async for key in client.scan_iter(match=f"{_escape(keys.prefix)}*", count=SCAN_COUNT):
            by_node[_node_of(client, key)] += 1
            for prefix, size in postings.items():
                if key.startswith(prefix):
                    batch = batches[size]
                    batch.append(key)
                    if len(batch) == SCAN_COUNT:
                        largest, entries = await _measure(
                            client, batch, size, sizes, largest, entries
                        )
                        batch.clear()
            for prefix, held in hashes.items():
                if key.startswith(prefix):
                    held.append(key)
                    if len(held) == SCAN_COUNT:
                        fields[prefix] += await _fields(client, held)
                        held.clear()
        for size, batch in batches.items():
            largest, entries = await _measure(client, batch, size, sizes, largest, entries)
        for prefix, held in hashes.items():
            fields[prefix] += await _fields(client, held)
        memory = await _used_memory(client)
    except ERRORS as exc:
        raise IndexStoreError(f"Redis refused the status read: {exc}") from exc
    nodes = tuple(
        Node(address, by_node[address], memory.get(address, 0))
        for address in sorted(memory.keys() | by_node.keys())
    )
    return Status(
        described,
        records,
        fields[keys.ids.encode()],
        fields[keys.exact.encode()],
        sum(sizes.values()),
        entries,
        largest,
        dict(sorted(sizes.items())),
        sum(memory.values()),
        nodes,
    )


def _postings(keys: NamespaceKeys, described: dict[str, str]) -> dict[bytes, int]:
    """The key prefixes of the namespace's posting strings, each with its posting's size:
    a band layout's group strings of band and line buckets (not dependents' lists nor the
    lines hash); the tables' buckets, whose keys start with the table number, and the group
    strings of their short lines' buckets."""
    lines = posting_bytes(int(described["groups"])) if "groups" in described else None
    if described.get("layout") == "bands":
        assert lines is not None  # (a band layout's meta record always has its groups)
        kinds = {b"b": lines, b"l": lines}
    else:
        kinds = {str(d).encode(): ENTRY_BYTES for d in range(10)}
        if lines is not None:
            kinds[b"l"] = lines
    return {keys.buckets.encode() + kind: size for kind, size in kinds.items()}


def _node_of(client: Client, key: bytes) -> str:
    """The address of the primary that holds `key`."""
    if isinstance(client, aioredis.RedisCluster):
        return str(client.nodes_manager.get_node_from_slot(client.keyslot(key)).name)
    return _address(client)


def _address(client: aioredis.Redis) -> str:
    kwargs = client.connection_pool.connection_kwargs
    return f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"


async def _used_memory(client: Client) -> dict[str, int]:
    """Each primary's used_memory, by address."""
    if isinstance(client, aioredis.RedisCluster):
        replies = await client.info("memory", target_nodes=aioredis.RedisCluster.PRIMARIES)
        return {name: int(info.get("used_memory", 0)) for name, info in sorted(replies.items())}
    info = await client.info("memory")
    return {_address(client): int(info["used_memory"])}


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


async def _fields(client: Client, hashes: list[bytes]) -> int:
    """The fields of every hash named."""
    if not hashes:
        return 0
    async with client.pipeline(transaction=False) as pipe:
        for key in hashes:
            pipe.hlen(key)
        return sum(map(int, await pipe.execute()))


def _escape(pattern: str) -> str:
    """A key prefix as a literal SCAN pattern (namespaces may not hold * ? [ ], but the hash
    tag's braces are fine; escape the glob characters all the same)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in pattern)
