"""The worker's loop over its input: batch after batch, two at a time. A batch is sent to the
index before the verdicts of the one before are read (the index and InTurn keep them in
order, whatever fails), the next is fetched and read while Redis runs them, and the verdicts
go to the outbox in order, as soon as they are decided (app.py runs it)."""

from __future__ import annotations

import asyncio
import gc
import logging
from asyncio import FIRST_COMPLETED
from collections.abc import Awaitable
from functools import cache, partial

from worker.errors import IndexFenced, IndexStoreError
from worker.model import Decision
from worker.pipeline.in_turn import InTurn
from worker.pipeline.pipeline import Pipeline, Prepared
from worker.stream.consumer import Batch, Input
from worker.stream.deliver import Deliver
from worker.stream.metrics import Metrics
from worker.stream.outbox import Outbox

log = logging.getLogger(__name__)
Ahead = tuple[Batch, Prepared]
Deciding = tuple[Batch, "asyncio.Future[list[Decision] | None]"]


async def run_batches(
    consumer: Input,
    pipeline: Pipeline,
    outbox: Outbox[Batch],
    deliver: Deliver,
    metrics: Metrics,
    stopping: asyncio.Event,
) -> None:
    """Batch after batch, two at a time: a batch is sent to the index before the verdicts
    of the one before are read (the index and InTurn keep them in order, whatever fails),
    then the next is fetched and fingerprinted while Redis runs them; verdicts go to the
    outbox in order, as soon as they are decided. With nothing fetched yet, the worker waits
    for whichever comes first, the next records or the verdicts: at a steady rate, the next
    batch is then on its way before the one before is published. A batch fetched before a
    revocation is dropped (not committed: the partition's next owner decides it), and so is
    one that the index fenced off once its partitions were revoked."""
    in_turn = batches_in_turn(metrics)
    ahead: Ahead | None = None
    deciding: Deciding | None = None
    fetching: asyncio.Future[Ahead | None] | None = None
    try:
        while not stopping.is_set():
            if ahead is None:
                fetching = asyncio.ensure_future(_fetch(consumer, pipeline, wait=True))
                if deciding is not None:
                    await asyncio.wait((fetching, deciding[1]), return_when=FIRST_COMPLETED)
                    if not fetching.done():
                        await _send_verdicts(deciding, consumer, outbox, deliver)
                        deciding = None
                ahead, fetching = await fetching, None
            if ahead is not None and not consumer.current(ahead[0]):
                ahead = None
            if ahead is None:
                if deciding is not None:
                    await _send_verdicts(deciding, consumer, outbox, deliver)
                    deciding = None
                await outbox.flush()
                await consumer.commit(due_only=True)
                continue
            batch, prepared = ahead
            decide = partial(pipeline.decide, prepared, consumer.owner(batch))
            started = asyncio.ensure_future(
                _timed(metrics, in_turn.start(decide, partial(consumer.current, batch)))
            )
            if deciding is not None:
                await _send_verdicts(deciding, consumer, outbox, deliver)
            deciding = (batch, started)
            ahead = await _fetch(consumer, pipeline, wait=False)
            freeze_gc_once()
            await consumer.commit(due_only=True)
        if deciding is not None:
            await _send_verdicts(deciding, consumer, outbox, deliver)
            deciding = None
    finally:
        for pending in (fetching, deciding and deciding[1]):
            if pending is not None:
                pending.cancel()
    await outbox.flush()


def batches_in_turn(metrics: Metrics) -> InTurn:
    """The batches' decisions, tried in their order; each failed try logged and counted."""

    def retrying(exc: IndexStoreError, delay_s: float) -> None:
        metrics.index_retries.inc()
        log.warning("index failed (%s); trying the batch again in %.1f s", exc, delay_s)

    return InTurn(on_retry=retrying)


async def _send_verdicts(
    deciding: Deciding,
    consumer: Input,
    outbox: Outbox[Batch],
    deliver: Deliver,
) -> None:
    """Once the batch is decided, its verdicts into the outbox (unless its partitions were
    revoked meanwhile). A batch fenced off while its partitions are still this worker's, as
    it thinks, means that the group gave them to another worker (this one was paused past
    the session timeout): the worker stops, committing nothing more."""
    batch, decided = deciding
    try:
        decisions = await decided
    except IndexFenced:
        if consumer.current(batch):
            raise
        return
    if decisions is not None and consumer.current(batch):
        await outbox.put(batch, partial(deliver, batch, decisions, consumer))


async def _timed(
    metrics: Metrics, decided: Awaitable[list[Decision] | None]
) -> list[Decision] | None:
    with metrics.batch_seconds.time():
        return await decided


@cache  # later calls do nothing (gc.get_freeze_count() would walk every frozen object)
def freeze_gc_once() -> None:
    """After the first batch, move every object alive (the app, clients, tables: they live as
    long as the process) out of the garbage collector's sight: full collections re-scanned
    them all, pausing the worker for tens of milliseconds (docs/performance.md)."""
    gc.collect()
    gc.freeze()


async def _fetch(consumer: Input, pipeline: Pipeline, wait: bool) -> Ahead | None:
    """The next batch, decoded and fingerprinted (None: nothing to read). `wait`: for up to
    IDLE_WAIT_MS. Else only what has been fetched, while the index decides the batch
    before."""
    batch = await consumer.next_batch(wait)
    if not batch.records:
        return None
    values = [r.value for r in batch.records]
    positions = [(r.partition, r.offset) for r in batch.records]
    return batch, await pipeline.prepare(values, positions)
