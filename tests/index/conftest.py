from __future__ import annotations

import itertools
import uuid
from collections.abc import AsyncIterator, Callable

import pytest
import redis.asyncio as aioredis

from worker.index import Index, MemoryIndex, RedisIndex
from worker.layouts import Layout, pigeonhole

MakeIndex = Callable[..., Index]


def _layout(threshold: int | Layout) -> Layout:
    return threshold if isinstance(threshold, Layout) else pigeonhole(threshold)


@pytest.fixture(params=["memory", "redis"])
async def make_index(request: pytest.FixtureRequest) -> AsyncIterator[MakeIndex]:
    """Builds indexes of one kind; the contract tests run once against each kind.
    make_index(k) builds the pigeonhole layout at threshold k; make_index(layout) any other."""
    if request.param == "memory":
        ticks = itertools.count(1_700_000_000_000, 5)
        yield lambda threshold=3, **kw: MemoryIndex(_layout(threshold),
                                                    clock_ms=lambda: next(ticks), **kw)
        return
    client = aioredis.Redis.from_url(request.getfixturevalue("redis_url"))
    await client.flushdb()
    namespace = uuid.uuid4().hex[:8]
    yield lambda threshold=3, **kw: RedisIndex(client, namespace, _layout(threshold), **kw)
    await client.aclose()
