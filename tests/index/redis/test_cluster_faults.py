"""Faults of a real Redis Cluster (3 primaries, each with a replica; a private one per test,
started by stack/local-stack.sh) while two clients decide copies of the same stories at once,
as two workers would: a primary failing over to its replica, a primary killed, the
namespace's slot moved to another primary. After each, no pair is both unique, each copy
names its story, and every article sent again gets its first verdict."""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from tests.support.factories import flip, probe
from tests.support.services import redis_cluster_service
from worker.errors import IndexUnavailable
from worker.index.redis import RedisBandIndex, RedisIndex
from worker.index.redis.client import Client, connect
from worker.index.redis.keys import NamespaceKeys
from worker.layout.bands import Bands
from worker.model import Kind, Probe, Verdict

# How long a test waits for the cluster to serve the namespace again (a killed primary is
# failed over after the stack's cluster-node-timeout, 3 s).
SERVED_AGAIN_S = 60.0

Index = RedisIndex | RedisBandIndex


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[str]:
    with redis_cluster_service(tmp_path) as url:
        yield url


Make = Callable[[Client, str, int], Index]  # (client, namespace, replicas_acked)


@pytest.fixture(params=["tables", "bands"])
def make(request: pytest.FixtureRequest) -> Make:
    if request.param == "tables":
        return lambda client, namespace, acked: RedisIndex(client, namespace, replicas_acked=acked)
    return lambda client, namespace, acked: RedisBandIndex(
        client, namespace, Bands(16, 4), replicas_acked=acked
    )


def stories(n: int, seed: int, name: str = "s") -> list[tuple[Probe, Probe]]:
    """n stories, each with a copy a few bits and sketch bins away."""
    rng = random.Random(seed)
    pairs = []
    for i in range(n):
        fp = rng.getrandbits(64)
        sketch = rng.randbytes(64)
        copy = bytearray(sketch)
        copy[i % 64] ^= 0xFF
        pairs.append(
            (
                probe(f"{name}{i}", fp, sketch=sketch),
                probe(f"{name}{i}-copy", flip(fp, [i % 64]), sketch=bytes(copy)),
            )
        )
    return pairs


async def decide(index: Index, article: Probe) -> Verdict:
    """The article's verdict, the call tried again while the index is unavailable (as the
    worker tries a batch again)."""
    deadline = asyncio.get_running_loop().time() + SERVED_AGAIN_S
    while True:
        try:
            [verdict] = await index.check_and_insert([article])
        except IndexUnavailable:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.1)
        else:
            assert isinstance(verdict, Verdict)
            return verdict


@asynccontextmanager
async def two_clients(
    url: str, make: Make, namespace: str, replicas_acked: int = 0
) -> AsyncIterator[tuple[list[Index], Client]]:
    """Two indexes of the namespace on clients of their own, as two workers have, and a third
    client for the fault; all closed after, whatever happened."""
    clients = [connect(url, cluster=True) for _ in range(3)]
    indexes = [make(c, namespace, replicas_acked) for c in clients[:2]]
    try:
        yield indexes, clients[2]
    finally:
        for index in indexes:
            await index.close()
        await clients[2].aclose()


async def decided_through(
    url: str,
    make: Make,
    fault: Callable[[Client, str], Awaitable[None]],
    replicas_acked: int = 0,
) -> None:
    """Two clients decide 300 stories and their copies (one the stories, one the copies, at
    once) while `fault` runs; then every guarantee is checked."""
    namespace = f"faults-{random.getrandbits(32):x}"
    async with two_clients(url, make, namespace, replicas_acked) as (indexes, spare):
        pairs = stories(300, seed=1)
        firsts, copies = await race(indexes, pairs, fault(spare, namespace))
        await check(indexes[0], pairs, firsts, copies)


async def race(
    indexes: Sequence[Index], pairs: Sequence[tuple[Probe, Probe]], fault: Awaitable[None]
) -> tuple[list[Verdict], list[Verdict]]:
    """The stories decided by one index, their copies by the other, at once; `fault` half a
    second in."""

    async def side(s: int) -> list[Verdict]:
        return [await decide(indexes[s], pair[s]) for pair in pairs]

    async def later() -> None:
        await asyncio.sleep(0.5)
        await fault

    firsts, copies, _ = await asyncio.gather(side(0), side(1), later())
    return firsts, copies


async def check(
    index: Index,
    pairs: Sequence[tuple[Probe, Probe]],
    firsts: Sequence[Verdict],
    copies: Sequence[Verdict],
) -> None:
    """No pair both unique, each copy names its story (or the story its copy), and every
    article sent again gets its first verdict."""
    for x, y in zip(firsts, copies, strict=True):
        assert [x.kind, y.kind].count(Kind.UNIQUE) == 1, (x, y)
        first, second = (x, y) if x.kind is Kind.UNIQUE else (y, x)
        assert second.kind is Kind.NEAR, (x, y)
        assert second.duplicate_of == first.id, (x, y)
    for (story, copy), x, y in zip(pairs, firsts, copies, strict=True):
        for article, verdict in ((story, x), (copy, y)):
            again = await decide(index, article)
            assert again.replayed, again
            assert (again.kind, again.duplicate_of) == (verdict.kind, verdict.duplicate_of)


