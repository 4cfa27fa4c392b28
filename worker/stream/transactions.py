"""Exactly-once output (DEDUP_PROCESSING_GUARANTEE=exactly_once): a batch's messages and the
next offset of each of its input partitions are written in one Kafka transaction per input
partition, so that a consumer of the output topics that reads with
isolation.level=read_committed sees each input's verdict once, whatever crashes.

Each input partition has its own transactional producer (transactional.id: the app id, the
input topic and the partition). Whoever takes a partition over starts a producer with its
id, which fences the previous owner (a zombie's commit fails) and ends the transaction it
left open; the partition's committed offset is read after that, and records below it (decided
in a transaction that did commit) are dropped. Nothing else commits offsets in this mode: the
transactions carry them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import InvalidProducerEpoch, KafkaError, ProducerFenced

from worker.errors import KafkaRefused, KafkaUnavailable
from worker.pipeline.outputs import Outgoing
from worker.settings import Settings
from worker.stream.kafka import PRODUCER_BATCH_BYTES, client_options, output_topics, send_all

log = logging.getLogger(__name__)
# An input record (aiokafka's: .partition, .offset) and its output.
Item = tuple[Any, Sequence[Outgoing]]
_FENCED = (ProducerFenced, InvalidProducerEpoch)
RETRY_DELAY_S = 0.1  # the first wait before a failed transaction is tried again; it doubles
MAX_RETRY_DELAY_S = 5.0
STOP_TIMEOUT_S = 5.0  # the failed producer is given this long to stop


@dataclass
class _Partition:
    assignment: int  # the input's assignment the producer was started in (Input.assignment)
    producer: AIOKafkaProducer
    floor: int  # offsets below it were committed by a transaction


class Transactions:
    """The transactional producers of the input partitions this worker owns. `assignment`
    returns the input's assignment now (Input.assignment): records fetched in an earlier one are
    redelivered from the committed offset, so they are dropped.
    """

    def __init__(self, settings: Settings, assignment: Callable[[], int]) -> None:
        self._settings = settings
        self._assignment = assignment
        self._topics = output_topics(settings)
        self._partitions: dict[int, _Partition] = {}
        self._closed = -1  # the last assignment whose partitions were revoked
        self._lock = asyncio.Lock()  # one batch at a time, and a revocation waits for it
        self._admin: AIOKafkaAdminClient | None = None
        self._admin_lock = asyncio.Lock()  # partitions start concurrently; one admin client

    async def publish(self, assignment: int, items: Sequence[Item]) -> list[Any]:
        """Commit every item's output with its offset, one transaction per input partition;
        `assignment`: the assignment the records were fetched in. Returns the records
        committed (the others were dropped: already committed, or fetched before a
        rebalance)."""
        async with self._lock:
            groups: dict[int, list[Item]] = defaultdict(list)
            for item in items:
                groups[item[0].partition].append(item)
            done = await asyncio.gather(
                *(self._commit(assignment, p, group) for p, group in groups.items())
            )
        return [record for records in done for record in records]

    async def revoke(self) -> None:
        """Partitions are being revoked: no new transaction in this assignment; the one in
        flight ends first (so that the next owner never has to fence it), then the producers
        stop."""
        self._closed = self._assignment()
        async with self._lock:
            await self._stop_producers()

    async def close(self) -> None:
        async with self._lock:
            await self._stop_producers()
            if self._admin is not None:
                await self._admin.close()
                self._admin = None

    def _current(self, assignment: int) -> bool:
        return assignment == self._assignment() and assignment > self._closed

    async def _commit(self, assignment: int, partition: int, items: list[Item]) -> list[Any]:
        """One transaction; one that fails for want of Kafka is tried again with a new
        producer (which ends the failed one and reads the committed offset again, so that
        nothing is committed twice), for as long as it takes."""
        delay = RETRY_DELAY_S
        while True:
            try:
                return await self._try_commit(assignment, partition, items)
            except KafkaUnavailable as exc:
                state = self._partitions.pop(partition, None)
                if state is not None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(state.producer.stop(), STOP_TIMEOUT_S)
                log.warning("%s; trying again in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, MAX_RETRY_DELAY_S)

    async def _try_commit(self, assignment: int, partition: int, items: list[Item]) -> list[Any]:
        if not self._current(assignment):
            log.info(
                "%d records of input partition %d fetched before a rebalance dropped",
                len(items),
                partition,
            )
            return []
        state = await self._partition(assignment, partition)
        fresh = [item for item in items if item[0].offset >= state.floor]
        if len(fresh) < len(items):
            log.info(
                "input partition %d: %d records below its committed offset %d dropped (their "
                "verdicts were committed before this worker took it)",
                partition,
                len(items) - len(fresh),
                state.floor,
            )
        items = fresh
        if not items:
            return []
        last = items[-1][0].offset
        producer = state.producer
        try:
            await producer.begin_transaction()
            messages = (
                (self._topics[out.destination], out.key, out.value)
                for _, outputs in items
                for out in outputs
            )
            await asyncio.gather(*await send_all(producer, messages))
            offsets = {TopicPartition(self._settings.input_topic, partition): last + 1}
            await producer.send_offsets_to_transaction(offsets, self._settings.app_id)
            await producer.commit_transaction()
        except _FENCED as exc:
            if self._current(assignment):
                raise KafkaRefused(
                    f"another worker took input partition {partition} over (its transactional "
                    "producer fenced this one) while this worker still holds it"
                ) from exc
            log.info(
                "partition %d moved during its transaction; its new owner decides it", partition
            )
            return []
        except KafkaError as exc:  # (the next producer of this id aborts the transaction)
            raise KafkaUnavailable(f"transaction of input partition {partition}: {exc!r}") from exc
        state.floor = last + 1
        return [record for record, _ in items]

    async def _partition(self, assignment: int, partition: int) -> _Partition:
        state = self._partitions.get(partition)
        if state is not None and state.assignment == assignment:
            return state
        if state is not None:
            del self._partitions[partition]
            await state.producer.stop()
        producer = AIOKafkaProducer(
            **client_options(self._settings),
            transactional_id=f"{self._settings.app_id}-{self._settings.input_topic}-{partition}",
            max_request_size=self._settings.output_max_bytes,
            max_batch_size=PRODUCER_BATCH_BYTES,
        )
        try:
            await producer.start()  # fences the previous owner, ends its open transaction
            floor = await self._committed(partition)
        except KafkaError as exc:
            await producer.stop()
            raise KafkaUnavailable(f"transactional producer of partition {partition}") from exc
        state = self._partitions[partition] = _Partition(assignment, producer, floor)
        return state

    async def _committed(self, partition: int) -> int:
        """The partition's committed offset, read after its previous owner's transaction
        ended (the consumer read it earlier, possibly before that transaction committed)."""
        async with self._admin_lock:
            if self._admin is None:
                admin = AIOKafkaAdminClient(**client_options(self._settings))
                await admin.start()
                self._admin = admin
        tp = TopicPartition(self._settings.input_topic, partition)
        offsets = await self._admin.list_consumer_group_offsets(
            self._settings.app_id, partitions=[tp]
        )
        committed = offsets.get(tp)
        return committed.offset if committed is not None and committed.offset >= 0 else 0

    async def _stop_producers(self) -> None:
        partitions, self._partitions = self._partitions, {}
        for state in partitions.values():
            await state.producer.stop()
