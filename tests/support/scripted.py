"""The worker's real stream loop (worker.stream.loop.run_batches) with its real Pipeline, index and
Outbox, fed by a scripted input in place of Kafka: batches of the partitions' messages as a
consumer fetches them, revocations (the uncommitted messages are read again, in a new group
generation, as by the partitions' next owner) and a clock of events (a Redis outage through a
proxy, a revocation) run beside it. What each message was decided, every time it was
published, is kept by its position."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from worker import wiring
from worker.index.base import Index, IndexOptions
from worker.index.memory import MemoryIndex
from worker.model import Accepted, Decision, Forgotten, Owner, Rejection
from worker.pipeline.pipeline import Pipeline
from worker.settings import Settings
from worker.stream.consumer import IDLE_WAIT_MS, Batch
from worker.stream.loop import run_batches
from worker.stream.metrics import Metrics
from worker.stream.outbox import Outbox

Position = tuple[int, int]


@dataclass
class Record:
    """What the loop reads of an aiokafka ConsumerRecord."""

    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int = 0


@dataclass
class ScriptedInput:
    """consumer.Input's interface for run_batches over `partitions` (each a list of message
    values, offset = place). A fetch takes up to `batch_size` of the next records, from the
    partitions in turn (`rng`: how many of each); `revoke()` ends the assignment."""

    partitions: list[list[bytes]]
    batch_size: int = 10
    rng: random.Random = field(default_factory=lambda: random.Random(0))
    assignment: int = 0
    generation: int = 1
    current_always: bool = False  # (a worker paused past its session: it thinks it still owns)
    sizes: list[int] = field(default_factory=list)  # the first fetches take exactly these
    committed: list[int] = field(default_factory=list)
    first: list[int] = field(default_factory=list)  # where it started reading
    progress: asyncio.Event = field(default_factory=asyncio.Event)  # (set at each delivery)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)  # (set by add)
    _next: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.start_at([0] * len(self.partitions))

    def start_at(self, offsets: Sequence[int]) -> None:
        self.first, self.committed, self._next = list(offsets), list(offsets), list(offsets)

    def add(self, partition: int, value: bytes) -> None:
        """A message published now."""
        self.partitions[partition].append(value)
        self.arrived.set()

    def unread(self) -> int:
        """How many messages there are from where it started."""
        return sum(len(p) - first for p, first in zip(self.partitions, self.first, strict=True))

    async def next_batch(self, wait: bool = True) -> Batch:
        """As Input's: with `wait`, for up to IDLE_WAIT_MS for a first record."""
        batch = self._fetched()
        if not batch.records and wait:
            self.arrived.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.arrived.wait(), IDLE_WAIT_MS / 1000)
            batch = self._fetched()
        return batch

    def _fetched(self) -> Batch:
        records: list[Record] = []
        size = self.sizes.pop(0) if self.sizes else None
        for p in self.rng.sample(range(len(self.partitions)), len(self.partitions)):
            left = (size if size is not None else self.batch_size) - len(records)
            take = left if size is not None else self.rng.randint(0, left)
            for offset in range(self._next[p], min(self._next[p] + take, len(self.partitions[p]))):
                records.append(Record("in", p, offset, None, self.partitions[p][offset]))
                self._next[p] = offset + 1
        return Batch(self.assignment, records, self.generation)

    def current(self, batch: Batch) -> bool:
        return self.current_always or batch.assignment == self.assignment

    def owner(self, batch: Batch) -> Owner:
        return Owner("group/in", batch.generation)

    def delivered(self, batch: Batch) -> None:
        if batch.assignment == self.assignment:
            for r in batch.records:
                self.committed[r.partition] = max(self.committed[r.partition], r.offset + 1)
        self.progress.set()

    async def commit(self, due_only: bool = False) -> None:
        return None

    def end_offset(self, tp: object) -> None:
        return None

    def revoke(self) -> None:
        """The partitions go to their next owner (here the same loop, in a new generation):
        batches fetched before are dropped, and what was not committed is read again."""
        self.assignment += 1
        self.generation += 1
        self._next = list(self.committed)


def summary(decision: Decision) -> tuple[str, str | None]:
    """What must not change: an article's kind and what it repeats; a deletion's answer."""
    if isinstance(decision, Accepted):
        return decision.verdict.kind.value, decision.verdict.duplicate_of
    if isinstance(decision, Forgotten):
        return "deleted", str(decision.was_indexed)
    assert isinstance(decision, Rejection)
    return "rejected", decision.reason.value


async def run_loop(
    settings: Settings,
    source: ScriptedInput,
    *,
    events: Callable[[], Awaitable[None]] | None = None,
    timeout_s: float = 120.0,
) -> dict[Position, list[tuple[str, str | None]]]:
    """Run the loop until every message was published once and `events` is over; returns
    what each message was decided, each time it was published."""
    metrics, fingerprinter = Metrics(), wiring.fingerprinter(settings)
    index = wiring.redis_index(settings, fingerprinter)
    pipeline = wiring.pipeline(settings, index, fingerprinter)
    published: dict[Position, list[tuple[str, str | None]]] = {}
    stopping, over = asyncio.Event(), asyncio.Event()

    def done() -> bool:  # (the partitions may grow while it runs)
        return over.is_set() and len(published) == source.unread()

    async def deliver(batch: Batch, decisions: Sequence[Decision], _: object) -> None:
        for record, decision in zip(batch.records, decisions, strict=True):
            published.setdefault((record.partition, record.offset), []).append(summary(decision))
        if done():
            stopping.set()

    async def side() -> None:
        if events is not None:
            await events()
        over.set()
        if done():
            stopping.set()

    outbox: Outbox[Batch] = Outbox(delivered=source.delivered)
    beside = asyncio.ensure_future(side())
    try:
        loop = run_batches(source, pipeline, outbox, deliver, metrics, stopping)
        await asyncio.wait_for(loop, timeout_s)
        await beside
    finally:
        beside.cancel()
        await index.close()
    return published


async def in_sequence(
    settings: Settings, partitions: list[list[bytes]], index: Index | None = None
) -> dict[Position, tuple[str, str | None]]:
    """The specification: each partition's messages decided one after another, in order."""
    pipeline = Pipeline(
        wiring.fingerprinter(settings),
        index
        or MemoryIndex(options=IndexOptions(redelivery_window_s=settings.redelivery_window_s)),
        settings.max_message_bytes,
    )
    out = {}
    for p, values in enumerate(partitions):
        for offset, value in enumerate(values):
            [decision] = await pipeline.run([value], [(p, offset)])
            out[p, offset] = summary(decision)
    return out


def article(article_id: str, text: str) -> bytes:
    return json.dumps({"id": article_id, "text": text}).encode()


def deletion(article_id: str) -> bytes:
    return json.dumps({"id": article_id, "op": "delete"}).encode()
