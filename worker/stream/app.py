"""The faust stream app: glue between Kafka and the Pipeline. Thin on purpose.

At-least-once: a batch's verdicts are produced and acknowledged by Kafka before its events are
acked (outbox.py, which sends them while the next batch is decided), and faust commits only
acked offsets. A redelivered message gets its first verdict again (the index keeps one record
per id). A batch that cannot be decided or published stops the worker at once (stop_worker):
never skipped, it is redelivered to the worker that takes the partitions over. Exactly-once:
the batch's output and offsets go out in Kafka transactions instead (transactions.py).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AsyncExitStack
from functools import cache, partial
from pathlib import Path
from typing import Any, NoReturn, cast

import faust
from aiokafka import AIOKafkaProducer

from worker import wiring
from worker.errors import IndexStoreError, IndexUnavailable, LayoutMismatch
from worker.model import Decision
from worker.pipeline.outputs import Outgoing, Source, output_messages
from worker.pipeline.pipeline import Pipeline
from worker.settings import Settings
from worker.stream.health import Health
from worker.stream.kafka import output_topics, producer, ssl_context
from worker.stream.metrics import Metrics, TimedIndex
from worker.stream.outbox import Outbox
from worker.stream.transactions import Transactions

log = logging.getLogger(__name__)
MAX_RETRY_DELAY_S = 5.0
# Tries of a batch that the index refuses (a script error, a full Redis, a missing right), as
# against one it cannot be reached for (retried for as long as it takes); then the worker stops.
REFUSED_TRIES = 5
EXIT_STOPPED = 70  # (EX_SOFTWARE) the exit status of a worker stopped by stop_worker
SWEEP_INTERVAL_S = 1.0  # with a retention window: one expiry sweep step this often
SWEEP_STEP = 1000  # records looked at per step (one short Lua call)
# Sends a batch's verdicts (events, decisions) and returns once Kafka has them.
Deliver = Callable[[Sequence[Any], Sequence[Decision]], Awaitable[None]]


def create_app(settings: Settings, metrics: Metrics | None = None) -> faust.App:
    """The worker: the input topic in, verdicts out to the three output topics; metrics and
    health on settings.http_port (0: off)."""
    metrics = metrics or Metrics()
    app = base_app(settings)
    source = input_topic(app, settings)

    transactions = None
    if settings.exactly_once:
        transactions = Transactions(settings, lambda: app.consumer_generation_id)

        @app.on_partitions_revoked.connect
        async def end_transactions(sender: Any, /, *args: Any, **kwargs: Any) -> None:
            await transactions.revoke()

    @app.agent(source, name="dedup")
    async def dedup(stream: faust.StreamT[bytes]) -> None:
        fingerprints = wiring.fingerprinter(settings)
        shared = wiring.redis_index(settings, fingerprints, metrics.index_reset)
        metrics.cached_entries.set_function(lambda: shared.cached_entries)
        index = TimedIndex(shared, metrics)
        pipeline = wiring.pipeline(settings, index, fingerprints)
        outbox = Outbox(stream, on_failure=stop_worker, ack=transactions is None)
        try:
            async with AsyncExitStack() as resources:
                deliver: Deliver
                if transactions is None:
                    # A plain aiokafka producer, not faust's topics: fewer Python calls per
                    # message (docs/performance.md).
                    out = await resources.enter_async_context(
                        producer(settings, linger_ms=0, idempotent=True)
                    )
                    deliver = partial(_publish, out=out, settings=settings, metrics=metrics)
                else:
                    deliver = partial(
                        _commit, transactions=transactions, settings=settings, metrics=metrics
                    )
                async for events in batches(stream, settings):
                    with metrics.batch_seconds.time():
                        values = [e.message.value for e in events]
                        positions = [(e.message.partition, e.message.offset) for e in events]
                        decisions = await _run_with_retry(pipeline, values, positions, metrics)
                    await outbox.put(events, partial(deliver, events, decisions))
                    freeze_gc_once()
                await outbox.flush()
        except Exception as exc:  # (a rebalance cancels: not an Exception)
            stop_worker(exc)
        finally:
            outbox.abandon()
            await index.close()
            if transactions is not None:
                await transactions.close()

    if settings.retention_s:
        sweeper = _index(settings, metrics)

        async def sweep() -> None:
            """Reclaim expired articles; every replica takes steps of one shared pass."""
            try:
                await sweeper.expire(SWEEP_STEP)
            except IndexStoreError as exc:
                log.warning("expiry sweep failed (%s); the next step retries", exc)

        app.timer(SWEEP_INTERVAL_S)(sweep)

    if settings.http_port:
        health = Health(settings, metrics)
        app.task(health.start)  # once per worker process, at start

        @app.on_before_shutdown.connect
        async def stop_health(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
            await health.stop()

    return app


def run_worker(
    settings: Settings, loop: asyncio.AbstractEventLoop, logging_config: dict[str, Any]
) -> None:
    """Run the worker in this process until it is stopped (SIGTERM, Ctrl-C)."""
    faust.Worker(
        create_app(settings), loglevel=settings.log_level, logging_config=logging_config, loop=loop
    ).execute_from_commandline()


def _index(settings: Settings, metrics: Metrics) -> TimedIndex:
    return TimedIndex(wiring.redis_index(settings, on_reset=metrics.index_reset), metrics)


def base_app(settings: Settings) -> faust.App:
    """A faust app with the worker's Kafka settings and no agent (benchmarks reuse it)."""
    return faust.App(
        settings.app_id,
        broker=[f"kafka://{host}" for host in settings.kafka_bootstrap.split(",")],
        broker_credentials=_credentials(settings),
        key_serializer="raw",
        value_serializer="raw",
        autodiscover=False,
        web_enabled=False,
        store="memory://",
        # faust makes a data folder even with nothing to keep in it (the tables are in memory):
        # in the temporary directory, which any user may write (faust makes only its last
        # part), not in the working directory.
        datadir=str(Path(tempfile.gettempdir()) / f"dedup-worker-{settings.app_id}"),
        topic_partitions=settings.input_partitions,
        topic_replication_factor=settings.replication_factor,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        producer_max_request_size=settings.output_max_bytes,
        broker_commit_interval=1.0,
        # Exactly-once: no event is acked (transactions commit the offsets), so nothing to wait
        # for at a rebalance, and faust's "has not committed" warning does not apply.
        stream_wait_empty=not settings.exactly_once,
        broker_commit_livelock_soft_timeout=float("inf") if settings.exactly_once else 300.0,
        # A replica that dies is noticed after this long, and its partitions move to the others.
        broker_session_timeout=10.0,
    )


