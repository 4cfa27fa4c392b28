"""What a worker reads of a band index before check_bands.lua decides a batch: the batch's
band buckets, the records and exact texts its guesses need (band_guesses.py), in four round
trips of MGETs, HMGETs and reads.lua's reads; of the articles its searches compare, those it
has neither read nor indexed itself before (band_known.py). First the index's count of calls
and the head of its log of calls (lua/guesses.lua), which the script checks the guesses
against: what other calls posted under or took out since, the rounds after the first
included, is in their entries of that log.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis.exceptions

from worker.index.redis import scripts
from worker.index.redis.band_guesses import Batch, BucketState, owner_of, searched, top_compared
from worker.index.redis.band_known import KnownCache
from worker.index.redis.band_layout import BandLayout
from worker.index.redis.bucket_reads import MGET_KEYS
from worker.index.redis.client import ERRORS, Client, translate
from worker.index.redis.format import pack_number
from worker.index.redis.keys import NamespaceKeys
from worker.index.redis.scripts import Script
from worker.model import Probe

HEAD = 25  # the bytes of a log entry's head (lua/guesses.lua, lua/reads.lua)


class BandReads:
    def __init__(
        self,
        client: Client,
        keys: NamespaceKeys,
        layout: BandLayout,
        *,
        retention_s: int,
        known: KnownCache,
    ) -> None:
        """`known`: the articles read before (shared by the reads on the primary and on a
        replica)."""
        self.client, self.keys, self.layout = client, keys, layout
        self.retention_s = retention_s
        self.known = known

    async def read(self, probes: Sequence[Probe]) -> Batch:
        """What the batch's guesses need."""
        sketches = list(dict.fromkeys(p.sketch for p in probes if searched(p) and p.sketch))
        where = dict(zip(sketches, self.layout.buckets_of(sketches), strict=True))
        buckets = list(dict.fromkeys(b for each in where.values() for b in each))
        batch, now_s = await self._first(probes, buckets)
        batch.where = where
        await self._second(batch)
        numbers: list[int] = []
        for each in where.values():
            states = [batch.buckets[b] for b in each]
            numbers += top_compared(states, self.layout.bands, batch.front)[0]
        self.known.seen_counter(batch.counter)
        await self.owners(batch, numbers)
        batch.cutoff_s = now_s - self.retention_s if self.retention_s else None
        return batch

    async def owners(self, batch: Batch, numbers: Sequence[int]) -> None:
        """The articles under `numbers` into `batch`: from those read before, else read. (What
        a number's article is does not change while it is indexed, so they may be read after
        the buckets: guesses.lua checks the guesses against what changed since.)"""
        wanted = list(dict.fromkeys(numbers))
        batch.owners.update(self.known.found(wanted))
        unread = [n for n in wanted if n not in batch.owners]
        await self._owners(batch, unread)
        for number in unread:
            known = owner_of(batch, number)
            if known is not None:
                self.known.keep(known)

    async def _first(
        self, probes: Sequence[Probe], buckets: list[tuple[bytes, bytes]]
    ) -> tuple[Batch, int]:
        """Redis's clock, the counters, the batch's records and exact texts, the buckets'
        group strings."""
        groups = list(dict.fromkeys(group for group, _ in buckets))
        ids = list(dict.fromkeys(p.id for p in probes))
        contents = list(dict.fromkeys(p.content_hash for p in probes))
        state_keys = [*self.keys.shared, self.keys.calls, self.keys.posts]
        commands: list[tuple[Any, ...]] = [
            self._reading("state", [*state_keys, self.keys.seq], contents),
            ("HMGET", self.keys.docs, *ids),
            *[("MGET", *groups[i : i + MGET_KEYS]) for i in range(0, len(groups), MGET_KEYS)],
        ]
        (since, head, now_s, counter, front, *firsts), records, *blobs = await self._round(commands)
        exact = {c: v.decode() for c, v in zip(contents, firsts, strict=True) if v}
        held = dict(zip(groups, [blob for reply in blobs for blob in reply], strict=True))
        states = {}
        for bucket in buckets:
            found, marked = self.layout.read(held.get(bucket[0]) or b"", bucket[1])
            states[bucket] = BucketState(found, marked, len(found))
        docs = {i: v for i, v in zip(ids, records, strict=True) if v is not None}
        batch = Batch(int(since), head, int(counter), int(front), None, states, docs, exact, {})
        return batch, int(now_s)

    async def _second(self, batch: Batch) -> None:
        """The newest postings of the buckets with strings of their own; the records of the
        exact texts' first articles."""
        own = [bucket for bucket, state in batch.buckets.items() if state.own]
        originals = [i for i in dict.fromkeys(batch.exact.values()) if i not in batch.docs]
        kept = self.layout.bands.newest + 1
        if not own and not originals:
            return
        size = str(kept * self.layout.posting)
        tails, held = await self._round(
            [
                self._reading("tails", [group + check for group, check in own], [size]),
                ("HMGET", self.keys.docs, *originals) if originals else ("GET", self.keys.seq),
            ]
        )
        for bucket, tail in zip(own, tails, strict=True):
            state = batch.buckets[bucket]
            state.found = (state.found + self.layout.numbers(tail))[-kept:]
        if originals:
            batch.docs.update({i: v for i, v in zip(originals, held, strict=True) if v})

    async def _owners(self, batch: Batch, numbers: list[int]) -> None:
        """The ids of `numbers` and their records (read here: a record passed through Lua is
        copied twice)."""
        if not numbers:
            return
        seqs = [pack_number(n) for n in numbers]
        [ids] = await self._round([self._reading("owners", self.keys.shared, seqs)])
        for n, raw in zip(numbers, ids, strict=True):
            batch.ids[n] = raw.decode() if raw else None
        wanted = [o for o in dict.fromkeys(batch.ids.values()) if o and o not in batch.docs]
        if wanted:
            [records] = await self._round([("HMGET", self.keys.docs, *wanted)])
            batch.docs.update({i: v for i, v in zip(wanted, records, strict=True) if v})

    @staticmethod
    def _reading(read: str, keys: Sequence[Any], args: Sequence[Any]) -> tuple[Any, ...]:
        """A call of reads.lua (read-only: a replica could take it)."""
        return ("EVALSHA_RO", scripts.sha(Script.READS), len(keys), *keys, read, *args)

    async def _round(self, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
        """The replies of `commands`, in one round trip."""
        try:
            return await self._send(commands)
        except redis.exceptions.NoScriptError:
            # First use, or a restart. The script's text, once: the node that runs it (a
            # replica, in a cluster any of them) keeps it for the calls by its SHA.
            return await self._send([_with_text(command) for command in commands])

    async def _send(self, commands: Sequence[tuple[Any, ...]]) -> list[Any]:
        try:
            async with self.client.pipeline(transaction=False) as pipe:
                for command in commands:
                    pipe.execute_command(*command)
                return list(await pipe.execute())
        except redis.exceptions.NoScriptError:
            raise
        except ERRORS as exc:
            raise translate(exc) from exc


def _with_text(command: tuple[Any, ...]) -> tuple[Any, ...]:
    """A call of reads.lua by its SHA, sent with the script's text instead."""
    if command[0] != "EVALSHA_RO":
        return command
    return ("EVAL_RO", scripts.source(Script.READS), *command[2:])
