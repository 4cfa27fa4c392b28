"""The worker's ticks of the expiry sweep (worker/stream/expiry.py)."""

from __future__ import annotations

import random

import pytest
import redis.asyncio as aioredis

from tests.support.factories import probe
from tests.support.records import age
from worker.index.base import IndexOptions
from worker.index.redis import RedisIndex
from worker.layout.tables import multi_index
from worker.stream import expiry


async def test_a_tick_steps_on_while_the_sweep_is_behind(redis_client: aioredis.Redis) -> None:
    index = RedisIndex(redis_client, "behind", multi_index(7, 3), IndexOptions(retention_s=86_400))
    rng = random.Random(4)
    probes = [probe(f"a{i}", rng.getrandbits(64)) for i in range(1000)]
    await index.check_and_insert(probes)
    await age(redis_client, index.keys, [p.id for p in probes[:700]])
    assert await expiry.sweep(index, step=100, budget_s=60) == 700
    assert await expiry.sweep(index, step=100, budget_s=60) == 0


class Counted:
    """An index whose steps remove what it is told, in turn, each taking a second of a
    clock of its own."""

    def __init__(self, steps: list[int]) -> None:
        self.steps, self.calls = steps, 0

    async def expire(self, limit: int = 1000) -> int:
        self.calls += 1
        return self.steps.pop(0)

    def clock(self) -> float:
        return float(self.calls)


@pytest.mark.parametrize(
    ("steps", "calls", "removed"),
    [([0], 1, 0), ([100, 100, 40], 3, 240), ([100] * 30, 5, 500)],
)
async def test_a_tick_stops_at_a_step_short_of_its_limit_or_past_its_budget(
    steps: list[int], calls: int, removed: int
) -> None:
    index = Counted(list(steps))
    assert await expiry.sweep(index, step=100, budget_s=5, clock=index.clock) == removed
    assert index.calls == calls