def _credentials(settings: Settings) -> faust.types.auth.CredentialsT | None:
    context = ssl_context(settings) if settings.kafka_uses_ssl else None
    if settings.kafka_uses_sasl:
        return faust.SASLCredentials(
            username=settings.kafka_username,
            password=settings.kafka_password,
            mechanism=settings.kafka_sasl_mechanism,
            ssl_context=context,
        )
    return faust.SSLCredentials(context) if context is not None else None


def input_topic(app: faust.App, settings: Settings) -> faust.TopicT:
    return app.topic(
        settings.input_topic, key_type=bytes, value_type=bytes, partitions=settings.input_partitions
    )


@cache  # later calls do nothing (gc.get_freeze_count() would walk every frozen object)
def freeze_gc_once() -> None:
    """After the first batch, move every object alive (the app, clients, tables: they live as
    long as the process) out of the garbage collector's sight: full collections re-scanned
    them all, pausing the worker for tens of milliseconds (docs/performance.md)."""
    gc.collect()
    gc.freeze()


def batches(stream: faust.StreamT[bytes], settings: Settings) -> AsyncIterator[Sequence[Any]]:
    """The stream's events in batches, not acked: Outbox acks them once their output is out."""
    return cast(faust.Stream[bytes], stream).noack_take(
        settings.batch_size, within=settings.batch_wait_ms / 1000
    )