@dataclass(frozen=True)
class Node:
    id: str
    host: str
    port: int
    primary: bool
    primary_id: str  # a replica's primary ("-" for a primary)
    slots: list[tuple[int, int]]

    def serves(self, slot: int) -> bool:
        return any(low <= slot <= high for low, high in self.slots)

    def connect(self) -> aioredis.Redis:
        node = aioredis.Redis(host=self.host, port=self.port)
        # (redis-py decodes the key names; some of the index's are binary)
        node.set_response_callback("CLUSTER GETKEYSINSLOT", lambda keys, **_: keys)
        return node


async def nodes(client: Client) -> list[Node]:
    """The cluster's live nodes, as one of them sees them (CLUSTER NODES)."""
    some = client.get_random_node()
    one = aioredis.Redis(host=some.host, port=some.port)
    rows = await command(one, "CLUSTER NODES")
    await one.aclose()
    return [
        Node(
            row["node_id"],
            address.rsplit(":", 1)[0],
            int(address.rsplit(":", 1)[1]),
            "master" in row["flags"],
            row["master_id"],
            [(int(s[0]), int(s[-1])) for s in row["slots"]],
        )
        for address, row in rows.items()
        if "fail" not in row["flags"]
    ]


async def roles(client: Client, namespace: str) -> tuple[Node, Node, list[Node]]:
    """The node serving the namespace's slot, its replica, and the other primaries."""
    slot = int(await client.cluster_keyslot(NamespaceKeys(namespace).meta))
    every = await nodes(client)
    primary = next(n for n in every if n.primary and n.serves(slot))
    replica = next(n for n in every if n.primary_id == primary.id)
    others = [n for n in every if n.primary and n is not primary]
    return primary, replica, others


async def test_a_primary_failing_over_to_its_replica_mid_stream(cluster: str, make: Make) -> None:
    async def failover(client: Client, namespace: str) -> None:
        _, replica, _ = await roles(client, namespace)
        node = replica.connect()
        assert await command(node, "CLUSTER FAILOVER")
        await node.aclose()

    await decided_through(cluster, make, failover)


async def test_a_primary_killed_mid_stream_and_its_replica_taking_over(
    cluster: str, make: Make
) -> None:
    async def kill(client: Client, namespace: str) -> None:
        primary, _, _ = await roles(client, namespace)
        node = primary.connect()
        pid = int((await node.info("server"))["process_id"])
        await node.aclose()
        os.kill(pid, signal.SIGKILL)

    await decided_through(cluster, make, kill)


@pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("iptables") is None, reason="cuts a node off with iptables"
)
async def test_a_primary_cut_off_from_the_cluster_but_not_from_the_workers(
    cluster: str, make: Make
) -> None:
    """A network partition that leaves the workers on the primary's side: it goes on deciding
    until it notices, and its replica is promoted without those decisions. With
    DEDUP_REDIS_REPLICAS_ACKED=1 none of them was given out."""

    async def cut_off(client: Client, namespace: str) -> None:
        primary, _, _ = await roles(client, namespace)
        # (what goes to a node's own ports, its clients' and its cluster bus: other tests'
        # clusters share the addresses)
        rules = [
            [
                *("-s", a.host, "-d", b.host, "-p", "tcp", "-m", "multiport", "--dports"),
                *(f"{b.port},{b.port + 10_000}", "-j", "DROP"),
            ]
            for other in await nodes(client)
            if other.host != primary.host
            for a, b in ((primary, other), (other, primary))
        ]
        for rule in rules:
            await iptables("-I", "INPUT", *rule)
        try:
            await asyncio.sleep(8)  # (past the stack's cluster-node-timeout: a failover)
        finally:
            for rule in rules:
                await iptables("-D", "INPUT", *rule)

    await decided_through(cluster, make, cut_off, replicas_acked=1)


async def test_a_primary_restarted_empty_is_noticed_and_the_clients_go_on(
    cluster: str, make: Make
) -> None:
    """Killed and started again without its data before its replica takes over, a primary
    serves its slots empty and its replica copies that: the index's history is lost
    (docs/operations.md, "the index is emptied"). Both clients notice, take in the index as
    it is, and decide on: every guarantee holds for what they decide after it."""
    namespace = f"empty-{random.getrandbits(32):x}"
    async with two_clients(cluster, make, namespace) as (indexes, spare):
        said: list[str] = []
        for index in indexes:
            index.on_reset = said.append
        await race(indexes, stories(300, seed=1), restart_empty(spare, namespace))
        # (the node is back, empty: the first calls after it find the index emptied, if the
        # calls that raced it did not)
        after = stories(300, seed=2, name="after")
        await check(indexes[0], after, *await race(indexes, after, asyncio.sleep(0)))
        assert said


