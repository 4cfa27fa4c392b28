from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from tests.integration.harness import Stack, WorkerProcess
from tests.services import kafka_service, redis_cluster_service, redis_service


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_service() as url:
        yield url


@pytest.fixture(scope="session")
def redis_cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One node's URL of a real 3-node Redis Cluster."""
    with redis_cluster_service(tmp_path_factory.mktemp("cluster")) as url:
        yield url


@pytest.fixture(scope="session")
def kafka_bootstrap() -> Iterator[str]:
    with kafka_service() as bootstrap:
        yield bootstrap


@pytest.fixture
async def redis_client(redis_url: str) -> AsyncIterator[aioredis.Redis]:
    """A client on a wiped database."""
    client = aioredis.Redis.from_url(redis_url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def unique_name() -> str:
    return uuid.uuid4().hex[:10]


@pytest.fixture
def stack(kafka_bootstrap: str, redis_url: str) -> Stack:
    """Fresh topics, namespace and consumer group on the session's Kafka and Redis."""
    stack = Stack(kafka_bootstrap, redis_url, f"t{uuid.uuid4().hex[:8]}")
    stack.create_topics()
    return stack


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[Stack], WorkerProcess]]:
    """Starts worker processes; stops whichever still run when the test ends."""
    started: list[WorkerProcess] = []

    def start(stack: Stack) -> WorkerProcess:
        worker = WorkerProcess(stack, tmp_path / f"worker-{len(started)}.log")
        started.append(worker)
        return worker

    yield start
    for worker in started:
        worker.stop()
