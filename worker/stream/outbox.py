"""Publishing a batch's output while the next batch is decided, without giving up
at-least-once: a batch is reported `delivered` (its offsets may then be committed) only after
Kafka has acknowledged all of its output, and batches are published and reported one after
another, in order. With exactly-once nothing is reported: the transaction that sends a batch
commits its offsets."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

Send = Callable[[], Awaitable[None]]  # sends a batch's output, returns once Kafka has it all
T = TypeVar("T")


class Outbox(Generic[T]):
    """At most one batch in flight: `put` waits for the previous batch (so its errors surface
    here, in the caller), then starts sending this one and returns. A batch that fails to go
    out is also reported to `on_failure` as soon as it fails, as no next batch may come to
    surface it."""

    def __init__(
        self,
        on_failure: Callable[[BaseException], None] | None = None,
        delivered: Callable[[T], None] | None = None,
    ) -> None:
        self._on_failure = on_failure
        self._delivered = delivered
        self._in_flight: asyncio.Future[None] | None = None

    async def put(self, batch: T, send: Send) -> None:
        await self.flush()
        self._in_flight = asyncio.ensure_future(self._send(batch, send))
        self._in_flight.add_done_callback(self._report)

    def _report(self, done: asyncio.Future[None]) -> None:
        failure = None if done.cancelled() else done.exception()
        if failure is not None and self._on_failure is not None:
            self._on_failure(failure)

    async def flush(self) -> None:
        """Wait until the batch in flight is out and reported."""
        if self._in_flight is not None:
            in_flight, self._in_flight = self._in_flight, None
            await in_flight

    def abandon(self) -> None:
        """On shutdown: stop sending; what was not reported delivered is redelivered to
        whoever consumes its partition next (replays of the same verdicts)."""
        if self._in_flight is not None:
            self._in_flight.cancel()

    async def _send(self, batch: T, send: Send) -> None:
        await send()
        if self._delivered is not None:
            self._delivered(batch)