# What a node is started with (stack/local-stack.sh), read from it to start it again.
STARTED_WITH = [
    *("bind", "bind-source-addr", "protected-mode", "port", "dir", "cluster-enabled"),
    *("cluster-config-file", "cluster-node-timeout", "appendonly", "save", "daemonize"),
    *("pidfile", "logfile"),
]


def kill_and_wipe(pid: int, data: Path) -> None:
    """Kill the node and remove its data, its append-only files and any snapshot (its
    nodes.conf kept: it comes back as the primary of its slots)."""
    os.kill(pid, signal.SIGKILL)
    while Path(f"/proc/{pid}").exists():
        time.sleep(0.01)
    shutil.rmtree(data / "appendonlydir")
    (data / "dump.rdb").unlink(missing_ok=True)


async def restart_empty(client: Client, namespace: str) -> None:
    primary, replica, _ = await roles(client, namespace)
    # (else, on a slow machine, the replica may take over before the node is back)
    held = replica.connect()
    await held.config_set("cluster-replica-no-failover", "yes")
    await held.aclose()
    node = primary.connect()
    pid = int((await node.info("server"))["process_id"])
    config = {k: (await node.config_get(k))[k] for k in STARTED_WITH}
    await node.aclose()
    await asyncio.to_thread(kill_and_wipe, pid, Path(config["dir"]))
    args = [f"--{k}" if i % 2 == 0 else v for k, v in config.items() for i in (0, 1)]
    started = await asyncio.create_subprocess_exec("redis-server", *args)
    assert await started.wait() == 0


async def test_the_namespaces_slot_moved_to_another_primary_mid_stream(
    cluster: str, make: Make
) -> None:
    async def move(client: Client, namespace: str) -> None:
        primary, _, others = await roles(client, namespace)
        slot = int(await client.cluster_keyslot(NamespaceKeys(namespace).meta))
        await move_slot(slot, primary, others[0], [primary, *others])

    await decided_through(cluster, make, move)


async def test_no_script_runs_while_its_slot_moves(cluster: str) -> None:
    """A script reaches keys it does not declare; were it to run while some of them are on
    the other node, it would stop there with what it wrote so far kept. It never runs then:
    the prefixes it declares (keys.shared) never exist as keys, and Redis refuses a script
    whose declared keys are not all present in a moving slot (ASK or TRYAGAIN)."""
    client = connect(cluster, cluster=True)
    namespace = f"moving-{random.getrandbits(32):x}"
    keys = NamespaceKeys(namespace)
    index = RedisIndex(client, namespace)
    [(story, copy)] = stories(1, seed=3)
    await decide(index, story)
    primary, _, others = await roles(client, namespace)
    slot = int(await client.cluster_keyslot(keys.meta))
    source = primary.connect()
    before = await dump(source, slot)
    await start_moving(slot, primary, others[0])
    with pytest.raises(IndexUnavailable):
        await index.check_and_insert([copy])
    assert await dump(source, slot) == before
    ids_hashes = [k for k in before if k.startswith(keys.ids.encode())]
    assert ids_hashes
    await migrate(source, others[0], ids_hashes)
    with pytest.raises(IndexUnavailable):
        await index.check_and_insert([copy])
    assert await dump(source, slot) == {k: v for k, v in before.items() if k not in ids_hashes}
    await move_slot(slot, primary, others[0], [primary, *others])
    verdict = await decide(index, copy)
    assert (verdict.kind, verdict.duplicate_of) == (Kind.NEAR, story.id)
    await source.aclose()
    await client.aclose()


async def iptables(*args: str) -> None:
    process = await asyncio.create_subprocess_exec("iptables", *args)
    assert await process.wait() == 0, args


async def command(node: aioredis.Redis, *args: Any) -> Any:
    return await node.execute_command(*args)  # type: ignore[no-untyped-call]


async def dump(node: aioredis.Redis, slot: int) -> dict[bytes, bytes | None]:
    """Every key of the slot on `node`, with its serialized value."""
    keys = await command(node, "CLUSTER GETKEYSINSLOT", slot, 100_000)
    return {k: await node.dump(k) for k in keys}


async def start_moving(slot: int, source: Node, target: Node) -> None:
    for node, state, other in ((target, "IMPORTING", source), (source, "MIGRATING", target)):
        each = node.connect()
        await command(each, "CLUSTER SETSLOT", slot, state, other.id)
        await each.aclose()


async def migrate(source: aioredis.Redis, target: Node, keys: Sequence[bytes]) -> None:
    await command(source, "MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", *keys)


async def move_slot(slot: int, source: Node, target: Node, primaries: Sequence[Node]) -> None:
    """Move the slot as `redis-cli --cluster reshard` does: marked moving on both nodes, its
    keys migrated a few at a time (the clients keep calling meanwhile), then given to the
    target on every primary."""
    await start_moving(slot, source, target)
    node = source.connect()
    while keys := await command(node, "CLUSTER GETKEYSINSLOT", slot, 5):
        await migrate(node, target, keys)
        await asyncio.sleep(0.01)
    await node.aclose()
    for primary in primaries:
        each = primary.connect()
        await command(each, "CLUSTER SETSLOT", slot, "NODE", target.id)
        await each.aclose()
