"""The batch loop (worker/stream/loop.py) with its collaborators faked."""

import asyncio
import contextlib
import gc
from collections.abc import Iterator

import pytest

from worker.model import Decision
from worker.stream.consumer import Batch
from worker.stream.loop import freeze_gc_once, run_batches
from worker.stream.metrics import Metrics
from worker.stream.outbox import Outbox


@pytest.fixture
def unfrozen() -> Iterator[None]:
    gc.unfreeze()
    freeze_gc_once.cache_clear()
    yield
    gc.unfreeze()
    freeze_gc_once.cache_clear()


def test_settle_gc_freezes_what_is_alive_once(unfrozen: None) -> None:
    assert gc.get_freeze_count() == 0
    freeze_gc_once()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    later = [[i] for i in range(1000)]  # made after the first batch: a second freeze would
    freeze_gc_once()  # take them too
    assert gc.get_freeze_count() == frozen
    del later


class Steps:
    """The loop's collaborators, faked, writing what happens to one log: a source whose first
    batch is there at once and whose next comes only to a fetch that waits; an index that
    decides batch 1 once batch 2 has been sent or after `hold_s`."""

    def __init__(self, hold_s: float) -> None:
        self.log: list[str] = []
        self.hold_s = hold_s
        self.stopping = asyncio.Event()
        self.second_sent = asyncio.Event()
        self.fetched = 0

    # the source (consumer.Input)
    async def next_batch(self, wait: bool = True) -> Batch:
        if self.fetched == 0 or (wait and self.fetched == 1):
            self.fetched += 1
            return Batch(0, [FakeRecord(self.fetched)], 1)
        if wait:
            await asyncio.sleep(0.01)
        return Batch(0, [], 1)

    def current(self, batch: object) -> bool:
        return True

    def owner(self, batch: object) -> None:
        return None

    async def commit(self, due_only: bool = False) -> None:
        return None

    # the pipeline
    async def prepare(self, values: object, positions: list[tuple[int, int]]) -> int:
        return positions[0][1]

    async def decide(self, number: int, owner: object = None) -> list[Decision]:
        self.log.append(f"sent {number}")
        if number == 1:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.second_sent.wait(), self.hold_s)
        else:
            self.second_sent.set()
        self.log.append(f"decided {number}")
        return []

    # the verdicts' way out (deliver.publish)
    async def deliver(self, batch: Batch, decisions: object, source: object) -> None:
        self.log.append(f"published {batch.records[0].offset}")
        if len(self.log) == 6:
            self.stopping.set()


class FakeRecord:
    def __init__(self, offset: int) -> None:
        self.value, self.partition, self.offset = b"{}", 0, offset


async def test_a_batch_that_comes_while_the_one_before_is_decided_is_sent_before_it_is_published(
    unfrozen: None,
) -> None:
    steps = Steps(hold_s=1.0)
    outbox: Outbox[Batch] = Outbox()
    loop = run_batches(steps, steps, outbox, steps.deliver, Metrics(), steps.stopping)
    await asyncio.wait_for(loop, 10)
    assert steps.log == [
        "sent 1",
        "sent 2",  # (before batch 1 is decided: its records came while it was)
        "decided 2",  # (a real index decides them in order: this one does not)
        "decided 1",
        "published 1",  # (published in order all the same)
        "published 2",
    ]
