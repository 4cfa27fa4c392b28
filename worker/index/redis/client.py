"""The Redis client the index uses, and Redis's errors translated into ours.

redis-py's asyncio connections pack commands in Python, copying the command so far again for
every argument, while its sync ones use hiredis, in C (upstream: redis/redis-py#4176). The
connections made here pack with hiredis too, and take a command's last argument ready-made
(`Encoded`): thousands of bucket names are sent with one join rather than encoded one by one.
"""

from __future__ import annotations

import re
from typing import Any

import hiredis
import redis.asyncio as aioredis
import redis.exceptions
from redis.asyncio.connection import (
    AbstractConnection,
    Connection,
    SSLConnection,
    UnixDomainSocketConnection,
)
from redis.cluster import LoadBalancingStrategy

from worker.errors import (
    IndexFenced,
    IndexReset,
    IndexStoreError,
    IndexUnavailable,
    OutOfTurn,
)
from worker.index.redis.keys import PREFIX

# How long a read on a replica may take to connect or to answer before the worker reads on
# the primary instead (band_index.REPLICA_PAUSE_S).
REPLICA_TIMEOUT_S = 2.0

# What a Redis ACL user needs (docs/operations.md; tested in tests/security).
REDIS_ACL_COMMANDS = "+@scripting +@hash +@string +@transaction +@connection +time +del"

Client = aioredis.Redis | aioredis.RedisCluster


def connect(url: str, cluster: bool = False, **options: Any) -> Client:
    """A client for one Redis, or for a Redis Cluster reached through one of its nodes (every
    key of a namespace shares its hash tag, so each script call runs on one node); `options`
    as redis-py's."""
    if cluster:
        return aioredis.RedisCluster.from_url(url, decode_responses=False, **options)
    client = aioredis.Redis.from_url(url, decode_responses=False, **options)
    pool = client.connection_pool
    pool.connection_class = _PACKING_IN_C.get(pool.connection_class, pool.connection_class)
    return client


def connect_replicas(url: str, cluster: bool = False) -> Client:
    """A client for reads that hold no order (a band index's reads before its calls): the
    Redis at `url`, a replica; or, in the Redis Cluster that `url` reaches, a replica of each
    key's primary (the primary where it has none). What a replica has not yet received makes
    the guesses read there look stale, which the deciding script notices (lua/guesses.lua)."""
    options: dict[str, Any] = {
        "socket_timeout": REPLICA_TIMEOUT_S,
        "socket_connect_timeout": REPLICA_TIMEOUT_S,
    }
    if cluster:
        options["load_balancing_strategy"] = LoadBalancingStrategy.RANDOM_REPLICA
    return connect(url, cluster, **options)


def packs_encoded(client: Client) -> bool:
    """Whether `client` takes Encoded arguments (a cluster client routes a command by its
    keys, so it needs them as names)."""
    return isinstance(client, aioredis.Redis) and issubclass(
        client.connection_pool.connection_class, _PackInC
    )


def bulk_string(name: str) -> bytes:
    """One argument in Redis's wire format (RESP)."""
    data = name.encode("utf-8")
    return b"$%d\r\n%s\r\n" % (len(data), data)


class Encoded(bytes):
    """`arguments` of them already in Redis's wire format, one after another (bulk_string)."""

    arguments: int

    def __new__(cls, data: bytes, arguments: int) -> Encoded:
        self = super().__new__(cls, data)
        self.arguments = arguments
        return self


