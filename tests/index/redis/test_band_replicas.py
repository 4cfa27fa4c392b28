"""A band index whose worker reads on a replica (DEDUP_REDIS_READ_URL): the verdicts are the
script's own search, with the replica in step and with it left behind, since what a replica
has not yet received looks to the deciding script like another worker's calls."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
import redis

from tests.support.bands import log, stream, summary, unguessed
from tests.support.services import redis_server
from worker.index.redis import RedisBandIndex
from worker.index.redis.client import connect, connect_replicas
from worker.layout.bands import Bands
from worker.model import Verdict

pytestmark = pytest.mark.services


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[redis.Redis, redis.Redis]]:
    """A primary and its replica, of their own."""
    with ExitStack() as stack:
        primary = stack.enter_context(redis_server(tmp_path / "primary"))
        replica = stack.enter_context(redis_server(tmp_path / "replica"))
        replica.replicaof("127.0.0.1", port(primary))
        yield primary, replica


def port(client: redis.Redis) -> int:
    return int(client.connection_pool.connection_kwargs["port"])


@pytest.fixture
async def indexes(
    servers: tuple[redis.Redis, redis.Redis],
) -> AsyncIterator[tuple[RedisBandIndex, RedisBandIndex]]:
    """On the primary, an index whose script searches every article, and one whose worker
    reads on the replica and guesses every batch."""
    primary, replica = servers
    url = f"redis://127.0.0.1:{port(primary)}/0"
    plain = unguessed(connect(url), "plain")
    reading = RedisBandIndex(
        connect(url),
        "reading",
        Bands(),
        expected_docs=100_000,
        guesses=True,
        replicas=connect_replicas(f"redis://127.0.0.1:{port(replica)}/0"),
    )
    yield plain, reading
    await plain.close()
    await reading.close()


def calls_of(client: redis.Redis, command: str) -> int:
    return int(client.info("commandstats").get(f"cmdstat_{command}", {}).get("calls", 0))


async def test_reads_on_a_replica_in_step_are_guessed_and_decide_as_the_script(
    servers: tuple[redis.Redis, redis.Redis],
    indexes: tuple[RedisBandIndex, RedisBandIndex],
) -> None:
    (primary, replica), (plain, reading) = servers, indexes
    probes = stream(1500, 3)
    expected: list[Verdict] = []
    got: list[Verdict] = []
    for start in range(0, len(probes), 500):
        assert primary.wait(1, 5000) == 1  # (the replica holds every write so far)
        expected += await plain.check_and_insert(probes[start : start + 500])
        got += await reading.check_and_insert(probes[start : start + 500])
    assert summary(got) == summary(expected)
    assert calls_of(replica, "evalsha_ro") > 0
    assert calls_of(primary, "evalsha_ro") == 0  # (every read went to the replica)
    # What the replica held was the index as the calls met it: every guess was taken.
    assert await log(reading.client, reading) == [(True, 0)] * 15


async def test_reads_on_a_replica_left_behind_decide_as_the_script(
    servers: tuple[redis.Redis, redis.Redis],
    indexes: tuple[RedisBandIndex, RedisBandIndex],
) -> None:
    (primary, replica), (plain, reading) = servers, indexes
    probes = stream(2000, 4)
    expected = await plain.check_and_insert(probes[:500])
    got = await reading.check_and_insert(probes[:500])
    assert primary.wait(1, 5000) == 1
    replica.replicaof("NO", "ONE")  # (it keeps what it holds and receives nothing more)
    for start in range(500, len(probes), 100):
        expected += await plain.check_and_insert(probes[start : start + 100])
        got += await reading.check_and_insert(probes[start : start + 100])
    assert summary(got) == summary(expected)
    entries = await log(reading.client, reading)
    assert entries[:5] == [(True, 0)] * 5  # (the first batch, read in step)
    # The later calls met postings the replica never had, and searched those articles.
    assert sum(strayed for _, strayed in entries[5:]) > 0


async def test_a_replica_that_fails_leaves_the_reads_to_the_primary(
    servers: tuple[redis.Redis, redis.Redis],
    indexes: tuple[RedisBandIndex, RedisBandIndex],
    caplog: pytest.LogCaptureFixture,
) -> None:
    (primary, replica), (plain, reading) = servers, indexes
    probes = stream(1500, 5)
    expected = await plain.check_and_insert(probes[:500])
    got = await reading.check_and_insert(probes[:500])
    assert calls_of(primary, "evalsha_ro") == 0
    with contextlib.suppress(redis.ConnectionError):
        replica.shutdown(nosave=True)
    for start in range(500, len(probes), 100):
        expected += await plain.check_and_insert(probes[start : start + 100])
        got += await reading.check_and_insert(probes[start : start + 100])
    assert summary(got) == summary(expected)
    assert calls_of(primary, "evalsha_ro") > 0  # (the reads went on, on the primary)
    failed = [r for r in caplog.records if "reading on the replica failed" in r.getMessage()]
    assert len(failed) == 1  # (tried again only after REPLICA_PAUSE_S)
