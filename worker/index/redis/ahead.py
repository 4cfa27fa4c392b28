"""The batches a table index sends ahead: on its ordered connection (ordered.py), a batch's
calls go out while the batches before it still run (RedisIndex._decide_ahead). Kept here:
which batches are in flight (their call records, which a later batch's script takes the
articles of: check_and_insert.InOrder), and when to stop sending ahead for a while.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Sequence
from typing import Any

from worker.index.redis.check_and_insert import CallRecord
from worker.index.redis.client import ERRORS, translate
from worker.index.redis.nearest import BucketRead
from worker.index.redis.ordered import OrderedConnection
from worker.model import Kind, Verdict

# A batch sent while the one before is in flight reads a cache older by that batch, and the
# script compares every entry other workers inserted since in Lua, once per article; and
# other workers fill this one's waiting on Redis anyway. When a batch's script compared more
# than this many such entries per article, the batches of the next WAIT_S seconds wait for
# the one before and bring the cache up first.
OTHERS_ENTRIES_TO_WAIT = 20
WAIT_S = 5.0


class Ahead:
    def __init__(self, ordered: OrderedConnection) -> None:
        self.ordered = ordered
        # The calls of the batches sent whose sync (since.lua, after them) is not yet taken
        # in: what the cache may lack.
        self._in_flight: list[list[CallRecord]] = []
        self._wait_until = 0.0  # (time.monotonic()) until then, batches wait: WAIT_S

    def must_wait(self) -> bool:
        """Whether the next batch waits for those before and brings the cache up first: none
        is in flight, or other workers inserted much of late."""
        return not self._in_flight or time.monotonic() < self._wait_until

    def in_flight(self) -> list[CallRecord]:
        return [record for batch in self._in_flight for record in batch]

    async def send(
        self, commands: Sequence[tuple[Any, ...]], records: list[CallRecord]
    ) -> Awaitable[list[Any]]:
        """Send a batch's commands; returns their replies to wait for (await it at once: the
        batch is in flight until then)."""
        try:
            replies = await self.ordered.send(commands)
        except ERRORS as exc:
            raise translate(exc) from exc
        self._in_flight.append(records)
        return self._replies(replies, records)

    async def _replies(self, replies: Awaitable[list[Any]], records: list[CallRecord]) -> list[Any]:
        try:
            return await replies
        except ERRORS as exc:
            raise translate(exc) from exc
        finally:
            self._in_flight.remove(records)

    def watch(self, verdicts: Sequence[Verdict], reads: Sequence[BucketRead | None]) -> None:
        """Take note of how many entries the script compared beyond the worker's read (the
        ring's since the read: other workers' inserts)."""
        compared = [
            v.candidates - read.found.candidates
            for v, read in zip(verdicts, reads, strict=True)
            if read is not None and v.kind is not Kind.EXACT and not v.replayed
        ]
        if compared and min(compared) > OTHERS_ENTRIES_TO_WAIT:
            self._wait_until = time.monotonic() + WAIT_S
