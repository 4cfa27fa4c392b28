"""The faust stream app: glue between Kafka and the Decider. Thin on purpose.

At-least-once: a batch's verdicts are produced and acknowledged by Kafka before its events are
acked, and faust commits only acked offsets. A redelivered message gets its first verdict again
(the index keeps one record per id).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

import faust

from worker.decide import Decider, Decision
from worker.errors import IndexStoreError
from worker.fingerprint import Fingerprinter
from worker.index import RedisIndex
from worker.messages import Destination, Source, output_message
from worker.settings import Settings

log = logging.getLogger(__name__)
MAX_RETRY_DELAY_S = 5.0


def create_app(settings: Settings) -> faust.App:
    """The worker: the input topic in, verdicts out to the three output topics."""
    app = base_app(settings)
    source = input_topic(app, settings)
    sinks = {
        Destination.UNIQUE: app.topic(settings.unique_topic, key_type=bytes, value_type=bytes),
        Destination.DUPLICATES: app.topic(settings.duplicates_topic, key_type=bytes,
                                          value_type=bytes),
        Destination.REJECTED: app.topic(settings.rejected_topic, key_type=bytes,
                                        value_type=bytes),
    }

    @app.agent(source, name="dedup")
    async def dedup(stream: faust.StreamT[bytes]) -> None:
        index = RedisIndex.from_url(settings.redis_url, settings.namespace, settings.threshold)
        fingerprinter = Fingerprinter(settings.shingle_size, settings.chinese_tokens,
                                      settings.min_words)
        decider = Decider(fingerprinter, index, settings.max_message_bytes)
        try:
            async for events in batches(stream, settings):
                decisions = await _decide_with_retry(decider, [e.message.value for e in events])
                await _publish(events, decisions, sinks, settings)
        finally:
            await index.close()

    return app


def base_app(settings: Settings) -> faust.App:
    """A faust app with the worker's Kafka settings and no agent (benchmarks reuse it)."""
    return faust.App(
        settings.app_id,
        broker=[f"kafka://{host}" for host in settings.kafka_bootstrap.split(",")],
        key_serializer="raw",
        value_serializer="raw",
        autodiscover=False,
        web_enabled=False,
        store="memory://",
        topic_partitions=settings.input_partitions,
        topic_replication_factor=settings.replication_factor,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        producer_max_request_size=settings.output_max_bytes,
        broker_commit_interval=1.0,
        # A replica that dies is noticed after this long, and its partitions move to the others.
        broker_session_timeout=10.0,
    )


def input_topic(app: faust.App, settings: Settings) -> faust.TopicT:
    return app.topic(settings.input_topic, key_type=bytes, value_type=bytes,
                     partitions=settings.input_partitions)


def batches(stream: faust.StreamT[bytes], settings: Settings) -> AsyncIterator[Sequence[Any]]:
    """The stream's events in batches. Each batch's events are acked when the loop body that
    received it finishes, so an offset is committed only after its verdict was sent."""
    return cast(faust.Stream[bytes], stream).take_events(settings.batch_size,
                                                         within=settings.batch_wait_ms / 1000)


async def _decide_with_retry(decider: Decider, values: Sequence[bytes | None]) -> list[Decision]:
    """Wait out an unreachable or refusing index: the batch is retried, never skipped, and its
    offsets are not committed meanwhile. Retrying is safe: the index is idempotent per id."""
    delay = 0.1
    while True:
        try:
            return await decider.decide(values)
        except IndexStoreError as exc:
            log.warning("index failed (%s); retrying the batch in %.1f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RETRY_DELAY_S)


async def _publish(events: Sequence[Any], decisions: Sequence[Decision],
                   sinks: dict[Destination, faust.TopicT], settings: Settings) -> None:
    """Send every verdict and wait until Kafka has them all."""
    pending = []
    for event, decision in zip(events, decisions, strict=True):
        message = event.message
        source = Source(message.topic, message.partition, message.offset,
                        int(message.timestamp * 1000) if message.timestamp else None)
        out = output_message(decision, message.value, message.key, source, settings.threshold,
                             settings.max_message_bytes)
        # force=True: send now, not at commit time (faust's "attachments").
        pending.append(await sinks[out.destination].send(key=out.key, value=out.value,
                                                         force=True))
    await asyncio.gather(*pending)
