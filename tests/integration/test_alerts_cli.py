"""`dedup-worker alerts` shows what an exactly-once worker committed: a duplicate alert of an
aborted transaction (its batch is decided again) is not shown."""

from __future__ import annotations

import asyncio
import json

from click.testing import CliRunner

from tests.support.tenant import Tenant, abort_one_then_commit_one
from worker.cli.stream import alerts


def test_alerts_of_an_aborted_transaction_are_not_shown(tenant: Tenant) -> None:
    alert = {name: json.dumps({"id": name}).encode() for name in ("aborted", "committed")}
    asyncio.run(
        abort_one_then_commit_one(
            tenant.kafka,
            tenant.settings.duplicates_topic,
            (b"aborted", alert["aborted"]),
            (b"committed", alert["committed"]),
        )
    )
    shown = CliRunner().invoke(
        alerts, ["--from-beginning", "--json", "--idle-timeout", "5"], env=tenant.env()
    )
    assert shown.exit_code == 0, shown.output
    assert [json.loads(line)["id"] for line in shown.output.splitlines()] == ["committed"]
