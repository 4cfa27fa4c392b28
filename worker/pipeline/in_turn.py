"""Batches decided in the order they came, whatever fails on the way.

While all goes well, each batch's decision starts at once: the index sends a batch while the
one before still runs (RedisIndex.decide), and keeps them in order. When one fails, the
batches after it must not overtake it: a batch started after a failure waits until every
batch before it is settled, and a failed batch is tried again only once every batch before it
is settled. The index refuses a batch started before an earlier one failed (OutOfTurn, or
Redis's check of the calls' chain: guard.py), so such a batch fails too and goes again in its
turn. A batch tried again gets its first verdicts for what had already been applied (the
index is idempotent per message).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from worker.errors import (
    IndexFenced,
    IndexReset,
    IndexStoreError,
    IndexUnavailable,
    LayoutMismatch,
    OutOfTurn,
)

T = TypeVar("T")
MAX_RETRY_DELAY_S = 5.0
FIRST_RETRY_DELAY_S = 0.1
# Tries of a batch that the index refuses (a script error, a full Redis, a missing right), as
# against one it cannot be reached for (tried for as long as it takes).
REFUSED_TRIES = 5


@dataclass(eq=False)
class _Turn:
    settled: asyncio.Future[None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    # Failed, or waiting for the batches before it: a batch started now must wait for it.
    held: bool = False


class InTurn:
    """`on_retry(error, delay_s)` is told of each failed attempt before it is tried again."""

    def __init__(self, on_retry: Callable[[IndexStoreError, float], None]) -> None:
        self._on_retry = on_retry
        self._open: list[_Turn] = []  # the batches started and not yet settled, in order

    def start(
        self, decide: Callable[[], Awaitable[T]], wanted: Callable[[], bool]
    ) -> asyncio.Task[T | None]:
        """Decide a batch in its turn (`decide` makes one attempt); the task gives the result,
        or None once `wanted()` says, before a new attempt, that the batch is no longer
        wanted (its partitions were revoked). Raised: LayoutMismatch and IndexFenced at
        once, other refusals after REFUSED_TRIES attempts; an unreachable index is waited
        for as long as it takes."""
        turn = _Turn()
        earlier = list(self._open)
        self._open.append(turn)
        return asyncio.ensure_future(self._run(turn, earlier, decide, wanted))

    async def _run(
        self,
        turn: _Turn,
        earlier: list[_Turn],
        decide: Callable[[], Awaitable[T]],
        wanted: Callable[[], bool],
    ) -> T | None:
        try:
            if any(t.held for t in earlier):
                turn.held = True
                await _settled(earlier)
            delay, refused = FIRST_RETRY_DELAY_S, 0
            while True:
                # (decide() reaches the index's turn before it first waits: RedisIndex.decide)
                turn.held = False
                try:
                    return await decide()
                except (LayoutMismatch, IndexFenced):
                    raise
                except IndexStoreError as exc:
                    turn.held = True
                    if not isinstance(exc, IndexUnavailable | IndexReset):
                        refused += 1
                        if refused >= REFUSED_TRIES:
                            raise
                    await _settled(earlier)
                    if not wanted():
                        return None
                    # (out of turn, or the index taken in again: nothing to wait out)
                    pause = 0.0 if isinstance(exc, OutOfTurn | IndexReset) else delay
                    self._on_retry(exc, pause)
                    await asyncio.sleep(pause)
                    if pause:
                        delay = min(delay * 2, MAX_RETRY_DELAY_S)
        finally:
            self._open.remove(turn)
            turn.settled.set_result(None)


async def _settled(turns: list[_Turn]) -> None:
    for turn in turns:
        await asyncio.shield(turn.settled)
