"""A Redis that turns commands away for a while (a slow script of another client's past
busy-reply-threshold: BUSY; loading, a failover, a slot moving) is waited out like a Redis out
of reach, at start and mid-stream: a worker never stops for it."""

from __future__ import annotations

import asyncio
import logging
import re
from functools import partial

import pytest
import redis.asyncio as aioredis
import redis.exceptions

from tests.support.factories import BASE, probe
from tests.support.services import PrivateServices
from worker.cli.common import retry_startup
from worker.errors import IndexStoreError, IndexUnavailable
from worker.index.redis import RedisIndex
from worker.index.redis.client import RedisFailure, connect, translate
from worker.model import Kind
from worker.pipeline.in_turn import REFUSED_TRIES
from worker.stream import loop
from worker.stream.metrics import Metrics

BUSY = "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.ResponseError(BUSY),
        redis.exceptions.ResponseError(
            f"Command # 2 (EVALSHA 3f2a 5 k) of pipeline caused error: {BUSY}"
        ),
        redis.exceptions.ExecAbortError(f"Transaction discarded because of: {BUSY}"),
        redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
        redis.exceptions.ResponseError("LOADING Redis is loading the dataset in memory"),
        redis.exceptions.MasterDownError(
            "Link with MASTER is down and replica-serve-stale-data is set to 'no'."
        ),
        redis.exceptions.ResponseError(
            "MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'."
        ),
        redis.exceptions.TryAgainError("Multiple keys request during rehashing of slot"),
        redis.exceptions.ResponseError("TRYAGAIN Multiple keys request during rehashing of slot"),
        redis.exceptions.ClusterDownError("The cluster is down"),
        redis.exceptions.ResponseError("CLUSTERDOWN Hash slot not served"),
        redis.exceptions.ClusterError("TTL exhausted."),
        redis.exceptions.ResponseError("NOREPLICAS Not enough good replicas to write."),
        redis.exceptions.ResponseError(
            "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
            "persist to disk. Commands that may modify the data set are disabled"
        ),
        # (a cluster client's own, not a RedisError: no node serves the slot, as in a failover)
        redis.exceptions.SlotNotCoveredError("Command # 1 (EVALSHA) requires a slot not covered"),
    ],
)
def test_replies_that_pass_are_waited_out(error: RedisFailure) -> None:
    assert isinstance(translate(error), IndexUnavailable)


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.ResponseError("BUSYKEY Target key name already exists."),
        redis.exceptions.ResponseError("ERR Error running script: BUSY in a message"),
        redis.exceptions.OutOfMemoryError("command not allowed when used memory > 'maxmemory'."),
        redis.exceptions.ResponseError("ERR user_script:1: Script attempted to access a key"),
        redis.exceptions.AuthenticationError("invalid username-password pair"),
        redis.exceptions.RedisClusterException("Cluster mode is not enabled on this node"),
    ],
)
def test_other_replies_are_refusals(error: RedisFailure) -> None:
    translated = translate(error)
    assert type(translated) is IndexStoreError


async def test_a_slow_script_of_another_client_is_waited_out_and_the_batch_decided_after_it(
    private_redis: PrivateServices, caplog: pytest.LogCaptureFixture
) -> None:
    """Redis answers BUSY while another connection's script loops past the threshold: the
    worker's start (retry_startup) and its batch (the app's retry) wait, more often than a
    refused batch is tried, and go on once the script is killed."""
    url = private_redis.redis_url
    admin, other = aioredis.Redis.from_url(url), aioredis.Redis.from_url(url)
    await admin.config_set("busy-reply-threshold", 20)  # ms (lua-time-limit before Redis 7)
    index = RedisIndex(connect(url), "busy")
    metrics = Metrics()
    looping = asyncio.ensure_future(other.eval("while true do end", 0))
    try:
        async with asyncio.timeout(60):  # (the test's own limit)
            await _until_busy(admin)
            caplog.set_level(logging.WARNING)
            started = asyncio.ensure_future(retry_startup(index.ensure_layout, "Redis"))
            probes = [probe("a", BASE, "same text"), probe("b", BASE ^ 1, "same text")]
            turns = loop.batches_in_turn(metrics)
            decided = turns.start(partial(index.check_and_insert, probes), lambda: True)
            while _retries(metrics) < REFUSED_TRIES or "Redis not ready" not in caplog.text:
                for task in (started, decided):
                    if task.done():
                        task.result()  # (raises what stopped it)
                        pytest.fail("the index answered while Redis was busy")
                await asyncio.sleep(0.05)
        assert re.search(
            r"index failed \(Redis runs a script .*\(BUSY\): .*trying the batch again", caplog.text
        )
    finally:
        try:
            await admin.script_kill()
            with pytest.raises(redis.exceptions.ResponseError, match="killed"):
                await looping
        finally:
            for client in (admin, other):
                await client.aclose()
    await started
    verdicts = await decided
    assert verdicts is not None
    assert [v.kind for v in verdicts] == [Kind.UNIQUE, Kind.EXACT]


async def _until_busy(admin: aioredis.Redis) -> None:
    while True:
        try:
            await admin.ping()
        except redis.exceptions.ResponseError as exc:
            if str(exc).startswith("BUSY"):
                return
            raise
        await asyncio.sleep(0.01)


def _retries(metrics: Metrics) -> float:
    return metrics.registry.get_sample_value("dedup_index_retries_total") or 0.0
