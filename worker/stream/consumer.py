"""The input topic, read in batches by aiokafka's consumer under Kafka's group management, and
the offsets of delivered batches committed.

Not faust's stream: its path per message (a consumer thread, an event, a queue, an ack) costs
several times what the client itself does per message (docs/performance.md). At-least-once:
offsets are committed only after `delivered` says that Kafka has all of a batch's output. A
revocation waits for the batch being sent (`on_revoke`) and commits what was delivered, so the
next owner of the partitions redoes as little as possible; a batch fetched before it is not
committed (its assignment is past), and is decided again by the partition's next owner.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias

from aiokafka import AIOKafkaConsumer, ConsumerRebalanceListener, ConsumerRecord, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError

from worker.model import Owner
from worker.settings import Isolation, Settings
from worker.stream.kafka import client_options, started

log = logging.getLogger(__name__)
IDLE_WAIT_MS = 500  # an empty fetch returns after this long (how soon a stop is noticed)
COMMIT_INTERVAL_S = 1.0  # delivered offsets are committed this often, and at a revocation
SESSION_TIMEOUT_MS = 10_000  # a replica that dies is noticed after this long
# How soon a replica hears that the group is rebalancing (a replica joining or leaving): its
# partitions wait until every member has rejoined.
HEARTBEAT_INTERVAL_MS = 1_000
# The longest a batch may take (an index that cannot be reached is waited for) before the
# group gives the worker's partitions to the others.
MAX_POLL_INTERVAL_MS = 1_000_000
# A fetch is answered once the broker holds this much for it, or batch_wait_ms have passed: a
# trickle of records is taken in batches (one fetch, index call and send for many) rather than
# each as it comes, and a backlog at once.
FETCH_MIN_BYTES_WANTED = 1 << 20
Record: TypeAlias = "ConsumerRecord[bytes, bytes]"


@dataclass(frozen=True, slots=True)
class Batch:
    assignment: int  # fetched in this assignment (counted here: one more at each revocation)
    records: list[Record]
    generation: int  # the consumer group generation it was fetched in (-1: none)


class Input(ConsumerRebalanceListener):  # type: ignore[misc]
    """The worker's consumer of the input topic. `on_revoke` runs when partitions are
    revoked; it returns once no batch is being sent."""

    def __init__(self, settings: Settings, on_revoke: Callable[[], Awaitable[None]]) -> None:
        self._settings = settings
        self._on_revoke = on_revoke
        self._consumer = AIOKafkaConsumer(
            **client_options(settings),
            group_id=settings.app_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            # (read_committed: a publisher's aborted messages get no verdict and stay out of
            # the index; the fetch stops at a transaction still open until it ends)
            isolation_level=settings.input_isolation_level.value,
            max_poll_records=settings.batch_size,
            session_timeout_ms=SESSION_TIMEOUT_MS,
            heartbeat_interval_ms=HEARTBEAT_INTERVAL_MS,
            max_poll_interval_ms=MAX_POLL_INTERVAL_MS,
            **_fetch_options(settings),
        )
        self._consumer.subscribe([settings.input_topic], listener=self)
        self._assignment = 0
        self._revoking = False  # between a revocation's start and its commit
        self._done: dict[TopicPartition, int] = {}  # next offset, delivered, not committed
        self._last_commit = time.monotonic()

    @property
    def assignment(self) -> int:
        return self._assignment

    def current(self, batch: Batch) -> bool:
        """Whether the batch's partitions are still this worker's: fetched in this assignment,
        and no revocation under way (a batch sent once its partitions are being revoked would
        be sent by their next owner too)."""
        return batch.assignment == self._assignment and not self._revoking and batch.generation >= 0

    def owner(self, batch: Batch) -> Owner:
        """Whom the index is to take the batch's decisions from: the owner of its partitions in
        the group generation it was fetched in (a worker of a later generation that claimed
        one of them fences this one off)."""
        scope = f"{self._settings.app_id}/{self._settings.input_topic}"
        return Owner(scope, batch.generation)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[Input]:
        """Started (a failed start raises KafkaUnavailable); on exit, what was delivered is
        committed and the group left (the partitions move to the others at once)."""
        async with started(self._consumer, self._settings):
            try:
                yield self
            finally:
                await self.commit()

    async def next_batch(self, wait: bool = True) -> Batch:
        """Up to batch_size records: what has been fetched (a fetch waits up to batch_wait_ms
        for more, FETCH_MIN_BYTES_WANTED, in the broker). `wait`: for up to IDLE_WAIT_MS for
        a first record; else none if none has been fetched."""
        limit = self._settings.batch_size
        fetched = await self._consumer.getmany(
            timeout_ms=IDLE_WAIT_MS if wait else 0, max_records=limit
        )
        assignment = self._assignment
        records = [r for part in fetched.values() for r in part]
        # (aiokafka keeps the generation on its group coordinator only; -1 once the broker
        # said that this member's generation is not current: the batch is then not current)
        coordinator = self._consumer._coordinator
        generation = coordinator.generation if coordinator is not None else -1
        return Batch(assignment, records, generation)

    def delivered(self, batch: Batch) -> None:
        """Kafka has all of the batch's output: its offsets may be committed (unless its
        partitions were revoked since: their next owner decides them again)."""
        if batch.assignment != self._assignment:
            return
        for record in batch.records:
            self._done[TopicPartition(record.topic, record.partition)] = record.offset + 1

    async def commit(self, due_only: bool = False) -> None:
        """Commit the delivered offsets (with `due_only`, only once COMMIT_INTERVAL_S has
        passed since the last commit) of the partitions this worker still owns: those of a
        partition gone to another worker are its next owner's to redo (kept, a commit failed
        at a revocation would fail again and again, holding every other partition's back)."""
        if due_only and time.monotonic() - self._last_commit < COMMIT_INTERVAL_S:
            return
        self._last_commit = time.monotonic()
        owned = self._consumer.assignment()
        offsets = {tp: offset for tp, offset in self._done.items() if tp in owned}
        self._done = {}
        if not offsets:
            return
        try:
            await self._consumer.commit(offsets)
        except CommitFailedError as exc:  # the group moved on: the partitions' owner redoes them
            log.warning("offsets not committed, the group was rebalanced: %s", exc)
        except KafkaError as exc:
            self._done = {**offsets, **self._done}  # the next commit tries them again
            log.warning("offsets not committed (%r); the next commit tries again", exc)

    def end_offset(self, tp: TopicPartition) -> int | None:
        """Where what this worker can read of the partition ends, as last fetched: reading
        read_committed, its last stable offset (a transaction still open is not readable
        yet), else its high-water mark. None before the first fetch, or when the partition is
        no longer this worker's."""
        if tp not in self._consumer.assignment():
            return None
        end: int | None = None
        if self._settings.input_isolation_level is Isolation.READ_COMMITTED:
            end = self._consumer.last_stable_offset(tp)
        if end is None or end < 0:  # (a broker too old to say)
            end = self._consumer.highwater(tp)
        return end

    async def on_partitions_revoked(self, revoked: Any) -> None:
        if not revoked:  # (a first join)
            return
        self._revoking = True
        try:
            await self._on_revoke()
            await self.commit()
        finally:
            self._assignment += 1
            self._revoking = False

    async def on_partitions_assigned(self, assigned: Any) -> None:
        log.info("input partitions assigned: %s", sorted(tp.partition for tp in assigned))


def _fetch_options(settings: Settings) -> dict[str, int]:
    """How long the broker holds a fetch for more records: batch_wait_ms (0: answered as soon
    as it has any, waiting at most IDLE_WAIT_MS when it has none)."""
    if settings.batch_wait_ms == 0:
        return {"fetch_min_bytes": 1, "fetch_max_wait_ms": IDLE_WAIT_MS}
    return {"fetch_min_bytes": FETCH_MIN_BYTES_WANTED, "fetch_max_wait_ms": settings.batch_wait_ms}
