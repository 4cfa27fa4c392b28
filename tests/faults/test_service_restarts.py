"""Redis and Kafka go away mid-stream and come back: the worker waits, retries, drops nothing."""

from __future__ import annotations

import time
from collections.abc import Callable

from tests.support.checks import assert_guarantees, covers
from tests.support.corpus import make_articles
from tests.support.factories import keyed
from tests.support.services import PrivateServices
from tests.support.tenant import Outputs, Tenant, WorkerProcess, collect_until, produce


def total(out: Outputs) -> int:
    return sum(map(len, out.values()))


def test_redis_stops_mid_stream_and_comes_back(
    kafka_bootstrap: str,
    private_redis: PrivateServices,
    make_tenant: Callable[[str, str], Tenant],
    start_worker: Callable[[Tenant], WorkerProcess],
) -> None:
    tenant = make_tenant(kafka_bootstrap, private_redis.redis_url)
    articles = make_articles(6_000, seed=11)
    worker = start_worker(tenant)
    worker.wait_ready()
    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles[:3_000]))
    collect_until(tenant.kafka, tenant.outputs, lambda out: total(out) >= 1500, quiet=0)

    private_redis.run("down", "redis")  # SHUTDOWN: the AOF is written out
    # The rest arrives while Redis is down (the worker could otherwise finish the first part
    # before the shutdown is done).
    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles[3_000:]))
    time.sleep(1)
    stalled = total(collect_until(tenant.kafka, tenant.outputs, lambda out: True, quiet=1))
    time.sleep(4)
    still = total(collect_until(tenant.kafka, tenant.outputs, lambda out: True, quiet=1))
    assert still == stalled < len(articles), "no verdict can be made without the index"
    assert worker.proc.poll() is None, "the worker waits for Redis instead of dying"
    assert "index failed" in worker.log()
    assert "trying the batch again" in worker.log()

    private_redis.run("up", "redis")  # same data dir: the index comes back from its AOF
    assert int(private_redis.redis_cli("hlen", f"dedup:{{{tenant.name}}}:docs")) >= stalled
    out = collect_until(
        tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), timeout=180, quiet=3
    )
    assert_guarantees(out, articles)


def test_kafka_restarts_mid_stream(
    redis_url: str,
    private_kafka: PrivateServices,
    make_tenant: Callable[[str, str], Tenant],
    start_worker: Callable[[Tenant], WorkerProcess],
) -> None:
    tenant = make_tenant(private_kafka.kafka, redis_url)
    articles = make_articles(6_000, seed=13)
    worker = start_worker(tenant)
    worker.wait_ready()
    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles))
    collect_until(tenant.kafka, tenant.outputs, lambda out: total(out) >= 1500, quiet=0)

    private_kafka.run("down", "kafka")
    time.sleep(3)
    private_kafka.run("up", "kafka")

    out = collect_until(
        tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), timeout=240, quiet=3
    )
    repeats = assert_guarantees(out, articles)
    print(f"{repeats} verdicts were repeated after the broker restart")
    assert worker.proc.poll() is None, "the worker recovers without a manual step"
