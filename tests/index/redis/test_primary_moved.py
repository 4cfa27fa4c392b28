"""One Redis whose primary moves to another server behind the same address, as a managed
service's failover moves its DNS name: the old primary turns replica and keeps its clients'
connections, which then meet READONLY. Each such connection is closed and its call waited out
(IndexUnavailable), and the next connection reaches the new primary, which holds the index."""

from __future__ import annotations

import asyncio
import random
from contextlib import ExitStack
from pathlib import Path

import pytest
import redis

from tests.support.factories import probe
from tests.support.proxy import proxy
from tests.support.services import redis_server
from worker.errors import IndexUnavailable
from worker.index.redis import RedisIndex
from worker.index.redis.client import connect
from worker.model import Kind, Probe, Verdict

pytestmark = pytest.mark.services


def port_of(client: redis.Redis) -> int:
    return int(client.connection_pool.connection_kwargs["port"])


async def decided(index: RedisIndex, probes: list[Probe]) -> tuple[list[Verdict], list[str]]:
    """The verdicts, once a call gets through; and why the calls before it were waited out."""
    waited: list[str] = []
    for _ in range(10):
        try:
            return await index.check_and_insert(probes), waited
        except IndexUnavailable as exc:
            waited.append(str(exc))
            await asyncio.sleep(0.1)
    raise AssertionError(f"never got through: {waited}")


async def test_a_primary_turned_replica_is_left_for_the_new_one(tmp_path: Path) -> None:
    with ExitStack() as stack:
        first = stack.enter_context(redis_server(tmp_path / "first"))
        second = stack.enter_context(redis_server(tmp_path / "second"))
        address = stack.enter_context(proxy(port_of(first)))
        index = RedisIndex(connect(f"redis://127.0.0.1:{address.port}/0"), "moved")
        fingerprints = [random.Random(n).getrandbits(64) for n in range(20)]
        stories = [probe(f"story{n}", fp) for n, fp in enumerate(fingerprints)]
        verdicts, _ = await decided(index, stories)
        assert {v.kind for v in verdicts} == {Kind.UNIQUE}
        second.replicaof("127.0.0.1", port_of(first))
        assert first.wait(1, 10_000) == 1  # (the replica holds every write so far)
        # The failover: the replica becomes the primary, the old primary its replica, and
        # the address now leads to the new one, while open connections stay with the old.
        second.replicaof("NO", "ONE")
        first.replicaof("127.0.0.1", port_of(second))
        address.switch(port_of(second), close_open=False)
        copies = [probe(f"copy{n}", fp ^ 1) for n, fp in enumerate(fingerprints)]
        verdicts, waited = await decided(index, copies)
        assert [(v.kind, v.duplicate_of) for v in verdicts] == [
            (Kind.NEAR, f"story{n}") for n in range(20)
        ]
        assert all("replica now (READONLY)" in why for why in waited), waited
        assert second.hlen(b"dedup:{moved}:docs") == 40  # (written on the new primary)
        [again], _ = await decided(index, stories[:1])
        assert (again.kind, again.replayed) == (Kind.UNIQUE, True)
        await index.close()
