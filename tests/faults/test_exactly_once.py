from __future__ import annotations

from collections.abc import Callable

from tests.support.checks import assert_guarantees, covers
from tests.support.corpus import make_articles
from tests.support.factories import keyed
from tests.support.tenant import (
    Tenant,
    WorkerProcess,
    collect_until,
    produce,
    start_group,
)


def test_kill_9_mid_stream_repeats_no_verdict_for_a_read_committed_consumer(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    tenant.extra_env["DEDUP_PROCESSING_GUARANTEE"] = "exactly_once"
    articles = make_articles(10_000, seed=6)  # 10% exact copies, 5% one-word edits
    workers = start_group(start_worker, tenant, 2)

    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles))
    collect_until(
        tenant.kafka,
        tenant.outputs,
        lambda out: len(out.get("unique", [])) >= 2500,
        quiet=0,
        isolation_level="read_committed",
    )
    workers[0].kill()  # mid-transaction or between two: either way, nothing shows twice
    replacement = start_worker(tenant)
    replacement.wait_ready()

    ids = {a["id"] for a in articles}
    out = collect_until(
        tenant.kafka,
        tenant.outputs,
        covers(ids),
        timeout=180,
        quiet=5,
        isolation_level="read_committed",
    )
    assert assert_guarantees(out, articles) == 0, "a verdict was repeated"
    assert workers[1].proc.poll() is None
    assert replacement.proc.poll() is None
