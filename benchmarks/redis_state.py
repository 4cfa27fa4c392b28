"""Putting the benchmarks' Redis in a known state before a timed part."""

from __future__ import annotations

import asyncio
import time

import redis.asyncio as aioredis

from worker.index.redis.client import Client


async def settle(client: Client) -> float:
    """Rewrite Redis's append-only file now, if it keeps one, and wait for that to finish:
    the load grows the file enough to set off an automatic rewrite, which would otherwise run
    (a forked process writing every key) during the timed part, on the same cores."""
    start = time.perf_counter()

    async def idle() -> None:
        for _ in range(1200):  # up to 10 minutes
            info = await client.info("persistence")
            if not (
                info["aof_rewrite_in_progress"]
                or info["aof_rewrite_scheduled"]
                or info["rdb_bgsave_in_progress"]
            ):
                return
            await asyncio.sleep(0.5)
        raise TimeoutError("Redis is still rewriting its AOF after 10 minutes")

    if not (await client.info("persistence"))["aof_enabled"]:
        return 0.0
    await idle()
    await client.bgrewriteaof()
    await asyncio.sleep(0.5)
    await idle()
    return time.perf_counter() - start


async def wipe(client: Client) -> None:
    """FLUSHDB in the background (millions of keys take Redis seconds to free), then wait
    until the memory is given back, so the next layout's memory figure starts clean."""
    await client.flushdb(asynchronous=True)
    while True:
        if not (await client.info("memory"))["lazyfree_pending_objects"]:
            return
        await asyncio.sleep(0.5)


async def aof_size(client: Client) -> tuple[int, int] | None:
    """The size of Redis's append-only file and how many times it was rewritten (None: Redis
    keeps none)."""
    info = await client.info("persistence")
    if not info["aof_enabled"]:
        return None
    return int(info["aof_current_size"]), int(info["aof_rewrites"])


async def aof_rewrites(url: str) -> int:
    """How many times the Redis server has rewritten its append-only file since it started."""
    client = aioredis.Redis.from_url(url)
    try:
        return int((await client.info("persistence")).get("aof_rewrites", 0))
    finally:
        await client.aclose()


PERSISTENCE = ("appendonly", "appendfsync", "auto-aof-rewrite-percentage", "rdbcompression")


async def persistence(url: str) -> str:
    """The Redis server's settings that decide how often it rewrites its append-only file and
    what a rewrite costs: the latency figures depend on them."""
    client = aioredis.Redis.from_url(url, decode_responses=True)
    try:
        values = [(await client.config_get(name)).get(name, "?") for name in PERSISTENCE]
    finally:
        await client.aclose()
    return ", ".join(f"{name} {value}" for name, value in zip(PERSISTENCE, values, strict=True))


SCRIPT_COMMANDS = ("cmdstat_evalsha", "cmdstat_eval", "cmdstat_fcall")


async def script_stats(url: str) -> tuple[int, float]:
    """The Redis server's script calls so far and the microseconds it spent running them
    (INFO commandstats): the work of the index's scripts, apart from Redis's other CPU."""
    client = aioredis.Redis.from_url(url)
    try:
        stats = await client.info("commandstats")
    finally:
        await client.aclose()
    used = [stats[name] for name in SCRIPT_COMMANDS if name in stats]
    return sum(int(s["calls"]) for s in used), sum(float(s["usec"]) for s in used)


async def fresh(url: str) -> None:
    """Empty the benchmark's Redis database and let any AOF rewrite finish: otherwise what
    earlier runs left behind is rewritten (a fork writing every key, on the same cores) in the
    middle of a later one."""
    client = aioredis.Redis.from_url(url)
    try:
        await wipe(client)
        await settle(client)
    finally:
        await client.aclose()
