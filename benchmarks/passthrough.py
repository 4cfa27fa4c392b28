"""faust's own path for bench_end_to_end: consume the input topic through a faust agent's
stream (batches of noack_take), produce the same bytes to the unique topic, ack, and let faust
commit; with DEDUP_BENCH_FAUST_SEND=1, it sends through faust's topics instead of an aiokafka
producer. The worker reads with aiokafka's consumer instead (worker/stream/consumer.py): this is
what that saves."""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import AsyncIterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any, cast

import faust
from aiokafka import AIOKafkaProducer

from worker.settings import Settings
from worker.stream.kafka import producer
from worker.stream.loop import freeze_gc_once
from worker.stream.outbox import Outbox


def base_app(settings: Settings) -> faust.App:
    """A faust app that reads the worker's input topic with faust's consumer."""
    return faust.App(
        settings.app_id,
        broker=[f"kafka://{host}" for host in settings.kafka_bootstrap.split(",")],
        key_serializer="raw",
        value_serializer="raw",
        autodiscover=False,
        web_enabled=False,
        store="memory://",
        datadir=str(Path(tempfile.gettempdir()) / f"dedup-worker-{settings.app_id}"),
        topic_partitions=settings.input_partitions,
        topic_replication_factor=settings.replication_factor,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        broker_commit_interval=1.0,
        broker_session_timeout=10.0,
    )


def batches(stream: faust.StreamT[bytes], settings: Settings) -> AsyncIterator[Sequence[Any]]:
    return cast(faust.Stream[bytes], stream).noack_take(
        settings.batch_size, within=settings.batch_wait_ms / 1000
    )


def create_passthrough(settings: Settings) -> faust.App:
    app = base_app(settings)
    source = app.topic(settings.input_topic, key_type=bytes, value_type=bytes)
    sink = app.topic(settings.unique_topic, key_type=bytes, value_type=bytes)
    faust_send = os.environ.get("DEDUP_BENCH_FAUST_SEND") == "1"

    @app.agent(source, name="passthrough")
    async def forward(stream: faust.StreamT[bytes]) -> None:
        async def ack(events: Sequence[Any]) -> None:
            for event in events:
                await stream.ack(event)

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
            await ack(events)

        outbox: Outbox[Sequence[Any]] = Outbox()
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
