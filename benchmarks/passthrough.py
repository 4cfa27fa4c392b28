"""The do-nothing baseline for bench_end_to_end: consume the input topic, produce the same bytes
to the unique topic, commit. Same faust settings, batching and send-then-ack (Outbox) as the
worker."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from functools import partial
from typing import Any

import faust

from worker.settings import Settings
from worker.stream.app import base_app, batches, freeze_gc_once, input_topic
from worker.stream.outbox import Outbox


def create_passthrough(settings: Settings) -> faust.App:
    app = base_app(settings)
    source = input_topic(app, settings)
    sink = app.topic(settings.unique_topic, key_type=bytes, value_type=bytes)

    @app.agent(source, name="passthrough")
    async def forward(stream: faust.StreamT[bytes]) -> None:
        outbox = Outbox(stream)

        async def send(events: Sequence[Any]) -> None:
            pending = [
                await sink.send(key=e.message.key, value=e.message.value, force=True)
                for e in events
            ]
            await asyncio.gather(*pending)

        try:
            async for events in batches(stream, settings):
                await outbox.put(events, partial(send, events))
                freeze_gc_once()
            await outbox.flush()
        finally:
            outbox.abandon()

    return app


if __name__ == "__main__":
    settings = Settings.from_env()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    faust.Worker(
        create_passthrough(settings), loglevel=settings.log_level, loop=loop
    ).execute_from_commandline()
