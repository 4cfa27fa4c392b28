"""The fixtures every test folder shares, and the `services` marker: a test that needs real
Redis or Kafka (through one of the fixtures below, or an index parameter that says so) is
marked, so that `pytest -m "not services"` (scripts/test.sh --unit) runs without them."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from tests.support.services import (
    PrivateServices,
    kafka_service,
    private_service,
    redis_cluster_service,
    redis_service,
)
from tests.support.tenant import Tenant, WorkerProcess, delete_topics

SERVICE_FIXTURES = frozenset(
    {"redis_url", "redis_cluster_url", "kafka_bootstrap", "private_redis", "private_kafka"}
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVICE_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.services)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_service() as url:
        yield url


@pytest.fixture(scope="session")
def redis_cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One node's URL of a real Redis Cluster of 3 primaries with a replica each."""
    with redis_cluster_service(tmp_path_factory.mktemp("cluster")) as url:
        yield url


@pytest.fixture(scope="session")
def tenants_made() -> list[Tenant]:
    """Every tenant the session made (make_tenant)."""
    return []


@pytest.fixture(scope="session")
def kafka_bootstrap(tenants_made: list[Tenant]) -> Iterator[str]:
    """The session's broker. At the end, the topics of the tenants made on it are deleted
    (every worker has stopped by then): a developer's broker would otherwise keep every run's."""
    with kafka_service() as bootstrap:
        yield bootstrap
        on_it = [t for t in tenants_made if t.kafka == bootstrap]
        asyncio.run(delete_topics(bootstrap, tuple(p for t in on_it for p in t.topic_prefixes)))


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client on a wiped database."""
    client = aioredis.Redis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def make_tenant(tenants_made: list[Tenant]) -> Callable[[str, str], Tenant]:
    """Fresh topics, namespace and consumer group on the given Kafka and Redis."""

    def make(kafka: str, redis_url: str) -> Tenant:
        tenant = Tenant(kafka, redis_url, f"t{uuid.uuid4().hex[:8]}")
        tenant.create_topics()
        tenants_made.append(tenant)
        return tenant

    return make


@pytest.fixture
def tenant(
    kafka_bootstrap: str, redis_url: str, make_tenant: Callable[[str, str], Tenant]
) -> Tenant:
    """Fresh topics, namespace and consumer group on the session's Kafka and Redis."""
    return make_tenant(kafka_bootstrap, redis_url)


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[Tenant], WorkerProcess]]:
    """Starts worker processes; stops whichever still run when the test ends."""
    started: list[WorkerProcess] = []

    def start(tenant: Tenant) -> WorkerProcess:
        worker = WorkerProcess(tenant, tmp_path / f"worker-{len(started)}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateServices]:
    """A Redis of the test's own, which it may stop and restart."""
    with private_service("redis", tmp_path / "stack") as services:
        yield services


@pytest.fixture
def private_kafka(tmp_path: Path) -> Iterator[PrivateServices]:
    """A Kafka broker of the test's own, which it may stop and restart."""
    with private_service("kafka", tmp_path / "stack") as services:
        yield services
