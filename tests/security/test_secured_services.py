"""The worker on secured services, for real: Kafka with a SASL_PLAINTEXT listener (PLAIN),
Redis with requirepass and an ACL user. Secrets never reach the logs or the dead letters."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.checks import assert_guarantees, covers
from tests.support.corpus import make_articles
from tests.support.factories import keyed
from tests.support.services import PrivateServices, free_port, private_service
from tests.support.tenant import Tenant, WorkerProcess, collect_until, produce
from worker.index.redis.client import REDIS_ACL_COMMANDS

pytestmark = pytest.mark.services  # (its services are its own: the `secured` fixture)

KAFKA_PASSWORD = "kafka-pw-" + uuid.uuid4().hex[:8]
REDIS_ADMIN_PASSWORD = "admin-pw-" + uuid.uuid4().hex[:8]
REDIS_PASSWORD = "redis-pw-" + uuid.uuid4().hex[:8]
SECRETS = (KAFKA_PASSWORD, REDIS_ADMIN_PASSWORD, REDIS_PASSWORD)


@pytest.fixture
def secured(tmp_path: Path) -> Iterator[PrivateServices]:
    """One private broker with a plain and a SASL listener, and a password-protected Redis
    with a user `dedup` allowed only the project's keys and commands."""
    sasl_port = free_port()
    with (
        private_service(
            "kafka",
            tmp_path / "stack",
            DEDUP_STACK_SASL_PORT=str(sasl_port),
            DEDUP_STACK_SASL_PASSWORD=KAFKA_PASSWORD,
        ) as services,
        services.started("redis"),
    ):
        services.sasl = f"127.0.0.1:{sasl_port}"  # type: ignore[attr-defined]
        # exactly the rights the error message and docs/operations.md tell users to grant
        services.redis_cli(
            "ACL",
            "SETUSER",
            "dedup",
            "on",
            f">{REDIS_PASSWORD}",
            "~dedup:*",
            *REDIS_ACL_COMMANDS.split(),
        )
        services.redis_cli("ACL", "SETUSER", "reader", "on", ">reader-pw", "~*", "+@read")
        services.redis_cli("CONFIG", "SET", "requirepass", REDIS_ADMIN_PASSWORD)
        yield services
        services.redis_cli(
            "-a", REDIS_ADMIN_PASSWORD, "--no-auth-warning", "CONFIG", "SET", "requirepass", ""
        )


def _secured_tenant(
    services: PrivateServices,
    redis_user: str,
    redis_password: str,
    kafka_password: str = KAFKA_PASSWORD,
) -> Tenant:
    """Topics created over the plain listener (the test's own tools); the worker is told to
    use the SASL listener and the ACL user."""
    port = services.env["DEDUP_STACK_REDIS_PORT"]
    tenant = Tenant(
        services.kafka,
        f"redis://{redis_user}:{redis_password}@127.0.0.1:{port}/0",
        f"s{uuid.uuid4().hex[:8]}",
    )
    tenant.create_topics()
    tenant.extra_env.update(
        {
            "DEDUP_KAFKA_BOOTSTRAP": services.sasl,  # type: ignore[attr-defined]
            "DEDUP_KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
            "DEDUP_KAFKA_SASL_MECHANISM": "PLAIN",
            "DEDUP_KAFKA_USERNAME": "dedup",
            "DEDUP_KAFKA_PASSWORD": kafka_password,
            "DEDUP_LOG_LEVEL": "debug",  # the most a log can say, and still no secret
        }
    )
    return tenant


def _no_secrets(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, "a secret reached the output"


def test_worker_on_sasl_kafka_and_acl_redis(
    secured: PrivateServices, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    tenant = _secured_tenant(secured, "dedup", REDIS_PASSWORD)
    articles = make_articles(300, seed=3)
    worker = start_worker(tenant)
    worker.wait_ready()
    bad = [(b"k", b"{not json " + KAFKA_PASSWORD.encode(), None)]  # a secret-looking payload
    produce(tenant.kafka, tenant.settings.input_topic, keyed(articles))
    out = collect_until(tenant.kafka, tenant.outputs, covers({a["id"] for a in articles}), quiet=2)
    assert_guarantees(out, articles)
    # A tombstone and a replacement: the ACL user's rights cover removing entries too.
    first = articles[0]["id"]
    changes = [
        (first.encode(), json.dumps({"id": first, "op": "delete"}).encode(), None),
        (b"k2", json.dumps({"id": articles[1]["id"], "text": "new text " * 30}).encode(), None),
    ]
    produce(tenant.kafka, tenant.settings.input_topic, changes + bad)
    done = collect_until(tenant.kafka, tenant.outputs, lambda o: bool(o.get("rejected")), quiet=1)
    assert done["rejected"][0]["reason"] == "invalid_json"
    assert done["unique_tombstones"] == [first]
    _no_secrets(worker.log())
    assert "sasl" in worker.log().lower()  # it did authenticate, at debug level, quietly


def test_wrong_kafka_password_is_a_clear_error(
    secured: PrivateServices, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    tenant = _secured_tenant(secured, "dedup", REDIS_PASSWORD, kafka_password="wrong-password")
    worker = start_worker(tenant)
    assert worker.proc.wait(30) != 0, "a refused password is not retried"
    log = worker.log()
    assert "Kafka refused the credentials" in log, log[-2000:]
    _no_secrets(log)


def test_redis_user_without_rights_is_refused_with_a_clear_error(
    secured: PrivateServices, start_worker: Callable[[Tenant], WorkerProcess]
) -> None:
    tenant = _secured_tenant(secured, "reader", "reader-pw")
    worker = start_worker(tenant)
    assert worker.proc.wait(120) != 0
    log = worker.log()
    assert "the Redis user lacks a permission" in log, log[-2000:]
    assert "grant it" in log, log[-2000:]
    assert "Traceback" not in log
    _no_secrets(log)
