"""The worker's input on a real broker: a trickle of records is taken in batches, only
delivered offsets are committed, a batch fetched before a revocation never is, and a rebalance
runs the revocation hook before the partitions move."""

from __future__ import annotations

import asyncio
import dataclasses

from aiokafka import AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError
from aiokafka.structs import TopicPartition

from tests.support.tenant import Tenant, produce
from worker.stream.consumer import Batch, Input, Record


async def committed(tenant: Tenant) -> dict[int, int]:
    """The group's committed offset of each input partition that has one."""
    admin = AIOKafkaAdminClient(bootstrap_servers=tenant.kafka)
    await admin.start()
    try:
        offsets = await admin.list_consumer_group_offsets(tenant.settings.app_id)
    finally:
        await admin.close()
    topic = tenant.settings.input_topic
    return {tp.partition: meta.offset for tp, meta in offsets.items() if tp.topic == topic}


async def fetch(source: Input, count: int) -> Batch:
    """Batches until `count` records have come (one batch holding them all)."""
    records: list[Record] = []
    assignment = source.assignment
    while len(records) < count:
        batch = await source.next_batch()
        records += batch.records
        assignment = batch.assignment
    return Batch(assignment, records, 1)


async def load(tenant: Tenant, count: int, partition: int = 0) -> None:
    messages = [(f"k{i}".encode(), f"v{i}".encode(), partition) for i in range(count)]
    await asyncio.to_thread(produce, tenant.kafka, tenant.settings.input_topic, messages)


async def nothing() -> None:
    return None


async def test_a_trickle_of_records_is_taken_in_batches(tenant: Tenant) -> None:
    # Records sent 15 ms apart, each once the one before is acknowledged: a fetch answered as
    # soon as the broker has a record would take them one by one. Within batch_wait_ms a
    # fetch waits for more; a fetch that runs out of time in the middle splits them in two.
    settings = dataclasses.replace(tenant.settings, batch_wait_ms=1_000)
    source = Input(settings, on_revoke=nothing)
    producer = AIOKafkaProducer(bootstrap_servers=tenant.kafka, acks="all")
    await producer.start()
    try:
        async with source.running():
            assert not (await source.next_batch()).records  # (assigned, nothing to read yet)
            batches = asyncio.ensure_future(fetch_batches(source, 8))
            for _ in range(8):
                await producer.send_and_wait(settings.input_topic, b"v", key=b"k", partition=0)
                await asyncio.sleep(0.015)
            sizes = await asyncio.wait_for(batches, 30)
    finally:
        await producer.stop()
    assert sum(sizes) == 8
    assert len(sizes) <= 2, sizes


async def fetch_batches(source: Input, count: int) -> list[int]:
    """The sizes of the batches that bring `count` records."""
    sizes: list[int] = []
    while sum(sizes) < count:
        batch = await source.next_batch()
        if batch.records:
            sizes.append(len(batch.records))
    return sizes


async def test_only_delivered_offsets_are_committed(tenant: Tenant) -> None:
    await load(tenant, 10)
    source = Input(tenant.settings, on_revoke=nothing)
    async with source.running():
        batch = await fetch(source, 10)
        assert [r.offset for r in batch.records] == list(range(10))
        await source.commit()
        assert await committed(tenant) == {}  # nothing delivered yet
        source.delivered(dataclasses.replace(batch, records=batch.records[:6]))
        await source.commit()
        assert await committed(tenant) == {0: 6}
        source.delivered(batch)
    assert await committed(tenant) == {0: 10}  # leaving commits what was delivered


async def test_a_revocation_waits_for_the_hook_commits_and_outdates_earlier_batches(
    tenant: Tenant,
) -> None:
    await load(tenant, 8, partition=1)
    order: list[str] = []

    async def on_revoke() -> None:
        await asyncio.sleep(0.05)  # a batch still being sent
        order.append("hook")
        first.delivered(early)  # ... which is delivered before the offsets are committed
        assert not first.current(late)  # a batch decided meanwhile is not sent

    first = Input(tenant.settings, on_revoke=on_revoke)
    async with first.running():
        batch = await fetch(first, 8)
        early = dataclasses.replace(batch, records=batch.records[:3])
        late = dataclasses.replace(batch, records=batch.records)
        assert first.current(late)
        await first.on_partitions_revoked({TopicPartition(tenant.settings.input_topic, 1)})
        order.append("revoked")
        assert order == ["hook", "revoked"]
        assert await committed(tenant) == {1: 3}
        assert first.assignment == batch.assignment + 1
        assert not first.current(late)
        assert first.end_offset(TopicPartition(tenant.settings.input_topic, 1)) == 8
        first.delivered(late)  # fetched before the revocation: its next owner decides it
        await first.commit()
        assert await committed(tenant) == {1: 3}


