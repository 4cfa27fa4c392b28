"""Check-and-insert throughput of the Redis index with N articles already indexed."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import time

import redis.asyncio as aioredis

from worker.index import RedisIndex
from worker.verdict import Probe


def probes(rng: random.Random, count: int, prefix: str) -> list[Probe]:
    return [Probe(f"{prefix}{i}", rng.randbytes(16), rng.getrandbits(64)) for i in range(count)]


async def run(url: str, docs: int, measure: int, threshold: int, depth: int) -> None:
    client = aioredis.Redis.from_url(url)
    await client.flushdb()
    index = RedisIndex(client, "bench", threshold)
    rng = random.Random(1)
    base_memory = (await client.info("memory"))["used_memory"]

    start = time.perf_counter()
    for first in range(0, docs, 1000):
        await index.check_and_insert(probes(rng, min(1000, docs - first), f"d{first}-"))
    load_s = time.perf_counter() - start
    memory = (await client.info("memory"))["used_memory"] - base_memory
    print(f"threshold {threshold}, bands {index.widths}; {docs:,} articles indexed in "
          f"{load_s:.1f} s ({docs / load_s:,.0f}/s pipelined 1000 deep); "
          f"{memory / docs:.0f} bytes/article")

    await client.config_resetstat()
    one = probes(rng, measure, "one-")
    start = time.perf_counter()
    for p in one:
        await index.check_and_insert([p])
    single = measure / (time.perf_counter() - start)

    batch = probes(rng, measure, "pipe-")
    start = time.perf_counter()
    for first in range(0, measure, depth):
        await index.check_and_insert(batch[first:first + depth])
    piped = measure / (time.perf_counter() - start)

    stats = (await client.info("commandstats"))["cmdstat_evalsha"]
    print(f"  server time per article: {stats['usec_per_call']:.1f} us "
          f"(the most one Redis can do: {1e6 / stats['usec_per_call']:,.0f}/s)")
    print(f"  one call at a time:  {single:9,.0f} articles/s")
    print(f"  pipelined {depth:>3} deep:  {piped:9,.0f} articles/s   ({piped / single:.1f}x)")
    await client.flushdb()
    await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--docs", type=int, default=100_000, help="articles indexed first")
    parser.add_argument("--measure", type=int, default=5_000, help="articles timed per mode")
    parser.add_argument("--threshold", type=int, default=3)
    parser.add_argument("--depth", type=int, default=64, help="pipeline depth")
    parser.add_argument("--redis-url", default=os.environ.get("DEDUP_BENCH_REDIS_URL",
                                                              "redis://127.0.0.1:6379/14"))
    args = parser.parse_args()
    asyncio.run(run(args.redis_url, args.docs, args.measure, args.threshold, args.depth))


if __name__ == "__main__":
    main()
