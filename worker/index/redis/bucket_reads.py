"""The first step of a check over SimHash tables: for each article with a table key, the
nearest entries of its probed buckets (the rule's candidates), and the sequence counter they
were read at (the snapshot). From the worker's copy of the buckets (bucket_cache.py), or
with MGETs when a table is too wide to copy. Expiry is judged by Redis's clock, as the
script judges it a moment later."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from worker.index.base import Rule
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.bucket_cache import BucketCache
from worker.index.redis.client import ERRORS, Client, Encoded, translate
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.nearest import BucketRead, Nearest, Search, gather, nearest
from worker.model import Probe

# Bucket names per MGET, about: enough to share the round trip, few enough that one MGET does
# not hold Redis's one thread up for long.
MGET_KEYS = 1500


class BucketReads:
    def __init__(
        self,
        client: Client,
        keys: NamespaceKeys,
        addresses: BucketAddresses,
        rule: Rule,
        *,
        max_bucket_read: int,
        retention_s: int,
        encodes: bool,
    ) -> None:
        """`encodes`: the client sends an MGET's bucket names as one encoded piece
        (client.packs_encoded)."""
        self.client = client
        self.keys = keys
        self.addresses = addresses
        self.rule = rule
        self.max_bucket_read = max_bucket_read
        self.retention_s = retention_s
        self.encodes = encodes

    def from_cache(
        self, cache: BucketCache, probes: Sequence[Probe], snapshot: int, now_s: int
    ) -> list[BucketRead | None]:
        """From the cache as it is (`snapshot`: its last number; `now_s`: Redis's clock when
        it was brought up to it). A probe whose buckets there are over `max_bucket_read` gets
        None: the cache keeps entries removed since, which may push live ones out of the
        newest, so the script reads Redis's buckets."""
        simhashes = [p.table_key for p in probes if p.table_key is not None]
        rule, cutoff = self.rule, self._cutoff(now_s)
        search = Search(rule.search_radius, rule.max_candidates, self.max_bucket_read, cutoff)
        found = cache.nearest(simhashes, search) if simhashes else []
        return self._reads(probes, [snapshot] * len(simhashes), found, cached=True)

    async def from_redis(self, probes: Sequence[Probe]) -> list[BucketRead | None]:
        """With MGETs of the probed buckets."""
        simhashes = [p.table_key for p in probes if p.table_key is not None]
        snapshots, buckets, now_s = await self._mget(simhashes)
        cutoff = self._cutoff(now_s)
        per = self.addresses.per_fingerprint
        gathered = gather(
            [buckets[i * per : (i + 1) * per] for i in range(len(simhashes))],
            max_read=self.max_bucket_read,
            cutoff_s=cutoff,
        )
        found = nearest(
            gathered,
            simhashes,
            radius=self.rule.search_radius,
            limit=self.rule.max_candidates,
            cutoff_s=cutoff,
        )
        return self._reads(probes, snapshots, found, cached=False)

    def _cutoff(self, now_s: int) -> int | None:
        return now_s - self.retention_s if self.retention_s else None

    def _reads(
        self,
        probes: Sequence[Probe],
        snapshots: Sequence[int],
        found: Sequence[Nearest],
        cached: bool,
    ) -> list[BucketRead | None]:
        simhashes = [p.table_key for p in probes if p.table_key is not None]
        reads = iter(
            [
                None if cached and one.hot else BucketRead(snapshot, one, self._expired(fp, one))
                for snapshot, fp, one in zip(snapshots, simhashes, found, strict=True)
            ]
        )
        return [next(reads) if p.table_key is not None else None for p in probes]

    async def _mget(self, simhashes: list[int]) -> tuple[list[int], list[bytes | None], int]:
        """Each fingerprint's snapshot, and the values of its probed buckets
        (`per_fingerprint` each, one fingerprint after another), read with one MGET per group
        of fingerprints; each MGET also reads the counter: the snapshot of its group. Then
        Redis's time (unix s)."""
        per = self.addresses.per_fingerprint
        group = max(1, MGET_KEYS // per)
        starts = range(0, len(simhashes), group)
        groups: list[list[Any]]
        if self.encodes:  # each MGET's bucket names in one encoded piece
            groups = [
                [Encoded(joined, per * min(group, len(simhashes) - start))]
                for joined, start in zip(
                    self.addresses.joined(simhashes, group), starts, strict=True
                )
            ]
        else:
            every = self.addresses.names(simhashes)
            groups = [every[start * per : (start + group) * per] for start in starts]
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for names in groups:
                    pipe.execute_command("MGET", self.keys.seq, *names)
                # (TIME as a script on the namespace's key: a cluster pipeline routes it)
                pipe.execute_command("EVAL", "return redis.call('TIME')", 1, self.keys.seq)
                *replies, (now_s, _) = await pipe.execute()
        except ERRORS as exc:
            raise translate(exc) from exc
        snapshots = [int(replies[i // group][0] or 0) for i in range(len(simhashes))]
        return snapshots, [value for reply in replies for value in reply[1:]], int(now_s)

    def _expired(self, fingerprint: int, found: Nearest) -> list[str]:
        """The names of the buckets that `found` says start with expired entries."""
        if not found.expired:
            return []
        names = self.addresses.names([fingerprint])
        return [names[i] for i in found.expired]
