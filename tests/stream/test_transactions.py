"""Exactly-once output on a real broker: what a read_committed consumer sees when a partition
changes hands, a zombie keeps publishing, or records come from before a rebalance."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.structs import TopicPartition

from tests.support.tenant import Tenant, collect_until
from worker.errors import KafkaRefused
from worker.pipeline.outputs import Destination, Outgoing
from worker.stream.transactions import Item, Transactions


class Assignment:
    """Stands in for the input's assignment (Input.assignment)."""

    def __init__(self) -> None:
        self.now = 1

    def __call__(self) -> int:
        return self.now


def items(partition: int, offsets: range) -> list[Item]:
    """Records at these offsets, each with one unique verdict naming its offset."""
    out: list[Item] = []
    for offset in offsets:
        record = SimpleNamespace(partition=partition, offset=offset)
        body = json.dumps({"id": f"p{partition}-{offset}"}).encode()
        out.append((record, [Outgoing(Destination.UNIQUE, None, body)]))
    return out


def offsets_of(records: list[Any]) -> list[int]:
    return [r.offset for r in records]


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


@pytest.fixture
def opened(loop: asyncio.AbstractEventLoop) -> Iterator[list[Transactions]]:
    """Transactions a test opens: closed after it, whether it passed or not (their producers
    hold transactional ids the next test's would be fenced by)."""
    made: list[Transactions] = []
    yield made
    for txns in made:
        loop.run_until_complete(txns.close())


def committed_ids(tenant: Tenant, count: int) -> list[str]:
    out = collect_until(
        tenant.kafka,
        {"unique": tenant.settings.unique_topic},
        lambda o: len(o.get("unique", [])) >= count,
        quiet=1.5,
        isolation_level="read_committed",
    )
    return sorted(body["id"] for body in out.get("unique", []))


def group_offset(
    tenant: Tenant, partition: int, loop: asyncio.AbstractEventLoop, expected: int
) -> int:
    """The group's committed offset of the input partition: `expected` as soon as it shows,
    else the last seen in 15 s (a transaction's markers are written after its commit
    returns)."""

    async def read() -> int:
        admin = AIOKafkaAdminClient(bootstrap_servers=tenant.kafka)
        await admin.start()
        try:
            tp = TopicPartition(tenant.settings.input_topic, partition)
            offset, deadline = -1, time.monotonic() + 15
            while time.monotonic() < deadline:
                offsets = await admin.list_consumer_group_offsets(tenant.settings.app_id)
                offset = int(offsets[tp].offset) if tp in offsets else -1
                if offset == expected:
                    break
                await asyncio.sleep(0.2)
            return offset
        finally:
            await admin.close()

    return loop.run_until_complete(read())


def test_a_new_owner_fences_the_old_and_skips_what_it_committed(
    tenant: Tenant, loop: asyncio.AbstractEventLoop, opened: list[Transactions]
) -> None:
    old = Transactions(tenant.settings, Assignment())
    opened.append(old)
    published = loop.run_until_complete(old.publish(1, items(0, range(0, 10))))
    assert offsets_of(published) == list(range(10))
    assert group_offset(tenant, 0, loop, 10) == 10

    # The next owner reads from an offset fetched before the old owner's commit: 5..14.
    new = Transactions(tenant.settings, Assignment())
    opened.append(new)
    published = loop.run_until_complete(new.publish(1, items(0, range(5, 15))))
    assert offsets_of(published) == list(range(10, 15))

    # The old owner, a zombie that has not noticed, is fenced: it must stop, not publish.
    with pytest.raises(KafkaRefused, match="took input partition 0 over"):
        loop.run_until_complete(old.publish(1, items(0, range(10, 20))))
    loop.run_until_complete(old.close())
    loop.run_until_complete(new.close())

    assert committed_ids(tenant, 15) == sorted(f"p0-{i}" for i in range(15))
    assert group_offset(tenant, 0, loop, 15) == 15


def test_records_from_before_a_rebalance_or_during_a_revocation_are_dropped(
    tenant: Tenant, loop: asyncio.AbstractEventLoop, opened: list[Transactions]
) -> None:
    assignment = Assignment()
    txns = Transactions(tenant.settings, assignment)
    opened.append(txns)
    assert offsets_of(loop.run_until_complete(txns.publish(1, items(1, range(0, 3))))) == [0, 1, 2]

    loop.run_until_complete(txns.revoke())  # assignment 1's partitions are being taken away
    assert loop.run_until_complete(txns.publish(1, items(1, range(3, 6)))) == []
    assignment.now = 2  # ... and assigned again
    assert loop.run_until_complete(txns.publish(1, items(1, range(3, 6)))) == []
    published = loop.run_until_complete(txns.publish(2, items(1, range(3, 6))))
    assert offsets_of(published) == [3, 4, 5]
    loop.run_until_complete(txns.close())

    assert committed_ids(tenant, 6) == sorted(f"p1-{i}" for i in range(6))
    assert group_offset(tenant, 1, loop, 6) == 6
