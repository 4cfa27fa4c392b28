from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from worker.index import Index, MemoryIndex, sealed
from worker.index.base import IndexOptions
from worker.index.redis import RedisBandIndex, RedisIndex
from worker.index.redis.client import Client, connect
from worker.layout.bands import Bands
from worker.layout.tables import Layout, pigeonhole

MakeIndex = Callable[..., Index]


def _layout(layout: int | Layout) -> Layout:
    return layout if isinstance(layout, Layout) else pigeonhole(layout)


@pytest.fixture(
    params=[
        "memory",
        "memory-bands",
        "memory-sealed-bands",
        pytest.param("redis", marks=pytest.mark.services),
        pytest.param("redis-numpy-cache", marks=pytest.mark.services),
        pytest.param("redis-no-cache", marks=pytest.mark.services),
        pytest.param("redis-bands", marks=pytest.mark.services),
        pytest.param("cluster", marks=pytest.mark.services),
        pytest.param("cluster-bands", marks=pytest.mark.services),
    ]
)
async def make_index(request: pytest.FixtureRequest) -> AsyncIterator[MakeIndex]:
    """Builds indexes of one kind; the contract tests run once against each kind (the memory
    index, its band postings also sealed every few postings; the Redis index on one Redis,
    with the worker's copy of the buckets in its native store and in numpy, and without a
    copy, and on a Redis Cluster of 3 primaries with a replica each).
    make_index(k) builds the pigeonhole layout at threshold k; make_index(layout) any other;
    keywords: IndexOptions's."""
    bands = request.param.endswith("bands")
    marker = request.node.get_closest_marker("candidates")
    if marker is not None and marker.args[0] != ("bands" if bands else "tables"):
        pytest.skip(f"a contract of the {marker.args[0]} layouts")
    if request.param.startswith("memory"):
        if "sealed" in request.param:  # (sealed every few postings, merged often)
            request.getfixturevalue("monkeypatch").setattr(sealed, "SEAL_POSTINGS", 7)
        ticks = itertools.count()  # real time (expiry tests wait), never the same ms twice
        yield lambda layout=3, **kw: MemoryIndex(
            Bands() if bands else _layout(layout),
            IndexOptions(**kw),
            clock_ms=lambda: int(time.time() * 1000) + next(ticks),
        )
        return
    client: Client
    if request.param.startswith("cluster"):
        client = connect(request.getfixturevalue("redis_cluster_url"), cluster=True)
    else:  # the worker's client (its packing included); tests with `redis_client` use plain
        client = connect(request.getfixturevalue("redis_url"))
        await client.flushdb()
    namespace = uuid.uuid4().hex[:8]  # a fresh index: nothing else to wipe
    cache = request.param != "redis-no-cache"
    native = request.param != "redis-numpy-cache"
    made: list[RedisIndex] = []

    def make(layout: int | Layout = 3, **kw: Any) -> Index:
        options = IndexOptions(**kw)
        if bands:
            made.append(RedisBandIndex(client, namespace, Bands(), options))
            return made[-1]
        made.append(
            RedisIndex(
                client, namespace, _layout(layout), options, bucket_cache=cache, native=native
            )
        )
        return made[-1]

    yield make
    for index in made:  # (each has a connection of its own; the client is shared)
        await index.close()
    await client.aclose()
