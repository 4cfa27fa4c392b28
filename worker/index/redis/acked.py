"""Decisions held by replicas before their verdicts count (DEDUP_REDIS_REPLICAS_ACKED).

Redis replicates asynchronously. A primary cut off from its replicas (a network partition
that leaves the workers on its side) goes on deciding until the cluster fails it over, and
the replica promoted in its place never sees those decisions: an article sent again then gets
another verdict, and a copy decided on the new primary is unique beside its story. With
`replicas` > 0, a batch's verdicts are given out only once that many replicas hold its
writes: one write on a connection of its own to the primary serving the namespace, then
WAIT on that connection (its replication offset is past every write of the batch, which ran
before it). Fewer in time: IndexUnavailable, and the batch is tried again, as for any Redis
that cannot be reached; its articles then replay what the primary holds, or, after a
failover, are decided on the new primary.
"""

from __future__ import annotations

import redis.asyncio as aioredis

from worker.errors import IndexUnavailable
from worker.index.redis.client import ERRORS, Client, translate
from worker.index.redis.keys import NamespaceKeys

# How long a batch waits for its replicas: past it, the batch is tried again.
ACK_TIMEOUT_MS = 2000


class ReplicaAcks:
    def __init__(self, client: Client, keys: NamespaceKeys, replicas: int) -> None:
        self.client = client
        self.key = keys.acked
        self.replicas = replicas
        self._primary: aioredis.Redis | None = None  # (a cluster's: its node serving the key)
        self._primary_name = ""

    async def wait(self) -> None:
        """Return once `replicas` replicas hold every write made before the call."""
        if self.replicas <= 0:
            return
        primary = await self._connection()
        try:
            async with primary.pipeline(transaction=False) as pipe:
                pipe.incr(self.key)
                pipe.execute_command("WAIT", self.replicas, ACK_TIMEOUT_MS)
                _, acked = await pipe.execute()
        except ERRORS as exc:
            await self._drop()  # (a failover: the slot's primary may be another node now)
            raise translate(exc) from exc
        if int(acked) < self.replicas:
            raise IndexUnavailable(
                f"{acked} of the {self.replicas} replicas that DEDUP_REDIS_REPLICAS_ACKED asks "
                f"for acknowledged the batch's decisions within {ACK_TIMEOUT_MS} ms (the primary "
                "is cut off from its replicas, or they lag); the batch is tried again"
            )

    async def _connection(self) -> aioredis.Redis:
        if isinstance(self.client, aioredis.Redis):
            return self.client  # (a pipeline keeps to one connection)
        node = self.client.get_node_from_key(self.key)
        if node is None:
            raise IndexUnavailable("no Redis Cluster node serves the namespace's slot")
        if self._primary is None or self._primary_name != node.name:
            await self._drop()
            kwargs = {k: v for k, v in node.connection_kwargs.items() if k != "event_dispatcher"}
            pool = aioredis.ConnectionPool(connection_class=node.connection_class, **kwargs)
            self._primary, self._primary_name = aioredis.Redis(connection_pool=pool), node.name
        return self._primary

    async def _drop(self) -> None:
        if self._primary is not None:
            await self._primary.aclose(close_connection_pool=True)  # (its own pool)
        self._primary = None

    async def close(self) -> None:
        await self._drop()
