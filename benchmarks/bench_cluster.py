"""A cluster of near copies of one story (0-3 bits off one search fingerprint) growing in one
index, 100 articles a batch: per step, the batch's time, its script calls and the longest of
them (Redis's SLOWLOG), and the candidates compared per article. Once the cluster's buckets
hold more than DEDUP_MAX_BUCKET_READ entries the worker leaves their search to the script;
a call carries at most scripts.SEARCHED_PER_CALL such articles, so that no call holds Redis's
one thread for long (past lua-time-limit Redis answers BUSY to every other client).
`--searched-per-call` sets it for a side-by-side run. Uses (and empties) the Redis database
it is given."""

from __future__ import annotations

import argparse
import asyncio
import random
import time

from tests.support.factories import flip, probe
from worker.index.redis import RedisIndex, scripts
from worker.index.redis.client import connect


async def run(args: argparse.Namespace) -> None:
    admin = connect(args.redis_url)
    await admin.flushdb()
    old = await admin.config_get("slowlog-*")
    await admin.config_set("slowlog-log-slower-than", 0)
    await admin.config_set("slowlog-max-len", 100_000)
    index = RedisIndex(connect(args.redis_url), "cluster")
    rng = random.Random(1)
    base = rng.getrandbits(64)
    try:
        for step in range(1, args.copies // 100 + 1):
            batch = [
                probe(f"c{step}-{i}", flip(base, rng.sample(range(64), rng.randint(0, 3))))
                for i in range(100)
            ]
            await admin.slowlog_reset()
            started = time.perf_counter()
            verdicts = await index.check_and_insert(batch)
            took = time.perf_counter() - started
            if step % args.every == 0:
                log = await admin.slowlog_get(100_000)
                calls = [e["duration"] for e in log if e["command"].startswith(b"EVALSHA")]
                compared = sum(v.candidates for v in verdicts) / len(verdicts)
                print(
                    f"{step * 100:7,} copies: batch {took * 1000:7.0f} ms, script calls "
                    f"{len(calls):3}, longest {max(calls) / 1000:7.1f} ms, "
                    f"{compared:,.0f} candidates per article",
                    flush=True,
                )
    finally:
        await index.close()
        await admin.config_set("slowlog-log-slower-than", old["slowlog-log-slower-than"])
        await admin.config_set("slowlog-max-len", old["slowlog-max-len"])
        await admin.flushdb()
        await admin.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=6000)
    parser.add_argument("--every", type=int, default=10, help="print every this many batches")
    parser.add_argument("--searched-per-call", type=int, default=scripts.SEARCHED_PER_CALL)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/11")
    args = parser.parse_args()
    scripts.SEARCHED_PER_CALL = args.searched_per_call
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
