"""The expiry sweep on a band index of template pages whose oldest articles have just
expired (the oldest `--aged` share of them, their retention moved to the epoch): what a
step of removals holds Redis, then guessed decisions while the worker's sweep ticks once a
second (worker/stream/expiry.py), as a replica with a retention window runs them. Printed
per window of `--measure` decisions: decisions/s, Redis CPU per decision (the sweep's
included), what the ticks removed meanwhile, and the calls that kept to their guesses
(each call's entry in the log of calls). Needs the evaluation's corpora and Redis
(database 9, wiped)."""

from __future__ import annotations

import argparse
import asyncio
import struct
import time

from benchmarks.bench_growth import CALL, supply
from benchmarks.bench_index import server_cpu_s
from benchmarks.redis_state import wipe
from worker import wiring
from worker.index.redis import RedisBandIndex
from worker.index.redis.band_reads import HEAD
from worker.index.redis.client import Client, connect
from worker.index.redis.format import NUMBER_BYTES, RECORD
from worker.model import Probe
from worker.settings import Settings
from worker.stream import expiry

STEPS = 5  # steps timed alone, before the windows
ANONYMOUS = b"-"  # a removal's entry in the log has no batch token (lua/postings.lua)


async def aged(client: Client, index: RedisBandIndex, probes: list[Probe]) -> None:
    """The articles' retention started at the epoch: they have expired."""
    alive = RECORD["alive_s"]
    async with client.pipeline(transaction=False) as pipe:
        for p in probes:
            pipe.hget(index.keys.docs, p.id)
        records = await pipe.execute()
    epoch = (1).to_bytes(alive.size)
    async with client.pipeline(transaction=False) as pipe:
        for p, record in zip(probes, records, strict=True):
            if record:
                changed = record[: alive.start] + epoch + record[alive.start + alive.size :]
                pipe.hset(index.keys.docs, p.id, changed)
        await pipe.execute()


async def kept(client: Client, index: RedisBandIndex, after: int) -> tuple[int, int]:
    """Of the decision calls logged after call number `after`: how many kept to their
    guesses, and how many there were."""
    mine = [
        e
        for e in await client.lrange(index.keys.posts, 0, -1)
        if struct.unpack(">Q", e[:8])[0] > after and e[8:9] != ANONYMOUS
    ]
    return sum(e[HEAD - 1 : HEAD] == b"1" for e in mine), len(mine)


async def left_for_the_walk(client: Client, index: RedisBandIndex) -> tuple[int, int]:
    """Of the band postings in the index's group strings and buckets' own strings, those
    numbered below the expiry sweep's front (lua/compact.lua cuts them), and all of them."""
    front = int(await client.hget(index.keys.meta, "front") or 1)
    bits = int(await client.hget(index.keys.meta, "groups") or 0)
    width = -(-(32 - bits) // 8)
    size = width + NUMBER_BYTES
    left = postings = 0
    async for key in client.scan_iter(match=index.keys.buckets.encode() + b"b*", count=1000):
        blob = await client.get(key) or b""
        for at in range(width, len(blob), size):
            number = int.from_bytes(blob[at : at + NUMBER_BYTES])
            if number:  # (0: a marker, not a posting)
                postings += 1
                left += number < front
    return left, postings


async def run(args: argparse.Namespace) -> None:
    settings = Settings(expected_docs=args.fill, layout="bands:16x4", retention_days=30)
    fingerprinter = wiring.fingerprinter(settings)
    client = connect(args.redis_url)
    await wipe(client)

    def made() -> RedisBandIndex:
        return RedisBandIndex(
            connect(args.redis_url),
            "expiry",
            wiring.layout(settings),
            wiring.index_options(settings),
            expected_docs=settings.expected_docs,
            guesses=True,
        )

    index, sweeper, timed = made(), made(), made()
    articles = supply("template", fingerprinter, args.seed)
    probes = [next(articles) for _ in range(args.fill)]
    for first in range(0, len(probes), 2000):
        await index.check_and_insert(probes[first : first + 2000])
    old = int(args.aged * args.fill)
    await aged(client, index, probes[:old])
    print(f"{args.fill:,} template pages, the oldest {old:,} expired")

    step = []
    for _ in range(STEPS):
        cpu = await server_cpu_s(client)
        removed = await timed.expire(expiry.SWEEP_STEP)
        step.append((removed, (await server_cpu_s(client) - cpu) * 1e3))
    print(
        "  steps of up to "
        f"{expiry.SWEEP_STEP} removals, alone: Redis CPU "
        + ", ".join(f"{ms:.1f} ms for {n}" for n, ms in step)
        + f" ({sum(ms for _, ms in step) * 1e3 / max(sum(n for n, _ in step), 1):.0f} us"
        " per removal)"
    )

    done, ticks = asyncio.Event(), []

    async def tick() -> None:
        while not done.is_set():
            started = time.perf_counter()
            ticks.append(await expiry.sweep(sweeper))
            await asyncio.sleep(max(0.0, expiry.SWEEP_INTERVAL_S - time.perf_counter() + started))

    ticking = asyncio.create_task(tick())
    print(
        "  window | decisions/s | Redis CPU us/decision | removed by the ticks"
        " | calls that kept their guesses"
    )
    for window in range(args.windows):
        batch = [next(articles) for _ in range(args.measure)]
        after = int(await client.get(index.keys.calls) or 0)
        cpu, before, started = await server_cpu_s(client), len(ticks), time.perf_counter()
        for first in range(0, len(batch), CALL):
            await index.check_and_insert(batch[first : first + CALL])
        elapsed = time.perf_counter() - started
        cpu_us = (await server_cpu_s(client) - cpu) / len(batch) * 1e6
        good, calls = await kept(client, index, after)
        print(
            f"  {window + 1:>6} | {len(batch) / elapsed:>11,.0f} | {cpu_us:>21,.0f} | "
            f"{sum(ticks[before:]):>20,} | {good} of {calls}",
            flush=True,
        )
    done.set()
    await ticking
    left, postings = await left_for_the_walk(client, index)
    print(
        f"  band postings below the front, left for the walk: {left:,} of {postings:,}"
        f" ({left / max(postings - left, 1):.0%} of the live ones)"
    )
    for target in (index, sweeper, timed):
        await target.close()
    await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fill", type=int, default=50_000, help="articles indexed first")
    parser.add_argument("--aged", type=float, default=0.2, help="the share that has expired")
    parser.add_argument("--measure", type=int, default=5_000, help="decisions per window")
    parser.add_argument("--windows", type=int, default=2)
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
