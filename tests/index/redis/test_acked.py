"""Verdicts given out only once replicas hold their decisions (DEDUP_REDIS_REPLICAS_ACKED); on
a real cluster through a failover and a partition: test_cluster_faults.py."""

from __future__ import annotations

import random

import pytest

from tests.support.factories import BASE, probe
from worker.errors import IndexUnavailable
from worker.index.redis import RedisIndex
from worker.index.redis.client import connect
from worker.model import Kind


async def test_without_the_replicas_asked_for_the_batch_is_tried_again_and_then_replays(
    redis_url: str,
) -> None:
    namespace = f"acked-{random.getrandbits(32):x}"
    # (the test Redis has no replica)
    waiting = RedisIndex(connect(redis_url), namespace, replicas_acked=1)
    with pytest.raises(IndexUnavailable, match="0 of the 1 replicas"):
        await waiting.check_and_insert([probe("story", BASE)])
    await waiting.close()
    at_once = RedisIndex(connect(redis_url), namespace)
    [again] = await at_once.check_and_insert([probe("story", BASE)])
    assert again.kind is Kind.UNIQUE
    assert again.replayed  # (what the primary holds: its first verdict, never given out)
    await at_once.close()
