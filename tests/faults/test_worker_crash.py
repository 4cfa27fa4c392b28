from __future__ import annotations

from collections.abc import Callable

import pytest

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


@pytest.mark.parametrize("layout", ["auto", "bands:16x4"])
def test_kill_9_one_of_two_workers_mid_stream(
    layout: str, tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    tenant.extra_env["DEDUP_LAYOUT"] = layout  # (SimHash tables, or the band index)
    articles = make_articles(10_000, seed=5)  # 10% exact copies, 5% one-word edits
    workers = start_group(start_worker, tenant, 2)

    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles))
    collect_until(
        tenant.kafka, tenant.outputs, lambda out: len(out.get("unique", [])) >= 2500, quiet=0
    )
    workers[0].kill()
    replacement = start_worker(tenant)
    replacement.wait_ready()

    ids = {a["id"] for a in articles}
    out = collect_until(tenant.kafka, tenant.outputs, covers(ids), timeout=180, quiet=5)
    repeats = assert_guarantees(out, articles)
    print(f"{repeats} verdicts were repeated after the kill (at-least-once)")
    assert workers[1].proc.poll() is None
    assert replacement.proc.poll() is None


def test_sigterm_finishes_the_batch_commits_and_exits(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    articles = make_articles(10_000, seed=7)
    [worker] = start_group(start_worker, tenant, 1)
    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles))
    collect_until(
        tenant.kafka, tenant.outputs, lambda out: len(out.get("unique", [])) >= 2500, quiet=0
    )
    worker.stop()  # SIGTERM, as docker stop and Kubernetes send
    assert worker.proc.returncode == 0, worker.log()[-3000:]
    replacement = start_worker(tenant)
    replacement.wait_ready()

    ids = {a["id"] for a in articles}
    out = collect_until(tenant.kafka, tenant.outputs, covers(ids), timeout=180, quiet=5)
    assert assert_guarantees(out, articles) == 0, "the stopped worker left verdicts uncommitted"
