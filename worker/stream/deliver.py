"""Sending a batch's verdicts: at-least-once through the worker's idempotent producer, or
exactly-once in the input partitions' transactions; then the metrics of what went out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

from aiokafka import AIOKafkaProducer, TopicPartition

from worker.model import Decision
from worker.pipeline.outputs import Outgoing, Source, output_messages
from worker.settings import Settings
from worker.stream.consumer import Batch, Input, Record
from worker.stream.kafka import output_topics, send_all
from worker.stream.metrics import Metrics
from worker.stream.transactions import Transactions

# Sends a batch's verdicts and returns once Kafka has them.
Deliver = Callable[[Batch, Sequence[Decision], Input], Awaitable[None]]


def observe(
    metrics: Metrics, consumer: Input, records: Sequence[Record], decisions: Sequence[Decision]
) -> None:
    metrics.record(decisions)
    now_ms = time.time() * 1000
    last: dict[TopicPartition, int] = {}
    for record in records:
        last[TopicPartition(record.topic, record.partition)] = record.offset
        if record.timestamp:
            metrics.latency.observe(max(0.0, now_ms - record.timestamp) / 1000)
    for tp, offset in last.items():
        end = consumer.end_offset(tp)
        if end is not None:
            metrics.lag.labels(str(tp.partition)).set(max(0, end - offset - 1))


def outputs(record: Record, decision: Decision, settings: Settings) -> list[Outgoing]:
    source = Source(record.topic, record.partition, record.offset, record.timestamp or None)
    return output_messages(
        decision,
        record.value,
        record.key,
        source,
        settings.max_message_bytes,
        threshold=settings.alert_threshold,
        related_threshold=settings.related_threshold,
    )


async def publish(
    batch: Batch,
    decisions: Sequence[Decision],
    consumer: Input,
    out: AIOKafkaProducer,
    settings: Settings,
    metrics: Metrics,
) -> None:
    """Send every verdict and wait until Kafka has them all."""
    topics = output_topics(settings)
    messages = (
        (topics[message.destination], message.key, message.value)
        for record, decision in zip(batch.records, decisions, strict=True)
        for message in outputs(record, decision, settings)
    )
    await asyncio.gather(*await send_all(out, messages))
    observe(metrics, consumer, batch.records, decisions)


async def publish_in_transactions(
    batch: Batch,
    decisions: Sequence[Decision],
    consumer: Input,
    transactions: Transactions,
    settings: Settings,
    metrics: Metrics,
) -> None:
    """Send every verdict with the batch's offsets, in transactions."""
    pairs = list(zip(batch.records, decisions, strict=True))
    items = [(r, outputs(r, d, settings)) for r, d in pairs]
    committed = {id(r) for r in await transactions.publish(batch.assignment, items)}
    kept = [(r, d) for r, d in pairs if id(r) in committed]
    observe(metrics, consumer, [r for r, _ in kept], [d for _, d in kept])
