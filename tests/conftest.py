from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import redis.asyncio as aioredis

from tests.services import kafka_service, redis_service


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_service() as url:
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