async def test_a_second_consumer_joining_revokes_the_first(tenant: Tenant) -> None:
    await load(tenant, 1, partition=2)
    revoked = asyncio.Event()

    async def on_revoke() -> None:
        revoked.set()

    first = Input(tenant.settings, on_revoke=on_revoke)
    second = Input(tenant.settings, on_revoke=nothing)
    parts = [TopicPartition(tenant.settings.input_topic, p) for p in range(4)]

    def reads(source: Input) -> set[int]:
        """The partitions whose end offset `source` reports (its own, once fetched)."""
        return {tp.partition for tp in parts if source.end_offset(tp) is not None}

    def settled() -> bool:
        """The revocation is over and the two members split the four partitions."""
        one, two = reads(first), reads(second)
        split = bool(one and two) and not one & two and len(one | two) == len(parts)
        return revoked.is_set() and split

    async with first.running():
        batch = await fetch(first, 1)  # it has the partitions
        assert not revoked.is_set()  # (joining the group revoked nothing)
        async with second.running():
            # Both poll, as workers do, until the group has settled (each member learns of the
            # new assignment in its own time). The lag of a partition now the second's is not
            # the first's to read (nor a reason to stop): a first that still reported all four
            # partitions would never settle.
            deadline = asyncio.get_running_loop().time() + 60
            while not settled():
                assert asyncio.get_running_loop().time() < deadline, (reads(first), reads(second))
                await asyncio.wait_for(asyncio.gather(first.next_batch(), second.next_batch()), 30)
            assert first.assignment > batch.assignment  # (more than one rebalance is possible)


async def test_offsets_kept_after_a_failed_commit_never_hold_back_the_partitions_still_owned(
    tenant: Tenant,
) -> None:
    for partition in range(4):
        await load(tenant, 2, partition=partition)
    first = Input(tenant.settings, on_revoke=nothing)
    second = Input(tenant.settings, on_revoke=nothing)
    async with first.running():
        batch = await fetch(first, 8)  # every partition is the first's
        real_commit = first._consumer.commit

        async def failing(offsets: object = None) -> None:
            raise KafkaConnectionError("broker went away")  # not CommitFailedError: kept

        first._consumer.commit = failing  # ... and at the revocation too
        first.delivered(batch)
        await first.commit()
        async with second.running():
            while not 0 < len(first._consumer.assignment()) < 4:  # until some are the second's
                await asyncio.wait_for(asyncio.gather(first.next_batch(), second.next_batch()), 30)
            first._consumer.commit = real_commit
            assert await committed(tenant) == {}
            kept = {tp.partition for tp in first._consumer.assignment()}
            # Committing the kept offsets of partitions now the second's would fail (not
            # assigned), and would fail every later commit with them: only owned ones go.
            await first.commit()
            assert set(await committed(tenant)) == kept
            assert all(offset == 2 for offset in (await committed(tenant)).values())


async def test_the_end_of_a_partition_read_committed_stops_at_an_open_transaction(
    tenant: Tenant,
) -> None:
    """Lag is counted to what the worker can read: a publisher's transaction still open holds
    offsets that are not readable yet."""
    await load(tenant, 3)
    publisher = AIOKafkaProducer(
        bootstrap_servers=tenant.kafka, transactional_id=f"{tenant.name}-publisher"
    )
    await publisher.start()
    try:
        await publisher.begin_transaction()
        await (await publisher.send(tenant.settings.input_topic, b"open", partition=0))
        source = Input(tenant.settings, on_revoke=nothing)
        async with source.running():
            await fetch(source, 3)
            assert source.end_offset(TopicPartition(tenant.settings.input_topic, 0)) == 3
        await publisher.abort_transaction()
    finally:
        await publisher.stop()