def stop_worker(exc: BaseException) -> NoReturn:
    """End the process now, committing nothing more. A worker must not go on past a batch it
    could not decide or publish, and a graceful stop is no safer: faust could commit past the
    batch's unacked messages at the head of a partition, and acks what reaches the stream after
    its agent has stopped. Whatever was not committed is redelivered, and the index replays
    the verdicts it had already decided."""
    log.critical(
        "the worker stops (exit status %d): %s: %s; uncommitted messages are redelivered to the "
        "worker that takes its partitions",
        EXIT_STOPPED,
        type(exc).__name__,
        exc,
        exc_info=exc,
    )
    logging.shutdown()
    os._exit(EXIT_STOPPED)


async def _run_with_retry(
    pipeline: Pipeline,
    values: Sequence[bytes | None],
    positions: Sequence[tuple[int, int]] | None,
    metrics: Metrics,
) -> list[Decision]:
    """Wait out an unreachable index: the batch is retried, never skipped, and its offsets are
    not committed meanwhile (retrying is safe: the index is idempotent per id). An index that
    refuses the batch is tried REFUSED_TRIES times, and one of another layout not again: the
    error is raised (the worker stops)."""
    delay = 0.1
    refused = 0
    while True:
        try:
            return await pipeline.run(values, positions)
        except LayoutMismatch:
            raise
        except IndexStoreError as exc:
            if not isinstance(exc, IndexUnavailable):
                refused += 1
                if refused >= REFUSED_TRIES:
                    raise
            metrics.index_retries.inc()
            log.warning("index failed (%s); retrying the batch in %.1f s", exc, delay)
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_RETRY_DELAY_S)


def _observe(metrics: Metrics, events: Sequence[Any], decisions: Sequence[Decision]) -> None:
    metrics.record(decisions)
    now = time.time()
    last: dict[Any, int] = {}
    for event in events:
        message = event.message
        last[message.tp] = message.offset
        if message.timestamp:
            metrics.latency.observe(max(0.0, now - message.timestamp))
    consumer = events[0].app.consumer if events else None
    for tp, offset in last.items():
        end = consumer.highwater(tp) if consumer is not None else None
        if end is not None:
            metrics.lag.labels(str(tp.partition)).set(max(0, end - offset - 1))


def _outputs(event: Any, decision: Decision, settings: Settings) -> list[Outgoing]:
    message = event.message
    source = Source(
        message.topic,
        message.partition,
        message.offset,
        int(message.timestamp * 1000) if message.timestamp else None,
    )
    return output_messages(
        decision,
        message.value,
        message.key,
        source,
        settings.max_message_bytes,
        threshold=settings.threshold,
        related_threshold=settings.related_threshold,
    )


async def _publish(
    events: Sequence[Any],
    decisions: Sequence[Decision],
    out: AIOKafkaProducer,
    settings: Settings,
    metrics: Metrics,
) -> None:
    """Send every verdict and wait until Kafka has them all."""
    topics = output_topics(settings)
    pending = [
        await out.send(topics[message.destination], message.value, key=message.key)
        for event, decision in zip(events, decisions, strict=True)
        for message in _outputs(event, decision, settings)
    ]
    await asyncio.gather(*pending)
    _observe(metrics, events, decisions)


async def _commit(
    events: Sequence[Any],
    decisions: Sequence[Decision],
    transactions: Transactions,
    settings: Settings,
    metrics: Metrics,
) -> None:
    """Send every verdict with the batch's offsets, in transactions."""
    pairs = list(zip(events, decisions, strict=True))
    committed = {
        id(e) for e in await transactions.publish([(e, _outputs(e, d, settings)) for e, d in pairs])
    }
    kept = [(e, d) for e, d in pairs if id(e) in committed]
    _observe(metrics, [e for e, _ in kept], [d for _, d in kept])
