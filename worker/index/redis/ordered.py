"""A connection of the index's own on which batches of commands go out one after another
without waiting for the replies of the batches before: Redis runs them in the order written,
and their replies are read back in that order. The worker then prepares and sends its next
batch while Redis runs the one before (RedisIndex.check_and_insert).

A connection that fails (or a read that is cancelled, leaving replies unread) is given up,
and every batch still waiting on it fails with it; the next batch opens a new one. So is an
idle one that the server closed meanwhile (a restart, a network cut while nothing was sent),
checked as redis-py's pool checks its connections before handing one out.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.connection import AbstractConnection


class _Line:
    """One connection and the reads still to be made on it, in order."""

    def __init__(self, connection: AbstractConnection) -> None:
        self.connection = connection
        self.broken = False
        self.last_read: asyncio.Future[None] | None = None

    async def give_up(self) -> None:
        self.broken = True
        await self.connection.disconnect(nowait=True)


class OrderedConnection:
    def __init__(self, client: aioredis.Redis) -> None:
        self._client = client
        self._line: _Line | None = None

    async def send(self, commands: Sequence[Sequence[Any]]) -> asyncio.Task[list[Any]]:
        """Write the commands now; returns the task that reads their replies (after those of
        every batch sent before): each reply's value, or the error Redis answered it with
        (redis.exceptions.ResponseError). A connection that fails raises
        redis.exceptions.ConnectionError, here or there; so does a batch sent before the
        reading of an earlier one was cancelled."""
        line = await self._connected()
        packed = line.connection.pack_commands(commands)
        before, mine = line.last_read, asyncio.get_running_loop().create_future()
        line.last_read = mine
        try:
            await line.connection.send_packed_command(packed, check_health=False)
        except BaseException:
            mine.set_result(None)
            await self._give_up(line)
            raise
        return asyncio.ensure_future(self._replies(line, len(commands), before, mine))

    async def _replies(
        self,
        line: _Line,
        count: int,
        before: asyncio.Future[None] | None,
        mine: asyncio.Future[None],
    ) -> list[Any]:
        try:
            if before is not None:
                await asyncio.shield(before)
            if line.broken:
                raise redis.exceptions.ConnectionError("the connection failed before the replies")
            replies: list[Any] = []
            for _ in range(count):
                try:
                    replies.append(await line.connection.read_response())
                except redis.exceptions.ResponseError as exc:  # (the stream stays in step)
                    replies.append(exc)
            return replies
        except BaseException:
            await self._give_up(line)
            raise
        finally:
            mine.set_result(None)

    async def settled(self) -> None:
        """Once the replies of every batch sent so far have been read."""
        if self._line is not None and self._line.last_read is not None:
            await asyncio.shield(self._line.last_read)

    async def _connected(self) -> _Line:
        line = self._line
        if line is not None and (line.last_read is None or line.last_read.done()):
            # (redis-py 8 renamed can_read_destructive, which 5 and 6 have alone, to can_read)
            can_read = getattr(line.connection, "can_read", None)
            check = can_read or line.connection.can_read_destructive
            try:  # (idle: nothing should be there to read)
                stale = bool(await check())
            except redis.exceptions.ConnectionError:
                stale = True
            if stale:
                await self._give_up(line)
        if self._line is None:
            line = _Line(self._client.connection_pool.make_connection())  # type: ignore[no-untyped-call]
            await line.connection.connect()  # type: ignore[no-untyped-call]
            self._line = line
        return self._line

    async def _give_up(self, line: _Line) -> None:
        if self._line is line:
            self._line = None
        await line.give_up()

    async def close(self) -> None:
        if self._line is not None:
            await self._give_up(self._line)
