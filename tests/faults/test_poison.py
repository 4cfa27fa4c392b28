"""An index that refuses every batch (here a counter that is no longer a number, so that the
scripts fail on every call) stops the worker loudly after a few tries, and the batch it could
not decide is not skipped: a worker started once the index is repaired gives it its verdicts."""

from __future__ import annotations

from collections.abc import Callable

import redis

from tests.support.checks import assert_guarantees, covers
from tests.support.corpus import make_articles
from tests.support.factories import keyed
from tests.support.tenant import Tenant, WorkerProcess, collect_until, produce
from worker.index.redis.keys import NamespaceKeys
from worker.stream.app import EXIT_STOPPED


def test_a_refusing_index_stops_the_worker_and_loses_nothing(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    articles = make_articles(40, seed=9)
    first, later = articles[:20], articles[20:]
    worker = start_worker(tenant)
    worker.wait_ready()
    produce(tenant.kafka, tenant.settings.input_topic, keyed(first))
    collect_until(tenant.kafka, tenant.outputs, covers({a["id"] for a in first}), timeout=60)

    client = redis.Redis.from_url(tenant.redis_url)
    counter = NamespaceKeys(tenant.settings.namespace).seq
    kept = client.get(counter)
    client.set(counter, "not a number")
    produce(tenant.kafka, tenant.settings.input_topic, keyed(later))
    assert worker.proc.wait(60) == EXIT_STOPPED
    assert "the worker stops" in worker.log()

    client.set(counter, kept or b"0")
    replacement = start_worker(tenant)
    replacement.wait_ready()
    out = collect_until(
        tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), timeout=90, quiet=3
    )
    assert_guarantees(out, articles)
