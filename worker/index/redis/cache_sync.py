"""The worker's bucket cache (bucket_cache.py) kept in step with the index in Redis: since.lua
looks at the ring of recent inserts from the cache's last entry on, and its reply is taken in
here; when the cache has fallen behind the ring, or the index lost writes the cache had seen,
the cache is filled again from every bucket of one table."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from worker.index.redis import scripts
from worker.index.redis.addresses import BucketAddresses
from worker.index.redis.bucket_cache import BucketCache
from worker.index.redis.client import ERRORS, Client, translate
from worker.index.redis.format import RING_CHECK, pack_number, ring_offset
from worker.index.redis.keys import NamespaceKeys


class CacheSync:
    def __init__(
        self,
        client: Client,
        keys: NamespaceKeys,
        addresses: BucketAddresses,
        *,
        native: bool,
        on_rolled_back: Callable[[], None],
    ) -> None:
        """`on_rolled_back` is told when a sync finds that the index lost writes the cache
        had seen (before the cache reloads)."""
        self.cache = BucketCache(addresses, native=native)
        self.client, self.keys = client, keys
        self.on_rolled_back = on_rolled_back
        whole_table = addresses.whole_table()  # what a reload reads
        assert whole_table is not None  # (BucketCache takes only tables narrow enough)
        self.whole_table = whole_table
        self.now_s = 0  # Redis's clock (unix s) at the last sync
        # Reloads so far: a sync sent before the last reload is of the cache before it.
        self.reloads = 0

    def since_call(self, epoch: str) -> list[Any]:
        """since.lua's arguments: a sync from the cache's last entry on."""
        return scripts.since_call(self.keys, epoch, self.cache.last, self.cache.last_entry)

    async def take_in(self, reply: list[Any], reloads: int) -> None:
        """since.lua's reply into the cache (a sync sent before the cache last reloaded, at
        `reloads`, is not acted on)."""
        if reloads != self.reloads:
            return
        self.now_s = int(reply[1])
        if len(reply) == 3:
            self.cache.add(reply[2], int(reply[0]))
            return
        if reply[3] == b"rolled back":
            self.on_rolled_back()
        await self.reload()

    async def reload(self) -> None:
        """Fill the cache from every bucket of one table (one MGET with the counter: one
        snapshot), and note the ring's entry of that number."""
        self.reloads += 1
        try:
            values = await self.client.execute_command("MGET", self.keys.seq, *self.whole_table)
            last = int(values[0] or 0)
            at = ring_offset(last)
            entry = await self.client.getrange(self.keys.recent, at, at + RING_CHECK - 1)
        except ERRORS as exc:
            raise translate(exc) from exc
        assert isinstance(entry, bytes)  # (the client does not decode)
        if last == 0 or entry[8:RING_CHECK] != pack_number(last):
            entry = b""  # (moved on already: the next sync finds more, or reloads)
        self.cache.reset(b"".join(filter(None, values[1:])), last, entry)