class _PackInC:
    """The worker's connections: they pack commands in C, and a READONLY reply closes every
    one made before it.

    READONLY means the Redis a connection reached is a replica now: a failover moved the
    primary under one address (a managed service's DNS name), and the old primary keeps its
    clients. The call is waited out as for a Redis out of reach, and each connection made
    before the reply is closed before its next command, so that it finds the new primary
    (one left behind would still load scripts and read there, where replicas accept both)."""

    readonly_replies = 0  # (met by any connection of the process)
    _made_after = 0  # the readonly_replies its connection was made after

    async def on_connect_check_health(self, *args: Any, **kwargs: Any) -> None:
        self._made_after = _PackInC.readonly_replies  # (before its hello and select)
        await super().on_connect_check_health(*args, **kwargs)  # type: ignore[misc]

    async def send_packed_command(self, *args: Any, **kwargs: Any) -> None:
        if self._made_after != _PackInC.readonly_replies:
            await self.disconnect()  # type: ignore[attr-defined]
        await super().send_packed_command(*args, **kwargs)  # type: ignore[misc]

    async def read_response(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().read_response(*args, **kwargs)  # type: ignore[misc]
        except redis.exceptions.ReadOnlyError as exc:
            _PackInC.readonly_replies += 1
            await self.disconnect()  # type: ignore[attr-defined]
            raise redis.exceptions.ConnectionError(
                f"the Redis reached is a replica now (READONLY): {exc}"
            ) from exc

    def pack_command(self, *args: Any) -> list[bytes]:
        if isinstance(args[0], str):  # "SCRIPT LOAD": two words, sent as two arguments
            args = (*args[0].encode().split(), *args[1:])
        tail = args[-1] if isinstance(args[-1], Encoded) else None
        try:
            head = hiredis.pack_command(args[:-1] if tail is not None else args)
        except TypeError as exc:
            raise redis.exceptions.DataError(str(exc)) from exc
        if tail is None:
            return [head]
        # The head counts its own arguments ("*<n>\r\n"): count the encoded ones too.
        count = b"*%d\r\n" % (len(args) - 1 + tail.arguments)
        return [count + head[head.index(b"\r\n") + 2 :], bytes(tail)]


_PACKING_IN_C: dict[type[AbstractConnection], type[AbstractConnection]] = {
    base: type(base.__name__, (_PackInC, base), {})
    for base in (Connection, SSLConnection, UnixDomainSocketConnection)
}


# How the scripts say that the index is not the one the caller read, that a later consumer
# group generation claimed an input partition of the call, and that an earlier call of its
# chain did not run (lua/lib.lua).
RESET_ERROR = "DEDUP_RESET"
FENCED_ERROR = "DEDUP_FENCED"
ORDER_ERROR = "DEDUP_ORDER"

# Replies with which Redis turns a command away without running it, until a state passes:
# waited out like a Redis out of reach (retrying them is safe), never counted as a refusal.
TRANSIENT_REPLIES = {
    "BUSY": "Redis runs a script past busy-reply-threshold and answers nothing else until it ends",
    "LOADING": "Redis is loading its data",
    "MASTERDOWN": "the Redis replica has lost its primary",
    "TRYAGAIN": "the Redis Cluster slot is being moved",
    "CLUSTERDOWN": "the Redis Cluster is down",
    "NOREPLICAS": "Redis has fewer replicas in step than min-replicas-to-write",
    "MISCONF": "Redis cannot write its snapshot to disk and refuses writes until it can "
    "(stop-writes-on-bgsave-error)",
}
# redis-py parses some of them into these classes (which ones depends on its version and on
# the client: cluster or not); the others come as a ResponseError whose message starts with
# the code (after "... of pipeline caused error: " in a pipeline, after "... because of: " in
# a transaction Redis discarded).
_TRANSIENT_CLASSES: dict[type[redis.exceptions.RedisError], str] = {
    redis.exceptions.BusyLoadingError: "LOADING",
    redis.exceptions.MasterDownError: "MASTERDOWN",
    redis.exceptions.TryAgainError: "TRYAGAIN",
    redis.exceptions.ClusterDownError: "CLUSTERDOWN",
}
_REPLY_CODE = re.compile(r"(?:^|caused error: |because of: )([A-Z]+) ")


# What the Redis clients raise: redis-py's errors, and a cluster client's own (among them a
# slot that no node serves, SlotNotCoveredError, which is not a RedisError).
ERRORS = (redis.exceptions.RedisError, redis.exceptions.RedisClusterException)
RedisFailure = redis.exceptions.RedisError | redis.exceptions.RedisClusterException


def transient_reply(exc: RedisFailure) -> str | None:
    """The code of a transient reply (TRANSIENT_REPLIES) that `exc` carries, else None."""
    for kind, code in _TRANSIENT_CLASSES.items():
        if isinstance(exc, kind):
            return code
    found = _REPLY_CODE.search(str(exc))
    return found[1] if found and found[1] in TRANSIENT_REPLIES else None


def translate(exc: RedisFailure) -> IndexStoreError:
    """Our error for one of Redis's, with what to do about it."""
    if isinstance(exc, redis.exceptions.SlotNotCoveredError):  # (a failover under way)
        return IndexUnavailable(f"no Redis Cluster node serves the namespace's slot: {exc}")
    if isinstance(exc, redis.exceptions.RedisClusterException):
        return IndexStoreError(f"the Redis Cluster client cannot go on: {exc}")
    if (code := transient_reply(exc)) is not None:
        return IndexUnavailable(f"{TRANSIENT_REPLIES[code]} ({code}): {exc}")
    if isinstance(exc, redis.exceptions.AuthenticationError):  # (a ConnectionError to redis-py)
        return IndexStoreError(f"Redis refused the credentials in DEDUP_REDIS_URL: {exc}")
    if isinstance(exc, redis.exceptions.ConnectionError | redis.exceptions.TimeoutError):
        return IndexUnavailable(f"Redis cannot be reached: {exc}")
    if isinstance(exc, redis.exceptions.ClusterError):  # ("TTL exhausted": a slot moving)
        return IndexUnavailable(f"the Redis Cluster kept redirecting the command: {exc}")
    if isinstance(exc, redis.exceptions.NoPermissionError):
        return IndexStoreError(
            f"the Redis user lacks a permission ({exc}); grant it the keys ~{PREFIX}:* and "
            f"the commands it runs: {REDIS_ACL_COMMANDS}"
        )
    if RESET_ERROR in str(exc):  # (in a pipeline, the message names the command first)
        return IndexReset("the index was emptied or built again since the worker read it")
    if FENCED_ERROR in str(exc):
        return IndexFenced(f"another worker owns the input partition now: {exc}")
    if ORDER_ERROR in str(exc):
        return OutOfTurn(f"a call sent before this one did not run: {exc}")
    return IndexStoreError(f"Redis refused the request: {exc}")
