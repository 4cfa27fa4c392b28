"""The do-nothing baseline for bench_end_to_end: consume the input topic, produce the same bytes
to the unique topic, commit. Same faust settings, batching, producer and send-then-ack (Outbox)
as the worker; with DEDUP_BENCH_FAUST_SEND=1, sends through faust's topics instead (what the
worker did before it sent through aiokafka's producer)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from functools import partial
from typing import Any

import faust
from aiokafka import AIOKafkaProducer

from worker.settings import Settings
from worker.stream.app import base_app, batches, freeze_gc_once, input_topic
from worker.stream.kafka import producer
from worker.stream.outbox import Outbox


def create_passthrough(settings: Settings) -> faust.App:
    app = base_app(settings)
    source = input_topic(app, settings)
    sink = app.topic(settings.unique_topic, key_type=bytes, value_type=bytes)
    faust_send = os.environ.get("DEDUP_BENCH_FAUST_SEND") == "1"

    @app.agent(source, name="passthrough")
    async def forward(stream: faust.StreamT[bytes]) -> None:
        outbox = Outbox(stream)

        async def send(out: AIOKafkaProducer, events: Sequence[Any]) -> None:
            if faust_send:
                pending = [
                    await sink.send(key=e.message.key, value=e.message.value, force=True)
                    for e in events
                ]
            else:
                pending = [
                    await out.send(settings.unique_topic, e.message.value, key=e.message.key)
                    for e in events
                ]
            await asyncio.gather(*pending)

        try:
            async with producer(settings, linger_ms=0, idempotent=True) as out:
                async for events in batches(stream, settings):
                    await outbox.put(events, partial(send, out, events))
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
