"""Input from a publisher that writes in Kafka transactions: only what it committed gets a
verdict and enters the index (the worker reads its input read_committed)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from tests.support.factories import article
from tests.support.tenant import (
    Outputs,
    Tenant,
    WorkerProcess,
    abort_one_then_commit_one,
    collect_until,
)

TEXT = (
    "The harbour authority said on Tuesday that the new ferry terminal would open in the "
    "spring, two years later than planned, after the contractor found the old pier unsound."
)


def _ids(out: Outputs) -> list[str]:
    return [str(m.get("id")) for v in out.values() for m in v if isinstance(m, dict)]


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
def test_an_aborted_message_gets_no_verdict_and_stays_out_of_the_index(
    guarantee: str, tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    tenant.extra_env["DEDUP_PROCESSING_GUARANTEE"] = guarantee
    # (the same text twice on one partition: the first in a transaction that is aborted)
    asyncio.run(
        abort_one_then_commit_one(
            tenant.kafka,
            tenant.settings.input_topic,
            (b"k", article("aborted", TEXT)),
            (b"k", article("committed", TEXT)),
        )
    )
    start_worker(tenant).wait_ready()
    out = collect_until(
        tenant.kafka,
        tenant.outputs,
        lambda out: "committed" in _ids(out),
        isolation_level="read_committed",
    )
    # (one partition, decided and published in order: a verdict for the aborted message
    # would have come before this one)
    assert _ids(out) == ["committed"]
    [verdict] = out["unique"]  # not a copy of the aborted message: that never was indexed
    assert verdict["id"] == "committed"
