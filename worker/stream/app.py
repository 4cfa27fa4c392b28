"""The worker process: faust runs its life; a loop reads batches from the input topic
(consumer.py), decides them (the Pipeline) and publishes the verdicts. Thin on purpose.

At-least-once: a batch's verdicts are produced and acknowledged by Kafka before its offsets
may be committed (outbox.py, which sends them while the next batch is decided). A redelivered
message gets its first verdict again (the index keeps one record per id). A batch that cannot
be decided or published stops the worker at once (stop_worker): never skipped, it is
redelivered to the worker that takes the partitions over. Exactly-once: the batch's output
and offsets go out in Kafka transactions instead (transactions.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import tempfile
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any, NoReturn

import faust
from faust.app.base import BootStrategy

from worker import wiring
from worker.errors import IndexStoreError
from worker.model import Decision
from worker.pipeline.pipeline import Prepared
from worker.settings import Settings
from worker.stream import expiry
from worker.stream.consumer import Batch, Input
from worker.stream.deliver import Deliver, publish, publish_in_transactions
from worker.stream.health import Health
from worker.stream.kafka import producer
from worker.stream.loop import run_batches
from worker.stream.metrics import Metrics, TimedIndex
from worker.stream.outbox import Outbox
from worker.stream.transactions import Transactions

log = logging.getLogger(__name__)
EXIT_STOPPED = 70  # (EX_SOFTWARE) the exit status of a worker stopped by stop_worker
STOP_TIMEOUT_S = 20.0  # a stop waits this long for the batch being decided to go out
Ahead = tuple[Batch, Prepared]
Deciding = tuple[Batch, "asyncio.Future[list[Decision] | None]"]


class _Boot(BootStrategy):
    enable_kafka = False  # the worker's Kafka clients are its own (consumer.py, kafka.py)


class WorkerApp(faust.App):
    """faust runs the worker's life (start, signals, tasks, timers, stop); it reads and writes
    no Kafka topic itself."""

    BootStrategy = _Boot


def create_app(settings: Settings, metrics: Metrics | None = None) -> faust.App:
    """The worker: the input topic in, verdicts out to the three output topics; metrics and
    health on settings.http_port (0: off)."""
    metrics = metrics or Metrics()
    app = WorkerApp(
        settings.app_id,
        autodiscover=False,
        web_enabled=False,
        store="memory://",
        # faust makes a data folder even with nothing to keep in it: in the temporary
        # directory, which any user may write (faust makes only its last part), not in the
        # working directory.
        datadir=str(Path(tempfile.gettempdir()) / f"dedup-worker-{settings.app_id}"),
    )
    stopping = asyncio.Event()
    stopped = asyncio.Event()

    async def dedup() -> None:
        try:
            await _decide(settings, metrics, stopping)
        finally:
            stopped.set()

    app.task(dedup)

    @app.on_before_shutdown.connect
    async def finish(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
        """A stop (SIGTERM): the batch being decided goes out and its offsets are committed."""
        stopping.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopped.wait(), STOP_TIMEOUT_S)

    if settings.retention_s:
        sweeper = _index(settings, metrics)

        async def sweep() -> None:
            """Reclaim expired articles; every replica takes steps of one shared sweep."""
            try:
                await expiry.sweep(sweeper)
            except IndexStoreError as exc:
                log.warning("expiry sweep failed (%s); the next step retries", exc)

        app.timer(expiry.SWEEP_INTERVAL_S)(sweep)

    if settings.http_port:
        health = Health(settings, metrics)
        app.task(health.start)  # once per worker process, at start

        @app.on_before_shutdown.connect
        async def stop_health(sender: Any, /, *args: Any, signal: Any, **kwargs: Any) -> None:
            await health.stop()

    return app


async def _decide(settings: Settings, metrics: Metrics, stopping: asyncio.Event) -> None:
    """Read, decide and publish batches until `stopping` is set. Any error stops the worker."""
    fingerprinter = wiring.fingerprinter(settings)
    redis_index = wiring.redis_index(settings, fingerprinter, metrics.index_reset)
    paths = {True: "native", False: "numpy"}  # (the native extension: native/)
    log.info(
        "fingerprints: %s; bucket cache: %s",
        paths[fingerprinter.native],
        paths[redis_index.native_cache] if redis_index.uses_bucket_cache else "off",
    )
    metrics.cached_entries.set_function(lambda: redis_index.cached_entries)
    metrics.watch_known(lambda: redis_index.known_stats)
    index = TimedIndex(redis_index, metrics)
    reader = wiring.reader(settings, fingerprinter)  # (HTML and e-mail: a child process)
    pipeline = wiring.pipeline(settings, index, fingerprinter, reader)
    transactions = (
        Transactions(settings, lambda: consumer.assignment) if settings.exactly_once else None
    )

    async def revoke() -> None:
        await outbox.flush()
        if transactions is not None:
            await transactions.revoke()

    consumer = Input(settings, on_revoke=revoke)
    outbox: Outbox[Batch] = Outbox(
        on_failure=stop_worker, delivered=None if transactions else consumer.delivered
    )
    try:
        async with AsyncExitStack() as resources:
            await resources.enter_async_context(reader)
            deliver: Deliver
            if transactions is None:
                out = await resources.enter_async_context(
                    producer(settings, linger_ms=0, idempotent=True)
                )
                deliver = partial(publish, out=out, settings=settings, metrics=metrics)
            else:
                deliver = partial(
                    publish_in_transactions,
                    transactions=transactions,
                    settings=settings,
                    metrics=metrics,
                )
            await resources.enter_async_context(consumer.running())
            await run_batches(consumer, pipeline, outbox, deliver, metrics, stopping)
    except Exception as exc:
        stop_worker(exc)
    finally:
        outbox.abandon()
        await index.close()
        if transactions is not None:
            await transactions.close()


def run_worker(
    settings: Settings, loop: asyncio.AbstractEventLoop, logging_config: dict[str, Any]
) -> None:
    """Run the worker in this process until it is stopped (SIGTERM, Ctrl-C)."""
    faust.Worker(
        create_app(settings), loglevel=settings.log_level, logging_config=logging_config, loop=loop
    ).execute_from_commandline()


def _index(settings: Settings, metrics: Metrics) -> TimedIndex:
    return TimedIndex(wiring.redis_index(settings, on_reset=metrics.index_reset), metrics)


def stop_worker(exc: BaseException) -> NoReturn:
    """End the process now, committing nothing more: a worker must not go on past a batch it
    could not decide or publish, and the error may have come from anywhere in the loop (a
    send in flight, a revocation). Whatever was not committed is redelivered, and the index
    replays the verdicts it had already decided."""
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
