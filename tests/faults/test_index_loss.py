"""The index lost under running workers: emptied (FLUSHDB), gone with a Redis restarted without
its data, rolled back by a restart from an append-only file that lost its last part, or moved
to a replica promoted when its primary stopped (whatever the replica had not received yet is
lost). The
workers notice and say so, keep going, and never call a copy of an article the index still
holds unique; what the index lost is no longer matched."""

from __future__ import annotations

import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import redis

from tests.support.checks import assert_guarantees, covers, flush, total
from tests.support.corpus import make_articles
from tests.support.factories import keyed
from tests.support.proxy import proxy
from tests.support.services import PrivateServices, free_port
from tests.support.tenant import (
    Tenant,
    WorkerProcess,
    collect_until,
    produce,
    start_group,
)
from worker.pipeline.outputs import iso_time


def now() -> str:
    """This machine's time (Redis's clock too: it runs here), for a moment Redis is down."""
    return iso_time(int(time.time() * 1000))


def trickle(tenant: Tenant, messages: list[tuple[bytes | None, bytes | None, int | None]]) -> None:
    """The messages in groups of 100, ten groups a second."""
    for start in range(0, len(messages), 100):
        produce(tenant.kafka, tenant.settings.input_topic, messages[start : start + 100])
        time.sleep(0.1)


def lose_the_index_mid_stream(
    tenant: Tenant,
    start_worker: Callable[[Tenant], WorkerProcess],
    lose: Callable[[], str],
    said: str | None = "emptied or built again",
) -> None:
    """Two workers on a stream of a few thousand articles (10% exact copies, 5% one-word
    edits): a quarter at once, the rest a little at a time while the index is lost, after the
    first quarter's verdicts (`lose` returns when: no decision is made on the index as it was
    after that); then every guarantee is checked across the loss."""
    articles = make_articles(4_000, seed=13)
    messages = keyed(articles)
    workers = start_group(start_worker, tenant, 2)
    produce(tenant.kafka, tenant.settings.input_topic, messages[:1000])
    collect_until(tenant.kafka, tenant.outputs, lambda out: total(out) >= 1000, quiet=0)
    feeding = threading.Thread(target=trickle, args=(tenant, messages[1000:]))
    feeding.start()
    try:
        reset_at = lose()
    finally:
        feeding.join()
    out = collect_until(
        tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), timeout=180, quiet=3
    )
    assert_guarantees(out, articles, reset_at=reset_at)
    assert all(w.proc.poll() is None for w in workers), "a worker stopped"
    if said is not None:
        assert any(said in w.log() for w in workers), "nobody said so"


def test_the_index_flushed_mid_stream(
    tenant: Tenant, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    lose_the_index_mid_stream(tenant, start_worker, lambda: flush(tenant.redis_url))


def test_redis_restarted_without_its_data_mid_stream(
    kafka_bootstrap: str,
    private_redis: PrivateServices,
    make_tenant: Callable[[str, str], Tenant],
    start_worker: Callable[[Tenant], WorkerProcess],
) -> None:
    def restart_empty() -> str:
        private_redis.run("down", "redis")
        private_redis.run("wipe")
        at = now()
        private_redis.run("up", "redis")
        return at

    tenant = make_tenant(kafka_bootstrap, private_redis.redis_url)
    lose_the_index_mid_stream(tenant, start_worker, restart_empty)


def test_redis_restarted_from_an_aof_that_lost_its_last_writes(
    kafka_bootstrap: str,
    private_redis: PrivateServices,
    make_tenant: Callable[[str, str], Tenant],
    start_worker: Callable[[Tenant], WorkerProcess],
) -> None:
    # As when the machine crashes with appendfsync everysec, or a replica that lagged is
    # promoted: the index goes back to an earlier state, behind the workers' caches.
    def restart_rolled_back() -> str:
        private_redis.run("down", "redis")
        at = now()
        [aof] = (private_redis.state / "redis" / "appendonlydir").glob("*.incr.aof")
        aof.write_bytes(aof.read_bytes()[: aof.stat().st_size // 2])  # (Redis drops a torn end)
        private_redis.run("up", "redis")
        return at

    tenant = make_tenant(kafka_bootstrap, private_redis.redis_url)
    lose_the_index_mid_stream(tenant, start_worker, restart_rolled_back, said="lost writes")


def test_a_replica_promoted_when_the_primary_stops_mid_stream(
    kafka_bootstrap: str,
    private_redis: PrivateServices,
    make_tenant: Callable[[str, str], Tenant],
    start_worker: Callable[[Tenant], WorkerProcess],
    tmp_path: Path,
) -> None:
    primary = int(private_redis.env["DEDUP_STACK_REDIS_PORT"])
    replica = free_port()
    subprocess.run(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(replica), "--dir", str(tmp_path),
         "--replicaof", "127.0.0.1", str(primary), "--save", "", "--appendonly", "no",
         "--daemonize", "yes", "--pidfile", str(tmp_path / "replica.pid")],
        check=True,
    )  # fmt: skip
    replica_client = redis.Redis(port=replica)
    try:
        deadline = time.monotonic() + 30
        while replica_client.info("replication")["master_link_status"] != "up":
            assert time.monotonic() < deadline, "the replica did not catch up"
            time.sleep(0.2)
        with proxy(primary) as address:  # the one address the workers know

            def fail_over() -> str:
                private_redis.run("down", "redis")
                at = now()
                replica_client.replicaof("NO", "ONE")
                address.switch(replica)
                return at

            tenant = make_tenant(kafka_bootstrap, f"redis://127.0.0.1:{address.port}/0")
            lose_the_index_mid_stream(tenant, start_worker, fail_over, said=None)
    finally:
        replica_client.shutdown(nosave=True)
