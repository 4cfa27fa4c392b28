"""Publishing a batch's output while the next batch is decided, without giving up
at-least-once: a batch's input events are acked only after Kafka has acknowledged all of its
output (or, with exactly-once, never: the transaction that sends it commits its offsets), and
batches are published and acked one after another, in order (faust commits the
offsets of acked events)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import faust

Send = Callable[[], Awaitable[None]]  # sends a batch's output, returns once Kafka has it all


class Outbox:
    """At most one batch in flight: `put` waits for the previous batch (so its errors surface
    here, in the agent), then starts sending this one and returns. A batch that fails to go
    out is also reported to `on_failure` as soon as it fails, as no next batch may come to
    surface it."""

    def __init__(
        self,
        stream: faust.StreamT[Any],
        on_failure: Callable[[BaseException], None] | None = None,
        ack: bool = True,
    ) -> None:
        self._stream = stream
        self._on_failure = on_failure
        self._ack = ack  # False: the sends commit the offsets themselves (transactions)
        self._in_flight: asyncio.Future[None] | None = None

    async def put(self, events: Sequence[Any], send: Send) -> None:
        await self.flush()
        self._in_flight = asyncio.ensure_future(self._send_then_ack(events, send))
        self._in_flight.add_done_callback(self._report)

    def _report(self, done: asyncio.Future[None]) -> None:
        failure = None if done.cancelled() else done.exception()
        if failure is not None and self._on_failure is not None:
            self._on_failure(failure)

    async def flush(self) -> None:
        """Wait until the batch in flight is out and acked."""
        if self._in_flight is not None:
            in_flight, self._in_flight = self._in_flight, None
            await in_flight

    def abandon(self) -> None:
        """On shutdown: stop sending; the unacked events are delivered again to whoever
        consumes their partition next (replays of the same verdicts)."""
        if self._in_flight is not None:
            self._in_flight.cancel()

    async def _send_then_ack(self, events: Sequence[Any], send: Send) -> None:
        await send()
        if self._ack:
            for event in events:
                await self._stream.ack(event)
