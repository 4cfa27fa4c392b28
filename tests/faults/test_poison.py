"""A batch that cannot be decided (an index that refuses every call: here a counter that is no
longer a number, so that the scripts fail) or published (a broker that refuses the alerts)
stops the worker loudly, and is not skipped: a worker started once the fault is repaired gives
it its verdicts. A message that cannot be read does neither: it is a dead letter, and the
worker goes on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import redis
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from tests.support.attacks import ATTACKS
from tests.support.checks import assert_guarantees, covers
from tests.support.corpus import make_articles
from tests.support.factories import article, keyed
from tests.support.schemas import validate
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


def _set_topic_max_bytes(kafka: str, topic: str, max_bytes: int) -> None:
    async def run() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=kafka)
        await admin.start()
        try:
            config = {"max.message.bytes": str(max_bytes)}
            await admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, topic, config)])
        finally:
            await admin.close()

    asyncio.run(run())


def test_a_refused_send_stops_the_worker_and_loses_nothing(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    # The broker refuses every alert (each is larger than the topic now allows) mid-stream:
    # the batch's verdicts cannot all be sent, so its offsets must not be committed.
    articles = make_articles(60, seed=10)  # 10% exact copies, 5% one-word edits: alerts
    first, later = articles[:20], articles[20:]
    worker = start_worker(tenant)
    worker.wait_ready()
    produce(tenant.kafka, tenant.settings.input_topic, keyed(first))
    collect_until(tenant.kafka, tenant.outputs, covers({a["id"] for a in first}), timeout=60)

    alerts = tenant.settings.duplicates_topic
    _set_topic_max_bytes(tenant.kafka, alerts, 100)
    produce(tenant.kafka, tenant.settings.input_topic, keyed(later))
    assert worker.proc.wait(90) == EXIT_STOPPED
    assert "the worker stops" in worker.log()

    _set_topic_max_bytes(tenant.kafka, alerts, tenant.settings.output_max_bytes)
    replacement = start_worker(tenant)
    replacement.wait_ready()
    out = collect_until(
        tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), timeout=90, quiet=3
    )
    assert_guarantees(out, articles)


def test_poison_mail_and_pages_are_dead_letters_and_the_worker_decides_the_rest(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    # An e-mail nested 15,000 MIME levels (its parser used to raise RecursionError, which
    # stopped every worker that took the partition), divs nested 190,000 deep (their
    # main-content extraction did not end in 300 s, holding the event loop), and an element
    # whose attributes take its parser half a minute: on one partition, among articles.
    tenant.extra_env["DEDUP_READ_TIMEOUT_MS"] = "1000"
    poison = {
        name: ATTACKS[name][0]()
        for name in ("MIME parts nested", "divs nested", "attributes of one element")
    }
    articles = make_articles(40, seed=11)
    worker = start_worker(tenant)
    worker.wait_ready()
    messages = keyed(articles[:20])
    # (ids as long as the one the attacks are sized with: each is as large as the limit allows)
    poisoned = [article(f"bad-{i:02}", text) for i, text in enumerate(poison.values())]
    messages += [(b"poison", value, 0) for value in poisoned]
    messages += keyed(articles[20:])
    produce(tenant.kafka, tenant.settings.input_topic, messages)

    out = collect_until(
        tenant.kafka,
        tenant.outputs,
        lambda got: covers({a["id"] for a in articles})(got) and len(got.get("rejected", [])) >= 3,
        timeout=90,
    )
    assert worker.proc.poll() is None, worker.log()[-3000:]
    reasons = [(letter["reason"], letter["detail"]) for letter in out["rejected"]]
    assert [reason for reason, _ in reasons] == ["too_deep", "too_deep", "timeout"], reasons
    for letter in out["rejected"]:
        validate("rejected", letter)
        assert letter["source"]["partition"] == 0
    assert_guarantees(out, articles, dead_letters=frozenset({"too_deep", "timeout"}))
