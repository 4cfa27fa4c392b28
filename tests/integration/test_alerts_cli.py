"""`dedup-worker alerts` shows what an exactly-once worker committed: a duplicate alert of an
aborted transaction (its batch is decided again) is not shown."""

from __future__ import annotations

import asyncio
import json

from aiokafka import AIOKafkaProducer
from click.testing import CliRunner

from tests.support.tenant import Tenant
from worker.cli.stream import alerts


async def _abort_one_then_commit_one(kafka: str, topic: str) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=kafka, transactional_id=f"{topic}-worker")
    await producer.start()
    try:
        for alert_id, commit in (("aborted", False), ("committed", True)):
            await producer.begin_transaction()
            body = json.dumps({"id": alert_id}).encode()
            await (await producer.send(topic, body, key=alert_id.encode()))
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await producer.stop()


def test_alerts_of_an_aborted_transaction_are_not_shown(tenant: Tenant) -> None:
    asyncio.run(_abort_one_then_commit_one(tenant.kafka, tenant.settings.duplicates_topic))
    shown = CliRunner().invoke(
        alerts, ["--from-beginning", "--json", "--idle-timeout", "5"], env=tenant.env()
    )
    assert shown.exit_code == 0, shown.output
    assert [json.loads(line)["id"] for line in shown.output.splitlines()] == ["committed"]
