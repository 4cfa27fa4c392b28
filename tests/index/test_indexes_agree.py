"""The Redis index and the in-memory index reach the same verdicts under every layout family,
on a stream with planted near-duplicates at every distance (sampled layouts included: they
miss the same pairs, since both probe the same keys)."""

from __future__ import annotations

import pytest
import redis.asyncio as aioredis

from tests.support.factories import planted
from worker.index import MemoryIndex
from worker.index.redis import RedisIndex
from worker.layout.tables import Layout, blocks, multi_index, pigeonhole, sampled


@pytest.mark.parametrize(
    "layout", [pigeonhole(5), multi_index(5, 3), blocks(5, 8), sampled(5, 6, 12)], ids=Layout.name
)
async def test_redis_and_memory_agree(redis_client: aioredis.Redis, layout: Layout) -> None:
    """In one batch (the script compares what the batch inserted after the worker's read) and
    one article at a time (then the worker compares every candidate, the same entries as the
    in-memory index)."""
    probes = planted(3, layout.search_radius)
    memory = await MemoryIndex(layout).check_and_insert(probes)
    batch = await RedisIndex(redis_client, "agree", layout).check_and_insert(probes)
    single = RedisIndex(redis_client, "agree-single", layout)
    one_by_one = [v for p in probes for v in await single.check_and_insert([p])]
    summary = [(v.kind, v.duplicate_of, v.distance, v.candidates) for v in memory]
    assert summary == [(v.kind, v.duplicate_of, v.distance, v.candidates) for v in one_by_one]
    assert [s[:3] for s in summary] == [(v.kind, v.duplicate_of, v.distance) for v in batch]
    assert len(summary) == len(probes)
    assert sum(v.duplicate_of is not None for v in memory) > 100
