"""Sending in record batches built by the worker (send_all), on a real broker: each message
lands where aiokafka's send would put it, in order within its partition, across batches that
fill up; a tombstone and a key-less message go too."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from tests.support.tenant import Tenant
from worker.stream.kafka import Message, send_all


async def read_all(
    tenant: Tenant, topic: str, count: int
) -> list[tuple[int, bytes | None, bytes | None]]:
    """The topic's first `count` records: (partition, key, value), in offset order within each
    partition."""
    consumer = AIOKafkaConsumer(
        topic, bootstrap_servers=tenant.kafka, auto_offset_reset="earliest", group_id=None
    )
    await consumer.start()
    records: list[tuple[int, int, bytes | None, bytes | None]] = []
    try:
        while len(records) < count:
            fetched = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 30)
            records += [
                (r.partition, r.offset, r.key, r.value) for part in fetched.values() for r in part
            ]
    finally:
        await consumer.stop()
    return [(partition, key, value) for partition, _, key, value in sorted(records)]


async def test_messages_go_where_send_puts_them_in_order_across_full_batches(
    tenant: Tenant,
) -> None:
    ours, theirs = tenant.settings.unique_topic, tenant.settings.duplicates_topic
    messages: list[Message] = [
        (ours, f"id-{i % 7}".encode(), f"{i:04d}".encode() * 100) for i in range(60)
    ]
    messages += [(ours, b"id-0", None), (ours, None, b"no key")]
    # (batches of 2 KB: five messages each, so that every partition's batches fill up)
    out = AIOKafkaProducer(bootstrap_servers=tenant.kafka, acks="all", max_batch_size=2048)
    await out.start()
    try:
        sent = await send_all(out, messages)
        assert len(sent) > 4  # (more than one batch per partition)
        await asyncio.gather(*sent)
        for _, key, value in messages[:-1]:  # (a key-less one goes to any partition)
            await out.send(theirs, value, key=key)
        await out.flush()
    finally:
        await out.stop()
    got = await read_all(tenant, ours, len(messages))
    expected = await read_all(tenant, theirs, len(messages) - 1)
    assert [m for m in got if m[1] is not None] == expected
    assert [m[1:] for m in got if m[1] is None] == [(None, b"no key")]
