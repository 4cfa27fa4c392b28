"""Chaos in one run: while a few thousand articles with planted copies flow through two
workers, one worker is killed (-9) and replaced, Redis restarts, the index is flushed, the
broker restarts, and bad messages arrive; then every guarantee is checked: a verdict for every
article, repeated verdicts identical, no self-duplicates, no two copies both unique except
across the reported index reset, every alert naming an original that was unique, a dead letter
for every bad message; with exactly-once output, no verdict twice."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest

from tests.support.checks import assert_guarantees, covers, flush, total
from tests.support.corpus import make_articles
from tests.support.factories import keyed
from tests.support.services import PrivateServices
from tests.support.tenant import Tenant, WorkerProcess, produce, start_group
from tests.support.tenant import collect_until as collect_any

BAD: list[tuple[bytes | None, bytes | None, int | None]] = [
    (b"bad json", b'{"id": "j", "text": ', None),
    (b"bad utf-8", b'{"id": "u", "text": "caf\xe9"}', None),
    (b"empty", b"", None),
]


# As a consumer that wants exactly-once reads: read_committed (for at-least-once output,
# which has no transactions, that is every message).
collect_until = partial(collect_any, isolation_level="read_committed")


@pytest.mark.parametrize("guarantee", ["at_least_once", "exactly_once"])
def test_chaos_in_one_run(
    guarantee: str,
    private_kafka: PrivateServices,
    private_redis: PrivateServices,
    make_tenant: Callable[[str, str], Tenant],
    start_worker: Callable[[Tenant], WorkerProcess],
) -> None:
    tenant = make_tenant(private_kafka.kafka, private_redis.redis_url)
    tenant.extra_env["DEDUP_PROCESSING_GUARANTEE"] = guarantee
    articles = make_articles(4_000, seed=21)  # 10% exact copies, 5% one-word edits
    chunks = [articles[i : i + 1000] for i in range(0, len(articles), 1000)]
    topic = tenant.settings.input_topic
    workers = start_group(start_worker, tenant, 2)

    def settled(upto: list[dict[str, Any]]) -> None:
        """Every article so far has its verdict, and the workers have gone quiet."""
        ids = {a["id"] for a in upto}
        collect_until(tenant.kafka, tenant.outputs, covers(ids), timeout=240, quiet=2)

    produce(tenant.kafka, topic, keyed(chunks[0]) + BAD[:2])
    collect_until(tenant.kafka, tenant.outputs, lambda out: total(out) >= 300, quiet=0)
    workers[0].kill()  # mid-stream, nothing committed since its last second
    workers.append(start_worker(tenant))
    workers[-1].wait_ready()
    settled(chunks[0])

    produce(tenant.kafka, topic, keyed(chunks[1]) + BAD[2:])
    collect_until(tenant.kafka, tenant.outputs, lambda out: total(out) >= 1300, quiet=0)
    private_redis.run("down", "redis")  # a clean restart: the index comes back from its AOF
    time.sleep(1)
    private_redis.run("up", "redis")
    settled(chunks[0] + chunks[1])

    reset_at = flush(tenant.redis_url)
    produce(tenant.kafka, topic, keyed(chunks[2]))
    collect_until(tenant.kafka, tenant.outputs, lambda out: total(out) >= 2300, quiet=0)
    private_kafka.run("down", "kafka")
    time.sleep(2)
    private_kafka.run("up", "kafka")
    produce(tenant.kafka, topic, keyed(chunks[3]))

    out = collect_until(
        tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), timeout=300, quiet=3
    )
    repeats = assert_guarantees(
        out,
        articles,
        reset_at=reset_at,
        dead_letters=frozenset({"invalid_json", "invalid_utf8", "empty_message"}),
    )
    print(f"{repeats} verdicts were repeated ({guarantee})")
    if guarantee == "exactly_once":
        assert repeats == 0, "a verdict was repeated"
    assert all(w.proc.poll() is None for w in workers[1:]), "a worker stopped"
    assert any("emptied or built again" in w.log() for w in workers[1:]), "nobody said so"
